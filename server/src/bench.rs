//! `oversold bench`: one strategy under a closed-loop load, for throughput and latency.
//!
//! Unlike a race, the shelf holds more stock than will ever be asked for, so every order
//! does the full work, and a fixed number of workers each send their next order as soon
//! as the last one returns, the way `redis-benchmark -c N` does. Workers share a few
//! connections; on a shared Redis link their requests are pipelined.
//!
//! With `--pipeline P` each worker sends its next `P` orders in one request, as
//! `redis-benchmark -P P` does, and waits for all `P` replies before the next `P`: the
//! same commands, with the per-request costs (a queue, a timer, a future) paid once per `P`.
//! Only a strategy whose order is one command can (`lua`): see
//! [`Strategy::pipeline_refusal`].
//!
//! On a Redis Cluster the report says which node served how many orders: `lua` keeps
//! every order on the one node that owns the product's key, `sharded` spreads them over
//! the nodes that own its buckets. That is the hot-key lesson, measured.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use oversold_protocol::{LatencySummary, OutcomeResult};
use serde::Serialize;
use tokio::task::JoinSet;

use crate::backends::Backends;
use crate::engine::{Arena, OrderTerms};
use crate::run::RunError;
use crate::shelf::ShelfError;
use crate::strategy::{Attempt, Strategy};
use crate::summary::latency;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Orders in total.
    pub requests: u64,
    /// Orders in flight at once.
    pub concurrency: u32,
    /// Connections shared by the workers.
    pub connections: u32,
    /// Orders each worker sends per request (1: one at a time).
    pub pipeline: u32,
}

/// The figures `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Strategy measured.
    pub strategy: String,
    /// Orders placed.
    pub requests: u64,
    /// Workers.
    pub concurrency: u32,
    /// Connections.
    pub connections: u32,
    /// Orders per request, per worker.
    pub pipeline: u32,
    /// Orders that ended in an error.
    pub errors: u64,
    /// Orders refused (should be 0: the shelf is never empty).
    pub sold_out: u64,
    /// Workers that panicked (their orders are missing from the figures).
    pub panicked_workers: u32,
    /// Requests sent to the store, per order (each order's own commands).
    pub round_trips_per_order: f64,
    /// Requests the app servers' Redis connections sent, a pipeline counting once: with
    /// `--pipeline P`, about one per `P` orders.
    pub redis_requests: u64,
    /// Wall time, ms.
    pub duration_ms: f64,
    /// Orders per second.
    pub throughput_per_s: f64,
    /// Latency percentiles, µs.
    pub latency: LatencySummary,
    /// The Redis measured against (`host:port/db`, or `cluster host:port,...`).
    pub redis: String,
    /// On a Redis Cluster, the orders each node served, busiest first; empty otherwise.
    pub served_by: Vec<NodeShare>,
}

/// Orders one cluster node served.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NodeShare {
    /// `host:port`.
    pub node: String,
    /// Orders it answered.
    pub orders: u64,
}

/// Run the benchmark. `show_progress` draws a bar on stderr when it is a terminal.
///
/// The stock goes on the shelf and the connections open exactly as for a race
/// ([`Arena::set_up`]), and the shelf is cleared whatever happens after that, a worker's
/// panic included.
pub async fn bench(
    backends: &Backends,
    strategy: &'static Strategy,
    config: &BenchConfig,
    show_progress: bool,
) -> Result<BenchReport, RunError> {
    if let Some(why) = strategy.pipeline_refusal().filter(|_| config.pipeline > 1) {
        return Err(RunError::Setup(ShelfError::NotPipelinable(why)));
    }
    let run_id = format!("bench-{:08x}", rand::random::<u32>());
    // Enough stock that nobody is ever refused (capped at what a u32 counter can say).
    let stock = u32::try_from(config.requests.saturating_mul(2)).unwrap_or(u32::MAX);
    let arena =
        Arc::new(Arena::set_up(backends, strategy, &run_id, stock, config.connections).await?);
    let next = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));

    let started = Instant::now();
    let mut workers = JoinSet::new();
    for w in 0..config.concurrency {
        let (arena, next, done) = (arena.clone(), next.clone(), done.clone());
        let requests = config.requests;
        let share = (w, config.concurrency, config.pipeline);
        workers.spawn(worker(arena, next, done, share, requests));
    }
    let progress = (show_progress && std::io::stderr().is_terminal())
        .then(|| tokio::spawn(draw_progress(done.clone(), config.requests, started)));
    let mut total = Tally::default();
    let mut panicked = 0;
    while let Some(t) = workers.join_next().await {
        match t {
            Ok(t) => total.absorb(t),
            Err(e) => {
                panicked += 1;
                tracing::error!(error = %e, "a bench worker panicked");
            }
        }
    }
    let elapsed = started.elapsed();
    if let Some(p) = progress {
        p.abort();
        eprintln!();
    }
    let served_by = served_by(&arena, &total.by_bucket);
    let redis_requests = arena.redis_requests_sent();
    let arena = Arc::into_inner(arena).expect("every worker has ended");
    if let Err(e) = arena.finish(backends, &run_id).await {
        tracing::warn!(error = %e, "could not read back the bench stock");
    }
    let n = total.latencies.len() as u64;
    Ok(BenchReport {
        strategy: strategy.name().into(),
        requests: n,
        concurrency: config.concurrency,
        connections: config.connections,
        pipeline: config.pipeline,
        errors: total.errors,
        sold_out: total.sold_out,
        panicked_workers: panicked,
        round_trips_per_order: if n == 0 {
            0.0
        } else {
            total.round_trips as f64 / n as f64
        },
        redis_requests,
        duration_ms: elapsed.as_secs_f64() * 1e3,
        throughput_per_s: n as f64 / elapsed.as_secs_f64(),
        latency: latency(total.latencies),
        redis: backends.redis.display_addr(),
        served_by,
    })
}

#[derive(Default)]
struct Tally {
    latencies: Vec<u64>,
    round_trips: u64,
    sold_out: u64,
    errors: u64,
    /// Orders per stock bucket (`None`: the one counter). Counted by bucket in the hot
    /// loop, turned into nodes once at the end. A short list, not a map: a strategy has
    /// one counter or a few buckets, and hashing every order showed in the profile.
    by_bucket: Vec<(Option<u32>, u64)>,
}

impl Tally {
    /// Count one order that took `took`.
    fn record(&mut self, attempt: &Attempt, took: Duration) {
        self.latencies.push(took.as_micros() as u64);
        self.round_trips += u64::from(attempt.round_trips);
        self.served(attempt.bucket);
        match attempt.result {
            OutcomeResult::Reserved => {}
            OutcomeResult::SoldOut => self.sold_out += 1,
            OutcomeResult::Error | OutcomeResult::Unknown | OutcomeResult::GaveUp => {
                self.errors += 1
            }
        }
    }

    /// Count one order served from `bucket`.
    fn served(&mut self, bucket: Option<u32>) {
        match self.by_bucket.iter_mut().find(|(b, _)| *b == bucket) {
            Some((_, n)) => *n += 1,
            None => self.by_bucket.push((bucket, 1)),
        }
    }
}

impl Tally {
    /// Add another worker's tally to this one.
    fn absorb(&mut self, t: Tally) {
        self.latencies.extend(t.latencies);
        self.round_trips += t.round_trips;
        self.sold_out += t.sold_out;
        self.errors += t.errors;
        for (bucket, n) in t.by_bucket {
            match self.by_bucket.iter_mut().find(|(b, _)| *b == bucket) {
                Some((_, total)) => *total += n,
                None => self.by_bucket.push((bucket, n)),
            }
        }
    }
}

/// One closed-loop worker: it takes the next request numbers (`pipeline` of them at a time)
/// until all are taken, buys one unit per request on its own app server, and counts what it
/// saw.
async fn worker(
    arena: Arc<Arena>,
    next: Arc<AtomicU64>,
    done: Arc<AtomicU64>,
    (w, concurrency, pipeline): (u32, u32, u32),
    requests: u64,
) -> Tally {
    // Room for this worker's share of the latencies, so the hot loop never regrows it.
    let share = requests / u64::from(concurrency.max(1)) + u64::from(pipeline);
    let mut tally = Tally {
        latencies: Vec::with_capacity(usize::try_from(share).unwrap_or(0)),
        ..Tally::default()
    };
    let line = OrderTerms {
        qty: 1,
        race_window: Duration::ZERO,
        ticket: u64::from(w),
        by_hand: false,
    };
    let per_request = u64::from(pipeline.max(1));
    loop {
        let first = next.fetch_add(per_request, Ordering::Relaxed);
        if first >= requests {
            break;
        }
        let n = per_request.min(requests - first);
        let t = Instant::now();
        if n == 1 {
            let attempt = arena.buy(w, line).await;
            tally.record(&attempt, t.elapsed());
        } else {
            // `bench` refused a strategy without a batch before it started.
            let batch = arena
                .buy_batch(w, line, n as usize)
                .expect("checked at the start");
            let attempts = batch.await;
            // Every order in the batch waited for the whole batch, as in redis-benchmark -P.
            let took = t.elapsed();
            for attempt in &attempts {
                tally.record(attempt, took);
            }
        }
        done.fetch_add(n, Ordering::Relaxed);
    }
    tally
}

/// Orders per node, busiest first, from the orders per bucket (empty off a cluster).
fn served_by(arena: &Arena, by_bucket: &[(Option<u32>, u64)]) -> Vec<NodeShare> {
    let mut per_node: HashMap<String, u64> = HashMap::new();
    for (bucket, n) in by_bucket {
        if let Some(node) = arena.node_for(*bucket) {
            *per_node.entry(node).or_default() += n;
        }
    }
    let mut shares: Vec<NodeShare> = per_node
        .into_iter()
        .map(|(node, orders)| NodeShare { node, orders })
        .collect();
    shares.sort_by(|a, b| b.orders.cmp(&a.orders).then(a.node.cmp(&b.node)));
    shares
}

async fn draw_progress(done: Arc<AtomicU64>, total: u64, started: Instant) {
    const WIDTH: u64 = 30;
    loop {
        let d = done.load(Ordering::Relaxed).min(total);
        let filled = (d * WIDTH).checked_div(total).unwrap_or(WIDTH);
        let rate = d as f64 / started.elapsed().as_secs_f64().max(1e-9);
        let bar: String = (0..WIDTH)
            .map(|i| if i < filled { '#' } else { '.' })
            .collect();
        eprint!("\r[{bar}] {d}/{total} orders, {rate:.0}/s ");
        let _ = std::io::stderr().flush();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The table `oversold bench` prints.
pub fn table(r: &BenchReport) -> String {
    let mut out = figures(r);
    if r.served_by.is_empty() {
        out.push_str(&format!("  served by       {}\n", r.redis));
    }
    for share in &r.served_by {
        let percent = 100.0 * share.orders as f64 / r.requests.max(1) as f64;
        out.push_str(&format!(
            "  served by       {:>10} orders ({percent:.0}%) on {}\n",
            share.orders, share.node
        ));
    }
    out
}

fn figures(r: &BenchReport) -> String {
    format!(
        "{} x{}{} over {} connections: {} orders in {:.0} ms\n  throughput      {:>10.0} orders/s\n  latency p50     {:>10} µs\n  latency p95     {:>10} µs\n  latency p99     {:>10} µs\n  latency max     {:>10} µs\n  round trips     {:>10.2} per order\n  errors          {:>10}\n",
        r.strategy,
        r.concurrency,
        if r.pipeline > 1 {
            format!(" (pipelined {} per request)", r.pipeline)
        } else {
            String::new()
        },
        r.connections,
        r.requests,
        r.duration_ms,
        r.throughput_per_s,
        r.latency.p50_us,
        r.latency.p95_us,
        r.latency.p99_us,
        r.latency.max_us,
        r.round_trips_per_order,
        r.errors
    )
}
