//! The workshop sandbox against real Redis. Every escape attempt runs as the check's student,
//! by `EVAL` on `lease.student()` inside `guard`; each must end in a clear refusal or an
//! incident, leave the sandbox ready for the next check, and leave a second Redis (standing
//! for the lab's own) exactly as it was: same process, same key, no connection from anyone
//! but this test. Timings are printed (`--nocapture`) for the report.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oversold::store::StoreError;
use oversold::store::sandbox::{eval, key_prefix};
use oversold::workshop::sandbox::{
    ADDRESS_SPACE, BUSY_THRESHOLD, Incident, Lease, MAX_REPLY, MAXMEMORY, POLL, SILENCE_LIMIT,
    STUDENT_COMMANDS, Sandbox, SandboxError,
};
use redis::Value;
use redis::aio::MultiplexedConnection;

use crate::common::TestRedis;

/// A check's budget in these tests: far above anything that should happen.
const BUDGET: Duration = Duration::from_secs(10);

/// What the test expects a killed loop's verdict to take at most, on a busy 2-core machine.
const KILL_WITHIN: Duration = Duration::from_millis(1500);

/// The sandbox, and a Redis outside it that must never change.
struct Bench {
    sandbox: Sandbox,
    outside: Outside,
}

impl Bench {
    async fn start() -> Bench {
        let t = Instant::now();
        let sandbox = Sandbox::start().await.expect("the sandbox starts");
        println!("sandbox started in {} ms", t.elapsed().as_millis());
        Bench {
            sandbox,
            outside: Outside::start().await,
        }
    }

    async fn lease(&self) -> Lease<'_> {
        let t = Instant::now();
        let lease = self.sandbox.lease(Duration::from_secs(5)).await.unwrap();
        println!("lease {} in {} ms", lease.tag(), t.elapsed().as_millis());
        lease
    }

    /// Nothing outside changed, and the next check gets a clean, working sandbox.
    async fn assert_no_harm(&mut self, previous_tag: &str) {
        self.outside.assert_untouched().await;
        let t = Instant::now();
        let mut next = self
            .sandbox
            .lease(Duration::from_millis(200))
            .await
            .expect("the sandbox is free as soon as the last lease is dropped");
        assert_ne!(next.tag(), previous_tag, "each lease has a fresh tag");
        let mut admin = admin_raw(&next).await;
        let keys: i64 = cmd(&["DBSIZE"]).query_async(&mut admin).await.unwrap();
        assert_eq!(keys, 0, "the next check starts with no keys");
        let mut users: Vec<String> = cmd(&["ACL", "USERS"])
            .query_async(&mut admin)
            .await
            .unwrap();
        users.sort();
        assert_eq!(
            users,
            ["default", next.tag()],
            "only the admin and this check's user"
        );
        let counter = own_key(&next, "n");
        let ran = run(&mut next, "return redis.call('INCR', KEYS[1])", &[&counter]).await;
        assert_eq!(ran.value(), Value::Int(1));
        assert!(ran.incidents.is_empty(), "{:?}", ran.incidents);
        println!("next check served in {} ms", t.elapsed().as_millis());
    }
}

/// A Redis outside the sandbox, standing for the lab's own: a key that must keep its value,
/// and its counters, read on one connection opened before anything else happens.
struct Outside {
    redis: TestRedis,
    conn: MultiplexedConnection,
    before: OutsideState,
}

#[derive(Debug, PartialEq)]
struct OutsideState {
    run_id: String,
    connections_received: String,
    keys: i64,
    stock: Option<String>,
}

impl Outside {
    async fn start() -> Outside {
        let redis = TestRedis::start();
        let mut conn = redis.raw().await;
        let () = cmd(&["SET", "oversold:{lab}:stock", "42"])
            .query_async(&mut conn)
            .await
            .unwrap();
        let before = Outside::state(&mut conn).await;
        Outside {
            redis,
            conn,
            before,
        }
    }

    fn port(&self) -> String {
        self.redis.server.port().to_string()
    }

    async fn state(conn: &mut MultiplexedConnection) -> OutsideState {
        let info: String = cmd(&["INFO", "everything"])
            .query_async(conn)
            .await
            .unwrap();
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")))
                .unwrap_or_else(|| panic!("INFO has {name}"))
                .trim()
                .to_string()
        };
        OutsideState {
            run_id: field("run_id"),
            connections_received: field("total_connections_received"),
            keys: cmd(&["DBSIZE"]).query_async(conn).await.unwrap(),
            stock: cmd(&["GET", "oversold:{lab}:stock"])
                .query_async(conn)
                .await
                .unwrap(),
        }
    }

    /// Same process (run id), same key and value, and no connection but ours ever arrived.
    async fn assert_untouched(&mut self) {
        let now = Outside::state(&mut self.conn).await;
        assert_eq!(
            now, self.before,
            "the Redis outside the sandbox was touched"
        );
    }
}

/// What one guarded `EVAL` gave.
struct Ran {
    output: Option<Result<Value, StoreError>>,
    incidents: Vec<Incident>,
    took: Duration,
}

impl Ran {
    fn value(&self) -> Value {
        match &self.output {
            Some(Ok(v)) => v.clone(),
            other => panic!("expected a reply, got {other:?} ({:?})", self.incidents),
        }
    }

    fn error(&self) -> String {
        match &self.output {
            Some(Err(e)) => e.to_string(),
            other => panic!("expected an error, got {other:?} ({:?})", self.incidents),
        }
    }
}

/// Run `source` as the check's student, by `EVAL` on `keys`, under the watchdog.
async fn run(lease: &mut Lease<'_>, source: &str, keys: &[&str]) -> Ran {
    run_within(lease, BUDGET, source, keys).await
}

async fn run_within(lease: &mut Lease<'_>, budget: Duration, source: &str, keys: &[&str]) -> Ran {
    let student = lease.student().clone();
    let source = source.to_string();
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let started = Instant::now();
    let (output, incidents) = lease
        .guard(budget, async move {
            let mut conn = student.connect().await?;
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            eval(&mut conn, &source, &keys, &[]).await
        })
        .await;
    Ran {
        output,
        incidents,
        took: started.elapsed(),
    }
}

/// `oversold:{TAG}:name`, a key the check's student owns.
fn own_key(lease: &Lease<'_>, name: &str) -> String {
    format!("{}{name}", key_prefix(lease.tag()))
}

fn cmd(words: &[&str]) -> redis::Cmd {
    let mut cmd = redis::cmd(words[0]);
    cmd.arg(&words[1..]);
    cmd
}

/// A plain connection to the sandbox as its admin, for what only a test asks (`CONFIG GET`,
/// `ACL USERS`, `DBSIZE`).
async fn admin_raw(lease: &Lease<'_>) -> MultiplexedConnection {
    let addr = lease.admin().display_addr();
    let host_port = addr.split('/').next().unwrap();
    let url = format!("redis://default:{}@{host_port}", lease.admin_password());
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .expect("the admin connects")
}

/// The words of a refusal: Redis's ACL (`can't run`, `can't access`, `NOPERM`), or Redis's
/// rule that some commands never run from a script.
fn refusal(message: &str) -> Option<&'static str> {
    if message.contains("can't run this command or subcommand") {
        Some("no permission (command)")
    } else if message.contains("can't access at least one of the keys")
        || message.contains("no permissions to access one of the keys")
    {
        Some("no permission (key)")
    } else if message.contains("not allowed from script") {
        Some("never from a script")
    } else {
        None
    }
}

/// Set `key` to `value` as the check's student, and check it.
async fn student_sets(lease: &mut Lease<'_>, key: &str, value: &str) {
    let source = format!("return redis.call('SET', KEYS[1], '{value}')");
    let ran = run(lease, &source, &[key]).await;
    assert_eq!(ran.value(), Value::Okay);
}

async fn value_of(lease: &Lease<'_>, key: &str) -> Option<String> {
    cmd(&["GET", key])
        .query_async(&mut admin_raw(lease).await)
        .await
        .unwrap()
}

#[test]
fn the_sandbox_is_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    fn sendable<T: Send>() {}
    shareable::<Sandbox>();
    sendable::<Lease<'static>>();
}

/// The allow-list works: every command in it runs from a script on the student's own keys
/// (so the refusals below are the ACL's choice, not a broken user), and the ACL user holds
/// exactly that list.
#[tokio::test]
async fn a_student_may_run_every_allowed_command_on_its_own_keys() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let p = key_prefix(lease.tag());
    let ran = run(&mut lease, EVERY_ALLOWED_COMMAND, &[&p]).await;
    assert_eq!(ran.value(), Value::Int(1), "{:?}", ran.output);
    println!("every allowed command: {} ms", ran.took.as_millis());
    let allowed = commands_the_student_may_run(&lease).await;
    let mut expected: Vec<String> = STUDENT_COMMANDS.iter().map(|c| c.to_string()).collect();
    // Redis lets every user run these (they carry no-auth): logging in and leaving.
    expected.extend(["auth", "hello", "quit", "reset"].map(String::from));
    expected.sort();
    assert_eq!(
        allowed, expected,
        "the ACL user may run exactly the allow-list"
    );
    println!("ACL DRYRUN of every command: {} allowed", allowed.len());
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

/// Every command and subcommand this Redis has (`COMMAND LIST`) that the check's user may
/// run on its own keys, by `ACL DRYRUN`: each is tried with 0 to 7 arguments (all the own
/// key) until Redis answers `OK` or "no permissions"; one it never judges fails the test.
async fn commands_the_student_may_run(lease: &Lease<'_>) -> Vec<String> {
    let mut admin = admin_raw(lease).await;
    let own = own_key(lease, "k");
    let names: Vec<String> = cmd(&["COMMAND", "LIST"])
        .query_async(&mut admin)
        .await
        .unwrap();
    let mut allowed = Vec::new();
    // A container (`CONFIG`) is judged by its subcommands (`config|get`...).
    let containers: Vec<String> = names
        .iter()
        .filter_map(|n| n.split_once('|').map(|(c, _)| c.to_string()))
        .collect();
    'names: for name in names.iter().filter(|n| !containers.contains(n)) {
        for extra in 0..8 {
            let mut words = vec!["ACL", "DRYRUN", lease.tag()];
            words.extend(name.split('|'));
            words.extend(std::iter::repeat_n(own.as_str(), extra));
            let answer: redis::RedisResult<String> = cmd(&words).query_async(&mut admin).await;
            match answer {
                Ok(ok) if ok == "OK" => {
                    allowed.push(name.clone());
                    continue 'names;
                }
                Ok(denied) if denied.contains("no permissions") => continue 'names,
                _ => {}
            }
        }
        panic!("ACL DRYRUN never judged {name}");
    }
    allowed.sort();
    allowed
}

/// Every allowed command once, on keys under `KEYS[1]` (the prefix); returns 1.
const EVERY_ALLOWED_COMMAND: &str = r#"
local p = KEYS[1]
local s, h, st, z, l = p .. 's', p .. 'h', p .. 'st', p .. 'z', p .. 'l'
redis.call('SET', s, 1); redis.call('SETNX', s, 2); redis.call('SETEX', p .. 'e', 60, 1)
redis.call('PSETEX', p .. 'pe', 60000, 1); redis.call('GETSET', s, 1); redis.call('INCR', s)
redis.call('INCRBY', s, 2); redis.call('DECR', s); redis.call('DECRBY', s, 2)
redis.call('MSET', s, 1, p .. 't', 2); redis.call('MGET', s, p .. 't'); redis.call('GET', s)
redis.call('EXISTS', s); redis.call('EXPIRE', s, 60); redis.call('PEXPIRE', s, 60000)
redis.call('TTL', s); redis.call('PTTL', s); redis.call('PERSIST', s); redis.call('TYPE', s)
redis.call('HSET', h, 'a', 1); redis.call('HSETNX', h, 'b', 2); redis.call('HGET', h, 'a')
redis.call('HINCRBY', h, 'a', 1); redis.call('HMGET', h, 'a', 'b'); redis.call('HGETALL', h)
redis.call('HEXISTS', h, 'a'); redis.call('HLEN', h); redis.call('HKEYS', h)
redis.call('HVALS', h); redis.call('HDEL', h, 'b')
redis.call('SADD', st, 'x'); redis.call('SISMEMBER', st, 'x'); redis.call('SCARD', st)
redis.call('SMEMBERS', st); redis.call('SREM', st, 'x')
redis.call('ZADD', z, 1, 'a', 2, 'b'); redis.call('ZSCORE', z, 'a'); redis.call('ZCARD', z)
redis.call('ZRANGE', z, 0, -1); redis.call('ZRANGEBYSCORE', z, 0, 10); redis.call('ZCOUNT', z, 0, 10)
redis.call('ZINCRBY', z, 1, 'a'); redis.call('ZPOPMIN', z); redis.call('ZREM', z, 'a')
redis.call('ZREMRANGEBYSCORE', z, 0, 10)
redis.call('LPUSH', l, 1); redis.call('RPUSH', l, 2); redis.call('LLEN', l)
redis.call('LRANGE', l, 0, -1); redis.call('LPOP', l); redis.call('RPOP', l)
redis.call('DEL', s, p .. 't'); redis.call('TIME'); redis.call('PING')
return 1
"#;

/// Each script tries one command a student must not have; `{own}` is the student's own key,
/// `{outside}` the outside Redis's port.
const FORBIDDEN: &[&str] = &[
    "redis.call('FLUSHALL')",
    "redis.call('FLUSHDB')",
    "redis.call('CONFIG', 'SET', 'maxmemory', '0')",
    "redis.call('CONFIG', 'GET', 'requirepass')",
    "redis.call('DEBUG', 'SLEEP', '0')",
    "redis.call('SCRIPT', 'FLUSH')",
    "redis.call('KEYS', '*')",
    "redis.call('SCAN', '0')",
    "redis.call('SHUTDOWN', 'NOSAVE')",
    "redis.call('ACL', 'SETUSER', 'me', 'on', '>p', '~*', '+@all')",
    "redis.call('ACL', 'LIST')",
    "redis.call('CLIENT', 'KILL', 'TYPE', 'normal')",
    "redis.call('CLIENT', 'LIST')",
    "redis.call('FUNCTION', 'FLUSH')",
    "redis.call('SELECT', '1')",
    "redis.call('SWAPDB', '0', '1')",
    "redis.call('MIGRATE', '127.0.0.1', '{outside}', '{own}', '0', '1000')",
    "redis.call('REPLICAOF', '127.0.0.1', '{outside}')",
    "redis.call('OBJECT', 'ENCODING', '{own}')",
    "redis.call('WAIT', '0', '0')",
    "redis.call('MONITOR')",
    "redis.call('INFO')",
    "redis.call('PUBLISH', 'c', 'm')",
    "redis.call('MODULE', 'LIST')",
    "redis.call('BGSAVE')",
    "redis.call('SORT', '{own}')",
    "redis.call('DUMP', '{own}')",
];

#[tokio::test]
async fn commands_outside_the_allow_list_are_refused() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let own = own_key(&lease, "mine");
    student_sets(&mut lease, &own, "kept").await;
    for template in FORBIDDEN {
        let source = format!("return {template}")
            .replace("{own}", &own)
            .replace("{outside}", &bench.outside.port());
        let ran = run(&mut lease, &source, &[&own]).await;
        let message = ran.error();
        let kind = refusal(&message).unwrap_or_else(|| panic!("{source}: not refused: {message}"));
        assert!(ran.incidents.is_empty(), "{source}: {:?}", ran.incidents);
        println!("{:>4} ms  {kind:<24} {template}", ran.took.as_millis());
    }
    assert_eq!(value_of(&lease, &own).await.as_deref(), Some("kept"));
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

#[tokio::test]
async fn keys_outside_the_checks_tag_are_refused() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let own = own_key(&lease, "mine");
    let mut admin = admin_raw(&lease).await;
    for key in ["x", "oversold:{other}:x"] {
        let () = cmd(&["SET", key, "admin's"])
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let tries: [(&str, &[&str]); 5] = [
        ("return redis.call('GET', KEYS[1])", &["x"]),
        (
            "return redis.call('SET', KEYS[1], 'mine')",
            &["oversold:{other}:x"],
        ),
        ("return redis.call('SET', 'x', 'mine')", &[]),
        (
            "return redis.call('DEL', KEYS[1], 'oversold:{other}:x')",
            &[&own],
        ),
        (
            "return redis.call('SET', KEYS[1], 'mine')",
            &["oversold:{ws-}:x"],
        ),
    ];
    for (source, keys) in tries {
        let ran = run(&mut lease, source, keys).await;
        let message = ran.error();
        assert_eq!(
            refusal(&message),
            Some("no permission (key)"),
            "{source}: {message}"
        );
        println!("{:>4} ms  refused: {source} {keys:?}", ran.took.as_millis());
    }
    for key in ["x", "oversold:{other}:x"] {
        assert_eq!(value_of(&lease, key).await.as_deref(), Some("admin's"));
    }
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

#[tokio::test]
async fn an_endless_loop_is_killed() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let own = own_key(&lease, "mine");
    student_sets(&mut lease, &own, "kept").await;
    let ran = run(&mut lease, "while true do end", &[]).await;
    let [Incident::Killed { after }] = ran.incidents[..] else {
        panic!("expected one kill: {:?}", ran.incidents);
    };
    assert!(ran.error().contains("Script killed"), "{}", ran.error());
    assert!(after >= BUSY_THRESHOLD, "{after:?}");
    assert!(ran.took < KILL_WITHIN, "{:?}", ran.took);
    println!(
        "endless loop: killed after {} ms (threshold {} ms, poll {} ms); verdict in {} ms",
        after.as_millis(),
        BUSY_THRESHOLD.as_millis(),
        POLL.as_millis(),
        ran.took.as_millis()
    );
    // Killed, not restarted: the check's data is still there.
    assert_eq!(value_of(&lease, &own).await.as_deref(), Some("kept"));
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

#[tokio::test]
async fn a_loop_after_a_write_restarts_the_sandbox() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let own = own_key(&lease, "w");
    let pid = lease.pid();
    let ran = run(
        &mut lease,
        "redis.call('SET', KEYS[1], 1) while true do end",
        &[&own],
    )
    .await;
    let [Incident::Restarted { why }] = &ran.incidents[..] else {
        panic!("expected one restart: {:?}", ran.incidents);
    };
    assert!(why.contains("UNKILLABLE") && why.contains("wrote"), "{why}");
    assert!(ran.output.is_some(), "the check itself ran to its end");
    assert_ne!(lease.pid(), pid, "a new process");
    println!(
        "write then loop: restarted, verdict in {} ms; the check saw: {}",
        ran.took.as_millis(),
        ran.error()
    );
    // The same lease goes on, on the new server, which holds nothing of the old one.
    assert_eq!(value_of(&lease, &own).await, None);
    student_sets(&mut lease, &own, "again").await;
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

#[tokio::test]
async fn a_memory_bomb_fails_cleanly_or_is_stopped() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let bomb = "local t = {} for i=1,1e9 do t[i] = string.rep('x', 1000) .. i end";
    let ran = run(&mut lease, bomb, &[]).await;
    let seen = match &ran.incidents[..] {
        [] => {
            assert!(ran.error().contains("not enough memory"), "{}", ran.error());
            "failed with 'not enough memory'".to_string()
        }
        [Incident::Killed { after }] => format!("killed after {} ms", after.as_millis()),
        [Incident::Restarted { why }] => format!("restarted: {why}"),
        more => panic!("{more:?}"),
    };
    assert!(ran.output.is_some() && ran.took < BUDGET);
    println!(
        "memory bomb: {seen}; verdict in {} ms",
        ran.took.as_millis()
    );
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

/// The address-space limit is on the process, and it holds against a bomb the watchdog
/// cannot see: a few dozen Lua instructions (the hook that answers `BUSY` never fires) build
/// 64 MiB, then ask for 1 GiB in one concatenation, which fails at the limit. Without it,
/// this returns 1073741824.
#[tokio::test]
async fn the_address_space_limit_holds() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let pid = lease.pid().expect("running");
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))
        .unwrap();
    assert!(line.contains(&ADDRESS_SPACE.to_string()), "{line}");
    let bomb = "local s = string.rep('x', 2^20) for i = 1, 6 do s = s .. s end \
                return #(s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s)";
    let ran = run(&mut lease, bomb, &[]).await;
    assert!(ran.error().contains("not enough memory"), "{}", ran.error());
    assert!(ran.incidents.is_empty(), "{:?}", ran.incidents);
    println!(
        "1 GiB concatenation: 'not enough memory' in {} ms ({line})",
        ran.took.as_millis()
    );
    let ran = run(&mut lease, "return redis.call('PING')", &[]).await;
    assert_eq!(ran.value(), Value::SimpleString("PONG".into()));
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

/// Redis's Lua has no way to the machine: no `os`, `io`, `require`, `dofile`, `loadfile`;
/// `loadstring` exists but compiles only into the same sandbox (its code meets the same ACL);
/// a script may not call `EVAL`.
#[tokio::test]
async fn lua_has_no_way_out() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let tries = [
        "return os.execute('touch /tmp/oversold-escaped')",
        "return io.open('/etc/passwd'):read('*a')",
        "return require('os')",
        "return dofile('/etc/passwd')",
        "return loadfile('/etc/passwd')",
        "return loadstring(\"return redis.call('FLUSHALL')\")()",
        "return redis.call('EVAL', \"return redis.call('FLUSHALL')\", 0)",
        "return redis.call('EVALSHA', 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db', 0)",
        "return redis.pcall('FLUSHALL')['err']",
    ];
    for source in tries {
        let ran = run(&mut lease, source, &[]).await;
        let said = match &ran.output {
            Some(Err(e)) => e.to_string(),
            Some(Ok(Value::BulkString(b))) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("{source}: {other:?}"),
        };
        let contained = said.contains("nonexistent global variable")
            || refusal(&said).is_some()
            || said.contains("can't run this command");
        assert!(contained, "{source}: {said}");
        assert!(ran.incidents.is_empty(), "{:?}", ran.incidents);
        println!(
            "{:>4} ms  {source}\n         -> {said}",
            ran.took.as_millis()
        );
    }
    assert!(!std::path::Path::new("/tmp/oversold-escaped").exists());
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

#[tokio::test]
async fn a_check_past_its_budget_is_dropped_and_the_sandbox_restarted() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let own = own_key(&lease, "mine");
    student_sets(&mut lease, &own, "gone").await;
    let budget = Duration::from_millis(300);
    let t = Instant::now();
    let (output, incidents) = lease
        .guard(budget, tokio::time::sleep(Duration::from_secs(30)))
        .await;
    let took = t.elapsed();
    assert!(output.is_none(), "dropped");
    let [Incident::Restarted { why }] = &incidents[..] else {
        panic!("{incidents:?}");
    };
    assert!(why.contains("budget"), "{why}");
    assert!(took < budget + Duration::from_secs(2), "{took:?}");
    assert_eq!(value_of(&lease, &own).await, None, "a fresh server");
    println!(
        "budget 300 ms: dropped and restarted in {} ms",
        took.as_millis()
    );
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

/// A script stuck inside one C call (a pattern that backtracks for ever) never reaches the
/// hook: no `BUSY`, no `SCRIPT KILL`. The watchdog hears nothing for [`SILENCE_LIMIT`] and
/// restarts the sandbox; the check gets its connection back in error, not a hang.
#[tokio::test]
async fn a_script_stuck_in_one_call_restarts_the_sandbox() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let stuck = "return string.find(string.rep('a', 3000), string.rep('a*', 12) .. 'b')";
    let ran = run(&mut lease, stuck, &[]).await;
    let [Incident::Restarted { why }] = &ran.incidents[..] else {
        panic!(
            "expected one restart: {:?} {:?} {:?}",
            ran.incidents, ran.output, ran.took
        );
    };
    assert!(why.contains("answered nothing"), "{why}");
    let message = ran.error();
    assert!(
        ran.took < SILENCE_LIMIT + Duration::from_secs(2),
        "{:?}",
        ran.took
    );
    println!(
        "stuck pattern match: restarted, verdict in {} ms; the check saw: {message}",
        ran.took.as_millis()
    );
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

/// A sandbox process that dies mid-check (as Redis does when it cannot allocate) is
/// restarted; the check goes on against the new one.
#[tokio::test]
async fn a_dead_sandbox_is_restarted() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let pid = lease.pid().expect("running");
    let admin = lease.admin().clone();
    let t = Instant::now();
    let (output, incidents) = lease
        .guard(BUDGET, async move {
            let killed = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
            assert!(killed.success());
            // Wait until the sandbox answers again: the watchdog brought it back.
            loop {
                tokio::time::sleep(Duration::from_millis(20)).await;
                if admin.ping().await.is_ok() {
                    return;
                }
            }
        })
        .await;
    assert!(output.is_some());
    let [Incident::Restarted { why }] = &incidents[..] else {
        panic!("{incidents:?}");
    };
    assert!(why.contains("died"), "{why}");
    assert_ne!(lease.pid(), Some(pid));
    println!(
        "killed sandbox: back in {} ms ({why})",
        t.elapsed().as_millis()
    );
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

/// A reply bigger than [`MAX_REPLY`] closes the student's connection rather than reach
/// this process; the sandbox goes on.
#[tokio::test]
async fn a_huge_reply_is_cut_off() {
    let mut bench = Bench::start().await;
    let mut lease = bench.lease().await;
    let big = "local k = string.rep('x', 2^20) local s = k for i = 1, 6 do s = s .. s end \
               return s .. k";
    let ran = run(&mut lease, big, &[]).await;
    let message = ran.error();
    assert!(ran.incidents.is_empty(), "{:?}", ran.incidents);
    println!(
        "65 MiB reply (limit {MAX_REPLY}): {} ms: {message}",
        ran.took.as_millis()
    );
    let ran = run(&mut lease, "return redis.call('PING')", &[]).await;
    assert_eq!(ran.value(), Value::SimpleString("PONG".into()));
    let tag = lease.tag().to_string();
    drop(lease);
    bench.assert_no_harm(&tag).await;
}

/// The settings the limits rest on, read back from the running sandbox.
#[tokio::test]
async fn the_sandbox_runs_with_its_settings() {
    let bench = Bench::start().await;
    let lease = bench.lease().await;
    let mut admin = admin_raw(&lease).await;
    let threshold = BUSY_THRESHOLD.as_millis().to_string();
    let maxmemory = (32u64 << 20).to_string();
    assert_eq!(MAXMEMORY, "32mb");
    let expected = [
        ("busy-reply-threshold", threshold.as_str()),
        ("maxmemory", maxmemory.as_str()),
        ("maxmemory-policy", "noeviction"),
        ("enable-debug-command", "no"),
        ("protected-mode", "yes"),
        ("bind", "127.0.0.1"),
        ("save", ""),
        ("appendonly", "no"),
    ];
    for (name, value) in expected {
        let got: Vec<String> = cmd(&["CONFIG", "GET", name])
            .query_async(&mut admin)
            .await
            .unwrap();
        assert_eq!(got, [name, value], "{name}");
    }
    let limits: Vec<String> = cmd(&["CONFIG", "GET", "client-output-buffer-limit"])
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(limits[1].starts_with("normal 67108864 0 0"), "{limits:?}");
    let anonymous = redis::Client::open(format!("redis://{}", lease.admin().display_addr()))
        .unwrap()
        .get_multiplexed_async_connection()
        .await;
    let refused = match anonymous {
        Ok(mut conn) => cmd(&["PING"])
            .query_async::<String>(&mut conn)
            .await
            .unwrap_err(),
        Err(e) => e,
    };
    assert_eq!(refused.code(), Some("NOAUTH"), "{refused}");
}

/// Collects every log line written while it is the thread's subscriber.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The admin password shows in no `Debug` output, error, incident, log line (every level,
/// every crate), nor the process's command line; it is what Redis asks for, though.
#[tokio::test]
async fn the_admin_password_is_shown_nowhere() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    // While only one subscriber exists, tracing asks the subscriber of whichever thread meets
    // a log line first whether it wants it, and remembers the answer: a line another test's
    // thread met first (no subscriber there) would stay muted here. A second, idle subscriber
    // makes it ask every one of them.
    let _second = tracing::Dispatch::new(tracing_subscriber::registry());
    tracing::callsite::rebuild_interest_cache();
    let bench = Bench::start().await;
    let mut seen = vec![format!("{:?}", bench.sandbox)];
    let mut lease = bench.lease().await;
    let password = lease.admin_password().to_string();
    assert_eq!(password.len(), 64);
    seen.push(format!("{:?} {:?}", bench.sandbox, lease));
    seen.push(format!("{:?} {:?}", lease.admin(), lease.student()));
    let busy = bench
        .sandbox
        .lease(Duration::from_millis(10))
        .await
        .unwrap_err();
    seen.push(format!("{busy} {busy:?}"));
    for source in [
        "return redis.call('CONFIG', 'GET', 'requirepass')",
        "while true do end",
    ] {
        let ran = run(&mut lease, source, &[]).await;
        seen.push(format!(
            "{} {:?} {:?}",
            ran.error(),
            ran.output,
            ran.incidents
        ));
    }
    let own = own_key(&lease, "w");
    let ran = run(
        &mut lease,
        "redis.call('SET', KEYS[1], 1) while true do end",
        &[&own],
    )
    .await;
    seen.push(format!("{:?} {:?}", ran.output, ran.incidents));
    assert!(
        matches!(ran.incidents[..], [Incident::Restarted { .. }]),
        "{:?}",
        ran.incidents
    );
    let pid = lease.pid().unwrap();
    seen.push(std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap());
    seen.push(String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned());
    let log = seen.last().unwrap();
    assert!(log.contains("restarted"), "the log was captured: {log}");
    for text in &seen {
        assert!(
            !text.contains(&password),
            "the password leaked into: {text}"
        );
    }
    println!(
        "checked {} texts, {} bytes of logs",
        seen.len(),
        seen.last().unwrap().len()
    );
}

/// One check at a time: a second lease waits for the first, and one that will not wait
/// long enough is told the sandbox is busy.
#[tokio::test]
async fn leases_are_exclusive() {
    let bench = Bench::start().await;
    let first = bench.lease().await;
    let t = Instant::now();
    let busy = bench.sandbox.lease(Duration::from_millis(50)).await;
    assert!(matches!(busy, Err(SandboxError::Busy { .. })), "{busy:?}");
    println!("busy answered in {} ms", t.elapsed().as_millis());
    let held = Duration::from_millis(300);
    let t = Instant::now();
    let release = async {
        tokio::time::sleep(held).await;
        drop(first);
    };
    let (second, ()) = tokio::join!(bench.sandbox.lease(Duration::from_secs(5)), release);
    let waited = t.elapsed();
    let mut second = second.expect("the second lease once the first is dropped");
    assert!(waited >= held, "{waited:?}");
    let counter = own_key(&second, "n");
    let ran = run(
        &mut second,
        "return redis.call('INCR', KEYS[1])",
        &[&counter],
    )
    .await;
    assert_eq!(ran.value(), Value::Int(1));
    println!(
        "second lease waited {} ms for the first (held {} ms)",
        waited.as_millis(),
        held.as_millis()
    );
}
