//! The executor's end of an interactive session's pseudo-terminal: its
//! master end, read and written without blocking, and how recently calls used
//! it (the least recently used idle session is the one closed to make room).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Mutex;

use tokio::io::unix::AsyncFd;
use tokio::time::Instant;

use crate::contain::Contained;
use crate::sys;

/// A session's terminal: its master end and what writes need.
#[derive(Debug)]
pub(crate) struct Terminal {
    master: AsyncFd<File>,
    /// The session's command, for permission checks of its input.
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    /// Whether the session runs read-only (the hold, or a read-only
    /// sandbox): input typed into it is then held too.
    pub(crate) held_read_only: bool,
    usage: Mutex<Usage>,
    /// One write at a time, so keystrokes of two calls never interleave.
    writing: tokio::sync::Mutex<()>,
}

#[derive(Debug)]
struct Usage {
    last_used: Instant,
    /// Calls using the session now.
    busy: usize,
}

impl Terminal {
    /// Watches `master`, the master end of the terminal `command` runs in
    /// (in `cwd`). The call that starts the session counts as using it.
    ///
    /// Needs a Tokio runtime.
    pub(crate) fn open(
        master: OwnedFd,
        command: String,
        cwd: PathBuf,
        held_read_only: bool,
    ) -> io::Result<Terminal> {
        Ok(Terminal {
            master: sys::watch_terminal(master)?,
            command,
            cwd,
            held_read_only,
            usage: Mutex::new(Usage {
                last_used: Instant::now(),
                busy: 1,
            }),
            writing: tokio::sync::Mutex::new(()),
        })
    }

    /// Notes a call starting (`1`) or ending (`-1`) its use of the session.
    pub(crate) fn touch(&self, delta: isize) {
        let mut usage = self.usage.lock().unwrap_or_else(|p| p.into_inner());
        usage.last_used = Instant::now();
        usage.busy = usage.busy.saturating_add_signed(delta);
    }

    /// When a call last used the session, if no call is using it now.
    pub(crate) fn idle_since(&self) -> Option<Instant> {
        let usage = self.usage.lock().ok()?;
        (usage.busy == 0).then_some(usage.last_used)
    }

    /// Writes all of `bytes` unless `deadline` passes first; the bytes
    /// written. Waits for writes of other calls to finish first.
    pub(crate) async fn write(&self, bytes: &[u8], deadline: Instant) -> io::Result<usize> {
        let _one_writer = self.writing.lock().await;
        let mut written = 0;
        while written < bytes.len() {
            let ready = tokio::select! {
                ready = self.master.writable() => ready?,
                _ = tokio::time::sleep_until(deadline) => return Ok(written),
            };
            let mut guard = ready;
            match guard.try_io(|fd| fd.get_ref().write(&bytes[written..])) {
                Ok(Ok(n)) => written += n,
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(written)
    }

    /// Reads what the session printed; an error (`EIO`) once every slave end
    /// is closed.
    pub(crate) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.master.readable().await?;
            if let Ok(result) = guard.try_io(|fd| fd.get_ref().read(buf)) {
                return result;
            }
        }
    }

    /// Whether a shell is among the session's processes: its input may then
    /// be run as commands, now or later (typed ahead).
    pub(crate) fn runs_shell(contained: &Contained) -> bool {
        contained.pids().into_iter().any(|pid| {
            match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
                Ok(comm) => SHELLS.contains(&comm.trim()),
                // Gone or unreadable: cannot tell, so assume the worst.
                Err(_) => true,
            }
        })
    }
}

/// Programs that read their input as commands to run.
const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "tcsh", "csh", "busybox",
    "rbash", "oksh", "pdksh", "nu", "xonsh", "elvish", "pwsh",
];
