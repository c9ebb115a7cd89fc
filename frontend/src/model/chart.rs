//! Chart arithmetic for the scoreboard: bars as percentages of a linear axis (its round end
//! comes from [`super::axis`]), and a log axis for latencies that differ by orders of magnitude
//! (a Lua call against a PostgreSQL commit; its ticks are labelled by [`super::text::micros`]).
//!
//! Everything returns percentages of the track, so the view is plain CSS widths and positions.

/// `value` as a percentage of `max`, clamped to 0..=100.
pub fn pct(value: f64, max: f64) -> f64 {
    if max <= 0.0 || !value.is_finite() {
        return 0.0;
    }
    (value / max * 100.0).clamp(0.0, 100.0)
}

/// One bar of the units chart: the units that existed (green), then the ones that did not (red).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitsBar {
    /// Width of the real part, % of the track.
    pub real_pct: f64,
    /// Width of the phantom part, % of the track; it starts where the real part ends.
    pub phantom_pct: f64,
    /// Where the stock line sits, % of the track.
    pub stock_pct: f64,
}

/// The bar for `units_sold` of `stock`, on an axis running to `axis_max`.
pub fn units_bar(stock: u32, units_sold: u64, axis_max: f64) -> UnitsBar {
    let stock = f64::from(stock);
    let sold = units_sold as f64;
    let real_pct = pct(sold.min(stock), axis_max);
    UnitsBar {
        real_pct,
        phantom_pct: (pct(sold, axis_max) - real_pct).max(0.0),
        stock_pct: pct(stock, axis_max),
    }
}

/// A base-10 log axis from a power of ten below the smallest value to one above the largest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogScale {
    /// log10 of the left edge.
    lo: f64,
    /// log10 of the right edge (always above `lo`).
    hi: f64,
}

impl LogScale {
    /// An axis covering every positive value in `values` (zeros are ignored: log 0 has no place).
    pub fn covering(values: impl IntoIterator<Item = f64>) -> Self {
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
            min = min.min(v);
            max = max.max(v);
        }
        if !min.is_finite() {
            return Self { lo: 0.0, hi: 1.0 };
        }
        let lo = min.log10().floor();
        let hi = max.log10().ceil().max(lo + 1.0);
        Self { lo, hi }
    }

    /// Where `value` sits, % of the track (0 for values at or below the left edge).
    pub fn pct(&self, value: f64) -> f64 {
        if value.is_nan() || value <= 0.0 {
            return 0.0;
        }
        ((value.log10() - self.lo) / (self.hi - self.lo) * 100.0).clamp(0.0, 100.0)
    }

    /// The powers of ten on the axis, with their positions, left to right.
    pub fn ticks(&self) -> Vec<(f64, f64)> {
        let (lo, hi) = (self.lo as i32, self.hi as i32);
        (lo..=hi)
            .map(|e| {
                let v = 10f64.powi(e);
                (v, self.pct(v))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_bar_splits_real_from_phantom_at_the_stock_line() {
        // 34 sold of 10 on an axis to 50: 20% real, 48% phantom, the line at 20%.
        let b = units_bar(10, 34, 50.0);
        assert_eq!(b.stock_pct, 20.0);
        assert_eq!(b.real_pct, 20.0);
        assert!((b.phantom_pct - 48.0).abs() < 1e-9);
        // Exactly the stock: no phantom part.
        assert_eq!(units_bar(10, 10, 50.0).phantom_pct, 0.0);
        // Undersold: a short green bar, the line further right.
        let under = units_bar(10, 4, 10.0);
        assert_eq!((under.real_pct, under.stock_pct), (40.0, 100.0));
        // A zero axis draws nothing rather than dividing by zero.
        assert_eq!(units_bar(0, 0, 0.0).real_pct, 0.0);
    }

    #[test]
    fn log_scale_spans_whole_decades() {
        // 180 µs to 42 ms: 100 µs .. 100 ms, three decades.
        let s = LogScale::covering([180.0, 950.0, 42_000.0, 0.0]);
        let ticks: Vec<f64> = s.ticks().into_iter().map(|(v, _)| v).collect();
        assert_eq!(ticks, [100.0, 1_000.0, 10_000.0, 100_000.0]);
        assert_eq!(s.pct(100.0), 0.0);
        assert!((s.pct(1_000.0) - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(s.pct(100_000.0), 100.0);
        assert_eq!(s.pct(0.0), 0.0);
        // One value alone still gets one decade of room.
        let one = LogScale::covering([1_000.0]);
        assert_eq!(one.ticks().len(), 2);
        // Nothing positive: a harmless default.
        assert!((LogScale::covering([]).pct(5.0) - 69.897).abs() < 0.01);
    }
}
