//! The workshop's judge on a real Redis: every exercise's reference passes and its starter
//! fails, correct scripts in other styles pass, subtly wrong ones fail with the right
//! verdict, and a failure comes back shrunk, as a tape.

use oversold::workshop::exercises::{self, Exercise};
use oversold::workshop::judge::{self, Target};
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
    for ex in exercises::all() {
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
