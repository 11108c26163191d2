//! Where the paths a call names are when it is decided: the working
//! directories (as given and as they are on disk), and the places a path
//! word of a command line stands for after its `cd`s, its globs and the
//! symbolic links on the way.

use crate::path::{self, Anchors};
use crate::word::{Dirs, PathWord};
use std::path::{Path, PathBuf};

/// A path as written (made absolute, `..` taken lexically, as bash's `cd`
/// does) and what it is on disk (symbolic links followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub lexical: PathBuf,
    pub physical: PathBuf,
}

/// The working directory, the additional directories and the home
/// directory, each as given and as it is on disk.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    pub cwd: PathBuf,
    cwd_physical: PathBuf,
    /// Whether `cwd_physical` is the working directory resolved on disk.
    cwd_resolved: bool,
    pub home: Option<PathBuf>,
    home_physical: Option<PathBuf>,
    /// Additional directories: (as given, on disk).
    extra: Vec<(PathBuf, PathBuf)>,
}

/// Devices reading or writing which touches no file.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
];

/// Whether `path` is a device that is no file (`/dev/null`, `/dev/fd/0`).
pub(crate) fn harmless_device(path: &Path) -> bool {
    HARMLESS_DEVICES.iter().any(|d| path == Path::new(d))
        || path.strip_prefix("/dev/fd").is_ok_and(|n| {
            n.to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
}

fn on_disk(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

impl Workspace {
    pub(crate) fn new(cwd: PathBuf, home: Option<PathBuf>) -> Self {
        let resolved = std::fs::canonicalize(&cwd).ok();
        Workspace {
            cwd_resolved: resolved.is_some(),
            cwd_physical: resolved.unwrap_or_else(|| path::physical(&cwd, true)),
            cwd,
            home_physical: home.as_deref().map(on_disk),
            home,
            extra: Vec::new(),
        }
    }

    pub(crate) fn set_home(&mut self, home: Option<PathBuf>) {
        self.home_physical = home.as_deref().map(on_disk);
        self.home = home;
    }

    pub(crate) fn add_dir(&mut self, dir: PathBuf) {
        let physical = on_disk(&dir);
        self.extra.push((dir, physical));
    }

    /// The anchors of path patterns, as given.
    pub(crate) fn anchors(&self) -> Anchors<'_> {
        Anchors {
            cwd: &self.cwd,
            home: self.home.as_deref(),
        }
    }

    /// The anchors of path patterns, on disk.
    pub(crate) fn physical_anchors(&self) -> Anchors<'_> {
        Anchors {
            cwd: &self.cwd_physical,
            home: self.home_physical.as_deref(),
        }
    }

    /// Whether the working and home directories are on disk as given (no
    /// symbolic link on their way).
    pub(crate) fn anchors_on_disk_as_given(&self) -> bool {
        self.cwd == self.cwd_physical && self.home == self.home_physical
    }

    /// Every working directory: (as given, on disk).
    fn working_dirs(&self) -> impl Iterator<Item = (&Path, &Path)> {
        std::iter::once((self.cwd.as_path(), self.cwd_physical.as_path()))
            .chain(self.extra.iter().map(|(l, p)| (l.as_path(), p.as_path())))
    }

    /// Whether a place is inside a working directory: on disk, so a
    /// symbolic link inside that points outside is outside.
    pub(crate) fn inside(&self, place: &Place) -> bool {
        harmless_device(&place.lexical)
            || self
                .working_dirs()
                .any(|(_, physical)| path::is_inside(&place.physical, physical))
    }

    /// Whether removing a place removes a working directory (or one above it).
    pub(crate) fn holds_working_dir(&self, place: &Place) -> bool {
        self.working_dirs().any(|(lexical, physical)| {
            path::is_inside(lexical, &place.lexical) || path::is_inside(physical, &place.physical)
        })
    }

    /// An absolute path as a place; `follow_last` unless the last name
    /// itself is removed.
    pub(crate) fn place(&self, written: &Path, follow_last: bool) -> Place {
        // Most paths are below the working directory, already resolved.
        let physical = match written.strip_prefix(&self.cwd) {
            Ok(rest) if self.cwd_resolved => {
                path::physical_below(&self.cwd_physical, rest, follow_last)
            }
            // Nothing exists below a directory that does not: no need to look.
            Ok(rest)
                if !rest
                    .components()
                    .any(|c| c == std::path::Component::ParentDir) =>
            {
                self.cwd_physical.join(rest)
            }
            _ => path::physical(written, follow_last),
        };
        Place {
            lexical: path::normalise(written),
            physical,
        }
    }

    /// The places `word` may stand for, with `dirs` the directories it may
    /// be relative to (from the command line's `cd`s) and `base` the call's
    /// working directory; the reason when the analysis cannot tell.
    pub(crate) fn places(
        &self,
        word: &PathWord,
        dirs: &Dirs,
        base: &Path,
        removes: bool,
    ) -> Result<Vec<Place>, &'static str> {
        let home = || self.home.clone().ok_or("there is no home directory");
        let mut out: Vec<Place> = Vec::new();
        let mut add = |p: Place| {
            if !out.contains(&p) {
                out.push(p);
            }
        };
        let text = match word {
            PathWord::Unknown(_) => return Err("the path is not known before the command runs"),
            PathWord::Home(rest) => {
                add(self.place(&home()?.join(rest), !removes));
                return Ok(out);
            }
            PathWord::Literal(t) | PathWord::Glob(t) => t,
        };
        let starts: Vec<PathBuf> = if text.starts_with('/') {
            vec![PathBuf::from("/")]
        } else {
            let Some(dirs) = dirs else {
                return Err("the command changes directory in a way the analysis cannot follow");
            };
            let mut starts = Vec::with_capacity(dirs.len());
            for d in dirs {
                let dir = match d.strip_prefix('~') {
                    Some(rest) => path::normalise(&home()?.join(rest.trim_start_matches('/'))),
                    None => path::absolute(d, base),
                };
                starts.push(dir);
            }
            starts
        };
        for start in starts {
            if let PathWord::Glob(pattern) = word {
                match path::expand_glob(pattern, &start) {
                    None => return Err("the glob names more than the analysis expands"),
                    Some(found) if !found.is_empty() => {
                        for f in found {
                            add(self.place(&f, !removes));
                        }
                        continue;
                    }
                    // Nothing matches: bash passes the word as it is.
                    Some(_) => {}
                }
            }
            add(self.place(&start.join(text), !removes));
        }
        Ok(out)
    }
}
