//! Command-line arguments: `serve` (the default), `run`, and their flags.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use oversold_protocol::RunRequest;

/// Real concurrent buyers against a real Redis: watch check-then-write oversell, and the Lua fix.
#[derive(Debug, Parser)]
#[command(name = "oversold", version)]
pub struct Cli {
    /// What to do (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Redis to use. Without it: redis://127.0.0.1:6379 if it answers, else a private redis-server.
    /// (Its value is never printed: it may hold a password.)
    #[arg(long, env = "REDIS_URL", global = true, hide_env_values = true)]
    pub redis_url: Option<String>,
    /// PostgreSQL for the `postgres` strategy [default: the local server]. Unreachable means
    /// that strategy is listed as unavailable, nothing worse. (Never printed.)
    #[arg(long, env = "DATABASE_URL", global = true, hide_env_values = true)]
    pub database_url: Option<String>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the page, /ws and /healthz.
    Serve(ServeArgs),
    /// Run one race headless and print its summary.
    Run(RunArgs),
    /// Run the same race (same seed, same arrivals) through every available strategy.
    Compare(CompareArgs),
    /// Throughput and latency of one strategy under a closed-loop load, without the page.
    Bench(BenchArgs),
}

/// `oversold serve` flags.
#[derive(Debug, Args, Clone)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
    /// The built page (Trunk's output folder).
    #[arg(long, default_value = "dist")]
    pub assets: PathBuf,
    /// Most runs in flight at once across all clients.
    #[arg(long, default_value_t = crate::app::DEFAULT_MAX_RUNS)]
    pub max_runs: usize,
    /// Most WebSockets open at once; more get HTTP 503.
    #[arg(long, default_value_t = crate::app::DEFAULT_MAX_SOCKETS)]
    pub max_sockets: usize,
    /// Another origin whose pages may open the WebSocket, e.g. `http://127.0.0.1:8080` for
    /// `trunk serve`. Repeatable. Pages served by this server are always allowed; clients that
    /// send no Origin (not browsers) are too.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            addr: "127.0.0.1:3000".parse().expect("valid address"),
            assets: "dist".into(),
            max_runs: crate::app::DEFAULT_MAX_RUNS,
            max_sockets: crate::app::DEFAULT_MAX_SOCKETS,
            allow_origins: Vec::new(),
        }
    }
}

/// The knobs of a race, shared by `run` and `compare` (everything but the strategy).
#[derive(Debug, Args, Clone, Default)]
pub struct RaceArgs {
    /// Units in stock [default: 10].
    #[arg(long)]
    pub stock: Option<u32>,
    /// Number of buyers [default: 50].
    #[arg(long)]
    pub buyers: Option<u32>,
    /// Units per order [default: 1].
    #[arg(long)]
    pub qty: Option<u32>,
    /// Each buyer orders a seeded random 1..=MAX_QTY units instead of --qty.
    #[arg(long)]
    pub max_qty: Option<u32>,
    /// Separate connections the buyers are spread over [default: 8].
    #[arg(long)]
    pub app_servers: Option<u32>,
    /// Spread arrivals over this many ms [default: 0, all at once].
    #[arg(long)]
    pub arrival_spread_ms: Option<u32>,
    /// Simulated app work between a read and its write, ms [default: 0].
    #[arg(long)]
    pub race_window_ms: Option<u32>,
    /// Seed for quantities and arrivals [default: random, printed].
    #[arg(long)]
    pub seed: Option<u64>,
}

impl RaceArgs {
    /// The same request a page would send: with a strategy for `run`, without for `compare`.
    pub fn request(&self, strategy: Option<&str>) -> RunRequest {
        RunRequest {
            strategy: strategy.map(str::to_string),
            stock: self.stock,
            buyers: self.buyers,
            qty: self.qty,
            max_qty: self.max_qty,
            app_servers: self.app_servers,
            arrival_spread_ms: self.arrival_spread_ms,
            race_window_ms: self.race_window_ms,
            seed: self.seed,
        }
    }
}

/// `oversold run` flags.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Strategy (see `oversold compare` for the list).
    #[arg(long)]
    pub strategy: String,
    /// The race's knobs.
    #[command(flatten)]
    pub race: RaceArgs,
    /// Print exactly the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// After the table, print the first N commands of the Redis tape (the run's commands in
    /// the order Redis ran them, rebuilt from its replies) and its caption. Not with --json.
    #[arg(long, value_name = "N", conflicts_with = "json")]
    pub tape: Option<usize>,
}

/// `oversold compare` flags.
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// The race's knobs; every strategy gets the same ones, seed included.
    #[command(flatten)]
    pub race: RaceArgs,
    /// Print a JSON array of summaries, one per strategy.
    #[arg(long)]
    pub json: bool,
}

/// `oversold bench` flags.
#[derive(Debug, Args, Clone)]
pub struct BenchArgs {
    /// Strategy to measure.
    #[arg(long)]
    pub strategy: String,
    /// Orders to place in total.
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub requests: u64,
    /// Orders in flight at once (closed loop: each worker sends its next order when the last returns).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub concurrency: u32,
    /// Connections the workers share (Redis requests are pipelined on each).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub connections: u32,
    /// Print one JSON object instead of the progress bar and table.
    #[arg(long)]
    pub json: bool,
}
