//! The system-call filter: what no confined command needs, refused with an
//! errno (never a kill, so a program that probes a call sees it fail and
//! goes on).
//!
//! The programs are built before `fork` (they allocate) and installed by
//! [`ChildPlan::apply`](crate::ChildPlan::apply) last, after the
//! capabilities are dropped, `PR_SET_NO_NEW_PRIVS` is set and the Landlock
//! domain is entered. Several programs are stacked; the kernel runs all of
//! them and the most restrictive answer wins.
//!
//! 1. **The ABI guard** (handwritten): a call made through another ABI
//!    (i386 `int 0x80` on x86_64, arm32 compat on aarch64) fails with
//!    `ENOSYS`, and so does any x32 call on x86_64 (numbers with bit
//!    `0x40000000`), which `seccompiler` does not check and whose numbers
//!    would otherwise match no rule.
//! 2. **The denials** (`EPERM`), built with `seccompiler`:
//!    * namespaces and mounts: `unshare`, `setns`, `clone` with any
//!      `CLONE_NEW*` flag, `mount`, `umount2`, `pivot_root`, the new mount
//!      API (`open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`,
//!      `fspick`, `mount_setattr`);
//!    * device nodes: `mknod`/`mknodat` of a character or block device;
//!    * other processes: `setpriority`, `ioprio_set`, `sched_setaffinity`,
//!      `sched_setscheduler`, `sched_setparam` and `sched_setattr` on
//!      anything but the caller (`who`/`pid` ≠ 0), `prlimit64` that sets a
//!      limit of another process;
//!    * the machine: `reboot`, `sethostname`, `setdomainname`, the clock
//!      (`adjtimex`, `clock_adjtime`, `clock_settime`, `settimeofday`),
//!      modules, `kexec_*`, swap, `acct`, `quotactl(_fd)`, `bpf`, `iopl`,
//!      `ioperm`, `syslog`, `vhangup`, `userfaultfd`, `perf_event_open`,
//!      `open_by_handle_at`, `personality` other than the query and
//!      `PER_LINUX`, and `io_uring_*` (its operations, `IORING_OP_SOCKET`
//!      among them, would not pass through this filter);
//!    * the kernel keyrings: `keyctl`, `add_key`, `request_key`;
//!    * the terminal: `ioctl` `TIOCSTI` (typing into the caller's terminal)
//!      and `TIOCLINUX`;
//!    * System V IPC and POSIX message queues, unless the command has an
//!      IPC namespace of its own;
//!    * sockets: `socket` of `AF_PACKET`, of type `SOCK_RAW` and with
//!      protocol `IPPROTO_MPTCP` always; **every** `socket` when the
//!      network is off (UDP and DNS, `listen` without `bind`, netlink and
//!      named UNIX sockets such as the session bus or `docker.sock`), while
//!      `socketpair` keeps working. Landlock ABI 9 adds a path right for
//!      connecting to named UNIX sockets (`LANDLOCK_ACCESS_FS_RESOLVE_UNIX`)
//!      that would let them be denied outside the writable roots only;
//!      the kernels this was written on have ABI 7, so every socket is
//!      refused.
//! 3. **`clone3`** fails with `ENOSYS`: its flags sit in memory the filter
//!    cannot read, and libc falls back to `clone`, whose flags it can.
//!
//! Only x86_64 and aarch64 are supported; elsewhere
//! [`SeccompFilters::build`] reports the filter unavailable.

#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code, unused_imports)
)]

use crate::SandboxUnavailable;
use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
    SeccompCondition as Cond, SeccompFilter, SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// What the filter of one command allows beyond the fixed denials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeccompOptions {
    /// Sockets may be created (only packet, raw and MPTCP ones are refused).
    pub network: bool,
    /// The command runs in an IPC namespace of its own, so System V IPC and
    /// POSIX message queues reach nothing outside it.
    pub ipc_namespace: bool,
}

/// The BPF programs of one command, in the order they are installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeccompFilters {
    programs: Vec<BpfProgram>,
}

/// `AUDIT_ARCH_*` of the architecture this was built for.
#[cfg(target_arch = "x86_64")]
const NATIVE: Option<(TargetArch, u32)> =
    Some((TargetArch::x86_64, 62 | 0x8000_0000 | 0x4000_0000));
#[cfg(target_arch = "aarch64")]
const NATIVE: Option<(TargetArch, u32)> =
    Some((TargetArch::aarch64, 183 | 0x8000_0000 | 0x4000_0000));
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NATIVE: Option<(TargetArch, u32)> = None;

/// Whether the filter can be built for this architecture (the kernel may
/// still refuse it: see [`seccomp_available`](crate::seccomp_available)).
pub fn arch_supported() -> bool {
    NATIVE.is_some()
}

/// The bit that marks an x32 system call on x86_64.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

// Classic BPF opcodes (linux/bpf_common.h) and seccomp return values.
/// `BPF_LD | BPF_W | BPF_ABS`.
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JMP_JSET_K: u16 = 0x05 | 0x40;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;

fn insn(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

fn errno(e: i32) -> u32 {
    RET_ERRNO | (e as u32 & 0xffff)
}

/// Every call of another ABI fails with `ENOSYS` (and, on x86_64, every
/// x32 call).
fn abi_guard(audit_arch: u32) -> BpfProgram {
    let mut p = vec![
        insn(BPF_LD_W_ABS, 0, 0, DATA_ARCH),
        insn(BPF_JMP_JEQ_K, 1, 0, audit_arch),
        insn(BPF_RET_K, 0, 0, errno(libc::ENOSYS)),
    ];
    if cfg!(target_arch = "x86_64") {
        p.extend([
            insn(BPF_LD_W_ABS, 0, 0, DATA_NR),
            insn(BPF_JMP_JSET_K, 0, 1, X32_SYSCALL_BIT),
            insn(BPF_RET_K, 0, 0, errno(libc::ENOSYS)),
        ]);
    }
    p.push(insn(BPF_RET_K, 0, 0, RET_ALLOW));
    p
}

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

fn rule(conds: Vec<Cond>) -> Result<SeccompRule, seccompiler::BackendError> {
    SeccompRule::new(conds)
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> Result<Cond, seccompiler::BackendError> {
    Cond::new(arg, len, op, value)
}

/// The calls refused whatever their arguments.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn always_denied(options: SeccompOptions) -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_reboot,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_adjtimex,
        libc::SYS_clock_adjtime,
        libc::SYS_clock_settime,
        libc::SYS_settimeofday,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_quotactl_fd,
        libc::SYS_bpf,
        libc::SYS_syslog,
        libc::SYS_vhangup,
        libc::SYS_userfaultfd,
        libc::SYS_perf_event_open,
        libc::SYS_open_by_handle_at,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    if !options.ipc_namespace {
        calls.extend([
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_shmctl,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semtimedop,
            libc::SYS_semctl,
            libc::SYS_mq_open,
            libc::SYS_mq_unlink,
            libc::SYS_mq_timedsend,
            libc::SYS_mq_timedreceive,
            libc::SYS_mq_notify,
            libc::SYS_mq_getsetattr,
        ]);
    }
    if !options.network {
        calls.push(libc::SYS_socket);
    }
    calls
}

/// The `CLONE_NEW*` flags `clone` can be given (`CLONE_NEWTIME` shares its
/// bit with the exit signal there, and only `clone3` and `unshare` take it).
const CLONE_NAMESPACES: [u64; 7] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// `PER_LINUX`, the default personality.
const PER_LINUX: u64 = 0;

/// The `ioctl`s `TIOCSTI` and `TIOCLINUX` (the same on x86_64 and aarch64).
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541c;

/// `IPPROTO_MPTCP`.
const IPPROTO_MPTCP: u64 = 262;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn denials(options: SeccompOptions) -> Result<Rules, seccompiler::BackendError> {
    let mut rules: Rules = always_denied(options)
        .into_iter()
        .map(|nr| (nr, vec![]))
        .collect();
    let dword = |arg, op, v| cond(arg, Len::Dword, op, v);
    let ifmt = u64::from(libc::S_IFMT);
    let devices = |arg: u8| -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        Ok(vec![
            rule(vec![dword(
                arg,
                Op::MaskedEq(ifmt),
                u64::from(libc::S_IFCHR),
            )?])?,
            rule(vec![dword(
                arg,
                Op::MaskedEq(ifmt),
                u64::from(libc::S_IFBLK),
            )?])?,
        ])
    };
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_mknod, devices(1)?);
    rules.insert(libc::SYS_mknodat, devices(2)?);
    rules.insert(
        libc::SYS_clone,
        CLONE_NAMESPACES
            .iter()
            .map(|&f| rule(vec![dword(0, Op::MaskedEq(f), f)?]))
            .collect::<Result<_, _>>()?,
    );
    let other = |arg: u8| -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        Ok(vec![rule(vec![dword(arg, Op::Ne, 0)?])?])
    };
    rules.insert(libc::SYS_setpriority, other(1)?);
    rules.insert(libc::SYS_ioprio_set, other(1)?);
    for nr in [
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
    ] {
        rules.insert(nr, other(0)?);
    }
    rules.insert(
        libc::SYS_prlimit64,
        vec![rule(vec![
            dword(0, Op::Ne, 0)?,
            cond(2, Len::Qword, Op::Ne, 0)?,
        ])?],
    );
    rules.insert(
        libc::SYS_personality,
        vec![rule(vec![
            dword(0, Op::Ne, 0xffff_ffff)?,
            dword(0, Op::Ne, PER_LINUX)?,
        ])?],
    );
    // Typing into the terminal the command shares with its caller, which
    // would run once the command is gone.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![dword(1, Op::Eq, TIOCSTI)?])?,
            rule(vec![dword(1, Op::Eq, TIOCLINUX)?])?,
        ],
    );
    if options.network {
        rules.insert(
            libc::SYS_socket,
            vec![
                rule(vec![dword(0, Op::Eq, libc::AF_PACKET as u64)?])?,
                rule(vec![dword(1, Op::MaskedEq(0xf), libc::SOCK_RAW as u64)?])?,
                rule(vec![dword(2, Op::Eq, IPPROTO_MPTCP)?])?,
            ],
        );
    }
    Ok(rules)
}

/// Compiles `rules` (each answered `action` on a match, allowed otherwise)
/// and makes its architecture check answer `ENOSYS` instead of killing.
fn compile(
    rules: Rules,
    action: SeccompAction,
    arch: TargetArch,
) -> Result<BpfProgram, SandboxUnavailable> {
    let fail = |e: seccompiler::BackendError| {
        SandboxUnavailable(format!("cannot build the system-call filter: {e}"))
    };
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, action, arch).map_err(fail)?;
    let mut program: BpfProgram = filter.try_into().map_err(fail)?;
    // seccompiler opens with: load arch; equal → skip one; kill the process.
    match program.get_mut(2) {
        Some(i) if i.code == BPF_RET_K && i.k == RET_KILL_PROCESS => {
            i.k = errno(libc::ENOSYS);
        }
        _ => {
            return Err(SandboxUnavailable(
                "the system-call filter does not open with the expected architecture check".into(),
            ))
        }
    }
    if program
        .iter()
        .any(|i| i.code == BPF_RET_K && i.k == RET_KILL_PROCESS)
    {
        return Err(SandboxUnavailable(
            "the system-call filter would kill instead of failing a call".into(),
        ));
    }
    Ok(program)
}

impl SeccompFilters {
    /// The programs for a command confined with `options`.
    ///
    /// # Errors
    /// This architecture is neither x86_64 nor aarch64, or a program cannot
    /// be compiled.
    pub fn build(options: SeccompOptions) -> Result<SeccompFilters, SandboxUnavailable> {
        let Some((arch, audit)) = NATIVE else {
            return Err(SandboxUnavailable(format!(
                "no system-call filter for {}",
                std::env::consts::ARCH
            )));
        };
        Self::build_native(options, arch, audit)
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn build_native(
        _: SeccompOptions,
        _: TargetArch,
        _: u32,
    ) -> Result<SeccompFilters, SandboxUnavailable> {
        Err(SandboxUnavailable(
            "no system-call filter for this architecture".into(),
        ))
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn build_native(
        options: SeccompOptions,
        arch: TargetArch,
        audit: u32,
    ) -> Result<SeccompFilters, SandboxUnavailable> {
        let rules = denials(options)
            .map_err(|e| SandboxUnavailable(format!("cannot build the system-call filter: {e}")))?;
        let denials = compile(rules, SeccompAction::Errno(libc::EPERM as u32), arch)?;
        let clone3 = compile(
            [(libc::SYS_clone3, vec![])].into_iter().collect(),
            SeccompAction::Errno(libc::ENOSYS as u32),
            arch,
        )?;
        Ok(SeccompFilters {
            programs: vec![abi_guard(audit), denials, clone3],
        })
    }

    /// The programs, in the order they are installed.
    pub fn programs(&self) -> &[BpfProgram] {
        &self.programs
    }
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;

    /// A `struct seccomp_data` as the filter sees it.
    struct Call {
        nr: i64,
        arch: u32,
        args: [u64; 6],
    }

    impl Call {
        fn new(nr: i64, args: &[u64]) -> Call {
            let mut a = [0u64; 6];
            a[..args.len()].copy_from_slice(args);
            Call {
                nr,
                arch: NATIVE.unwrap().1,
                args: a,
            }
        }
        fn word(&self, off: u32) -> u32 {
            match off {
                0 => self.nr as u32,
                4 => self.arch,
                o if (16..64).contains(&o) => {
                    let a = self.args[(o as usize - 16) / 8];
                    if (o - 16) % 8 == 0 {
                        a as u32
                    } else {
                        (a >> 32) as u32
                    }
                }
                o => panic!("load at {o}"),
            }
        }
    }

    /// Runs one classic BPF program as the kernel would.
    fn run(p: &[sock_filter], c: &Call) -> u32 {
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let i = &p[pc];
            pc += 1;
            let jump = |taken: bool| if taken { i.jt } else { i.jf } as usize;
            match i.code {
                0x20 => acc = c.word(i.k),
                0x54 => acc &= i.k,
                0x05 => pc += i.k as usize,
                0x15 => pc += jump(acc == i.k),
                0x25 => pc += jump(acc > i.k),
                0x35 => pc += jump(acc >= i.k),
                0x45 => pc += jump(acc & i.k != 0),
                0x06 => return i.k,
                code => panic!("opcode {code:#x}"),
            }
        }
    }

    /// The answer of the stacked programs: the most restrictive wins.
    fn answer(f: &SeccompFilters, c: &Call) -> u32 {
        f.programs()
            .iter()
            .rev()
            .map(|p| run(p, c))
            .fold(RET_ALLOW, |best, r| {
                if ((r & 0xffff_0000) as i32) < ((best & 0xffff_0000) as i32) {
                    r
                } else {
                    best
                }
            })
    }

    fn filters(network: bool, ipc_namespace: bool) -> SeccompFilters {
        SeccompFilters::build(SeccompOptions {
            network,
            ipc_namespace,
        })
        .unwrap()
    }

    const EPERM: u32 = RET_ERRNO | libc::EPERM as u32;
    const ENOSYS: u32 = RET_ERRNO | libc::ENOSYS as u32;

    fn check(f: &SeccompFilters, nr: i64, args: &[u64], want: u32) {
        let got = answer(f, &Call::new(nr, args));
        assert_eq!(got, want, "syscall {nr} {args:?}: {got:#x}, want {want:#x}");
    }

    #[test]
    fn sockets_follow_the_network() {
        let (af_inet, af_unix, af_netlink) = (
            libc::AF_INET as u64,
            libc::AF_UNIX as u64,
            libc::AF_NETLINK as u64,
        );
        let (stream, dgram) = (libc::SOCK_STREAM as u64, libc::SOCK_DGRAM as u64);
        let off = filters(false, false);
        for domain in [af_inet, af_unix, af_netlink, libc::AF_INET6 as u64] {
            check(&off, libc::SYS_socket, &[domain, stream, 0], EPERM);
            check(&off, libc::SYS_socket, &[domain, dgram, 0], EPERM);
        }
        check(
            &off,
            libc::SYS_socketpair,
            &[af_unix, stream, 0, 0],
            RET_ALLOW,
        );
        let on = filters(true, false);
        check(&on, libc::SYS_socket, &[af_inet, stream, 6], RET_ALLOW);
        check(&on, libc::SYS_socket, &[af_inet, dgram, 0], RET_ALLOW);
        check(&on, libc::SYS_socket, &[af_unix, stream, 0], RET_ALLOW);
        check(
            &on,
            libc::SYS_socket,
            &[af_inet, stream, IPPROTO_MPTCP],
            EPERM,
        );
        check(
            &on,
            libc::SYS_socket,
            &[libc::AF_PACKET as u64, dgram, 0],
            EPERM,
        );
        let raw = libc::SOCK_RAW as u64;
        let flags = (libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) as u64;
        check(&on, libc::SYS_socket, &[af_inet, raw, 1], EPERM);
        check(&on, libc::SYS_socket, &[af_inet, raw | flags, 1], EPERM);
        check(
            &on,
            libc::SYS_socket,
            &[af_inet, stream | flags, 0],
            RET_ALLOW,
        );
    }

    #[test]
    fn namespaces_and_mounts_are_refused() {
        let f = filters(true, true);
        let sigchld = libc::SIGCHLD as u64;
        check(&f, libc::SYS_clone, &[sigchld], RET_ALLOW);
        // What fork and pthread_create pass.
        let thread = (libc::CLONE_VM
            | libc::CLONE_FS
            | libc::CLONE_FILES
            | libc::CLONE_SIGHAND
            | libc::CLONE_THREAD
            | libc::CLONE_SYSVSEM
            | libc::CLONE_SETTLS
            | libc::CLONE_PARENT_SETTID
            | libc::CLONE_CHILD_CLEARTID) as u64;
        check(&f, libc::SYS_clone, &[thread], RET_ALLOW);
        for ns in CLONE_NAMESPACES {
            check(&f, libc::SYS_clone, &[ns | sigchld], EPERM);
            // The upper half of the register is not looked at by the kernel.
            check(&f, libc::SYS_clone, &[ns | sigchld | 1 << 40], EPERM);
        }
        check(&f, libc::SYS_clone3, &[0, 88], ENOSYS);
        for nr in [
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_open_tree,
            libc::SYS_move_mount,
            libc::SYS_fsopen,
            libc::SYS_fsmount,
            libc::SYS_fsconfig,
            libc::SYS_fspick,
            libc::SYS_mount_setattr,
        ] {
            check(&f, nr, &[0], EPERM);
        }
    }

    #[test]
    fn devices_and_other_processes_are_refused() {
        let f = filters(false, false);
        let dev = |kind: u32| u64::from(kind | 0o600);
        check(
            &f,
            libc::SYS_mknodat,
            &[0, 0, dev(libc::S_IFBLK), 0x700],
            EPERM,
        );
        check(
            &f,
            libc::SYS_mknodat,
            &[0, 0, dev(libc::S_IFCHR), 0x103],
            EPERM,
        );
        check(
            &f,
            libc::SYS_mknodat,
            &[0, 0, dev(libc::S_IFIFO), 0],
            RET_ALLOW,
        );
        check(
            &f,
            libc::SYS_mknodat,
            &[0, 0, dev(libc::S_IFREG), 0],
            RET_ALLOW,
        );
        check(
            &f,
            libc::SYS_mknodat,
            &[0, 0, dev(libc::S_IFSOCK), 0],
            RET_ALLOW,
        );
        #[cfg(target_arch = "x86_64")]
        {
            check(&f, libc::SYS_mknod, &[0, dev(libc::S_IFBLK), 0], EPERM);
            check(&f, libc::SYS_mknod, &[0, dev(libc::S_IFIFO), 0], RET_ALLOW);
        }
        check(&f, libc::SYS_setpriority, &[0, 0, 10], RET_ALLOW);
        check(&f, libc::SYS_setpriority, &[0, 1234, 10], EPERM);
        check(&f, libc::SYS_ioprio_set, &[1, 1234, 0], EPERM);
        check(&f, libc::SYS_ioprio_set, &[1, 0, 0], RET_ALLOW);
        check(&f, libc::SYS_sched_setaffinity, &[0, 8, 1], RET_ALLOW);
        check(&f, libc::SYS_sched_setaffinity, &[1, 8, 1], EPERM);
        check(&f, libc::SYS_sched_setattr, &[9, 1, 0], EPERM);
        check(&f, libc::SYS_prlimit64, &[0, 7, 0x1000, 0], RET_ALLOW);
        check(&f, libc::SYS_prlimit64, &[1234, 7, 0, 0x1000], RET_ALLOW);
        check(&f, libc::SYS_prlimit64, &[1234, 7, 0x1000, 0], EPERM);
        check(
            &f,
            libc::SYS_prlimit64,
            &[1234, 7, 0x7f00_0000_0000, 0],
            EPERM,
        );
        check(&f, libc::SYS_personality, &[0xffff_ffff], RET_ALLOW);
        check(&f, libc::SYS_personality, &[0], RET_ALLOW);
        check(&f, libc::SYS_personality, &[0x0040000], EPERM);
        check(&f, libc::SYS_personality, &[8], EPERM);
        for nr in [
            libc::SYS_reboot,
            libc::SYS_sethostname,
            libc::SYS_adjtimex,
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_bpf,
            libc::SYS_io_uring_setup,
            libc::SYS_perf_event_open,
        ] {
            check(&f, nr, &[0], EPERM);
        }
        check(&f, libc::SYS_ioctl, &[0, TIOCSTI, 0], EPERM);
        check(&f, libc::SYS_ioctl, &[0, TIOCLINUX, 0], EPERM);
        check(&f, libc::SYS_ioctl, &[0, 0x5413, 0], RET_ALLOW);
        check(&f, libc::SYS_ioctl, &[0, 0x541b, 0], RET_ALLOW);
        for nr in [
            libc::SYS_read,
            libc::SYS_openat,
            libc::SYS_execve,
            libc::SYS_getpid,
            libc::SYS_landlock_restrict_self,
        ] {
            check(&f, nr, &[0], RET_ALLOW);
        }
    }

    #[test]
    fn ipc_needs_a_namespace() {
        let shared = filters(false, false);
        let own = filters(false, true);
        for nr in [
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_msgget,
            libc::SYS_semget,
            libc::SYS_mq_open,
            libc::SYS_mq_unlink,
        ] {
            check(&shared, nr, &[0], EPERM);
            check(&own, nr, &[0], RET_ALLOW);
        }
    }

    #[test]
    fn other_abis_fail_without_a_kill() {
        let f = filters(true, false);
        let mut c = Call::new(libc::SYS_getpid, &[]);
        c.arch = 3 | 0x4000_0000; // AUDIT_ARCH_I386
        assert_eq!(answer(&f, &c), ENOSYS);
        if cfg!(target_arch = "x86_64") {
            let c = Call::new(libc::SYS_getpid | i64::from(X32_SYSCALL_BIT), &[]);
            assert_eq!(answer(&f, &c), ENOSYS);
        }
        for p in f.programs() {
            assert!(!p.iter().any(|i| i.code == BPF_RET_K
                && (i.k & 0xffff_0000) != RET_ERRNO
                && i.k != RET_ALLOW));
        }
    }
}
