//! Path patterns for `Read(…)`, `Edit(…)` and other non-shell rules, with
//! Claude Code's gitignore-style anchors; lexical normalisation; and what a
//! path is on disk at decision time (symlinks followed, globs expanded).

use std::path::{Component, Path, PathBuf};

/// A path pattern, as Claude Code writes them:
///
/// * `//abs/path` is absolute;
/// * `~/path` is under the home directory;
/// * `/path` is relative to the settings file's project (the directory
///   holding its `.claude`, else the file's directory; the working
///   directory for a rule given elsewhere). A deny or ask rule matches it
///   as an absolute path too, so a rule written in the older absolute sense
///   (`Edit(/etc/**)`) still protects what it names;
/// * `./path`, or `path` with a `/` before its end, is relative to the
///   working directory;
/// * `name` (no `/`, or only a trailing one) matches a file or directory of
///   that name at any depth, and everything inside such a directory, as in
///   a `.gitignore`.
///
/// `*` and `?` match within one path segment, `**` across segments.
#[derive(Clone, Debug)]
pub(crate) struct PathPattern {
    raw: String,
    kind: Anchor,
    /// Pattern segments (for anchored kinds, after the anchor).
    segments: Vec<String>,
    /// For `/path`: the project of the settings file the rule came from.
    root: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Anchor {
    Absolute,
    Home,
    /// `/path`: relative to the settings file's project.
    Root,
    Cwd,
    /// Matches a path segment of that name at any depth.
    Name,
    /// An exact absolute path (no wildcards).
    Literal,
}

/// The directories a pattern's anchors stand for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Anchors<'a> {
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
}

impl PathPattern {
    pub(crate) fn parse(spec: &str) -> Result<Self, String> {
        let raw = spec.trim();
        if raw.is_empty() {
            return Err("empty path pattern".into());
        }
        let (kind, rest) = if let Some(rest) = raw.strip_prefix("//") {
            (Anchor::Absolute, rest)
        } else if let Some(rest) = raw.strip_prefix("~/") {
            (Anchor::Home, rest)
        } else if raw == "~" {
            (Anchor::Home, "")
        } else if let Some(rest) = raw.strip_prefix('/') {
            (Anchor::Root, rest)
        } else if let Some(rest) = raw.strip_prefix("./") {
            (Anchor::Cwd, rest)
        } else if raw.trim_end_matches('/').contains('/') {
            (Anchor::Cwd, raw)
        } else {
            (Anchor::Name, raw.trim_end_matches('/'))
        };
        let segments: Vec<String> = rest
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(str::to_owned)
            .collect();
        if segments.iter().any(|s| s == "..") {
            return Err("\"..\" is not allowed in a path pattern".into());
        }
        if kind == Anchor::Name && segments.is_empty() {
            return Err("a path pattern needs a name".into());
        }
        Ok(PathPattern {
            raw: raw.to_owned(),
            kind,
            segments,
            root: None,
        })
    }

    /// A pattern matching exactly one absolute path.
    pub(crate) fn literal(path: &str) -> Self {
        PathPattern {
            raw: normalise(Path::new(path)).to_string_lossy().into_owned(),
            kind: Anchor::Literal,
            segments: Vec::new(),
            root: None,
        }
    }

    /// Anchors a `/path` pattern at a settings file's project.
    pub(crate) fn set_root(&mut self, root: &Path) {
        if self.kind == Anchor::Root {
            self.root = Some(normalise(root));
        }
    }

    /// The project a `/path` pattern is anchored at, when it has one.
    pub(crate) fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Whether the absolute, normalised `path` matches. `wide` is for deny
    /// and ask rules, which err towards matching: `/path` also as an
    /// absolute path, and a bare name anywhere rather than only under the
    /// working directory.
    pub(crate) fn matches(&self, path: &Path, at: Anchors<'_>, wide: bool) -> bool {
        // Decisions match every place against every path rule, so this
        // works on the text and allocates only for paths that are not UTF-8.
        let path = text(path);
        let under = |base: &Path| -> bool {
            let Some(rest) = strip_dir(&path, &text(base)) else {
                return false;
            };
            let mut buf = [""; 64];
            let mut count = 0;
            let mut more = Vec::new();
            for name in rest.split('/').filter(|n| !n.is_empty()) {
                match buf.get_mut(count) {
                    Some(slot) => *slot = name,
                    None => more.push(name),
                }
                count += 1;
            }
            let names: &[&str] = if more.is_empty() {
                &buf[..count]
            } else {
                more.splice(0..0, buf);
                &more
            };
            covers(&self.segments, names)
        };
        match self.kind {
            Anchor::Literal => self.raw == *path,
            Anchor::Name => {
                let below = if wide {
                    &path[..]
                } else {
                    match strip_dir(&path, &text(at.cwd)) {
                        Some(rest) => rest,
                        None => return false,
                    }
                };
                let seg = &self.segments[0];
                below
                    .split('/')
                    .any(|name| !name.is_empty() && segment_match(seg, name))
            }
            Anchor::Absolute => under(Path::new("/")),
            Anchor::Cwd => under(at.cwd),
            Anchor::Home => at.home.is_some_and(under),
            Anchor::Root => {
                under(self.root.as_deref().unwrap_or(at.cwd)) || (wide && under(Path::new("/")))
            }
        }
    }
}

impl PathPattern {
    /// Whether a file this pattern names exists strictly below `dir`: its
    /// literal start (the anchor and the names before the first wildcard)
    /// is inside `dir` and is on disk. A program reading every file under
    /// `dir` (`grep -r`) reads it. A pattern naming a file at any depth
    /// (`*.pem`) is not searched for: that would walk the tree at every
    /// decision.
    pub(crate) fn names_something_below(&self, dir: &Path, at: Anchors<'_>) -> bool {
        let base: PathBuf = match self.kind {
            Anchor::Name => return false,
            Anchor::Literal => PathBuf::from(&self.raw),
            Anchor::Absolute => PathBuf::from("/"),
            Anchor::Cwd => at.cwd.to_path_buf(),
            Anchor::Home => match at.home {
                Some(h) => h.to_path_buf(),
                None => return false,
            },
            Anchor::Root => self.root.clone().unwrap_or_else(|| at.cwd.to_path_buf()),
        };
        let mut start = base;
        if self.kind != Anchor::Literal {
            for seg in &self.segments {
                if seg.contains(['*', '?', '[']) {
                    break;
                }
                start.push(seg);
            }
        }
        let start_text = text(&start);
        let inside = strip_dir(&start_text, &text(dir)).is_some_and(|rest| !rest.is_empty());
        inside && start.symlink_metadata().is_ok()
    }
}

impl PathPattern {
    /// Where the paths this pattern names start, as `(path, literal)`:
    /// the anchor and the names before the first wildcard, with `literal`
    /// when the pattern has no wildcard (it names that path and what is
    /// beneath it). A `/path` pattern of a deny rule (`wide`) starts both
    /// at its project and at `/`. `None` for a bare name, which matches
    /// at any depth of anywhere.
    pub(crate) fn starts(&self, at: Anchors<'_>, wide: bool) -> Option<Vec<(PathBuf, bool)>> {
        let bases: Vec<PathBuf> = match self.kind {
            Anchor::Name => return None,
            Anchor::Literal => return Some(vec![(PathBuf::from(&self.raw), true)]),
            Anchor::Absolute => vec![PathBuf::from("/")],
            Anchor::Cwd => vec![at.cwd.to_path_buf()],
            Anchor::Home => at.home.map(Path::to_path_buf).into_iter().collect(),
            Anchor::Root => {
                let mut v = vec![self.root.clone().unwrap_or_else(|| at.cwd.to_path_buf())];
                if wide {
                    v.push(PathBuf::from("/"));
                }
                v
            }
        };
        let mut literal = true;
        let mut rest = PathBuf::new();
        for seg in &self.segments {
            if seg.contains(['*', '?']) {
                literal = false;
                break;
            }
            rest.push(seg);
        }
        Some(
            bases
                .into_iter()
                .map(|b| (normalise(&b.join(&rest)), literal))
                .collect(),
        )
    }

    /// The pattern as written.
    pub(crate) fn as_str(&self) -> &str {
        &self.raw
    }
}

/// A path as text: borrowed unless it is not UTF-8.
fn text(path: &Path) -> std::borrow::Cow<'_, str> {
    match path.to_str() {
        Some(t) => std::borrow::Cow::Borrowed(t),
        None => path.to_string_lossy(),
    }
}

/// What is left of `path` below the directory `dir` (both absolute and
/// normalised), or `None` when it is not inside.
fn strip_dir<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let dir = dir.trim_end_matches('/');
    let rest = path.strip_prefix(dir)?;
    if rest.is_empty() || rest.starts_with('/') {
        Some(rest)
    } else {
        None
    }
}

impl PartialEq for PathPattern {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw && self.root == other.root
    }
}

/// Whether `names` or one of the directories above it matches `pattern`
/// (where `**` spans any number of names): as in a `.gitignore`, a pattern
/// naming a directory covers what is inside it.
///
/// That is `pattern` with a `**` after it, matched greedily: each `**` is
/// tried at one start after another, and only the last `**` seen is ever
/// gone back to, since a later `**` can take whatever names an earlier one
/// would have taken. Every step moves the pattern on within one attempt or
/// starts the next attempt one name further, so the work is at most the
/// names times the pattern's segments: linear in the depth of the path for
/// `**/.env` and `**/a/**/b` alike. (Matching every directory above the
/// path on its own, each match backtracking over it, was quadratic: a path
/// 40 000 names deep took seconds.)
fn covers<P: AsRef<str>, N: AsRef<str>>(pattern: &[P], names: &[N]) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    // The last `**`: its index, and where its current attempt starts.
    let mut star: Option<(usize, usize)> = None;
    loop {
        let Some(seg) = pattern.get(p).map(AsRef::as_ref) else {
            // The rest of the path is inside what matched.
            return true;
        };
        if seg == "**" {
            star = Some((p, n));
            p += 1;
            continue;
        }
        let Some(name) = names.get(n) else {
            // A `**` taking more names leaves fewer for this segment.
            return false;
        };
        if segment_match(seg, name.as_ref()) {
            p += 1;
            n += 1;
        } else if let Some((sp, sn)) = star {
            // The `**` takes one more name (`sn` ≤ `n`, a name here).
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
}

/// Matches one segment: `*` any run of characters, `?` one character.
pub(crate) fn segment_match(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return pattern == name;
    }
    // Bytes are characters unless `?` must match a multi-byte one; a `*`
    // cannot split one, as UTF-8 literals only match at character starts.
    if !pattern.contains('?') || name.is_ascii() {
        wildcard(pattern.as_bytes(), name.as_bytes(), b'*', b'?')
    } else {
        let p: Vec<char> = pattern.chars().collect();
        let t: Vec<char> = name.chars().collect();
        wildcard(&p, &t, '*', '?')
    }
}

fn wildcard<T: PartialEq + Copy>(p: &[T], t: &[T], any: T, one: T) -> bool {
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == one || (p[i] != any && p[i] == t[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == any {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == any {
        i += 1;
    }
    i == p.len()
}

/// Lexically normalises a path: removes `.`, resolves `..` (never above the root).
pub(crate) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` made absolute against `base`, then normalised.
pub(crate) fn absolute(path: &str, base: &Path) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        normalise(p)
    } else {
        normalise(&base.join(p))
    }
}

/// Whether the normalised absolute `path` is `dir` or inside it.
pub(crate) fn is_inside(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

/// How many symbolic links one resolution follows (the kernel's limit).
const MAX_LINKS: usize = 40;

/// What the absolute path `path` (not normalised: `link/..` is the link
/// target's parent, as the kernel sees it) is on disk now: every symbolic
/// link followed, the last one only when `follow_last` (removing a link
/// removes the link). Components that do not exist are taken as written.
pub(crate) fn physical(path: &Path, follow_last: bool) -> PathBuf {
    physical_below(Path::new("/"), path, follow_last)
}

/// As [`physical`] for `dir.join(rest)`, where `dir` is already a path on
/// disk with no symbolic link on its way (so it is not looked at again).
pub(crate) fn physical_below(dir: &Path, rest: &Path, follow_last: bool) -> PathBuf {
    let mut todo: Vec<std::ffi::OsString> = Vec::new();
    push_components(rest, &mut todo);
    let mut out = dir.to_path_buf();
    let mut links = 0usize;
    let mut exists = true;
    while let Some(part) = todo.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        out.push(&part);
        let last = todo.is_empty();
        if !exists || (last && !follow_last) {
            continue;
        }
        match std::fs::symlink_metadata(&out) {
            Ok(meta) if meta.file_type().is_symlink() && links < MAX_LINKS => {
                links += 1;
                let Ok(target) = std::fs::read_link(&out) else {
                    continue;
                };
                out.pop();
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_components(&target, &mut todo);
            }
            Ok(_) => {}
            Err(_) => exists = false,
        }
    }
    out
}

/// Pushes the normal and `..` components of `path` onto a stack of
/// components still to resolve (the first one on top).
fn push_components(path: &Path, todo: &mut Vec<std::ffi::OsString>) {
    let parts: Vec<std::ffi::OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    todo.extend(parts.into_iter().rev());
}

/// How many paths one glob may name before the analysis gives up on it.
const MAX_GLOB_MATCHES: usize = 512;

/// The paths a glob names now, as bash would expand it from `base` (with
/// `*` also matching names that start with a dot, which can only find
/// more). `None` when the glob has what this expansion does not do
/// (`[…]`, extended globs) or names too many paths; an empty list when
/// nothing matches (bash then passes the word as it is).
pub(crate) fn expand_glob(pattern: &str, base: &Path) -> Option<Vec<PathBuf>> {
    if pattern.contains(['[', ']', '(', ')', '\\']) {
        return None;
    }
    let start = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let mut found = vec![start];
    for seg in pattern.split('/').filter(|s| !s.is_empty()) {
        let mut next = Vec::new();
        for dir in &found {
            if !seg.contains(['*', '?']) {
                next.push(dir.join(seg));
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if segment_match(seg, &name.to_string_lossy()) {
                    next.push(dir.join(name));
                    if next.len() > MAX_GLOB_MATCHES {
                        return None;
                    }
                }
            }
        }
        found = next;
    }
    found.retain(|p| std::fs::symlink_metadata(p).is_ok());
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        at(pattern, path, false)
    }

    fn at(pattern: &str, path: &str, wide: bool) -> bool {
        let mut p = PathPattern::parse(pattern).unwrap();
        p.set_root(Path::new("/work/proj"));
        p.matches(
            Path::new(path),
            Anchors {
                cwd: Path::new("/work/proj/sub"),
                home: Some(Path::new("/home/u")),
            },
            wide,
        )
    }

    #[test]
    fn anchors() {
        assert!(m("//etc/**", "/etc/passwd"));
        assert!(m("//etc/**", "/etc/ssh/sshd_config"));
        // As in a .gitignore, a pattern naming a directory covers its files.
        assert!(m("//etc/*", "/etc/ssh/sshd_config"));
        assert!(!m("//etc/*/x", "/etc/ssh/sshd_config"));
        assert!(
            m("//etc/ssh", "/etc/ssh/sshd_config"),
            "a directory covers its files"
        );
        // `/path` is the settings file's project, and for deny also absolute.
        assert!(m("/src/**", "/work/proj/src/a.rs"));
        assert!(!m("/etc/**", "/etc/passwd"));
        assert!(at("/etc/**", "/etc/passwd", true));
        // `./path` and `a/b` are the working directory.
        assert!(m("./src/*.rs", "/work/proj/sub/src/b.rs"));
        assert!(m("src/**", "/work/proj/sub/src/a/b.rs"));
        assert!(!m("src/**", "/work/other/src/b.rs"));
        assert!(m("~/.ssh/**", "/home/u/.ssh/id_rsa"));
        assert!(m("~/.zshrc", "/home/u/.zshrc"));
    }

    #[test]
    fn names_at_any_depth() {
        assert!(m(".env", "/work/proj/sub/.env"));
        assert!(m(".env", "/work/proj/sub/deep/er/.env"));
        assert!(!m(".env", "/work/proj/sub/.envrc"));
        assert!(m("*.pem", "/work/proj/sub/k/a.pem"));
        assert!(m("secrets/", "/work/proj/sub/app/secrets/key"));
        assert!(m(".git", "/work/proj/sub/.git/config"));
        // An allow rule's bare name stays under the working directory; a
        // deny rule's matches anywhere.
        assert!(!m("*.md", "/etc/x.md"));
        assert!(at("*.md", "/etc/x.md", true));
    }

    #[test]
    fn globs() {
        assert!(m("//a/**/z", "/a/z"));
        assert!(m("//a/**/z", "/a/b/c/z"));
        assert!(m("//a/?.txt", "/a/b.txt"));
        assert!(!m("//a/?.txt", "/a/bc.txt"));
        assert!(m("**/.env", "/work/proj/sub/x/.env"));
    }

    /// Whether `pattern` matches exactly `names`, by trying every split at
    /// every `**`: slow, and plainly what the pattern means.
    fn reference(pattern: &[&str], names: &[&str]) -> bool {
        match pattern.split_first() {
            None => names.is_empty(),
            Some((&"**", rest)) => (0..=names.len()).any(|k| reference(rest, &names[k..])),
            Some((seg, rest)) => names
                .split_first()
                .is_some_and(|(name, names)| segment_match(seg, name) && reference(rest, names)),
        }
    }

    /// What `covers` means: the path or a directory above it matches.
    fn reference_covers(pattern: &[&str], names: &[&str]) -> bool {
        (0..=names.len()).any(|n| reference(pattern, &names[..n]))
    }

    /// The matcher before `covers`: every directory above the path matched
    /// on its own, each by backtracking to the last `**`.
    fn old_covers(pattern: &[&str], names: &[&str]) -> bool {
        let segments_match = |names: &[&str]| {
            let (mut p, mut n) = (0usize, 0usize);
            let mut star: Option<(usize, usize)> = None;
            let is_globstar = |p: usize| pattern.get(p).is_some_and(|s| *s == "**");
            while n < names.len() {
                if is_globstar(p) {
                    star = Some((p, n));
                    p += 1;
                } else if p < pattern.len() && segment_match(pattern[p], names[n]) {
                    p += 1;
                    n += 1;
                } else if let Some((sp, sn)) = star {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                } else {
                    return false;
                }
            }
            while is_globstar(p) {
                p += 1;
            }
            p == pattern.len()
        };
        (0..=names.len()).any(|n| segments_match(&names[..n]))
    }

    const SEGMENTS: &[&str] = &["**", "*", "a", "b", "?", "a*", "*b", ".env", "é?"];
    const NAMES: &[&str] = &["a", "b", "ab", "ba", ".env", "aa", "éa", "é"];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        #[test]
        fn covers_is_the_reference_and_the_old_matcher(
            pattern in proptest::collection::vec(proptest::sample::select(SEGMENTS), 0..7),
            names in proptest::collection::vec(proptest::sample::select(NAMES), 0..12),
        ) {
            let want = reference_covers(&pattern, &names);
            proptest::prop_assert_eq!(covers(&pattern, &names), want);
            proptest::prop_assert_eq!(old_covers(&pattern, &names), want);
            // And through the pattern's own parsing, for every anchor.
            if !pattern.is_empty() {
                let rest = pattern.join("/");
                let path = format!("/work/proj/sub/{}", names.join("/"));
                let path = path.trim_end_matches('/');
                proptest::prop_assert_eq!(m(&format!("//work/proj/sub/{rest}"), path), want);
                proptest::prop_assert_eq!(m(&format!("./{rest}"), path), want);
                proptest::prop_assert_eq!(m(&format!("/sub/{rest}"), path), want);
            }
        }
    }

    #[test]
    fn covers_examples() {
        let yes: &[(&str, &str)] = &[
            ("**/.env", ".env"),
            ("**/.env", "a/b/.env"),
            ("**/.env", "a/.env/b"),
            ("**/a/**/b", "a/b"),
            ("**/a/**/b", "x/a/y/z/b/c"),
            ("a/**", "a"),
            ("**", ""),
            ("*", "x/y"),
            ("a/**/b/**/c", "a/b/c"),
        ];
        let no: &[(&str, &str)] = &[
            ("**/.env", ""),
            ("**/.env", "a/.envrc"),
            ("**/a/**/b", "b/a"),
            ("a/*/b", "a/b"),
            ("a/**/b/**/c", "a/c/b"),
        ];
        let split = |s: &'static str| -> Vec<&'static str> {
            s.split('/').filter(|s| !s.is_empty()).collect()
        };
        for (pattern, names) in yes {
            assert!(covers(&split(pattern), &split(names)), "{pattern} {names}");
        }
        for (pattern, names) in no {
            assert!(!covers(&split(pattern), &split(names)), "{pattern} {names}");
        }
    }

    #[test]
    fn deep_paths() {
        // Past the 64 names `matches` keeps without allocating, and deep.
        for depth in [63, 64, 65, 200_000] {
            let deep = "a/".repeat(depth);
            assert!(m("**/.env", &format!("/work/proj/sub/{deep}.env")));
            assert!(m("**/.env", &format!("/work/proj/sub/{deep}.env/x")));
            assert!(!m("**/.env", &format!("/work/proj/sub/{deep}.envrc")));
            assert!(m("**/a/**/b", &format!("/work/proj/sub/{deep}b")));
            assert!(!m("**/a/**/b", &format!("/work/proj/sub/b/{deep}")));
            // `**/.env` is under the working directory, even for a deny.
            assert!(!at("**/.env", &format!("/{deep}.env"), true));
            assert!(at("/x/**/.env", &format!("/x/{deep}.env"), true));
            assert!(m(".env", &format!("/work/proj/sub/{deep}.env")));
        }
    }

    #[test]
    fn normalising() {
        assert_eq!(absolute("../x", Path::new("/a/b")), PathBuf::from("/a/x"));
        assert_eq!(absolute("/../../x", Path::new("/a")), PathBuf::from("/x"));
        assert!(is_inside(
            &absolute("./x/y", Path::new("/w")),
            Path::new("/w")
        ));
        assert!(!is_inside(
            &absolute("../w2/y", Path::new("/w")),
            Path::new("/w")
        ));
        assert!(!is_inside(Path::new("/w2/y"), Path::new("/w")));
    }

    #[test]
    fn symlinks_are_followed() {
        let dir = std::env::temp_dir().join(format!("dsh-policy-path-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.canonicalize().unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::fs::write(base.join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        std::os::unix::fs::symlink("real/f", base.join("rel")).unwrap();
        assert_eq!(physical(&base.join("link/f"), true), base.join("real/f"));
        assert_eq!(physical(&base.join("rel"), true), base.join("real/f"));
        assert_eq!(physical(&base.join("rel"), false), base.join("rel"));
        // `link/..` is the parent of what the link points at.
        assert_eq!(
            physical(&base.join("link/../real/f"), true),
            base.join("real/f")
        );
        assert_eq!(
            physical(&base.join("missing/x"), true),
            base.join("missing/x")
        );
        let got = expand_glob("real/*", &base).unwrap();
        assert_eq!(got, vec![base.join("real/f")]);
        assert_eq!(expand_glob("*.none", &base).unwrap(), Vec::<PathBuf>::new());
        assert!(expand_glob("[ab]", &base).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
