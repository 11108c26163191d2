//! Path globs for `Edit(…)`, `Read(…)` and other non-shell rules, and
//! lexical path normalisation.

use std::path::{Component, Path, PathBuf};

/// A path glob: `*` and `?` within one path segment, `**` across segments.
///
/// * `/abs/**` is absolute; `~/x` is under the home directory;
/// * a pattern with a `/` elsewhere (`src/**`, `./x`) is relative to the
///   working directory;
/// * a pattern without `/` (`*.md`, `.env`) matches a file of that name in
///   any directory.
#[derive(Clone, Debug)]
pub(crate) struct PathPattern {
    raw: String,
    kind: Anchor,
    /// Pattern segments (for anchored kinds, after the anchor).
    segments: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Anchor {
    Absolute,
    Home,
    Cwd,
    /// Matches the file name in any directory.
    Name,
    /// An exact absolute path (no wildcards).
    Literal,
}

impl PathPattern {
    pub(crate) fn parse(spec: &str) -> Result<Self, String> {
        let raw = spec.trim();
        if raw.is_empty() {
            return Err("empty path pattern".into());
        }
        let (kind, rest) = if let Some(rest) = raw.strip_prefix("~/") {
            (Anchor::Home, rest)
        } else if raw == "~" {
            (Anchor::Home, "")
        } else if let Some(rest) = raw.strip_prefix('/') {
            (Anchor::Absolute, rest)
        } else if raw.contains('/') {
            (Anchor::Cwd, raw.strip_prefix("./").unwrap_or(raw))
        } else {
            (Anchor::Name, raw)
        };
        let segments: Vec<String> = rest
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(str::to_owned)
            .collect();
        if segments.iter().any(|s| s == "..") {
            return Err("\"..\" is not allowed in a path pattern".into());
        }
        Ok(PathPattern {
            raw: raw.to_owned(),
            kind,
            segments,
        })
    }

    /// A pattern matching exactly one absolute path.
    pub(crate) fn literal(path: &str) -> Self {
        PathPattern {
            raw: path.to_owned(),
            kind: Anchor::Literal,
            segments: Vec::new(),
        }
    }

    /// Whether the absolute, normalised `path` matches.
    pub(crate) fn matches(&self, path: &Path, cwd: &Path, home: Option<&Path>) -> bool {
        let names: Vec<&str> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect();
        let base: Vec<String> = match self.kind {
            Anchor::Literal => return normalise(Path::new(&self.raw)) == path,
            Anchor::Name => {
                return match (names.last(), self.segments.first()) {
                    (Some(name), Some(pat)) => segment_match(pat, name),
                    _ => false,
                }
            }
            Anchor::Absolute => Vec::new(),
            Anchor::Cwd => to_names(cwd),
            Anchor::Home => match home {
                Some(h) => to_names(h),
                None => return false,
            },
        };
        let mut full: Vec<&str> = base.iter().map(String::as_str).collect();
        full.extend(self.segments.iter().map(String::as_str));
        segments_match(&full, &names)
    }
}

fn to_names(p: &Path) -> Vec<String> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str().map(str::to_owned),
            _ => None,
        })
        .collect()
}

/// Matches path segments where `**` spans any number of segments.
fn segments_match(pattern: &[&str], names: &[&str]) -> bool {
    // Iterative backtracking over `**` positions (like wildcard matching).
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < names.len() {
        if p < pattern.len() && pattern[p] == "**" {
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
    while p < pattern.len() && pattern[p] == "**" {
        p += 1;
    }
    p == pattern.len()
}

/// Matches one segment: `*` any run of characters, `?` one character.
fn segment_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = name.chars().collect();
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || (p[i] != '*' && p[i] == t[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
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
    while i < p.len() && p[i] == '*' {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        PathPattern::parse(pattern).unwrap().matches(
            Path::new(path),
            Path::new("/work/proj"),
            Some(Path::new("/home/u")),
        )
    }

    #[test]
    fn globs() {
        assert!(m("/etc/**", "/etc/passwd"));
        assert!(m("/etc/**", "/etc/ssh/sshd_config"));
        assert!(!m("/etc/*", "/etc/ssh/sshd_config"));
        assert!(m("src/**", "/work/proj/src/a/b.rs"));
        assert!(m("./src/*.rs", "/work/proj/src/b.rs"));
        assert!(!m("src/**", "/work/other/src/b.rs"));
        assert!(m("*.md", "/anywhere/README.md"));
        assert!(m(".env", "/work/proj/.env"));
        assert!(!m(".env", "/work/proj/.envrc"));
        assert!(m("~/.ssh/**", "/home/u/.ssh/id_rsa"));
        assert!(m("/a/**/z", "/a/z"));
        assert!(m("/a/**/z", "/a/b/c/z"));
        assert!(m("/a/?.txt", "/a/b.txt"));
        assert!(!m("/a/?.txt", "/a/bc.txt"));
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
}
