//! What `Read(…)` deny rules name, as paths a sandbox can hold: the
//! literal paths, the directories to search for the others, and the same
//! matching the rules use ([`PermissionPolicy::read_denial_paths`]).

use crate::path::{Anchors, PathPattern};
use crate::policy::PermissionPolicy;
use crate::rule::{Matcher, Rule};
use std::path::{Path, PathBuf};

/// The tool whose deny rules name what commands must not read.
const READ_TOOL: &str = "read";

/// The anchors of path patterns, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OwnedAnchors {
    cwd: PathBuf,
    home: Option<PathBuf>,
}

impl OwnedAnchors {
    fn of(a: Anchors<'_>) -> Self {
        OwnedAnchors {
            cwd: a.cwd.to_path_buf(),
            home: a.home.map(Path::to_path_buf),
        }
    }

    fn anchors(&self) -> Anchors<'_> {
        Anchors {
            cwd: &self.cwd,
            home: self.home.as_deref(),
        }
    }
}

/// The paths `Read(…)` deny rules (configured and session) name, for a
/// sandbox to make unreadable: `dsh-sandbox`'s `ReadDenials` is built from
/// it (`literal`, `search`, [`ReadDenialPaths::is_denied`] as the matcher
/// and [`ReadDenialPaths::key`]).
///
/// ```
/// use dsh_policy::{Mode, PermissionPolicy, PermissionRules};
/// use std::path::Path;
///
/// let rules = PermissionRules::parse(
///     Vec::<&str>::new(),
///     Vec::<&str>::new(),
///     ["Read(.env)", "Read(./config/prod.key)", "Read(./logs/**/*.log)"],
/// )
/// .unwrap();
/// let policy = PermissionPolicy::new(rules, Mode::Default, "/work/proj")
///     .with_additional_directories(["/work/lib"]);
/// let paths = policy.read_denial_paths().unwrap();
/// assert_eq!(paths.literal, [Path::new("/work/proj/config/prod.key")]);
/// assert!(paths.search.contains(&"/work/proj/logs".into()));
/// assert!(paths.search.contains(&"/work/lib".into()));
/// assert!(paths.is_denied(Path::new("/work/lib/a/.env")));
/// assert!(paths.is_denied(Path::new("/work/proj/logs/2024/x.log")));
/// assert!(!paths.is_denied(Path::new("/work/proj/src/main.rs")));
/// ```
#[derive(Debug, Clone)]
pub struct ReadDenialPaths {
    /// Absolute paths the rules name exactly (patterns without wildcards:
    /// `//abs`, `~/x`, `/project-relative` (also taken as absolute),
    /// `./cwd-relative`); each also denies what is beneath it.
    pub literal: Vec<PathBuf>,
    /// Directories to search for what the other rules name: a wildcard
    /// pattern's literal start, and the working directories (working and
    /// additional) for a bare name (`.env`, `*.pem`), which matches at
    /// any depth. A bare name's matches outside these directories are
    /// held by the rules alone, not by a sandbox built from this.
    pub search: Vec<PathBuf>,
    patterns: Vec<PathPattern>,
    lexical: OwnedAnchors,
    physical: OwnedAnchors,
    key: String,
}

impl ReadDenialPaths {
    /// Whether the absolute, normalised `path` is denied: the matching of
    /// deny rules, with the workspace's anchors as given and on disk.
    pub fn is_denied(&self, path: &Path) -> bool {
        let (lexical, physical) = (self.lexical.anchors(), self.physical.anchors());
        let same = self.lexical == self.physical;
        self.patterns
            .iter()
            .any(|p| p.matches(path, physical, true) || (!same && p.matches(path, lexical, true)))
    }

    /// What the denials are: equal keys deny the same paths.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl PermissionPolicy {
    /// The paths the `Read(…)` deny rules name, for a sandbox to hold;
    /// `None` when no deny rule names a path. A tool-wide `Read` deny rule
    /// is not a path: it is left out here, as the analysis of commands
    /// leaves it out for the words it guesses.
    pub fn read_denial_paths(&self) -> Option<ReadDenialPaths> {
        let ws = self.workspace();
        let rules: Vec<&Rule> = self
            .rules()
            .deny
            .iter()
            .chain(&self.session_rules().deny)
            .filter(|r| r.tool() == READ_TOOL && matches!(r.matcher(), Matcher::Path(_)))
            .collect();
        if rules.is_empty() {
            return None;
        }
        let lexical = OwnedAnchors::of(ws.anchors());
        let physical = OwnedAnchors::of(ws.physical_anchors());
        let mut literal = Vec::new();
        let mut search = Vec::new();
        let mut patterns = Vec::new();
        let mut key = String::new();
        for rule in &rules {
            let Matcher::Path(p) = rule.matcher() else {
                continue;
            };
            key.push_str(&format!("{}@{:?};", p.as_str(), p.root()));
            patterns.push(p.clone());
            match p.starts(ws.anchors(), true) {
                None => search.extend(ws.working_dirs().map(|(given, _)| given.to_path_buf())),
                Some(starts) => {
                    let mut starts = starts;
                    if lexical != physical {
                        starts.extend(p.starts(ws.physical_anchors(), true).unwrap_or_default());
                    }
                    for (path, exact) in starts {
                        if exact {
                            literal.push(path);
                        } else {
                            search.push(path);
                        }
                    }
                }
            }
        }
        literal.sort();
        literal.dedup();
        search.sort();
        search.dedup();
        key.push_str(&format!("{lexical:?}{physical:?}"));
        Some(ReadDenialPaths {
            literal,
            search,
            patterns,
            lexical,
            physical,
            key,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Mode, PermissionPolicy, PermissionRules, Rule, RuleList};
    use std::path::{Path, PathBuf};

    fn policy(deny: &[&str]) -> PermissionPolicy {
        let rules =
            PermissionRules::parse(Vec::<&str>::new(), Vec::<&str>::new(), deny.to_vec()).unwrap();
        PermissionPolicy::new(rules, Mode::Default, "/nonexistent/proj")
            .with_home(Some("/nonexistent/home".into()))
    }

    #[test]
    fn no_path_rule_no_paths() {
        assert!(policy(&[]).read_denial_paths().is_none());
        assert!(policy(&["Read", "Edit(.env)", "Bash(cat:*)"])
            .read_denial_paths()
            .is_none());
    }

    #[test]
    fn literal_patterns_become_absolute_paths() {
        let d = policy(&[
            "Read(//etc/shadow)",
            "Read(~/.ssh/id_rsa)",
            "Read(./conf/prod.key)",
            "Read(/secret.txt)",
            "Read(deploy/keys)",
        ])
        .read_denial_paths()
        .unwrap();
        let want: Vec<PathBuf> = [
            "/etc/shadow",
            "/nonexistent/home/.ssh/id_rsa",
            "/nonexistent/proj/conf/prod.key",
            "/nonexistent/proj/deploy/keys",
            "/nonexistent/proj/secret.txt",
            // A deny rule's `/path` is also taken as absolute.
            "/secret.txt",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let mut got = d.literal.clone();
        got.sort();
        let mut want = want;
        want.sort();
        assert_eq!(got, want);
        assert!(d.search.is_empty());
        assert!(d.is_denied(Path::new("/nonexistent/proj/conf/prod.key")));
        assert!(d.is_denied(Path::new("/nonexistent/proj/deploy/keys/a")));
        assert!(!d.is_denied(Path::new("/nonexistent/proj/conf/dev.key")));
    }

    #[test]
    fn wildcards_and_names_are_searched() {
        let d = policy(&["Read(./logs/**/*.log)", "Read(*.pem)", "Read(//var/*/x)"])
            .with_additional_directories(["/nonexistent/lib"])
            .read_denial_paths()
            .unwrap();
        assert!(d.literal.is_empty());
        assert_eq!(
            d.search,
            [
                PathBuf::from("/nonexistent/lib"),
                "/nonexistent/proj".into(),
                "/nonexistent/proj/logs".into(),
                "/var".into(),
            ]
        );
        assert!(d.is_denied(Path::new("/nonexistent/proj/logs/a/b.log")));
        assert!(d.is_denied(Path::new("/nonexistent/lib/deep/k.pem")));
        assert!(d.is_denied(Path::new("/var/lib/x")));
        assert!(!d.is_denied(Path::new("/nonexistent/proj/logs/a/b.txt")));
    }

    #[test]
    fn session_rules_count_and_change_the_key() {
        let mut p = policy(&["Read(.env)"]);
        let before = p.read_denial_paths().unwrap();
        assert!(!before.is_denied(Path::new("/nonexistent/proj/id.key")));
        p.add_session_rule(RuleList::Deny, Rule::parse("Read(*.key)").unwrap());
        let after = p.read_denial_paths().unwrap();
        assert!(after.is_denied(Path::new("/nonexistent/proj/id.key")));
        assert_ne!(before.key(), after.key());
        assert_eq!(
            before.key(),
            policy(&["Read(.env)"]).read_denial_paths().unwrap().key()
        );
    }

    #[test]
    fn is_send_sync_clone() {
        fn check<T: Send + Sync + Clone + 'static>() {}
        check::<super::ReadDenialPaths>();
    }
}
