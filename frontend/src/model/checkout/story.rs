//! One buyer's checkout as the audit trail tells it: every step in a few words
//! (`reserved 1 → paid → confirmed → ledger row`), how it ended, and the filter by ending.

use oversold_protocol::{BuyerOutcome, CheckoutEnd, CheckoutStory, Fate, Stage, StepOutcome};

use super::clock::shop_clock;

/// Every ending, in the order the filter buttons list them: the sales, then the refusals,
/// then the buyers who took units and did not keep them.
pub const ENDS: [CheckoutEnd; 10] = [
    CheckoutEnd::Confirmed,
    CheckoutEnd::Backordered,
    CheckoutEnd::SoldOut,
    CheckoutEnd::OverLimit,
    CheckoutEnd::Refused,
    CheckoutEnd::Abandoned,
    CheckoutEnd::PaymentFailed,
    CheckoutEnd::Expired,
    CheckoutEnd::Crashed,
    CheckoutEnd::Failed,
];

/// How an ending is marked on its line: a short word (also a CSS hook).
pub fn end_word(end: CheckoutEnd) -> &'static str {
    match end {
        CheckoutEnd::Confirmed => "confirmed",
        CheckoutEnd::Backordered => "backorder",
        CheckoutEnd::SoldOut => "sold out",
        CheckoutEnd::OverLimit => "over limit",
        CheckoutEnd::Refused => "refused",
        CheckoutEnd::Abandoned => "abandoned",
        CheckoutEnd::PaymentFailed => "declined",
        CheckoutEnd::Expired => "too late",
        CheckoutEnd::Crashed => "crashed",
        CheckoutEnd::Failed => "failed",
    }
}

/// The fate the seed chose for a buyer, as its wire name (`pay`, `abandon`, `pay_fail`,
/// `crash`): a test hook, compared with the server's own outcomes.
pub fn fate_id(fate: Fate) -> &'static str {
    match fate {
        Fate::Pay => "pay",
        Fate::Abandon => "abandon",
        Fate::PayFail => "pay_fail",
        Fate::Crash => "crash",
    }
}

/// Which lines the trail shows in a checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StoryFilter {
    /// Every buyer.
    #[default]
    All,
    /// Buyers whose story ended this way.
    End(CheckoutEnd),
    /// Buyers whose client resent the reserve request (answered from the record or not).
    Resent,
}

impl StoryFilter {
    /// The button label.
    pub fn label(self) -> &'static str {
        match self {
            StoryFilter::All => "All",
            StoryFilter::Resent => "Resent",
            StoryFilter::End(CheckoutEnd::Confirmed) => "Confirmed",
            StoryFilter::End(CheckoutEnd::Backordered) => "Backorder",
            StoryFilter::End(CheckoutEnd::SoldOut) => "Sold out",
            StoryFilter::End(CheckoutEnd::OverLimit) => "Over limit",
            StoryFilter::End(CheckoutEnd::Refused) => "Refused",
            StoryFilter::End(CheckoutEnd::Abandoned) => "Abandoned",
            StoryFilter::End(CheckoutEnd::PaymentFailed) => "Declined",
            StoryFilter::End(CheckoutEnd::Expired) => "Paid too late",
            StoryFilter::End(CheckoutEnd::Crashed) => "Crashed",
            StoryFilter::End(CheckoutEnd::Failed) => "Failed",
        }
    }

    /// The test hook's suffix: `story-filter-confirmed`, `story-filter-payment-failed`, …
    /// (the ending's wire name).
    pub fn id(self) -> String {
        match self {
            StoryFilter::All => "all".into(),
            StoryFilter::Resent => "resent".into(),
            StoryFilter::End(end) => end.as_str().replace('_', "-"),
        }
    }

    /// Whether `o` passes.
    pub fn matches(self, o: &BuyerOutcome) -> bool {
        let Some(s) = &o.checkout else {
            return self == StoryFilter::All;
        };
        match self {
            StoryFilter::All => true,
            StoryFilter::End(end) => s.end == end,
            StoryFilter::Resent => s.retried,
        }
    }
}

/// The filter buttons worth showing for `outcomes`, each with how many lines it keeps: `All`
/// always, the others only when some story matches (a short row on a phone).
pub fn filters<'a>(outcomes: impl Iterator<Item = &'a BuyerOutcome>) -> Vec<(StoryFilter, usize)> {
    let mut ends = [0usize; ENDS.len()];
    let (mut all, mut resent) = (0, 0);
    for o in outcomes {
        all += 1;
        if let Some(s) = &o.checkout {
            if let Some(i) = ENDS.iter().position(|e| *e == s.end) {
                ends[i] += 1;
            }
            resent += usize::from(s.retried);
        }
    }
    let mut out = vec![(StoryFilter::All, all)];
    out.extend(
        ENDS.iter()
            .zip(ends)
            .filter(|(_, n)| *n > 0)
            .map(|(e, n)| (StoryFilter::End(*e), n)),
    );
    if resent > 0 {
        out.push((StoryFilter::Resent, resent));
    }
    out
}

/// `1 unit`, `3 units`.
fn units(qty: u32) -> String {
    super::super::text::count(qty.into(), "unit")
}

/// One step in a few words.
fn step_words(stage: Stage, outcome: StepOutcome, qty: u32, end: CheckoutEnd) -> String {
    use StepOutcome as O;
    let resent = stage == Stage::Retry;
    let said = match (stage, outcome) {
        (_, O::Held) => format!("held {}", units(qty)),
        (_, O::Taken) => format!("took {}, no hold", units(qty)),
        (_, O::SoldOut) => "sold out".into(),
        (_, O::OverLimit) => "over the per-customer limit".into(),
        // Only a buyer's two requests share its record, so the original found one only if
        // its resend (on another app server) reached Redis first.
        (Stage::Reserve, O::FromRecord) => {
            "answered from the record: its resend got there first".into()
        }
        (_, O::FromRecord) => "answered from the record".into(),
        (_, O::Unreachable) => "Redis unreachable".into(),
        (_, O::Orphaned) => "landed after the app gave up".into(),
        (_, O::Paid) => "paid".into(),
        (_, O::Abandoned) => "walked away".into(),
        (_, O::Declined) => "card declined".into(),
        (_, O::Confirmed) => "confirmed".into(),
        (_, O::Expired) => "hold had expired".into(),
        (Stage::Release, O::Gone) => "nothing left to release".into(),
        (_, O::Gone) => "hold gone".into(),
        (_, O::Released) => "released".into(),
        (_, O::Recorded) if end == CheckoutEnd::Backordered => "backorder row".into(),
        (_, O::Recorded) => "ledger row".into(),
        (_, O::Crashed) => "app server died".into(),
        (_, O::Failed) => "failed".into(),
    };
    if resent {
        format!("resent: {said}")
    } else {
        said
    }
}

/// What became of a story's units after it ended, when that is worth a word: a crashed
/// buyer's hold expires (at `expires`, or already did at shop time `now`); a crashed buyer
/// without a hold leaked its units; a resend that reserved again took units twice.
fn aftermath(s: &CheckoutStory, qty: u32, now: Option<u64>) -> Option<String> {
    if s.end == CheckoutEnd::Crashed {
        return Some(match (s.hold_id.is_some(), s.expires_at_shop_ms) {
            (true, Some(at)) if now.is_some_and(|n| n >= at) => {
                format!("hold expired at {}: units back", shop_clock(at))
            }
            (true, Some(at)) => format!("hold expires at {}", shop_clock(at)),
            (true, None) => "the hold expires".into(),
            (false, _) => format!("{} leaked: nothing records them", units(qty)),
        });
    }
    (s.duplicate_units > 0).then(|| format!("reserved twice: {} extra", units(s.duplicate_units)))
}

/// A whole story in one line: `held 1 unit → paid → confirmed → ledger row`, then what became
/// of its units when that matters. `now` is the shop clock, to tell a hold still ticking from
/// one that expired.
pub fn describe(o: &BuyerOutcome, now: Option<u64>) -> String {
    let Some(s) = &o.checkout else {
        return String::new();
    };
    let mut parts: Vec<String> = s
        .steps
        .iter()
        .map(|st| step_words(st.stage, st.outcome, o.qty, s.end))
        .collect();
    if let Some(error) = o.error.as_deref().filter(|_| s.end == CheckoutEnd::Failed) {
        parts.push(error.to_string());
    }
    parts.extend(aftermath(s, o.qty, now));
    parts.join(" → ")
}

/// When the story ended on the shop clock (its last step's end).
pub fn ended_at(s: &CheckoutStory) -> u64 {
    s.steps.last().map_or(0, |st| st.end_shop_ms)
}

/// The race timeline's sentence under a checkout: what its bars are, and how the stories
/// ended, in the legend's race words (a confirmed order is drawn as reserved, a buyer who
/// gave the units back as gave up, a crash as in doubt).
pub fn timeline_caption<'a>(
    outcomes: impl Iterator<Item = &'a BuyerOutcome>,
    running: bool,
) -> String {
    let (mut sold, mut back, mut crashed, mut refused) = (0u64, 0u64, 0u64, 0u64);
    for s in outcomes.filter_map(|o| o.checkout.as_ref()) {
        match s.end {
            CheckoutEnd::Confirmed | CheckoutEnd::Backordered => sold += 1,
            CheckoutEnd::Abandoned | CheckoutEnd::PaymentFailed | CheckoutEnd::Expired => back += 1,
            CheckoutEnd::Crashed => crashed += 1,
            _ => refused += 1,
        }
    }
    let so_far = if running { " so far" } else { "" };
    format!(
        "Each bar is one buyer's whole checkout on the real clock, arrival to last step{so_far}: \
         {sold} confirmed (reserved), {back} gave the units back (gave up), {crashed} crashed (in doubt), \
         {refused} refused (sold out or error)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::checkout::fixtures::{ending, story};

    #[test]
    fn each_kind_of_story_in_words() {
        use Stage as S;
        use StepOutcome as O;
        let paid = story(
            1,
            CheckoutEnd::Confirmed,
            &[
                (S::Reserve, O::Held),
                (S::Pay, O::Paid),
                (S::Confirm, O::Confirmed),
                (S::Ledger, O::Recorded),
            ],
        );
        assert_eq!(
            describe(&paid, None),
            "held 1 unit → paid → confirmed → ledger row"
        );
        let walked = story(
            2,
            CheckoutEnd::Abandoned,
            &[
                (S::Reserve, O::Held),
                (S::Pay, O::Abandoned),
                (S::Release, O::Released),
            ],
        );
        assert_eq!(
            describe(&walked, None),
            "held 1 unit → walked away → released"
        );
        let mut crashed = story(
            3,
            CheckoutEnd::Crashed,
            &[(S::Reserve, O::Held), (S::Crash, O::Crashed)],
        );
        crashed.checkout.as_mut().unwrap().hold_id = Some("h3.1".into());
        crashed.checkout.as_mut().unwrap().expires_at_shop_ms = Some(300_000);
        assert_eq!(
            describe(&crashed, Some(120_000)),
            "held 1 unit → app server died → hold expires at 5:00"
        );
        assert_eq!(
            describe(&crashed, Some(300_000)),
            "held 1 unit → app server died → hold expired at 5:00: units back"
        );
        let leaked = story(
            4,
            CheckoutEnd::Crashed,
            &[(S::Reserve, O::Taken), (S::Crash, O::Crashed)],
        );
        assert_eq!(
            describe(&leaked, None),
            "took 1 unit, no hold → app server died → 1 unit leaked: nothing records them"
        );
        let mut twice = story(
            5,
            CheckoutEnd::Confirmed,
            &[
                (S::Reserve, O::Held),
                (S::Retry, O::Held),
                (S::Pay, O::Paid),
                (S::Confirm, O::Confirmed),
                (S::Ledger, O::Recorded),
            ],
        );
        twice.checkout.as_mut().unwrap().duplicate_units = 1;
        assert_eq!(
            describe(&twice, None),
            "held 1 unit → resent: held 1 unit → paid → confirmed → ledger row → reserved twice: 1 unit extra"
        );
        let record = story(
            6,
            CheckoutEnd::Confirmed,
            &[(S::Reserve, O::Held), (S::Retry, O::FromRecord)],
        );
        assert!(describe(&record, None).contains("resent: answered from the record"));
        let overtaken = story(
            9,
            CheckoutEnd::Confirmed,
            &[(S::Reserve, O::FromRecord), (S::Retry, O::Held)],
        );
        assert_eq!(
            describe(&overtaken, None),
            "answered from the record: its resend got there first → resent: held 1 unit"
        );
        let limit = story(7, CheckoutEnd::OverLimit, &[(S::Reserve, O::OverLimit)]);
        assert_eq!(describe(&limit, None), "over the per-customer limit");
        let back = story(
            8,
            CheckoutEnd::Backordered,
            &[(S::Reserve, O::Unreachable), (S::Ledger, O::Recorded)],
        );
        assert_eq!(describe(&back, None), "Redis unreachable → backorder row");
        let mut failed = story(9, CheckoutEnd::Failed, &[(S::Reserve, O::Failed)]);
        failed.error = Some("timed out".into());
        assert_eq!(describe(&failed, None), "failed → timed out");
        assert_eq!(ended_at(paid.checkout.as_ref().unwrap()), 4_000);
    }

    #[test]
    fn filters_count_each_ending_and_the_resends() {
        let mut resent = ending(3, CheckoutEnd::Confirmed);
        resent.checkout.as_mut().unwrap().retried = true;
        let outcomes = [
            ending(1, CheckoutEnd::Confirmed),
            ending(2, CheckoutEnd::Crashed),
            resent,
            ending(4, CheckoutEnd::PaymentFailed),
        ];
        let f = filters(outcomes.iter());
        let ids: Vec<(String, usize)> = f.iter().map(|(f, n)| (f.id(), *n)).collect();
        assert_eq!(
            ids,
            [
                ("all".into(), 4),
                ("confirmed".into(), 2),
                ("payment-failed".into(), 1),
                ("crashed".into(), 1),
                ("resent".into(), 1)
            ]
        );
        let kept: Vec<u32> = outcomes
            .iter()
            .filter(|o| StoryFilter::End(CheckoutEnd::Confirmed).matches(o))
            .map(|o| o.buyer)
            .collect();
        assert_eq!(kept, [1, 3]);
        assert!(StoryFilter::Resent.matches(&outcomes[2]));
        assert_eq!(
            StoryFilter::End(CheckoutEnd::Expired).label(),
            "Paid too late"
        );
        assert_eq!(end_word(CheckoutEnd::PaymentFailed), "declined");
        // The fate the seed chose travels with the story.
        assert_eq!(fate_id(outcomes[1].checkout.as_ref().unwrap().fate), "pay");
        assert_eq!(fate_id(Fate::PayFail), "pay_fail");
        assert_eq!(
            timeline_caption(outcomes.iter(), false),
            "Each bar is one buyer's whole checkout on the real clock, arrival to last step: \
             2 confirmed (reserved), 1 gave the units back (gave up), 1 crashed (in doubt), 0 refused (sold out or error)."
        );
        assert!(timeline_caption(outcomes.iter(), true).contains("last step so far:"));
    }
}
