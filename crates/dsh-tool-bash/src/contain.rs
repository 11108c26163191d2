//! Keeping track of every process a call starts, so that none outlives it.
//!
//! Two mechanisms, chosen once per executor (see [`Containment`]):
//!
//! * **cgroup v2.** The executor creates a cgroup of its own below the one it
//!   runs in; each call gets a child cgroup (empty ones are pooled and
//!   reused). The call's shell is born in it (`clone3` with
//!   `CLONE_INTO_CGROUP`); where `clone3` is refused, the shell moves itself
//!   into it between `fork` and `exec` (slower: moving a process waits for an
//!   RCU grace period). Everything the shell starts is born in that cgroup
//!   and cannot leave it without privileges, whatever it does with sessions,
//!   process groups or double forks. Killing is `echo 1 > cgroup.kill`, which
//!   the kernel applies atomically, racing forks included.
//! * **Process tree.** Without a writable cgroup v2 hierarchy, the executor
//!   walks `/proc`. A process belongs to the call when it is the call's shell,
//!   is in the shell's session or process group, carries the call's marker
//!   variable (`DSH_BASH_CALL_<executor>=<call>`) in its environment, was
//!   seen as a member before, or has a member as parent. Killing first
//!   freezes every member with `SIGSTOP` (a frozen process cannot fork),
//!   rescans until no new member shows up, then sends `SIGKILL` to all of them.

use std::collections::{HashMap, HashSet};
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::sys;

/// Prefix of the environment variable that marks a call's processes in
/// process-tree containment (`DSH_BASH_CALL_<executor>=<call>`).
pub(crate) const MARKER_VAR: &str = "DSH_BASH_CALL";

/// How an executor makes sure that no process started by a call outlives it.
///
/// See the [module documentation](crate::executor#no-process-left-behind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Containment {
    /// A cgroup v2 per call when this machine allows it, else [`ProcessTree`](Self::ProcessTree).
    #[default]
    Auto,
    /// A cgroup v2 per call; [`Executor::new`](crate::Executor::new) fails when
    /// no writable cgroup v2 hierarchy with `cgroup.kill` is available.
    Cgroup,
    /// Tracking the call's processes through `/proc` (session, process group,
    /// an environment marker and parent links).
    ProcessTree,
}

/// The mechanism an executor settled on.
#[derive(Debug)]
pub(crate) enum Backend {
    Cgroup(Arc<CgroupRoot>),
    Tree,
}

/// The marker variable of the executor tagged `tag`: one variable per
/// executor, so that executors nested in each other's calls do not
/// overwrite each other's marks.
pub(crate) fn marker_name(tag: &str) -> String {
    let suffix: String = tag
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{MARKER_VAR}_{suffix}")
}

impl Backend {
    /// The executor's own cgroup, under cgroup containment.
    pub(crate) fn cgroup_root(&self) -> Option<&Path> {
        match self {
            Backend::Cgroup(root) => Some(&root.dir),
            Backend::Tree => None,
        }
    }

    /// Resolves a preference into a mechanism. `tag` names the executor's
    /// cgroup (unique per executor).
    pub(crate) fn new(preference: Containment, tag: &str) -> io::Result<Backend> {
        match preference {
            Containment::ProcessTree => Ok(Backend::Tree),
            Containment::Cgroup => {
                CgroupRoot::create(tag).map(|root| Backend::Cgroup(Arc::new(root)))
            }
            Containment::Auto => Ok(match CgroupRoot::create(tag) {
                Ok(root) => Backend::Cgroup(Arc::new(root)),
                Err(_) => Backend::Tree,
            }),
        }
    }

    /// The mechanism in use (never `Auto`). A cgroup backend whose first
    /// spawn failed reports `ProcessTree`.
    pub(crate) fn kind(&self) -> Containment {
        match self {
            Backend::Cgroup(root) if !root.broken.load(Ordering::Relaxed) => Containment::Cgroup,
            _ => Containment::ProcessTree,
        }
    }

    /// Gets ready to spawn call number `call` (unique per executor).
    pub(crate) fn prepare(&self, call: u64, tag: &str) -> Prepared {
        if let Backend::Cgroup(root) = self {
            if !root.broken.load(Ordering::Relaxed) {
                match CgroupRoot::create_call(root, call) {
                    Ok(prepared) => return prepared,
                    Err(_) => root.broken.store(true, Ordering::Relaxed),
                }
            }
        }
        Prepared::tree(call, tag)
    }

    /// Marks the cgroup mechanism unusable (a child could not join its cgroup).
    pub(crate) fn mark_cgroup_broken(&self) {
        if let Backend::Cgroup(root) = self {
            root.broken.store(true, Ordering::Relaxed);
        }
    }

    /// Whether children can be born in their cgroup (`clone3`).
    pub(crate) fn clone3_allowed(&self) -> bool {
        matches!(self, Backend::Cgroup(root) if !root.no_clone3.load(Ordering::Relaxed))
    }

    /// Notes that `clone3(CLONE_INTO_CGROUP)` is refused here.
    pub(crate) fn refuse_clone3(&self) {
        if let Backend::Cgroup(root) = self {
            root.no_clone3.store(true, Ordering::Relaxed);
        }
    }

    /// Kills whatever is left in the executor's cgroups and removes them.
    /// Blocks up to `limit`.
    pub(crate) fn cleanup(&self, limit: Duration) {
        if let Backend::Cgroup(root) = self {
            root.remove_all(limit);
        }
    }
}

/// A call's containment before its shell is spawned.
#[derive(Debug)]
pub(crate) struct Prepared {
    kind: PreparedKind,
}

#[derive(Debug)]
enum PreparedKind {
    Cgroup {
        dir: PathBuf,
        /// The cgroup directory, for `clone3(CLONE_INTO_CGROUP)`.
        handle: fs::File,
        /// Where the cgroup goes back once its call is over.
        pool: Arc<CgroupRoot>,
        /// Its `cgroup.procs`, for a child that joins it itself.
        procs: Option<fs::File>,
    },
    Tree {
        name: String,
        value: String,
    },
}

impl Prepared {
    /// Process-tree containment for call number `call` of the executor tagged `tag`.
    pub(crate) fn tree(call: u64, tag: &str) -> Prepared {
        Prepared {
            kind: PreparedKind::Tree {
                name: marker_name(tag),
                value: call.to_string(),
            },
        }
    }

    /// Whether the shell joins a cgroup.
    pub(crate) fn is_cgroup(&self) -> bool {
        matches!(self.kind, PreparedKind::Cgroup { .. })
    }

    /// Environment variable to add to the shell's environment, if any.
    pub(crate) fn marker(&self) -> Option<(&str, &str)> {
        match &self.kind {
            PreparedKind::Tree { name, value } => Some((name.as_str(), value.as_str())),
            PreparedKind::Cgroup { .. } => None,
        }
    }

    /// The cgroup directory a child can be born in.
    pub(crate) fn cgroup_dir(&self) -> Option<BorrowedFd<'_>> {
        match &self.kind {
            PreparedKind::Cgroup { handle, .. } => Some(handle.as_fd()),
            PreparedKind::Tree { .. } => None,
        }
    }

    /// Opens `cgroup.procs`, for a child that joins its cgroup itself.
    pub(crate) fn open_procs(&mut self) -> io::Result<()> {
        if let PreparedKind::Cgroup { dir, procs, .. } = &mut self.kind {
            if procs.is_none() {
                *procs = Some(
                    OpenOptions::new()
                        .write(true)
                        .open(dir.join("cgroup.procs"))?,
                );
            }
        }
        Ok(())
    }

    /// The descriptor the child writes `0` to, joining its cgroup (once
    /// [`open_procs`](Self::open_procs) succeeded).
    pub(crate) fn cgroup_procs_fd(&self) -> Option<RawFd> {
        match &self.kind {
            PreparedKind::Cgroup { procs, .. } => procs.as_ref().map(|p| p.as_raw_fd()),
            PreparedKind::Tree { .. } => None,
        }
    }

    /// Binds the containment to the spawned shell.
    pub(crate) fn attach(self, root_pid: u32) -> Contained {
        let root = root_pid as i32;
        match self.kind {
            PreparedKind::Cgroup {
                dir, handle, pool, ..
            } => Contained::Cgroup(CgroupCall {
                dir: Some((dir, handle)),
                root,
                pool,
                emptied: AtomicBool::new(false),
                killed: AtomicBool::new(false),
            }),
            PreparedKind::Tree { name, value } => {
                let root_start = read_stat(root).map(|p| p.start).unwrap_or(0);
                let mut needle = format!("{name}={value}").into_bytes();
                needle.push(0);
                Contained::Tree(TreeCall {
                    root,
                    root_start,
                    needle,
                    known: Mutex::new(HashMap::new()),
                })
            }
        }
    }

    /// Gives up on a cgroup that no child joined.
    pub(crate) fn discard(self) {
        if let PreparedKind::Cgroup {
            dir, handle, pool, ..
        } = self.kind
        {
            pool.release(dir, handle);
        }
    }
}

/// The processes of one call (or background task), whichever the mechanism.
#[derive(Debug)]
pub(crate) enum Contained {
    Cgroup(CgroupCall),
    Tree(TreeCall),
}

impl Contained {
    /// Sends `signal` to every live process of the call.
    pub(crate) fn signal_all(&self, signal: i32) {
        match self {
            Contained::Cgroup(c) => {
                for pid in c.pids() {
                    let _ = sys::signal(pid, signal);
                }
            }
            Contained::Tree(t) => {
                let _ = sys::signal_group(t.root, signal);
                for p in t.members() {
                    let _ = sys::signal(p.pid, signal);
                }
            }
        }
    }

    /// The call's live processes.
    pub(crate) fn pids(&self) -> Vec<i32> {
        match self {
            Contained::Cgroup(c) => c.pids(),
            Contained::Tree(t) => t.members().iter().map(|p| p.pid).collect(),
        }
    }

    /// Kills every process of the call at once, without waiting for them to die.
    pub(crate) fn kill_all(&self) {
        match self {
            Contained::Cgroup(c) => c.kill(),
            Contained::Tree(t) => t.kill(),
        }
    }

    /// Whether no live process of the call remains.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Contained::Cgroup(c) => c.is_empty(),
            Contained::Tree(t) => t.members().is_empty(),
        }
    }

    /// Kills everything and waits (blocking the thread) up to `limit` for it to die.
    pub(crate) fn kill_and_wait_blocking(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            self.kill_all();
            if self.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Kills everything, then waits up to `limit` for it to die.
    pub(crate) async fn kill_and_wait(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            self.kill_all();
            if self.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

// ---------------------------------------------------------------- cgroup v2

/// The executor's own cgroup, parent of one cgroup per call.
#[derive(Debug)]
pub(crate) struct CgroupRoot {
    dir: PathBuf,
    /// Set when a child could not join its cgroup: later calls use the
    /// process tree instead.
    broken: AtomicBool,
    /// Set when `clone3(CLONE_INTO_CGROUP)` was refused: children then join
    /// their cgroup themselves, which is slower.
    no_clone3: AtomicBool,
    /// Empty call cgroups, reused rather than removed and created again.
    free: Mutex<Vec<(PathBuf, fs::File)>>,
    /// Set once [`remove_all`](Self::remove_all) ran: nothing goes back to the pool.
    closed: AtomicBool,
}

/// Most empty cgroups kept for reuse.
const POOL_SIZE: usize = 8;

impl CgroupRoot {
    fn create(tag: &str) -> io::Result<CgroupRoot> {
        let base = own_cgroup_dir()?;
        sweep_stale(&base);
        let dir = base.join(tag);
        DirBuilder::new().create(&dir)?;
        if !dir.join("cgroup.kill").exists() || !dir.join("cgroup.procs").exists() {
            let _ = fs::remove_dir(&dir);
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "cgroup v2 without cgroup.kill (Linux 5.14 or later needed)",
            ));
        }
        Ok(CgroupRoot::at(dir))
    }

    fn at(dir: PathBuf) -> CgroupRoot {
        CgroupRoot {
            dir,
            broken: AtomicBool::new(false),
            no_clone3: AtomicBool::new(false),
            free: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        }
    }

    fn create_call(root: &Arc<CgroupRoot>, call: u64) -> io::Result<Prepared> {
        let reused = root.free.lock().ok().and_then(|mut free| free.pop());
        let (dir, handle) = match reused {
            Some(pair) => pair,
            None => {
                let dir = root.dir.join(format!("c{call}"));
                DirBuilder::new().create(&dir)?;
                match fs::File::open(&dir) {
                    Ok(handle) => (dir, handle),
                    Err(e) => {
                        let _ = fs::remove_dir(&dir);
                        return Err(e);
                    }
                }
            }
        };
        Ok(Prepared {
            kind: PreparedKind::Cgroup {
                dir,
                handle,
                pool: Arc::clone(root),
                procs: None,
            },
        })
    }

    /// Takes back an empty call cgroup (or removes it).
    fn release(&self, dir: PathBuf, handle: fs::File) {
        if !self.closed.load(Ordering::Acquire) {
            if let Ok(mut free) = self.free.lock() {
                if free.len() < POOL_SIZE {
                    free.push((dir, handle));
                    return;
                }
            }
        }
        drop(handle);
        let _ = fs::remove_dir(&dir);
    }

    fn remove_all(&self, limit: Duration) {
        self.closed.store(true, Ordering::Release);
        if let Ok(mut free) = self.free.lock() {
            free.clear();
        }
        let deadline = Instant::now() + limit;
        let children: Vec<PathBuf> = match fs::read_dir(&self.dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
                .map(|e| e.path())
                .collect(),
            Err(_) => Vec::new(),
        };
        for child in &children {
            let _ = write_file(&child.join("cgroup.kill"), b"1");
        }
        for child in &children {
            remove_cgroup(child, deadline);
        }
        remove_cgroup(&self.dir, deadline);
    }
}

/// Removes a cgroup directory, retrying while its processes finish dying.
fn remove_cgroup(dir: &Path, deadline: Instant) {
    loop {
        match fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            Err(_) => return,
        }
    }
}

/// One call's cgroup.
#[derive(Debug)]
pub(crate) struct CgroupCall {
    /// The cgroup and a handle on it; `None` only during drop.
    dir: Option<(PathBuf, fs::File)>,
    root: i32,
    pool: Arc<CgroupRoot>,
    /// Set once the cgroup was seen empty: nothing can join it again (only
    /// `spawn` puts processes in, and only before `attach`).
    emptied: AtomicBool,
    /// Set once `cgroup.kill` was written. Such a cgroup is never reused:
    /// some kernels (6.18 here) kill every later child cloned into it with
    /// `CLONE_INTO_CGROUP`, as if the kill were still in progress.
    killed: AtomicBool,
}

impl CgroupCall {
    fn path(&self, file: &str) -> PathBuf {
        match &self.dir {
            Some((dir, _)) => dir.join(file),
            None => PathBuf::new(),
        }
    }

    fn pids(&self) -> Vec<i32> {
        fs::read_to_string(self.path("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
        match write_file(&self.path("cgroup.kill"), b"1") {
            Ok(()) => return,
            // Removed: nothing can be left in it.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) => {}
        }
        // Should not happen (checked at start); do what we can.
        let _ = sys::signal_group(self.root, sys::SIGKILL);
        for pid in self.pids() {
            let _ = sys::signal(pid, sys::SIGKILL);
        }
    }

    fn is_empty(&self) -> bool {
        if self.emptied.load(Ordering::Relaxed) {
            return true;
        }
        let empty = match fs::read_to_string(self.path("cgroup.events")) {
            Ok(events) => events.lines().any(|l| l.trim() == "populated 0"),
            // Gone: nothing can be in it.
            Err(e) if e.kind() == io::ErrorKind::NotFound => true,
            Err(_) => self.pids().is_empty(),
        };
        if empty {
            self.emptied.store(true, Ordering::Relaxed);
        }
        empty
    }
}

impl Drop for CgroupCall {
    fn drop(&mut self) {
        if self.is_empty() && !self.killed.load(Ordering::Relaxed) {
            if let Some((dir, handle)) = self.dir.take() {
                self.pool.release(dir, handle);
            }
            return;
        }
        // Killed, or still populated (the call's future was dropped mid-run,
        // or the processes are still dying): kill, and remove it once empty
        // without blocking the caller.
        if !self.is_empty() {
            self.kill();
        }
        let Some((dir, handle)) = self.dir.take() else {
            return;
        };
        drop(handle);
        if fs::remove_dir(&dir).is_ok() {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("dsh-bash-cgroup-cleanup".into())
            .spawn(move || remove_cgroup(&dir, Instant::now() + Duration::from_secs(5)));
        drop(spawned);
    }
}

fn write_file(path: &Path, data: &[u8]) -> io::Result<()> {
    OpenOptions::new().write(true).open(path)?.write_all(data)
}

/// The directory of the cgroup v2 this process is in.
fn own_cgroup_dir() -> io::Result<PathBuf> {
    let unsupported = |what: &str| io::Error::new(io::ErrorKind::Unsupported, what.to_string());
    let cgroups = fs::read_to_string("/proc/self/cgroup")?;
    let own = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or_else(|| unsupported("not in a cgroup v2 hierarchy"))?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        if right.split_whitespace().next() != Some("cgroup2") {
            continue;
        }
        let fields: Vec<&str> = left.split_whitespace().collect();
        let (Some(root), Some(mount)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        let root = unescape_mount(root);
        let Some(rel) = own.strip_prefix(root.as_str()) else {
            continue;
        };
        return Ok(PathBuf::from(unescape_mount(mount)).join(rel.trim_start_matches('/')));
    }
    Err(unsupported("no cgroup2 file system mounted"))
}

/// Decodes the octal escapes (`\040` for a space) of `/proc/self/mountinfo`.
fn unescape_mount(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = u32::from(bytes[i + 1] - b'0') * 64
                + u32::from(bytes[i + 2] - b'0') * 8
                + u32::from(bytes[i + 3] - b'0');
            out.push(v as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Removes the cgroups of executors whose process is gone (it died without
/// cleaning up), killing whatever they still held.
fn sweep_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("dsh-bash-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let stale = CgroupRoot::at(entry.path());
        stale.remove_all(Duration::from_millis(200));
    }
}

// ---------------------------------------------------------------- /proc walk

/// What `/proc/PID/stat` says about a process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProcInfo {
    pub(crate) pid: i32,
    ppid: i32,
    pgrp: i32,
    session: i32,
    /// Start time, in clock ticks since boot.
    start: u64,
    state: u8,
}

impl ProcInfo {
    fn alive(&self) -> bool {
        !matches!(self.state, b'Z' | b'X' | b'x')
    }
}

fn read_stat(pid: i32) -> Option<ProcInfo> {
    let stat = fs::read(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &stat)
}

fn parse_stat(pid: i32, stat: &[u8]) -> Option<ProcInfo> {
    // The command name, in parentheses, may itself contain spaces and ')'.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 2..)?).ok()?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcInfo {
        pid,
        state: *fields.first()?.as_bytes().first()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Every process visible in `/proc` that started at or after `since`.
fn processes_since(since: u64) -> Vec<ProcInfo> {
    let own = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter_map(read_stat)
        .filter(|p| p.start >= since)
        .collect()
}

fn environ_has(pid: i32, needle: &[u8]) -> bool {
    let Ok(environ) = fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environ
        .split(|&b| b == 0)
        .any(|var| var.len() + 1 == needle.len() && needle.starts_with(var))
}

/// One call's processes, found by walking `/proc`.
#[derive(Debug)]
pub(crate) struct TreeCall {
    root: i32,
    root_start: u64,
    /// `DSH_BASH_CALL_<executor>=<call>\0`.
    needle: Vec<u8>,
    /// Members seen before, by pid and start time (a pid can be reused).
    known: Mutex<HashMap<i32, u64>>,
}

impl TreeCall {
    /// The call's live processes.
    pub(crate) fn members(&self) -> Vec<ProcInfo> {
        let procs = processes_since(self.root_start);
        let known = self.known.lock().map(|k| k.clone()).unwrap_or_default();
        let mut member: Vec<bool> = procs
            .iter()
            .map(|p| {
                (p.pid == self.root && p.start == self.root_start)
                    || p.session == self.root
                    || p.pgrp == self.root
                    || known.get(&p.pid) == Some(&p.start)
            })
            .collect();
        for (i, p) in procs.iter().enumerate() {
            if !member[i] && p.alive() && environ_has(p.pid, &self.needle) {
                member[i] = true;
            }
        }
        // Children of members are members, however far down.
        loop {
            let pids: HashSet<i32> = procs
                .iter()
                .zip(&member)
                .filter(|(_, &m)| m)
                .map(|(p, _)| p.pid)
                .collect();
            let mut grew = false;
            for (i, p) in procs.iter().enumerate() {
                if !member[i] && pids.contains(&p.ppid) {
                    member[i] = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let found: Vec<ProcInfo> = procs
            .into_iter()
            .zip(member)
            .filter(|(p, m)| *m && p.alive())
            .map(|(p, _)| p)
            .collect();
        if let Ok(mut known) = self.known.lock() {
            for p in &found {
                known.insert(p.pid, p.start);
            }
        }
        found
    }

    /// Freezes every member, rescanning until no new one appears, then kills them all.
    fn kill(&self) {
        let _ = sys::signal_group(self.root, sys::SIGSTOP);
        let mut frozen: HashSet<i32> = HashSet::new();
        for _ in 0..64 {
            let fresh: Vec<i32> = self
                .members()
                .into_iter()
                .map(|p| p.pid)
                .filter(|pid| !frozen.contains(pid))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for pid in fresh {
                let _ = sys::signal(pid, sys::SIGSTOP);
                frozen.insert(pid);
            }
        }
        let _ = sys::signal_group(self.root, sys::SIGKILL);
        for pid in frozen {
            let _ = sys::signal(pid, sys::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_command_names() {
        let line = b"4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 0";
        let p = parse_stat(4242, line).unwrap();
        assert_eq!(
            (p.ppid, p.pgrp, p.session, p.start, p.state),
            (1, 4242, 4242, 987654, b'S')
        );
    }

    #[test]
    fn unescapes_mount_points() {
        assert_eq!(unescape_mount(r"/sys/fs/my\040cgroup"), "/sys/fs/my cgroup");
        assert_eq!(unescape_mount("/plain"), "/plain");
    }
}
