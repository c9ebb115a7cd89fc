//! A throwaway `redis-server` on a free loopback port, owned by this process.
//!
//! Used in two places: the server falls back to one when no Redis answers on the
//! default address, and the tests start their own so they can kill and restart it.
//! [`crate::private_cluster`] starts three of them in cluster mode
//! ([`PrivateRedis::start_cluster_node_on`]).
//!
//! A private Redis never outlives this process, however it ends: Drop kills it on a normal
//! exit, and a SIGKILL (or a closed terminal) kills it through the kernel's parent-death
//! signal (see `keeper`). Scratch directories a killed process could not remove are swept
//! by the next start ([`sweep_orphan_dirs`]).
//!
//! [`PrivateRedis::start_with`] adds what a caller running untrusted code needs
//! ([`ExtraConfig`]): more arguments, config lines that must not show in `ps` (a password),
//! fed on stdin, and an address-space limit (`prlimit --as`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod keeper;

/// Why a private Redis could not be started.
#[derive(Debug, thiserror::Error)]
pub enum PrivateRedisError {
    /// `redis-server` is not on PATH.
    #[error(
        "no Redis answered and `redis-server` is not on PATH; install it \
         (Debian/Ubuntu: `apt-get install -y redis-server`, macOS: `brew install redis`) \
         or pass --redis-url redis://HOST:PORT"
    )]
    NotInstalled,
    /// It was found but did not start or did not answer in time.
    #[error("redis-server did not come up on port {port}: {reason}")]
    DidNotStart {
        /// The port it was asked to use.
        port: u16,
        /// What went wrong.
        reason: String,
    },
}

/// A running `redis-server` child. Dropping it kills the process and removes its scratch
/// directory.
#[derive(Debug)]
pub struct PrivateRedis {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    mode: Mode,
    extra: ExtraConfig,
}

/// What [`PrivateRedis::start_with`] adds to a plain private Redis. The default adds nothing.
#[derive(Clone, Default)]
pub struct ExtraConfig {
    /// More `--name value` arguments, after the defaults (where a setting is given twice,
    /// Redis keeps the later one).
    pub args: Vec<String>,
    /// Config-file lines (e.g. `user default on >PASSWORD ...`) fed on stdin
    /// (`redis-server ... -`), so a secret shows neither in `ps` nor in a file. Never shown by
    /// `Debug`.
    pub secret_lines: Option<String>,
    /// An address-space limit in bytes, set with util-linux `prlimit --as` before the server
    /// runs. Without `prlimit` on PATH the start fails rather than run unlimited.
    pub address_space: Option<u64>,
}

impl std::fmt::Debug for ExtraConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtraConfig")
            .field("args", &self.args)
            .field(
                "secret_lines",
                &self.secret_lines.as_ref().map(|_| "<redacted>"),
            )
            .field("address_space", &self.address_space)
            .finish()
    }
}

/// A plain server, or one node of a Redis Cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Standalone,
    /// `cluster-enabled yes`: the node keeps its cluster identity and slots in `nodes.conf`
    /// in its scratch directory, so a restart on the same port rejoins the same cluster.
    ClusterNode,
}

/// How long a cluster node may stay silent before the others mark it failed. Redis's own
/// default is 15 s; 5 s lets a test see a killed master declared failed (and the cluster
/// recover after it returns) in seconds, while a node that is merely slow on a busy
/// 2-core machine is not declared dead.
pub const CLUSTER_NODE_TIMEOUT_MS: u64 = 5000;

/// True when `redis-server` is on `PATH`, so a private one can be started.
pub fn installed() -> bool {
    keeper::find_on_path("redis-server").is_some()
}

impl PrivateRedis {
    /// Start one on a free port (tries a few ports in case another process grabs one first).
    pub fn start() -> Result<Self, PrivateRedisError> {
        Self::start_with(ExtraConfig::default())
    }

    /// [`PrivateRedis::start`], with `extra` on top of the defaults (kept for a restart).
    pub fn start_with(extra: ExtraConfig) -> Result<Self, PrivateRedisError> {
        let mut last = None;
        for _ in 0..5 {
            match Self::start_mode(free_port(), Mode::Standalone, extra.clone()) {
                Ok(r) => return Ok(r),
                Err(e @ PrivateRedisError::NotInstalled) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// Start one on `port`: no persistence, loopback only, its own scratch directory.
    pub fn start_on(port: u16) -> Result<Self, PrivateRedisError> {
        Self::start_mode(port, Mode::Standalone, ExtraConfig::default())
    }

    /// Start one Redis Cluster node on `port` (`cluster-enabled yes`), with no slots yet:
    /// [`crate::private_cluster::PrivateCluster`] forms the cluster from three of these.
    pub fn start_cluster_node_on(port: u16) -> Result<Self, PrivateRedisError> {
        Self::start_mode(port, Mode::ClusterNode, ExtraConfig::default())
    }

    /// [`PrivateRedis::start_cluster_node_on`], with `extra` on top of the defaults (the
    /// workshop's cluster sandbox: its users, limits and address-space cap; kept for a
    /// restart).
    pub fn start_cluster_node_with(
        port: u16,
        extra: ExtraConfig,
    ) -> Result<Self, PrivateRedisError> {
        Self::start_mode(port, Mode::ClusterNode, extra)
    }

    fn start_mode(port: u16, mode: Mode, extra: ExtraConfig) -> Result<Self, PrivateRedisError> {
        let name = match mode {
            Mode::Standalone => "redis",
            Mode::ClusterNode => "cluster-node",
        };
        sweep_orphan_dirs();
        let dir =
            std::env::temp_dir().join(format!("oversold-{name}-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| PrivateRedisError::DidNotStart {
            port,
            reason: format!("cannot create {}: {e}", dir.display()),
        })?;
        let mut me = PrivateRedis {
            child: None,
            port,
            dir,
            mode,
            extra,
        };
        me.spawn()?;
        Ok(me)
    }

    /// Start the process (again) with this server's port, mode and directory, and wait for it
    /// to answer. A cluster node finds its `nodes.conf` there and rejoins its cluster.
    fn spawn(&mut self) -> Result<(), PrivateRedisError> {
        let port = self.port;
        if keeper::find_on_path("redis-server").is_none() {
            return Err(PrivateRedisError::NotInstalled);
        }
        let mut command = self.command()?;
        command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        if self.extra.secret_lines.is_some() {
            command.arg("-").stdin(Stdio::piped());
        }
        let mut child = keeper::spawn(command).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => PrivateRedisError::NotInstalled,
            _ => PrivateRedisError::DidNotStart {
                port,
                reason: e.to_string(),
            },
        })?;
        // Redis reads stdin to its end before it starts; dropping the pipe ends it.
        if let (Some(lines), Some(mut stdin)) = (&self.extra.secret_lines, child.stdin.take()) {
            use std::io::Write;
            let _ = stdin.write_all(lines.as_bytes());
        }
        self.child = Some(child);
        self.wait_until_ready()
    }

    /// The command line: the program (under `prlimit` if asked) and every argument.
    fn command(&self) -> Result<Command, PrivateRedisError> {
        let mut command = match self.extra.address_space {
            None => keeper::dies_with_us("redis-server"),
            Some(bytes) => keeper::dies_with_us_within("redis-server", bytes).ok_or_else(|| {
                PrivateRedisError::DidNotStart {
                    port: self.port,
                    reason: "`prlimit` (util-linux) is not on PATH, and this server must run \
                             under an address-space limit"
                        .into(),
                }
            })?,
        };
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            // DEBUG (e.g. DEBUG SLEEP, which the fault tests use to stall Redis) is refused by
            // default since Redis 7; `local` allows it from loopback only, and this server
            // listens on loopback only anyway.
            .args(["--enable-debug-command", "local"])
            .arg("--dir")
            .arg(&self.dir);
        if self.mode == Mode::ClusterNode {
            command
                .args(["--cluster-enabled", "yes"])
                .args(["--cluster-config-file", "nodes.conf"])
                .args([
                    "--cluster-node-timeout",
                    &CLUSTER_NODE_TIMEOUT_MS.to_string(),
                ]);
        }
        command.args(&self.extra.args);
        Ok(command)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// `127.0.0.1:PORT`, as a cluster seed.
    pub fn host_port(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The process id while it runs (the `redis-server` itself: `setpriv` and `prlimit` exec
    /// it in their own process).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// How the process ended, once it has ended by itself (a crash, an abort); `None` while
    /// it runs or after [`PrivateRedis::stop`].
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// True while the process runs (not [`PrivateRedis::stop`]ped).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Start it again after [`PrivateRedis::stop`], on the same port and with the same
    /// directory. Without persistence its data is gone; a cluster node keeps its identity
    /// and slots (its `nodes.conf`). Does nothing if it is running.
    pub fn restart(&mut self) -> Result<(), PrivateRedisError> {
        if self.child.is_some() {
            return Ok(());
        }
        self.spawn()
    }

    /// Kill it now (tests use this to simulate an outage). Safe to call twice.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stop the process where it stands (`SIGSTOP`): it keeps its port and connections but
    /// runs nothing, answers nothing and reads nothing, as a frozen VM or a long pause
    /// would. [`PrivateRedis::thaw`] resumes it; Drop kills it either way.
    pub fn freeze(&self) -> std::io::Result<()> {
        self.signal("STOP")
    }

    /// Resume a [`PrivateRedis::freeze`]d process (`SIGCONT`).
    pub fn thaw(&self) -> std::io::Result<()> {
        self.signal("CONT")
    }

    /// Send `SIG<name>` with util-linux's `kill` (the workspace forbids `unsafe`, so no
    /// `libc::kill`).
    fn signal(&self, name: &str) -> std::io::Result<()> {
        let pid = self
            .pid()
            .ok_or_else(|| std::io::Error::other("the redis-server is not running"))?;
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(pid.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "kill -{name} {pid} exited with {status}"
            )))
        }
    }

    fn wait_until_ready(&mut self) -> Result<(), PrivateRedisError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(PrivateRedisError::DidNotStart {
                    port: self.port,
                    reason: format!("exited with {status} (port in use?)"),
                });
            }
            if ping_blocking(self.port) {
                // A port handed out free may be taken by another server before ours binds it
                // (ours then exits); its PONG must not pass for ours.
                if self.pid().and_then(|pid| answered_by(self.port, pid)) == Some(false) {
                    self.stop();
                    return Err(PrivateRedisError::DidNotStart {
                        port: self.port,
                        reason: "another server answers on this port".into(),
                    });
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(PrivateRedisError::DidNotStart {
                    port: self.port,
                    reason: "no PONG within 10 s".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Remove the scratch directories of private Redis servers whose process is gone: a server
/// that was SIGKILLed could not run its Drop, and its `redis-server` died with it (the
/// parent-death signal) but left its directory. Directory names carry the owner's pid.
pub fn sweep_orphan_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = owner_pid(&name.to_string_lossy()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The owner's pid in `oversold-redis-PID-PORT` or `oversold-cluster-node-PID-PORT`.
fn owner_pid(dir_name: &str) -> Option<u32> {
    let rest = dir_name
        .strip_prefix("oversold-redis-")
        .or_else(|| dir_name.strip_prefix("oversold-cluster-node-"))?;
    let (pid, port) = rest.split_once('-')?;
    port.parse::<u16>().ok()?;
    pid.parse().ok()
}

/// A port the OS just handed out. Another process could take it before we bind it,
/// which is why [`PrivateRedis::start`] retries.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// Whether the server answering on `port` is process `pid` (`INFO server`'s `process_id`);
/// `None` when it cannot tell (a server that asks for a password first, a garbled answer).
fn answered_by(port: u16, pid: u32) -> Option<bool> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
    s.write_all(b"INFO server\r\n").ok()?;
    // The reply is one bulk string of a few KB; `process_id` is in its first lines.
    let mut buf = vec![0u8; 8192];
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
        if buf[0] == b'-' {
            return None; // an error first (`-NOAUTH`): it will not say
        }
        // Only a whole line counts: `process_id:12` may be the start of `process_id:1234`.
        let text = String::from_utf8_lossy(&buf[..got]);
        let Some((_, rest)) = text.split_once("\r\nprocess_id:") else {
            continue;
        };
        if let Some((id, _)) = rest.split_once("\r\n") {
            return id.trim().parse::<u32>().ok().map(|p| p == pid);
        }
    }
    None
}

/// A plain-socket PING, so readiness checks need no async runtime. A server that asks for a
/// password first (`-NOAUTH`) is up too.
fn ping_blocking(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).is_ok() && (&buf == b"+PONG\r\n" || &buf == b"-NOAUTH")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_answers_for_the_server_that_holds_it_and_no_other() {
        let redis = PrivateRedis::start().expect("redis-server on PATH");
        let pid = redis.pid().expect("running");
        assert_eq!(answered_by(redis.port(), pid), Some(true));
        assert_eq!(answered_by(redis.port(), pid + 1), Some(false));
        // A second server asked for the same port fails, whether it exits before the first
        // PONG or the PONG comes from the first server.
        let second = PrivateRedis::start_on(redis.port());
        assert!(
            matches!(second, Err(PrivateRedisError::DidNotStart { .. })),
            "{second:?}"
        );
    }
}
