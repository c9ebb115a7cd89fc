//! A room as this page sees it: who we are in it, who else is there, the sale, this phone's
//! own results and the chaos pressed so far. The sale's outcomes themselves fill the normal
//! run model (`page.rs` treats a sale as a run); this holds only what a room adds.

use oversold_protocol::room::{BuyResult, ChaosApplied, ChaosInfo, Presence, RoomRole, SaleConfig};
use oversold_protocol::{ErrorCode, Hello, OutcomeResult, ServerMessage, WireError};

/// Chaos events kept for the log (the newest; older ones drop off).
const CHAOS_KEPT: usize = 20;
/// How long a phone waits for its click's answer before it frees the Buy button and says
/// none came, ms. A click normally takes milliseconds plus the sale's race window (at most
/// 5 s); this is for a sale whose server stopped mid-sale.
pub const ANSWER_WAIT_MS: u32 = 20_000;

/// The chaos buttons the presenter's panel shows, in the server's order and words
/// (`hello.chaos`): each one this server lets it press (one that needs the server's own Redis
/// only when the server started it). The page holds no list of its own.
pub fn chaos_buttons(hello: &Hello) -> Vec<ChaosInfo> {
    hello
        .chaos
        .iter()
        .filter(|c| !c.needs_own_redis || hello.outage_allowed)
        .cloned()
        .collect()
}

/// The sale on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct SaleView {
    /// Its id (the run id of its outcomes).
    pub sale_id: String,
    /// The presenter's knobs.
    pub config: SaleConfig,
    /// False once `sale_closed` arrived.
    pub open: bool,
    /// Oversold units, from the summary once closed.
    pub oversold: Option<u64>,
    /// Why it ended without a summary.
    pub error: Option<String>,
    /// Scripts reloaded during the sale.
    pub reloads: u64,
}

/// Everything a room adds to the page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoomState {
    /// The room code, once created or joined.
    pub code: Option<String>,
    /// As whom this page is in the room.
    pub role: Option<RoomRole>,
    /// Presenter only: the secret (kept in memory, never in the address or storage).
    pub token: Option<String>,
    /// Presenter only: what the QR code says.
    pub join_url: Option<String>,
    /// This socket's id in the room.
    pub participant_id: Option<u32>,
    /// A phone's proof of its id, kept so a reload joins as the same buyer.
    pub seat_token: Option<String>,
    /// Head count and clicks.
    pub presence: Presence,
    /// The current (or last) sale.
    pub sale: Option<SaleView>,
    /// This phone's results in the current sale, newest last.
    pub results: Vec<BuyResult>,
    /// A click is on its way (the Buy button waits).
    pub waiting: bool,
    /// The last refusal the server sent this phone (already bought, no sale open, …).
    pub refusal: Option<String>,
    /// Chaos pressed, newest last.
    pub chaos: Vec<ChaosApplied>,
    /// Clicks sent so far, for unique request ids.
    pub clicks_sent: u32,
}

impl RoomState {
    /// Fold one server frame in.
    pub fn apply(&mut self, msg: &ServerMessage) {
        match msg {
            ServerMessage::RoomCreated {
                room,
                presenter_token,
                join_url,
            } => {
                *self = RoomState {
                    code: Some(room.clone()),
                    role: Some(RoomRole::Presenter),
                    token: Some(presenter_token.clone()),
                    join_url: Some(join_url.clone()),
                    ..RoomState::default()
                };
            }
            ServerMessage::RoomJoined {
                room,
                participant_id,
                role,
                seat_token,
            } => self.joined(room, *participant_id, *role, seat_token.clone()),
            ServerMessage::RoomPresence { presence, .. } => self.presence = *presence,
            ServerMessage::SaleOpened(s) => self.sale_opened(&s.sale_id, &s.config),
            ServerMessage::SaleClosed(c) => self.sale_closed(
                &c.sale_id,
                c.summary.as_ref().map(|s| s.oversold_units),
                c.error.clone(),
                c.reloads,
            ),
            ServerMessage::BuyResult(r) => self.bought(r.clone()),
            ServerMessage::ChaosApplied(c) => {
                self.chaos.push(c.clone());
                if self.chaos.len() > CHAOS_KEPT {
                    self.chaos.remove(0);
                }
            }
            ServerMessage::Error(e) => self.error(e),
            _ => {}
        }
    }

    // One method per frame a phone reads, so the phone page (which decodes only those frames,
    // `crate::phone`) folds them in by the same rules as `apply`.

    /// `room_joined`: this socket is in room `room` as `role`.
    pub fn joined(
        &mut self,
        room: &str,
        participant_id: u32,
        role: RoomRole,
        seat_token: Option<String>,
    ) {
        self.code = Some(room.to_string());
        self.role = Some(role);
        self.participant_id = Some(participant_id);
        self.seat_token = seat_token;
        self.waiting = false;
    }

    /// `sale_closed` for sale `sale_id`: `oversold` from its summary, `error` when it ended
    /// without one.
    pub fn sale_closed(
        &mut self,
        sale_id: &str,
        oversold: Option<u64>,
        error: Option<String>,
        reloads: u64,
    ) {
        if let Some(sale) = self.sale.as_mut().filter(|s| s.sale_id == sale_id) {
            sale.open = false;
            sale.oversold = oversold;
            sale.error = error;
            sale.reloads = reloads;
        }
        self.waiting = false;
    }

    /// `buy_result`: this phone's click was answered.
    pub fn bought(&mut self, result: BuyResult) {
        self.waiting = false;
        self.refusal = None;
        self.results.push(result);
    }

    /// An `error` frame: a presenter whose room is gone starts over; a refusal of a room
    /// action is shown on the phone.
    pub fn error(&mut self, e: &WireError) {
        if e.code == ErrorCode::NoSuchRoom && self.role == Some(RoomRole::Presenter) {
            // The room this page presented is gone (it expired): start over.
            *self = RoomState::default();
        } else if self.code.is_some() && is_room_refusal(e.code) {
            self.waiting = false;
            self.refusal = Some(e.message.clone());
        }
    }

    /// `sale_opened`: a new sale (a replayed one after a reconnect changes nothing).
    pub fn sale_opened(&mut self, sale_id: &str, config: &SaleConfig) {
        if self.sale.as_ref().is_some_and(|s| s.sale_id == sale_id) {
            return; // replayed after a reconnect
        }
        self.sale = Some(SaleView {
            sale_id: sale_id.to_string(),
            config: config.clone(),
            open: true,
            oversold: None,
            error: None,
            reloads: 0,
        });
        self.results.clear();
        self.refusal = None;
        self.presence.clicks = 0;
    }

    /// Is the Buy button live? A sale is open, no click is on its way, and this phone has
    /// not bought yet (unless the presenter allows more).
    pub fn can_buy(&self) -> bool {
        let Some(sale) = self.sale.as_ref().filter(|s| s.open) else {
            return false;
        };
        self.role == Some(RoomRole::Phone)
            && !self.waiting
            && (sale.config.allow_repeat || self.results.is_empty())
    }

    /// Click number `click` got no answer in [`ANSWER_WAIT_MS`]: free the button and say so,
    /// unless an answer (or the sale's end) came meanwhile. An answer that comes later still
    /// counts: the click may well have bought.
    pub fn no_answer(&mut self, click: u32) {
        if self.waiting && self.clicks_sent == click {
            self.waiting = false;
            self.refusal = Some(format!(
                "No answer in {} s: the sale's server may have stopped. Your click may still \
                 have bought; if an answer comes, it shows here.",
                ANSWER_WAIT_MS / 1000
            ));
        }
    }

    /// The phone page's HTML sent the first click (request id `p<id>-c1`) before the app ran:
    /// count it, and wait for its answer.
    pub fn clicked_by_page(&mut self) {
        self.clicks_sent += 1;
        self.waiting = true;
    }

    /// The next click's request id: unique per page (participant and count).
    pub fn next_request_id(&mut self) -> String {
        self.clicks_sent += 1;
        self.waiting = true;
        format!(
            "p{}-c{}",
            self.participant_id.unwrap_or(0),
            self.clicks_sent
        )
    }

    /// Chaos pressed during run `run_id`, as timeline marks: µs after its gate, and the
    /// button's name.
    pub fn chaos_marks(&self, run_id: Option<&str>) -> Vec<(u64, String)> {
        self.chaos
            .iter()
            .filter(|c| c.sale_id.as_deref().is_some_and(|id| Some(id) == run_id))
            .filter_map(|c| Some((c.at_us?, c.action.as_str().replace('_', " "))))
            .collect()
    }

    /// The presenter's room, kept in the browser as `"<code> <token>"` so a reload of the
    /// presenter's page takes the room back.
    pub fn presenting(&self) -> Option<String> {
        (self.role == Some(RoomRole::Presenter))
            .then(|| Some(format!("{} {}", self.code.as_ref()?, self.token.as_ref()?)))
            .flatten()
    }

    /// Take back the room a kept `"<code> <token>"` names (the socket then joins as its
    /// presenter); false when the text is not one.
    pub fn resume_presenting(&mut self, kept: &str) -> bool {
        let Some((code, token)) = kept.split_once(' ') else {
            return false;
        };
        let token_ok =
            !token.is_empty() && token.len() <= 64 && token.bytes().all(|b| b.is_ascii_hexdigit());
        if !token_ok || !oversold_protocol::room::is_room_code(code) {
            return false;
        }
        self.code = Some(code.to_string());
        self.token = Some(token.to_string());
        self.role = Some(RoomRole::Presenter);
        self.join_url = None;
        true
    }

    /// What a phone keeps in the browser to come back as itself: `"<id> <token>"`.
    pub fn seat(&self) -> Option<String> {
        Some(format!(
            "{} {}",
            self.participant_id?,
            self.seat_token.as_ref()?
        ))
    }

    /// The header's one line while this screen shows a room's sale: the sale's own numbers
    /// (the form's knobs are not what the room is racing), or `None` outside a sale.
    pub fn pitch(&self) -> Option<String> {
        let sale = self.sale.as_ref()?;
        let c = &sale.config;
        let phones = super::text::count(self.presence.phones.into(), "phone");
        let bots = match c.bots {
            0 => String::new(),
            n => format!(" and {}", super::text::count(n.into(), "bot")),
        };
        Some(format!(
            "Room {}'s sale: {} in stock, {phones}{bots}, one Redis counter.",
            self.code.as_deref().unwrap_or("?"),
            super::text::thousands(c.stock.into()),
        ))
    }

    /// This phone's latest result, in words.
    pub fn verdict(&self) -> Option<String> {
        let r = self.results.last()?;
        let oversold = self.sale.as_ref().and_then(|s| s.oversold);
        Some(verdict(r, oversold))
    }

    /// Where this phone is on the projector: its buyer number, the one the grid and the audit
    /// trail show (`None` before its first answered click).
    pub fn buyer_line(&self) -> Option<String> {
        let buyer = self.results.last()?.outcome.as_ref()?.buyer;
        Some(format!("You are buyer #{buyer} on the projector."))
    }

    /// Why the last click was oversold, in one sentence from the numbers its answer carries.
    pub fn why(&self) -> Option<String> {
        why_oversold(self.results.last()?)
    }
}

/// One result in words. `oversold`: the sale's oversold units, once it is closed.
pub fn verdict(r: &BuyResult, oversold: Option<u64>) -> String {
    match (r.result, r.unit) {
        (OutcomeResult::Reserved, Some(unit)) if unit <= 0 => match oversold {
            Some(n) => {
                format!("you were sold a unit that does not exist: you are one of the {n} oversold")
            }
            None => "you were sold a unit that does not exist (the stock went below zero)".into(),
        },
        (OutcomeResult::Reserved, Some(unit)) => format!("you got unit #{unit}"),
        (OutcomeResult::Reserved, None) => "you got a unit".into(),
        (OutcomeResult::SoldOut, _) => "refused: sold out".into(),
        (OutcomeResult::Unknown, _) => "no answer in time: the unit may or may not be yours".into(),
        (OutcomeResult::GaveUp, _) => "gave up after too many retries".into(),
        (OutcomeResult::Error, _) => match &r.message {
            Some(why) => format!("failed: {why}"),
            None => "failed".into(),
        },
    }
}

/// Why a unit that does not exist was sold, from what the buyer read and what its write left:
/// `None` when the click was not oversold, or its answer carries neither number.
pub fn why_oversold(r: &BuyResult) -> Option<String> {
    if r.result != OutcomeResult::Reserved || r.unit.is_none_or(|u| u > 0) {
        return None;
    }
    let o = r.outcome.as_ref()?;
    Some(match (o.observed_stock, o.stock_after) {
        (Some(read), Some(after)) => format!(
            "Your app read {read} left and sold to you, but others had read the same stock at the same moment: after your write the counter was at {after}."
        ),
        (None, Some(after)) => format!(
            "After your write the counter was at {after}: more units were sold than existed."
        ),
        (Some(read), None) => format!(
            "Your app read {read} left and sold to you, but other buyers had already taken those units."
        ),
        (None, None) => return None,
    })
}

/// Errors that answer a room action (shown on the phone rather than as a page notice).
fn is_room_refusal(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::AlreadyBought
            | ErrorCode::SaleState
            | ErrorCode::NotInRoom
            | ErrorCode::RateLimited
            | ErrorCode::NoSuchRoom
            | ErrorCode::NotPresenter
            | ErrorCode::ChaosNotAllowed
    )
}

/// A kept seat (see [`RoomState::seat`]) read back; `None` for anything malformed.
pub fn parse_seat(kept: &str) -> Option<(u32, String)> {
    let (id, token) = kept.split_once(' ')?;
    let token_ok =
        !token.is_empty() && token.len() <= 64 && token.bytes().all(|b| b.is_ascii_hexdigit());
    Some((id.parse().ok()?, token.to_string())).filter(|_| token_ok)
}

/// The room code in a join path (`/r/CODE`), if the page was opened through one.
pub fn code_in_path(path: &str) -> Option<String> {
    let code = path.strip_prefix("/r/")?.trim_end_matches('/');
    oversold_protocol::room::is_room_code(code).then(|| code.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::room::{ChaosAction, SaleOpened};
    use oversold_protocol::{RunConfig, WireError};

    #[test]
    fn chaos_buttons_are_the_servers_and_only_those_it_may_press() {
        let button = |action: ChaosAction, label: &str, needs_own_redis: bool| ChaosInfo {
            action,
            label: label.into(),
            description: format!("{label}, described."),
            needs_own_redis,
        };
        let mut hello = crate::model::fixtures::hello();
        hello.chaos = vec![
            button(ChaosAction::ScriptFlush, "Flush scripts", true),
            button(ChaosAction::PauseRedis, "Pause Redis 1 s", true),
        ];
        assert!(
            chaos_buttons(&hello).is_empty(),
            "not the server's own Redis"
        );
        hello.outage_allowed = true;
        let labels: Vec<String> = chaos_buttons(&hello).into_iter().map(|c| c.label).collect();
        assert_eq!(labels, ["Flush scripts", "Pause Redis 1 s"]);
        // One that needs no Redis of the server's own is offered either way.
        hello.outage_allowed = false;
        hello.chaos[1].needs_own_redis = false;
        let shown: Vec<ChaosAction> = chaos_buttons(&hello)
            .into_iter()
            .map(|c| c.action)
            .collect();
        assert_eq!(shown, [ChaosAction::PauseRedis]);
        // An older server lists none: no buttons.
        hello.chaos.clear();
        assert!(chaos_buttons(&hello).is_empty());
    }

    fn result(result: OutcomeResult, unit: Option<i64>) -> BuyResult {
        BuyResult {
            room: "AB3CD".into(),
            request_id: "p1-c1".into(),
            sale_id: "s-1".into(),
            result,
            unit,
            outcome: None,
            message: None,
        }
    }

    #[test]
    fn verdicts_say_what_happened_to_this_phone() {
        assert_eq!(
            verdict(&result(OutcomeResult::Reserved, Some(7)), None),
            "you got unit #7"
        );
        assert_eq!(
            verdict(&result(OutcomeResult::SoldOut, None), None),
            "refused: sold out"
        );
        assert_eq!(
            verdict(&result(OutcomeResult::Reserved, Some(-3)), Some(14)),
            "you were sold a unit that does not exist: you are one of the 14 oversold"
        );
    }

    #[test]
    fn a_phone_learns_its_buyer_number_and_why_it_was_oversold() {
        use crate::model::fixtures::outcome;
        let mut room = RoomState::default();
        assert_eq!(room.buyer_line(), None);
        let mut oversold = result(OutcomeResult::Reserved, Some(-2));
        let mut o = outcome(26, 1, OutcomeResult::Reserved);
        o.observed_stock = Some(1);
        o.stock_after = Some(-2);
        oversold.outcome = Some(o);
        room.apply(&ServerMessage::BuyResult(oversold.clone()));
        assert_eq!(
            room.buyer_line().unwrap(),
            "You are buyer #26 on the projector."
        );
        assert_eq!(
            room.why().unwrap(),
            "Your app read 1 left and sold to you, but others had read the same stock at the same moment: after your write the counter was at -2."
        );
        // A unit that exists needs no explanation.
        let mut fine = oversold.clone();
        fine.unit = Some(3);
        assert_eq!(why_oversold(&fine), None);
        // The atomic script reads nothing in the app: only the stock after.
        let mut atomic = oversold;
        if let Some(o) = atomic.outcome.as_mut() {
            o.observed_stock = None;
        }
        assert!(
            why_oversold(&atomic)
                .unwrap()
                .starts_with("After your write the counter was at -2")
        );
    }

    #[test]
    fn a_click_the_html_sent_is_counted_and_waited_for_like_the_apps_own() {
        let mut room = RoomState::default();
        room.joined("AB3CD", 4, RoomRole::Phone, Some("ab".into()));
        let config: SaleConfig = serde_json::from_str(r#"{"strategy":"naive","stock":2}"#).unwrap();
        room.sale_opened("s-1", &config);
        assert!(room.can_buy());
        room.clicked_by_page();
        assert!(!room.can_buy(), "the click is on its way");
        // Its answer frees nothing more: one buy per phone.
        room.bought(result(OutcomeResult::Reserved, Some(2)));
        assert!(!room.waiting && !room.can_buy());
        // The app's own next click would not reuse the HTML's request id (`p4-c1`).
        assert_eq!(room.next_request_id(), "p4-c2");
        // No answer in time frees the button, as for the app's own click.
        let mut slow = RoomState::default();
        slow.joined("AB3CD", 4, RoomRole::Phone, None);
        slow.sale_opened("s-1", &config);
        slow.clicked_by_page();
        slow.no_answer(slow.clicks_sent);
        assert!(slow.can_buy() && slow.refusal.is_some());
    }

    #[test]
    fn the_header_names_the_sale_not_the_form() {
        let mut room = RoomState::default();
        assert_eq!(room.pitch(), None, "no room: the form's words");
        room.code = Some("AB3CD".into());
        room.presence.phones = 3;
        let config: SaleConfig =
            serde_json::from_str(r#"{"strategy":"naive","stock":2,"bots":50}"#).unwrap();
        room.sale_opened("s-1", &config);
        assert_eq!(
            room.pitch().as_deref(),
            Some("Room AB3CD's sale: 2 in stock, 3 phones and 50 bots, one Redis counter.")
        );
    }

    #[test]
    fn a_phone_buys_once_unless_repeats_are_allowed() {
        let mut room = RoomState::default();
        room.apply(&ServerMessage::RoomJoined {
            room: "AB3CD".into(),
            participant_id: 4,
            role: RoomRole::Phone,
            seat_token: Some("ab12".into()),
        });
        assert_eq!(room.seat().as_deref(), Some("4 ab12"));
        assert_eq!(parse_seat("4 ab12"), Some((4, "ab12".to_string())));
        assert_eq!(parse_seat("4 <script>"), None);
        assert_eq!(parse_seat("x ab12"), None);
        assert!(!room.can_buy(), "no sale yet");
        let config: SaleConfig = serde_json::from_str(r#"{"strategy":"naive","stock":3}"#).unwrap();
        let run: RunConfig = serde_json::from_value(serde_json::json!({
            "strategy":"naive","stock":3,"buyers":0,"qty":1,"app_servers":4,
            "arrival_spread_ms":0,"race_window_ms":0,"seed":1
        }))
        .unwrap();
        room.apply(&ServerMessage::SaleOpened(SaleOpened {
            room: "AB3CD".into(),
            sale_id: "s-1".into(),
            config,
            run,
            opened_unix_us: 0,
        }));
        assert!(room.can_buy());
        assert_eq!(room.next_request_id(), "p4-c1");
        assert!(!room.can_buy(), "waiting for the answer");
        room.apply(&ServerMessage::BuyResult(result(
            OutcomeResult::Reserved,
            Some(3),
        )));
        assert!(!room.can_buy(), "bought already");
        assert_eq!(room.verdict().unwrap(), "you got unit #3");
        room.apply(&ServerMessage::Error(WireError {
            code: ErrorCode::AlreadyBought,
            message: "you have already bought in this sale".into(),
            run_id: None,
        }));
        assert_eq!(
            room.refusal.as_deref(),
            Some("you have already bought in this sale")
        );
    }

    #[test]
    fn a_click_without_an_answer_frees_the_button_and_a_late_answer_still_counts() {
        let mut room = RoomState::default();
        room.apply(&ServerMessage::RoomJoined {
            room: "AB3CD".into(),
            participant_id: 4,
            role: RoomRole::Phone,
            seat_token: None,
        });
        let config: SaleConfig = serde_json::from_str(r#"{"strategy":"naive","stock":3}"#).unwrap();
        room.sale_opened("s-1", &config);
        room.next_request_id();
        room.next_request_id();
        room.no_answer(1);
        assert!(
            room.waiting,
            "an older click's timer does not free a newer click"
        );
        room.no_answer(2);
        assert!(!room.waiting && room.can_buy());
        assert!(
            room.refusal
                .as_deref()
                .unwrap()
                .starts_with("No answer in 20 s")
        );
        room.apply(&ServerMessage::BuyResult(result(
            OutcomeResult::Reserved,
            Some(3),
        )));
        assert_eq!(room.verdict().unwrap(), "you got unit #3");
        assert_eq!(room.refusal, None);
        room.no_answer(2);
        assert_eq!(room.refusal, None, "answered: the timer has nothing to say");
    }

    #[test]
    fn chaos_marks_belong_to_their_sale() {
        let mut room = RoomState::default();
        let pressed = |sale: Option<&str>, at_us| {
            ServerMessage::ChaosApplied(ChaosApplied {
                room: "AB3CD".into(),
                action: oversold_protocol::room::ChaosAction::PauseRedis,
                sale_id: sale.map(str::to_string),
                at_us,
                took_us: 1,
                detail: "CLIENT PAUSE".into(),
            })
        };
        room.apply(&pressed(Some("s-1"), Some(800_000)));
        room.apply(&pressed(Some("s-2"), Some(5)));
        room.apply(&pressed(None, None));
        assert_eq!(
            room.chaos_marks(Some("s-1")),
            vec![(800_000, "pause redis".to_string())]
        );
        assert!(room.chaos_marks(None).is_empty());
    }

    #[test]
    fn a_presenter_takes_a_kept_room_back_and_drops_an_expired_one() {
        let mut room = RoomState::default();
        assert!(!room.resume_presenting("AB3CD <script>"));
        assert!(room.resume_presenting("AB3CD 0123abcd"));
        assert_eq!(room.presenting().as_deref(), Some("AB3CD 0123abcd"));
        room.apply(&ServerMessage::Error(WireError {
            code: ErrorCode::NoSuchRoom,
            message: "gone".into(),
            run_id: None,
        }));
        assert_eq!(room, RoomState::default());
    }

    #[test]
    fn join_paths_name_a_room() {
        assert_eq!(code_in_path("/r/AB3CD").as_deref(), Some("AB3CD"));
        assert_eq!(code_in_path("/r/AB3CD/").as_deref(), Some("AB3CD"));
        assert_eq!(code_in_path("/r/nope!"), None);
        assert_eq!(code_in_path("/"), None);
    }
}
