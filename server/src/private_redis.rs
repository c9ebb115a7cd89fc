//! A throwaway `redis-server` on a free loopback port, owned by this process.
//!
//! Used in two places: the server falls back to one when no Redis answers on the
//! default address, and the tests start their own so they can kill and restart it.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// A running `redis-server` child. Dropping it kills the process.
#[derive(Debug)]
pub struct PrivateRedis {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl PrivateRedis {
    /// Start one on a free port (tries a few ports in case another process grabs one first).
    pub fn start() -> Result<Self, PrivateRedisError> {
        let mut last = None;
        for _ in 0..5 {
            match Self::start_on(free_port()) {
                Ok(r) => return Ok(r),
                Err(e @ PrivateRedisError::NotInstalled) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// Start one on `port`: no persistence, loopback only, its own scratch directory.
    pub fn start_on(port: u16) -> Result<Self, PrivateRedisError> {
        let dir =
            std::env::temp_dir().join(format!("oversold-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| PrivateRedisError::DidNotStart {
            port,
            reason: format!("cannot create {}: {e}", dir.display()),
        })?;
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
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
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => PrivateRedisError::NotInstalled,
                _ => PrivateRedisError::DidNotStart {
                    port,
                    reason: e.to_string(),
                },
            })?;
        let mut me = PrivateRedis {
            child: Some(child),
            port,
            dir,
        };
        me.wait_until_ready()?;
        Ok(me)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kill it now (tests use this to simulate an outage). Safe to call twice.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
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

/// A port the OS just handed out. Another process could take it before we bind it,
/// which is why [`PrivateRedis::start`] retries.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// A plain-socket PING, so readiness checks need no async runtime.
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
    s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}
