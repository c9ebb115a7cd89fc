//! One sandbox `redis-server` and the two users it was started with: its arguments, its ACL
//! lines (fed on stdin, with the passwords), its address-space limit, a restart, its stores.

use rand::Rng;

use super::{ADDRESS_SPACE, BUSY_THRESHOLD, MAX_REPLY, MAXMEMORY, STUDENT_COMMANDS, SandboxError};
use crate::private_redis::{ExtraConfig, PrivateRedis, PrivateRedisError};
use crate::store::Store;
use crate::store::sandbox::key_prefix;

/// A password. No `Display`, and `Debug` shows none of it, so it cannot reach a log or an
/// error by accident; only a URL built in [`url`] carries it.
#[derive(Clone)]
pub(super) struct Secret(String);

impl Secret {
    /// 256 bits from the OS-seeded CSPRNG, as hex (safe in a URL and an ACL line).
    pub(super) fn fresh() -> Self {
        let bytes: [u8; 32] = rand::rng().random();
        Secret(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The password itself, for a start that needs it beside the ACL lines (the cluster
    /// sandbox forms its cluster as the admin).
    pub(super) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// A check's server: the process, its tag, and a store per user.
pub(super) struct Running {
    /// `None` only when a restart failed: the lease then fails its commands, and the next
    /// lease starts a new server.
    server: Option<PrivateRedis>,
    /// How it was started, kept for a restart (its `Debug` hides the ACL lines).
    extra: ExtraConfig,
    port: u16,
    tag: String,
    admin_password: Secret,
    student_password: Secret,
    admin: Store,
    student: Store,
}

impl Running {
    /// A new server with a fresh tag, a fresh admin and a fresh student user.
    pub(super) async fn start() -> Result<Running, SandboxError> {
        let tag = format!("ws-{:06x}", rand::rng().random::<u32>() & 0xff_ffff);
        let admin_password = Secret::fresh();
        let student_password = Secret::fresh();
        let extra = ExtraConfig {
            args: arguments(),
            secret_lines: Some(acl_lines(
                &key_prefix(&tag),
                &tag,
                &admin_password,
                &student_password,
            )),
            address_space: Some(ADDRESS_SPACE),
        };
        let given = extra.clone();
        let server = off_the_runtime(move || PrivateRedis::start_with(given)).await?;
        let port = server.port();
        Ok(Running {
            admin: open(port, "default", &admin_password)?,
            student: open(port, &tag, &student_password)?,
            server: Some(server),
            extra,
            port,
            tag,
            admin_password,
            student_password,
        })
    }

    /// Kill the server and start a new one with the same users: on the same port if it can
    /// (so the stores a check cloned still reach it), else on a new one.
    pub(super) async fn restart(&mut self) -> Result<(), SandboxError> {
        let old = self.server.take();
        let extra = self.extra.clone();
        let server = off_the_runtime(move || {
            if let Some(mut server) = old {
                // SIGKILL, not SHUTDOWN NOSAVE: the same end for a server that saves nothing,
                // and it needs no answer from a Redis that may be stuck or gone.
                server.stop();
                if server.restart().is_ok() {
                    return Ok(server);
                }
            }
            PrivateRedis::start_with(extra)
        })
        .await?;
        if server.port() != self.port {
            self.port = server.port();
            self.admin = open(self.port, "default", &self.admin_password)?;
            self.student = open(self.port, &self.tag, &self.student_password)?;
        }
        self.server = Some(server);
        Ok(())
    }

    /// How the process ended, if it ended by itself.
    pub(super) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.server.as_mut()?.exit_status()
    }

    /// True while the process runs.
    pub(super) fn is_alive(&mut self) -> bool {
        self.server.as_ref().is_some_and(PrivateRedis::is_running) && self.exit_status().is_none()
    }

    pub(super) fn pid(&self) -> Option<u32> {
        self.server.as_ref()?.pid()
    }

    pub(super) fn tag(&self) -> &str {
        &self.tag
    }

    pub(super) fn admin(&self) -> &Store {
        &self.admin
    }

    pub(super) fn student(&self) -> &Store {
        &self.student
    }

    #[cfg(feature = "test-support")]
    pub(super) fn admin_password(&self) -> &str {
        &self.admin_password.0
    }
}

impl super::watchdog::Watched for Running {
    fn tag(&self) -> &str {
        &self.tag
    }

    fn admin(&self) -> &Store {
        &self.admin
    }

    fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        Running::exit_status(self)
    }

    async fn restart(&mut self) -> Result<(), SandboxError> {
        Running::restart(self).await
    }
}

/// Port, pid and tag: never a password.
impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("port", &self.port)
            .field("pid", &self.pid())
            .field("tag", &self.tag)
            .finish_non_exhaustive()
    }
}

/// The sandbox's settings on top of a private Redis's (loopback, no persistence), each
/// explained at its constant in the parent module.
pub(super) fn arguments() -> Vec<String> {
    let threshold = BUSY_THRESHOLD.as_millis().to_string();
    let reply_limit = format!("normal {MAX_REPLY} 0 0");
    [
        "--busy-reply-threshold",
        threshold.as_str(),
        "--maxmemory",
        MAXMEMORY,
        "--maxmemory-policy",
        "noeviction",
        // A private Redis allows DEBUG from loopback (the fault tests stall Redis with it);
        // here it is off, for the admin too. The later setting wins.
        "--enable-debug-command",
        "no",
        "--protected-mode",
        "yes",
        "--client-output-buffer-limit",
        reply_limit.as_str(),
    ]
    .map(String::from)
    .to_vec()
}

/// The ACL: the default user (the admin) gets a password and keeps everything; the check's
/// user gets its keys (`prefix*`) and [`STUDENT_COMMANDS`], nothing else (`-@all` first, no
/// channels).
pub(super) fn acl_lines(prefix: &str, tag: &str, admin: &Secret, student: &Secret) -> String {
    let commands: String = STUDENT_COMMANDS.iter().map(|c| format!(" +{c}")).collect();
    format!(
        "user default on resetpass >{admin} resetkeys ~* resetchannels &* +@all\n\
         user {tag} on resetpass >{student} resetkeys ~{prefix}* resetchannels -@all{commands}\n",
        admin = admin.0,
        student = student.0,
    )
}

/// A store that logs in as `user`. The URL holds the password; the redis crate's `Debug`
/// of its connection info shows `<redacted>` instead, and `Store::display_addr` leaves it out.
pub(super) fn open(port: u16, user: &str, password: &Secret) -> Result<Store, SandboxError> {
    Store::open(&url(port, user, password)).map_err(SandboxError::Store)
}

pub(super) fn url(port: u16, user: &str, password: &Secret) -> String {
    format!("redis://{user}:{}@127.0.0.1:{port}", password.0)
}

/// Start (or stop and start) a server on tokio's blocking pool: it sleeps while it waits
/// for Redis to answer.
pub(super) async fn off_the_runtime<T: Send + 'static>(
    start: impl FnOnce() -> Result<T, PrivateRedisError> + Send + 'static,
) -> Result<T, SandboxError> {
    tokio::task::spawn_blocking(start)
        .await
        .map_err(|e| {
            SandboxError::Start(PrivateRedisError::DidNotStart {
                port: 0,
                reason: format!("the start was cancelled: {e}"),
            })
        })?
        .map_err(SandboxError::Start)
}
