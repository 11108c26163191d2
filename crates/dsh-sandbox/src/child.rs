//! The crate's only `unsafe` code: confining a child between `fork` and
//! `exec` with what was prepared before the fork.
//!
//! A [`ChildPlan`] is built in the parent (it allocates: paths, id maps,
//! the seccomp program) and [`ChildPlan::apply`] runs in the child, where
//! it makes plain system calls only, allocates nothing and takes no lock,
//! as code between `fork` and `exec` of a multi-threaded process must. In
//! this order:
//!
//! 1. **Mount (and IPC) namespace**, when paths are to be bound read-only,
//!    the root made read-only, or the command gets its own System V IPC and
//!    message queues: `unshare(CLONE_NEWNS [| CLONE_NEWIPC])` (as root;
//!    otherwise with `CLONE_NEWUSER` too and an identity map of our own
//!    ids), every mount made private; with a read-only root, the writable
//!    paths bound onto themselves, every mount made read-only
//!    (`mount_setattr` with `AT_RECURSIVE`) and the binds of the writable
//!    paths made writable again (their top mount only); then each path to
//!    protect bound onto itself and made read-only, `nosuid` and `nodev`,
//!    submounts included. The binds hold at any depth beneath a writable
//!    root, where Landlock, which only grants, cannot take a right back.
//!    A read-only root stops what Landlock does not govern: `chmod`,
//!    `utimes`, `setxattr` of files outside the writable paths (which root,
//!    owner of the system's files, could otherwise do without any
//!    capability). Needs Linux 5.12 (`mount_setattr`).
//!    With [`ChildConfig::network_namespace`], first the **network
//!    namespace** made for such commands ([`NetworkNamespace`]) is joined
//!    (`setns`; not as root, its user namespace first, and no user
//!    namespace of its own then): only loopback, where the filtering
//!    proxy's listeners wait.
//! 2. **No inherited descriptors**: `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`,
//!    so only standard input, output and error survive `exec` (the
//!    Landlock ruleset stays usable until then).
//! 3. **No capabilities** (unless asked to keep them): securebits
//!    `NOROOT`, `NO_SETUID_FIXUP`, `NO_CAP_AMBIENT_RAISE`, each locked
//!    (where permitted), the bounding set emptied, the ambient set cleared,
//!    effective, permitted and inheritable sets zeroed. Root inside keeps
//!    uid 0, and with it the owner's rights on root's files, but no
//!    capability: no `chown`, `mknod`, `CAP_DAC_OVERRIDE`, raw sockets,
//!    `ptrace` of others, `trusted.*` attributes, immutable flags.
//! 4. `PR_SET_NO_NEW_PRIVS`: no set-user-id or file capability raises
//!    anything at `exec`.
//! 5. **Landlock**: `landlock_restrict_self` with the prepared ruleset.
//! 6. **seccomp**: the program of [`SeccompFilters`], last, so the calls
//!    above are not themselves filtered.

use crate::netns::NetworkNamespace;
use crate::seccomp::{SeccompFilters, SeccompOptions, SockFilter};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Confines the calling process with the Landlock ruleset `fd`:
/// `PR_SET_NO_NEW_PRIVS`, then `landlock_restrict_self`. Plain system
/// calls, no allocation: safe to call between `fork` and `exec`.
///
/// # Errors
/// The errno of the call that failed.
pub fn restrict_self(fd: RawFd) -> io::Result<()> {
    no_new_privs()?;
    landlock_restrict_self(fd)
}

fn check(rc: libc::c_long) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn no_new_privs() -> io::Result<()> {
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
    check(rc.into())
}

fn landlock_restrict_self(fd: RawFd) -> io::Result<()> {
    // SAFETY: `landlock_restrict_self(fd, 0)` takes a descriptor and flags,
    // no pointers.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
    check(rc)
}

/// Makes `cmd`'s child confine itself with `ruleset` before it runs its
/// program. The ruleset lives in the command until it is dropped.
///
/// Landlock only; [`ChildPlan::attach`] applies the whole confinement.
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

pub(crate) fn effective_ids() -> (u32, u32) {
    // SAFETY: `geteuid` and `getegid` take no arguments and cannot fail.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// What a child is confined with; [`ChildPlan::prepare`] turns it into a
/// plan.
#[derive(Debug, Clone)]
pub struct ChildConfig {
    /// The Landlock ruleset to enter, if any (shared: one cached ruleset
    /// can serve many spawns).
    pub ruleset: Option<Arc<OwnedFd>>,
    /// Whether the command may create sockets (see [`SeccompFilters`]).
    pub network: bool,
    /// With `network` off, whether TCP stream sockets may still be created
    /// (the command reaches the filtering proxy; Landlock decides where it
    /// may connect).
    pub stream_only: bool,
    /// Whether the command gets an IPC namespace of its own (System V IPC
    /// and POSIX message queues then work, on objects of its own only).
    /// Ignored where namespaces are not available: the filter then refuses
    /// those calls.
    pub ipc_namespace: bool,
    /// Paths bound read-only onto themselves in a private mount namespace.
    /// Each must exist.
    pub read_only_binds: Vec<PathBuf>,
    /// Paths hidden in a private mount namespace: each file or directory
    /// gets an empty one of mode 000 bound over it, read-only, so nothing
    /// of it can be read (what `Read` deny rules name). Sound only with the
    /// capabilities dropped and a Landlock ruleset (which forbids changing
    /// mounts): root with `CAP_SYS_ADMIN` could unmount them, and with
    /// `CAP_DAC_READ_SEARCH` open the file by handle. Missing paths are
    /// skipped.
    pub masks: Vec<PathBuf>,
    /// Make every mount read-only in a private mount namespace but
    /// `writable_paths`: then not even root's own files outside them can
    /// change mode, times or extended attributes, which Landlock does not
    /// govern (root owns the system's files).
    pub read_only_root: bool,
    /// What stays writable under `read_only_root` (the writable roots and
    /// the temp directory). Mounts beneath them stay read-only, and a path
    /// on a read-only mount is not made writable. Each must exist.
    pub writable_paths: Vec<PathBuf>,
    /// Keep the capabilities the spawning process has (default: drop all).
    pub keep_capabilities: bool,
    /// Install the system-call filter where the kernel supports it
    /// (default: yes).
    pub seccomp: bool,
    /// The network namespace to join: only loopback, where the filtering
    /// proxy's listeners are ([`NetworkNamespace::create`]). `None`: the
    /// spawning process's own.
    pub network_namespace: Option<Arc<NetworkNamespace>>,
}

impl Default for ChildConfig {
    fn default() -> Self {
        ChildConfig {
            ruleset: None,
            network: false,
            stream_only: false,
            ipc_namespace: false,
            read_only_binds: Vec::new(),
            masks: Vec::new(),
            read_only_root: false,
            writable_paths: Vec::new(),
            keep_capabilities: false,
            seccomp: true,
            network_namespace: None,
        }
    }
}

impl ChildConfig {
    /// The configuration that enters `confinement` as `layout` built it:
    /// its ruleset, the network as the confinement says, and, when the
    /// confinement uses a mount namespace ([`crate::Confinement::namespaces`]),
    /// the layout's read-only binds and masks, every mount read-only but
    /// the writable roots that exist, and System V IPC of its own.
    pub fn for_layout(confinement: &crate::Confinement, layout: crate::Layout) -> ChildConfig {
        let namespace = confinement.namespaces;
        ChildConfig {
            ruleset: Some(layout.ruleset),
            network: !confinement.block_network,
            stream_only: confinement.block_network && !confinement.proxy_ports.is_empty(),
            ipc_namespace: namespace,
            read_only_binds: layout.read_only_binds,
            masks: layout.masked,
            read_only_root: namespace,
            writable_paths: if namespace {
                confinement
                    .writable
                    .iter()
                    .map(|w| w.path.clone())
                    .filter(|p| p.exists())
                    .collect()
            } else {
                Vec::new()
            },
            ..ChildConfig::default()
        }
    }
}

/// The namespace part of a plan.
#[derive(Debug, Clone)]
struct Namespaces {
    ipc: bool,
    /// A mount namespace (binds, masks, a read-only root).
    mounts: bool,
    /// The network namespace joined.
    net: Option<Arc<NetworkNamespace>>,
    /// `uid_map` and `gid_map` contents when a user namespace is needed
    /// (not root).
    user: Option<(Vec<u8>, Vec<u8>)>,
    /// With a read-only root: the paths kept writable.
    writable: Option<Vec<CString>>,
    /// The paths bound read-only.
    binds: Vec<CString>,
    /// (empty source, path hidden under it).
    masks: Vec<(Arc<MaskSource>, CString)>,
}

/// Everything a child does to confine itself, prepared before `fork`.
///
/// ```
/// use dsh_sandbox::{ChildConfig, ChildPlan};
///
/// // No Landlock ruleset here: no capabilities, no inherited descriptors,
/// // and (where the kernel has it) the filter with the network off.
/// let plan = ChildPlan::prepare(ChildConfig::default()).unwrap();
/// let mut cmd = std::process::Command::new("sh");
/// cmd.args(["-c", "grep -q '^CapEff:.0000000000000000$' /proc/self/status"]);
/// plan.attach_std(&mut cmd);
/// assert!(cmd.status().unwrap().success());
/// ```
#[derive(Debug, Clone)]
pub struct ChildPlan {
    ruleset: Option<Arc<OwnedFd>>,
    filters: Option<Arc<SeccompFilters>>,
    namespaces: Option<Namespaces>,
    keep_capabilities: bool,
    cap_last: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const SockFilter,
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `struct mount_attr`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_SETPCAP: u32 = 8;
const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

/// The highest capability number of this kernel.
fn cap_last() -> u32 {
    static LAST: OnceLock<u32> = OnceLock::new();
    *LAST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(63)
    })
}

/// The filter for `options`, built once per process: commands are spawned
/// often, and the four variants never change.
fn filters_for(options: SeccompOptions) -> io::Result<Arc<SeccompFilters>> {
    type Built = Result<Arc<SeccompFilters>, String>;
    static BUILT: OnceLock<[Built; 8]> = OnceLock::new();
    let all = BUILT.get_or_init(|| {
        std::array::from_fn(|i| {
            SeccompFilters::build(SeccompOptions {
                network: i & 4 != 0,
                stream_only: i & 2 != 0,
                ipc_namespace: i & 1 != 0,
            })
            .map(Arc::new)
            .map_err(|e| e.0)
        })
    });
    let index = usize::from(options.network) * 4
        + usize::from(options.stream_only) * 2
        + usize::from(options.ipc_namespace);
    all[index].clone().map_err(io::Error::other)
}

/// An empty file or directory of mode 000 to bind over what must not be
/// read. The child opens it without following a link, checks that what it
/// opened is still empty, mode 000 and ours, and binds that very inode
/// through `/proc/self/fd/N` (a descriptor opened before the mount
/// namespace was entered could not be bound in it): whoever can write the
/// directory it lives in (the same user, unconfined) can swap it for
/// neither a link to a secret nor a filled file.
#[derive(Debug)]
struct MaskSource {
    path: CString,
    uid: u32,
    dir: bool,
}

impl MaskSource {
    /// Opens the source and checks it (in the child: plain system calls,
    /// no allocation). The caller closes the descriptor.
    fn open_checked(&self) -> io::Result<RawFd> {
        // SAFETY: `path` is NUL-terminated; flags only.
        let fd = unsafe {
            libc::open(
                self.path.as_ptr(),
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: an all-zero `stat` is a valid value of the plain C struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` was just opened and `st` is a valid, writable stat.
        let stated = unsafe { libc::fstat(fd, &mut st) } == 0;
        let kind = st.st_mode & libc::S_IFMT;
        let want = if self.dir {
            libc::S_IFDIR
        } else {
            libc::S_IFREG
        };
        let intact = stated
            && kind == want
            && st.st_mode & 0o7777 == 0
            && st.st_uid == self.uid
            && (self.dir || st.st_size == 0);
        if !intact {
            // SAFETY: closes the descriptor opened above.
            unsafe { libc::close(fd) };
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        Ok(fd)
    }
}

/// `/proc/self/fd/N` for `fd`, written into `buf` with its NUL (no
/// allocation: the child may not allocate).
fn fd_path(fd: RawFd, buf: &mut [u8; 32]) -> &CStr {
    let prefix = b"/proc/self/fd/";
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let mut n = fd.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for k in 0..len {
        buf[prefix.len() + k] = digits[len - 1 - k];
    }
    buf[prefix.len() + len] = 0;
    CStr::from_bytes_until_nul(&buf[..]).unwrap_or(c"/")
}

/// The two mask sources (file, directory), made once per process in a
/// directory of this user's.
fn mask_sources() -> io::Result<&'static (Arc<MaskSource>, Arc<MaskSource>)> {
    type Sources = (Arc<MaskSource>, Arc<MaskSource>);
    static SOURCES: OnceLock<Result<Sources, String>> = OnceLock::new();
    SOURCES
        .get_or_init(|| {
            use std::os::unix::fs::PermissionsExt;
            let (uid, _) = effective_ids();
            let dir = std::env::temp_dir().join(format!("dsh-masks-{uid}"));
            crate::private_dir(&dir).map_err(|e| e.to_string())?;
            let open = |name: &str, is_dir: bool| -> io::Result<Arc<MaskSource>> {
                let path = dir.join(name);
                match std::fs::symlink_metadata(&path) {
                    Ok(m) if m.is_dir() == is_dir && !m.file_type().is_symlink() => {}
                    Ok(_) => std::fs::remove_file(&path)?,
                    Err(_) => {}
                }
                if is_dir {
                    let _ = std::fs::create_dir(&path);
                } else {
                    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
                    std::fs::File::create(&path)?;
                }
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000))?;
                let source = MaskSource {
                    path: CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?,
                    uid,
                    dir: is_dir,
                };
                let fd = source.open_checked().map_err(|_| {
                    io::Error::other(format!(
                        "{} is not an empty mode-000 entry of ours",
                        path.display()
                    ))
                })?;
                // SAFETY: `open_checked` returned an open descriptor we own.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
                Ok(Arc::new(source))
            };
            let made = open("file", false).and_then(|f| Ok((f, open("dir", true)?)));
            made.map_err(|e| format!("cannot make the masks in {}: {e}", dir.display()))
        })
        .as_ref()
        .map_err(|e| io::Error::other(e.clone()))
}

/// The flags of the mount `path` is on (`ST_*` and `MS_*` share values).
fn mount_flags(path: &CStr) -> io::Result<libc::c_ulong> {
    // SAFETY: an all-zero `statvfs` is a valid value of the plain C struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `st` a valid, writable statvfs.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut st) };
    check(rc.into())?;
    Ok(st.f_flag)
}

impl ChildPlan {
    /// Prepares the confinement `config` asks for (before `fork`): reads
    /// the ids, the capability count and the flags of the mounts, and
    /// builds the system-call filter.
    ///
    /// # Errors
    /// Paths to bind are asked for where namespaces are not available
    /// ([`namespaces_available`]), a path to bind does not exist or holds a
    /// NUL, or the filter cannot be built.
    pub fn prepare(config: ChildConfig) -> io::Result<ChildPlan> {
        let namespaces_ok = namespaces_available();
        if !config.masks.is_empty() && (config.keep_capabilities || config.ruleset.is_none()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "masks hold only with the capabilities dropped and a Landlock ruleset",
            ));
        }
        let mounts =
            !config.read_only_binds.is_empty() || config.read_only_root || !config.masks.is_empty();
        if mounts && !namespaces_ok {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "read-only binds need a mount namespace, which this system does not give",
            ));
        }
        let c_path = |p: &PathBuf| -> io::Result<(CString, libc::c_ulong)> {
            let path = CString::new(p.as_os_str().as_bytes()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte")
            })?;
            let flags = mount_flags(&path).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot bind {}: {e}", p.display()))
            })?;
            Ok((path, flags))
        };
        let ipc = config.ipc_namespace && namespaces_ok;
        let net = config.network_namespace.clone();
        let namespaces = if ipc || mounts || net.is_some() {
            let mut binds = Vec::new();
            for p in &config.read_only_binds {
                binds.push(c_path(p)?.0);
            }
            let mut masks = Vec::new();
            for p in &config.masks {
                let Ok(meta) = std::fs::symlink_metadata(p) else {
                    continue;
                };
                // A link's target is masked on its own (the mount would
                // follow the link).
                if meta.file_type().is_symlink() {
                    continue;
                }
                let (file, dir) = mask_sources()?;
                let source = if meta.is_dir() { dir } else { file };
                masks.push((source.clone(), c_path(p)?.0));
            }
            let writable = if config.read_only_root {
                let mut paths = Vec::new();
                for p in &config.writable_paths {
                    let (path, flags) = c_path(p)?;
                    if flags & libc::MS_RDONLY == 0 {
                        paths.push(path);
                    }
                }
                Some(paths)
            } else {
                None
            };
            let (uid, gid) = effective_ids();
            // A joined network namespace brings its user namespace along.
            let joins_user = net.as_ref().is_some_and(|n| n.user.is_some());
            let user = (uid != 0 && !joins_user).then(|| {
                (
                    format!("{uid} {uid} 1\n").into_bytes(),
                    format!("{gid} {gid} 1\n").into_bytes(),
                )
            });
            Some(Namespaces {
                ipc,
                // The IPC namespace has always come with a mount namespace.
                mounts: mounts || ipc,
                net,
                user,
                writable,
                binds,
                masks,
            })
        } else {
            None
        };
        let filters = if config.seccomp && seccomp_available() {
            Some(filters_for(SeccompOptions {
                network: config.network,
                stream_only: config.stream_only,
                ipc_namespace: ipc,
            })?)
        } else {
            None
        };
        Ok(ChildPlan {
            ruleset: config.ruleset,
            filters,
            namespaces,
            keep_capabilities: config.keep_capabilities,
            cap_last: cap_last(),
        })
    }

    /// Whether the plan installs a system-call filter.
    pub fn seccomp(&self) -> bool {
        self.filters.is_some()
    }

    /// Whether the plan enters a mount namespace.
    pub fn namespaces(&self) -> bool {
        self.namespaces.as_ref().is_some_and(|n| n.mounts)
    }

    /// Whether the plan joins a network namespace
    /// ([`ChildConfig::network_namespace`]).
    pub fn network_namespace(&self) -> bool {
        self.namespaces.as_ref().is_some_and(|n| n.net.is_some())
    }

    /// Whether the command gets an IPC namespace of its own.
    pub fn ipc_namespace(&self) -> bool {
        self.namespaces.as_ref().is_some_and(|n| n.ipc)
    }

    /// Confines the calling process; run in the child, between `fork` and
    /// `exec`. Plain system calls only, no allocation, no locks.
    ///
    /// # Errors
    /// The errno of the first call that failed (the child should then not
    /// run its program).
    pub fn apply(&self) -> io::Result<()> {
        if let Some(ns) = &self.namespaces {
            enter_namespaces(ns)?;
        }
        close_inherited()?;
        if !self.keep_capabilities {
            drop_capabilities(self.cap_last)?;
        }
        no_new_privs()?;
        if let Some(fd) = &self.ruleset {
            landlock_restrict_self(fd.as_raw_fd())?;
        }
        if let Some(filters) = &self.filters {
            install_filter(filters.program())?;
        }
        Ok(())
    }

    /// Makes `cmd`'s child apply this plan before it runs its program.
    pub fn attach(&self, cmd: &mut tokio::process::Command) {
        let plan = self.clone();
        // SAFETY: `ChildPlan::apply` makes plain system calls only (no
        // allocation, no locks; errors come from errno), as `pre_exec`
        // requires of code run in the forked copy of a multi-threaded process.
        unsafe {
            cmd.pre_exec(move || plan.apply());
        }
    }

    /// [`ChildPlan::attach`] for a `std::process::Command`.
    pub fn attach_std(&self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let plan = self.clone();
        // SAFETY: as in `attach`: `apply` is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || plan.apply());
        }
    }
}

/// Marks every descriptor above 2 close-on-exec, so the program run next
/// gets none of what this process inherited or opened (descriptors stay
/// usable until `exec`). Plain system calls only: for the child, between
/// `fork` and `exec`, confined or not.
///
/// # Errors
/// `getrlimit` failed where `close_range` is missing.
pub fn close_inherited() -> io::Result<()> {
    // SAFETY: `close_range` takes no pointers.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            !0 as libc::c_uint,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc != 0 {
        cloexec_one_by_one()?;
    }
    Ok(())
}

/// Where `close_range` is missing (before 5.11): `FD_CLOEXEC` on every
/// descriptor up to the limit.
fn cloexec_one_by_one() -> io::Result<()> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    check(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }.into())?;
    let max = lim.rlim_cur.min(1 << 20) as libc::c_int;
    for fd in 3..max {
        // SAFETY: `fcntl` on any number: EBADF for ones not open.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

pub(crate) fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `data` is valid for `data.len()` bytes; `fd` is ours.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let err = io::Error::last_os_error();
    // SAFETY: `fd` is ours and closed once.
    unsafe { libc::close(fd) };
    if n != data.len() as isize {
        return Err(err);
    }
    Ok(())
}

fn mount(source: Option<&CStr>, target: &CStr, flags: libc::c_ulong) -> io::Result<()> {
    let src = source.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: the strings are NUL-terminated or null, as `mount` accepts
    // for a bind, a remount and a propagation change; no fs type, no data.
    let rc = unsafe {
        libc::mount(
            src,
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    check(rc.into())
}

fn enter_namespaces(ns: &Namespaces) -> io::Result<()> {
    if let Some(net) = &ns.net {
        // Its user namespace first: there this process may join the
        // network namespace, and make the others.
        if let Some(user) = &net.user {
            setns(user.as_raw_fd(), libc::CLONE_NEWUSER)?;
        }
        setns(net.net.as_raw_fd(), libc::CLONE_NEWNET)?;
    }
    let mut flags = 0;
    if ns.mounts {
        flags |= libc::CLONE_NEWNS;
    }
    if ns.ipc {
        flags |= libc::CLONE_NEWIPC;
    }
    if ns.user.is_some() {
        flags |= libc::CLONE_NEWUSER;
    }
    if flags != 0 {
        // SAFETY: `unshare` takes flags only.
        check(unsafe { libc::unshare(flags) }.into())?;
    }
    if let Some((uid_map, gid_map)) = &ns.user {
        write_file(c"/proc/self/uid_map", uid_map)?;
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/gid_map", gid_map)?;
    }
    if !ns.mounts {
        return Ok(());
    }
    mount(None, c"/", libc::MS_REC | libc::MS_PRIVATE)?;
    if let Some(writable) = &ns.writable {
        for p in writable {
            mount(Some(p), p, libc::MS_BIND | libc::MS_REC)?;
        }
        mount_setattr(c"/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)?;
        for p in writable {
            mount_setattr(p, 0, 0, MOUNT_ATTR_RDONLY)?;
        }
    }
    for p in &ns.binds {
        mount(Some(p), p, libc::MS_BIND | libc::MS_REC)?;
        // Flags are only added: those a user namespace locks stay.
        let set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        mount_setattr(p, AT_RECURSIVE, set, 0)?;
    }
    for (source, target) in &ns.masks {
        let fd = source.open_checked()?;
        let mut buf = [0u8; 32];
        let bound = mount(Some(fd_path(fd, &mut buf)), target, libc::MS_BIND);
        // SAFETY: closes the descriptor `open_checked` opened.
        unsafe { libc::close(fd) };
        bound?;
        let set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        mount_setattr(target, 0, set, 0)?;
    }
    reenter_cwd()
}

fn setns(fd: RawFd, kind: libc::c_int) -> io::Result<()> {
    // SAFETY: `setns` takes a descriptor and flags, no pointers.
    check(unsafe { libc::setns(fd, kind) }.into())
}

/// The working directory was entered before the binds: it still is the
/// directory of the old mount (writable beneath a read-only bind, read-only
/// beneath a writable one). Entered again by its path, it is the new one.
fn reenter_cwd() -> io::Result<()> {
    let mut buf = [0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is writable for its length.
    let p = unsafe { libc::getcwd(buf.as_mut_ptr().cast(), buf.len()) };
    if p.is_null() {
        let e = io::Error::last_os_error();
        // Removed already: nothing to write there through a mount.
        if e.raw_os_error() == Some(libc::ENOENT) {
            return Ok(());
        }
        return Err(e);
    }
    // SAFETY: `getcwd` wrote a NUL-terminated path into `buf`.
    check(unsafe { libc::chdir(buf.as_ptr().cast()) }.into())
}

/// `mount_setattr(AT_FDCWD, path, flags, {set, clear})`.
fn mount_setattr(path: &CStr, flags: libc::c_uint, set: u64, clear: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: the path is NUL-terminated and `attr` a valid mount_attr of
    // the size passed.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(rc)
}

/// Makes this process non-dumpable: its `/proc/PID/environ`, `mem` and
/// `fd` become root's, so the commands it runs (the same user) cannot read
/// the secrets it holds (bearer tokens, keys), even without a sandbox. What
/// it starts is dumpable again after `exec`.
///
/// # Errors
/// The kernel refused.
pub fn hide_own_memory() -> io::Result<()> {
    if prctl(libc::PR_SET_DUMPABLE, 0) != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn prctl(option: libc::c_int, arg: libc::c_ulong) -> libc::c_int {
    // SAFETY: the options used here take integers, no pointers; the unused
    // arguments are zeros.
    unsafe {
        libc::prctl(
            option,
            arg,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    }
}

fn drop_capabilities(cap_last: u32) -> io::Result<()> {
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: `header` and the two-element `data` are what capget v3 reads
    // and writes.
    check(unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        )
    })?;
    let has_setpcap = data[0].effective & (1 << CAP_SETPCAP) != 0;
    // Securebits first: setting them needs CAP_SETPCAP. Not permitted
    // (EPERM) where we lack it; NO_NEW_PRIVS then covers what they would.
    let bits = SECBIT_NOROOT
        | SECBIT_NOROOT_LOCKED
        | SECBIT_NO_SETUID_FIXUP
        | SECBIT_NO_SETUID_FIXUP_LOCKED
        | SECBIT_NO_CAP_AMBIENT_RAISE
        | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if prctl(libc::PR_SET_SECUREBITS, bits) != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EPERM) {
            return Err(e);
        }
    }
    // The bounding set can only be dropped with CAP_SETPCAP; without it no
    // capability can be gained at exec anyway (NO_NEW_PRIVS).
    if has_setpcap {
        for cap in 0..=cap_last {
            if prctl(libc::PR_CAPBSET_DROP, cap.into()) != 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(e);
                }
            }
        }
    }
    // SAFETY: PR_CAP_AMBIENT takes integers only.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    check(rc.into())?;
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData::default(); 2];
    // SAFETY: `header` and the two-element `data` are what capset v3 reads.
    check(unsafe {
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        )
    })
}

fn install_filter(program: &[SockFilter]) -> io::Result<()> {
    let prog = SockFprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr(),
    };
    // SAFETY: `prog` points to `len` instructions that live as long as the
    // plan; the kernel copies them.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const SockFprog,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    check(rc.into())
}

/// Runs `work` in a forked child and returns its exit code (what `work`
/// returned, 0 to 255), or `EIO` when the child could not be made or was
/// killed. `work` must be async-signal-safe.
pub(crate) fn in_child_status(work: &dyn Fn() -> i32) -> i32 {
    // SAFETY: the child runs only `work` (plain system calls) and `_exit`,
    // both async-signal-safe, so forking a multi-threaded process is sound.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
    }
    if pid == 0 {
        let code = work().clamp(0, 255);
        // SAFETY: `_exit` ends the child without running the parent's
        // destructors or atexit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid, writable int; `pid` our child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        if rc < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return libc::EIO;
        }
    }
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        libc::EIO
    }
}

/// Runs `probe` in a forked child and tells whether it returned true.
/// `probe` must be async-signal-safe.
pub(crate) fn in_child(probe: fn() -> bool) -> bool {
    in_child_status(&|| if probe() { 0 } else { 1 }) == 0
}

fn probe_namespaces() -> bool {
    // SAFETY: plain system calls in the probing child.
    let root = unsafe { libc::geteuid() } == 0;
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
    if !root {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: `unshare` takes flags only.
    if unsafe { libc::unshare(flags) } != 0 {
        return false;
    }
    // mount_setattr (Linux 5.12) makes the binds read-only, submounts
    // included; a no-op change tells whether it is there.
    mount(None, c"/", libc::MS_REC | libc::MS_PRIVATE).is_ok()
        && mount_setattr(c"/", AT_RECURSIVE, 0, 0).is_ok()
}

/// Whether commands can get a private mount and IPC namespace here, with
/// `mount_setattr` (Linux 5.12) to make mounts read-only (probed once, in a
/// forked child). `DSH_SANDBOX_NO_NAMESPACES=1` says no (to try
/// the fallbacks).
pub fn namespaces_available() -> bool {
    if std::env::var_os("DSH_SANDBOX_NO_NAMESPACES").is_some_and(|v| v == "1") {
        return false;
    }
    static SEEN: OnceLock<bool> = OnceLock::new();
    *SEEN.get_or_init(|| in_child(probe_namespaces))
}

fn probe_seccomp() -> bool {
    let allow = [SockFilter {
        code: 0x06,
        jt: 0,
        jf: 0,
        k: 0x7fff_0000,
    }];
    no_new_privs().is_ok() && install_filter(&allow).is_ok()
}

/// Whether the system-call filter is enforced here: x86_64 or aarch64, and
/// a kernel that accepts a filter (probed once, in a forked child).
pub fn seccomp_available() -> bool {
    static SEEN: OnceLock<bool> = OnceLock::new();
    crate::seccomp::arch_supported() && *SEEN.get_or_init(|| in_child(probe_seccomp))
}
