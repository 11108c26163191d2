//! Landlock rules that grant around exclusions.
//!
//! Landlock only grants, and a rule on a directory holds for everything
//! beneath it. To grant `rights` on a directory *except* on some paths
//! beneath it, the directory is split: it keeps at its own level only what
//! no exclusion removes (and always `ReadDir`, or nothing above a denied
//! file could be listed), each entry that is not on the way to an
//! exclusion gets the full `rights` beneath it, and each entry on the way
//! is split in turn. An excluded path gets `rights` minus what its
//! exclusion removes. Symbolic links among the entries get no rule: a rule
//! holds for what a link points to (`link -> .env`).
//!
//! # Caveats
//!
//! * An entry created after the directories were read, directly inside a
//!   split directory, is covered by no entry's rule: it has only what the
//!   split directory keeps (for reads, it cannot be read until the rules
//!   are built again).
//! * A split directory keeps `ReadDir` beneath it: the *names* inside a
//!   denied directory can be listed (its files cannot be read).

use landlock::{AccessFs, BitFlags};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

/// A set of Landlock file access rights.
pub(crate) type Rights = BitFlags<AccessFs>;

/// Rights granted on a directory and everything beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    pub path: PathBuf,
    pub rights: Rights,
}

/// Rights taken away from a path (and what is beneath it) out of every
/// grant above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exclusion {
    pub path: PathBuf,
    pub removed: Rights,
}

/// One Landlock rule: `rights` beneath `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub path: PathBuf,
    pub rights: Rights,
}

/// An entry of a directory, as the split needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: OsString,
    pub is_symlink: bool,
    pub is_dir: bool,
}

/// Reads directories for the split. The production reader also notes
/// what it read, so a cached layout can tell when it is stale.
pub(crate) trait DirReader {
    /// The entries of `dir`; an error leaves the directory without rules
    /// below it (less access, never more).
    fn entries(&mut self, dir: &Path) -> std::io::Result<Vec<Entry>>;
}

/// Reads directories from disk, without further bookkeeping.
#[cfg(test)]
pub(crate) struct DiskReader;

#[cfg(test)]
impl DirReader for DiskReader {
    fn entries(&mut self, dir: &Path) -> std::io::Result<Vec<Entry>> {
        read_entries(dir)
    }
}

/// The entries of a directory on disk, sorted by name (symbolic links are
/// not followed).
pub(crate) fn read_entries(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let t = e.file_type()?;
        out.push(Entry {
            name: e.file_name(),
            is_symlink: t.is_symlink(),
            is_dir: t.is_dir(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The rules granting every `grants` rights but what `exclusions` remove.
/// Paths are absolute and normalised; an exclusion counts for the grants
/// whose directory holds it (or is it). Directories are read through
/// `reader` only where a split needs them.
pub(crate) fn rules(
    grants: &[Grant],
    exclusions: &[Exclusion],
    reader: &mut dyn DirReader,
) -> Vec<Rule> {
    let mut out = Vec::new();
    for g in grants {
        let under: Vec<&Exclusion> = exclusions
            .iter()
            .filter(|e| e.path.starts_with(&g.path) && !(e.removed & g.rights).is_empty())
            .collect();
        split(&g.path, g.rights, &under, true, reader, &mut out);
    }
    out
}

/// Rules for `rights` beneath `path`, minus `excl` (all at or beneath it).
fn split(
    path: &Path,
    rights: Rights,
    excl: &[&Exclusion],
    is_dir: bool,
    reader: &mut dyn DirReader,
    out: &mut Vec<Rule>,
) {
    let mut here = rights;
    for e in excl.iter().filter(|e| e.path == path) {
        here &= !e.removed;
    }
    let below: Vec<&Exclusion> = excl
        .iter()
        .copied()
        .filter(|e| e.path != path && !(e.removed & here).is_empty())
        .collect();
    if below.is_empty() || !is_dir {
        if !here.is_empty() {
            out.push(Rule {
                path: path.to_owned(),
                rights: here,
            });
        }
        return;
    }
    let removed_below = below.iter().fold(Rights::EMPTY, |acc, e| acc | e.removed);
    let keep = (here & !removed_below) | (here & AccessFs::ReadDir);
    if !keep.is_empty() {
        out.push(Rule {
            path: path.to_owned(),
            rights: keep,
        });
    }
    let Ok(entries) = reader.entries(path) else {
        return;
    };
    // The exclusions by the entry they lie under: one look-up per entry.
    let mut by_entry: HashMap<&OsStr, Vec<&Exclusion>> = HashMap::new();
    for e in &below {
        if let Some(Component::Normal(first)) = e
            .path
            .strip_prefix(path)
            .ok()
            .and_then(|rest| rest.components().next())
        {
            by_entry.entry(first).or_default().push(e);
        }
    }
    for entry in entries {
        let child = path.join(&entry.name);
        let on_way = by_entry.remove(entry.name.as_os_str()).unwrap_or_default();
        if !on_way.is_empty() {
            if entry.is_symlink {
                // An excluded link: no rule (its target is excluded on its own
                // when it is to be).
                continue;
            }
            split(&child, here, &on_way, entry.is_dir, reader, out);
        } else if !entry.is_symlink {
            out.push(Rule {
                path: child,
                rights: here,
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use landlock::ABI;
    use std::fs;

    fn read() -> Rights {
        AccessFs::from_read(ABI::V6)
    }
    fn write() -> Rights {
        AccessFs::from_write(ABI::V6)
    }

    pub(crate) fn temp_tree(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "dsh-layout-{tag}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        fs::create_dir_all(&d).unwrap();
        fs::canonicalize(d).unwrap()
    }

    fn find<'a>(rules: &'a [Rule], p: &Path) -> Option<&'a Rule> {
        rules.iter().find(|r| r.path == p)
    }

    #[test]
    fn no_exclusion_is_one_rule() {
        let d = temp_tree("one");
        let r = rules(
            &[Grant {
                path: d.clone(),
                rights: read(),
            }],
            &[Exclusion {
                path: d.join("x"),
                removed: write(),
            }],
            &mut DiskReader,
        );
        assert_eq!(
            r,
            [Rule {
                path: d.clone(),
                rights: read()
            }]
        );
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_read_exclusion_splits_every_ancestor() {
        let d = temp_tree("split");
        fs::create_dir_all(d.join("a/b")).unwrap();
        fs::write(d.join("a/b/.env"), "s").unwrap();
        fs::write(d.join("a/b/ok"), "o").unwrap();
        fs::write(d.join("a/sib"), "o").unwrap();
        fs::write(d.join("top"), "o").unwrap();
        std::os::unix::fs::symlink(".env", d.join("a/b/link")).unwrap();
        let r = rules(
            &[Grant {
                path: d.clone(),
                rights: read(),
            }],
            &[Exclusion {
                path: d.join("a/b/.env"),
                removed: read(),
            }],
            &mut DiskReader,
        );
        let only_list: Rights = AccessFs::ReadDir.into();
        assert_eq!(find(&r, &d).unwrap().rights, only_list);
        assert_eq!(find(&r, &d.join("a")).unwrap().rights, only_list);
        assert_eq!(find(&r, &d.join("a/b")).unwrap().rights, only_list);
        assert_eq!(find(&r, &d.join("top")).unwrap().rights, read());
        assert_eq!(find(&r, &d.join("a/sib")).unwrap().rights, read());
        assert_eq!(find(&r, &d.join("a/b/ok")).unwrap().rights, read());
        assert!(find(&r, &d.join("a/b/.env")).is_none());
        assert!(find(&r, &d.join("a/b/link")).is_none(), "links get no rule");
        assert_eq!(r.len(), 6, "{r:#?}");
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_write_exclusion_takes_the_directory_level_away() {
        let d = temp_tree("write");
        fs::create_dir_all(d.join("sub/.claude")).unwrap();
        fs::write(d.join("sub/.git"), "gitdir: /x").unwrap();
        fs::write(d.join("sub/f"), "").unwrap();
        fs::create_dir(d.join("other")).unwrap();
        let r = rules(
            &[Grant {
                path: d.clone(),
                rights: write(),
            }],
            &[
                Exclusion {
                    path: d.join(".git"),
                    removed: write(),
                },
                Exclusion {
                    path: d.join("sub/.claude"),
                    removed: write(),
                },
                Exclusion {
                    path: d.join("sub/.git"),
                    removed: write(),
                },
            ],
            &mut DiskReader,
        );
        // A missing exclusion still splits its directory.
        assert!(find(&r, &d).is_none());
        assert!(find(&r, &d.join("sub")).is_none());
        assert_eq!(find(&r, &d.join("other")).unwrap().rights, write());
        assert_eq!(find(&r, &d.join("sub/f")).unwrap().rights, write());
        assert!(find(&r, &d.join("sub/.claude")).is_none());
        assert!(find(&r, &d.join("sub/.git")).is_none());
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn exclusions_only_touch_the_rights_they_remove() {
        let d = temp_tree("mixed");
        fs::write(d.join(".env"), "s").unwrap();
        let grants = [
            Grant {
                path: d.clone(),
                rights: read(),
            },
            Grant {
                path: d.clone(),
                rights: write(),
            },
        ];
        let r = rules(
            &grants,
            &[Exclusion {
                path: d.join(".env"),
                removed: read(),
            }],
            &mut DiskReader,
        );
        // The write grant stays whole; the read grant is split.
        assert!(r.contains(&Rule {
            path: d.clone(),
            rights: write()
        }));
        assert!(r.contains(&Rule {
            path: d.clone(),
            rights: AccessFs::ReadDir.into()
        }));
        assert!(!r.iter().any(|x| x.path == d.join(".env")));
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_denied_directory_gets_nothing_beneath() {
        let d = temp_tree("dir");
        fs::create_dir_all(d.join("secrets/deep")).unwrap();
        fs::write(d.join("secrets/deep/k"), "s").unwrap();
        fs::write(d.join("plain"), "o").unwrap();
        let r = rules(
            &[Grant {
                path: d.clone(),
                rights: read(),
            }],
            &[Exclusion {
                path: d.join("secrets"),
                removed: read(),
            }],
            &mut DiskReader,
        );
        assert!(!r.iter().any(|x| x.path.starts_with(d.join("secrets"))));
        assert_eq!(find(&r, &d.join("plain")).unwrap().rights, read());
        fs::remove_dir_all(d).unwrap();
    }
}
