//! The `oversold` binary: parse flags, pick a Redis, then serve or run once.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use oversold::backends::Backends;
use oversold::bench::BenchConfig;
use oversold::cli::{BenchArgs, Cli, Command, CompareArgs, RunArgs, ServeArgs};
use oversold::pg::{self, PgDb};
use oversold::run::Keep;
use oversold::state::AppState;
use oversold::{budget, headless, health, redis_source, strategy};
use tokio::sync::watch;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| "oversold=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::PrivateRedis) => return private_redis().await,
        Some(Command::PrivateCluster) => return private_cluster().await,
        // Never the Redis the flags name: a script is judged on a sandbox of its own.
        Some(Command::Exercise(what)) => {
            std::process::exit(oversold::workshop::cli::run(what).await)
        }
        _ => {}
    }
    let (source, backends) = stores(&cli).await?;
    match cli.command {
        None => serve(source, backends, ServeArgs::default()).await,
        Some(Command::Serve(args)) => serve(source, backends, args).await,
        Some(Command::Run(args)) => run(&backends, args).await,
        Some(Command::Compare(args)) => compare(&backends, args).await,
        Some(Command::Bench(args)) => bench(&backends, args).await,
        // Handled above, before any store is opened.
        Some(Command::PrivateRedis | Command::PrivateCluster | Command::Exercise(_)) => Ok(()),
    }
}

/// The Redis to use (given, local, or a private one) and, when the command can use it,
/// PostgreSQL.
async fn stores(cli: &Cli) -> anyhow::Result<(redis_source::RedisSource, Backends)> {
    let source = redis_source::resolve(cli.wanted_redis()).await?;
    tracing::info!(redis = %source.store.display_addr(), via = source.origin, "using Redis");
    // Only look for PostgreSQL when the command could use it: an unreachable one costs a
    // connect timeout, which a `run --strategy lua` should not pay.
    // By the strategy's own backend, not its name: any strategy that buys in PostgreSQL.
    let runs_in_postgres =
        |name: &str| strategy::find(name).is_some_and(strategy::Strategy::uses_postgres);
    let wants_postgres = match &cli.command {
        // A checkout settles its orders in PostgreSQL when there is one.
        Some(Command::Run(a)) => {
            let named = a.race.strategy_for_run(a.strategy.as_deref());
            named.is_ok_and(|s| runs_in_postgres(&s)) || a.race.is_checkout()
        }
        Some(Command::Bench(a)) => runs_in_postgres(&a.strategy),
        _ => true,
    };
    // A public demo never reaches for "whatever PostgreSQL runs on this machine".
    let public = matches!(&cli.command, Some(Command::Serve(a)) if a.public);
    let mut backends = if !wants_postgres {
        Backends::redis_only(source.store.clone(), "not needed by this command")
    } else if public && cli.database_url.is_none() {
        Backends::redis_only(
            source.store.clone(),
            "off in --public mode unless --database-url or DATABASE_URL is given",
        )
    } else {
        Backends {
            redis: source.store.clone(),
            postgres: postgres(cli.database_url.as_deref()).await,
            owns_redis: false,
            lock_masters: Default::default(),
        }
    };
    // Only a Redis this process started may be paused for a checkout's outage.
    backends.owns_redis = source.private.is_some();
    Ok((source, backends))
}

/// `oversold run`: one race, as a table (with its tape) or as JSON; optionally saved.
async fn run(backends: &Backends, args: RunArgs) -> anyhow::Result<()> {
    let strategy = args
        .race
        .strategy_for_run(args.strategy.as_deref())
        .map_err(anyhow::Error::msg)?;
    let request = args.race.request(Some(&strategy));
    if args.race.is_checkout() && !args.json {
        println!(
            "ledger: {}",
            oversold::checkout::ledger::info(backends).note
        );
    }
    // Only a saved run and the tape read the outcomes; without them a race keeps none.
    let keep = if args.outcomes.is_some() || args.tape.is_some() {
        Keep::Outcomes
    } else {
        Keep::Summary
    };
    let (config, report) = headless::run_report(backends, &request, keep).await?;
    if let Some(file) = &args.outcomes {
        let saved = headless::saved_run(&config, &report)?;
        std::fs::write(file, serde_json::to_string(&saved)?)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.summary)?);
    } else {
        print!("{}", headless::table(&config, &report.summary));
        if let Some(n) = args.tape {
            print!("{}", headless::tape(&config, &report.outcomes, n));
        }
    }
    Ok(())
}

/// `oversold compare`: every available strategy, one seed, a scoreboard.
async fn compare(backends: &Backends, args: CompareArgs) -> anyhow::Result<()> {
    if args.race.is_checkout() && !args.json {
        println!(
            "ledger: {}",
            oversold::checkout::ledger::info(backends).note
        );
    }
    let (results, skipped) = headless::compare(backends, &args.race.request(None)).await?;
    if args.json {
        let summaries: Vec<_> = results.iter().map(|(_, s)| s).collect();
        println!("{}", serde_json::to_string_pretty(&summaries)?);
    } else {
        print!("{}", headless::scoreboard(&results));
        for (name, why) in skipped {
            println!("  ({name} skipped: {why})");
        }
    }
    Ok(())
}

/// `oversold bench`: one strategy under a closed-loop load.
async fn bench(backends: &Backends, args: BenchArgs) -> anyhow::Result<()> {
    let strategy = headless::resolve_race(backends, &args.strategy)?;
    let config = BenchConfig {
        requests: args.requests,
        concurrency: args.concurrency,
        // More connections than workers would leave some idle.
        connections: args.connections.min(args.concurrency),
        pipeline: args.pipeline,
    };
    let report = oversold::bench::bench(backends, strategy, &config, !args.json).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", oversold::bench::table(&report));
    }
    Ok(())
}

/// Connect to PostgreSQL if we can; if not, keep the reason for the page.
async fn postgres(url: Option<&str>) -> Result<PgDb, String> {
    let url = url.unwrap_or(pg::DEFAULT_URL);
    match PgDb::open(url).await {
        Ok(db) => {
            tracing::info!(
                postgres = db.display_addr(),
                "using PostgreSQL for the postgres strategy and the checkout ledger"
            );
            Ok(db)
        }
        Err(e) => {
            tracing::info!(reason = %e, "PostgreSQL unavailable: the postgres strategy is off");
            Err(format!("{e} (set --database-url or DATABASE_URL)"))
        }
    }
}

async fn serve(
    source: redis_source::RedisSource,
    backends: Backends,
    args: ServeArgs,
) -> anyhow::Result<()> {
    // A server that starts its own Redis can start one per room sale too: chaos buttons
    // act on those only, never on the Redis everyone shares.
    let mut rooms = oversold::rooms::Rooms::default();
    if source.private.is_some() {
        rooms = rooms.with_own_sale_redis();
    }
    let first = health::check_once(&source.store).await;
    if let Some(why) = &first.reason {
        tracing::warn!(
            reason = why,
            "Redis does not answer yet; runs will fail until it does"
        );
    }
    let (health_tx, health_rx) = watch::channel(first);
    let limits = args.limits();
    let plan = budget::startup_plan(limits.max_runs, limits.max_sockets);
    let pg_pool = match &backends.postgres {
        Ok(db) => budget::startup_pg_pool(db, limits.pg_max_connections).await,
        Err(_) => limits.pg_max_connections,
    };
    if let Some(name) = &args.client_ip_header {
        tracing::info!(header = %name, "client addresses come from this header: only safe behind a proxy that sets it");
    }
    if args.public && args.public_origins.is_empty() {
        tracing::warn!(
            "--public without --public-origin: any page whose Origin names the request's own \
             Host may open the WebSocket, which a page using DNS rebinding can do; give the \
             site's address with --public-origin"
        );
    }
    let state = Arc::new(
        AppState::new(backends, health_rx, args.assets.clone(), plan.max_runs)
            .with_max_sockets(plan.max_sockets)
            .with_client_caps(limits.per_client, args.client_ip_header.clone())
            .with_connection_budget(plan.connection_budget)
            .with_pg_max_connections(pg_pool)
            .with_allowed_origins(args.allow_origins.clone())
            .with_public_origins(args.public_origins.clone())
            .with_max_buyers(limits.max_buyers)
            .with_rooms(
                rooms
                    .with_seats_per_address(2 * limits.per_client.sockets as u64)
                    .with_max_participants(limits.room_people),
            ),
    );
    if !args.assets.join("index.html").exists() {
        tracing::warn!(assets = %args.assets.display(), "page not built: run scripts/frontend.sh");
    }
    let monitor = tokio::spawn(health::monitor(
        source.store.clone(),
        health_tx,
        state.shutdown.clone(),
    ));

    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    let addr = listener.local_addr()?;
    // The one line scripts and tests read to find the port.
    println!("oversold listening on http://{addr}");
    oversold::serve::serve(listener, state.clone(), wait_for_signal()).await?;
    let _ = monitor.await;
    // Sales end on shutdown and send their summary; give them (bounded) time to.
    state.rooms.tracker.close();
    let _ = tokio::time::timeout(Duration::from_secs(10), state.rooms.tracker.wait()).await;
    drop(source); // stops a private redis-server, if we started one
    Ok(())
}

/// `oversold private-redis`: one private redis-server, up until a signal, then stopped.
async fn private_redis() -> anyhow::Result<()> {
    let redis = tokio::task::spawn_blocking(oversold::private_redis::PrivateRedis::start)
        .await
        .context("starting redis-server")??;
    println!("{}", redis.url());
    wait_for_signal().await;
    drop(redis);
    Ok(())
}

/// `oversold private-cluster`: a private three-master cluster, up until a signal.
async fn private_cluster() -> anyhow::Result<()> {
    let cluster = tokio::task::spawn_blocking(oversold::private_cluster::PrivateCluster::start)
        .await
        .context("starting a Redis Cluster")??;
    println!("{}", cluster.spec());
    wait_for_signal().await;
    drop(cluster);
    Ok(())
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("can listen for SIGTERM");
        tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
