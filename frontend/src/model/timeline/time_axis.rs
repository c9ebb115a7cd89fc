//! The time axis under the bars: the whole run (ending on a round tick) or, zoomed, exactly the
//! window; and its tick labels, in ms or (once the axis reaches a second) s, with as many
//! decimals as the step needs.

use super::rows::Timeline;
use crate::model::axis::Axis;
use crate::model::text::{TimeUnit, duration};

/// The axis for `t` with at most `max_intervals` intervals.
pub fn time_axis(t: &Timeline, max_intervals: u32) -> Axis {
    match t.window_end_us {
        Some(end) => Axis::window(end, max_intervals),
        None => Axis::covering(t.last_end_us, max_intervals),
    }
}

/// A tick's label: `0`, `0.5 ms`, `35 ms`, `1.2 s`.
pub fn tick_label(axis: &Axis, us: u64) -> String {
    if us == 0 {
        return "0".to_string();
    }
    let unit = if axis.end >= 1_000_000 {
        TimeUnit::Seconds
    } else {
        TimeUnit::Millis
    };
    let decimals = match axis.step {
        s if s >= unit.in_us() => 0,
        s if s * 10 >= unit.in_us() => 1,
        s if s * 100 >= unit.in_us() => 2,
        _ => 3,
    };
    duration(us, unit, decimals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_read_in_ms_then_s_with_the_decimals_the_step_needs() {
        let a = Axis::covering(1_234, 6);
        assert_eq!(tick_label(&a, 0), "0");
        assert_eq!(tick_label(&a, 500), "0.5 ms");
        assert_eq!(tick_label(&Axis::covering(38_700, 8), 35_000), "35 ms");
        assert_eq!(tick_label(&Axis::covering(180, 4), 150), "0.15 ms");
        assert_eq!(tick_label(&Axis::window(114_000, 6), 100_000), "100 ms");
        let long = Axis::covering(12_400_000, 5);
        assert_eq!(long.step, 5_000_000);
        assert_eq!(tick_label(&long, 10_000_000), "10 s");
        // Past a second, labels switch to seconds: "2.4 s", not "2400 ms".
        let e = Axis::covering(2_210_000, 12);
        assert_eq!((e.step, e.end), (200_000, 2_400_000));
        assert_eq!(tick_label(&e, 2_400_000), "2.4 s");
        assert_eq!(tick_label(&e, 200_000), "0.2 s");
    }
}
