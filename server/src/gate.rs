//! The start gate every scenario's crowd waits behind: buyers are spawned first, then the
//! gate opens once, and each buyer goes at its own arrival time after that one instant.
//!
//! Why a gate: spawning thousands of tasks takes milliseconds, so buyers started as they are
//! spawned would not be "all at once". Behind the gate they all exist before the first one
//! moves, and every time offset is measured from the one instant the gate opened.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The runner's side: opened once, when every buyer is waiting.
pub struct StartGate {
    open: watch::Sender<Option<Instant>>,
}

/// A buyer's side: cloned into each buyer task.
#[derive(Clone)]
pub struct Turn {
    opened: watch::Receiver<Option<Instant>>,
}

impl StartGate {
    /// A closed gate and the turn its buyers wait with.
    pub fn new() -> (StartGate, Turn) {
        let (open, opened) = watch::channel(None);
        (StartGate { open }, Turn { opened })
    }

    /// Let the freshly spawned buyers reach the gate, then open it. Returns the instant it
    /// opened: the origin of every buyer's times.
    pub async fn open(self) -> Instant {
        tokio::task::yield_now().await;
        let now = Instant::now();
        self.open.send_replace(Some(now));
        now
    }
}

impl Turn {
    /// Wait for the gate, then until `arrival` after it opened. Returns the instant the gate
    /// opened, or `None` when `stop` fires first or the gate was dropped unopened (the run
    /// ended before it began).
    pub async fn arrive(mut self, arrival: Duration, stop: &CancellationToken) -> Option<Instant> {
        let opened = (*self.opened.wait_for(Option::is_some).await.ok()?)?;
        tokio::select! {
            biased;
            _ = stop.cancelled() => None,
            _ = tokio::time::sleep_until((opened + arrival).into()) => Some(opened),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn buyers_go_at_their_arrival_after_the_one_opening() {
        let (gate, turn) = StartGate::new();
        let stop = CancellationToken::new();
        let late = {
            let (turn, stop) = (turn.clone(), stop.clone());
            tokio::spawn(async move {
                let opened = turn.arrive(Duration::from_millis(30), &stop).await;
                (opened, Instant::now())
            })
        };
        let opened = gate.open().await;
        let (seen, at) = late.await.unwrap();
        assert_eq!(seen, Some(opened));
        assert!(at >= opened + Duration::from_millis(30));
    }

    #[tokio::test]
    async fn a_stopped_run_or_a_dropped_gate_releases_nobody() {
        let (gate, turn) = StartGate::new();
        let stop = CancellationToken::new();
        stop.cancel();
        let waiting = {
            let (turn, stop) = (turn.clone(), stop.clone());
            tokio::spawn(async move { turn.arrive(Duration::from_secs(1), &stop).await })
        };
        gate.open().await;
        assert_eq!(waiting.await.unwrap(), None);
        let (gate, turn) = StartGate::new();
        drop(gate);
        assert_eq!(turn.arrive(Duration::ZERO, &stop).await, None);
    }
}
