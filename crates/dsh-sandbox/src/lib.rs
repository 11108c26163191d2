//! # dsh-sandbox
//!
//! Confining a command once it runs. A [`SandboxPolicy`] becomes a
//! [`Confinement`] by a pure transform ([`confine`]); its [`Layout`] is the
//! Landlock ruleset (file, TCP and scope rules) with what a mount namespace
//! must bind or hide; a [`ChildPlan`] prepared from it before `fork` is
//! applied by the child between `fork` and `exec`: a private mount
//! namespace where available, no inherited descriptors, no capabilities,
//! `no_new_privs`, Landlock, and a system-call filter ([`SeccompFilters`]).
//! The executor of `dsh-tool-bash` does this for every confined command;
//! `MECHANISMS.md` says which guarantee rests on which mechanism.
//!
//! ```
//! use dsh_sandbox::{confine, SandboxMode, SandboxPolicy};
//! use std::path::Path;
//!
//! let policy = SandboxPolicy { mode: SandboxMode::WorkspaceWrite, ..SandboxPolicy::default() };
//! let plan = confine(&policy, &[Path::new("/work/proj").into()], Path::new("/tmp/dsh-tmp")).unwrap();
//! assert!(plan.block_network);
//! assert_eq!(plan.writable[0].path, Path::new("/work/proj"));
//! assert_eq!(plan.writable[0].read_only_names, [".git", ".claude", ".vscode", ".idea", ".dsh"]);
//! assert_eq!(plan.required_abi().0, 6); // TCP (4) and scoping (6)
//! ```
//!
//! A caller that spawns often keeps a [`LayoutCache`]: it builds the
//! [`Layout`] (the ruleset, shared by every child, and the entries to bind
//! read-only) once, and again only when a directory it was built from has
//! changed.
//!
//! ## Modes
//!
//! * `read-only`: reads anywhere but what read denials name; writes
//!   nowhere but the private temp directory (and `/dev/null` and the like).
//! * `workspace-write`: also writes under the working directories and the
//!   `writableRoots`; the [`PROTECTED_NAMES`] (`.git`, `.claude`,
//!   `.vscode`, `.idea`) stay read-only at any depth of a working
//!   directory, unless under a directory listed as a writable root (a
//!   working directory's own `.git` listed as one is writable).
//! * `danger-full-access`: no confinement.
//!
//! No mode grants creating device nodes, anywhere.
//!
//! `network: false` (the default of the confined modes) blocks TCP `connect`
//! and `bind` (Landlock ABI 4) and scopes away abstract UNIX sockets and
//! signals to processes outside the sandbox (ABI 6). With the network on,
//! signals are still scoped where the kernel can.
//!
//! ## Two write layouts
//!
//! Landlock only grants, and a grant on a directory holds for all beneath
//! it. A protected entry is kept one of two ways ([`WriteMechanism`]),
//! chosen by [`Confinement::namespaces`]:
//!
//! * **Namespace**: the child makes a private mount namespace and binds
//!   each existing protected entry, at any depth, read-only onto itself
//!   ([`Layout::read_only_binds`]). Landlock then lets every entry of a
//!   working directory be written, and the working directory itself gets
//!   every write right but making directories, symbolic links and devices:
//!   `echo x > notes.md` works at the root, `mkdir .claude` does not. A
//!   working directory without a `.git` gets no file creation at its root
//!   either (a `.git` pointer file made there would send git elsewhere).
//! * **Entry by entry** (no namespaces): every directory holding a
//!   protected entry, and every working directory's root, is split: each
//!   other entry is writable beneath, protected entries and symbolic links
//!   (whose rule would hold for their target) get nothing, and the split
//!   directory itself gets no write right — nothing can be created
//!   directly in it (new files go in subdirectories, or the call asks for
//!   escalation; the result says so).
//!
//! Protected names are found by a walk of the working directories bounded
//! by [`Confinement::walk_bound`] ([`WALK_BOUND`], 200 000 entries); past
//! it, what was found and the names directly in each working directory are
//! kept, and [`Layout::complete`] is false. A directory of
//! `writableRoots` is writable whole.
//!
//! ## Read denials
//!
//! [`Confinement::read_denials`] names files no command may read (the
//! permission rules' `Read(…)` deny rules): literal paths, and directories
//! walked (within the same bound, not into `.git` nor denied directories,
//! not following links) for entries a matcher denies. In a mount
//! namespace ([`Confinement::namespaces`]) each denied entry is listed in
//! [`Layout::masked`] and the child hides it under an empty mode-000 mount
//! (sound because it has no capability left and Landlock forbids mount
//! changes). Elsewhere a denied entry gets
//! neither `ReadFile`, `ReadDir` nor `Execute`: reads are granted around
//! it, each directory on the way from `/` getting only `ReadDir` and each
//! other entry (links left out) every read right. Reading through a link,
//! copying, or linking the file into the temp directory fails (a hard link
//! may not gain rights the file lacks). If the walk passes its bound, no
//! layout is built ([`ConfineError::WalkBound`]): the call must ask rather
//! than run with the denial not held.
//!
//! Block devices and the disk passthrough character devices in `/dev` are
//! never readable (root owns them; they hold every file's bytes).
//!
//! Caveats (where Landlock holds the denial): a file created during a call
//! directly in a directory on the way to a denied entry cannot be read in
//! that call (no rule covers it;
//! the next layout does). The names inside a denied directory can be
//! listed (its ancestors' `ReadDir` holds beneath them), though nothing
//! in it can be read. A bare-name rule (`.env`) is held only in the
//! directories searched (the working directories), and the walk does not
//! follow links: a file reached only through a link in a searched
//! directory is held when its own path is denied. A denial follows names,
//! not contents: a command allowed to write may rename a denied file to a
//! name no rule denies, readable by the next call.
//!
//! ## What is not blocked
//!
//! Landlock restricts paths and TCP ports, nothing else; the child plan
//! closes most of the rest (no sockets at all with the network off, no
//! inherited descriptors, no capabilities, the filter, every other mount
//! read-only in the namespace). Still open: without a mount namespace,
//! changes of metadata (mode, times, `user.*` attributes) of one's own
//! files outside the roots; with the network on, programs outside reached
//! over a socket; reads of anything read denials do not name; CPU and
//! memory exhaustion.
#![deny(unsafe_code)]
#![deny(missing_docs)]

#[allow(unsafe_code)]
mod child;
pub mod seccomp;

#[allow(unsafe_code)]
mod netns;

pub use child::{
    close_inherited, confine_command, hide_own_memory, namespaces_available, restrict_self,
    seccomp_available, ChildConfig, ChildPlan,
};
pub use netns::{
    network_namespaces_available, LoopbackListeners, NetworkNamespace, MAX_LOOPBACK_PORTS,
};
pub use seccomp::{SeccompFilters, SeccompOptions};

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};
use serde::{Deserialize, Serialize};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// How much a command is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Reads anywhere; writes only to the private temp directory.
    ReadOnly,
    /// Also writes under the working directories and the writable roots.
    #[default]
    WorkspaceWrite,
    /// No confinement.
    DangerFullAccess,
}

impl SandboxMode {
    /// The name settings use.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }
}

/// What a sandbox allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The mode.
    pub mode: SandboxMode,
    /// More writable directories (`workspace-write`).
    pub writable_roots: Vec<PathBuf>,
    /// Whether TCP connect and bind are allowed.
    pub network: bool,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable_roots: Vec::new(),
            network: false,
        }
    }
}

/// Names inside a working directory that stay read-only: what is in them
/// configures what runs (git hooks, `core.fsmonitor`, agent settings).
/// `.git` may be a directory or a pointer file (`gitdir: …`) that sends git
/// elsewhere; `.vscode` and `.idea` hold tasks an editor runs; `.dsh`
/// holds the accepted definitions of proxied tools.
pub const PROTECTED_NAMES: &[&str] = &[".git", ".claude", ".vscode", ".idea", ".dsh"];

/// At most this many directory entries are looked at, in all, by the walk
/// that finds denied files and protected names below the working
/// directories (see [`Confinement::walk_bound`]): a tree larger than this
/// is rarely one project (it is a home directory, or `/`), and the walk
/// runs again whenever a directory it read has changed.
pub const WALK_BOUND: usize = 200_000;

/// Paths commands must not read, held by Landlock: what the permission
/// rules' `Read(…)` deny rules name, turned into paths (`dsh-policy`'s
/// `PermissionPolicy::read_denial_paths`).
#[derive(Clone)]
pub struct ReadDenials {
    /// Absolute paths named exactly (no wildcard in the rule).
    pub literal: Vec<PathBuf>,
    /// Directories to walk for entries `matcher` denies.
    pub search: Vec<PathBuf>,
    /// Whether an absolute, normalised path is denied.
    pub matcher: Arc<dyn Fn(&Path) -> bool + Send + Sync>,
    /// What the matcher stands for: two denials with the same key (and
    /// paths) deny the same, so a cached layout may be reused.
    pub key: String,
}

impl std::fmt::Debug for ReadDenials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadDenials")
            .field("literal", &self.literal)
            .field("search", &self.search)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ReadDenials {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.literal == other.literal && self.search == other.search
    }
}

impl Eq for ReadDenials {}

/// A directory commands may write under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableRoot {
    /// The directory.
    pub path: PathBuf,
    /// Entries directly inside it that stay read-only.
    pub read_only_names: Vec<String>,
}

/// The confinement of one command: what [`confine`] makes of a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Where writes are allowed (reads are allowed everywhere).
    pub writable: Vec<WritableRoot>,
    /// TCP connect and bind, and abstract UNIX sockets, are blocked.
    pub block_network: bool,
    /// With the network blocked, TCP ports the command may still connect
    /// to (the filtering proxy's, on loopback), and only stream sockets may
    /// be made. Landlock names ports, not addresses: the same port on
    /// another host is reachable too — the weaker of the two mechanisms
    /// (a network namespace is the stronger). [`confine`] leaves it empty.
    pub proxy_ports: Vec<u16>,
    /// With `proxy_ports`: the command joins a network namespace where
    /// only loopback exists and the proxy's ports listen
    /// ([`NetworkNamespace`], given to the child as
    /// [`ChildConfig::network_namespace`]); set it when the spawner has
    /// one. [`confine`] leaves it false.
    pub network_namespace: bool,
    /// With `network_namespace`: TCP `bind` and `connect` are left to the
    /// namespace (only loopback exists there), so a command may run a
    /// local server and reach it (Claude Code's `allowLocalBinding`).
    /// Ignored without the namespace: Landlock cannot tell loopback from
    /// the world. [`confine`] leaves it false.
    pub local_binding: bool,
    /// The private temp directory (also in `writable`).
    pub temp_dir: PathBuf,
    /// The mode it came from.
    pub mode: SandboxMode,
    /// Paths that must not be read ([`confine`] leaves it empty).
    pub read_denials: Option<ReadDenials>,
    /// The child makes a private mount namespace and binds protected
    /// entries read-only there ([`WriteMechanism::Namespace`]); set it from
    /// whether this machine can ([`confine`] leaves it false).
    pub namespaces: bool,
    /// How many directory entries the walk may look at ([`WALK_BOUND`]).
    pub walk_bound: usize,
}

/// Devices any command may write.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// The confinement `policy` asks for in `working_dirs` (the first is the
/// command's working directory), with `temp_dir` as its private temp
/// directory; `None` for `danger-full-access`. Pure: looks at nothing on disk.
pub fn confine(
    policy: &SandboxPolicy,
    working_dirs: &[PathBuf],
    temp_dir: &Path,
) -> Option<Confinement> {
    let mut writable = vec![];
    match policy.mode {
        SandboxMode::DangerFullAccess => return None,
        SandboxMode::ReadOnly => {}
        SandboxMode::WorkspaceWrite => {
            for dir in working_dirs {
                let listed =
                    |name: &str| policy.writable_roots.iter().any(|r| r == &dir.join(name));
                writable.push(WritableRoot {
                    path: dir.clone(),
                    read_only_names: PROTECTED_NAMES
                        .iter()
                        .filter(|n| !listed(n))
                        .map(|n| (*n).to_owned())
                        .collect(),
                });
            }
            for root in &policy.writable_roots {
                if !writable.iter().any(|w| &w.path == root) {
                    writable.push(WritableRoot {
                        path: root.clone(),
                        read_only_names: Vec::new(),
                    });
                }
            }
        }
    }
    writable.push(WritableRoot {
        path: temp_dir.to_owned(),
        read_only_names: Vec::new(),
    });
    Some(Confinement {
        writable,
        block_network: !policy.network,
        proxy_ports: Vec::new(),
        network_namespace: false,
        local_binding: false,
        temp_dir: temp_dir.to_owned(),
        mode: policy.mode,
        read_denials: None,
        namespaces: false,
        walk_bound: WALK_BOUND,
    })
}

/// A confinement that only keeps `denials` from being read: writes,
/// sockets and everything else as without a sandbox. For commands the
/// settings do not confine, so a `Read` deny rule still holds for them.
pub fn deny_reads_only(denials: ReadDenials, temp_dir: &Path) -> Confinement {
    Confinement {
        writable: Vec::new(),
        block_network: false,
        proxy_ports: Vec::new(),
        network_namespace: false,
        local_binding: false,
        temp_dir: temp_dir.to_owned(),
        mode: SandboxMode::DangerFullAccess,
        read_denials: Some(denials),
        namespaces: false,
        walk_bound: WALK_BOUND,
    }
}

/// What this machine's kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Support {
    /// The Landlock ABI (0: none).
    pub abi: u8,
}

impl Support {
    /// Files: ABI 3 (truncation is a write from ABI 3 on).
    pub fn files(self) -> bool {
        self.abi >= 3
    }
    /// TCP connect and bind: ABI 4.
    pub fn tcp(self) -> bool {
        self.abi >= 4
    }
    /// Abstract UNIX sockets and signals scoped to the sandbox: ABI 6.
    pub fn scoping(self) -> bool {
        self.abi >= 6
    }
}

/// The Landlock ABI of the running kernel, detected once.
/// `DSH_SANDBOX_ABI=N` pretends the kernel has ABI `N` at most (to try how
/// an older kernel is handled).
pub fn support() -> Support {
    static ABI_SEEN: OnceLock<u8> = OnceLock::new();
    let detected = *ABI_SEEN.get_or_init(detect_abi);
    let cap = std::env::var("DSH_SANDBOX_ABI")
        .ok()
        .and_then(|v| v.parse::<u8>().ok())
        .unwrap_or(u8::MAX);
    Support {
        abi: detected.min(cap),
    }
}

fn detect_abi() -> u8 {
    // The newest ABI the crate knows, down to the first the kernel accepts.
    for (abi, n) in [
        (ABI::V6, 6u8),
        (ABI::V5, 5),
        (ABI::V4, 4),
        (ABI::V3, 3),
        (ABI::V2, 2),
        (ABI::V1, 1),
    ] {
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create());
        if created.is_ok() {
            return n;
        }
    }
    0
}

fn abi_of(n: u8) -> ABI {
    match n {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ABI::V6,
    }
}

/// The kernel cannot enforce what the mode asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxUnavailable(pub String);

impl std::fmt::Display for SandboxUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SandboxUnavailable {}

impl Confinement {
    /// The ABI the confinement needs, and for what.
    pub fn required_abi(&self) -> (u8, &'static str) {
        if self.block_network {
            (
                6,
                "TCP blocking (Landlock ABI 4) and abstract-socket and signal scoping (ABI 6)",
            )
        } else {
            (3, "file confinement with truncation (Landlock ABI 3)")
        }
    }

    /// The Landlock ruleset, ready for the child to apply: the ruleset of
    /// [`Confinement::layout`], built afresh (a caller that spawns often
    /// keeps a [`LayoutCache`] instead).
    ///
    /// # Errors
    /// The kernel's ABI is older than [`Confinement::required_abi`], a rule
    /// cannot be built, or the walk for read denials met more entries than
    /// its bound (then the message says so).
    pub fn ruleset(&self, support: Support) -> Result<OwnedFd, SandboxUnavailable> {
        let layout = self.layout(support).map_err(|e| match e {
            ConfineError::Unavailable(u) => u,
            other => SandboxUnavailable(other.to_string()),
        })?;
        match Arc::try_unwrap(layout.ruleset) {
            Ok(fd) => Ok(fd),
            Err(shared) => shared
                .try_clone()
                .map_err(|e| SandboxUnavailable(format!("cannot duplicate the ruleset: {e}"))),
        }
    }

    /// The layout of the confinement, built afresh: walks the working and
    /// search directories, reads the directories a split needs, and builds
    /// the Landlock ruleset.
    ///
    /// # Errors
    /// [`ConfineError::Unavailable`]: the kernel's ABI is older than
    /// [`Confinement::required_abi`] or a rule cannot be built;
    /// [`ConfineError::WalkBound`]: the walk for read denials met more than
    /// [`Confinement::walk_bound`] entries, so the denials could not be
    /// held (the call should ask rather than run).
    pub fn layout(&self, support: Support) -> Result<Layout, ConfineError> {
        ruleset::build(self, support).map(|(layout, _)| layout)
    }

    pub(crate) fn check_abi(&self, support: Support) -> Result<ABI, SandboxUnavailable> {
        let (needed, what) = self.required_abi();
        if support.abi < needed {
            return Err(SandboxUnavailable(format!(
                "the {} sandbox needs {what}; this kernel has Landlock ABI {}{}",
                self.mode.as_str(),
                support.abi,
                if support.abi == 0 { " (none)" } else { "" }
            )));
        }
        Ok(abi_of(support.abi))
    }

    /// The Landlock ruleset before its file rules: handled rights, network
    /// and scopes.
    pub(crate) fn base_ruleset(
        &self,
        support: Support,
    ) -> Result<(ABI, landlock::RulesetCreated), SandboxUnavailable> {
        let abi = self.check_abi(support)?;
        let fail = landlock_failure;
        // Only reads are held when nothing else is confined.
        let handled = if self.mode == SandboxMode::DangerFullAccess {
            AccessFs::from_read(abi)
        } else {
            AccessFs::from_all(abi)
        };
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(handled)
            .map_err(fail)?;
        if self.block_network && self.tcp_left_to_the_namespace() {
            ruleset = ruleset
                .scope(Scope::AbstractUnixSocket | Scope::Signal)
                .map_err(fail)?;
        } else if self.block_network {
            ruleset = ruleset
                .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
                .map_err(fail)?
                .scope(Scope::AbstractUnixSocket | Scope::Signal)
                .map_err(fail)?;
        } else if support.scoping() && self.mode != SandboxMode::DangerFullAccess {
            // Holding read denials alone leaves signals as they were: an
            // approved `kill` of a server an earlier call started works.
            ruleset = ruleset.scope(Scope::Signal).map_err(fail)?;
        }
        let mut created = ruleset
            .create()
            .map_err(fail)?
            .add_rules(path_beneath_rules(WRITABLE_DEVICES, handled))
            .map_err(fail)?;
        if self.block_network && !self.tcp_left_to_the_namespace() {
            for port in &self.proxy_ports {
                created = created
                    .add_rule(landlock::NetPort::new(*port, AccessNet::ConnectTcp))
                    .map_err(fail)?;
            }
        }
        Ok((abi, created))
    }
}

impl Confinement {
    /// TCP is held by the command's network namespace alone (local
    /// binding asked, and a namespace with only loopback to hold it).
    fn tcp_left_to_the_namespace(&self) -> bool {
        self.local_binding && self.network_namespace && !self.proxy_ports.is_empty()
    }
}

pub(crate) fn landlock_failure(e: landlock::RulesetError) -> SandboxUnavailable {
    SandboxUnavailable(format!("cannot build the Landlock ruleset: {e}"))
}

mod layout;
mod ruleset;
mod walk;

pub use ruleset::{Layout, LayoutCache, WriteMechanism};

/// Why a confinement's layout could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfineError {
    /// The kernel cannot enforce it, or a rule could not be built.
    Unavailable(SandboxUnavailable),
    /// The walk for read denials met more than its bound of entries under
    /// `dir`: the denials cannot be held, so the command must not run
    /// confined as if they were (ask instead).
    WalkBound {
        /// The search directory still unwalked.
        dir: PathBuf,
        /// Entries looked at when the walk stopped.
        entries: usize,
    },
}

impl std::fmt::Display for ConfineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfineError::Unavailable(u) => u.fmt(f),
            ConfineError::WalkBound { dir, entries } => write!(
                f,
                "the files Read deny rules name under {} cannot be held by the sandbox: \
                 the walk stopped after {entries} entries",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for ConfineError {}

impl From<SandboxUnavailable> for ConfineError {
    fn from(u: SandboxUnavailable) -> Self {
        ConfineError::Unavailable(u)
    }
}

/// Creates `dir` for this user alone (mode 0700), or accepts it when it is
/// already a directory (not a symbolic link) owned by this user: a shared
/// temp directory must not hand a sandbox a path someone else planted.
///
/// # Errors
/// It cannot be created, or what is there is not ours.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::symlink_metadata(dir)?;
            if meta.is_dir() && meta.uid() == child::current_uid() {
                Ok(())
            } else {
                Err(std::io::Error::other(format!(
                    "{} exists and is not a private directory of this user",
                    dir.display()
                )))
            }
        }
        Err(e) => Err(e),
    }
}

/// What `dsh sandbox status` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The Landlock ABI (0: none).
    pub abi: u8,
    /// File confinement (ABI 3+).
    pub files: bool,
    /// TCP connect/bind blocking (ABI 4+).
    pub tcp: bool,
    /// Abstract-socket and signal scoping (ABI 6+).
    pub scoping: bool,
    /// The modes this machine can run.
    pub modes: Vec<String>,
    /// Private mount and IPC namespaces (read-only binds at any depth).
    pub namespaces: bool,
    /// A network namespace with only loopback for confined commands (how
    /// the filtering proxy is made the only way out, where it can).
    pub network_namespace: bool,
    /// The system-call filter (x86_64 and aarch64).
    pub seccomp: bool,
    /// Confined commands run without capabilities.
    pub capabilities_dropped: bool,
}

/// What this machine enforces.
pub fn status() -> Status {
    let s = support();
    let mut modes = vec!["danger-full-access".to_owned()];
    if s.files() {
        modes.push("read-only (network on)".into());
        modes.push("workspace-write (network on)".into());
    }
    if s.tcp() && s.scoping() {
        modes.push("read-only".into());
        modes.push("workspace-write".into());
    }
    Status {
        abi: s.abi,
        files: s.files(),
        tcp: s.tcp(),
        scoping: s.scoping(),
        modes,
        namespaces: namespaces_available(),
        network_namespace: network_namespaces_available(),
        seccomp: seccomp_available(),
        capabilities_dropped: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_become_write_roots() {
        let tmp = Path::new("/tmp/t");
        let dirs = [PathBuf::from("/p"), PathBuf::from("/q")];
        assert_eq!(
            confine(
                &SandboxPolicy {
                    mode: SandboxMode::DangerFullAccess,
                    ..Default::default()
                },
                &dirs,
                tmp
            ),
            None
        );
        let ro = confine(
            &SandboxPolicy {
                mode: SandboxMode::ReadOnly,
                network: true,
                ..Default::default()
            },
            &dirs,
            tmp,
        )
        .unwrap();
        assert_eq!(ro.writable.len(), 1);
        assert_eq!(ro.writable[0].path, tmp);
        assert!(!ro.block_network);
        assert_eq!(ro.required_abi().0, 3);
        let ww = SandboxPolicy {
            writable_roots: vec!["/cache".into(), "/p/.git".into()],
            ..Default::default()
        };
        let plan = confine(&ww, &dirs, tmp).unwrap();
        let paths: Vec<&Path> = plan.writable.iter().map(|w| w.path.as_path()).collect();
        assert_eq!(
            paths,
            [
                Path::new("/p"),
                Path::new("/q"),
                Path::new("/cache"),
                Path::new("/p/.git"),
                tmp
            ]
        );
        // .git listed as a writable root is writable; .claude still is not.
        assert_eq!(
            plan.writable[0].read_only_names,
            [".claude", ".vscode", ".idea", ".dsh"]
        );
        assert_eq!(
            plan.writable[1].read_only_names,
            [".git", ".claude", ".vscode", ".idea", ".dsh"]
        );
        assert!(plan.block_network);
    }

    #[test]
    fn layouts_are_shared_across_threads() {
        fn check<T: Send + Sync>() {}
        check::<LayoutCache>();
        check::<Layout>();
        check::<Confinement>();
    }

    #[test]
    fn an_older_kernel_is_named() {
        let plan = confine(
            &SandboxPolicy::default(),
            &[PathBuf::from("/p")],
            Path::new("/tmp/x"),
        )
        .unwrap();
        let e = plan.ruleset(Support { abi: 3 }).unwrap_err();
        assert!(e.0.contains("ABI 3"), "{e}");
        assert!(e.0.contains("TCP"), "{e}");
        let e = plan.ruleset(Support { abi: 0 }).unwrap_err();
        assert!(e.0.contains("(none)"), "{e}");
    }
}
