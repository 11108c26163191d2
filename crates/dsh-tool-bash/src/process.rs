//! A spawned shell, whichever way it was started: waiting for it, how it
//! ended, and reading its output. Foreground calls and the tasks that
//! outlive a call (background tasks, sessions) both build on this.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

use crate::sys;

/// How long to wait for the pipes to close once a call's processes are dead.
pub(crate) const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// How long to wait for killed processes to disappear.
pub(crate) const KILL_WAIT: Duration = Duration::from_secs(5);
/// Size of a pipe read.
pub(crate) const READ_CHUNK: usize = 256 * 1024;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it; its name, e.g. `SIGKILL`.
    Signal(String),
}

impl Exit {
    pub(crate) fn from_status(status: ExitStatus) -> Exit {
        match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(signal)) => Exit::Signal(sys::signal_name(signal)),
            // Neither: not possible for a process that ended.
            (None, None) => Exit::Code(-1),
        }
    }

    /// The marker line: `[exit code: N]` or `[killed by signal: SIG]`.
    pub fn marker(&self) -> String {
        match self {
            Exit::Code(code) => format!("[exit code: {code}]"),
            Exit::Signal(name) => format!("[killed by signal: {name}]"),
        }
    }
}

/// The shell process of a call or background task.
#[derive(Debug)]
pub(crate) enum Proc {
    /// Started by `tokio::process` (process-tree containment, or a cgroup the
    /// child joined itself); killed on drop.
    Tokio(tokio::process::Child),
    /// Started by `clone3` straight into its cgroup.
    Raw(RawChild),
}

impl Proc {
    /// The shell's process id (0 once a `tokio` child has been reaped).
    pub(crate) fn pid(&self) -> i32 {
        match self {
            Proc::Tokio(child) => child.id().map_or(0, |id| id as i32),
            Proc::Raw(child) => child.pid,
        }
    }

    /// Waits for the shell to exit. Cancel safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Proc::Tokio(child) => child.wait().await,
            Proc::Raw(child) => child.wait().await,
        }
    }
}

/// A child we reap ourselves, watched through its pidfd.
#[derive(Debug)]
pub(crate) struct RawChild {
    pid: i32,
    pidfd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
}

impl RawChild {
    /// Wraps a child started by [`sys::spawn_into_cgroup`]. Needs a Tokio runtime.
    pub(crate) fn new(pid: i32, pidfd: OwnedFd) -> io::Result<RawChild> {
        match sys::watch_pidfd(pidfd) {
            Ok(pidfd) => Ok(RawChild {
                pid,
                pidfd,
                status: None,
            }),
            Err(e) => {
                let _ = sys::signal(pid, sys::SIGKILL);
                sys::reap_blocking(pid);
                Err(e)
            }
        }
    }

    async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.status {
                return Ok(status);
            }
            if let Some(raw) = sys::try_reap(self.pid)? {
                self.status = Some(ExitStatus::from_raw(raw));
                continue;
            }
            // The pidfd turns readable when the process exits.
            let mut ready = self.pidfd.readable().await?;
            ready.clear_ready();
        }
    }
}

impl Drop for RawChild {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // Not reaped, so the pid cannot have been reused.
        let _ = sys::signal(self.pid, sys::SIGKILL);
        if let Ok(Some(_)) = sys::try_reap(self.pid) {
            return;
        }
        let pid = self.pid;
        let spawned = std::thread::Builder::new()
            .name("dsh-bash-reaper".into())
            .spawn(move || sys::reap_blocking(pid));
        if spawned.is_err() {
            sys::reap_blocking(pid);
        }
    }
}

/// A pipe for a child's output: our non-blocking read end, and the child's
/// blocking write end (with a large buffer, so fast writers wake us less).
pub(crate) fn output_pipe() -> io::Result<(pipe::Receiver, OwnedFd)> {
    let (sender, receiver) = pipe::pipe()?;
    let writer = sender.into_blocking_fd()?;
    sys::set_pipe_size(std::os::fd::AsFd::as_fd(&writer), 1 << 20);
    Ok((receiver, writer))
}

/// A read buffer that starts small and grows (up to [`READ_CHUNK`]) when
/// reads fill it, so quiet commands cost no large allocation.
pub(crate) struct ReadBuf(Vec<u8>);

impl ReadBuf {
    pub(crate) fn new() -> Self {
        ReadBuf(vec![0; 8 * 1024])
    }

    /// Where to read into.
    pub(crate) fn space(&mut self) -> &mut [u8] {
        &mut self.0
    }

    /// The `n` bytes just read; grows the buffer if they filled it.
    pub(crate) fn filled(&mut self, n: usize) -> &[u8] {
        if n == self.0.len() && n < READ_CHUNK {
            let mut bigger = vec![0; (n * 4).min(READ_CHUNK)];
            bigger[..n].copy_from_slice(&self.0[..n]);
            self.0 = bigger;
        }
        &self.0[..n]
    }
}
