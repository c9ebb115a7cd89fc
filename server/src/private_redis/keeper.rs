//! Child processes that die with this process, even when it is SIGKILLed.
//!
//! Linux can send a child a signal when its parent dies (`PR_SET_PDEATHSIG`). Setting it
//! needs code between `fork` and `exec`, which is `unsafe` in Rust (and the workspace forbids
//! `unsafe`), so we let util-linux's `setpriv --pdeathsig KILL` set it and then exec the real
//! program: `setpriv --pdeathsig KILL redis-server ...`.
//!
//! One catch: the kernel's "parent" is the *thread* that forked the child, not the process.
//! Private servers are started from tokio's blocking pool, whose threads exit after 10 s
//! idle, and that would kill a healthy Redis. So every such child is forked by one keeper
//! thread that lives as long as the process (it waits for work for ever).
//!
//! Where `setpriv` is missing (macOS, a minimal container) the child is started as it is,
//! and only a clean exit stops it (Drop).

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};

/// A spawn request: the command, and where to send the child back.
type Job = (Command, Sender<io::Result<Child>>);

/// `program` wrapped so that it is killed when this process dies, if this machine can.
pub fn dies_with_us(program: &str) -> Command {
    if find_on_path("setpriv").is_some() {
        let mut command = Command::new("setpriv");
        command.args(["--pdeathsig", "KILL", program]);
        command
    } else {
        Command::new(program)
    }
}

/// `program` under an address-space limit of `bytes` (util-linux `prlimit --as`), killed when
/// this process dies as [`dies_with_us`] says; `None` where `prlimit` is missing. `prlimit`
/// sets the limit on itself and execs `setpriv`, which execs `program`: one process
/// throughout, so the limit, the death signal and the keeper thread as parent all hold for
/// `program`.
pub fn dies_with_us_within(program: &str, bytes: u64) -> Option<Command> {
    let mut command = Command::new(find_on_path("prlimit")?);
    command.arg(format!("--as={bytes}")).arg("--");
    if find_on_path("setpriv").is_some() {
        command.args(["setpriv", "--pdeathsig", "KILL"]);
    }
    command.arg(program);
    Some(command)
}

/// Spawn `command` from the keeper thread (see the module doc for why that thread).
pub fn spawn(command: Command) -> io::Result<Child> {
    static KEEPER: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (jobs, inbox) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("private-redis-keeper".into())
            .spawn(move || {
                // The sender lives in a static, so this loop never ends: the thread lives
                // exactly as long as the process, which is what the death signal needs.
                for (mut command, reply) in inbox {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("spawn the private-redis keeper thread");
        Mutex::new(jobs)
    });
    let (reply, answer) = mpsc::channel();
    keeper
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .send((command, reply))
        .map_err(|_| io::Error::other("the private-redis keeper thread is gone"))?;
    answer
        .recv()
        .map_err(|_| io::Error::other("the private-redis keeper thread is gone"))?
}

/// The first `name` on `PATH` that is a file.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}
