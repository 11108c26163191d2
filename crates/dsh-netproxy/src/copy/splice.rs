//! Zero-copy forwarding: `splice(2)` from one socket into a pipe and from the
//! pipe into the other socket. The pipe holds references to the kernel's
//! socket pages, so the bytes never cross into user space: no copy in, no copy
//! out (the proxy's two copies were most of its cost).
//!
//! Driven by tokio's readiness on the connection's own task: no thread, and
//! dropping the future (a connection aborted at shutdown) closes the pipe.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::pipe::{fcntl_setpipe_size, pipe_with, splice, PipeFlags, SpliceFlags};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Each pipe's capacity. The default 64 KiB measured slower than copying
/// (a splice per 16 pages); 256 KiB and 1 MiB measured alike.
const PIPE_SIZE: usize = 256 * 1024;

/// Pipe capacity held at once, over all connections. Pipe capacity counts
/// against the user's quota (`fs.pipe-user-pages-soft`, 64 MiB by default);
/// a user over it gets tiny pipes everywhere, the sandboxed commands' own
/// included. Past this budget a direction copies instead.
const PIPE_BUDGET: usize = 16 * 1024 * 1024;

static PIPE_HELD: AtomicUsize = AtomicUsize::new(0);

/// A non-blocking pipe of [`PIPE_SIZE`], counted in [`PIPE_HELD`].
pub(super) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    /// `None` when the budget is spent or no pipe of that size can be had.
    pub(super) fn new() -> Option<Pipe> {
        PIPE_HELD
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                (held + PIPE_SIZE <= PIPE_BUDGET).then_some(held + PIPE_SIZE)
            })
            .ok()?;
        let made = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK).and_then(|(read, write)| {
            fcntl_setpipe_size(&write, PIPE_SIZE)?;
            Ok(Pipe { read, write })
        });
        if made.is_err() {
            PIPE_HELD.fetch_sub(PIPE_SIZE, Ordering::Relaxed);
        }
        made.ok()
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        PIPE_HELD.fetch_sub(PIPE_SIZE, Ordering::Relaxed);
    }
}

const FLAGS: SpliceFlags = SpliceFlags::MOVE.union(SpliceFlags::NONBLOCK);

/// Moves `from` into `to` through `pipe` until `from` ends.
///
/// The pipe is filled only when empty: then a would-block from the first
/// splice can only mean `from` has nothing (not that the pipe is full), so
/// the readiness tokio clears on it is never wrongly cleared.
pub(super) async fn one_way(from: &TcpStream, to: &TcpStream, pipe: &Pipe) -> io::Result<()> {
    loop {
        let n = loop {
            from.readable().await?;
            match from.try_io(Interest::READABLE, || {
                Ok(splice(from, None, &pipe.write, None, PIPE_SIZE, FLAGS)?)
            }) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            return Ok(());
        }
        let mut left = n;
        while left > 0 {
            to.writable().await?;
            match to.try_io(Interest::WRITABLE, || {
                Ok(splice(&pipe.read, None, to, None, left, FLAGS)?)
            }) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(m) => left -= m,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }
}
