//! Where the paths a call names are when it is decided: the working
//! directories (as given and as they are on disk), and the places a path
//! word of a command line stands for after its `cd`s, its globs and the
//! symbolic links on the way.

use crate::path::{self, Anchors};
use crate::word::{Dirs, PathWord};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Whether a path goes through a process's view of the system
/// (`/proc/self/cwd`, `/proc/1/root`, `/dev/fd/3`): its links are the
/// running command's, which the analysis cannot resolve from here.
fn through_another_process(path: &Path) -> bool {
    let mut names = path.components().filter_map(|c| match c {
        std::path::Component::Normal(n) => n.to_str(),
        _ => None,
    });
    match (names.next(), names.next(), names.next()) {
        (Some("proc"), Some(_), Some(what)) => matches!(
            what,
            "cwd" | "root" | "fd" | "exe" | "map_files" | "task" | "fdinfo"
        ),
        (Some("dev"), Some("fd"), Some(_)) => true,
        _ => false,
    }
}

/// A path as written (made absolute, `..` taken lexically, as bash's `cd`
/// does) and what it is on disk (symbolic links followed). Shared, not
/// copied: a glob's places are handed to every command that names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub lexical: Rc<Path>,
    pub physical: Rc<Path>,
}

/// Places kept once each, in the order first added. A command line may
/// name the same files thousands of times (`cat *.rs *.rs …`): every check
/// after this one is per place, so each must be there once.
#[derive(Debug, Default)]
pub(crate) struct Unique {
    list: Vec<Place>,
    /// The first place of `list` with each hash, once the list is too long
    /// to search: hashes, not places, so nothing is copied.
    index: HashMap<u64, usize>,
    /// How much of `list` is in `index`.
    indexed: usize,
    hasher: std::collections::hash_map::RandomState,
}

/// Up to this many places, a search of the list is cheaper than an index.
const SEARCHED: usize = 8;

impl Unique {
    pub(crate) fn add(&mut self, place: Place) {
        if self.list.len() < SEARCHED {
            if !self.list.contains(&place) {
                self.list.push(place);
            }
            return;
        }
        while let Some(p) = self.list.get(self.indexed) {
            let h = self.hash(p);
            self.index.entry(h).or_insert(self.indexed);
            self.indexed += 1;
        }
        let h = self.hash(&place);
        let known = match self.index.get(&h) {
            None => false,
            Some(&i) if self.list.get(i) == Some(&place) => true,
            // Another place with the same hash: as good as never.
            Some(_) => self.list.contains(&place),
        };
        if !known {
            self.index.entry(h).or_insert(self.list.len());
            self.list.push(place);
            self.indexed = self.list.len();
        }
    }

    /// Adds places that are distinct from each other.
    pub(crate) fn add_distinct(&mut self, places: Vec<Place>) {
        if self.list.is_empty() {
            self.list = places;
        } else {
            places.into_iter().for_each(|p| self.add(p));
        }
    }

    /// Hashes the text of the paths: places are normalised, so equal
    /// places have equal text (were they not, a place would only be kept
    /// twice), and hashing a `Path` goes by components, several times
    /// slower.
    fn hash(&self, place: &Place) -> u64 {
        use std::hash::BuildHasher;
        self.hasher.hash_one((
            place.lexical.as_os_str().as_encoded_bytes(),
            place.physical.as_os_str().as_encoded_bytes(),
        ))
    }

    pub(crate) fn into_vec(self) -> Vec<Place> {
        self.list
    }
}

/// A glob's places from one directory: (glob, directory, whether the last
/// name is followed if it is a link). Nothing of the workspace: the paths
/// a glob names exist, and their places are where they are on disk.
type GlobKey = (String, PathBuf, bool);

/// The globs a decision has expanded, with their places (`None`: more than
/// the analysis expands).
#[derive(Default)]
struct Globs {
    /// Open [`GlobScope`]s on this thread.
    scopes: usize,
    found: HashMap<GlobKey, Option<Rc<[Place]>>>,
    /// The globs and places held in `found`.
    held: usize,
}

/// How many globs and places the expansions of one decision keep at most;
/// past it they are dropped and expanded again when named again. A glob
/// names at most a few hundred places, so repeated globs stay expanded
/// once, and a command line of many different globs holds only this many
/// at a time.
const HELD: usize = 8192;

thread_local! {
    /// The glob expansions of the decision this thread is making, while it
    /// holds a [`GlobScope`].
    static GLOBS: RefCell<Option<Globs>> = const { RefCell::new(None) };
}

/// While alive, each distinct glob a decision names (from one directory)
/// is expanded and resolved on disk once, however often the command line
/// repeats it (`ls *; ls *; …`): a decision takes the disk as it is at one
/// moment. The expansions go with the last scope of the thread, so the
/// next decision looks again. Tied to its thread (not `Send`), as the
/// expansions are.
pub(crate) struct GlobScope {
    _thread: PhantomData<*const ()>,
}

impl GlobScope {
    pub(crate) fn enter() -> GlobScope {
        // Only fails while the thread is being torn down: no caching then.
        let _ = GLOBS.try_with(|g| {
            g.borrow_mut().get_or_insert_with(Globs::default).scopes += 1;
        });
        GlobScope {
            _thread: PhantomData,
        }
    }
}

impl Drop for GlobScope {
    fn drop(&mut self) {
        let _ = GLOBS.try_with(|g| {
            let mut g = g.borrow_mut();
            if let Some(globs) = g.as_mut() {
                globs.scopes = globs.scopes.saturating_sub(1);
                if globs.scopes == 0 {
                    *g = None;
                }
            }
        });
    }
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
    pub(crate) fn working_dirs(&self) -> impl Iterator<Item = (&Path, &Path)> {
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
            lexical: path::normalise(written).into(),
            physical: physical.into(),
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
        let mut out = Unique::default();
        let text = match word {
            PathWord::Unknown(_) => return Err("the path is not known before the command runs"),
            PathWord::Home(rest) => {
                out.add(self.place(&home()?.join(rest), !removes));
                return Ok(out.into_vec());
            }
            PathWord::Literal(t) | PathWord::Glob(t) => t,
        };
        // `..` taken first, so `/proc/self/../self/cwd` is seen for what it is.
        let normalised;
        let text = if text.starts_with('/') && text.contains("/.") {
            normalised = path::normalise(Path::new(text));
            normalised.to_str().unwrap_or(text)
        } else {
            text
        };
        // The command's own view of itself: its working directory and its
        // root, which are where the analysis places relative paths and `/`.
        let text = match text
            .strip_prefix("/proc/self/cwd")
            .or_else(|| text.strip_prefix("/proc/thread-self/cwd"))
        {
            Some("") => ".",
            Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
            _ => text,
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
                    // No `cd` before it: the call's directory, normalised already.
                    None if d.is_empty() => base.to_path_buf(),
                    None => path::absolute(d, base),
                };
                starts.push(dir);
            }
            starts
        };
        for start in starts {
            if let PathWord::Glob(pattern) = word {
                match self.glob_places(pattern, start.clone(), !removes) {
                    None => return Err("the glob names more than the analysis expands"),
                    Some(found) if !found.is_empty() => {
                        out.add_distinct(found.to_vec());
                        continue;
                    }
                    // Nothing matches: bash passes the word as it is.
                    Some(_) => {}
                }
            }
            let full = start.join(text);
            let place = self.place(&full, !removes);
            // As written or through a link, a process's view of itself is
            // the deciding process's here, not the command's.
            if through_another_process(&place.lexical) || through_another_process(&place.physical) {
                return Err("it names a path through /proc or /dev/fd, whose links lead where the command runs, not where the analysis looks");
            }
            out.add(place);
        }
        Ok(out.into_vec())
    }

    /// The places of the paths `pattern` names from `start` (`None`: more
    /// than the analysis expands), expanded once per [`GlobScope`].
    fn glob_places(&self, pattern: &str, start: PathBuf, follow_last: bool) -> Option<Rc<[Place]>> {
        let key = (pattern.to_owned(), start, follow_last);
        let cached = GLOBS
            .try_with(|g| {
                g.borrow()
                    .as_ref()
                    .and_then(|globs| globs.found.get(&key).cloned())
            })
            .ok()
            .flatten();
        if let Some(found) = cached {
            return found;
        }
        let found: Option<Rc<[Place]>> = path::expand_glob(pattern, &key.1).map(|paths| {
            // Distinct paths can be one place (`*/..`).
            let mut places = Unique::default();
            for f in &paths {
                places.add(self.place(f, follow_last));
            }
            places.into_vec().into()
        });
        let _ = GLOBS.try_with(|g| {
            if let Some(globs) = g.borrow_mut().as_mut() {
                let size = 1 + found.as_ref().map_or(0, |f| f.len());
                if globs.held + size > HELD {
                    globs.found.clear();
                    globs.held = 0;
                }
                globs.held += size;
                globs.found.insert(key, found.clone());
            }
        });
        found
    }

    /// The places of the words a command reads from the directories
    /// `dirs`, each once, and the first word the analysis cannot place
    /// (as written, and why).
    pub(crate) fn read_places(
        &self,
        words: &[PathWord],
        dirs: &Dirs,
        base: &Path,
    ) -> (Vec<Place>, Option<(String, &'static str)>) {
        let mut places = Unique::default();
        let mut unknown = None;
        // A word named again names the same places.
        let mut named = HashSet::new();
        for w in words {
            let key = match w {
                PathWord::Literal(t) => (0, t),
                PathWord::Home(t) => (1, t),
                PathWord::Glob(t) => (2, t),
                PathWord::Unknown(t) => (3, t),
            };
            if !named.insert(key) {
                continue;
            }
            match self.places(w, dirs, base, false) {
                Ok(found) => places.add_distinct(found),
                Err(why) => {
                    unknown.get_or_insert((w.text(), why));
                }
            }
        }
        (places.into_vec(), unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(n: usize) -> Place {
        let p: Rc<Path> = PathBuf::from(format!("/p/{}", n % 10)).into();
        Place {
            lexical: p.clone(),
            physical: p,
        }
    }

    #[test]
    fn unique_keeps_the_first_of_each_in_order() {
        let mut u = Unique::default();
        for n in [3, 3, 1, 2, 1, 0, 4, 5, 6, 7, 8, 9, 3, 9, 13, 0] {
            u.add(place(n));
        }
        let want: Vec<Place> = [3, 1, 2, 0, 4, 5, 6, 7, 8, 9].map(place).to_vec();
        assert_eq!(u.into_vec(), want);
    }

    #[test]
    fn a_glob_is_expanded_once_per_scope() {
        let dir = std::env::temp_dir().join(format!("dsh-policy-places-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dir = dir.canonicalize().unwrap();
        std::fs::write(dir.join("a.rs"), "x").unwrap();
        let ws = Workspace::new(dir.clone(), None);
        let dirs: Dirs = Some(vec![String::new()]);
        let glob = PathWord::Glob("*.rs".into());
        let names = |ws: &Workspace| -> Vec<PathBuf> {
            let found = ws.places(&glob, &dirs, &dir, false).unwrap();
            found.into_iter().map(|p| p.lexical.to_path_buf()).collect()
        };
        {
            let _scope = GlobScope::enter();
            assert_eq!(names(&ws), [dir.join("a.rs")]);
            std::fs::write(dir.join("b.rs"), "x").unwrap();
            // The decision goes on with the disk as it first saw it.
            assert_eq!(names(&ws), [dir.join("a.rs")]);
            let _inner = GlobScope::enter();
            assert_eq!(names(&ws), [dir.join("a.rs")]);
        }
        // The next decision looks again; without a scope, every time.
        let mut now = names(&ws);
        now.sort();
        assert_eq!(now, [dir.join("a.rs"), dir.join("b.rs")]);
        std::fs::write(dir.join("c.rs"), "x").unwrap();
        assert_eq!(names(&ws).len(), 3);
        // Words named again are placed once.
        let _scope = GlobScope::enter();
        let words = [
            glob.clone(),
            PathWord::Literal("a.rs".into()),
            glob.clone(),
            PathWord::Unknown("$x".into()),
        ];
        let (found, unknown) = ws.read_places(&words, &dirs, &dir);
        assert_eq!(found.len(), 3);
        assert_eq!(unknown.map(|u| u.0), Some("$x".to_owned()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
