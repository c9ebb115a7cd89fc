//! The built `oversold` binary: it never prints a password from `REDIS_URL` or
//! `DATABASE_URL` (not in any help screen, not in its logs when those stores cannot be reached
//! or the URLs do not parse), and `serve --public` runs with its profile.

use std::process::{Command, Output};

const REDIS_SECRET: &str = "redis-pw-4f1c";
const PG_SECRET: &str = "pg-pw-9a2e";

/// The binary with both URLs set in its environment, as an operator would.
fn oversold(redis_url: &str, database_url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args(args)
        .env("REDIS_URL", redis_url)
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "oversold=debug")
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn everything_printed(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_no_secret(out: &Output, what: &str) {
    let printed = everything_printed(out);
    assert!(
        !printed.contains(REDIS_SECRET) && !printed.contains(PG_SECRET),
        "{what} printed a password:\n{printed}"
    );
}

#[test]
fn no_help_screen_shows_a_password_from_the_environment() {
    let redis = format!("redis://:{REDIS_SECRET}@127.0.0.1:1/0");
    let pg = format!("postgres://lab:{PG_SECRET}@127.0.0.1:1/lab");
    for args in [
        &["--help"][..],
        &["-h"],
        &["serve", "--help"],
        &["run", "--help"],
        &["compare", "--help"],
        &["bench", "--help"],
        &["help", "serve"],
    ] {
        let out = oversold(&redis, &pg, args);
        assert!(out.status.success(), "{args:?}");
        let printed = everything_printed(&out);
        assert!(printed.contains("[env: REDIS_URL"), "{args:?}: {printed}");
        assert_no_secret(&out, &format!("oversold {}", args.join(" ")));
    }
}

#[test]
fn run_help_names_every_scenario() {
    let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args(["run", "--help"])
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    let help = everything_printed(&out);
    for scenario in oversold::scenario::SCENARIOS {
        let name = scenario.as_str();
        assert!(
            help.contains(&format!("|{name}|"))
                || help.contains(&format!("<{name}|"))
                || help.contains(&format!("|{name}>")),
            "`oversold run --help` does not list {name} in --scenario's values:\n{help}"
        );
        assert!(
            help.contains(&format!("`{name}`")),
            "`oversold run --help` does not say what {name} is:\n{help}"
        );
    }
}

#[test]
fn failing_to_reach_the_stores_logs_no_password() {
    let pg = format!("postgres://lab:{PG_SECRET}@127.0.0.1:1/lab");
    // Nothing listens on port 1: connecting fails, and says where, not with what.
    let redis = format!("redis://:{REDIS_SECRET}@127.0.0.1:1/0");
    let out = oversold(&redis, &pg, &["run", "--strategy", "lua"]);
    assert!(!out.status.success());
    assert!(everything_printed(&out).contains("127.0.0.1:1/0"));
    assert_no_secret(&out, "a Redis that does not answer");
    // URLs that do not parse.
    let bad_redis = format!("redis://:{REDIS_SECRET}@127.0.0.1:notaport/0");
    let out = oversold(&bad_redis, &pg, &["run", "--strategy", "lua"]);
    assert!(!out.status.success());
    assert_no_secret(&out, "an unparsable REDIS_URL");
    let test_redis = crate::common::TestRedis::start();
    for bad_pg in [
        format!("postgres://lab:{PG_SECRET}@127.0.0.1:notaport/lab"),
        format!("host=127.0.0.1 password={PG_SECRET} port=x"),
        pg.clone(),
    ] {
        let out = oversold(
            &test_redis.server.url(),
            &bad_pg,
            &["run", "--strategy", "postgres"],
        );
        assert!(!out.status.success());
        assert!(everything_printed(&out).contains("PostgreSQL unavailable"));
        assert_no_secret(&out, "an unreachable or unparsable DATABASE_URL");
    }
}

/// `oversold serve --public` with no database URL: tighter caps, and no reaching for the
/// machine's local PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_serves_with_its_profile_and_no_implicit_postgres() {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

    let redis = crate::common::TestRedis::start();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args([
            "serve",
            "--public",
            "--addr",
            "127.0.0.1:0",
            "--max-sockets",
            "100",
        ])
        .args(["--assets", "/nonexistent-oversold-dist"])
        .env("REDIS_URL", redis.server.url())
        .env_remove("DATABASE_URL")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = stdout
        .next_line()
        .await
        .unwrap()
        .expect("the listening line");
    let addr = line
        .strip_prefix("oversold listening on http://")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();

    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = String::new();
    tcp.read_to_string(&mut raw).await.unwrap();
    let body: serde_json::Value =
        serde_json::from_str(raw.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["max_runs"], 4, "{body}");
    assert_eq!(
        body["max_sockets"], 100,
        "an explicit flag beats the profile: {body}"
    );
    assert_eq!(body["pg_connections"]["budget"], 10, "{body}");

    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .unwrap();
    let hello = crate::common::Client { ws }.hello().await;
    // Every strategy on PostgreSQL (`postgres`, `postgres_naive`), in the same words.
    for name in oversold::strategy::REGISTRY
        .iter()
        .filter(|s| s.uses_postgres())
        .map(|s| s.name())
    {
        let postgres = hello
            .strategies
            .iter()
            .find(|s| s.about.name == name)
            .unwrap();
        assert!(!postgres.available, "{name}");
        let why = postgres.unavailable_reason.as_deref().unwrap_or_default();
        assert!(
            why.contains("--public") && why.contains("DATABASE_URL"),
            "{name}: {why}"
        );
    }
    child.kill().await.unwrap();
}

#[test]
fn run_writes_a_saved_run_the_page_can_load() {
    let redis = crate::common::TestRedis::start();
    let file = std::env::temp_dir().join(format!("oversold-saved-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args(["--redis-url", &redis.server.url()])
        .args([
            "run",
            "--strategy",
            "naive",
            "--seed",
            "5",
            "--json",
            "--outcomes",
        ])
        .arg(&file)
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", everything_printed(&out));
    // stdout is still exactly the summary...
    let printed: oversold_protocol::RunSummary = serde_json::from_slice(&out.stdout).unwrap();
    // ...and the file holds the whole run, consistent with it.
    let saved: oversold_protocol::SavedRun =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(saved.format, oversold_protocol::SavedRun::FORMAT);
    assert_eq!(saved.summary, printed);
    assert_eq!(saved.config.race.seed, 5);
    assert_eq!(saved.outcomes.len(), 50);
    assert_eq!(saved.strategy.name, "naive");
    let sold: u64 = saved
        .outcomes
        .iter()
        .filter(|o| o.result == oversold_protocol::OutcomeResult::Reserved)
        .map(|o| u64::from(o.qty))
        .sum();
    assert_eq!(sold, saved.summary.units_sold);
}
