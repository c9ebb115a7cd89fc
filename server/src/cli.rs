//! Command-line arguments: `serve` (the default), `run`, and their flags.

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::http::HeaderName;
use clap::{Args, Parser, Subcommand};
use oversold_protocol::{EvictionPolicy, FailMode, RunRequest, Scenario};

use crate::client::ClientCaps;

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
    /// A Redis Cluster to use instead: any of its nodes, HOST:PORT[,HOST:PORT...] (the client
    /// discovers the rest). (Its value is never printed.)
    #[arg(
        long,
        env = "REDIS_CLUSTER",
        global = true,
        hide_env_values = true,
        value_name = "HOST:PORT,...",
        value_delimiter = ',',
        conflicts_with = "redis_url"
    )]
    pub redis_cluster: Vec<String>,
    /// Start a private three-master Redis Cluster for this command (free loopback ports, no
    /// persistence, stopped on exit) and use it.
    #[arg(long, global = true, conflicts_with_all = ["redis_url", "redis_cluster"])]
    pub private_cluster: bool,
    /// Start a private redis-server for this command (a free loopback port, no persistence,
    /// stopped on exit) even when one answers on 6379: a Redis of its own, which a checkout's
    /// outage may pause.
    #[arg(long, global = true, conflicts_with_all = ["redis_url", "redis_cluster", "private_cluster"])]
    pub private_redis: bool,
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
    /// Start a private redis-server exactly as the server does when no Redis answers (a free
    /// loopback port, no persistence), print its URL, and stop it on Ctrl-C or SIGTERM.
    /// `scripts/bench.sh` measures against one.
    PrivateRedis,
    /// Start a private three-master Redis Cluster the same way (free loopback ports, no
    /// persistence), print its nodes as HOST:PORT,HOST:PORT,HOST:PORT (what --redis-cluster
    /// takes), and stop it on Ctrl-C or SIGTERM.
    PrivateCluster,
    /// The workshop's exercises: list them, show one, or judge a script. A script is judged
    /// on a sandbox redis-server this command starts (never the Redis named by --redis-url).
    #[command(subcommand)]
    Exercise(crate::workshop::cli::ExerciseCommand),
}

/// `oversold serve` flags. The caps are `Option`s so that a flag given explicitly wins over
/// the profile (`--public` or not); [`ServeArgs::limits`] resolves them.
#[derive(Debug, Args, Clone)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
    /// The built page (Trunk's output folder).
    #[arg(long, default_value = "dist")]
    pub assets: PathBuf,
    /// Profile for an internet-facing demo: --max-runs 4, --max-sockets 256,
    /// --max-sockets-per-address 8, --max-runs-per-address 1, --pg-max-connections 10, and the
    /// postgres strategy only with an explicit --database-url/DATABASE_URL (never the local
    /// default). Flags given explicitly override these.
    #[arg(long)]
    pub public: bool,
    /// Most runs in flight at once across all clients [default: 8; 4 with --public]. At most
    /// half of them (rounded up) may be comparisons.
    #[arg(long)]
    pub max_runs: Option<usize>,
    /// Most WebSockets open at once; more get HTTP 503 [default: 512; 256 with --public].
    #[arg(long)]
    pub max_sockets: Option<usize>,
    /// Most WebSockets one client address may have open; more get HTTP 429 [default: 32, a
    /// room behind one conference NAT; 8 with --public].
    #[arg(long)]
    pub max_sockets_per_address: Option<usize>,
    /// Most runs one client address may have in flight; more get `busy` [default: 2; 1 with
    /// --public].
    #[arg(long)]
    pub max_runs_per_address: Option<usize>,
    /// Take the client address from this request header (e.g. X-Forwarded-For, where the
    /// right-most entry is used, or X-Real-IP) instead of the TCP peer. Only safe behind a
    /// reverse proxy that overwrites (or appends to) it: otherwise any client can claim any
    /// address and dodge the per-address caps.
    #[arg(long, value_name = "NAME")]
    pub client_ip_header: Option<HeaderName>,
    /// Most PostgreSQL connections the server opens at once; a postgres run needs its app
    /// servers + 1 [default: 20; 10 with --public]. Lowered at start-up if it is not below
    /// the database's own max_connections.
    #[arg(long)]
    pub pg_max_connections: Option<usize>,
    /// Another origin whose pages may open the WebSocket, e.g. `http://127.0.0.1:8080` for
    /// `trunk serve`. Repeatable. Pages served by this server are always allowed; clients that
    /// send no Origin (not browsers) are too.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// The origin this site is served at, e.g. `https://lab.example`. Repeatable. When given,
    /// only these (and `--allow-origin`'s) pages may open the WebSocket, whatever `Host` a
    /// request names: a page on another domain pointed at this server's address (DNS
    /// rebinding) sends an `Origin` equal to its own `Host`, which the default same-host check
    /// would accept. A public site (`--public`) should always give it.
    #[arg(long = "public-origin", value_name = "ORIGIN")]
    pub public_origins: Vec<String>,
    /// Most buyers in one race, up to 1000000 (a flash sale) [default: 10000]. For a lab on
    /// a machine of its own: a million-buyer race holds a core and tens of MB while it runs.
    /// Other scenarios keep 10000. Not with --public: a public site keeps the default.
    #[arg(
        long,
        value_parser = clap::value_parser!(u32).range(
            i64::from(oversold_protocol::limits::MAX_BUYERS)
                ..=i64::from(oversold_protocol::limits::MAX_BUYERS_AT_SCALE)
        ),
        conflicts_with = "public"
    )]
    pub max_buyers: Option<u32>,
    /// Most people in one room (phones, spectators and presenters, counted across every
    /// process sharing the Redis) [default: 1000]. Each is a socket on some process and a seat
    /// in Redis; a conference hall spread over several processes may need more.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_ROOM_PEOPLE)))]
    pub max_room_people: Option<u32>,
}

/// The most `--max-room-people` may say: ten times the default, a hall of phones.
pub const MAX_ROOM_PEOPLE: u32 = 10 * crate::rooms::DEFAULT_MAX_PARTICIPANTS;

impl Cli {
    /// Which Redis the flags ask for.
    pub fn wanted_redis(&self) -> crate::redis_source::Wanted<'_> {
        use crate::redis_source::Wanted;
        if self.private_cluster {
            Wanted::PrivateCluster
        } else if self.private_redis {
            Wanted::PrivateRedis
        } else if !self.redis_cluster.is_empty() {
            Wanted::Cluster(&self.redis_cluster)
        } else if let Some(url) = &self.redis_url {
            Wanted::Url(url)
        } else {
            Wanted::Default
        }
    }
}

impl Default for ServeArgs {
    /// `oversold` with no subcommand: serve with every default.
    fn default() -> Self {
        ServeArgs {
            addr: "127.0.0.1:3000".parse().expect("valid address"),
            assets: "dist".into(),
            public: false,
            max_runs: None,
            max_sockets: None,
            max_sockets_per_address: None,
            max_runs_per_address: None,
            client_ip_header: None,
            pg_max_connections: None,
            allow_origins: Vec::new(),
            public_origins: Vec::new(),
            max_buyers: None,
            max_room_people: None,
        }
    }
}

/// The caps `serve` runs with, once the profile and the explicit flags are resolved
/// (before they are fitted under the open-file limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeLimits {
    /// `--max-runs`.
    pub max_runs: usize,
    /// `--max-sockets`.
    pub max_sockets: usize,
    /// `--max-sockets-per-address` and `--max-runs-per-address`.
    pub per_client: ClientCaps,
    /// `--pg-max-connections`.
    pub pg_max_connections: usize,
    /// True with `--public`: PostgreSQL only when its URL was given explicitly.
    pub postgres_needs_explicit_url: bool,
    /// `--max-buyers`: most buyers in one race.
    pub max_buyers: u32,
    /// `--max-room-people`: most people in one room.
    pub room_people: u32,
}

impl ServeLimits {
    /// A lab on a laptop or a conference room's Wi-Fi.
    pub fn lab() -> Self {
        ServeLimits {
            max_runs: crate::state::DEFAULT_MAX_RUNS,
            max_sockets: crate::state::DEFAULT_MAX_SOCKETS,
            per_client: ClientCaps::default(),
            pg_max_connections: crate::budget::DEFAULT_PG_MAX_CONNECTIONS,
            postgres_needs_explicit_url: false,
            max_buyers: oversold_protocol::limits::MAX_BUYERS,
            room_people: crate::rooms::DEFAULT_MAX_PARTICIPANTS,
        }
    }

    /// `--public`: anyone on the internet may open the page. Half the runs, so the box
    /// stays responsive; one run per address, so one visitor (or a script) takes one slot.
    pub fn public() -> Self {
        ServeLimits {
            max_runs: 4,
            max_sockets: 256,
            per_client: ClientCaps {
                sockets: 8,
                runs: 1,
            },
            pg_max_connections: 10,
            postgres_needs_explicit_url: true,
            max_buyers: oversold_protocol::limits::MAX_BUYERS,
            room_people: crate::rooms::DEFAULT_MAX_PARTICIPANTS,
        }
    }
}

impl ServeArgs {
    /// The profile's caps, with every explicitly given flag in place of its default.
    pub fn limits(&self) -> ServeLimits {
        let profile = if self.public {
            ServeLimits::public()
        } else {
            ServeLimits::lab()
        };
        ServeLimits {
            max_runs: self.max_runs.unwrap_or(profile.max_runs),
            max_sockets: self.max_sockets.unwrap_or(profile.max_sockets),
            per_client: ClientCaps {
                sockets: self
                    .max_sockets_per_address
                    .unwrap_or(profile.per_client.sockets),
                runs: self.max_runs_per_address.unwrap_or(profile.per_client.runs),
            },
            pg_max_connections: self
                .pg_max_connections
                .unwrap_or(profile.pg_max_connections),
            postgres_needs_explicit_url: profile.postgres_needs_explicit_url,
            // clap keeps it off `--public` and within the protocol's range.
            max_buyers: self.max_buyers.unwrap_or(profile.max_buyers),
            room_people: self.max_room_people.unwrap_or(profile.room_people),
        }
    }
}

/// The knobs of a race, shared by `run` and `compare` (everything but the strategy).
#[derive(Debug, Args, Clone, Default)]
pub struct RaceArgs {
    /// Start from a preset's knobs (`article`, `throughput`); any flag given beside it wins.
    #[arg(long, value_name = "NAME", value_parser = preset_name)]
    pub preset: Option<String>,
    /// Units in stock [default: 10].
    #[arg(long)]
    pub stock: Option<u32>,
    /// Number of buyers, up to 1000000 in a race (10000 in other scenarios) [default: 50].
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
    /// The checkout knobs (with `--scenario checkout`).
    #[command(flatten)]
    pub checkout: CheckoutArgs,
    /// The cart and warehouse knobs (with `--scenario cart` or `warehouses`).
    #[command(flatten)]
    pub cart: CartArgs,
    /// The eviction knob (with `--scenario eviction`).
    #[command(flatten)]
    pub eviction: EvictionArgs,
}

/// The `eviction` scenario's knob, named as in the WebSocket config; refused outside it.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Eviction (with --scenario eviction)")]
pub struct EvictionArgs {
    /// The run's own Redis's maxmemory-policy [default: allkeys-lru].
    #[arg(long, value_name = "allkeys-lru|volatile-lru|noeviction")]
    pub policy: Option<EvictionPolicy>,
}

/// The `cart` and `warehouses` scenarios' knobs, named as in the WebSocket config. Each is
/// refused outside its scenario.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Carts and warehouses (with --scenario cart or warehouses)")]
pub struct CartArgs {
    /// SKUs in the catalogue, 1 to 8 (phone, case, charger, ...) [default: 3].
    #[arg(long)]
    pub skus: Option<u32>,
    /// Most lines per cart, 1 to --skus [default: --skus].
    #[arg(long)]
    pub max_lines: Option<u32>,
    /// Warehouses the stock is split over, 2 to 8 [default: 3].
    #[arg(long)]
    pub warehouses: Option<u32>,
    /// Let an order no single warehouse can fill be split over several.
    #[arg(long)]
    pub split: bool,
}

/// The checkout scenario's knobs: the same names as the WebSocket config, in kebab-case.
/// Each is refused without `--scenario checkout`.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Checkout (with --scenario checkout)")]
pub struct CheckoutArgs {
    /// `race` (the decrement, and nothing after), `checkout` (reserve, pay, confirm or
    /// release, crashes, resends, holds that expire, a ledger), `cart` (orders over several
    /// SKUs), `warehouses` (one product in several warehouses), `busy_script` (one long
    /// script mid-sale), `durability` (a Redis killed mid-sale and restarted from disk),
    /// `eviction` (a Redis out of memory mid-sale) or `failover` (the primary killed while its
    /// replica lags, the replica promoted) [default: race].
    #[arg(
        long,
        value_name = "race|checkout|cart|warehouses|busy_script|durability|eviction|failover"
    )]
    pub scenario: Option<Scenario>,
    /// How long a hold lasts, shop ms [default: 300000, five minutes].
    #[arg(long)]
    pub hold_ttl_ms: Option<u32>,
    /// Shop ms per real ms [default: 20: a five-minute hold lasts fifteen real seconds].
    #[arg(long)]
    pub time_scale: Option<u32>,
    /// Typical payment time, shop ms; each buyer's is seeded around it [default: 60000].
    #[arg(long)]
    pub pay_ms: Option<u32>,
    /// Share of buyers who walk away after reserving, 0.0 to 1.0 [default: 0.2].
    #[arg(long)]
    pub abandon_fraction: Option<f64>,
    /// Share of buyers whose payment is declined [default: 0.1].
    #[arg(long)]
    pub pay_fail_fraction: Option<f64>,
    /// Share of buyers whose app server dies after reserving [default: 0.1].
    #[arg(long)]
    pub crash_fraction: Option<f64>,
    /// Share of buyers whose client resends its reserve request [default: 0.2].
    #[arg(long)]
    pub retry_fraction: Option<f64>,
    /// Distinct customers; fewer than buyers makes bots [default: half the buyers].
    #[arg(long)]
    pub customers: Option<u32>,
    /// Most units one customer may hold or have bought [default: 1].
    #[arg(long)]
    pub per_customer_limit: Option<u32>,
    /// While Redis is unreachable: `closed` refuses orders, `open` takes backorders
    /// [default: closed].
    #[arg(long, value_name = "closed|open")]
    pub fail_mode: Option<FailMode>,
    /// End when the last buyer is done; holds still active count as held.
    #[arg(long)]
    pub no_wait_expiry: bool,
    /// When to pause our own Redis, shop ms after the gate [default: 0].
    #[arg(long)]
    pub outage_at_ms: Option<u32>,
    /// Pause our own Redis this long, shop ms (CLIENT PAUSE; refused unless this process
    /// started its Redis itself) [default: 0, no outage].
    #[arg(long)]
    pub outage_ms: Option<u32>,
}

impl RaceArgs {
    /// The same request a page would send: with a strategy for `run`, without for `compare`.
    /// A `--preset` fills in what the flags leave out (its strategy too, for `run`).
    pub fn request(&self, strategy: Option<&str>) -> RunRequest {
        let preset = self.preset_request();
        RunRequest {
            strategy: strategy.map(str::to_string),
            stock: self.stock.or(preset.stock),
            buyers: self.buyers.or(preset.buyers),
            qty: self.qty.or(preset.qty),
            max_qty: self.max_qty.or(preset.max_qty),
            app_servers: self.app_servers.or(preset.app_servers),
            arrival_spread_ms: self.arrival_spread_ms.or(preset.arrival_spread_ms),
            race_window_ms: self.race_window_ms.or(preset.race_window_ms),
            seed: self.seed,
            scenario: self.checkout.scenario,
            hold_ttl_ms: self.checkout.hold_ttl_ms,
            time_scale: self.checkout.time_scale,
            pay_ms: self.checkout.pay_ms,
            abandon_fraction: self.checkout.abandon_fraction,
            pay_fail_fraction: self.checkout.pay_fail_fraction,
            crash_fraction: self.checkout.crash_fraction,
            retry_fraction: self.checkout.retry_fraction,
            customers: self.checkout.customers,
            per_customer_limit: self.checkout.per_customer_limit,
            fail_mode: self.checkout.fail_mode,
            no_wait_expiry: self.checkout.no_wait_expiry.then_some(true),
            outage_at_ms: self.checkout.outage_at_ms,
            outage_ms: self.checkout.outage_ms,
            skus: self.cart.skus,
            max_lines: self.cart.max_lines,
            warehouses: self.cart.warehouses,
            split: self.cart.split.then_some(true),
            policy: self.eviction.policy,
        }
    }

    /// The preset's own request (empty without `--preset`).
    fn preset_request(&self) -> RunRequest {
        self.preset
            .as_deref()
            .and_then(crate::presets::find)
            .map(|p| p.request)
            .unwrap_or_default()
    }

    /// The strategy `run` races: `--strategy`, else the preset's. `None` when neither names
    /// one (a comparison's preset), with the sentence that says what to do instead.
    pub fn strategy_for_run(&self, flag: Option<&str>) -> Result<String, String> {
        if let Some(name) = flag {
            return Ok(name.to_string());
        }
        match (&self.preset, self.preset_request().strategy) {
            (_, Some(name)) => Ok(name),
            (Some(preset), None) => Err(format!(
                "the preset {preset} races every strategy: run `oversold compare --preset \
                 {preset}`, or name one with --strategy"
            )),
            (None, None) => Err("name a strategy with --strategy, or a --preset".to_string()),
        }
    }

    /// True for `--scenario checkout`.
    pub fn is_checkout(&self) -> bool {
        self.checkout.scenario == Some(Scenario::Checkout)
    }
}

/// `oversold run` flags.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Strategy (see `oversold compare` for the list); a `--preset` may name it instead.
    #[arg(long)]
    pub strategy: Option<String>,
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
    /// Also write the whole run (knobs, every outcome, the summary, the strategy's own words)
    /// to FILE as JSON, for the page to load later without racing.
    #[arg(long, value_name = "FILE")]
    pub outcomes: Option<std::path::PathBuf>,
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
    /// Orders each worker sends in one request (a pipeline), as `redis-benchmark -P N` does;
    /// only for a strategy whose order is one command (`lua`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub pipeline: u32,
    /// Print one JSON object instead of the progress bar and table.
    #[arg(long)]
    pub json: bool,
}

/// `--preset`'s parser: a name from the presets' table, or an error that lists them.
fn preset_name(name: &str) -> Result<String, String> {
    match crate::presets::find(name) {
        Some(p) => Ok(p.name),
        None => Err(format!(
            "no preset is called {name:?}; the presets are: {}",
            crate::presets::names().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve_args(flags: &[&str]) -> ServeArgs {
        let argv = ["oversold", "serve"].iter().chain(flags);
        match Cli::parse_from(argv).command {
            Some(Command::Serve(args)) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_flags_is_the_lab_profile() {
        assert_eq!(serve_args(&[]).limits(), ServeLimits::lab());
        assert_eq!(ServeArgs::default().limits(), ServeLimits::lab());
    }

    #[test]
    fn public_tightens_the_caps_and_explicit_flags_still_win() {
        assert_eq!(serve_args(&["--public"]).limits(), ServeLimits::public());
        let limits =
            serve_args(&["--public", "--max-runs", "6", "--max-runs-per-address", "2"]).limits();
        assert_eq!(limits.max_runs, 6);
        assert_eq!(limits.per_client.runs, 2);
        assert_eq!(limits.per_client.sockets, 8, "the rest stays the profile's");
        assert!(limits.postgres_needs_explicit_url);
    }

    #[test]
    fn more_buyers_only_when_asked_never_past_a_million_never_in_public() {
        assert_eq!(
            serve_args(&["--max-buyers", "1000000"]).limits().max_buyers,
            1_000_000
        );
        let argv = |flags: &[&str]| {
            let argv: Vec<&str> = ["oversold", "serve"].iter().chain(flags).copied().collect();
            Cli::try_parse_from(argv)
        };
        assert!(argv(&["--max-buyers", "1000001"]).is_err());
        assert!(
            argv(&["--max-buyers", "9999"]).is_err(),
            "never below today's cap"
        );
        assert!(argv(&["--public", "--max-buyers", "20000"]).is_err());
        assert_eq!(serve_args(&["--public"]).limits().max_buyers, 10_000);
    }

    #[test]
    fn a_room_holds_a_thousand_people_unless_told_and_never_past_ten_thousand() {
        assert_eq!(serve_args(&[]).limits().room_people, 1_000);
        assert_eq!(
            serve_args(&["--max-room-people", "2500"])
                .limits()
                .room_people,
            2_500
        );
        let argv = |n: &str| Cli::try_parse_from(["oversold", "serve", "--max-room-people", n]);
        assert!(argv("0").is_err());
        assert!(argv("10001").is_err());
    }

    #[test]
    fn a_cluster_is_a_list_of_nodes_and_excludes_a_url() {
        use crate::redis_source::Wanted;
        let cli = Cli::parse_from([
            "oversold",
            "run",
            "--strategy",
            "lua",
            "--redis-cluster",
            "a:1,b:2",
        ]);
        assert!(matches!(cli.wanted_redis(), Wanted::Cluster(n) if n == ["a:1", "b:2"]));
        let cli = Cli::parse_from(["oversold", "serve", "--private-cluster"]);
        assert!(matches!(cli.wanted_redis(), Wanted::PrivateCluster));
        let cli = Cli::parse_from(["oversold", "serve", "--private-redis"]);
        assert!(matches!(cli.wanted_redis(), Wanted::PrivateRedis));
        let url_and_private = ["oversold", "--redis-url", "redis://x", "--private-redis"];
        assert!(Cli::try_parse_from(url_and_private).is_err());
        let both = [
            "oversold",
            "--redis-url",
            "redis://x",
            "--redis-cluster",
            "a:1",
        ];
        assert!(Cli::try_parse_from(both).is_err());
    }

    #[test]
    fn checkout_flags_become_the_same_request_a_page_sends() {
        let argv = [
            "oversold",
            "run",
            "--strategy",
            "holds",
            "--scenario",
            "checkout",
            "--abandon-fraction",
            "0.2",
            "--fail-mode",
            "open",
            "--no-wait-expiry",
            "--hold-ttl-ms",
            "60000",
        ];
        let Some(Command::Run(args)) = Cli::parse_from(argv).command else {
            panic!("run")
        };
        let r = args.race.request(Some("holds"));
        assert_eq!(r.scenario, Some(Scenario::Checkout));
        assert_eq!(r.abandon_fraction, Some(0.2));
        assert_eq!(r.fail_mode, Some(FailMode::Open));
        assert_eq!(r.no_wait_expiry, Some(true));
        assert_eq!(r.hold_ttl_ms, Some(60_000));
        assert!(r.validate(1).is_ok());
        let bad = [
            "oversold",
            "run",
            "--strategy",
            "holds",
            "--fail-mode",
            "ajar",
        ];
        assert!(Cli::try_parse_from(bad).is_err());
    }

    #[test]
    fn the_client_ip_header_must_be_a_header_name() {
        let args = serve_args(&["--client-ip-header", "X-Forwarded-For"]);
        assert_eq!(args.client_ip_header.unwrap().as_str(), "x-forwarded-for");
        let argv = ["oversold", "serve", "--client-ip-header", "not a header"];
        assert!(Cli::try_parse_from(argv).is_err());
    }
}
