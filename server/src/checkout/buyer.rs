//! One buyer's checkout, from arrival to its end: reserve (and maybe resend), then crash,
//! or pay and confirm, or give the units back.
//!
//! The strategy only does the Redis steps; everything the seed decides (resend, fate,
//! payment time) and everything the shop does around them (the deadline on a reservation,
//! the fail mode, the ledger row) is here, the same for every strategy, so a comparison is
//! fair. Each step is timed on both clocks and kept in the buyer's story.
//!
//! A reservation with no answer by the deadline is not yet an unreachable Redis: the buyer
//! asks the run's [`Probe`]. Redis answering a fresh connection means it is only slow: the
//! reservation *timed out* and is in doubt (`unknown`: it may still be applied), and the fail
//! mode stays out of it. Only a Redis that does not answer, or a connection that broke, is
//! unreachable, and then the fail mode refuses or takes a backorder. A broken connection is
//! also reported to the run, which decides whether Redis is gone for good.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{
    BuyerOutcome, CheckoutConfig, CheckoutEnd, CheckoutStep, CheckoutStory, FailMode, Fate,
    OutcomeResult, Stage, StepOutcome,
};
use tokio_util::sync::CancellationToken;

use super::clock::{ShopClock, micros};
use super::crowd::Shopper;
use super::ledger::{Ledger, RowState};
use super::probe::{LossReports, Probe};
use crate::gate::Turn;
use crate::run::{Event, EventSink};
use crate::store::{CheckoutKeys, HoldKey, RedisConn, StoreError};
use crate::strategy::checkout::{
    CheckoutStrategy, Claim, Order, Reservation, Returned, Settled, Step,
};

/// How long the app waits for a reservation's answer (real time). Past it the app stops
/// waiting and asks whether Redis is there at all (see the module doc): the request may
/// still land later, its units then nobody's (a hold expires; units without a hold leak),
/// and the story says so.
pub const RESERVE_DEADLINE: Duration = Duration::from_millis(300);

/// Everything the buyers of one run share.
pub struct Shop {
    /// The strategy.
    pub strategy: &'static CheckoutStrategy,
    /// The run's keys.
    pub keys: CheckoutKeys,
    /// One connection per app server.
    pub fleet: Vec<RedisConn>,
    /// Where orders are settled.
    pub ledger: Ledger,
    /// The checkout knobs.
    pub knobs: CheckoutConfig,
    /// App work between a read and its write (check-then-write strategies).
    pub race_window: Duration,
    /// Is Redis there? Asked when a reservation's deadline passes, and by the run when a
    /// connection broke.
    pub probe: Probe,
}

/// One buyer task's inputs.
pub struct Buyer {
    /// Who it is and what it will do.
    pub shopper: Shopper,
    /// The shop.
    pub shop: Arc<Shop>,
    /// Stops buyers that have not arrived, and ends stories at their next wait.
    pub stop: CancellationToken,
    /// Where its outcome goes as soon as it has one.
    pub sink: Option<EventSink>,
    /// Where it reports a broken connection to Redis.
    pub losses: LossReports,
}

/// The story so far: its steps and the Redis requests they sent.
struct Tale {
    clock: ShopClock,
    steps: Vec<CheckoutStep>,
    round_trips: u32,
}

impl Tale {
    fn push(&mut self, stage: Stage, outcome: StepOutcome, start: Instant, end: Instant) {
        self.steps.push(CheckoutStep {
            stage,
            outcome,
            start_us: self.clock.real_us(start),
            end_us: self.clock.real_us(end),
            start_shop_ms: self.clock.shop_ms(start),
            end_shop_ms: self.clock.shop_ms(end),
        });
    }

    /// A reserve request's step: what it answered, or, when the app gave up on it, that it
    /// timed out (Redis slow: `failed`, the story's error says so) or that Redis was
    /// unreachable, and (if it landed later) that its units are orphaned.
    fn reserve_step(&mut self, stage: Stage, sent: &Sent) {
        self.round_trips += sent.step.round_trips;
        match sent.gave_up {
            Some(at) => {
                let outcome = match sent.unreachable {
                    Some(_) => StepOutcome::Unreachable,
                    None => StepOutcome::Failed,
                };
                self.push(stage, outcome, sent.start, at);
                if reserved_fresh(&sent.step) {
                    self.push(stage, StepOutcome::Orphaned, at, sent.end);
                }
            }
            None => self.push(stage, reserve_outcome(&sent.step), sent.start, sent.end),
        }
    }
}

/// What the outcome needs besides the steps.
#[derive(Default)]
struct Facts {
    observed: Option<i64>,
    available_after: Option<i64>,
    customer_units: Option<i64>,
    hold: Option<HoldKey>,
    expires_at: Option<u64>,
    from_record: bool,
    duplicate_units: u32,
    answered: Option<Instant>,
    error: Option<String>,
    in_doubt: bool,
    /// The first broken connection a step met, for the run to judge.
    broken: Option<String>,
}

impl Facts {
    /// Keep `e` for the run if it says the connection broke (not a slow or refused answer).
    fn note(&mut self, e: &StoreError) {
        if e.is_outage() && self.broken.is_none() {
            self.broken = Some(e.short());
        }
    }

    /// What the reserve reply the client heard says (Redis was reachable): the claim to go
    /// on with, or how the story ends.
    fn read_answer(
        &mut self,
        answer: Result<Reservation, StoreError>,
    ) -> Result<Claim, CheckoutEnd> {
        match answer {
            Ok(Reservation::Reserved {
                claim,
                observed,
                available_after,
                customer_units,
                ..
            }) => {
                self.observed = observed;
                self.available_after = Some(available_after);
                self.customer_units = self.customer_units.max(customer_units);
                if let Claim::Hold { hold, expires_at } = &claim {
                    self.hold = Some(hold.clone());
                    self.expires_at = Some(*expires_at);
                }
                Ok(claim)
            }
            Ok(Reservation::SoldOut {
                observed,
                customer_units,
                ..
            }) => {
                self.observed = observed;
                self.customer_units = self.customer_units.max(customer_units);
                Err(CheckoutEnd::SoldOut)
            }
            Ok(Reservation::OverLimit { customer_units }) => {
                self.customer_units = self.customer_units.max(Some(customer_units));
                Err(CheckoutEnd::OverLimit)
            }
            Err(e) => {
                self.note(&e);
                self.error = Some(format!("reserve: {}", e.short()));
                self.in_doubt = e.in_doubt();
                Err(CheckoutEnd::Failed)
            }
        }
    }
}

/// One reserve request as sent: its answer, and when it left and came back.
struct Sent {
    step: Step<Reservation>,
    start: Instant,
    end: Instant,
    /// When the app stopped waiting for it, if it did.
    gave_up: Option<Instant>,
    /// Once it gave up: why Redis could not be reached, or `None` when a fresh connection
    /// found it there (slow: the request timed out).
    unreachable: Option<String>,
    /// What the fail mode did meanwhile (fail-open's backorder row), if it did anything.
    fallback: Option<Fallback>,
}

/// The fail mode's own step.
struct Fallback {
    outcome: StepOutcome,
    start: Instant,
    end: Instant,
    round_trips: u32,
    error: Option<String>,
}

fn reserved_fresh(step: &Step<Reservation>) -> bool {
    matches!(
        step.answer,
        Ok(Reservation::Reserved {
            from_record: false,
            ..
        })
    )
}

fn reserve_outcome(step: &Step<Reservation>) -> StepOutcome {
    match &step.answer {
        Ok(Reservation::Reserved {
            from_record: true, ..
        })
        | Ok(Reservation::SoldOut {
            from_record: true, ..
        }) => StepOutcome::FromRecord,
        Ok(Reservation::Reserved {
            claim: Claim::Hold { .. },
            ..
        }) => StepOutcome::Held,
        Ok(Reservation::Reserved { .. }) => StepOutcome::Taken,
        Ok(Reservation::SoldOut { .. }) => StepOutcome::SoldOut,
        Ok(Reservation::OverLimit { .. }) => StepOutcome::OverLimit,
        Err(e) if e.is_outage() => StepOutcome::Unreachable,
        Err(_) => StepOutcome::Failed,
    }
}

/// The customer's tally a reserve reply reported, if it did.
fn customer_units(step: &Step<Reservation>) -> Option<i64> {
    match &step.answer {
        Ok(Reservation::Reserved { customer_units, .. })
        | Ok(Reservation::SoldOut { customer_units, .. }) => *customer_units,
        Ok(Reservation::OverLimit { customer_units }) => Some(*customer_units),
        Err(_) => None,
    }
}

/// How a story's end reads in race terms.
fn result_for(end: CheckoutEnd, in_doubt: bool) -> OutcomeResult {
    match end {
        CheckoutEnd::Confirmed | CheckoutEnd::Backordered => OutcomeResult::Reserved,
        CheckoutEnd::SoldOut | CheckoutEnd::OverLimit => OutcomeResult::SoldOut,
        CheckoutEnd::Refused => OutcomeResult::Error,
        CheckoutEnd::Abandoned | CheckoutEnd::PaymentFailed | CheckoutEnd::Expired => {
            OutcomeResult::GaveUp
        }
        CheckoutEnd::Crashed => OutcomeResult::Unknown,
        CheckoutEnd::Failed if in_doubt => OutcomeResult::Unknown,
        CheckoutEnd::Failed => OutcomeResult::Error,
    }
}

impl Buyer {
    /// Wait for the gate and the arrival time, check out, report. `None` if the run
    /// stopped first.
    pub async fn run(self, turn: Turn) -> Option<BuyerOutcome> {
        let opened = turn.arrive(self.shopper.plan.arrival, &self.stop).await?;
        let clock = ShopClock::start(opened, self.shop.knobs.time_scale);
        let arrived = Instant::now();
        let mut tale = Tale {
            clock,
            steps: Vec::new(),
            round_trips: 0,
        };
        let mut facts = Facts::default();
        let end = self.checkout(&mut tale, &mut facts).await?;
        if let Some(why) = facts.broken.take() {
            // The run may already be over: then nobody needs to hear it.
            let _ = self.losses.send(why);
        }
        let outcome = self.outcome(arrived, tale, facts, end);
        if let Some(sink) = &self.sink {
            // A closed sink only means nobody is watching any more; the run goes on.
            let _ = sink.send(Event::Outcome(outcome.clone()));
        }
        Some(outcome)
    }

    fn conn(&self, app_server: u32) -> RedisConn {
        let fleet = &self.shop.fleet;
        fleet[app_server as usize % fleet.len()].clone()
    }

    fn request_id(&self) -> String {
        format!("rq{}", self.shopper.plan.buyer)
    }

    /// The whole story; `None` when the run stopped in the middle of a wait.
    async fn checkout(&self, tale: &mut Tale, facts: &mut Facts) -> Option<CheckoutEnd> {
        let claim = match self.reserve(tale, facts).await {
            Ok(claim) => claim,
            Err(end) => return Some(end),
        };
        if self.shopper.fate == Fate::Crash {
            // The app server dies between the reservation and the order row: no confirm,
            // no release, nothing. Only a hold's expiry can bring the units back.
            let now = Instant::now();
            tale.push(Stage::Crash, StepOutcome::Crashed, now, now);
            facts.error = Some("the app server died after reserving, before the order".into());
            return Some(CheckoutEnd::Crashed);
        }
        self.pay(tale).await?;
        Some(match self.shopper.fate {
            Fate::Pay => self.confirm(tale, facts, &claim).await,
            Fate::Abandon => {
                facts.error = Some("walked away; the units were released".into());
                self.release(tale, facts, &claim, CheckoutEnd::Abandoned)
                    .await
            }
            Fate::PayFail | Fate::Crash => {
                facts.error = Some("the payment was declined; the units were released".into());
                self.release(tale, facts, &claim, CheckoutEnd::PaymentFailed)
                    .await
            }
        })
    }

    /// One reserve request on `app_server`, as the n-th copy of the order's request.
    async fn send(
        &self,
        clock: ShopClock,
        copy: u32,
        app_server: u32,
    ) -> (Step<Reservation>, Instant, Instant) {
        let shop = &self.shop;
        let plan = &self.shopper.plan;
        let request = self.request_id();
        let hold = shop.keys.hold(&format!("h{}.{copy}", plan.buyer));
        let start = Instant::now();
        let order = Order {
            keys: &shop.keys,
            qty: plan.qty,
            customer: self.shopper.customer,
            request: &request,
            hold: &hold,
            now: clock.shop_ms(start),
            hold_ttl: u64::from(shop.knobs.hold_ttl_ms),
            hold_real: clock.real(u64::from(shop.knobs.hold_ttl_ms)),
            limit: shop.knobs.per_customer_limit,
            race_window: shop.race_window,
        };
        let step = shop
            .strategy
            .buyer
            .reserve(self.conn(app_server), order)
            .await;
        (step, start, Instant::now())
    }

    /// A request whose answer the client waits for: at most [`RESERVE_DEADLINE`], then the
    /// app asks whether Redis is there, and if it is not, the fail mode takes over
    /// (fail-open writes its backorder while the request is still out).
    async fn client_request(&self, clock: ShopClock, copy: u32, app_server: u32) -> Sent {
        let start = Instant::now();
        let sending = self.send(clock, copy, app_server);
        tokio::pin!(sending);
        match tokio::time::timeout(RESERVE_DEADLINE, &mut sending).await {
            Ok((step, start, end)) => Sent {
                step,
                start,
                end,
                gave_up: None,
                unreachable: None,
                fallback: None,
            },
            Err(_) => {
                let gave_up = Instant::now();
                // Redis may still answer (a pause ends): wait for it, so the story and the
                // round trips are whole, while the app decides what the silence means.
                let ((step, _, end), (unreachable, fallback)) =
                    tokio::join!(sending, self.past_deadline(gave_up));
                Sent {
                    step,
                    start,
                    end,
                    gave_up: Some(gave_up),
                    unreachable,
                    fallback,
                }
            }
        }
    }

    /// A request the client stops waiting for (it resends instead): sent, answered, but
    /// the answer never reaches the client.
    async fn lost_request(&self, clock: ShopClock, app_server: u32) -> Sent {
        let (step, start, end) = self.send(clock, 1, app_server).await;
        Sent {
            step,
            start,
            end,
            gave_up: None,
            unreachable: None,
            fallback: None,
        }
    }

    /// The deadline passed at `gave_up` with no answer: is Redis there? If a fresh connection
    /// finds it, it is slow and nothing more is done (the reservation timed out, in doubt);
    /// if not, it is unreachable (why) and the fail mode does its part.
    async fn past_deadline(&self, gave_up: Instant) -> (Option<String>, Option<Fallback>) {
        match self.shop.probe.ask(gave_up).await {
            None => (None, None),
            Some(why) => (Some(why), self.fall_back().await),
        }
    }

    /// Reserve, resending the request if the seed says so. `Err` ends the story.
    async fn reserve(&self, tale: &mut Tale, facts: &mut Facts) -> Result<Claim, CheckoutEnd> {
        let clock = tale.clock;
        let used = if self.shopper.resends {
            self.reserve_twice(tale, facts).await
        } else {
            let sent = self
                .client_request(clock, 1, self.shopper.plan.app_server)
                .await;
            tale.reserve_step(Stage::Reserve, &sent);
            sent
        };
        facts.answered = Some(used.gave_up.unwrap_or(used.end));
        if let Err(e) = &used.step.answer {
            facts.note(e);
        }
        if used.gave_up.is_some() && used.unreachable.is_none() {
            // Redis was there, only slow: no refusal, no backorder. The request may still
            // be applied, so the order is in doubt (`unknown`), not failed for nothing.
            facts.error = Some(format!(
                "reserve: no answer within {} ms, yet Redis answered a fresh connection: \
                 slow, not down; the reservation may still be applied (in doubt)",
                RESERVE_DEADLINE.as_millis()
            ));
            facts.in_doubt = true;
            return Err(CheckoutEnd::Failed);
        }
        let unreachable = used.unreachable.or_else(|| match &used.step.answer {
            Err(e) if e.is_outage() => Some(e.short()),
            _ => None,
        });
        if let Some(why) = unreachable {
            return Err(self.fail_mode(tale, facts, used.fallback, &why).await);
        }
        facts.read_answer(used.step.answer)
    }

    /// The request whose reply is lost, and its resend after the seeded pause, both in the
    /// story: the resend is the one the client hears.
    async fn reserve_twice(&self, tale: &mut Tale, facts: &mut Facts) -> Sent {
        let plan = &self.shopper.plan;
        let clock = tale.clock;
        let app_servers = self.shop.fleet.len() as u32;
        // The load balancer sends the copy to the next app server.
        let other = (plan.app_server + 1) % app_servers.max(1);
        let first = self.lost_request(clock, plan.app_server);
        let second = async {
            tokio::time::sleep(self.shopper.resend_after).await;
            self.client_request(clock, 2, other).await
        };
        let (first, second) = tokio::join!(first, second);
        if let Err(e) = &first.step.answer {
            facts.note(e);
        }
        tale.reserve_step(Stage::Reserve, &first);
        tale.reserve_step(Stage::Retry, &second);
        if reserved_fresh(&first.step) && reserved_fresh(&second.step) {
            facts.duplicate_units = plan.qty;
        }
        // The lost reply's tally counts too: it is what the customer held at that moment.
        facts.customer_units = customer_units(&first.step);
        facts.from_record = [&first, &second]
            .iter()
            .any(|s| reserve_outcome(&s.step) == StepOutcome::FromRecord);
        second
    }

    /// What fail-open does while Redis is unreachable: a backorder row. Fail-closed does
    /// nothing here (it refuses the order).
    async fn fall_back(&self) -> Option<Fallback> {
        if self.shop.knobs.fail_mode == FailMode::Closed {
            return None;
        }
        let start = Instant::now();
        let plan = &self.shopper.plan;
        let mut conn = self.conn(plan.app_server);
        let (written, round_trips) = self
            .shop
            .ledger
            .record(
                &mut conn,
                &self.request_id(),
                self.shopper.customer,
                plan.qty,
                RowState::Backorder,
            )
            .await;
        let (outcome, error) = match written {
            Ok(_) => (StepOutcome::Recorded, None),
            Err(e) => (StepOutcome::Failed, Some(format!("backorder row: {e}"))),
        };
        Some(Fallback {
            outcome,
            start,
            end: Instant::now(),
            round_trips,
            error,
        })
    }

    /// Redis could not be reached (`why`): refuse (closed) or take a backorder (open).
    async fn fail_mode(
        &self,
        tale: &mut Tale,
        facts: &mut Facts,
        fallback: Option<Fallback>,
        why: &str,
    ) -> CheckoutEnd {
        let fallback = match fallback {
            Some(f) => Some(f),
            None => self.fall_back().await,
        };
        let Some(f) = fallback else {
            facts.error = Some(format!(
                "Redis is unreachable ({why}) and the shop fails closed: please try again"
            ));
            return CheckoutEnd::Refused;
        };
        tale.round_trips += f.round_trips;
        tale.push(Stage::Ledger, f.outcome, f.start, f.end);
        match f.error {
            None => {
                facts.error = Some(format!(
                    "Redis is unreachable ({why}) and the shop fails open: a backorder"
                ));
                CheckoutEnd::Backordered
            }
            Some(e) => {
                facts.error = Some(e);
                CheckoutEnd::Failed
            }
        }
    }

    /// The payment (or the walk away): a wait on the shop clock. `None` if the run stopped.
    async fn pay(&self, tale: &mut Tale) -> Option<()> {
        let start = Instant::now();
        let real = tale.clock.real(self.shopper.pay_ms);
        tokio::select! {
            biased;
            _ = self.stop.cancelled() => return None,
            _ = tokio::time::sleep(real) => {}
        }
        let outcome = match self.shopper.fate {
            Fate::Pay => StepOutcome::Paid,
            Fate::Abandon => StepOutcome::Abandoned,
            Fate::PayFail | Fate::Crash => StepOutcome::Declined,
        };
        tale.push(Stage::Pay, outcome, start, Instant::now());
        Some(())
    }

    /// Confirm in Redis, then write the order row.
    async fn confirm(&self, tale: &mut Tale, facts: &mut Facts, claim: &Claim) -> CheckoutEnd {
        let shop = &self.shop;
        let plan = &self.shopper.plan;
        let start = Instant::now();
        let step = shop
            .strategy
            .buyer
            .confirm(
                self.conn(plan.app_server),
                &shop.keys,
                claim,
                tale.clock.now(),
            )
            .await;
        tale.round_trips += step.round_trips;
        let (outcome, end) = match &step.answer {
            Ok(Settled::Confirmed) => (StepOutcome::Confirmed, None),
            Ok(Settled::Expired) => (StepOutcome::Expired, Some(CheckoutEnd::Expired)),
            Ok(Settled::Gone) => (StepOutcome::Gone, Some(CheckoutEnd::Expired)),
            Err(e) => {
                facts.note(e);
                facts.error = Some(format!("confirm: {}", e.short()));
                facts.in_doubt = e.in_doubt();
                (StepOutcome::Failed, Some(CheckoutEnd::Failed))
            }
        };
        tale.push(Stage::Confirm, outcome, start, Instant::now());
        if let Some(end) = end {
            if end == CheckoutEnd::Expired {
                facts.error = Some("paid after the hold had expired: refunded".into());
            }
            return end;
        }
        let start = Instant::now();
        let mut conn = self.conn(plan.app_server);
        let (written, round_trips) = shop
            .ledger
            .record(
                &mut conn,
                &self.request_id(),
                self.shopper.customer,
                plan.qty,
                RowState::Confirmed,
            )
            .await;
        tale.round_trips += round_trips;
        let outcome = match &written {
            Ok(_) => StepOutcome::Recorded,
            Err(_) => StepOutcome::Failed,
        };
        tale.push(Stage::Ledger, outcome, start, Instant::now());
        match written {
            Ok(_) => CheckoutEnd::Confirmed,
            Err(e) => {
                // Sold in Redis, in no ledger row: exactly the units a reconciliation finds.
                facts.error = Some(format!("order row: {e}"));
                CheckoutEnd::Failed
            }
        }
    }

    /// Give the claim back; the story ends as `end` unless the release fails.
    async fn release(
        &self,
        tale: &mut Tale,
        facts: &mut Facts,
        claim: &Claim,
        end: CheckoutEnd,
    ) -> CheckoutEnd {
        let shop = &self.shop;
        let start = Instant::now();
        let app_server = self.shopper.plan.app_server;
        let step = shop
            .strategy
            .buyer
            .release(self.conn(app_server), &shop.keys, claim)
            .await;
        tale.round_trips += step.round_trips;
        let outcome = match &step.answer {
            Ok(Returned::Released(after)) => {
                facts.available_after = Some(*after);
                StepOutcome::Released
            }
            Ok(Returned::Gone) => StepOutcome::Gone,
            Err(_) => StepOutcome::Failed,
        };
        tale.push(Stage::Release, outcome, start, Instant::now());
        match step.answer {
            Err(e) => {
                facts.note(&e);
                facts.error = Some(format!("release: {}", e.short()));
                facts.in_doubt = e.in_doubt();
                CheckoutEnd::Failed
            }
            Ok(_) => end,
        }
    }

    fn outcome(
        &self,
        arrived: Instant,
        tale: Tale,
        facts: Facts,
        end: CheckoutEnd,
    ) -> BuyerOutcome {
        let plan = &self.shopper.plan;
        let clock = tale.clock;
        let answered = facts.answered.unwrap_or(arrived);
        BuyerOutcome {
            buyer: plan.buyer,
            app_server: plan.app_server,
            qty: plan.qty,
            observed_stock: facts.observed,
            result: result_for(end, facts.in_doubt),
            error: facts.error,
            stock_after: facts.available_after,
            latency_us: micros(answered.saturating_duration_since(arrived)),
            start_us: clock.real_us(arrived),
            end_us: clock.real_us(Instant::now()),
            read_us: None,
            round_trips: tale.round_trips,
            retries: u32::from(self.shopper.resends),
            bucket: None,
            node: None,
            checkout: Some(CheckoutStory {
                customer: self.shopper.customer,
                request_id: self.request_id(),
                hold_id: facts.hold.as_ref().map(|h| h.id().to_string()),
                expires_at_shop_ms: facts.expires_at,
                fate: self.shopper.fate,
                retried: self.shopper.resends,
                from_record: facts.from_record,
                duplicate_units: facts.duplicate_units,
                customer_units: facts.customer_units,
                end,
                steps: tale.steps,
            }),
            cart: None,
            epoch: None,
        }
    }
}
