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

    /// The run's hash tag prefix, `oversold:{run-ID}`: every key of the run but a sharded
    /// bucket starts with it, so they share one slot.
    pub(super) fn tag(&self) -> String {
        format!("oversold:{{{}}}", self.run_id)
    }

    /// How this run keeps its stock.
    pub fn layout(&self) -> StockLayout {
        self.layout
    }

    /// The stock counter's key (the single counter of a [`StockLayout::Counter`] run).
    pub fn stock_key(&self) -> &str {
        &self.stock
    }

    /// The per-SKU lock's key. Only tests read the key names (to pause or spy on them); the
    /// store itself uses the fields, so a plain build leaves these accessors out.
    #[cfg(any(test, feature = "test-support"))]
    pub fn lock_key(&self) -> &str {
        &self.lock
    }

    /// The fenced lock's token counter's key.
    #[cfg(any(test, feature = "test-support"))]
    pub fn fence_key(&self) -> &str {
        &self.fence
    }

    /// The key holding the newest fencing token the stock has seen.
    #[cfg(any(test, feature = "test-support"))]
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

/// The keys of one checkout run: the race's stock counter (here, the *available* count)
/// plus the holds, their counters, the idempotency record and the Redis-side ledger, all
/// under the same hash tag.
#[derive(Debug, Clone)]
pub struct CheckoutKeys {
    pub(super) run: RunKeys,
    /// Sorted set: hold key -> expiry (shop ms).
    pub(super) holds: String,
    /// Units in active holds.
    pub(super) held: String,
    /// Units confirmed in Redis.
    pub(super) sold: String,
    /// Hash: customer -> units held or bought.
    pub(super) customers: String,
    /// Hash: request id -> the answer it got (idempotent holds).
    pub(super) requests: String,
    /// Hash: order id -> "state customer qty" (the Redis-side ledger).
    pub(super) ledger: String,
    /// Hash: state -> units, `orders:<state>` -> rows.
    pub(super) ledger_totals: String,
    /// Set: the keys of holds that Redis expires (`holds_notify`) whose units are not
    /// settled yet; each has a shadow (see [`CheckoutKeys::shadow_of`]).
    pub(super) shadows: String,
    hold_prefix: String,
    shadow_prefix: String,
}

/// One hold: the id the page shows and the key Redis keeps it under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HoldKey {
    id: String,
    pub(super) key: String,
}

impl HoldKey {
    /// The hold's id, e.g. `h17.2` (buyer 17's second reserve request).
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl CheckoutKeys {
    /// Keys for the checkout run `run_id`.
    pub fn new(run_id: &str) -> Self {
        let run = RunKeys::new(run_id);
        let tag = run.tag();
        CheckoutKeys {
            holds: format!("{tag}:holds"),
            held: format!("{tag}:held"),
            sold: format!("{tag}:sold"),
            customers: format!("{tag}:customers"),
            requests: format!("{tag}:requests"),
            ledger: format!("{tag}:ledger"),
            ledger_totals: format!("{tag}:ledger_totals"),
            shadows: format!("{tag}:shadows"),
            hold_prefix: format!("{tag}:hold:"),
            shadow_prefix: format!("{tag}:shadow:"),
            run,
        }
    }

    /// The race keys of the same run: the available counter is its stock key.
    pub fn run(&self) -> &RunKeys {
        &self.run
    }

    /// The hold called `id`.
    pub fn hold(&self, id: &str) -> HoldKey {
        HoldKey {
            id: id.to_string(),
            key: format!("{}{id}", self.hold_prefix),
        }
    }

    /// The hold stored under `key` (as a script returns it), if it is one of this run's.
    pub fn hold_at(&self, key: &str) -> Option<HoldKey> {
        let id = key.strip_prefix(&self.hold_prefix)?;
        Some(self.hold(id))
    }

    /// The shadow of a hold that Redis expires: a hash with the hold's units, customer and
    /// expiry that outlives the hold's own key (`oversold:{run-ID}:shadow:h7.1`).
    pub(super) fn shadow_of(&self, hold: &HoldKey) -> String {
        format!("{}{}", self.shadow_prefix, hold.id)
    }

    /// Every key of the run whose name is fixed (the holds' own keys are listed in the
    /// holds set), for clean-up.
    pub fn fixed(&self) -> Vec<String> {
        let mut keys = self.run.all();
        keys.extend([
            self.holds.clone(),
            self.held.clone(),
            self.sold.clone(),
            self.customers.clone(),
            self.requests.clone(),
            self.ledger.clone(),
            self.ledger_totals.clone(),
            self.shadows.clone(),
        ]);
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

    #[test]
    fn checkout_keys_share_the_run_tag_and_holds_map_back() {
        let keys = CheckoutKeys::new("r-2");
        assert!(
            keys.fixed()
                .iter()
                .all(|k| k.starts_with("oversold:{r-2}:"))
        );
        let hold = keys.hold("h7.1");
        assert_eq!(hold.key, "oversold:{r-2}:hold:h7.1");
        assert_eq!(keys.hold_at(&hold.key), Some(hold.clone()));
        assert_eq!(keys.hold_at("oversold:{r-3}:hold:h7.1"), None);
        assert_eq!(keys.shadow_of(&hold), "oversold:{r-2}:shadow:h7.1");
    }
}
