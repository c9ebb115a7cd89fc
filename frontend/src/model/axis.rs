//! Round steps of 1, 2 or 5 × 10ⁿ, and linear axes from 0 that tick on them: the one place the
//! page picks round numbers (the race timeline's time axis, the scoreboard's units axis, how many
//! units an inventory tile stands for).

/// The smallest of 1, 2, 5, 10, 20, 50, … at or above `want` (1 when `want` is 0).
pub fn step_at_least(want: u64) -> u64 {
    let mut decade = 1u64;
    loop {
        for m in [1, 2, 5] {
            match decade.checked_mul(m) {
                Some(step) if step >= want => return step,
                Some(_) => {}
                None => return u64::MAX,
            }
        }
        decade = decade.saturating_mul(10);
    }
}

/// An axis from 0 to `end`, with a tick every `step` (a 1-2-5 step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// Right edge, in the axis' unit (µs, units, …); at least 1.
    pub end: u64,
    /// Distance between ticks: 1, 2 or 5 × 10ⁿ.
    pub step: u64,
}

impl Axis {
    /// An axis covering `0..=last` with at most `max_intervals` intervals, ending on a tick:
    /// `covering(1_234, 6)` runs to 1,500 in steps of 500.
    pub fn covering(last: u64, max_intervals: u32) -> Self {
        let last = last.max(1);
        let step = step_at_least(last.div_ceil(u64::from(max_intervals.max(1))));
        Self {
            end: last.div_ceil(step) * step,
            step,
        }
    }

    /// An axis covering exactly `0..=end` (a zoom window): the right edge need not be a tick,
    /// so the step is the finest that leaves at most `max_intervals` whole intervals.
    pub fn window(end: u64, max_intervals: u32) -> Self {
        let end = end.max(1);
        Self {
            end,
            step: step_at_least(end / u64::from(max_intervals.max(1) + 1) + 1),
        }
    }

    /// The ticks, left to right: 0, step, 2·step, … up to the end.
    pub fn ticks(&self) -> impl Iterator<Item = u64> + '_ {
        (0..=self.end / self.step).map(|i| i * self.step)
    }

    /// Fraction of the way across (0..=1); values past the end stop at the edge.
    pub fn frac(&self, v: u64) -> f64 {
        (v as f64 / self.end.max(1) as f64).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        let steps: Vec<u64> = [0, 1, 2, 3, 6, 11, 21, 49, 51, 200, 201, 1_801]
            .into_iter()
            .map(step_at_least)
            .collect();
        assert_eq!(steps, [1, 1, 2, 5, 10, 20, 50, 50, 100, 200, 500, 2_000]);
        assert_eq!(step_at_least(u64::MAX), u64::MAX, "no overflow");
    }

    #[test]
    fn a_covering_axis_ends_on_a_round_tick() {
        let a = Axis::covering(1_234, 6);
        assert_eq!((a.step, a.end), (500, 1_500));
        assert_eq!(a.ticks().collect::<Vec<_>>(), [0, 500, 1_000, 1_500]);
        assert!((a.frac(750) - 0.5).abs() < 1e-12);
        assert_eq!(a.frac(9_999), 1.0);
        assert_eq!(
            (
                Axis::covering(38_700, 8).step,
                Axis::covering(38_700, 8).end
            ),
            (5_000, 40_000)
        );
        // Units sold on the scoreboard: five intervals at most.
        let ends: Vec<u64> = [7, 10, 11, 22, 34, 48, 50, 51, 9_001]
            .into_iter()
            .map(|x| Axis::covering(x, 5).end)
            .collect();
        assert_eq!(ends, [8, 10, 15, 25, 40, 50, 50, 60, 10_000]);
        // Nothing yet: a unit axis, no division by zero.
        assert_eq!(Axis::covering(0, 5), Axis { end: 1, step: 1 });
    }

    #[test]
    fn a_window_ends_exactly_at_its_edge() {
        let a = Axis::window(114_000, 6);
        assert_eq!((a.step, a.end), (20_000, 114_000));
        assert_eq!(a.ticks().last(), Some(100_000));
        assert_eq!(a.frac(114_000), 1.0);
        assert_eq!(
            a.frac(2_000_000),
            1.0,
            "bars past the window stop at the edge"
        );
        // A phone's four intervals: 0, 20, 40, 60, 80 ms, not 0 and 50 ms alone.
        let phone = Axis::window(94_000, 4);
        assert_eq!(phone.step, 20_000);
        assert_eq!(phone.ticks().count(), 5);
        for (end, m) in [(1, 1), (7, 3), (999, 5), (1_000, 4), (123_456, 13)] {
            let w = Axis::window(end, m);
            assert!(w.ticks().count() as u32 <= m + 1, "{end} {m}: {w:?}");
            assert!(w.step * u64::from(m + 1) > end, "{end} {m}: {w:?}");
        }
    }
}
