//! Running one `eviction` sale: buyers on a `redis-server` the run starts for itself with a
//! low `maxmemory` and the request's eviction policy, and a page cache that fills that
//! memory in the quiet spell between two waves of buyers.
//!
//! # Layout
//! - this file: [`run`]: start the run's own Redis (`maxmemory-policy` as asked), stock it,
//!   then cap its memory a little above what it uses ([`HEADROOM_BYTES`]); release the first
//!   wave, wait out the quiet spell while the page cache writes ([`CACHE_ENTRIES`] entries
//!   of [`ENTRY_BYTES`]), release the second wave; read the counter and `evicted_keys`
//!   back; tally.
//! - [`report`]: the CLI's table and scoreboard.
//!
//! Why the counter is evicted every time under an LRU policy, and not by luck: Redis keeps
//! each key's last access to the second, and evicts, among the keys it samples, the one
//! idle longest. The page cache starts writing [`CACHE_AFTER_LULL`] into the quiet spell,
//! so the counter, last touched by the first wave, is idle at least a second longer than
//! any cache entry; the cache writes four times the headroom, a hundred evictions or so,
//! each sampling five of a few dozen keys, so the counter is sampled (and then evicted)
//! long before the writes end. The second wave starts once they have.
//!
//! The run's Redis is never the shared one: a low `maxmemory` there would evict other
//! people's keys. It is stopped when the run ends (and dies with the process).

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{
    BuyerOutcome, Epoch, EvictionPolicy, EvictionTally, Knobs, OutcomeResult, RunConfig, Scenario,
};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::gate::StartGate;
use crate::plan::{self, BuyerPlan, CallAnswer};
use crate::private_redis::{ExtraConfig, PrivateRedis};
use crate::run::{Event, EventSink, RunError, RunReport, tell};
use crate::shelf::ShelfError;
use crate::store::eviction::{self, EvictionKeys};
use crate::store::{RedisConn, Store, StoreError, scripts, stock};
use crate::strategy::eviction::{EvictionStrategy, Reserve};

pub mod report;

/// Memory the run's Redis may use above what it holds once stocked: room for the first
/// wave, and for about 30 cache entries.
pub const HEADROOM_BYTES: u64 = 2 * 1024 * 1024;
/// One page-cache entry's value.
pub const ENTRY_BYTES: usize = 64 * 1024;
/// Entries the page cache writes: four times the headroom.
pub const CACHE_ENTRIES: u32 = 128;
/// The page cache's last entry, reserved sparse in one short command: twice the headroom,
/// so memory ends well past `maxmemory` unless the policy evicts.
pub const SLAB_BYTES: usize = 2 * HEADROOM_BYTES as usize;
/// The quiet spell between the waves.
pub const LULL: Duration = Duration::from_millis(2_000);
/// When, into the quiet spell, the page cache starts writing: past one tick of Redis's
/// one-second LRU clock after the first wave's last touch.
pub const CACHE_AFTER_LULL: Duration = Duration::from_millis(1_200);
/// The longest one buyer may take; past it, its answer is `unknown`.
const BUYER_DEADLINE: Duration = Duration::from_secs(10);

/// When the first wave ends and the quiet spell starts: a tenth into the arrivals.
pub fn lull_at(config: &RunConfig) -> Duration {
    Duration::from_millis(u64::from(config.race.arrival_spread_ms / 10))
}

/// A buyer's arrival in this sale: the plan's, or, for the second wave, the plan's plus the
/// quiet spell. The crowd (quantities, app servers, order) is the seed's, as in every run.
pub fn arrival(config: &RunConfig, planned: Duration) -> Duration {
    if planned < lull_at(config) {
        planned
    } else {
        planned + LULL
    }
}

/// Run one `eviction` sale to its end (or cancellation). `config` must be validated and be
/// an `eviction` config. `_backends` is not used: the run brings its own Redis.
pub async fn run(
    _backends: &Backends,
    strategy: &'static EvictionStrategy,
    config: &RunConfig,
    run_id: &str,
    sink: Option<EventSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    let Knobs::Eviction(knobs) = config.race.knobs else {
        return Err(RunError::WrongScenario {
            strategy: config.strategy.clone(),
            expected: Scenario::Eviction,
            got: config.race.scenario(),
        });
    };
    let redis = start_own_redis(knobs.policy).await?;
    let store = Store::open(&redis.url()).map_err(|e| RunError::Setup(e.into()))?;
    let keys = EvictionKeys::new(run_id);
    let (fleet, cache, maxmemory) = set_up(&store, strategy, config, run_id, &keys)
        .await
        .map_err(RunError::Setup)?;
    let fleet = Arc::new(fleet);
    let sale = Sale {
        config,
        keys: &keys,
        fleet: &fleet,
        reserve: strategy.reserve,
    };
    let (outcomes, filled) = sale.run(cache, sink, cancel).await;
    let redis_requests = fleet.iter().map(RedisConn::requests_sent).sum();
    let read = read_back(&store, &keys, CACHE_ENTRIES + 1).await;
    drop(redis);
    let read = read.map_err(RunError::ReadBack)?;
    // A missing counter is 0 in stock to reserve.lua; the tally says it was missing.
    let mut summary = crate::summary::summarize(config, &outcomes, read.counter.unwrap_or(0));
    if read.counter.is_none() {
        // Not a lost update: no write overwrote another, Redis deleted the whole key. The
        // units it held are the tally's `units_unsold`, and the page says "evicted".
        summary.lost_updates = 0;
    }
    let tally = tally(
        config,
        &outcomes,
        summary.units_sold,
        knobs.policy,
        &read,
        &filled,
        maxmemory,
    );
    summary.false_sold_out = false_sold_out(config, &outcomes, summary.units_sold);
    summary.eviction = Some(Box::new(tally));
    Ok(RunReport {
        run_id: run_id.to_string(),
        summary,
        outcomes,
        redis_requests,
    })
}

/// The run's own `redis-server`: loopback, a free port, the policy asked for. No memory cap
/// yet: set-up sets it once the stock is on the shelf.
async fn start_own_redis(policy: EvictionPolicy) -> Result<PrivateRedis, RunError> {
    let extra = ExtraConfig {
        args: vec![
            "--maxmemory-policy".into(),
            policy.as_str().into(),
            // Redis's default, said out loud: each eviction picks among five sampled keys.
            "--maxmemory-samples".into(),
            "5".into(),
        ],
        ..ExtraConfig::default()
    };
    tokio::task::spawn_blocking(move || PrivateRedis::start_with(extra))
        .await
        .map_err(|e| RunError::Setup(ShelfError::OwnRedis(e.to_string())))?
        .map_err(|e| RunError::Setup(ShelfError::OwnRedis(e.to_string())))
}

/// Stock on the shelf, the script cached, every connection open; then `maxmemory` set to
/// what Redis uses now plus [`HEADROOM_BYTES`]. The buyers', the page cache's connection,
/// and the cap.
async fn set_up(
    store: &Store,
    strategy: &EvictionStrategy,
    config: &RunConfig,
    run_id: &str,
    keys: &EvictionKeys,
) -> Result<(Vec<RedisConn>, RedisConn, u64), ShelfError> {
    let mut admin = store
        .connect_named(&format!("oversold:{run_id}:admin"))
        .await?;
    stock::init(&mut admin, keys.run(), config.race.stock).await?;
    let script = match strategy.reserve {
        Reserve::Lenient => &scripts::RESERVE,
        Reserve::Strict => &scripts::RESERVE_STRICT,
    };
    scripts::preload(&mut admin, script).await?;
    let fleet = store.connect_fleet(run_id, config.race.app_servers).await?;
    let cache = store
        .connect_named(&format!("oversold:{run_id}:page-cache"))
        .await?;
    let maxmemory = eviction::used_memory(&mut admin).await? + HEADROOM_BYTES;
    eviction::set_maxmemory(&mut admin, maxmemory).await?;
    Ok((fleet, cache, maxmemory))
}

/// What the run's Redis holds at the end.
struct ReadBack {
    /// The stock counter; `None` when it was evicted.
    counter: Option<i64>,
    /// `evicted_keys` from `INFO stats` (the server is the run's, so all of them are).
    evicted_keys: u64,
}

/// The counter as Redis holds it and `evicted_keys`; then the run's keys are deleted (its
/// Redis stops anyway).
async fn read_back(
    store: &Store,
    keys: &EvictionKeys,
    entries: u32,
) -> Result<ReadBack, ShelfError> {
    let mut conn = store.connect().await?;
    let counter = stock::get(&mut conn, keys.run()).await?;
    let evicted_keys = eviction::evicted_keys(&mut conn).await?;
    if let Err(e) = eviction::remove_run(&mut conn, keys, entries).await {
        tracing::debug!(error = %e, "could not delete the run's keys; its Redis stops anyway");
    }
    Ok(ReadBack {
        counter,
        evicted_keys,
    })
}

/// The part of a run between set-up and read-back.
struct Sale<'a> {
    config: &'a RunConfig,
    keys: &'a EvictionKeys,
    fleet: &'a Arc<Vec<RedisConn>>,
    reserve: Reserve,
}

/// What the page cache managed to write.
#[derive(Debug, Default, Clone, Copy)]
struct Filled {
    /// Entries Redis took.
    written: u32,
    /// Entries refused with `OOM`.
    refused: u32,
}

impl Sale<'_> {
    /// Release both waves at their arrivals and the page cache in the quiet spell; the
    /// outcomes and what the cache wrote.
    ///
    /// The quiet spell is long enough that the waves and the cache never overlap, and the
    /// order is also enforced, so a slow machine cannot blur it: the cache starts writing
    /// only once every first-wave buyer has its answer, and the second wave sends nothing
    /// until the cache is done and has looked for the counter. So every answer of the second
    /// wave is known, as it streams, to come from the stocked counter or from the missing
    /// key, and carries its [`Epoch`] for the tape.
    async fn run(
        &self,
        mut cache: RedisConn,
        sink: Option<EventSink>,
        cancel: CancellationToken,
    ) -> (Vec<BuyerOutcome>, Filled) {
        let (gate, turn) = StartGate::new();
        let plans = plan::plan(&self.config.race);
        let lull = lull_at(self.config);
        let first_wave = plans.iter().filter(|p| p.arrival < lull).count();
        let (first_left, mut first_done) = watch::channel(first_wave);
        let (evicted_tx, evicted) = watch::channel(None::<bool>);
        let stocked = Epoch {
            n: 0,
            began_at: Some(i64::from(self.config.race.stock)),
            evicted: false,
        };
        let mut buyers = JoinSet::new();
        for plan in plans {
            let (turn, stop) = (turn.clone(), cancel.clone());
            let fleet = self.fleet.clone();
            let key = self.keys.run().stock_key().to_string();
            let (at, reserve) = (arrival(self.config, plan.arrival), self.reserve);
            let first = plan.arrival < lull;
            let (first_left, mut evicted) = (first_left.clone(), evicted.clone());
            buyers.spawn(async move {
                let opened = turn.arrive(at, &stop).await;
                let life = if first {
                    stocked
                } else {
                    // Err: the cache task is gone without a word (cancelled): nothing evicted.
                    let seen = tokio::select! {
                        seen = evicted.wait_for(Option::is_some) => seen.ok().and_then(|v| *v),
                        () = stop.cancelled() => None,
                    };
                    if seen == Some(true) { GONE } else { stocked }
                };
                let outcome = match opened {
                    Some(opened) => Some(buy(&plan, opened, &fleet, &key, reserve).await),
                    None => None,
                };
                if first {
                    first_left.send_modify(|n| *n = n.saturating_sub(1));
                }
                outcome.map(|o| BuyerOutcome {
                    epoch: Some(life),
                    ..o
                })
            });
        }
        drop(first_left);
        let at = lull + CACHE_AFTER_LULL;
        let keys = self.keys.clone();
        let (cache_turn, cache_stop) = (turn.clone(), cancel.clone());
        let filler = tokio::spawn(async move {
            cache_turn.arrive(at, &cache_stop).await?;
            // Err: every first-wave task has ended (the sender is gone with them).
            let _ = first_done.wait_for(|left| *left == 0).await;
            let filled = fill(&mut cache, &keys).await;
            let gone = matches!(stock::get(&mut cache, keys.run()).await, Ok(None));
            let _ = evicted_tx.send(Some(gone));
            Some(filled)
        });
        drop(turn);
        gate.open().await;
        let mut outcomes = Vec::new();
        while let Some(joined) = buyers.join_next().await {
            if let Ok(Some(o)) = joined {
                tell(&sink, Event::Outcome(o.clone()));
                outcomes.push(o);
            }
        }
        let filled = filler.await.ok().flatten().unwrap_or_default();
        (outcomes, filled)
    }
}

/// The life of the counter after an eviction: the key is gone, and `reserve.lua` reads a
/// missing key as 0 (`reserve_strict.lua` refuses it with `STOCK_MISSING`).
const GONE: Epoch = Epoch {
    n: 1,
    began_at: None,
    evicted: true,
};

/// The page cache: [`CACHE_ENTRIES`] writes of [`ENTRY_BYTES`], one after another, then one
/// entry of [`SLAB_BYTES`] reserved sparse; an `OOM` refusal is counted and the next entry
/// tried, any other failure ends the writing.
///
/// Why the sparse entry: a 64 KiB `SET` that would not fit is refused while its value sits
/// in Redis's input buffer, so under `noeviction` the entries alone stop a little *below*
/// `maxmemory`, and a buyer's few-byte `DECRBY` would still pass. Redis checks memory before
/// each command, so one short command that allocates megabytes is how a real Redis ends up
/// past its limit; from then on every write that may grow memory is refused.
async fn fill(conn: &mut RedisConn, keys: &EvictionKeys) -> Filled {
    let mut filled = Filled::default();
    for i in 0..=CACHE_ENTRIES {
        let written = if i < CACHE_ENTRIES {
            eviction::write_cache_entry(conn, keys, i, ENTRY_BYTES).await
        } else {
            eviction::reserve_cache_entry(conn, keys, i, SLAB_BYTES).await
        };
        match written {
            Ok(()) => filled.written += 1,
            Err(e) if eviction::is_oom(&e) => filled.refused += 1,
            Err(e) => {
                tracing::debug!(error = %e, "the page cache stopped writing");
                break;
            }
        }
    }
    filled
}

/// One buyer: its strategy's script on its app server's connection.
async fn buy(
    plan: &BuyerPlan,
    opened: Instant,
    fleet: &[RedisConn],
    key: &str,
    reserve: Reserve,
) -> BuyerOutcome {
    let start = Instant::now();
    let mut conn = fleet[plan.app_server as usize % fleet.len()].clone();
    let call = async {
        match reserve {
            Reserve::Lenient => stock::reserve(&mut conn, key, plan.qty).await,
            Reserve::Strict => eviction::reserve_strict(&mut conn, key, plan.qty).await,
        }
    };
    let (result, observed, after, error, round_trips) =
        match tokio::time::timeout(BUYER_DEADLINE, call).await {
            Ok(Ok(c)) if c.reply.reserved => (
                OutcomeResult::Reserved,
                Some(c.reply.before),
                Some(c.reply.after),
                None,
                c.round_trips,
            ),
            Ok(Ok(c)) => (
                OutcomeResult::SoldOut,
                Some(c.reply.before),
                None,
                None,
                c.round_trips,
            ),
            Ok(Err(f)) => {
                let result = if f.error.in_doubt() {
                    OutcomeResult::Unknown
                } else {
                    OutcomeResult::Error
                };
                (result, None, None, Some(why(&f.error)), f.round_trips)
            }
            Err(_) => (
                OutcomeResult::Unknown,
                None,
                None,
                Some(format!("no answer within {} s", BUYER_DEADLINE.as_secs())),
                1,
            ),
        };
    plan.outcome(
        CallAnswer {
            result,
            observed,
            after,
            error,
            round_trips,
        },
        opened,
        start,
        Instant::now(),
    )
}

/// A refusal in Redis's (or the script's) own words: `OOM command not allowed ...`,
/// `STOCK_MISSING ...`. The lesson is in them.
fn why(e: &StoreError) -> String {
    match (e.reply_code(), e.reply_detail()) {
        (Some(code), Some(detail)) if eviction::is_oom(e) || eviction::is_stock_missing(e) => {
            format!("{code} {detail}")
        }
        _ => e.short(),
    }
}

/// Buyers told "sold out" while the orders left at least their quantity unsold. Units never
/// come back in this sale, so what the orders left at the end was there at every refusal.
fn false_sold_out(config: &RunConfig, outcomes: &[BuyerOutcome], units_sold: u64) -> u32 {
    let unsold = u64::from(config.race.stock).saturating_sub(units_sold);
    outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::SoldOut && u64::from(o.qty) <= unsold)
        .count() as u32
}

/// The memory pressure's tally.
fn tally(
    config: &RunConfig,
    outcomes: &[BuyerOutcome],
    units_sold: u64,
    policy: EvictionPolicy,
    read: &ReadBack,
    filled: &Filled,
    maxmemory_bytes: u64,
) -> EvictionTally {
    let refused = |code: &str| {
        outcomes
            .iter()
            .filter(|o| {
                o.result == OutcomeResult::Error
                    && o.error.as_deref().is_some_and(|e| e.starts_with(code))
            })
            .count() as u32
    };
    EvictionTally {
        policy,
        stock_key_evicted: read.counter.is_none(),
        stock_missing_refusals: refused("STOCK_MISSING"),
        oom_refusals: refused("OOM"),
        evicted_keys: read.evicted_keys,
        units_unsold: u64::from(config.race.stock).saturating_sub(units_sold),
        filler_writes: filled.written,
        filler_refused: filled.refused,
        maxmemory_bytes,
        filler_at_ms: (lull_at(config) + CACHE_AFTER_LULL).as_millis() as u32,
        lull_ms: LULL.as_millis() as u32,
    }
}
