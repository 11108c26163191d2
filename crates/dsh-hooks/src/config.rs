//! The `hooks` section compiled: matchers parsed, hooks per event, and the
//! names a tool answers to.

use dsh_policy::{HookEvent, HookMatcher, Settings};
use regex::Regex;
use std::collections::BTreeMap;
use std::time::Duration;

/// Claude Code's default timeout of a command hook.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// One command hook, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSpec {
    /// The command line, run by `sh -c`.
    pub command: String,
    /// How long it may run before its process group is killed.
    pub timeout: Duration,
    /// A timeout, a crash or output that is not JSON blocks the call.
    pub fail_closed: bool,
}

/// Which tools a group of hooks fires for, read as Claude Code reads it.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Empty, absent or `*`: every tool.
    All,
    /// Only letters, digits, `_`, `-`, spaces, `,` and `|`: exact names
    /// (compared case-insensitively), separated by `|` or `,`.
    Names(Vec<String>),
    /// Anything else: an unanchored regular expression.
    Regex(Regex),
}

impl Matcher {
    /// Parses a matcher; the error says why a regex is refused.
    pub fn parse(text: Option<&str>) -> Result<Matcher, String> {
        let text = text.unwrap_or("").trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if plain {
            let names = text
                .split(['|', ','])
                .map(|n| n.trim().to_ascii_lowercase())
                .filter(|n| !n.is_empty())
                .collect();
            return Ok(Matcher::Names(names));
        }
        Regex::new(text)
            .map(Matcher::Regex)
            .map_err(|e| format!("not a valid regular expression: {e}"))
    }

    /// Whether a tool known by any of `names` matches.
    pub fn matches(&self, names: &[String]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(list) => names
                .iter()
                .any(|n| list.iter().any(|l| l.eq_ignore_ascii_case(n))),
            Matcher::Regex(re) => names.iter().any(|n| re.is_match(n)),
        }
    }
}

/// A `hooks` section that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookConfigError {
    /// Where: `hooks.PreToolUse[0].matcher`.
    pub key: String,
    /// Why.
    pub message: String,
}

impl std::fmt::Display for HookConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "settings: {}: {}", self.key, self.message)
    }
}

impl std::error::Error for HookConfigError {}

#[derive(Debug, Clone)]
struct Group {
    matcher: Matcher,
    hooks: Vec<HookSpec>,
}

/// The hooks of the settings, by event.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    events: BTreeMap<HookEvent, Vec<Group>>,
}

impl Hooks {
    /// The hooks of (merged) settings: none when `disableAllHooks` is true.
    ///
    /// # Errors
    /// A matcher is not a valid regular expression.
    pub fn from_settings(settings: &Settings) -> Result<Hooks, HookConfigError> {
        if settings.disable_all_hooks == Some(true) {
            return Ok(Hooks::default());
        }
        let mut events: BTreeMap<HookEvent, Vec<Group>> = BTreeMap::new();
        for (event, matchers) in settings.hooks.iter().flatten() {
            for (i, m) in matchers.iter().enumerate() {
                let group = compile(m).map_err(|message| HookConfigError {
                    key: format!("hooks.{event:?}[{i}].matcher"),
                    message,
                })?;
                if event.applies() {
                    events.entry(*event).or_default().push(group);
                }
            }
        }
        Ok(Hooks { events })
    }

    /// Whether no hook would ever run.
    pub fn is_empty(&self) -> bool {
        self.events
            .values()
            .all(|g| g.iter().all(|g| g.hooks.is_empty()))
    }

    /// Whether some hook is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.events
            .get(&event)
            .is_some_and(|g| g.iter().any(|g| !g.hooks.is_empty()))
    }

    /// The hooks of `event` for a tool known by `names`, each command once
    /// (the first entry's timeout and `failClosed` win... unless a later
    /// identical entry fails closed, which is kept: the stricter holds).
    pub fn matching(&self, event: HookEvent, names: &[String]) -> Vec<HookSpec> {
        let mut out: Vec<HookSpec> = Vec::new();
        for group in self.events.get(&event).into_iter().flatten() {
            if !group.matcher.matches(names) {
                continue;
            }
            for h in &group.hooks {
                match out.iter_mut().find(|o| o.command == h.command) {
                    Some(same) => same.fail_closed |= h.fail_closed,
                    None => out.push(h.clone()),
                }
            }
        }
        out
    }
}

fn compile(m: &HookMatcher) -> Result<Group, String> {
    Ok(Group {
        matcher: Matcher::parse(m.matcher.as_deref())?,
        hooks: m
            .hooks
            .iter()
            .map(|h| HookSpec {
                command: h.command.clone(),
                timeout: h
                    .timeout
                    .map(Duration::from_secs_f64)
                    .unwrap_or(DEFAULT_TIMEOUT),
                fail_closed: h.fail_closed.unwrap_or(false),
            })
            .collect(),
    })
}

/// Claude Code's name for one of our tools: `Bash` for `bash`, the names of
/// its background-task tools, `mcp__SERVER__TOOL` for a proxied tool (its
/// first rule alias of that form); otherwise the name itself.
pub fn claude_name(name: &str, aliases: &[String]) -> String {
    match name {
        "bash" => "Bash".into(),
        "bash_output" => "BashOutput".into(),
        "bash_kill" => "KillShell".into(),
        "read" => "Read".into(),
        "write" => "Write".into(),
        "edit" => "Edit".into(),
        "glob" => "Glob".into(),
        "grep" => "Grep".into(),
        _ => aliases
            .iter()
            .find(|a| a.starts_with("mcp__") && a.matches("__").count() >= 2 && !a.ends_with('*'))
            .cloned()
            .unwrap_or_else(|| name.to_owned()),
    }
}

/// Every name a matcher may use for a tool: Claude Code's, ours, the
/// rule aliases that name the tool itself (not `mcp__SERVER`, which in
/// Claude Code matches no tool).
pub fn tool_names(name: &str, aliases: &[String]) -> Vec<String> {
    let mut names = vec![claude_name(name, aliases), name.to_owned()];
    for a in aliases {
        let whole_tool = !a.starts_with("mcp__") || a.matches("__").count() >= 2;
        if whole_tool && !a.ends_with('*') && !names.contains(a) {
            names.push(a.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn matcher_forms() {
        let bash = names(&["Bash", "bash"]);
        let gh = names(&["mcp__github__get_issue", "github__get_issue"]);
        for all in [None, Some(""), Some("*"), Some("  ")] {
            assert!(Matcher::parse(all).unwrap().matches(&bash));
        }
        let list = Matcher::parse(Some("Edit|Write, bash")).unwrap();
        assert!(list.matches(&bash));
        assert!(!list.matches(&gh));
        // An exact list is no prefix: `Bas` is not `Bash`.
        assert!(!Matcher::parse(Some("Bas")).unwrap().matches(&bash));
        let re = Matcher::parse(Some("mcp__github__.*")).unwrap();
        assert!(re.matches(&gh));
        assert!(!re.matches(&bash));
        // Unanchored, and case-sensitive as Claude Code's regexes are.
        assert!(Matcher::parse(Some("ash$")).unwrap().matches(&bash));
        assert!(!Matcher::parse(Some("^BASH$")).unwrap().matches(&bash));
        // A bare server name is an exact name, so it never fires for its tools.
        assert!(!Matcher::parse(Some("mcp__github")).unwrap().matches(&gh));
        assert!(Matcher::parse(Some("mcp__(")).is_err());
    }

    #[test]
    fn claude_names() {
        assert_eq!(claude_name("bash", &[]), "Bash");
        let aliases = names(&["mcp__gh__get_issue", "mcp__gh", "mcp__gh__*"]);
        assert_eq!(claude_name("gh__get_issue", &aliases), "mcp__gh__get_issue");
        assert_eq!(
            tool_names("gh__get_issue", &aliases),
            names(&["mcp__gh__get_issue", "gh__get_issue"])
        );
    }
}
