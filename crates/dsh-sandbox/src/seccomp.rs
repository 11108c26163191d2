//! The system-call filter: what no confined command needs, refused with an
//! errno (never a kill, so a program that probes a call sees it fail and
//! goes on).
//!
//! The filter is one classic BPF program, built before `fork` (it
//! allocates) and installed by [`ChildPlan::apply`](crate::ChildPlan::apply)
//! last, after the capabilities are dropped, `PR_SET_NO_NEW_PRIVS` is set
//! and the Landlock domain is entered. It answers:
//!
//! 1. **Another ABI** (i386 `int 0x80` on x86_64, arm32 compat on aarch64)
//!    and, on x86_64, **any x32 call** (numbers with bit `0x40000000`,
//!    which would otherwise match no rule): `ENOSYS`.
//! 2. **`clone3`**: `ENOSYS`: its flags sit in memory the filter cannot
//!    read, and libc falls back to `clone`, whose flags it can.
//! 3. **The denials** (`EPERM`):
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
//!
//! Every other call is allowed.
//!
//! # Layout
//!
//! After the architecture check (and the x32 one), the program is a
//! balanced binary search on the call number (`jge`) over the sorted
//! numbers of the calls that have a rule; each leaf (`jeq`) leads to that
//! call's argument checks, or straight to its errno for a call refused
//! whatever its arguments, and every other call reaches `ret ALLOW` after
//! about log₂ *n* compares, without loading an argument. Installing a
//! filter makes the kernel emulate it for every call number to find the
//! ones it always allows (`seccomp_cache_prepare`, which gives up on a
//! call at its first argument load); with the linear chain of one compare
//! per call built before (with `seccompiler`), that emulation ran some 150
//! instructions for each of ~450 calls at every `exec`, 0.25 to 0.4 ms per
//! spawned command; the search runs about 12. A jump that would need an
//! offset beyond the 8 bits of a conditional jump goes through a `ja` (32
//! bits), or to a nearer copy of the `ret` it aims at.
//!
//! A condition on an argument looks at its low 32 bits (what the kernel
//! reads of an `int`) or at all 64, as the high and the low 32-bit word.
//!
//! Only x86_64 and aarch64 are supported; elsewhere
//! [`SeccompFilters::build`] reports the filter unavailable.

#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code, unused_imports)
)]

use crate::SandboxUnavailable;
use std::collections::BTreeMap;

/// What the filter of one command allows beyond the fixed denials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeccompOptions {
    /// Sockets may be created (only packet, raw and MPTCP ones are refused).
    pub network: bool,
    /// With `network` off: TCP stream sockets of IPv4 and IPv6 may still be
    /// created, every other socket is refused (UDP and DNS among them), so
    /// a command reaches the network only where Landlock lets it connect:
    /// the filtering proxy's port.
    pub stream_only: bool,
    /// The command runs in an IPC namespace of its own, so System V IPC and
    /// POSIX message queues reach nothing outside it.
    pub ipc_namespace: bool,
}

/// One instruction of a classic BPF program (`struct sock_filter`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SockFilter {
    /// The opcode.
    pub code: u16,
    /// The offset of the next instruction when a conditional jump is taken.
    pub jt: u8,
    /// The offset of the next instruction when it is not.
    pub jf: u8,
    /// The operand.
    pub k: u32,
}

/// The filter of one command: a classic BPF program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeccompFilters {
    program: Vec<SockFilter>,
}

/// `AUDIT_ARCH_*` of the architecture this was built for.
#[cfg(target_arch = "x86_64")]
const NATIVE: Option<u32> = Some(62 | 0x8000_0000 | 0x4000_0000);
#[cfg(target_arch = "aarch64")]
const NATIVE: Option<u32> = Some(183 | 0x8000_0000 | 0x4000_0000);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NATIVE: Option<u32> = None;

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
/// `BPF_ALU | BPF_AND | BPF_K`.
const BPF_ALU_AND_K: u16 = 0x04 | 0x50;
/// `BPF_JMP | BPF_JA`.
const BPF_JMP_JA: u16 = 0x05;
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30;
const BPF_JMP_JSET_K: u16 = 0x05 | 0x40;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
/// `BPF_MAXINSNS`.
const MAX_PROGRAM_LEN: usize = 4096;
/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_ARGS: u32 = 16;

fn errno(e: i32) -> u32 {
    RET_ERRNO | (e as u32 & 0xffff)
}

/// How much of an argument a condition looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// The low 32 bits: what the kernel reads of an `int` argument (the
    /// upper half of the register is not looked at).
    Low,
    /// All 64 bits, compared as the high and the low 32-bit word.
    Full,
}

/// What a condition compares an argument with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq(u64),
    Ne(u64),
    /// `arg & mask == value & mask`.
    MaskedEq {
        mask: u64,
        value: u64,
    },
}

/// A condition on one argument (0 to 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cond {
    arg: u8,
    width: Width,
    cmp: Cmp,
}

/// A condition on the low 32 bits of argument `arg`.
fn low(arg: u8, cmp: Cmp) -> Cond {
    Cond {
        arg,
        width: Width::Low,
        cmp,
    }
}

/// How a call is refused: with `errno` when one of `rules` holds (each all
/// of its conditions), or whatever its arguments when there is no rule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Refusal {
    errno: i32,
    rules: Vec<Vec<Cond>>,
}

/// The refusals, by call number.
type Table = BTreeMap<u32, Refusal>;

fn nr(call: libc::c_long) -> u32 {
    u32::try_from(call).expect("a system-call number")
}

/// The calls refused whatever their arguments.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn always_denied(options: SeccompOptions) -> Vec<libc::c_long> {
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
    if !options.network && !options.stream_only {
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

/// Every call the filter refuses, and when.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn table(options: SeccompOptions) -> Table {
    let eperm = |rules: Vec<Vec<Cond>>| Refusal {
        errno: libc::EPERM,
        rules,
    };
    let mut table: Table = always_denied(options)
        .into_iter()
        .map(|call| (nr(call), eperm(vec![])))
        .collect();
    let ifmt = u64::from(libc::S_IFMT);
    let devices = |arg: u8| {
        eperm(
            [libc::S_IFCHR, libc::S_IFBLK]
                .map(|kind| {
                    vec![low(
                        arg,
                        Cmp::MaskedEq {
                            mask: ifmt,
                            value: u64::from(kind),
                        },
                    )]
                })
                .into(),
        )
    };
    #[cfg(target_arch = "x86_64")]
    table.insert(nr(libc::SYS_mknod), devices(1));
    table.insert(nr(libc::SYS_mknodat), devices(2));
    table.insert(
        nr(libc::SYS_clone),
        eperm(
            CLONE_NAMESPACES
                .iter()
                .map(|&f| vec![low(0, Cmp::MaskedEq { mask: f, value: f })])
                .collect(),
        ),
    );
    let other = |arg: u8| eperm(vec![vec![low(arg, Cmp::Ne(0))]]);
    table.insert(nr(libc::SYS_setpriority), other(1));
    table.insert(nr(libc::SYS_ioprio_set), other(1));
    for call in [
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
    ] {
        table.insert(nr(call), other(0));
    }
    table.insert(
        nr(libc::SYS_prlimit64),
        eperm(vec![vec![
            low(0, Cmp::Ne(0)),
            Cond {
                arg: 2,
                width: Width::Full,
                cmp: Cmp::Ne(0),
            },
        ]]),
    );
    table.insert(
        nr(libc::SYS_personality),
        eperm(vec![vec![
            low(0, Cmp::Ne(0xffff_ffff)),
            low(0, Cmp::Ne(PER_LINUX)),
        ]]),
    );
    // Typing into the terminal the command shares with its caller, which
    // would run once the command is gone.
    table.insert(
        nr(libc::SYS_ioctl),
        eperm(vec![
            vec![low(1, Cmp::Eq(TIOCSTI))],
            vec![low(1, Cmp::Eq(TIOCLINUX))],
        ]),
    );
    if !options.network && options.stream_only {
        // Refused: any domain but IPv4 and IPv6, any type but a stream
        // (the low four bits; the rest are flags), any protocol but TCP
        // (SCTP, MPTCP, SMC make stream sockets Landlock's TCP rules do
        // not govern).
        let mut refused = vec![vec![
            low(0, Cmp::Ne(libc::AF_INET as u64)),
            low(0, Cmp::Ne(libc::AF_INET6 as u64)),
        ]];
        for kind in (0..16u64).filter(|k| *k != libc::SOCK_STREAM as u64) {
            refused.push(vec![low(
                1,
                Cmp::MaskedEq {
                    mask: 0xf,
                    value: kind,
                },
            )]);
        }
        refused.push(vec![
            low(2, Cmp::Ne(0)),
            low(2, Cmp::Ne(libc::IPPROTO_TCP as u64)),
        ]);
        table.insert(nr(libc::SYS_socket), eperm(refused));
    }
    if options.network {
        table.insert(
            nr(libc::SYS_socket),
            eperm(vec![
                vec![low(0, Cmp::Eq(libc::AF_PACKET as u64))],
                vec![low(
                    1,
                    Cmp::MaskedEq {
                        mask: 0xf,
                        value: libc::SOCK_RAW as u64,
                    },
                )],
                vec![low(2, Cmp::Eq(IPPROTO_MPTCP))],
            ]),
        );
    }
    table.insert(
        nr(libc::SYS_clone3),
        Refusal {
            errno: libc::ENOSYS,
            rules: vec![],
        },
    );
    table
}

/// Where a jump goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    /// An instruction already placed.
    At(At),
    /// A `ret` of this value: the nearest one placed, or a new one.
    Ret(u32),
}

/// An instruction's place, counted from the end of the program (0: the
/// last one).
type At = usize;

/// A program written from its end backwards, so that every jump's target
/// is placed before the jump and its offset known.
#[derive(Default)]
struct Asm {
    /// The instructions, the last one first.
    rev: Vec<SockFilter>,
}

impl Asm {
    fn push(&mut self, code: u16, jt: u8, jf: u8, k: u32) -> At {
        self.rev.push(SockFilter { code, jt, jf, k });
        self.rev.len() - 1
    }

    /// `ret k`.
    fn ret(&mut self, k: u32) -> At {
        self.push(BPF_RET_K, 0, 0, k)
    }

    /// Loads the 32-bit word at `offset` of `struct seccomp_data`, then
    /// falls through to the instruction placed last.
    fn load(&mut self, offset: u32) -> At {
        self.push(BPF_LD_W_ABS, 0, 0, offset)
    }

    /// Masks the accumulator, then falls through to the instruction placed
    /// last.
    fn and(&mut self, mask: u32) -> At {
        self.push(BPF_ALU_AND_K, 0, 0, mask)
    }

    /// The offset from the next instruction placed to `target`.
    fn offset(&self, target: At) -> usize {
        self.rev.len() - target - 1
    }

    /// `to` as a place: the nearest `ret` it names (placing one if there is
    /// none).
    fn resolve(&mut self, to: To) -> At {
        match to {
            To::At(at) => at,
            To::Ret(k) => match self
                .rev
                .iter()
                .rposition(|i| i.code == BPF_RET_K && i.k == k)
            {
                Some(at) => at,
                None => self.ret(k),
            },
        }
    }

    /// A way to `target` within reach of the next instruction: a copy of
    /// it if it returns, else a `ja`.
    fn stub(&mut self, target: At) -> At {
        let i = self.rev[target];
        if i.code == BPF_RET_K {
            self.ret(i.k)
        } else {
            self.goto(target)
        }
    }

    /// A conditional jump: to `jt` when the accumulator compares true with
    /// `k`, else to `jf`.
    fn jump(&mut self, code: u16, k: u32, jt: To, jf: To) -> At {
        let mut jt = self.resolve(jt);
        let mut jf = self.resolve(jf);
        loop {
            let far = |at| self.offset(at) > usize::from(u8::MAX);
            if far(jt) {
                let near = self.stub(jt);
                if jf == jt {
                    jf = near;
                }
                jt = near;
            } else if far(jf) {
                jf = self.stub(jf);
            } else {
                break;
            }
        }
        let (t, f) = (self.offset(jt), self.offset(jf));
        self.push(code, t as u8, f as u8, k)
    }

    /// Compares the word of `struct seccomp_data` at `offset`, masked,
    /// with `value`: on to `eq` if equal, else to `ne`.
    fn word(&mut self, offset: u32, mask: u32, value: u32, eq: To, ne: To) -> At {
        self.jump(BPF_JMP_JEQ_K, value & mask, eq, ne);
        if mask != u32::MAX {
            self.and(mask);
        }
        self.load(offset)
    }

    /// `cond`: on to `yes` if it holds, else to `no`.
    fn cond(&mut self, cond: &Cond, yes: To, no: To) -> At {
        let lo = DATA_ARGS + 8 * u32::from(cond.arg);
        let hi = lo + 4;
        let (mask, value, equal_holds) = match cond.cmp {
            Cmp::Eq(v) => (u64::MAX, v, true),
            Cmp::Ne(v) => (u64::MAX, v, false),
            Cmp::MaskedEq { mask, value } => (mask, value, true),
        };
        let (eq, ne) = if equal_holds { (yes, no) } else { (no, yes) };
        let low = self.word(lo, mask as u32, value as u32, eq, ne);
        match cond.width {
            Width::Low => low,
            // The high words equal: the low ones decide.
            Width::Full => self.word(
                hi,
                (mask >> 32) as u32,
                (value >> 32) as u32,
                To::At(low),
                ne,
            ),
        }
    }

    /// The argument checks of `refusal`, which has rules: its errno if one
    /// of them holds, else allowed.
    fn checks(&mut self, refusal: &Refusal) -> At {
        let deny = To::Ret(errno(refusal.errno));
        let mut next = To::Ret(RET_ALLOW);
        for rule in refusal.rules.iter().rev() {
            let mut holds = deny;
            for cond in rule.iter().rev() {
                holds = To::At(self.cond(cond, holds, next));
            }
            next = holds;
        }
        self.resolve(next)
    }

    /// A binary search of the call number over `calls` (sorted): each one
    /// on to its refusal, any other allowed.
    fn search(&mut self, calls: &[(u32, &Refusal)]) -> At {
        match calls {
            [] => self.resolve(To::Ret(RET_ALLOW)),
            [(nr, refusal)] => {
                let then = if refusal.rules.is_empty() {
                    To::Ret(errno(refusal.errno))
                } else {
                    To::At(self.checks(refusal))
                };
                self.jump(BPF_JMP_JEQ_K, *nr, then, To::Ret(RET_ALLOW))
            }
            _ => {
                let (below, above) = calls.split_at(calls.len() / 2);
                let above_at = self.search(above);
                let below_at = self.search(below);
                self.jump(
                    BPF_JMP_JGE_K,
                    above[0].0,
                    To::At(above_at),
                    To::At(below_at),
                )
            }
        }
    }

    /// Goes on to `at` from the instruction placed next (a `ja` unless
    /// `at` was placed last).
    fn goto(&mut self, at: At) -> At {
        if at + 1 == self.rev.len() {
            at
        } else {
            let k = u32::try_from(self.offset(at)).expect("a short program");
            self.push(BPF_JMP_JA, 0, 0, k)
        }
    }

    /// The program, first instruction first.
    fn finish(mut self) -> Vec<SockFilter> {
        self.rev.reverse();
        self.rev
    }
}

/// The program answering `table` for calls of `audit_arch`.
fn assemble(table: &Table, audit_arch: u32) -> Vec<SockFilter> {
    let enosys = To::Ret(errno(libc::ENOSYS));
    let mut asm = Asm::default();
    // The last instruction must return.
    asm.ret(RET_ALLOW);
    let calls: Vec<(u32, &Refusal)> = table.iter().map(|(&nr, r)| (nr, r)).collect();
    let mut search = asm.search(&calls);
    if cfg!(target_arch = "x86_64") {
        search = asm.jump(BPF_JMP_JSET_K, X32_SYSCALL_BIT, enosys, To::At(search));
    }
    asm.goto(search);
    let nr = asm.load(DATA_NR);
    asm.jump(BPF_JMP_JEQ_K, audit_arch, To::At(nr), enosys);
    asm.load(DATA_ARCH);
    asm.finish()
}

impl SeccompFilters {
    /// The filter for a command confined with `options`.
    ///
    /// # Errors
    /// This architecture is neither x86_64 nor aarch64, or the program
    /// would be too long.
    pub fn build(options: SeccompOptions) -> Result<SeccompFilters, SandboxUnavailable> {
        let Some(audit) = NATIVE else {
            return Err(SandboxUnavailable(format!(
                "no system-call filter for {}",
                std::env::consts::ARCH
            )));
        };
        Self::build_native(options, audit)
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn build_native(_: SeccompOptions, _: u32) -> Result<SeccompFilters, SandboxUnavailable> {
        Err(SandboxUnavailable(
            "no system-call filter for this architecture".into(),
        ))
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn build_native(
        options: SeccompOptions,
        audit: u32,
    ) -> Result<SeccompFilters, SandboxUnavailable> {
        let program = assemble(&table(options), audit);
        if program.len() > MAX_PROGRAM_LEN {
            return Err(SandboxUnavailable(format!(
                "the system-call filter would have {} instructions, more than the kernel takes",
                program.len()
            )));
        }
        Ok(SeccompFilters { program })
    }

    /// The program to install.
    pub fn program(&self) -> &[SockFilter] {
        &self.program
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
                arch: NATIVE.unwrap(),
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

    /// Runs one classic BPF program as the kernel would: its answer, the
    /// instructions run and whether an argument was loaded.
    fn trace(p: &[SockFilter], c: &Call) -> (u32, usize, bool) {
        let (mut acc, mut pc, mut steps, mut args) = (0u32, 0usize, 0usize, false);
        loop {
            let i = &p[pc];
            pc += 1;
            steps += 1;
            let jump = |taken: bool| if taken { i.jt } else { i.jf } as usize;
            match i.code {
                0x20 => {
                    args |= i.k >= DATA_ARGS;
                    acc = c.word(i.k);
                }
                0x54 => acc &= i.k,
                0x05 => pc += i.k as usize,
                0x15 => pc += jump(acc == i.k),
                0x25 => pc += jump(acc > i.k),
                0x35 => pc += jump(acc >= i.k),
                0x45 => pc += jump(acc & i.k != 0),
                0x06 => return (i.k, steps, args),
                code => panic!("opcode {code:#x}"),
            }
        }
    }

    fn run(p: &[SockFilter], c: &Call) -> u32 {
        trace(p, c).0
    }

    /// The filter's answer to `c`.
    fn answer(f: &SeccompFilters, c: &Call) -> u32 {
        run(f.program(), c)
    }

    fn filters(network: bool, ipc_namespace: bool) -> SeccompFilters {
        SeccompFilters::build(SeccompOptions {
            network,
            stream_only: false,
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
        assert!(!f
            .program()
            .iter()
            .any(|i| i.code == BPF_RET_K && (i.k & 0xffff_0000) != RET_ERRNO && i.k != RET_ALLOW));
    }

    /// Every variant of the filter, with its table.
    fn variants() -> Vec<(SeccompOptions, Table, SeccompFilters)> {
        (0..8)
            .map(|i| (i & 4 != 0, i & 2 != 0, i & 1 != 0))
            // A stream-only filter matters only with the network off.
            .filter(|(network, stream_only, _)| !(*network && *stream_only))
            .map(|(network, stream_only, ipc_namespace)| {
                let options = SeccompOptions {
                    network,
                    stream_only,
                    ipc_namespace,
                };
                (
                    options,
                    table(options),
                    SeccompFilters::build(options).unwrap(),
                )
            })
            .collect()
    }

    impl Cond {
        /// Whether the condition holds for `args`, as its definition says.
        fn holds(&self, args: &[u64; 6]) -> bool {
            let width = match self.width {
                Width::Low => u64::from(u32::MAX),
                Width::Full => u64::MAX,
            };
            let a = args[usize::from(self.arg)] & width;
            match self.cmp {
                Cmp::Eq(v) => a == v & width,
                Cmp::Ne(v) => a != v & width,
                Cmp::MaskedEq { mask, value } => a & mask == value & mask & width,
            }
        }
    }

    /// What the table says of `c`: the errno of a refusal, or allowed.
    fn table_says(table: &Table, c: &Call) -> u32 {
        if c.arch != NATIVE.unwrap()
            || (cfg!(target_arch = "x86_64") && c.nr as u32 & X32_SYSCALL_BIT != 0)
        {
            return ENOSYS;
        }
        match table.get(&(c.nr as u32)) {
            Some(r)
                if r.rules.is_empty()
                    || r.rules
                        .iter()
                        .any(|rule| rule.iter().all(|c2| c2.holds(&c.args))) =>
            {
                errno(r.errno)
            }
            _ => RET_ALLOW,
        }
    }

    #[test]
    fn every_call_number_as_the_table_says() {
        for (options, table, f) in variants() {
            let mut refused = 0;
            for nr in 0..=500 {
                let c = Call::new(nr, &[]);
                let want = table_says(&table, &c);
                refused += usize::from(want != RET_ALLOW);
                let got = answer(&f, &c);
                assert_eq!(
                    got, want,
                    "{options:?}: syscall {nr}: {got:#x}, want {want:#x}"
                );
            }
            // At least the calls refused whatever their arguments.
            let outright = table.values().filter(|r| r.rules.is_empty()).count();
            assert!(refused >= outright, "{options:?}: {refused} < {outright}");
        }
    }

    /// Values of an argument on either side of where `cond` changes.
    fn boundaries(cond: &Cond) -> Vec<u64> {
        let mut v = vec![0, 1, u64::from(u32::MAX), u64::MAX, 1 << 32, 1 << 63];
        let around = |x: u64| {
            [
                x,
                x.wrapping_add(1),
                x.wrapping_sub(1),
                x | 1 << 32,
                x ^ 1 << 32,
                x | 0xffff_ffff_0000_0000,
                x ^ 1 << 63,
                u64::from(x as u32),
            ]
        };
        match cond.cmp {
            Cmp::Eq(x) | Cmp::Ne(x) => v.extend(around(x)),
            Cmp::MaskedEq { mask, value } => {
                let m = value & mask;
                v.extend(around(m));
                v.extend(around(m | !mask));
                v.extend(around(!m & mask));
                for bit in (0..64).filter(|b| mask >> b & 1 == 1) {
                    v.extend(around(m ^ 1 << bit));
                    v.extend(around((m | !mask) ^ 1 << bit));
                }
            }
        }
        v
    }

    #[test]
    fn argument_rules_at_their_boundaries() {
        for (options, table, f) in variants() {
            for (&nr, refusal) in table.iter().filter(|(_, r)| !r.rules.is_empty()) {
                // The boundary values of every condition on each argument,
                // in every combination over the arguments looked at.
                let mut values: [Vec<u64>; 6] = Default::default();
                for cond in refusal.rules.iter().flatten() {
                    values[usize::from(cond.arg)].extend(boundaries(cond));
                }
                for v in &mut values {
                    v.sort_unstable();
                    v.dedup();
                    if v.is_empty() {
                        v.push(0);
                    }
                }
                let mut combos = vec![[0u64; 6]];
                for (arg, vs) in values.iter().enumerate() {
                    combos = combos
                        .into_iter()
                        .flat_map(|c| {
                            vs.iter().map(move |&x| {
                                let mut c = c;
                                c[arg] = x;
                                c
                            })
                        })
                        .collect();
                }
                let (mut refused, mut allowed) = (0, 0);
                for args in combos {
                    let c = Call::new(i64::from(nr), &args);
                    let want = table_says(&table, &c);
                    let got = answer(&f, &c);
                    assert_eq!(
                        got, want,
                        "{options:?}: syscall {nr} {args:#x?}: {got:#x}, want {want:#x}"
                    );
                    if want == RET_ALLOW {
                        allowed += 1;
                    } else {
                        refused += 1;
                    }
                }
                assert!(
                    refused > 0 && allowed > 0,
                    "{options:?}: syscall {nr}: the boundaries miss a side"
                );
            }
        }
    }

    /// The kernel's `seccomp_is_const_allow`: runs `p` knowing only the
    /// call number and architecture; the instructions run when it surely
    /// allows the call, `None` when it loads an argument or does not allow.
    fn const_allow(p: &[SockFilter], nr: u32, arch: u32) -> Option<usize> {
        let (mut acc, mut pc, mut steps) = (0u32, 0usize, 0usize);
        while pc < p.len() {
            let i = &p[pc];
            steps += 1;
            match i.code {
                BPF_LD_W_ABS => match i.k {
                    DATA_NR => acc = nr,
                    DATA_ARCH => acc = arch,
                    _ => return None,
                },
                BPF_RET_K => return (i.k == RET_ALLOW).then_some(steps),
                BPF_JMP_JA => pc += i.k as usize,
                BPF_JMP_JEQ_K | 0x25 | BPF_JMP_JGE_K | BPF_JMP_JSET_K => {
                    let taken = match i.code {
                        BPF_JMP_JEQ_K => acc == i.k,
                        0x25 => acc > i.k,
                        BPF_JMP_JGE_K => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                BPF_ALU_AND_K => acc &= i.k,
                _ => return None,
            }
            pc += 1;
        }
        panic!("ran off the end of the program");
    }

    #[test]
    fn calls_without_rules_load_no_argument() {
        for (options, table, f) in variants() {
            let p = f.program();
            // Arch, x32, the search (a jge per level, a jeq) and the ret,
            // with room for a `ja` on the way.
            let depth = usize::BITS - (table.len() - 1).leading_zeros();
            let bound = 4 + depth as usize + 1 + 1 + 1;
            for nr in 0..1024u32 {
                match (table.get(&nr), const_allow(p, nr, NATIVE.unwrap())) {
                    (None, Some(steps)) => {
                        assert!(
                            steps <= bound,
                            "{options:?}: syscall {nr}: {steps} > {bound}"
                        );
                        // The same path with any arguments.
                        let c = Call::new(i64::from(nr), &[u64::MAX; 6]);
                        let (got, run, args) = trace(p, &c);
                        assert_eq!((got, run, args), (RET_ALLOW, steps, false));
                    }
                    (None, None) => panic!("{options:?}: syscall {nr} is not always allowed"),
                    (Some(_), Some(_)) => panic!("{options:?}: syscall {nr} always allowed"),
                    (Some(_), None) => {}
                }
            }
            // Another ABI is never allowed.
            assert_eq!(
                const_allow(p, libc::SYS_getpid as u32, 3 | 0x4000_0000),
                None
            );
        }
    }

    #[test]
    fn jumps_stay_in_the_program() {
        for (options, _, f) in variants() {
            let p = f.program();
            assert!(p.len() <= MAX_PROGRAM_LEN);
            assert_eq!(p.last().map(|i| i.code), Some(BPF_RET_K));
            for (pc, i) in p.iter().enumerate() {
                let next = pc + 1;
                match i.code {
                    BPF_LD_W_ABS => assert!(i.k % 4 == 0 && i.k < 64, "{options:?}: load at {pc}"),
                    BPF_ALU_AND_K => {}
                    BPF_RET_K => assert!(
                        i.k == RET_ALLOW || i.k & 0xffff_0000 == RET_ERRNO,
                        "{options:?}: ret {:#x} at {pc}",
                        i.k
                    ),
                    BPF_JMP_JA => {
                        assert!(next + (i.k as usize) < p.len(), "{options:?}: ja at {pc}")
                    }
                    BPF_JMP_JEQ_K | BPF_JMP_JGE_K | BPF_JMP_JSET_K => assert!(
                        next + usize::from(i.jt.max(i.jf)) < p.len(),
                        "{options:?}: jump at {pc}"
                    ),
                    code => panic!("{options:?}: opcode {code:#x} at {pc}"),
                }
                // Only jumps go elsewhere than the next instruction.
                if !matches!(i.code, BPF_JMP_JEQ_K | BPF_JMP_JGE_K | BPF_JMP_JSET_K) {
                    assert_eq!((i.jt, i.jf), (0, 0), "{options:?}: offsets at {pc}");
                }
            }
        }
    }

    #[test]
    fn far_jumps_go_through_a_ja_or_a_nearer_ret() {
        // A call refused with many rules: its checks are longer than a
        // conditional jump reaches.
        let many = Refusal {
            errno: libc::EPERM,
            rules: (0..200u64)
                .map(|v| vec![low(1, Cmp::Eq(v + 1000))])
                .collect(),
        };
        let mut t = Table::new();
        t.insert(1, many);
        for nr in [0, 2, 3, 500] {
            t.insert(
                nr,
                Refusal {
                    errno: libc::EACCES,
                    rules: vec![],
                },
            );
        }
        let p = assemble(&t, NATIVE.unwrap());
        assert!(p.len() > 400, "{}", p.len());
        assert!(p.iter().any(|i| i.code == BPF_JMP_JA));
        let eacces = errno(libc::EACCES);
        let eperm = errno(libc::EPERM);
        for (nr, args, want) in [
            (1, [0, 1000], eperm),
            (1, [0, 1100], eperm),
            (1, [0, 1199], eperm),
            (1, [0, 999], RET_ALLOW),
            (1, [0, 1200], RET_ALLOW),
            (1, [1, 0], RET_ALLOW),
            (0, [0, 0], eacces),
            (2, [0, 0], eacces),
            (3, [0, 0], eacces),
            (500, [0, 0], eacces),
            (4, [0, 0], RET_ALLOW),
            (499, [0, 0], RET_ALLOW),
        ] {
            let got = run(&p, &Call::new(nr, &args));
            assert_eq!(got, want, "syscall {nr} {args:?}: {got:#x}, want {want:#x}");
        }
    }

    #[test]
    fn one_short_program() {
        for (options, table, f) in variants() {
            let len = f.program().len();
            // The header, a jge or jeq per call, the argument checks (at
            // most three loads, masks and compares per condition) and a few
            // returns.
            let conds: usize = table
                .values()
                .map(|r| r.rules.iter().map(Vec::len).sum::<usize>())
                .sum();
            let bound = 6 + 2 * table.len() + 6 * conds + 8;
            assert!(len <= bound, "{options:?}: {len} > {bound}");
            assert!(len < 300, "{options:?}: {len}");
        }
    }
}
