//! Running one `cart` or `warehouses` race: several counters (a SKU's, or a warehouse's),
//! orders that touch several of them, and a ledger per counter at the end.
//!
//! # Layout
//! - this file: [`run`]: set up the shelves and the app servers' connections, release the
//!   buyers behind one gate (each at its seeded arrival), collect their outcomes, read
//!   every counter back, tally, and clean up.
//! - [`crowd`]: each buyer's cart, or its preferred warehouse and fallback order (seeded).
//! - [`report`]: the CLI's tables.
//! - [`tally`]: the summary: partial carts, stranded units, compensations, fallbacks, and
//!   the per-shelf ledger, which must add up.
//!
//! A run on a Redis Cluster whose strategy's keys share no hash tag fails with the
//! cluster's `CROSSSLOT` refusal as its error: that is the lesson, not a crash.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{
    BuyerOutcome, CartLine, CartStory, Knobs, LineEnd, OutcomeResult, RunConfig, Scenario,
};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::gate::StartGate;
use crate::run::{Event, EventSink, RunError, RunReport, tell};
use crate::shelf::ShelfError;
use crate::store::shelves::{self, ShelfKeys, ShelfKind, Tagging};
use crate::store::{RedisConn, scripts};
use crate::strategy::cart::{Bought, CartStrategy, Order};

pub mod crowd;
pub mod report;
pub mod tally;

use crowd::Shopper;

/// The longest one order may take, whatever its strategy: every request has its own
/// response timeout, and a saga sends a handful; past this the buyer's answer is `unknown`.
const BUYER_DEADLINE: Duration = Duration::from_secs(30);

/// A run's shelves: their names, stocks, keys and (on a cluster) serving nodes.
pub struct Shelves {
    /// SKUs or warehouses.
    pub kind: ShelfKind,
    /// Name and stock of each, in order.
    pub specs: Vec<(&'static str, u32)>,
    /// Their keys.
    pub keys: Arc<ShelfKeys>,
    /// On a cluster, the node serving each.
    pub nodes: Vec<Option<String>>,
}

/// What a multi-key run is made of, before anything touches Redis.
pub struct Layout {
    /// SKUs or warehouses.
    pub kind: ShelfKind,
    /// Name and stock of each shelf.
    pub specs: Vec<(&'static str, u32)>,
    /// Every buyer's order.
    pub crowd: Vec<Shopper>,
    /// The shelves' keys.
    pub keys: ShelfKeys,
}

/// The shelves and the crowd of a multi-key run, or why `config` is not one.
pub fn layout(config: &RunConfig, run_id: &str, tagging: Tagging) -> Result<Layout, RunError> {
    let race = &config.race;
    let (kind, specs, crowd) = match race.knobs {
        Knobs::Cart(c) => (
            ShelfKind::Sku,
            oversold_protocol::cart::catalogue(c.skus, race.stock),
            crowd::carts(race, c),
        ),
        Knobs::Warehouses(w) => (
            ShelfKind::Warehouse,
            oversold_protocol::cart::warehouses(w.warehouses, race.stock),
            crowd::warehouse_orders(race, w),
        ),
        Knobs::Race
        | Knobs::Checkout(_)
        | Knobs::BusyScript
        | Knobs::Durability
        | Knobs::Eviction(_)
        | Knobs::Failover => {
            return Err(RunError::WrongScenario {
                strategy: config.strategy.clone(),
                expected: Scenario::Cart,
                got: race.scenario(),
            });
        }
    };
    let names: Vec<&str> = specs.iter().map(|s| s.0).collect();
    let keys = ShelfKeys::new(run_id, kind, &names, tagging);
    Ok(Layout {
        kind,
        specs,
        crowd,
        keys,
    })
}

/// Run one multi-key race to its end (or cancellation). `config` must be validated and
/// its scenario the strategy's.
pub async fn run(
    backends: &Backends,
    strategy: &'static CartStrategy,
    config: &RunConfig,
    run_id: &str,
    sink: Option<EventSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    let Layout {
        kind,
        specs,
        crowd,
        keys,
    } = layout(config, run_id, strategy.tagging)?;
    let (mut admin, fleet, shelves) =
        open_shelves(backends, strategy, config, run_id, (kind, specs, keys)).await?;
    let split = config.race.warehouses().is_some_and(|w| w.split);
    let race = Race {
        strategy,
        fleet: &fleet,
        shelves: &shelves,
        split,
        race_window: Duration::from_millis(u64::from(config.race.race_window_ms)),
    };
    let Raced {
        outcomes,
        lost,
        cross_slot,
    } = race.run(crowd, sink, cancel).await;
    let redis_requests = fleet.iter().map(RedisConn::requests_sent).sum();
    let read = read_back(&mut admin, &shelves.keys).await;
    if let Err(e) = shelves::remove_run(&mut admin, &shelves.keys).await {
        tracing::warn!(run_id, error = %e, "could not delete the run's shelves; they expire on their own");
    }
    if let Some(refused) = cross_slot {
        return Err(RunError::Refused(refused.why()));
    }
    if let Some(why) = lost {
        return Err(RunError::StoreLost {
            why,
            ran: outcomes.len(),
            buyers: config.race.buyers,
        });
    }
    let finals = read.map_err(RunError::ReadBack)?;
    let untagged_on_single = strategy.tagging == Tagging::Untagged && !backends.redis.is_cluster();
    Ok(RunReport {
        run_id: run_id.to_string(),
        summary: tally::summarize(config, &outcomes, &shelves, &finals, untagged_on_single),
        outcomes,
        redis_requests,
    })
}

/// The run's admin connection, its app servers' connections and its stocked shelves (with,
/// on a cluster, the node serving each). A set-up that fails removes what it had put.
async fn open_shelves(
    backends: &Backends,
    strategy: &'static CartStrategy,
    config: &RunConfig,
    run_id: &str,
    (kind, specs, keys): (ShelfKind, Vec<(&'static str, u32)>, ShelfKeys),
) -> Result<(RedisConn, Vec<RedisConn>, Shelves), RunError> {
    let mut admin = backends
        .redis
        .connect_named(&format!("oversold:{run_id}:admin"))
        .await
        .map_err(|e| RunError::Setup(e.into()))?;
    let keys = Arc::new(keys);
    let stocks: Vec<u32> = specs.iter().map(|s| s.1).collect();
    let fleet = match set_up(
        backends, strategy, run_id, &mut admin, &keys, &stocks, config,
    )
    .await
    {
        Ok(fleet) => fleet,
        Err(e) => {
            let _ = shelves::remove_run(&mut admin, &keys).await;
            return Err(RunError::Setup(e));
        }
    };
    let shelves = Shelves {
        kind,
        nodes: shelves::serving_nodes(&admin, &keys),
        specs,
        keys,
    };
    Ok((admin, fleet, shelves))
}

/// Shelves stocked, scripts cached, app servers connected.
async fn set_up(
    backends: &Backends,
    strategy: &CartStrategy,
    run_id: &str,
    admin: &mut RedisConn,
    keys: &ShelfKeys,
    stocks: &[u32],
    config: &RunConfig,
) -> Result<Vec<RedisConn>, ShelfError> {
    shelves::init(admin, keys, stocks).await?;
    for name in strategy.about.scripts.iter() {
        if let Some(file) = scripts::by_name(name) {
            scripts::preload(admin, file).await?;
        }
    }
    Ok(backends
        .redis
        .connect_fleet(run_id, config.race.app_servers)
        .await?)
}

/// Every counter's final value; a vanished key is an error, never a zero.
async fn read_back(admin: &mut RedisConn, keys: &ShelfKeys) -> Result<Vec<i64>, ShelfError> {
    let read = shelves::read_back(admin, keys).await?;
    read.into_iter()
        .zip(keys.counters())
        .map(|(v, key)| v.ok_or_else(|| ShelfError::Vanished(key.clone())))
        .collect()
}

/// The cluster's `CROSSSLOT` refusals, found by each buyer's error's cause: the run's error.
struct CrossSlot {
    /// Carts refused.
    carts: usize,
    /// The first refusal's words, as Redis said them.
    first: String,
}

impl CrossSlot {
    /// The run's error message (it names `CROSSSLOT`: the page and the tests look for it).
    fn why(&self) -> String {
        format!(
            "the Redis Cluster refused {} cart(s) with CROSSSLOT: a script's keys must share one \
             slot, and these keys share no hash tag ({}). The fix: one tag for the cart's \
             keys ({{run-ID}}, as cart_script does), at the cost of putting them all on one node",
            self.carts, self.first
        )
    }
}

/// What a race came to: every outcome, why it stopped early if Redis was lost, and the
/// cluster's CROSSSLOT refusals if there were any.
struct Raced {
    outcomes: Vec<BuyerOutcome>,
    lost: Option<String>,
    cross_slot: Option<CrossSlot>,
}

/// What a buyer's error says about the whole run, beyond its own outcome.
#[derive(Debug, Clone, Copy)]
struct Trouble {
    /// Redis itself was unreachable.
    outage: bool,
    /// A Redis Cluster refused the order with `CROSSSLOT`.
    cross_slot: bool,
}

/// The part of a run between set-up and read-back.
struct Race<'a> {
    strategy: &'static CartStrategy,
    fleet: &'a [RedisConn],
    shelves: &'a Shelves,
    split: bool,
    race_window: Duration,
}

impl Race<'_> {
    /// Release every buyer at its arrival; stop releasing once Redis is lost. The
    /// outcomes, why the run stopped early if it did, and the CROSSSLOT refusals.
    async fn run(
        &self,
        crowd: Vec<Shopper>,
        sink: Option<EventSink>,
        cancel: CancellationToken,
    ) -> Raced {
        let (gate, turn) = StartGate::new();
        let stop = cancel.child_token();
        let mut buyers = JoinSet::new();
        for shopper in crowd {
            let conn = self.fleet[(shopper.plan.app_server as usize) % self.fleet.len()].clone();
            let order = Order {
                keys: self.shelves.keys.clone(),
                buyer: shopper.plan.buyer,
                lines: shopper.lines,
                split: self.split,
                race_window: self.race_window,
            };
            let (turn, stop) = (turn.clone(), stop.clone());
            let buyer = self.strategy.buyer;
            let (kind, nodes) = (self.shelves.kind, self.shelves.nodes.clone());
            let plan = shopper.plan;
            buyers.spawn(async move {
                let opened = turn.arrive(plan.arrival, &stop).await?;
                let start = Instant::now();
                let bought = match tokio::time::timeout(
                    BUYER_DEADLINE,
                    buyer.buy(conn, order.clone()),
                )
                .await
                {
                    Ok(bought) => bought,
                    Err(_) => late(&order),
                };
                Some(outcome(&plan, opened, start, bought, (kind, &nodes)))
            });
        }
        gate.open().await;
        let mut outcomes = Vec::new();
        let mut lost = None;
        let mut cross_slot: Option<CrossSlot> = None;
        while let Some(joined) = buyers.join_next().await {
            let Ok(Some((o, trouble))) = joined else {
                continue;
            };
            if trouble.outage && lost.is_none() && self.fleet.iter().all(RedisConn::is_broken) {
                lost = o.error.clone();
                stop.cancel();
            }
            if trouble.cross_slot {
                let refused = cross_slot.get_or_insert_with(|| CrossSlot {
                    carts: 0,
                    first: o.error.clone().unwrap_or_default(),
                });
                refused.carts += 1;
            }
            tell(&sink, Event::Outcome(o.clone()));
            outcomes.push(o);
        }
        Raced {
            outcomes,
            lost,
            cross_slot,
        }
    }
}

/// An order that ran past [`BUYER_DEADLINE`]: whatever it sent is in doubt.
fn late(order: &Order) -> Bought {
    let mut bought = Bought::start(order);
    bought.result = OutcomeResult::Unknown;
    bought.error = Some(format!("no answer within {} s", BUYER_DEADLINE.as_secs()));
    bought
}

/// A buyer's outcome from its order's lines, and what its error says about the run.
fn outcome(
    plan: &crate::plan::BuyerPlan,
    opened: Instant,
    start: Instant,
    bought: Bought,
    (kind, nodes): (ShelfKind, &[Option<String>]),
) -> (BuyerOutcome, Trouble) {
    let end = Instant::now();
    let us = |t: Instant| t.saturating_duration_since(opened).as_micros() as u64;
    let node_of = |shelf: u32| nodes.get(shelf as usize).cloned().flatten();
    let lines: Vec<CartLine> = bought
        .lines
        .iter()
        .map(|l| CartLine {
            shelf: l.shelf,
            qty: l.qty,
            taken: l.taken,
            observed: l.observed,
            end: l.end,
            node: node_of(l.shelf),
        })
        .collect();
    // A warehouse order asks every warehouse for the whole quantity; a cart sums its lines.
    let qty = match kind {
        ShelfKind::Warehouse => plan.qty,
        ShelfKind::Sku => bought.lines.iter().map(|l| l.qty).sum(),
    };
    let reserved = bought.result == OutcomeResult::Reserved;
    // Served (wholly or partly) by a warehouse other than the preferred, listed first.
    let fallback = kind == ShelfKind::Warehouse
        && reserved
        && bought.lines.iter().skip(1).any(|l| l.taken > 0);
    let partial = !reserved && lines.iter().any(|l| l.end == LineEnd::Stranded);
    let trouble = Trouble {
        outage: bought.outage,
        cross_slot: bought.cross_slot,
    };
    let o = BuyerOutcome {
        buyer: plan.buyer,
        app_server: plan.app_server,
        qty,
        observed_stock: lines.first().and_then(|l| l.observed),
        result: bought.result,
        error: bought.error,
        stock_after: None,
        latency_us: end.duration_since(start).as_micros() as u64,
        start_us: us(start),
        end_us: us(end),
        read_us: None,
        round_trips: bought.round_trips,
        retries: 0,
        bucket: None,
        node: lines
            .iter()
            .find(|l| l.taken > 0)
            .or(lines.first())
            .and_then(|l| l.node.clone()),
        checkout: None,
        cart: Some(Box::new(CartStory {
            lines,
            partial,
            compensations: bought.compensations,
            fallback,
            doomed_hold_us: bought.doomed_hold.map(|d| d.as_micros() as u64),
        })),
        epoch: None,
    };
    (o, trouble)
}
