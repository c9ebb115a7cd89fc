//! Each buyer's big button: the command it sends on the next click, or how its order ended.

use oversold_protocol::{OutcomeResult, StepState};

use super::log::StepLog;
use crate::model::tape_view::strip::CellKind;

/// What a buyer's button shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// 1-based buyer number (also its key).
    pub buyer: u32,
    /// The command its next click sends, in words (from the typed call); `None` once done (or
    /// while it decides, for an instant, between two commands).
    pub next: Option<String>,
    /// How it ended, in a few words, once it has.
    pub ended: Option<String>,
    /// A CSS hook for the ending: `reserved`, `oversold`, `lost`, `sold-out`, `other`, or
    /// `ready` while it still has commands to send.
    pub tone: &'static str,
    /// Commands it has sent so far.
    pub sent: usize,
}

/// One button per buyer, in order.
pub fn buttons(state: &StepState, log: &StepLog) -> Vec<Button> {
    state
        .buyers
        .iter()
        .map(|b| {
            let sent = log.of(b.buyer).count();
            let (ended, tone) = match &b.outcome {
                None => (None, "ready"),
                Some(o) => {
                    let mine = || log.of(b.buyer).map(|i| log.cells[i].kind);
                    let units = if o.qty == 1 {
                        "1 unit".to_string()
                    } else {
                        format!("{} units", o.qty)
                    };
                    match o.result {
                        OutcomeResult::Reserved if mine().any(|k| k == CellKind::Phantom) => {
                            (Some(format!("sold {units} that did not exist")), "oversold")
                        }
                        OutcomeResult::Reserved if mine().any(|k| k == CellKind::Overwrite) => {
                            (Some(format!("sold {units}; the counter forgot it")), "lost")
                        }
                        OutcomeResult::Reserved => (Some(format!("reserved {units}")), "reserved"),
                        OutcomeResult::SoldOut => {
                            (Some("refused: sold out".to_string()), "sold-out")
                        }
                        OutcomeResult::GaveUp => (Some("gave up waiting".to_string()), "other"),
                        OutcomeResult::Unknown => {
                            (Some("no answer: in doubt".to_string()), "other")
                        }
                        OutcomeResult::Error => (
                            Some(format!(
                                "failed: {}",
                                o.error.as_deref().unwrap_or("an error")
                            )),
                            "other",
                        ),
                    }
                }
            };
            Button {
                buyer: b.buyer,
                next: b.next_call.as_ref().map(ToString::to_string),
                ended,
                tone,
                sent,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{lua_one_each, naive_oversell};
    use super::*;

    #[test]
    fn buttons_show_the_next_command_then_how_it_ended() {
        let (s, t) = naive_oversell();
        let b = buttons(&s, &StepLog::read(&s, &t));
        assert_eq!(b[0].ended.as_deref(), Some("reserved 1 unit"));
        assert_eq!(
            (b[1].ended.as_deref(), b[1].tone),
            (Some("sold 1 unit that did not exist"), "oversold")
        );
        assert_eq!((b[0].sent, b[1].next.as_deref()), (2, None));
        let (s, t) = lua_one_each();
        let b = buttons(&s, &StepLog::read(&s, &t));
        assert_eq!((b[0].tone, b[1].tone), ("sold-out", "reserved"));
        assert_eq!((b[0].sent, b[1].sent), (1, 1));
    }
}
