//! The bounded walk that finds what a layout must leave out: entries a
//! read denial names under its search directories, and protected names
//! (`.git`, `.claude`, …) at any depth of the working directories; and the
//! stamps of the directories it read, so a cached layout knows when it is
//! stale.

use crate::PROTECTED_NAMES;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A directory modified this recently may change again within the same
/// timestamp tick: a layout built from it is not trusted next time (git's
/// racy-index rule).
const RACY: Duration = Duration::from_secs(2);

/// What a directory was when it was read: a change of any of these means
/// its entries may have changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of `path` (not following a final symbolic link), `None`
    /// when there is nothing there.
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    fn recent(&self, now: SystemTime) -> bool {
        let newest = self.mtime.max(self.ctime);
        let at = if newest.0 >= 0 {
            UNIX_EPOCH
                + Duration::new(
                    newest.0.unsigned_abs(),
                    newest.1.clamp(0, 999_999_999) as u32,
                )
        } else {
            UNIX_EPOCH
        };
        // A time in the future is as untrustworthy as a recent one.
        now.duration_since(at).map_or(true, |age| age < RACY)
    }
}

/// The directories a layout was built from, and what each was.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stamps {
    seen: BTreeMap<PathBuf, Option<Stamp>>,
    /// One of them was modified too recently to be trusted later.
    racy: bool,
}

impl Stamps {
    /// Notes `path` as read now (call it before reading), and returns its stamp.
    pub(crate) fn note(&mut self, path: &Path) -> Option<Stamp> {
        if let Some(s) = self.seen.get(path) {
            return *s;
        }
        let s = Stamp::of(path);
        if s.is_some_and(|s| s.recent(SystemTime::now())) {
            self.racy = true;
        }
        self.seen.insert(path.to_owned(), s);
        s
    }

    /// Whether every noted directory is still what it was (one `lstat`
    /// each) and none was racy.
    pub(crate) fn still_valid(&self) -> bool {
        !self.racy && self.seen.iter().all(|(p, s)| Stamp::of(p) == *s)
    }

    /// How many directories were noted.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.seen.len()
    }
}

/// What to walk.
pub(crate) struct WalkPlan<'a> {
    /// Directories to search for denied entries (absolute, on disk).
    pub search: &'a [PathBuf],
    /// Whether an absolute, normalised path is denied.
    pub matcher: Option<&'a (dyn Fn(&Path) -> bool + Send + Sync)>,
    /// Directories as the denials name them, and where they are on disk,
    /// when the two differ: the matcher is asked about both spellings.
    pub aliases: &'a [(PathBuf, PathBuf)],
    /// Working directories to search for protected names (absolute, on disk).
    pub protect: &'a [PathBuf],
    /// At most this many entries are looked at, in all.
    pub bound: usize,
}

/// What the walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// Entries the matcher denies (and the targets of denied links).
    pub denied: Vec<PathBuf>,
    /// Entries with a protected name.
    pub protected: Vec<PathBuf>,
    /// The protected-names walk looked at everything.
    pub complete: bool,
}

/// The read-denial walk met more entries than its bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Overflow {
    pub dir: PathBuf,
    pub entries: usize,
}

/// Walks the plan's directories breadth first, the search directories
/// first, not following symbolic links and not descending into `.git` nor
/// into a denied directory. Every directory read is noted in `stamps`.
///
/// # Errors
/// The bound was reached while a search directory was still unwalked.
pub(crate) fn walk(plan: &WalkPlan<'_>, stamps: &mut Stamps) -> Result<Found, Overflow> {
    let mut found = Found {
        complete: true,
        ..Found::default()
    };
    let denies = |p: &Path| {
        plan.matcher.is_some_and(|m| {
            m(p) || plan
                .aliases
                .iter()
                .any(|(given, disk)| p.strip_prefix(disk).is_ok_and(|rest| m(&given.join(rest))))
        })
    };
    let search_root = |p: &Path| plan.search.iter().find(|s| p.starts_with(s)).cloned();
    let protects = |p: &Path| plan.protect.iter().any(|w| p.starts_with(w));
    let mut deny_queue = VecDeque::new();
    let mut protect_queue = VecDeque::new();
    if plan.matcher.is_some() {
        for s in plan.search {
            if denies(s) {
                // The directory itself is denied: nothing to search in it.
                if Stamp::of(s).is_some() {
                    found.denied.push(s.clone());
                }
            } else {
                deny_queue.push_back(s.clone());
            }
        }
    }
    protect_queue.extend(plan.protect.iter().cloned());
    let mut visited = HashSet::new();
    let mut entries = 0usize;
    loop {
        let (dir, deny_here) = match deny_queue.pop_front() {
            Some(d) => (d, true),
            None => match protect_queue.pop_front() {
                Some(d) => (d, false),
                None => break,
            },
        };
        let deny_here = deny_here || (plan.matcher.is_some() && search_root(&dir).is_some());
        let protect_here = protects(&dir);
        let Some(stamp) = stamps.note(&dir) else {
            continue;
        };
        if !visited.insert((stamp.dev, stamp.ino)) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            entries += 1;
            if entries > plan.bound {
                let mut pending = std::iter::once(&dir).chain(deny_queue.iter());
                let unwalked = match plan.matcher {
                    Some(_) => pending.find_map(|d| search_root(d)),
                    None => None,
                };
                if let Some(root) = unwalked {
                    return Err(Overflow { dir: root, entries });
                }
                found.complete = false;
                return Ok(found);
            }
            let Ok(t) = e.file_type() else { continue };
            let path = dir.join(e.file_name());
            let name = e.file_name();
            if deny_here && denies(&path) {
                if t.is_symlink() {
                    if let Ok(target) = std::fs::canonicalize(&path) {
                        found.denied.push(target);
                    }
                }
                found.denied.push(path);
                continue;
            }
            if protect_here && PROTECTED_NAMES.iter().any(|n| name == *n) {
                found.protected.push(path.clone());
            }
            if t.is_dir() && name != ".git" {
                if deny_here {
                    deny_queue.push_back(path);
                } else {
                    protect_queue.push_back(path);
                }
            }
        }
    }
    found.denied.sort();
    found.denied.dedup();
    found.protected.sort();
    found.protected.dedup();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::temp_tree;
    use std::fs;

    fn env_matcher(p: &Path) -> bool {
        p.file_name().is_some_and(|n| n == ".env" || n == "secrets")
    }

    #[test]
    fn finds_denied_and_protected_entries_at_depth() {
        let d = temp_tree("walk");
        fs::create_dir_all(d.join("a/b/.claude")).unwrap();
        fs::create_dir_all(d.join(".git/objects")).unwrap();
        fs::write(d.join(".git/.env"), "not searched").unwrap();
        fs::write(d.join(".env"), "").unwrap();
        fs::write(d.join("a/b/.env"), "").unwrap();
        fs::write(d.join("a/.git"), "gitdir: x").unwrap();
        fs::create_dir_all(d.join("secrets/inner")).unwrap();
        fs::write(d.join("secrets/inner/.env"), "").unwrap();
        std::os::unix::fs::symlink("a/b/.env", d.join("a/link")).unwrap();
        let m: &(dyn Fn(&Path) -> bool + Send + Sync) = &env_matcher;
        let mut stamps = Stamps::default();
        let found = walk(
            &WalkPlan {
                search: std::slice::from_ref(&d),
                matcher: Some(m),
                aliases: &[],
                protect: std::slice::from_ref(&d),
                bound: 1000,
            },
            &mut stamps,
        )
        .unwrap();
        assert_eq!(
            found.denied,
            [d.join(".env"), d.join("a/b/.env"), d.join("secrets")]
        );
        assert_eq!(
            found.protected,
            [d.join(".git"), d.join("a/.git"), d.join("a/b/.claude")]
        );
        assert!(found.complete);
        assert!(stamps.len() >= 4);
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn the_bound_fails_a_denial_walk_and_cuts_a_protection_walk() {
        let d = temp_tree("bound");
        for i in 0..20 {
            fs::create_dir_all(d.join(format!("d{i}/x"))).unwrap();
        }
        fs::create_dir_all(d.join("d19/x/.claude")).unwrap();
        let m: &(dyn Fn(&Path) -> bool + Send + Sync) = &env_matcher;
        let err = walk(
            &WalkPlan {
                search: std::slice::from_ref(&d),
                matcher: Some(m),
                aliases: &[],
                protect: &[],
                bound: 10,
            },
            &mut Stamps::default(),
        )
        .unwrap_err();
        assert_eq!(err.dir, d);
        assert_eq!(err.entries, 11);
        let found = walk(
            &WalkPlan {
                search: &[],
                matcher: None,
                aliases: &[],
                protect: std::slice::from_ref(&d),
                bound: 10,
            },
            &mut Stamps::default(),
        )
        .unwrap();
        assert!(!found.complete);
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn stamps_see_a_new_entry_and_distrust_recent_changes() {
        let d = temp_tree("stamps");
        let mut s = Stamps::default();
        s.note(&d);
        // Just created: racy.
        assert!(!s.still_valid());
        let old = Stamps {
            seen: [(d.clone(), Stamp::of(&d))].into_iter().collect(),
            racy: false,
        };
        assert!(old.still_valid());
        std::thread::sleep(Duration::from_millis(20));
        fs::write(d.join("new"), "").unwrap();
        assert!(!old.still_valid());
        fs::remove_dir_all(d).unwrap();
    }
}
