//! Escapes a confined command tries, one test per class: each spawns a real
//! process under a [`ChildPlan`] (Landlock workspace-write ruleset on a
//! temp directory, network off, no capabilities, the system-call filter)
//! and checks on the effect, not only the exit code, that nothing outside
//! changed. What a test creates is removed by a guard, also when an
//! assertion fails.
//!
//! These run as root, as CI and the developers' machines do: the point is
//! that root inside the sandbox is held too (several controls, which show
//! the attack works unconfined, need root).

use dsh_sandbox::{confine, support, ChildConfig, ChildPlan, SandboxMode, SandboxPolicy};
use std::ffi::CString;
use std::io::ErrorKind;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Runs its closure when dropped: cleanup that survives a failed assertion.
struct Guard<F: FnMut()>(F);

impl<F: FnMut()> Drop for Guard<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

/// A fresh directory with `root/` (the working directory), `tmp/` (the
/// private temp directory) and `outside/` (neither), removed at the end.
struct Dirs {
    base: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        static N: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir().join(format!(
            "dsh-escape-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        for d in ["root/sub", "tmp", "outside"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        Dirs { base }
    }
    fn root(&self) -> PathBuf {
        self.base.join("root")
    }
    fn tmp(&self) -> PathBuf {
        self.base.join("tmp")
    }
    fn outside(&self) -> PathBuf {
        self.base.join("outside")
    }
    /// A file outside the roots, with `text`.
    fn victim(&self, text: &str) -> PathBuf {
        let p = self.outside().join("victim");
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        // Flags an escaped chattr may have left would keep the files.
        let _ = Command::new("chattr")
            .args(["-R", "-i", "-a"])
            .arg(&self.base)
            .stderr(std::process::Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The plan of a workspace-write command in `dirs` (network off), with
/// `adjust` applied to its configuration.
fn plan_with(dirs: &Dirs, adjust: impl FnOnce(&mut ChildConfig)) -> ChildPlan {
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        ..SandboxPolicy::default()
    };
    let confinement = confine(&policy, &[dirs.root()], &dirs.tmp()).unwrap();
    let ruleset = confinement.ruleset(support()).unwrap();
    let mut config = ChildConfig {
        ruleset: Some(Arc::new(ruleset)),
        ..ChildConfig::default()
    };
    adjust(&mut config);
    let plan = ChildPlan::prepare(config).unwrap();
    assert!(
        plan.seccomp(),
        "this machine enforces no system-call filter"
    );
    plan
}

fn plan(dirs: &Dirs) -> ChildPlan {
    plan_with(dirs, |_| {})
}

fn output(mut cmd: Command, plan: Option<&ChildPlan>, dirs: &Dirs) -> Output {
    cmd.current_dir(dirs.root()).env("TMPDIR", dirs.tmp());
    if let Some(plan) = plan {
        plan.attach_std(&mut cmd);
    }
    cmd.output().unwrap()
}

/// `sh -c script`, confined by `plan` (unconfined with `None`).
fn sh(plan: Option<&ChildPlan>, dirs: &Dirs, script: &str) -> Output {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(script);
    output(cmd, plan, dirs)
}

/// The real python3 (not a version manager's shim).
fn python() -> &'static str {
    static PY: OnceLock<String> = OnceLock::new();
    PY.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    })
}

/// A python script, with `libc` (ctypes, errno kept) and `os` imported.
fn py(plan: Option<&ChildPlan>, dirs: &Dirs, script: &str) -> Output {
    let mut cmd = Command::new(python());
    cmd.arg("-c").arg(format!(
        "import ctypes, os, socket, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n{script}"
    ));
    output(cmd, plan, dirs)
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn lsattr(path: &Path) -> String {
    let out = Command::new("lsattr").arg("-d").arg(path).output().unwrap();
    stdout(&out)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn no_device_nodes_even_in_writable_places() {
    let dirs = Dirs::new();
    let plan = plan(&dirs);
    let block = dirs.root().join("sub/loop");
    let chr = dirs.tmp().join("mem");
    let out = sh(
        Some(&plan),
        &dirs,
        &format!(
            "mknod {} b 7 0; mknod {} c 1 1; echo done",
            block.display(),
            chr.display()
        ),
    );
    assert!(stdout(&out).contains("done"), "{}", text(&out));
    assert!(!block.exists() && !chr.exists(), "{}", text(&out));
    // A FIFO is no device: that still works.
    let fifo = dirs.tmp().join("fifo");
    let out = sh(Some(&plan), &dirs, &format!("mkfifo {}", fifo.display()));
    assert!(fifo.exists(), "{}", text(&out));
    // The attack is real: unconfined, root makes the block device.
    let out = sh(None, &dirs, &format!("mknod {} b 7 0", block.display()));
    let made = std::fs::symlink_metadata(&block);
    let _ = std::fs::remove_file(&block);
    assert!(made.is_ok(), "control: {}", text(&out));
}

#[test]
fn no_immutable_or_append_only_flags_outside() {
    let dirs = Dirs::new();
    let victim = dirs.victim("v");
    let before = lsattr(&victim);
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        &format!("chattr +i {0}; chattr +a {0}", victim.display()),
    );
    assert_eq!(lsattr(&victim), before, "{}", text(&out));
    assert!(!lsattr(&victim).contains('i') && !lsattr(&victim).contains('a'));
    // Inside the roots neither (CAP_LINUX_IMMUTABLE is gone).
    let inner = dirs.root().join("sub/f");
    std::fs::write(&inner, "x").unwrap();
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        &format!("chattr +i {}", inner.display()),
    );
    assert!(!lsattr(&inner).contains('i'), "{}", text(&out));
}

#[test]
fn no_chown_outside() {
    let dirs = Dirs::new();
    let victim = dirs.victim("v");
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        &format!("chown 1234:1234 {}", victim.display()),
    );
    let meta = std::fs::metadata(&victim).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (0, 0), "{}", text(&out));
    assert!(!out.status.success());
}

fn has_xattr(path: &Path, name: &str) -> bool {
    let p = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let n = CString::new(name).unwrap();
    let mut buf = [0u8; 16];
    // SAFETY: valid NUL-terminated strings and a buffer of the given size.
    let rc = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), 16) };
    rc >= 0
}

#[test]
fn no_trusted_attributes() {
    let dirs = Dirs::new();
    let victim = dirs.victim("v");
    let inner = dirs.root().join("sub/f");
    std::fs::write(&inner, "x").unwrap();
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        &format!(
            "setfattr -n trusted.x -v 1 {}; setfattr -n trusted.x -v 1 {}",
            victim.display(),
            inner.display()
        ),
    );
    assert!(!has_xattr(&victim, "trusted.x"), "{}", text(&out));
    assert!(!has_xattr(&inner, "trusted.x"), "{}", text(&out));
}

#[test]
fn no_write_through_an_inherited_descriptor() {
    let dirs = Dirs::new();
    let victim = dirs.victim("");
    let path = CString::new(victim.as_os_str().as_encoded_bytes()).unwrap();
    // Without O_CLOEXEC, as a careless parent would leave it.
    // SAFETY: a valid path; the descriptor is owned below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_APPEND) };
    assert!(fd > 2);
    // SAFETY: `fd` was just opened and is owned by nobody else.
    let _owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let script = format!(
        "try:\n    os.write({fd}, b'leak')\n    print('wrote')\nexcept OSError as e:\n    print('refused', e.errno)"
    );
    let out = py(Some(&plan(&dirs)), &dirs, &script);
    assert!(stdout(&out).contains("refused"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "");
    // The attack is real: unconfined, the descriptor is inherited.
    let out = py(None, &dirs, &script);
    assert!(stdout(&out).contains("wrote"), "control: {}", text(&out));
}

#[test]
fn no_attaching_to_anothers_shared_memory() {
    // SAFETY: plain System V calls; the segment is removed by the guard.
    let id = unsafe { libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600) };
    assert!(id >= 0);
    let _rm = Guard(|| {
        // SAFETY: removes the segment created above.
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    });
    let dirs = Dirs::new();
    let script = format!(
        "libc.shmat.restype = ctypes.c_void_p\n\
         p = libc.shmat({id}, None, 0)\n\
         if p in (None, 2**64 - 1):\n    print('refused', ctypes.get_errno())\n\
         else:\n    ctypes.memmove(p, b'X', 1)\n    print('wrote')"
    );
    for ipc_namespace in [false, true] {
        let plan = plan_with(&dirs, |c| c.ipc_namespace = ipc_namespace);
        let out = py(Some(&plan), &dirs, &script);
        assert!(stdout(&out).contains("refused"), "{}", text(&out));
        // SAFETY: attaches the segment created above, read-only.
        let p = unsafe { libc::shmat(id, std::ptr::null(), libc::SHM_RDONLY) };
        assert_ne!(p as isize, -1);
        // SAFETY: the segment is 4096 bytes, attached at `p`.
        let first = unsafe { *(p as *const u8) };
        // SAFETY: detaches what was attached.
        unsafe { libc::shmdt(p) };
        assert_eq!(first, 0, "{}", text(&out));
    }
}

#[test]
fn no_removing_anothers_message_queue() {
    let name = format!("/dsh-escape-{}", std::process::id());
    let cname = CString::new(name.clone()).unwrap();
    // SAFETY: a valid name; default attributes.
    let q = unsafe {
        libc::mq_open(
            cname.as_ptr(),
            libc::O_CREAT | libc::O_RDWR,
            0o600,
            std::ptr::null::<libc::mq_attr>(),
        )
    };
    assert!(q >= 0, "{}", std::io::Error::last_os_error());
    let _rm = Guard(|| {
        // SAFETY: closes and removes the queue created above.
        unsafe {
            libc::mq_close(q);
            libc::mq_unlink(cname.as_ptr());
        }
    });
    let dirs = Dirs::new();
    let script = format!(
        "r = libc.mq_unlink(b'{name}')\nprint('refused' if r != 0 else 'removed', ctypes.get_errno())"
    );
    for ipc_namespace in [false, true] {
        let plan = plan_with(&dirs, |c| c.ipc_namespace = ipc_namespace);
        let out = py(Some(&plan), &dirs, &script);
        assert!(stdout(&out).contains("refused"), "{}", text(&out));
        // SAFETY: opens the queue again, without creating it.
        let again = unsafe { libc::mq_open(cname.as_ptr(), libc::O_RDWR) };
        assert!(again >= 0, "the queue is gone: {}", text(&out));
        // SAFETY: closes what was opened.
        unsafe { libc::mq_close(again) };
    }
}

/// The key `desc` in `keyring` (-4: the user's, -3: the session's), if any.
fn key_search(keyring: i64, desc: &str) -> libc::c_long {
    let (ty, d) = (c"user", CString::new(desc).unwrap());
    // SAFETY: KEYCTL_SEARCH with valid strings.
    unsafe { libc::syscall(libc::SYS_keyctl, 10, keyring, ty.as_ptr(), d.as_ptr(), 0) }
}

#[test]
fn no_keys_in_the_users_keyrings() {
    let desc = format!("dsh-escape-{}", std::process::id());
    let _rm = Guard(|| {
        for keyring in [-4, -3] {
            let id = key_search(keyring, &desc);
            if id > 0 {
                // SAFETY: KEYCTL_UNLINK of the key just found.
                unsafe { libc::syscall(libc::SYS_keyctl, 9, id, keyring) };
            }
        }
    });
    let dirs = Dirs::new();
    let script = format!(
        "for ring in (-4, -3):\n    r = libc.syscall({}, b'user', b'{desc}', b'y', 1, ring)\n    print('refused' if r < 0 else 'added', ctypes.get_errno())",
        libc::SYS_add_key
    );
    let out = py(Some(&plan(&dirs)), &dirs, &script);
    assert_eq!(stdout(&out).matches("refused").count(), 2, "{}", text(&out));
    assert!(key_search(-4, &desc) < 0, "{}", text(&out));
    assert!(key_search(-3, &desc) < 0, "{}", text(&out));
}

/// Whether `listener` got a connection.
fn accepted(listener: &std::net::TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    match listener.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn no_tcp_nor_mptcp_to_a_local_listener() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dirs = Dirs::new();
    for proto in [0, 262] {
        let script = format!(
            "try:\n    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, {proto})\n    s.connect(('127.0.0.1', {port}))\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)"
        );
        let out = py(Some(&plan(&dirs)), &dirs, &script);
        assert!(stdout(&out).contains("refused"), "{}", text(&out));
        assert!(!accepted(&listener), "{}", text(&out));
    }
    // The listener works: unconfined, a connection arrives.
    let script = format!("socket.create_connection(('127.0.0.1', {port})); print('connected')");
    let out = py(None, &dirs, &script);
    assert!(accepted(&listener), "control: {}", text(&out));
}

#[test]
fn no_listen_without_bind() {
    let dirs = Dirs::new();
    let script = "try:\n    s = socket.socket()\n    s.listen()\n    print('PORT', s.getsockname()[1])\nexcept OSError as e:\n    print('refused', e.errno)";
    let out = py(Some(&plan(&dirs)), &dirs, script);
    assert!(!stdout(&out).contains("PORT"), "{}", text(&out));
    assert!(stdout(&out).contains("refused"), "{}", text(&out));
}

#[test]
fn no_udp_to_a_local_listener() {
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = udp.local_addr().unwrap().port();
    udp.set_nonblocking(true).unwrap();
    let dirs = Dirs::new();
    let script = format!(
        "try:\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    s.sendto(b'leak', ('127.0.0.1', {port}))\n    print('sent')\nexcept OSError as e:\n    print('refused', e.errno)"
    );
    let out = py(Some(&plan(&dirs)), &dirs, &script);
    assert!(stdout(&out).contains("refused"), "{}", text(&out));
    let mut buf = [0u8; 16];
    match udp.recv_from(&mut buf) {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("received {other:?}: {}", text(&out)),
    }
    // With the network on, UDP goes through (the filter is what stopped it).
    let on = plan_with(&dirs, |c| c.network = true);
    let out = py(Some(&on), &dirs, &script);
    assert!(stdout(&out).contains("sent"), "{}", text(&out));
    udp.set_nonblocking(false).unwrap();
    udp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    assert!(udp.recv_from(&mut buf).is_ok(), "{}", text(&out));
}

#[test]
fn no_connecting_to_a_named_unix_socket_but_socketpair_works() {
    let dirs = Dirs::new();
    let path = dirs.outside().join("sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "try:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect('{}')\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\na, b = socket.socketpair()\na.send(b'ok')\nprint('pair', b.recv(2))",
        path.display()
    );
    let out = py(Some(&plan(&dirs)), &dirs, &script);
    assert!(stdout(&out).contains("refused"), "{}", text(&out));
    assert!(stdout(&out).contains("pair b'ok'"), "{}", text(&out));
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("accepted {other:?}: {}", text(&out)),
    }
}

/// The nice value of `pid` (field 19 of /proc/PID/stat).
fn nice(pid: u32) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(16).unwrap().parse().unwrap()
}

fn open_files_limit(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/limits"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .to_owned()
}

#[test]
fn no_renice_nor_prlimit_of_a_process_outside() {
    /// Killed and reaped when dropped, so its pid is never reused under us.
    struct Sleeper(std::process::Child);
    impl Drop for Sleeper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut sleeper = Sleeper(Command::new("sleep").arg("30").spawn().unwrap());
    let pid = sleeper.0.id();
    let (nice_before, limit_before) = (nice(pid), open_files_limit(pid));
    let dirs = Dirs::new();
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        &format!("renice -n 10 -p {pid}; prlimit --pid {pid} --nofile=10:10; kill {pid}"),
    );
    assert_eq!(nice(pid), nice_before, "{}", text(&out));
    assert_eq!(open_files_limit(pid), limit_before, "{}", text(&out));
    assert!(sleeper.0.try_wait().unwrap().is_none(), "{}", text(&out));
}

#[test]
fn clone3_and_namespaces_are_refused() {
    let dirs = Dirs::new();
    // clone3 with CLONE_INTO_CGROUP: ENOSYS (should it ever fork, the
    // copy exits at once).
    let script = format!(
        "import struct\nargs = ctypes.create_string_buffer(struct.pack('QQQQQQQQQQQ', 0x200000000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 88)\n\
         r = libc.syscall({}, args, 88)\n\
         if r == 0:\n    os._exit(0)\n\
         print('clone3', r, ctypes.get_errno())\n\
         r = libc.syscall({} | 0x40000000)\nprint('x32', r, ctypes.get_errno())",
        libc::SYS_clone3,
        libc::SYS_getpid
    );
    let out = py(Some(&plan(&dirs)), &dirs, &script);
    assert!(
        stdout(&out).contains(&format!("clone3 -1 {}", libc::ENOSYS)),
        "{}",
        text(&out)
    );
    assert!(
        stdout(&out).contains(&format!("x32 -1 {}", libc::ENOSYS)),
        "{}",
        text(&out)
    );
    let target = dirs.root().join("sub");
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        &format!(
            "unshare -r echo userns; unshare -m echo mountns; unshare -n echo netns; \
             mount -t tmpfs none {0} && echo mounted; grep -c ' {0} ' /proc/self/mountinfo",
            target.display()
        ),
    );
    let s = stdout(&out);
    for word in ["userns", "mountns", "netns", "mounted"] {
        assert!(!s.contains(word), "{}", text(&out));
    }
    assert_eq!(s.trim(), "0", "{}", text(&out));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&format!(" {} ", target.display())));
}

#[test]
fn the_machine_stays_as_it_was() {
    let dirs = Dirs::new();
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let cad = std::fs::read_to_string("/proc/sys/kernel/ctrl-alt-del").unwrap();
    let _restore = Guard(|| {
        let _ = std::fs::write("/proc/sys/kernel/hostname", hostname.trim());
        let _ = std::fs::write("/proc/sys/kernel/ctrl-alt-del", cad.trim());
    });
    let esterror_now = || {
        // SAFETY: an all-zero timex is valid; modes 0 only reads.
        let mut t: libc::timex = unsafe { std::mem::zeroed() };
        // SAFETY: `t` is a valid, writable timex.
        unsafe { libc::adjtimex(&mut t) };
        t.esterror
    };
    // The estimated error is informational only; a value it does not have.
    let before = esterror_now();
    let wanted = before + 4242;
    let _esterror = Guard(move || {
        if esterror_now() == wanted {
            // SAFETY: an all-zero timex is valid; ADJ_ESTERROR sets only the
            // informational estimated error back.
            let mut t: libc::timex = unsafe { std::mem::zeroed() };
            t.modes = libc::ADJ_ESTERROR;
            t.esterror = before;
            // SAFETY: `t` is a valid, writable timex.
            unsafe { libc::adjtimex(&mut t) };
        }
    });
    let esterror = std::mem::offset_of!(libc::timex, esterror);
    let size = std::mem::size_of::<libc::timex>();
    let script = format!(
        "import struct\n\
         r = libc.syscall({reboot}, 0xfee1dead, 672274793, 0, None)\nprint('reboot', r, ctypes.get_errno())\n\
         r = libc.sethostname(b'escaped', 7)\nprint('sethostname', r, ctypes.get_errno())\n\
         t = ctypes.create_string_buffer({size})\nstruct.pack_into('i', t, 0, 8)\nstruct.pack_into('l', t, {esterror}, {wanted})\n\
         r = libc.adjtimex(t)\nprint('adjtimex', r, ctypes.get_errno())",
        reboot = libc::SYS_reboot
    );
    let out = py(Some(&plan(&dirs)), &dirs, &script);
    for call in ["reboot", "sethostname", "adjtimex"] {
        assert!(
            stdout(&out).contains(&format!("{call} -1 {}", libc::EPERM)),
            "{call}: {}",
            text(&out)
        );
    }
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        hostname
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/ctrl-alt-del").unwrap(),
        cad
    );
    assert_ne!(esterror_now(), wanted, "{}", text(&out));
}

#[test]
fn no_network_configuration() {
    let dirs = Dirs::new();
    let mtu = std::fs::read_to_string("/sys/class/net/lo/mtu").unwrap();
    let has_addr = || {
        let out = Command::new("ip")
            .args(["-o", "addr", "show", "dev", "lo"])
            .output()
            .unwrap();
        stdout(&out).contains("127.0.0.9/")
    };
    assert!(!has_addr());
    let _restore = Guard(|| {
        let _ = Command::new("ip")
            .args(["link", "set", "lo", "mtu", mtu.trim()])
            .status();
        let _ = Command::new("ip")
            .args(["addr", "del", "127.0.0.9/8", "dev", "lo"])
            .stderr(std::process::Stdio::null())
            .status();
    });
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        "ip link set lo mtu 1280; ip addr add 127.0.0.9/8 dev lo",
    );
    assert_eq!(
        std::fs::read_to_string("/sys/class/net/lo/mtu").unwrap(),
        mtu,
        "{}",
        text(&out)
    );
    assert!(!has_addr(), "{}", text(&out));
}

#[test]
fn no_capabilities_left() {
    let dirs = Dirs::new();
    let out = sh(
        Some(&plan(&dirs)),
        &dirs,
        "grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/self/status",
    );
    let s = stdout(&out);
    for field in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        let line = s
            .lines()
            .find(|l| l.starts_with(field))
            .unwrap_or_else(|| panic!("{field}: {}", text(&out)));
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    assert!(s.contains("NoNewPrivs:\t1"), "{s}");
    assert!(s.contains("Seccomp:\t2"), "{s}");
    // Kept when asked.
    let keep = plan_with(&dirs, |c| c.keep_capabilities = true);
    let out = sh(Some(&keep), &dirs, "grep CapEff /proc/self/status");
    assert!(!stdout(&out).contains("0000000000000000"), "{}", text(&out));
}

/// A project whose whole directory Landlock lets the command write, with
/// `.git` bound read-only.
fn project() -> (Dirs, PathBuf, ChildPlan) {
    let dirs = Dirs::new();
    let git = dirs.root().join(".git");
    std::fs::create_dir_all(git.join("hooks")).unwrap();
    std::fs::create_dir_all(git.join("objects/ab")).unwrap();
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable_roots: vec![dirs.root()],
        ..SandboxPolicy::default()
    };
    let confinement = confine(&policy, &[], &dirs.tmp()).unwrap();
    let ruleset = confinement.ruleset(support()).unwrap();
    let plan = ChildPlan::prepare(ChildConfig {
        ruleset: Some(Arc::new(ruleset)),
        read_only_binds: vec![git.clone()],
        ..ChildConfig::default()
    })
    .unwrap();
    assert!(plan.namespaces());
    (dirs, git, plan)
}

#[test]
fn a_read_only_bind_holds_at_any_depth() {
    let (dirs, git, plan) = project();
    let out = sh(
        Some(&plan),
        &dirs,
        &format!(
            "echo x > {0}/hooks/pre-commit; echo x > {0}/objects/ab/cd; echo x > {0}/config; \
             echo x > .git/hooks/relative; mv {0} {1}/moved; rm -rf {0}; echo notes > {1}/notes.md; \
             echo rel > relative.md",
            git.display(),
            dirs.root().display()
        ),
    );
    assert!(!git.join("hooks/pre-commit").exists(), "{}", text(&out));
    assert!(!git.join("objects/ab/cd").exists(), "{}", text(&out));
    assert!(!git.join("config").exists(), "{}", text(&out));
    assert!(git.join("hooks").is_dir(), "{}", text(&out));
    // Through the working directory, entered before the bind, too.
    assert!(!git.join("hooks/relative").exists(), "{}", text(&out));
    assert!(dirs.root().join("relative.md").exists(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(dirs.root().join("notes.md")).unwrap_or_default(),
        "notes\n",
        "{}",
        text(&out)
    );
    // The bind lives in the command's namespace only.
    std::fs::write(git.join("config"), "ours").unwrap();
}

#[test]
fn a_read_only_bind_cannot_be_undone() {
    let (dirs, git, plan) = project();
    let out = sh(
        Some(&plan),
        &dirs,
        &format!(
            "umount {0}; umount -l {0}; mount -o remount,rw {0}; mount -o remount,bind,rw {0}; \
             echo x > {0}/hooks/post-checkout && echo wrote",
            git.display()
        ),
    );
    assert!(!stdout(&out).contains("wrote"), "{}", text(&out));
    assert!(!git.join("hooks/post-checkout").exists(), "{}", text(&out));
}

#[test]
fn a_read_only_root_stops_metadata_changes_outside() {
    let dirs = Dirs::new();
    let victim = dirs.victim("v");
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mtime = std::fs::metadata(&victim).unwrap().mtime();
    let attack = format!(
        "chmod 4777 {0}; touch -d 2001-01-01 {0}; setfattr -n user.x -v 1 {0}; \
         echo made > {1}/sub/inside; echo made > {2}/t; cat {1}/sub/inside {2}/t",
        victim.display(),
        dirs.root().display(),
        dirs.tmp().display()
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
    // Landlock alone leaves the owner's metadata changes open (root owns
    // the system's files).
    let out = sh(Some(&plan(&dirs)), &dirs, &attack);
    let opened = mode(&victim) != 0o600;
    let _ = std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o600));
    assert!(opened, "Landlock now governs chmod: {}", text(&out));
    let _ = Command::new("setfattr")
        .args(["-x", "user.x"])
        .arg(&victim)
        .stderr(std::process::Stdio::null())
        .status();
    let mtime = std::fs::metadata(&victim)
        .map(|m| m.mtime())
        .unwrap_or(mtime);
    let ro = plan_with(&dirs, |c| {
        c.read_only_root = true;
        c.writable_paths = vec![dirs.root(), dirs.tmp()];
    });
    assert!(ro.namespaces());
    let out = sh(Some(&ro), &dirs, &attack);
    assert_eq!(mode(&victim), 0o600, "{}", text(&out));
    assert_eq!(
        std::fs::metadata(&victim).unwrap().mtime(),
        mtime,
        "{}",
        text(&out)
    );
    assert!(!has_xattr(&victim, "user.x"), "{}", text(&out));
    // What Landlock allows still works: the writable paths stay writable.
    assert_eq!(stdout(&out), "made\nmade\n", "{}", text(&out));
    // And nothing else did: writes to /dev/null work, the root is read-only.
    let out = sh(
        Some(&ro),
        &dirs,
        "echo x > /dev/null && echo null-ok; touch /etc/dsh-escape-probe 2>&1",
    );
    assert!(stdout(&out).contains("null-ok"), "{}", text(&out));
    assert!(!Path::new("/etc/dsh-escape-probe").exists());
}

#[test]
fn a_working_directory_inside_a_read_only_bind_is_read_only() {
    let (dirs, git, plan) = project();
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", "echo x > hooks/from-inside; echo x > ./config"])
        .current_dir(&git);
    plan.attach_std(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(!git.join("hooks/from-inside").exists(), "{}", text(&out));
    assert!(!git.join("config").exists(), "{}", text(&out));
    drop(dirs);
}

/// Runs `script` (python) with a new pseudo-terminal as its controlling
/// terminal and standard input, confined by `plan`; returns what waits in
/// the terminal's input afterwards.
fn typed_into_terminal(plan: Option<&ChildPlan>, dirs: &Dirs, script: &str) -> (Output, Vec<u8>) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: two valid out-pointers; no name, termios or size asked for.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: both descriptors were just opened and are owned here.
    let (_master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = Command::new(python());
    cmd.arg("-c")
        .arg(script)
        .current_dir(dirs.root())
        .stdin(slave.try_clone().unwrap());
    // SAFETY: setsid and ioctl are async-signal-safe and allocate nothing.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    if let Some(plan) = plan {
        plan.attach_std(&mut cmd);
    }
    let out = cmd.output().unwrap();
    // SAFETY: `slave` is open; O_NONBLOCK so an empty queue does not block.
    unsafe { libc::fcntl(slave.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let mut buf = [0u8; 64];
    // SAFETY: `buf` is writable for its length.
    let n = unsafe { libc::read(slave.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    (out, buf[..n.max(0) as usize].to_vec())
}

#[test]
fn no_typing_into_the_callers_terminal() {
    let dirs = Dirs::new();
    let script = "import fcntl, termios\ntry:\n    for c in b'id\\n':\n        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n    print('typed')\nexcept OSError as e:\n    print('refused', e.errno)";
    let (out, typed) = typed_into_terminal(Some(&plan(&dirs)), &dirs, script);
    assert!(stdout(&out).contains("refused"), "{}", text(&out));
    assert!(typed.is_empty(), "{typed:?}: {}", text(&out));
    // The attack is real where the kernel still allows TIOCSTI.
    if std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").is_ok_and(|v| v.trim() == "1") {
        let (out, typed) = typed_into_terminal(None, &dirs, script);
        assert_eq!(typed, b"id\n", "control: {}", text(&out));
    }
}

#[test]
fn a_confinement_becomes_a_configuration() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.root().join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink("/etc", dirs.root().join(".claude")).unwrap();
    let policy = SandboxPolicy::default();
    let mut confinement = confine(&policy, &[dirs.root()], &dirs.tmp()).unwrap();
    confinement.namespaces = dsh_sandbox::namespaces_available();
    let config = ChildConfig::for_layout(&confinement, confinement.layout(support()).unwrap());
    assert!(!config.network);
    assert_eq!(config.read_only_binds, [dirs.root().join(".git")]);
    assert_eq!(config.writable_paths, [dirs.root(), dirs.tmp()]);
    assert!(config.read_only_root && config.ipc_namespace);
    // The plan runs: the root is read-only but for the writable paths.
    let victim = dirs.victim("v");
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let plan = ChildPlan::prepare(config).unwrap();
    let out = sh(
        Some(&plan),
        &dirs,
        &format!(
            "chmod 777 {}; echo x > sub/ok; echo x > .git/hooks/no",
            victim.display()
        ),
    );
    assert_eq!(
        std::fs::metadata(&victim).unwrap().mode() & 0o777,
        0o640,
        "{}",
        text(&out)
    );
    assert!(dirs.root().join("sub/ok").exists(), "{}", text(&out));
    assert!(
        !dirs.root().join(".git/hooks/no").exists(),
        "{}",
        text(&out)
    );
}

#[test]
fn ordinary_commands_still_work() {
    let dirs = Dirs::new();
    let policy = SandboxPolicy::default();
    let mut confinement = confine(&policy, &[dirs.root()], &dirs.tmp()).unwrap();
    confinement.namespaces = dsh_sandbox::namespaces_available();
    let layout = confinement.layout(support()).unwrap();
    let plan = ChildPlan::prepare(ChildConfig::for_layout(&confinement, layout)).unwrap();
    // Pipelines and subshells (clone), threads, a subprocess through
    // posix_spawn (clone3 refused, then clone), git, tar, ps, a FIFO.
    let out = sh(
        Some(&plan),
        &dirs,
        "set -e; cd sub; echo hello | tr a-z A-Z > up.txt; (cat up.txt); \
         git init -q repo; cd repo; echo x > f; git add f; \
         git -c user.name=t -c user.email=t@t commit -qm m; git log --oneline | wc -l; cd ..; \
         tar cf t.tar up.txt; tar tf t.tar; ps -o comm= -p $$; mkfifo p; ls -l / > /dev/null; \
         echo ok",
    );
    assert_eq!(stdout(&out), "HELLO\n1\nup.txt\nsh\nok\n", "{}", text(&out));
    let out = py(
        Some(&plan),
        &dirs,
        "import subprocess, threading\n\
         t = threading.Thread(target=lambda: print('thread'))\nt.start(); t.join()\n\
         print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())\n\
         a, b = socket.socketpair(); a.send(b'x'); print('pair', b.recv(1))",
    );
    assert_eq!(stdout(&out), "thread\nchild\npair b'x'\n", "{}", text(&out));
}
