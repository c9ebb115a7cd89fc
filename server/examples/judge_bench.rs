//! The workshop judge's benchmark: the time from Check to verdict for every exercise (its
//! starter, which fails, and its reference, which passes), and the checks a minute one
//! server sustains, on a sandbox this benchmark starts. The target is a verdict in under
//! 3 s on a laptop; the figures print beside it.
//!
//! ```text
//! cargo run --release -p oversold --example judge_bench [-- --rounds 5]
//! ```

use std::time::{Duration, Instant};

use oversold::workshop::exercises;
use oversold::workshop::sandbox::{ClusterSandbox, Sandbox};
use oversold::workshop::service::{judge_in, judge_on_cluster};

/// The promise: a verdict in under this.
const TARGET: Duration = Duration::from_secs(3);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rounds: usize = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let sandbox = Sandbox::start().await?;
    // The cluster exercise's sandbox, as a server keeps it: each check on a fresh cluster,
    // the next one starting while a check runs.
    let mut cluster: Option<ClusterSandbox> = None;
    println!(
        "rounds {rounds} · target: a verdict in under {} s",
        TARGET.as_secs_f64()
    );
    println!(
        "{:<14} {:<9} {:>10} {:>10} {:>8}  verdict",
        "exercise", "script", "p50 ms", "max ms", "vs 3 s"
    );
    let (mut checks, started) = (0u32, Instant::now());
    let mut worst = Duration::ZERO;
    for e in exercises::all() {
        for (which, source) in [("starter", e.starter), ("reference", e.reference)] {
            let mut times = Vec::with_capacity(rounds);
            let mut verdict = String::new();
            for _ in 0..rounds {
                let t = Instant::now();
                let v = if e.rules.on_cluster() {
                    if cluster.is_none() {
                        cluster = Some(ClusterSandbox::start().await?);
                    }
                    let c = cluster.as_ref().expect("started above");
                    judge_on_cluster(c, e, source).await
                } else {
                    judge_in(&sandbox, e, source).await
                }
                .map_err(|e| anyhow::anyhow!(e.message))?;
                times.push(t.elapsed());
                verdict = v.verdict.as_str().to_string();
                checks += 1;
            }
            times.sort();
            let (p50, max) = (times[times.len() / 2], times[times.len() - 1]);
            worst = worst.max(max);
            println!(
                "{:<14} {:<9} {:>10.0} {:>10.0} {:>7.2}x  {verdict}",
                e.id,
                which,
                p50.as_secs_f64() * 1e3,
                max.as_secs_f64() * 1e3,
                max.as_secs_f64() / TARGET.as_secs_f64()
            );
        }
    }
    let per_minute = f64::from(checks) / started.elapsed().as_secs_f64() * 60.0;
    println!("checks a minute, one after another on one sandbox: {per_minute:.0}");
    let verdict = if worst <= TARGET { "within" } else { "OVER" };
    println!(
        "slowest verdict {:.0} ms: {verdict} the {} s target ({:.2}x)",
        worst.as_secs_f64() * 1e3,
        TARGET.as_secs(),
        worst.as_secs_f64() / TARGET.as_secs_f64()
    );
    Ok(())
}
