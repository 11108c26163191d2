//! A spawned shell, whichever way it was started.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

use crate::sys;

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
