//! A server that is killed hard (SIGKILL, a closed terminal) leaves no `redis-server` of its
//! own running and, after the next start, no scratch directory either.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_takes_its_private_redis_with_it() {
    let children = kill_serve_with("--private-redis", 1).await;
    assert_all_gone(&children);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_takes_its_private_cluster_with_it() {
    let children = kill_serve_with("--private-cluster", 3).await;
    assert_all_gone(&children);
}

/// The next private Redis sweeps the directories a killed server could not remove.
#[test]
fn the_next_start_removes_a_killed_servers_scratch_directory() {
    let mut victim = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .arg("private-redis")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = victim.id();
    let dir_of_victim = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|name| name.starts_with(&format!("oversold-redis-{pid}-")))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while dir_of_victim().is_none() {
        assert!(Instant::now() < deadline, "no scratch directory appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Give it a moment to finish starting, then kill it where it stands.
    std::thread::sleep(Duration::from_millis(300));
    victim.kill().unwrap();
    victim.wait().unwrap();
    let left = dir_of_victim().expect("SIGKILL runs no clean-up");
    let _next = oversold::private_redis::PrivateRedis::start().unwrap();
    assert!(
        !Path::new(&std::env::temp_dir().join(&left)).exists(),
        "{left} was not swept"
    );
}

/// Start `oversold serve FLAG`, wait until it listens, note its `redis-server` children
/// (`expected` of them), SIGKILL it and return the children's pids.
async fn kill_serve_with(flag: &str, expected: usize) -> Vec<u32> {
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args(["serve", flag, "--addr", "127.0.0.1:0"])
        .args(["--assets", "/nonexistent-oversold-dist"])
        .env_remove("REDIS_URL")
        .env_remove("REDIS_CLUSTER")
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
        .await
        .expect("it listens within a minute")
        .unwrap()
        .expect("the listening line");
    assert!(line.starts_with("oversold listening on"), "{line}");
    let pid = server.id().unwrap();
    let children = redis_children_of(pid);
    assert_eq!(children.len(), expected, "redis-server children of {pid}");
    server.kill().await.unwrap(); // SIGKILL: no Drop, no signal handler runs
    server.wait().await.unwrap();
    children
}

/// Every pid in `pids` ends within a few seconds (a zombie waiting for its new parent to
/// reap it counts as ended: it holds no port and runs nothing).
fn assert_all_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|&p| running(p)).collect();
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "redis-server {alive:?} outlived the server that started it"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pids of the `redis-server` processes whose parent is `parent`.
fn redis_children_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            let Some((name, _state, ppid)) = stat(pid) else {
                return false;
            };
            ppid == parent && name.starts_with("redis-server")
        })
        .collect()
}

fn running(pid: u32) -> bool {
    stat(pid).is_some_and(|(_, state, _)| state != 'Z' && state != 'X')
}

/// `(command name, state, parent pid)` from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(String, char, u32)> {
    let raw = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "PID (NAME) STATE PPID ...": the name may hold spaces, so split at the last ')'.
    let open = raw.find('(')?;
    let close = raw.rfind(')')?;
    let name = raw[open + 1..close].to_string();
    let mut rest = raw[close + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((name, state, ppid))
}
