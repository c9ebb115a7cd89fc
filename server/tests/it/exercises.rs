//! The workshop's judge on a real Redis: every exercise's reference passes and its starter
//! fails, correct scripts in other styles pass, subtly wrong ones fail with the right
//! verdict, and a failure comes back shrunk, as a tape.

use oversold::workshop::exercises::{self, Exercise};
use oversold::workshop::judge::{self, Target};
use oversold::workshop::sandbox::ClusterSandbox;
use oversold::workshop::service;
use oversold_protocol::workshop::{SolutionVerdict, VerdictCode};

use crate::common::TestRedis;

async fn judge(redis: &TestRedis, exercise: &Exercise, source: &str) -> SolutionVerdict {
    let target = Target {
        admin: &redis.store,
        student: &redis.store,
        tag: "ws-test",
    };
    judge::check(&target, exercise, source)
        .await
        .expect("the check ran")
}

fn exercise(id: &str) -> &'static Exercise {
    exercises::find(id).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reference_passes_and_every_starter_fails() {
    let redis = TestRedis::start();
    // cluster_tags is judged on a cluster only: `cluster_tags_is_judged_on_a_private_cluster`.
    for ex in exercises::all()
        .into_iter()
        .filter(|e| !e.rules.on_cluster())
    {
        let passed = judge(&redis, ex, ex.reference).await;
        println!(
            "{} reference: {:?} in {} ms: {}",
            ex.id, passed.verdict, passed.took_ms, passed.message
        );
        assert!(passed.passed, "{}: {passed:?}", ex.id);
        assert!(passed.figures.is_some());
        let failed = judge(&redis, ex, ex.starter).await;
        println!(
            "{} starter: {:?} in {} ms: {}",
            ex.id, failed.verdict, failed.took_ms, failed.message
        );
        assert!(!failed.passed, "{}: the starter passed", ex.id);
        if ex.id != "short_script" {
            let c = failed.counterexample.as_ref().expect("a counterexample");
            assert!(!c.tape.is_empty(), "{}: an empty tape", ex.id);
            assert!(c.calls.len() <= 4, "{}: not shrunk: {c:?}", ex.id);
            for line in &c.tape {
                println!(
                    "  {} {}{} -> {} {:?}",
                    line.buyer,
                    if line.inside { "  " } else { "" },
                    line.command,
                    line.reply,
                    line.stock_after
                );
            }
        }
    }
}

/// Correct scripts written differently from the reference pass: the judge reads answers,
/// not text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn correct_scripts_in_other_styles_pass() {
    let redis = TestRedis::start();
    let passing = [
        (
            "reserve",
            "local left = redis.call('DECRBY', KEYS[1], ARGV[1])\n\
             if left < 0 then redis.call('INCRBY', KEYS[1], ARGV[1]) return 0 end\n\
             return 1",
        ),
        (
            "reserve",
            "local want = tonumber(ARGV[1])\n\
             local have = tonumber(redis.call('GET', KEYS[1])) or 0\n\
             if have - want >= 0 then redis.call('SET', KEYS[1], have - want) return 1 else return 0 end",
        ),
        (
            "quantity",
            "local q = ARGV[1]\n\
             if not string.find(q, '^[1-9][0-9]*$') or #q > 15 then return redis.error_reply('BAD_INPUT qty') end\n\
             local raw = redis.call('GET', KEYS[1]) or '0'\n\
             if raw ~= '0' and not string.find(raw, '^%-?[1-9][0-9]*$') then return redis.error_reply('BAD_INPUT stock') end\n\
             if tonumber(raw) < tonumber(q) then return 0 end\n\
             redis.call('DECRBY', KEYS[1], q) return 1",
        ),
        (
            "idempotent",
            "if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then\n\
               return redis.call('HGET', KEYS[2], ARGV[2]) == 'took' and 1 or 0\n\
             end\n\
             local ok = (tonumber(redis.call('GET', KEYS[1])) or 0) >= tonumber(ARGV[1])\n\
             if ok then redis.call('DECRBY', KEYS[1], ARGV[1]) end\n\
             redis.call('HSET', KEYS[2], ARGV[2], ok and 'took' or 'refused')\n\
             return ok and 1 or 0",
        ),
        (
            "cart",
            "local want = {}\n\
             for i = 1, #KEYS do want[i] = tonumber(ARGV[i]) end\n\
             local stock = redis.call('MGET', unpack(KEYS))\n\
             for i = 1, #KEYS do if (tonumber(stock[i]) or 0) < want[i] then return 0 end end\n\
             for i = 1, #KEYS do redis.call('SET', KEYS[i], (tonumber(stock[i]) or 0) - want[i]) end\n\
             return 1",
        ),
        (
            "customer_limit",
            "local q = tonumber(ARGV[1])\n\
             local after = redis.call('HINCRBY', KEYS[2], ARGV[2], q)\n\
             if after > tonumber(ARGV[3]) then redis.call('HINCRBY', KEYS[2], ARGV[2], -q) return -1 end\n\
             if tonumber(redis.call('GET', KEYS[1]) or '0') < q then redis.call('HINCRBY', KEYS[2], ARGV[2], -q) return 0 end\n\
             redis.call('DECRBY', KEYS[1], q) return 1",
        ),
        (
            "short_script",
            "local q = tonumber(ARGV[1])\n\
             if redis.call('LLEN', KEYS[1]) >= q then\n\
               for i = 1, q do redis.call('LPOP', KEYS[1]) end\n\
               return 1\n\
             end\n\
             return 0",
        ),
    ];
    for (id, source) in passing {
        let v = judge(&redis, exercise(id), source).await;
        assert!(v.passed, "{id}: {v:?}\n{source}");
    }
}

/// Subtly wrong scripts fail, each with its verdict and a tape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subtly_wrong_scripts_fail_with_their_verdict() {
    let redis = TestRedis::start();
    let failing = [
        // Compares the stock with zero, not with the quantity.
        (
            "reserve",
            VerdictCode::Oversold,
            "if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECRBY', KEYS[1], ARGV[1]) return 1 end return 0",
        ),
        // Compares the two as strings: "10" < "9".
        (
            "reserve",
            VerdictCode::WrongAnswer,
            "local s = redis.call('GET', KEYS[1]) or '0'\n\
             if s < ARGV[1] then return 0 end\n\
             redis.call('DECRBY', KEYS[1], ARGV[1]) return 1",
        ),
        // Answers before it writes: the units are never taken.
        (
            "reserve",
            VerdictCode::WrongAnswer,
            "if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) then return 1 end return 0",
        ),
        // tonumber and a floor: "01" and "1.5" get through.
        (
            "quantity",
            VerdictCode::BadInputAccepted,
            "local q = tonumber(ARGV[1])\n\
             if q == nil or q < 1 then return redis.error_reply('BAD_INPUT qty') end\n\
             q = math.floor(q)\n\
             local s = tonumber(redis.call('GET', KEYS[1]) or '0')\n\
             if s == nil then return redis.error_reply('BAD_INPUT stock') end\n\
             if s < q then return 0 end\n\
             redis.call('DECRBY', KEYS[1], q) return 1",
        ),
        // Records the request id without checking it first.
        (
            "idempotent",
            VerdictCode::Duplicate,
            "redis.call('HSET', KEYS[2], ARGV[2], 1)\n\
             local s = tonumber(redis.call('GET', KEYS[1]) or '0')\n\
             if s < tonumber(ARGV[1]) then return 0 end\n\
             redis.call('DECRBY', KEYS[1], ARGV[1]) return 1",
        ),
        // Checks the limit against this order alone, not what the customer already bought.
        (
            "customer_limit",
            VerdictCode::LimitBroken,
            "if tonumber(ARGV[1]) > tonumber(ARGV[3]) then return -1 end\n\
             if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then return 0 end\n\
             redis.call('DECRBY', KEYS[1], ARGV[1]) redis.call('HINCRBY', KEYS[2], ARGV[2], ARGV[1]) return 1",
        ),
        // Counts what was bought, but only after the stock check: an order refused for the
        // stock is fine, yet the limit is checked against the old count.
        (
            "customer_limit",
            VerdictCode::LimitBroken,
            "local b = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')\n\
             if b > tonumber(ARGV[3]) then return -1 end\n\
             if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then return 0 end\n\
             redis.call('DECRBY', KEYS[1], ARGV[1]) redis.call('HINCRBY', KEYS[2], ARGV[2], ARGV[1]) return 1",
        ),
        // Takes line by line and errors on a short line: the lines before stay taken.
        (
            "cart",
            VerdictCode::PartialCart,
            "for i = 1, #KEYS do\n\
               if tonumber(redis.call('GET', KEYS[i]) or '0') < tonumber(ARGV[i]) then return redis.error_reply('SHORT line ' .. i) end\n\
               redis.call('DECRBY', KEYS[i], ARGV[i])\n\
             end return 1",
        ),
        // A typo: the script errors on every call.
        (
            "reserve",
            VerdictCode::ScriptError,
            "return redis.call('GET', KEYS[1]) + nosuch",
        ),
        // Does not compile.
        ("reserve", VerdictCode::ScriptError, "if then end"),
    ];
    for (id, want, source) in failing {
        let v = judge(&redis, exercise(id), source).await;
        assert_eq!(v.verdict, want, "{id}: {v:?}\n{source}");
        assert!(!v.passed);
        if source != "if then end" {
            assert!(
                v.counterexample
                    .as_ref()
                    .is_some_and(|c| !c.tape.is_empty()),
                "{id}: {v:?}"
            );
        }
    }
}

/// `oversold exercise …` in a terminal: list, show, and check with its exit codes (0 pass,
/// 1 fail, 2 usage), judged on a sandbox the command starts (no Redis is named).
#[test]
fn the_exercise_commands_keep_their_contract() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_oversold"))
            .args(args)
            // A Redis it must not use: the judge starts its own sandbox.
            .env("REDIS_URL", "redis://127.0.0.1:1")
            .env_remove("DATABASE_URL")
            .output()
            .expect("the binary runs")
    };
    let list = run(&["exercise", "list", "--json"]);
    assert!(list.status.success());
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "reserve",
            "quantity",
            "idempotent",
            "customer_limit",
            "hold",
            "confirm",
            "cart",
            "short_script",
            "cluster_tags"
        ]
    );
    let show = run(&["exercise", "show", "reserve", "--json"]);
    let show: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    for field in ["id", "title", "contract", "starter"] {
        assert!(show[field].is_string(), "{field}: {show}");
    }
    let text = String::from_utf8(run(&["exercise", "show", "reserve"]).stdout).unwrap();
    assert!(
        text.contains("KEYS[1]") && text.contains("Hint 1"),
        "{text}"
    );

    let dir = std::env::temp_dir().join(format!("oversold-exercise-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let starter = dir.join("starter.lua");
    std::fs::write(&starter, exercise("reserve").starter).unwrap();
    let failed = run(&[
        "exercise",
        "check",
        "reserve",
        starter.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    let v: serde_json::Value = serde_json::from_slice(&failed.stdout).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["verdict"], "oversold");
    assert!(v["message"].as_str().unwrap().len() > 20);
    assert!(
        !v["counterexample"]["tape"].as_array().unwrap().is_empty(),
        "{v}"
    );
    assert!(v["counterexample"]["calls"].is_array());

    let good = dir.join("good.lua");
    std::fs::write(
        &good,
        "local s = tonumber(redis.call('GET', KEYS[1]) or '0')\n\
         if s < tonumber(ARGV[1]) then return 0 end\n\
         redis.call('DECRBY', KEYS[1], ARGV[1]) return 1\n",
    )
    .unwrap();
    let passed = run(&["exercise", "check", "reserve", good.to_str().unwrap()]);
    assert_eq!(passed.status.code(), Some(0), "{passed:?}");
    assert!(String::from_utf8_lossy(&passed.stdout).starts_with("PASSED"));

    for args in [
        vec!["exercise", "check", "nosuch", good.to_str().unwrap()],
        vec!["exercise", "check", "reserve", "/nonexistent/x.lua"],
        vec!["exercise", "show", "nosuch"],
        vec!["exercise", "check", "reserve"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `check_solution` over the socket: one `solution_verdict`, or one clear `error` that runs
/// nothing (an unknown exercise, a script too big, a second check from the same address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_solution_over_the_socket() {
    let redis = TestRedis::start();
    let server = crate::common::TestServer::start(redis.store.clone(), 4).await;
    let mut c = server.client().await;
    let hello = c.hello().await;
    assert_eq!(hello.exercises.len(), exercises::all().len());
    assert!(hello.exercises.iter().all(|e| !e.starter.is_empty()));
    c.send_json(serde_json::json!({"type": "check_solution", "exercise": "reserve", "source": exercise("reserve").starter}))
        .await;
    let verdict = loop {
        match c.next_within(30).await {
            oversold_protocol::ServerMessage::SolutionVerdict(v) => break v,
            oversold_protocol::ServerMessage::RedisStatus { .. } => {}
            other => panic!("expected a verdict, got {other:?}"),
        }
    };
    assert_eq!(verdict.verdict, VerdictCode::Oversold);
    assert!(verdict.counterexample.is_some());
    // Nothing was judged on the server's own Redis.
    let mut raw = redis.raw().await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("oversold:{ws-*")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(keys.is_empty(), "{keys:?}");

    for (frame, code) in [
        (
            serde_json::json!({"type": "check_solution", "exercise": "nosuch", "source": "return 1"}),
            oversold_protocol::ErrorCode::OutOfRange,
        ),
        (
            serde_json::json!({"type": "check_solution", "exercise": "reserve", "source": "x".repeat(9_000)}),
            oversold_protocol::ErrorCode::OutOfRange,
        ),
    ] {
        c.send_json(frame).await;
        assert_eq!(c.expect_error().await.code, code);
    }
    // Two at once from one address: the second is refused, the first answered.
    let mut other = server.client().await;
    other.hello().await;
    let slow = serde_json::json!({"type": "check_solution", "exercise": "short_script", "source": exercise("short_script").reference});
    c.send_json(slow.clone()).await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    other.send_json(slow).await;
    assert_eq!(
        other.expect_error().await.code,
        oversold_protocol::ErrorCode::RunInProgress
    );
    assert!(
        matches!(c.next_within(30).await, oversold_protocol::ServerMessage::SolutionVerdict(v) if v.passed)
    );
}

/// The hold's two modes in other styles: a hold that takes first and gives back when short,
/// and a reaper that pops the earliest end until it meets one still running.
const HOLD_POPPING: &str = "\
if ARGV[1] == 'hold' then
  local left = redis.call('DECRBY', KEYS[1], ARGV[2])
  if left < 0 then redis.call('INCRBY', KEYS[1], ARGV[2]) return 0 end
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[4] + ARGV[5], ARGV[3])
  return 1
end
local now, n = tonumber(ARGV[2]), 0
while n < tonumber(ARGV[3]) do
  local first = redis.call('ZPOPMIN', KEYS[2])
  if #first == 0 then break end
  if tonumber(first[2]) > now then redis.call('ZADD', KEYS[2], first[2], first[1]) break end
  redis.call('INCRBY', KEYS[1], redis.call('HGET', KEYS[3], first[1]))
  redis.call('HDEL', KEYS[3], first[1])
  n = n + 1
end
return n";

/// A right hold mode, and a reaper written by `reap` (`due` is the ids due, at most batch).
fn hold_with_reaper(reap: &str) -> String {
    format!(
        "if ARGV[1] == 'hold' then\n\
           local qty = tonumber(ARGV[2])\n\
           if tonumber(redis.call('GET', KEYS[1]) or '0') < qty then return 0 end\n\
           redis.call('DECRBY', KEYS[1], qty)\n\
           redis.call('HSET', KEYS[3], ARGV[3], qty)\n\
           redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[5]), ARGV[3])\n\
           return 1\n\
         end\n\
         {reap}"
    )
}

/// A confirm in another style: the listing decides, and the app's quantity is trusted once
/// the hold is found (the two agree while it stands).
const CONFIRM_BY_LISTING: &str = "\
local ends = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not ends then return 0 end
if tonumber(ARGV[3]) >= tonumber(ends) then return -1 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('INCRBY', KEYS[4], ARGV[2])
return 1";

/// A confirm that finds the hold and checks its end, then settles it with `settle`.
fn confirm_settling(settle: &str) -> String {
    format!(
        "local qty = redis.call('HGET', KEYS[3], ARGV[1])\n\
         if not qty then return 0 end\n\
         if tonumber(ARGV[3]) >= tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1])) then return -1 end\n\
         {settle}\n\
         return 1"
    )
}

/// `hold` and `confirm`: the starters fail the way their stories say (a running hold reaped;
/// a hold sold after the reaper gave it back), correct scripts in other styles pass, and
/// subtly wrong reapers and confirms fail with their verdict and a tape. `confirm`'s crowds
/// race the submission against the shop's own hold-and-reap script.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_and_the_reaper_are_judged_together() {
    let redis = TestRedis::start();
    for (id, want) in [
        ("hold", VerdictCode::WrongAnswer),
        ("confirm", VerdictCode::SoldTwice),
    ] {
        let v = judge(&redis, exercise(id), exercise(id).starter).await;
        println!(
            "{id} starter: {:?} in {} ms: {}",
            v.verdict, v.took_ms, v.message
        );
        assert_eq!(v.verdict, want, "{id}: {v:?}");
        assert!(v.counterexample.is_some_and(|c| !c.tape.is_empty()));
    }

    let passing = [
        ("hold", HOLD_POPPING.to_string()),
        // The reaper reads every due hold first, then writes (as lua/reap_holds.lua does).
        (
            "hold",
            hold_with_reaper(
                "local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])\n\
                 local back = 0\n\
                 for _, id in ipairs(due) do back = back + tonumber(redis.call('HGET', KEYS[3], id)) end\n\
                 if #due > 0 then\n\
                   redis.call('ZREM', KEYS[2], unpack(due))\n\
                   redis.call('HDEL', KEYS[3], unpack(due))\n\
                   redis.call('INCRBY', KEYS[1], back)\n\
                 end\n\
                 return #due",
            ),
        ),
        ("confirm", CONFIRM_BY_LISTING.to_string()),
        (
            "confirm",
            confirm_settling(
                "redis.call('HDEL', KEYS[3], ARGV[1]) redis.call('ZREM', KEYS[2], ARGV[1]) \
                 redis.call('INCRBY', KEYS[4], qty)",
            ),
        ),
    ];
    for (id, source) in &passing {
        let v = judge(&redis, exercise(id), source).await;
        println!("{id} passing: {:?} in {} ms", v.verdict, v.took_ms);
        assert!(v.passed, "{id}: {v:?}\n{source}");
    }

    let failing = [
        // Releases the due holds' units and unlists them, but keeps their records: held and
        // on the shelf at once.
        (
            "hold",
            VerdictCode::SoldTwice,
            hold_with_reaper(
                "local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])\n\
                 for _, id in ipairs(due) do\n\
                   redis.call('INCRBY', KEYS[1], redis.call('HGET', KEYS[3], id))\n\
                   redis.call('ZREM', KEYS[2], id)\n\
                 end\n\
                 return #due",
            ),
        ),
        // Ignores the batch: every due hold in one call.
        (
            "hold",
            VerdictCode::WrongAnswer,
            hold_with_reaper(
                "local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])\n\
                 for _, id in ipairs(due) do\n\
                   redis.call('INCRBY', KEYS[1], redis.call('HGET', KEYS[3], id))\n\
                   redis.call('HDEL', KEYS[3], id) redis.call('ZREM', KEYS[2], id)\n\
                 end\n\
                 return #due",
            ),
        ),
        // Off by one: a hold that ends exactly now is left for the next reap.
        (
            "hold",
            VerdictCode::WrongAnswer,
            hold_with_reaper(
                "local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[2], 'LIMIT', 0, ARGV[3])\n\
                 for _, id in ipairs(due) do\n\
                   redis.call('INCRBY', KEYS[1], redis.call('HGET', KEYS[3], id))\n\
                   redis.call('HDEL', KEYS[3], id) redis.call('ZREM', KEYS[2], id)\n\
                 end\n\
                 return #due",
            ),
        ),
        // Holds whenever anything is left, not when qty is.
        (
            "hold",
            VerdictCode::Oversold,
            HOLD_POPPING.replace(
                "local left = redis.call('DECRBY', KEYS[1], ARGV[2])\n  if left < 0 then",
                "local left = redis.call('DECRBY', KEYS[1], ARGV[2])\n  if left + ARGV[2] <= 0 then",
            ),
        ),
        // Finds the hold but sells it after its end, while the reaper counts it as its own.
        (
            "confirm",
            VerdictCode::WrongAnswer,
            "local qty = redis.call('HGET', KEYS[3], ARGV[1])\n\
             if not qty then return 0 end\n\
             redis.call('HDEL', KEYS[3], ARGV[1]) redis.call('ZREM', KEYS[2], ARGV[1])\n\
             redis.call('INCRBY', KEYS[4], qty) return 1"
                .to_string(),
        ),
        // Counts the sale and leaves the hold where it was: listed, so the reaper gives its
        // units back too.
        (
            "confirm",
            VerdictCode::SoldTwice,
            confirm_settling("redis.call('INCRBY', KEYS[4], qty)"),
        ),
        // Unlists it and counts the sale, but keeps the record: held and sold at once.
        (
            "confirm",
            VerdictCode::SoldTwice,
            confirm_settling(
                "redis.call('ZREM', KEYS[2], ARGV[1]) redis.call('INCRBY', KEYS[4], qty)",
            ),
        ),
        // Forgets the record but leaves it listed: the reaper meets a hold that is not there.
        (
            "confirm",
            VerdictCode::WrongAnswer,
            confirm_settling(
                "redis.call('HDEL', KEYS[3], ARGV[1]) redis.call('INCRBY', KEYS[4], qty)",
            ),
        ),
    ];
    for (id, want, source) in &failing {
        let v = judge(&redis, exercise(id), source).await;
        println!(
            "{id} failing: {:?} in {} ms: {}",
            v.verdict, v.took_ms, v.message
        );
        assert_eq!(v.verdict, *want, "{id}: {v:?}\n{source}");
        let c = v.counterexample.as_ref().expect("a counterexample");
        assert!(!c.tape.is_empty(), "{id}: {v:?}");
        for line in &c.tape {
            println!(
                "  {} {}{} -> {}",
                line.buyer,
                if line.inside { "  " } else { "" },
                line.command,
                line.reply
            );
        }
    }
}

/// `cluster_tags` on the cluster sandbox (three masters this process starts, the check's ACL
/// user on each, the watchdog on the master that serves the keys): the names a submission
/// chooses decide, and a choice without a shared hash tag is refused by Redis itself
/// (`CROSSSLOT`), with the call as its counterexample. Timings are printed for the report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_tags_is_judged_on_a_private_cluster() {
    let ex = exercise("cluster_tags");
    let t = std::time::Instant::now();
    let cluster = ClusterSandbox::start()
        .await
        .expect("the cluster sandbox starts");
    println!("cluster sandbox started in {} ms", t.elapsed().as_millis());
    let check = |source: String| {
        let cluster = &cluster;
        async move {
            let t = std::time::Instant::now();
            let v = service::judge_on_cluster(cluster, ex, &source)
                .await
                .expect("the check ran");
            println!(
                "{:?} in {} ms (judge {} ms): {}",
                v.verdict,
                t.elapsed().as_millis(),
                v.took_ms,
                v.message
            );
            v
        }
    };
    // The reference: one tag, {shop}, in every name.
    let v = check(ex.reference.to_string()).await;
    assert!(v.passed, "{v:?}");
    assert!(v.figures.is_some());

    // The starter: right logic, names without a tag.
    let v = check(ex.starter.to_string()).await;
    assert_eq!(v.verdict, VerdictCode::Crossslot, "{v:?}");
    let c = v.counterexample.as_ref().expect("a counterexample");
    assert_eq!(c.calls.len(), 1, "{c:?}");
    assert_eq!(
        c.calls[0].keys,
        ["stock:phone", "stock:case", "stock:charger"]
    );
    assert!(c.tape[0].reply.contains("CROSSSLOT"), "{c:?}");
    assert!(v.message.contains("CROSSSLOT"), "{}", v.message);

    let body = ex.starter.split_once("\n").unwrap().1;
    // The tag on the part that differs: one slot per product.
    let v = check(format!("-- keys: stock:{{%sku}}\n{body}")).await;
    assert_eq!(v.verdict, VerdictCode::Crossslot, "{v:?}");

    // A shared tag, but the cart starter's logic: a short line gives back only itself.
    let partial = format!("-- keys: {{shop}}:stock:%sku\n{}", exercise("cart").starter);
    let v = check(partial).await;
    assert_eq!(v.verdict, VerdictCode::PartialCart, "{v:?}");
    let c = v.counterexample.as_ref().expect("a counterexample");
    assert!(!c.tape.is_empty());
    assert!(
        c.calls[0]
            .keys
            .iter()
            .all(|k| k.starts_with("{shop}:stock:"))
    );

    // Another style: the tag first, take and give everything back on a short line.
    let other = "-- keys: {cart-shelf}%sku\n\
                 for i = 1, 3 do\n\
                   if redis.call('DECRBY', KEYS[i], ARGV[i]) < 0 then\n\
                     for j = 1, i do redis.call('INCRBY', KEYS[j], ARGV[j]) end\n\
                     return 0\n\
                   end\n\
                 end\n\
                 return 1";
    let v = check(other.to_string()).await;
    assert!(v.passed, "{v:?}");

    // No keys line: nothing runs, and the verdict says what is missing.
    let v = check(exercise("cart").reference.to_string()).await;
    assert_eq!(v.verdict, VerdictCode::ScriptError, "{v:?}");
    assert!(v.message.contains("-- keys:"), "{}", v.message);

    // A loop on the master that serves the keys: the watchdog's SCRIPT KILL reaches it.
    let v = check("-- keys: {s}%sku\nwhile true do end".to_string()).await;
    assert_eq!(v.verdict, VerdictCode::Killed, "{v:?}");

    // On one Redis the lesson cannot be taught: the judge refuses to try.
    let redis = TestRedis::start();
    let target = Target {
        admin: &redis.store,
        student: &redis.store,
        tag: "ws-test",
    };
    assert!(judge::check(&target, ex, ex.reference).await.is_err());
}

/// `oversold exercise check cluster_tags FILE` starts its own cluster: 1 and `crossslot` for
/// the starter, 0 for the reference.
#[test]
fn the_cli_checks_cluster_tags_on_a_cluster_of_its_own() {
    let dir = std::env::temp_dir().join(format!("oversold-cluster-tags-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ex = exercise("cluster_tags");
    for (name, source, code, verdict) in [
        ("starter.lua", ex.starter, 1, "crossslot"),
        ("reference.lua", ex.reference, 0, "passed"),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, source).unwrap();
        let t = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_oversold"))
            .args([
                "exercise",
                "check",
                "cluster_tags",
                file.to_str().unwrap(),
                "--json",
            ])
            .env("REDIS_URL", "redis://127.0.0.1:1")
            .env_remove("DATABASE_URL")
            .output()
            .expect("the binary runs");
        println!("cli {name}: {} ms", t.elapsed().as_millis());
        assert_eq!(out.status.code(), Some(code), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["verdict"], verdict, "{v}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
