//! The crate's only `unsafe` code: starting a child straight into a cgroup
//! (`clone3`), the child-side setup run between `fork` and `exec`, reaping,
//! watching a pidfd, and sending signals.
#![allow(unsafe_code)]

use std::ffi::{c_char, CString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// `SIGTERM`: asks a process to stop.
pub(crate) const SIGTERM: i32 = libc::SIGTERM;
/// `SIGKILL`: stops a process, no questions asked.
pub(crate) const SIGKILL: i32 = libc::SIGKILL;
/// `SIGSTOP`: freezes a process (it can then neither fork nor exit by itself).
pub(crate) const SIGSTOP: i32 = libc::SIGSTOP;

/// Prepares `cmd` so that its child, between `fork` and `exec`:
///
/// 1. moves itself into the cgroup whose `cgroup.procs` is open as `cgroup_procs`
///    (when given), so that everything it later starts is born in that cgroup;
/// 2. starts a new session (`setsid`), hence its own process group, with no
///    controlling terminal;
/// 3. asks for `SIGKILL` when the thread that spawned it dies (`PR_SET_PDEATHSIG`),
///    and gives up if the parent is already gone.
///
/// `cgroup_procs` must stay open until `spawn` returns.
pub(crate) fn configure_child(
    cmd: &mut tokio::process::Command,
    cgroup_procs: Option<RawFd>,
    confinement: Option<Arc<dsh_sandbox::ChildPlan>>,
    controlling_tty: bool,
) {
    // Read in the parent: the child compares it with `getppid()`.
    let parent = std::process::id() as libc::pid_t;
    let setup = move || -> io::Result<()> {
        if let Some(fd) = cgroup_procs {
            // SAFETY: `write` is async-signal-safe; the buffer is a static byte
            // string and `fd` is open in the child (it was open in the parent at
            // fork time and is only closed, by CLOEXEC, at exec).
            let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
            if written != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        // SAFETY: `setsid` is async-signal-safe and takes no pointers.
        if unsafe { libc::setsid() } == -1 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `ioctl(TIOCSCTTY)` on stdin (already the terminal's slave
        // end) takes an integer argument.
        if controlling_tty && unsafe { libc::ioctl(0, libc::TIOCSCTTY, 0) } == -1 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `prctl(PR_SET_PDEATHSIG, sig)` is a plain syscall; the unused
        // variadic arguments are passed as zeros, as the man page asks.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        if rc == -1 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `getppid` is async-signal-safe and cannot fail.
        if unsafe { libc::getppid() } != parent {
            // The parent died before the death signal was armed.
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        match &confinement {
            Some(plan) => plan.apply()?,
            None => dsh_sandbox::close_inherited()?,
        }
        Ok(())
    };
    // SAFETY: the closure only makes async-signal-safe system calls (write,
    // setsid, ioctl, prctl, getppid, close_range, and those of
    // `ChildPlan::apply`), allocates nothing and takes no locks, which is
    // what `pre_exec` requires of code run in a forked copy of a
    // multi-threaded process. Errors are reported through `io::Error` values
    // built from errno, which do not allocate either.
    unsafe {
        cmd.pre_exec(setup);
    }
}

/// Sends `signal` to the process `pid`. `ESRCH` (already gone) counts as success.
pub(crate) fn signal(pid: i32, signal: i32) -> io::Result<()> {
    if pid <= 0 {
        // 0 and negative values address groups or everything: never meant here.
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: `kill` takes no pointers; `pid` is positive, so it addresses
    // exactly one process.
    if unsafe { libc::kill(pid, signal) } == -1 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ESRCH) {
            return Err(err);
        }
    }
    Ok(())
}

/// Sends `signal` to every process of the process group `pgid`.
/// `ESRCH` (the group is empty) counts as success.
pub(crate) fn signal_group(pgid: i32, signal: i32) -> io::Result<()> {
    if pgid <= 1 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: `kill` takes no pointers; `-pgid` with `pgid > 1` addresses one
    // process group, never "every process" (-1) or our own group (0).
    if unsafe { libc::kill(-pgid, signal) } == -1 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ESRCH) {
            return Err(err);
        }
    }
    Ok(())
}

/// `clone3` flag: start the child in the cgroup given by `CloneArgs::cgroup`.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `struct clone_args` of `clone3(2)` (version 2, with `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Everything a child needs to become `program`, prepared (allocated) before
/// the fork, since the child may not allocate.
pub(crate) struct ExecPlan {
    pub(crate) program: CString,
    pub(crate) argv: Vec<CString>,
    pub(crate) envp: Vec<CString>,
    pub(crate) cwd: CString,
    /// The child's stdin, stdout and stderr (they may be the same descriptor).
    pub(crate) stdio: [RawFd; 3],
    /// The confinement the child applies before `exec`.
    pub(crate) confinement: Option<Arc<dsh_sandbox::ChildPlan>>,
    /// Stdin is a terminal that becomes the child's controlling terminal.
    pub(crate) controlling_tty: bool,
}

/// Why [`spawn_into_cgroup`] failed.
pub(crate) enum SpawnFailure {
    /// `clone3` itself failed: nothing ran.
    Clone(io::Error),
    /// The child started but could not set itself up or `exec` (reported
    /// through a pipe; the child has been reaped).
    Child(io::Error),
}

/// Starts `plan` as a new process that is born in the cgroup `cgroup_dir`
/// (`clone3` with `CLONE_INTO_CGROUP`): unlike moving a running process into a
/// cgroup, this takes no global lock that waits for an RCU grace period. The
/// child gets a new session, stdin/stdout/stderr from `plan.stdio`, the
/// default signal mask and `SIGPIPE` disposition, and `SIGKILL` on parent death.
///
/// Returns the child's pid and a pidfd (readable once it exits). The caller
/// must reap it ([`try_reap`], [`reap_blocking`]).
pub(crate) fn spawn_into_cgroup(
    plan: &ExecPlan,
    cgroup_dir: BorrowedFd<'_>,
) -> Result<(i32, OwnedFd), SpawnFailure> {
    let argv: Vec<*const c_char> = plan
        .argv
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const c_char> = plan
        .envp
        .iter()
        .map(|e| e.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let (err_read, err_write) = cloexec_pipe().map_err(SpawnFailure::Child)?;
    // SAFETY: `getpid` cannot fail and takes no pointers.
    let parent = unsafe { libc::getpid() };
    let mut pidfd: libc::c_int = -1;
    let args = CloneArgs {
        flags: libc::CLONE_PIDFD as u64 | CLONE_INTO_CGROUP,
        pidfd: &mut pidfd as *mut libc::c_int as u64,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: cgroup_dir.as_raw_fd() as u64,
        ..CloneArgs::default()
    };
    // SAFETY: `args` is a valid, fully initialised `clone_args` of the size
    // passed; `pidfd` outlives the call. Without CLONE_VM the child gets a
    // copy of the address space, like `fork`, and continues below with its
    // own copy of every variable.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if ret < 0 {
        return Err(SpawnFailure::Clone(io::Error::last_os_error()));
    }
    if ret == 0 {
        // SAFETY: we are the child of a (possibly multi-threaded) process;
        // `exec_child` only makes async-signal-safe system calls on data
        // prepared before the clone, and never returns.
        unsafe {
            exec_child(
                plan,
                argv.as_ptr(),
                envp.as_ptr(),
                err_write.as_raw_fd(),
                parent,
            )
        }
    }
    let pid = ret as i32;
    // SAFETY: with CLONE_PIDFD the kernel stored a new, owned, CLOEXEC pidfd.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    drop(err_write);
    let mut errno = [0u8; 4];
    let n = loop {
        // SAFETY: reads at most 4 bytes into a 4-byte buffer from an open fd.
        let n = unsafe { libc::read(err_read.as_raw_fd(), errno.as_mut_ptr().cast(), 4) };
        if n == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        break n;
    };
    if n == 0 {
        // The pipe closed at exec: the child is running `program`.
        return Ok((pid, pidfd));
    }
    let err = if n == 4 {
        io::Error::from_raw_os_error(i32::from_ne_bytes(errno))
    } else {
        io::Error::other("the child failed before exec")
    };
    reap_blocking(pid);
    Err(SpawnFailure::Child(err))
}

/// The child side of [`spawn_into_cgroup`].
///
/// # Safety
///
/// Must only run in a freshly cloned child; `argv` and `envp` must be
/// null-terminated arrays of pointers into `plan`.
unsafe fn exec_child(
    plan: &ExecPlan,
    argv: *const *const c_char,
    envp: *const *const c_char,
    err_write: RawFd,
    parent: libc::pid_t,
) -> ! {
    let fail = |code: i32| -> ! {
        let bytes = code.to_ne_bytes();
        // SAFETY: writes 4 bytes from a local buffer, then exits without
        // running any Rust or libc teardown (`_exit`).
        unsafe {
            libc::write(err_write, bytes.as_ptr().cast(), 4);
            libc::_exit(127)
        }
    };
    let errno = || {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    // SAFETY (whole block): plain system calls on descriptors, a zeroed
    // `sigset_t` and C strings that live in `plan`; no allocation, no locks.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        // Move sources out of 0..=2 first, so no dup2 clobbers a later source.
        let mut fds = plan.stdio;
        for fd in fds.iter_mut() {
            if *fd < 3 {
                let moved = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3);
                if moved < 0 {
                    fail(errno());
                }
                *fd = moved;
            }
        }
        for (target, fd) in fds.iter().enumerate() {
            if libc::dup2(*fd, target as RawFd) < 0 {
                fail(errno());
            }
        }
        if libc::chdir(plan.cwd.as_ptr()) != 0 {
            fail(errno());
        }
        if libc::setsid() < 0 {
            fail(errno());
        }
        if plan.controlling_tty && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
            fail(errno());
        }
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        ) != 0
        {
            fail(errno());
        }
        if libc::getppid() != parent {
            fail(libc::ESRCH);
        }
        match &plan.confinement {
            Some(confinement) => {
                if confinement.apply().is_err() {
                    fail(errno());
                }
            }
            None => {
                if dsh_sandbox::close_inherited().is_err() {
                    fail(errno());
                }
            }
        }
        libc::execve(plan.program.as_ptr(), argv, envp);
        fail(errno())
    }
}

/// A pipe whose two ends close on exec.
fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as libc::c_int; 2];
    // SAFETY: `pipe2` writes two descriptors into the 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Collects child `pid` if it has exited: its raw wait status, or `None` while
/// it runs.
pub(crate) fn try_reap(pid: i32) -> io::Result<Option<i32>> {
    let mut status: libc::c_int = 0;
    // SAFETY: `status` is a valid out-pointer; `pid` is positive.
    let ret = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    match ret {
        0 => Ok(None),
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(Some(status)),
    }
}

/// Waits for child `pid` to exit and collects it.
pub(crate) fn reap_blocking(pid: i32) {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is positive.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return;
    }
}

/// A pidfd of the process `pid` (our child, not yet reaped, so the number
/// still names it).
pub(crate) fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: `pidfd_open(pid, 0)` takes no pointers.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Registers a pidfd with the Tokio reactor (it turns readable when the
/// process exits). Must be called within a Tokio runtime.
pub(crate) fn watch_pidfd(pidfd: OwnedFd) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` is a valid open descriptor that stays open, and
    // keeps returning the same number from `as_raw_fd`, for as long as it is
    // owned — here, by the `AsyncFd`.
    unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)
    }
    .map_err(|e| e.into_parts().1)
}

/// A new pseudo-terminal of `rows` × `cols`: its master end (non-blocking),
/// and its slave end for a child's stdio. Both close on exec.
pub(crate) fn open_pty(rows: u16, cols: u16) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: two valid out-pointers for the descriptors, no name buffer, no
    // termios (the defaults), and a valid `winsize`.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `openpty` just created both descriptors; nobody else owns them.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    for (fd, extra) in [(&master, libc::O_NONBLOCK), (&slave, 0)] {
        // SAFETY: `fcntl` with integer arguments on an open descriptor.
        unsafe {
            if libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) == -1 {
                return Err(io::Error::last_os_error());
            }
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            if flags == -1 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | extra) == -1 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok((master, slave))
}

/// Registers a terminal's master end with the Tokio reactor, for reads and
/// writes. Must be called within a Tokio runtime.
pub(crate) fn watch_terminal(
    master: OwnedFd,
) -> io::Result<tokio::io::unix::AsyncFd<std::fs::File>> {
    let file = std::fs::File::from(master);
    // SAFETY: the `File` owns its descriptor, which stays open and keeps its
    // number for as long as the `AsyncFd` owns the file.
    unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(
            file,
            tokio::io::Interest::READABLE | tokio::io::Interest::WRITABLE,
        )
    }
    .map_err(|e| e.into_parts().1)
}

/// Asks for a pipe buffer of `bytes` (best effort; the kernel may cap it).
pub(crate) fn set_pipe_size(fd: BorrowedFd<'_>, bytes: i32) {
    // SAFETY: `F_SETPIPE_SZ` takes an integer argument; failure is harmless.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes);
    }
}

/// The conventional name of a signal number (`9` → `SIGKILL`); `SIG<n>` for
/// numbers without one.
pub(crate) fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGPWR => "SIGPWR",
        libc::SIGSYS => "SIGSYS",
        other => return format!("SIG{other}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_common_signals() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(64), "SIG64");
    }

    #[test]
    fn refuses_broadcast_pids() {
        assert!(signal(0, 0).is_err());
        assert!(signal(-1, 0).is_err());
        assert!(signal_group(1, 0).is_err());
    }
}
