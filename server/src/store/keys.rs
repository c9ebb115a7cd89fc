//! The keys of one run. Every key shares the hash tag `{run-ID}`, so a Redis Cluster keeps a
//! whole run on one slot and a multi-key script never crosses slots.
//!
//! The one exception, by design: a [`StockLayout::Buckets`] run gives each bucket a tag of
//! its own, `{run-ID-b0}`, `{run-ID-b1}`..., so on a cluster the buckets land on different
//! slots and (usually) different nodes. That is the point of splitting a hot product's
//! stock. No command ever touches two buckets at once, so nothing crosses slots.

/// Every key a run creates expires after this, even if the server crashes mid-run.
pub const RUN_KEY_TTL_SECS: u64 = 600;

/// How a run keeps its stock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StockLayout {
    /// One counter holds every unit.
    Counter,
    /// The units are split over this many counters ("buckets"), as evenly as they go.
    Buckets(u32),
}

impl StockLayout {
    /// How `stock` units are dealt to the counters: one number per counter, the remainder
    /// going to the first ones (10 over 4 buckets is `[3, 3, 2, 2]`).
    pub fn split(self, stock: u32) -> Vec<u32> {
        match self {
            StockLayout::Counter => vec![stock],
            StockLayout::Buckets(n) => {
                let n = n.max(1);
                (0..n)
                    .map(|i| stock / n + u32::from(i < stock % n))
                    .collect()
            }
        }
    }
}

/// The keys of one run.
#[derive(Debug, Clone)]
pub struct RunKeys {
    run_id: String,
    pub(super) stock: String,
    pub(super) lock: String,
    /// The fenced lock's counter: the last fencing token handed out.
    pub(super) fence: String,
    /// The newest fencing token that has read or written the stock.
    pub(super) stock_fence: String,
    pub(super) layout: StockLayout,
}

impl RunKeys {
    /// Keys for the run `run_id` (e.g. `r-1a2b3c`), with a single stock counter.
    pub fn new(run_id: &str) -> Self {
        Self::with_layout(run_id, StockLayout::Counter)
    }

    /// Keys for the run `run_id` whose stock is laid out as `layout`.
    pub fn with_layout(run_id: &str, layout: StockLayout) -> Self {
        let tag = format!("oversold:{{{run_id}}}");
        RunKeys {
            stock: format!("{tag}:stock"),
            lock: format!("{tag}:lock"),
            fence: format!("{tag}:fence"),
            stock_fence: format!("{tag}:stock_fence"),
            run_id: run_id.to_string(),
            layout,
        }
    }

    /// How this run keeps its stock.
    pub fn layout(&self) -> StockLayout {
        self.layout
    }

    /// The stock counter's key (the single counter of a [`StockLayout::Counter`] run).
    pub fn stock_key(&self) -> &str {
        &self.stock
    }

    /// The per-SKU lock's key.
    pub fn lock_key(&self) -> &str {
        &self.lock
    }

    /// The fenced lock's token counter's key.
    pub fn fence_key(&self) -> &str {
        &self.fence
    }

    /// The key holding the newest fencing token the stock has seen.
    pub fn stock_fence_key(&self) -> &str {
        &self.stock_fence
    }

    /// Bucket `i`'s key, for a [`StockLayout::Buckets`] run: `oversold:{run-ID-b<i>}:stock`,
    /// a hash tag of its own, so each bucket has its own cluster slot.
    pub fn bucket_key(&self, i: u32) -> String {
        format!("oversold:{{{}-b{i}}}:stock", self.run_id)
    }

    /// Every key that holds stock, in order: the counter, or each bucket.
    pub fn stock_keys(&self) -> Vec<String> {
        match self.layout {
            StockLayout::Counter => vec![self.stock.clone()],
            StockLayout::Buckets(n) => (0..n).map(|i| self.bucket_key(i)).collect(),
        }
    }

    /// Every key the run may create, for clean-up.
    pub fn all(&self) -> Vec<String> {
        let mut keys = self.stock_keys();
        keys.push(self.stock.clone());
        keys.push(self.lock.clone());
        keys.push(self.fence.clone());
        keys.push(self.stock_fence.clone());
        keys.sort();
        keys.dedup();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_split_evenly_with_the_remainder_first() {
        assert_eq!(StockLayout::Buckets(4).split(10), [3, 3, 2, 2]);
        assert_eq!(StockLayout::Buckets(4).split(2), [1, 1, 0, 0]);
        assert_eq!(StockLayout::Buckets(3).split(0), [0, 0, 0]);
        assert_eq!(StockLayout::Counter.split(7), [7]);
    }

    #[test]
    fn every_key_shares_the_run_tag_but_each_bucket_has_its_own() {
        let keys = RunKeys::with_layout("r-1", StockLayout::Buckets(2));
        assert_eq!(
            keys.stock_keys(),
            ["oversold:{r-1-b0}:stock", "oversold:{r-1-b1}:stock"]
        );
        assert_eq!(
            keys.all(),
            [
                "oversold:{r-1-b0}:stock",
                "oversold:{r-1-b1}:stock",
                "oversold:{r-1}:fence",
                "oversold:{r-1}:lock",
                "oversold:{r-1}:stock",
                "oversold:{r-1}:stock_fence",
            ]
        );
        // One slot for the run's own keys; the buckets spread over others.
        use super::super::cluster::slot_of;
        let run_slot = slot_of(keys.stock_key());
        assert!(
            [keys.lock_key(), keys.fence_key(), keys.stock_fence_key()]
                .iter()
                .all(|k| slot_of(k) == run_slot)
        );
        let buckets = RunKeys::with_layout("r-1", StockLayout::Buckets(4)).stock_keys();
        let mut slots: Vec<u16> = buckets.iter().map(|k| slot_of(k)).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), 4, "{buckets:?}");
    }
}
