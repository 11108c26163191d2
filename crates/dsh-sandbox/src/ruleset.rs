//! From a [`Confinement`] to its [`Layout`]: the walk, the rules, the
//! Landlock ruleset; and the [`LayoutCache`] that keeps them while the
//! directories they were built from do not change.

use crate::layout::{self, DirReader, Entry, Exclusion, Grant, Rights, Rule};
use crate::walk::{self, Stamps, WalkPlan};
use crate::{landlock_failure, ConfineError, Confinement, SandboxMode, Support};
use landlock::{AccessFs, PathBeneath, RulesetCreatedAttr};
use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How a `workspace-write` confinement keeps protected entries
/// (`.git`, `.claude`, `.vscode`, `.idea`) from being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteMechanism {
    /// The child binds each of [`Layout::read_only_binds`] read-only onto
    /// itself in a private mount namespace; Landlock lets every entry of
    /// a working directory be written, and files (not directories, links
    /// or devices) be created directly in it.
    Namespace,
    /// Landlock alone: every directory holding a protected entry is split
    /// and gets no write right at its own level (nothing can be created
    /// directly in it, a working directory's root included).
    EntryByEntry,
}

/// What a confined child needs: the Landlock ruleset and, for
/// [`WriteMechanism::Namespace`], the entries to bind read-only.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The Landlock ruleset; one ruleset can confine any number of children.
    pub ruleset: Arc<OwnedFd>,
    /// Existing protected entries, at any depth of the working
    /// directories, that the child binds read-only onto themselves
    /// (empty for [`WriteMechanism::EntryByEntry`]).
    pub read_only_binds: Vec<PathBuf>,
    /// What `Read` deny rules name, to hide under empty mounts in the
    /// child's mount namespace (when [`Confinement::namespaces`]); empty
    /// when Landlock keeps them unread instead.
    pub masked: Vec<PathBuf>,
    /// How protected entries are kept.
    pub mechanism: WriteMechanism,
    /// The walk for protected names looked at every entry; when false it
    /// stopped at [`Confinement::walk_bound`] and only what it found, and
    /// the protected names directly in each working directory, are kept.
    pub complete: bool,
}

/// Rights that create device nodes: granted nowhere.
fn devices() -> Rights {
    AccessFs::MakeChar | AccessFs::MakeBlock
}

/// The path on disk (symbolic links resolved), or as given when it is not there.
fn on_disk(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

/// Reads directories for the split, noting each in the stamps.
struct StampingReader<'a>(&'a mut Stamps);

impl DirReader for StampingReader<'_> {
    fn entries(&mut self, dir: &Path) -> std::io::Result<Vec<Entry>> {
        self.0.note(dir);
        layout::read_entries(dir)
    }
}

/// Builds the layout and the stamps of what it was built from.
pub(crate) fn build(c: &Confinement, support: Support) -> Result<(Layout, Stamps), ConfineError> {
    let (abi, mut created) = c.base_ruleset(support)?;
    let read = AccessFs::from_read(abi);
    let write = AccessFs::from_write(abi) & !devices();
    let mut stamps = Stamps::default();

    // Working directories keep protected names; other roots are writable whole.
    let working_mode = c.mode == SandboxMode::WorkspaceWrite;
    let working: Vec<(PathBuf, &[String])> = c
        .writable
        .iter()
        .filter(|w| working_mode && !w.read_only_names.is_empty())
        .map(|w| (on_disk(&w.path), w.read_only_names.as_slice()))
        .collect();
    let whole: Vec<PathBuf> = c
        .writable
        .iter()
        .filter(|w| !working_mode || w.read_only_names.is_empty())
        .map(|w| on_disk(&w.path))
        .collect();

    let mut search = Vec::new();
    let mut aliases = Vec::new();
    for given in c.read_denials.iter().flat_map(|d| &d.search) {
        let disk = on_disk(given);
        if &disk != given {
            aliases.push((given.clone(), disk.clone()));
        }
        search.push(disk);
    }
    search.sort();
    search.dedup();
    let protect: Vec<PathBuf> = working.iter().map(|(w, _)| w.clone()).collect();
    let matcher = c.read_denials.as_ref().map(|d| &*d.matcher);
    let found = walk::walk(
        &WalkPlan {
            search: &search,
            matcher,
            aliases: &aliases,
            protect: &protect,
            bound: c.walk_bound,
        },
        &mut stamps,
    )
    .map_err(|o| ConfineError::WalkBound {
        dir: o.dir,
        entries: o.entries,
    })?;

    // Reads: everywhere but the denied paths.
    let mut denied = found.denied.clone();
    for lit in c.read_denials.iter().flat_map(|d| &d.literal) {
        denied.extend(literal_on_disk(lit, &mut stamps));
    }
    // In a mount namespace of its own (the capabilities dropped, mounts
    // frozen by Landlock), the denied paths are hidden under empty mounts:
    // no directory above them needs splitting, so nothing outside the
    // searched directories is read or watched for changes. Otherwise
    // Landlock grants reads around them.
    let masking = c.namespaces && c.mode != SandboxMode::DangerFullAccess;
    let mut masked = Vec::new();
    if masking {
        masked = std::mem::take(&mut denied);
    }
    let mut exclusions: Vec<Exclusion> = denied
        .into_iter()
        .map(|path| Exclusion {
            path,
            removed: read,
        })
        .collect();
    let mut grants = vec![Grant {
        path: PathBuf::from("/"),
        rights: read,
    }];
    // Devices: a confined command reads only those a program needs. Disks
    // (block devices, SCSI and NVMe passthrough) hold every file's bytes,
    // and root, who owns them, would read them past any rule. Few rules
    // (not one per entry of /dev): every child merges them all.
    if c.mode != SandboxMode::DangerFullAccess {
        let dev = Path::new("/dev");
        stamps.note(dev);
        exclusions.push(Exclusion {
            path: dev.to_owned(),
            removed: read,
        });
        grants.push(Grant {
            path: dev.to_owned(),
            rights: AccessFs::ReadDir.into(),
        });
        grants.extend(
            READABLE_DEVICES
                .iter()
                .map(|name| dev.join(name))
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink()))
                .map(|path| Grant { path, rights: read }),
        );
    }
    grants.extend(whole.iter().map(|r| Grant {
        path: r.clone(),
        rights: write,
    }));

    // Protected entries: those found (not under a root writable whole)
    // and the names directly in each working directory.
    let in_whole = |p: &Path| whole.iter().any(|r| p.starts_with(r));
    let mut protected: Vec<PathBuf> = found
        .protected
        .iter()
        .filter(|p| !in_whole(p))
        .cloned()
        .collect();
    for (w, names) in &working {
        for n in *names {
            let p = w.join(n);
            if !protected.contains(&p) && !in_whole(&p) {
                protected.push(p);
            }
        }
    }
    protected.sort();

    let mechanism = if c.namespaces && working_mode {
        WriteMechanism::Namespace
    } else {
        WriteMechanism::EntryByEntry
    };
    let mut rules = Vec::new();
    let mut read_only_binds = Vec::new();
    match mechanism {
        WriteMechanism::EntryByEntry => {
            for (w, _) in &working {
                grants.push(Grant {
                    path: w.clone(),
                    rights: write,
                });
            }
            exclusions.extend(protected.iter().map(|p| Exclusion {
                path: p.clone(),
                removed: AccessFs::from_write(abi),
            }));
        }
        WriteMechanism::Namespace => {
            let mut reader = StampingReader(&mut stamps);
            for (w, names) in &working {
                let mut own = write & !(AccessFs::MakeDir | AccessFs::MakeSym);
                if std::fs::symlink_metadata(w.join(".git")).is_err() {
                    // A `.git` pointer file created here would send git elsewhere.
                    own &= !AccessFs::MakeReg;
                }
                rules.push(Rule {
                    path: w.clone(),
                    rights: own,
                });
                let Ok(entries) = reader.entries(w) else {
                    continue;
                };
                for e in entries {
                    let at_root_protected = names.iter().any(|n| e.name == n.as_str());
                    if !e.is_symlink && !at_root_protected {
                        rules.push(Rule {
                            path: w.join(&e.name),
                            rights: write,
                        });
                    }
                }
            }
            read_only_binds = protected
                .iter()
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink()))
                .cloned()
                .collect();
        }
    }
    rules.extend(layout::rules(
        &grants,
        &exclusions,
        &mut StampingReader(&mut stamps),
    ));

    for rule in rules {
        let Some((fd, is_dir)) = open_no_follow(&rule.path) else {
            continue;
        };
        let rights = if is_dir {
            rule.rights
        } else {
            rule.rights & AccessFs::from_file(abi)
        };
        if rights.is_empty() {
            continue;
        }
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(landlock_failure)?;
    }
    let fd = Option::<OwnedFd>::from(created).ok_or_else(|| {
        ConfineError::Unavailable(crate::SandboxUnavailable(
            "Landlock is not enforced by this kernel".into(),
        ))
    })?;
    Ok((
        Layout {
            ruleset: Arc::new(fd),
            read_only_binds,
            masked,
            mechanism,
            complete: found.complete,
        },
        stamps,
    ))
}

/// What a confined command may read in `/dev`: the devices programs open
/// by name, the terminals, shared memory and message queues.
const READABLE_DEVICES: &[&str] = &[
    "null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts", "shm", "mqueue",
];

/// A literal denied path as exclusions on disk: the path under its
/// parent's real location, and the target of a link. Nothing when it does
/// not exist (the stamps note its parents, so its creation is seen).
fn literal_on_disk(lit: &Path, stamps: &mut Stamps) -> Vec<PathBuf> {
    let mut up = lit.parent();
    while let Some(dir) = up {
        if stamps.note(dir).is_some() {
            break;
        }
        up = dir.parent();
    }
    let Ok(meta) = std::fs::symlink_metadata(lit) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match (lit.parent(), lit.file_name()) {
        (Some(parent), Some(name)) => out.push(on_disk(parent).join(name)),
        _ => out.push(lit.to_owned()),
    }
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::canonicalize(lit) {
            out.push(target);
        }
    }
    out
}

/// Opens `path` for a rule without following a final symbolic link (an
/// entry replaced by a link since it was read gets no rule); whether it is
/// a directory.
fn open_no_follow(path: &Path) -> Option<(OwnedFd, bool)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let t = file.metadata().ok()?.file_type();
    if t.is_symlink() {
        return None;
    }
    Some((OwnedFd::from(file), t.is_dir()))
}

/// Layouts kept while the directories they were built from are unchanged.
///
/// A layout is reused when its confinement (mode, directories, network,
/// read denials' key, namespaces, bound) and the kernel's ABI are the same
/// and every directory its walk and split read has the same device, inode,
/// modification and change time (one `lstat` each). A directory modified
/// within two seconds of being read is not trusted (timestamps are coarse:
/// a later change could keep the same time), so its layout is built again.
#[derive(Default)]
pub struct LayoutCache {
    entries: Mutex<HashMap<String, Arc<(Layout, Stamps)>>>,
}

impl std::fmt::Debug for LayoutCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.entries.lock().map(|e| e.len()).unwrap_or(0);
        f.debug_struct("LayoutCache").field("entries", &n).finish()
    }
}

/// Confinements kept at most; more, and the cache starts over.
const CACHE_ENTRIES: usize = 32;

impl LayoutCache {
    /// The layout of `c`: the cached one when still valid, else built
    /// (and kept).
    ///
    /// # Errors
    /// As [`Confinement::layout`]; a failure is not cached.
    pub fn layout(&self, c: &Confinement, support: Support) -> Result<Layout, ConfineError> {
        let key = cache_key(c, support);
        let cached = self.entries.lock().ok().and_then(|e| e.get(&key).cloned());
        if let Some(hit) = cached {
            if hit.1.still_valid() {
                return Ok(hit.0.clone());
            }
        }
        let built = build(c, support)?;
        let layout = built.0.clone();
        if let Ok(mut e) = self.entries.lock() {
            if e.len() >= CACHE_ENTRIES && !e.contains_key(&key) {
                e.clear();
            }
            e.insert(key, Arc::new(built));
        }
        Ok(layout)
    }
}

fn cache_key(c: &Confinement, support: Support) -> String {
    let mut key = format!(
        "{}|{:?}|{:?}|{}|{:?}|{}|{}|{}|{}|{}",
        c.mode.as_str(),
        c.writable,
        c.temp_dir,
        c.block_network,
        c.proxy_ports,
        c.network_namespace,
        c.local_binding,
        c.namespaces,
        c.walk_bound,
        support.abi
    );
    if let Some(d) = &c.read_denials {
        key.push_str(&format!("|{:?}|{:?}|{}", d.literal, d.search, d.key));
    }
    key
}
