//! The crate's only `unsafe` code: confining a child between `fork` and
//! `exec` with a ruleset built before the fork.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Confines the calling process with the Landlock ruleset `fd`:
/// `PR_SET_NO_NEW_PRIVS`, then `landlock_restrict_self`. Plain system
/// calls, no allocation: safe to call between `fork` and `exec`.
///
/// # Errors
/// The errno of the call that failed.
pub fn restrict_self(fd: RawFd) -> io::Result<()> {
    // SAFETY: `prctl(PR_SET_NO_NEW_PRIVS, 1)` takes no pointers; the unused
    // arguments are zeros, as the man page asks.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_NO_NEW_PRIVS,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `landlock_restrict_self(fd, 0)` takes a descriptor and flags,
    // no pointers.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes `cmd`'s child confine itself with `ruleset` before it runs its
/// program. The ruleset lives in the command until it is dropped.
pub fn confine_command(cmd: &mut tokio::process::Command, ruleset: OwnedFd) {
    // SAFETY: the closure makes only the two system calls of
    // `restrict_self` (async-signal-safe, no allocation, no locks), as
    // `pre_exec` requires of code run in the forked copy of a
    // multi-threaded process; errors are built from errno without allocating.
    unsafe {
        cmd.pre_exec(move || restrict_self(ruleset.as_raw_fd()));
    }
}

/// This process's real user id.
pub(crate) fn current_uid() -> u32 {
    // SAFETY: `getuid` takes no arguments and cannot fail.
    unsafe { libc::getuid() }
}
