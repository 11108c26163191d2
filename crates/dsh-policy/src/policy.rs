//! [`PermissionPolicy`]: rules + mode + working directory → an [`Evaluation`].

mod arguments;

use crate::path::{self, PathPattern};
use crate::places::{Place, Workspace};
use crate::rule::{Matcher, PermissionRules, Rule, RuleList, SHELL_TOOL};
use crate::shell::{self, CommandPart, FilePart, OpaquePart, Part};
use crate::word::{Dirs, PathWord};
use dsh_tools::{ArgumentMeanings, ToolAnnotations};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// What to do with a call. Ordered `Allow < Ask < Deny`, so merging verdicts
/// (rules, hooks, parts of a compound command) is `max()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask,
    /// Refuse it.
    Deny,
}

impl Decision {
    /// `"allow"`, `"ask"` or `"deny"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A permission mode: what happens to calls no rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Unmatched calls to tools not annotated read-only are asked about.
    #[default]
    Default,
    /// As `default`, and edits inside the working directory are allowed.
    AcceptEdits,
    /// Only read-only tools and read-only bash commands run.
    Plan,
    /// Unmatched calls are denied: nobody is asked.
    DontAsk,
    /// Unmatched calls are allowed; deny and ask rules still apply.
    BypassPermissions,
}

impl Mode {
    /// The settings-file name (`"acceptEdits"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "acceptEdits",
            Mode::Plan => "plan",
            Mode::DontAsk => "dontAsk",
            Mode::BypassPermissions => "bypassPermissions",
        }
    }

    /// Every mode, in the order above.
    pub const ALL: [Mode; 5] = [
        Mode::Default,
        Mode::AcceptEdits,
        Mode::Plan,
        Mode::DontAsk,
        Mode::BypassPermissions,
    ];
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown mode name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode {0:?}; expected one of default, acceptEdits, plan, dontAsk, bypassPermissions")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

/// What decided an [`Evaluation`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A rule (named in [`Evaluation::rule`]).
    Rule,
    /// The mode, for a call no rule matched (or a read-only tool).
    Mode,
    /// Plan mode vetoed a call that could change something.
    PlanMode,
    /// The command could not be analysed, so it is asked about.
    Unanalysable,
    /// The call asks to run outside the sandbox.
    Sandbox,
    /// The tool's definition changed since a person accepted it (or it
    /// carries instructions aimed at the model): only a person answers.
    Definition,
}

/// The verdict on one call: nothing was run to reach it.
///
/// Serialises as `{"decision": "allow|ask|deny", "reason": "…", "rule": "…"|null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evaluation {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// Why, in a sentence a user (or the model) can act on.
    pub reason: String,
    /// The rule that decided, as written (`Bash(rm -rf:*)`), when one did.
    pub rule: Option<String>,
    /// What decided (not serialised).
    #[serde(skip)]
    pub origin: Origin,
}

/// What one part of a call is.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PartKind {
    /// A whole call of a tool other than bash.
    Call,
    /// A simple command of a bash command line.
    Command,
    /// A file a bash command line writes.
    Write,
    /// A file a bash redirection reads (`< file`).
    Read,
    /// Something that could not be analysed.
    Unanalysable,
}

/// The verdict on one part of a call (see [`PermissionPolicy::explain`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartEvaluation {
    /// What the part is.
    pub kind: PartKind,
    /// The simple command (looked through wrappers, in normal form), the
    /// written file, the unanalysable text, or the tool name.
    pub text: String,
    /// Its verdict.
    #[serde(flatten)]
    pub evaluation: Evaluation,
}

/// The message plan mode gives the model.
pub const PLAN_MODE_MESSAGE: &str = "plan mode: finish your plan and ask the user to approve it before running commands that change anything";

/// Tools whose calls are file edits by default (see [`PermissionPolicy::with_edit_tools`]).
pub const DEFAULT_EDIT_TOOLS: &[&str] = &[
    "edit",
    "write",
    "multiedit",
    "multi_edit",
    "notebookedit",
    "notebook_edit",
    "write_file",
    "edit_file",
    "create_file",
];

/// Argument names that carry a call's path, first match wins.
/// The tool whose path rules (`Read(…)`) govern what commands read.
const READ_TOOL: &str = "read";

const PATH_ARGUMENTS: &[&str] = &["file_path", "path", "notebook_path", "filePath"];

/// The tool whose argument is a patch in Codex's format, naming its paths.
const PATCH_TOOL: &str = "apply_patch";

/// Every path a patch in Codex's format adds, deletes, updates or moves
/// to, as written.
pub fn patch_paths(patch: &str) -> Vec<String> {
    const HEADERS: &[&str] = &[
        "*** Add File: ",
        "*** Delete File: ",
        "*** Update File: ",
        "*** Move to: ",
    ];
    let mut paths: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
            let path = path.trim();
            if !path.is_empty() && !paths.iter().any(|p| p == path) {
                paths.push(path.to_owned());
            }
        }
    }
    paths
}

/// A path as an `Edit(…)` rule names it: absolute paths with `//`.
fn rule_path(path: &str) -> String {
    if path.starts_with('/') {
        format!("/{path}")
    } else {
        path.to_owned()
    }
}

/// Rules, a mode and a working directory: decides calls without running them.
///
/// ```
/// use dsh_policy::{Decision, Mode, PermissionPolicy, PermissionRules};
/// use serde_json::json;
///
/// let rules = PermissionRules::parse(["Bash(cd:*)", "Bash(git status)"], ["Bash(git push:*)"], ["Bash(rm -rf:*)"]).unwrap();
/// let policy = PermissionPolicy::new(rules, Mode::Default, "/work/proj");
///
/// let check = |cmd: &str| policy.check("bash", &json!({"command": cmd})).decision;
/// assert_eq!(check("cd src && git status"), Decision::Allow);
/// assert_eq!(check("cd x && rm -rf y"), Decision::Deny);
/// assert_eq!(check("cd x && make"), Decision::Ask);
/// assert_eq!(check("git push origin main"), Decision::Ask);
/// ```
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    rules: PermissionRules,
    /// Added during the session by *allow always* / *reject always*.
    session: PermissionRules,
    mode: Mode,
    /// The working directories and the home directory.
    ws: Workspace,
    edit_tools: Vec<String>,
    /// Whether commands run in a sandbox, and if so whether a call may ask
    /// to run outside it (`sandbox_permissions: "require_escalated"`).
    sandbox: Option<bool>,
    /// Whether calls that run on the analysis's word alone are held
    /// read-only by the kernel, and if so whether such a call may ask to
    /// run outside.
    read_only_hold: Option<bool>,
}

impl PermissionPolicy {
    /// A policy for a working directory (made absolute and normalised; a
    /// relative one is taken against the process's current directory).
    /// The home directory (for `~/` in path rules) comes from `HOME`.
    pub fn new(rules: PermissionRules, mode: Mode, cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        let cwd = if cwd.is_absolute() {
            path::normalise(&cwd)
        } else {
            match std::env::current_dir() {
                Ok(here) => path::normalise(&here.join(cwd)),
                Err(_) => path::normalise(&Path::new("/").join(cwd)),
            }
        };
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        PermissionPolicy {
            rules,
            session: PermissionRules::default(),
            mode,
            ws: Workspace::new(cwd, home),
            edit_tools: DEFAULT_EDIT_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
            sandbox: None,
            read_only_hold: None,
        }
    }

    /// Commands run in a sandbox: a bash call with `sandbox_permissions:
    /// "require_escalated"` asks (denied in `dontAsk`; allowed in
    /// `bypassPermissions`), or is denied when `escalation` is false (Claude
    /// Code's `sandbox.allowUnsandboxedCommands: false`). Without a sandbox
    /// the argument changes nothing.
    pub fn with_sandbox(mut self, escalation: bool) -> Self {
        self.sandbox = Some(escalation);
        self
    }

    /// Calls allowed only because the analysis judged them read-only are
    /// held read-only by the kernel (and every call in plan mode): such a
    /// call may ask to run outside (`escalation`), as under a sandbox;
    /// another call's argument changes nothing when no sandbox is set.
    pub fn with_read_only_hold(mut self, escalation: bool) -> Self {
        self.read_only_hold = Some(escalation);
        self
    }

    /// Sets the home directory used for `~/` in path rules and commands.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.ws.set_home(home);
        self
    }

    /// More working directories (Claude Code's `additionalDirectories`):
    /// reads in them run unasked, and in `acceptEdits` so do edits; a
    /// relative one is taken from the working directory. Adds to those
    /// given before.
    pub fn with_additional_directories<I, P>(mut self, dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        for d in dirs {
            let dir = path::absolute(&d.as_ref().to_string_lossy(), &self.ws.cwd);
            self.ws.add_dir(dir);
        }
        self
    }

    /// Replaces the names of the file-edit tools (compared case-insensitively).
    pub fn with_edit_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.edit_tools = names
            .into_iter()
            .map(|s| s.as_ref().to_ascii_lowercase())
            .collect();
        self
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Changes the mode (e.g. leaving plan mode once the user approved the plan).
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// The working, additional and home directories.
    pub(crate) fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.ws.cwd
    }

    /// The configured rules.
    pub fn rules(&self) -> &PermissionRules {
        &self.rules
    }

    /// The rules added during the session (by *allow always* and *reject always*).
    pub fn session_rules(&self) -> &PermissionRules {
        &self.session
    }

    /// Adds a configured rule.
    pub fn add_rule(&mut self, list: RuleList, rule: Rule) {
        self.rules.add(list, rule);
    }

    /// Adds a session rule. A session allow rule (from *allow always*)
    /// outranks ask rules but never a deny rule; a session deny rule (from
    /// *reject always*) is a deny rule.
    pub fn add_session_rule(&mut self, list: RuleList, rule: Rule) {
        self.session.add(list, rule);
    }

    /// Decides a call of a tool that is not known to be read-only.
    ///
    /// `args` are the call's JSON arguments; for `bash` its `command` (and
    /// `workdir`). Runs nothing.
    pub fn check(&self, tool: &str, args: &Value) -> Evaluation {
        self.check_annotated(tool, args, &ToolAnnotations::default())
    }

    /// Decides a call, using the tool's annotations (`read_only`).
    pub fn check_annotated(
        &self,
        tool: &str,
        args: &Value,
        annotations: &ToolAnnotations,
    ) -> Evaluation {
        self.evaluate(tool, &[], args, annotations.is_read_only())
            .evaluation
    }

    /// Decides a call of a tool that rules may also name by `aliases`
    /// (lower-case, as [`dsh_tools::ToolDefinition::aliases`] gives them:
    /// `mcp__server__tool`, `mcp__server`, `mcp__server__*`).
    pub fn check_named(
        &self,
        tool: &str,
        aliases: &[String],
        args: &Value,
        annotations: &ToolAnnotations,
    ) -> Evaluation {
        self.evaluate(tool, aliases, args, annotations.is_read_only())
            .evaluation
    }

    /// Decides a call of another server's tool whose arguments' meanings
    /// are known (a shell command, a path read or written, …): each
    /// argument is judged as our own tool for it would be judged, with the
    /// rules naming the tool (`mcp__SERVER__TOOL(specifier)`) read as
    /// `Bash`, `Read` or `Edit` rules for it.
    ///
    /// ```
    /// use dsh_policy::{Decision, Mode, PermissionPolicy, PermissionRules};
    /// use dsh_tools::{ArgumentMeaning, ArgumentMeanings};
    /// use serde_json::json;
    ///
    /// let rules = PermissionRules::parse(Vec::<&str>::new(), Vec::<&str>::new(), ["Bash(rm:*)"]).unwrap();
    /// let policy = PermissionPolicy::new(rules, Mode::Default, "/work/proj");
    /// let aliases = ["mcp__dc__start_process", "mcp__dc", "mcp__dc__*"].map(String::from);
    /// let meanings = ArgumentMeanings {
    ///     arguments: vec![("command".into(), ArgumentMeaning::Shell), ("timeout_ms".into(), ArgumentMeaning::Data)],
    ///     from: "settings".into(),
    ///     base: None,
    /// };
    /// let check = |cmd: &str| policy.check_proxied("dc__start_process", &aliases, &meanings, &json!({"command": cmd})).decision;
    /// assert_eq!(check("npm test && rm -rf ~"), Decision::Deny);
    /// assert_eq!(check("ls -la"), Decision::Allow);
    /// assert_eq!(check("make"), Decision::Ask);
    /// ```
    pub fn check_proxied(
        &self,
        tool: &str,
        aliases: &[String],
        meanings: &ArgumentMeanings,
        args: &Value,
    ) -> Evaluation {
        self.evaluate_arguments(tool, aliases, meanings, args)
            .evaluation
    }

    /// [`PermissionPolicy::explain`] for a call [`PermissionPolicy::check_proxied`] decides.
    pub fn explain_proxied(
        &self,
        tool: &str,
        aliases: &[String],
        meanings: &ArgumentMeanings,
        args: &Value,
    ) -> Vec<PartEvaluation> {
        self.evaluate_arguments(tool, aliases, meanings, args)
            .parts()
    }

    /// The verdict with the call held for a person because the tool's
    /// definition is not the one accepted (`change` says how): asked in
    /// every mode but `dontAsk`, which denies it; a denial stands.
    pub(crate) fn hold_definition(
        &self,
        mut verdict: Verdict,
        tool: &str,
        change: &str,
    ) -> Verdict {
        if verdict.evaluation.decision == Decision::Deny {
            return verdict;
        }
        let grants = std::mem::take(&mut verdict.grants);
        let denials = std::mem::take(&mut verdict.denials);
        let mut outcomes = std::mem::take(&mut verdict.outcomes);
        let mut held = Outcome::mode(Decision::Ask, format!("{tool} is held: {change}"));
        held.origin = Origin::Definition;
        // First: of equal rank, the first outcome gives the reason, and
        // the person asked must see what changed.
        outcomes.insert(
            0,
            held.about(&format!("{tool} call"))
                .part(PartKind::Call, tool),
        );
        let mut verdict = self.finish(outcomes);
        verdict.grants = grants;
        verdict.denials = denials;
        verdict
    }

    /// Whether a deny rule refuses every call of the tool whatever its
    /// arguments (a tool-wide rule naming it or one of its aliases): such
    /// a tool is better left out of what the model is shown.
    pub fn denies_every_call(&self, tool: &str, aliases: &[String]) -> bool {
        let tool = tool.to_ascii_lowercase();
        self.rules.deny.iter().chain(&self.session.deny).any(|r| {
            r.is_tool_wide() && (r.tool() == tool || aliases.iter().any(|a| a == r.tool()))
        })
    }

    /// Every part's verdict, in source order: for a UI to show why, or to
    /// audit the splitting. The call's verdict is the strongest of these.
    pub fn explain(
        &self,
        tool: &str,
        args: &Value,
        annotations: &ToolAnnotations,
    ) -> Vec<PartEvaluation> {
        self.evaluate(tool, &[], args, annotations.is_read_only())
            .parts()
    }

    /// [`PermissionPolicy::explain`] for a tool that rules may also name by
    /// `aliases` (see [`PermissionPolicy::check_named`]).
    pub fn explain_named(
        &self,
        tool: &str,
        aliases: &[String],
        args: &Value,
        annotations: &ToolAnnotations,
    ) -> Vec<PartEvaluation> {
        self.evaluate(tool, aliases, args, annotations.is_read_only())
            .parts()
    }

    pub(crate) fn evaluate(
        &self,
        tool: &str,
        aliases: &[String],
        args: &Value,
        read_only: bool,
    ) -> Verdict {
        let tool_lc = tool.to_ascii_lowercase();
        // A tool with aliases is another server's (a proxied MCP tool): it is
        // never taken for our shell, whatever it is called.
        if tool_lc == SHELL_TOOL && aliases.is_empty() {
            self.evaluate_bash(tool, args)
        } else if tool_lc == PATCH_TOOL && aliases.is_empty() {
            self.evaluate_patch(tool, args)
        } else {
            let path = PATH_ARGUMENTS
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_str));
            let (outcome, grant) = self.tool_outcome(tool, &tool_lc, aliases, path, read_only);
            self.tool_verdict(vec![outcome], grant)
        }
    }

    /// A patch (`apply_patch`) is an edit of every path it names: each is
    /// judged as `edit` of that path would be, and the strictest wins.
    fn evaluate_patch(&self, tool: &str, args: &Value) -> Verdict {
        let paths = args
            .get("patch")
            .and_then(Value::as_str)
            .map(patch_paths)
            .unwrap_or_default();
        if paths.is_empty() {
            // Nothing to place: what it would change is unknown.
            let (outcome, grant) = self.tool_outcome(tool, PATCH_TOOL, &[], None, false);
            return self.tool_verdict(vec![outcome], grant);
        }
        let outcomes = paths
            .iter()
            .map(|path| {
                let (outcome, _) = self.tool_outcome(tool, "edit", &[], Some(path), false);
                outcome.part(PartKind::Write, path)
            })
            .collect();
        let grants = paths
            .iter()
            .filter_map(|path| Rule::parse(&format!("Edit({})", rule_path(path))).ok())
            .collect::<Vec<_>>();
        let mut verdict = self.finish(outcomes);
        if verdict.evaluation.decision == Decision::Ask {
            verdict.denials.extend(grants.iter().cloned());
            verdict.grants.extend(grants);
        }
        verdict
    }

    fn tool_verdict(&self, outcomes: Vec<Outcome>, grant: Option<Rule>) -> Verdict {
        let mut verdict = self.finish(outcomes);
        if verdict.evaluation.decision == Decision::Ask {
            if let Some(g) = grant {
                verdict.grants.push(g.clone());
                verdict.denials.push(g);
            }
        }
        verdict
    }

    /// The outcome of a call of a tool other than `bash`, on the path it
    /// names (if any), and the rule that would allow it.
    fn tool_outcome(
        &self,
        tool: &str,
        tool_lc: &str,
        aliases: &[String],
        path: Option<&str>,
        read_only: bool,
    ) -> (Outcome, Option<Rule>) {
        let place = path.map(|p| self.ws.place(&self.ws.cwd.join(p), true));
        // Nor for one of our edit tools: what it does with a path is its own.
        let is_edit = aliases.is_empty() && self.edit_tools.iter().any(|t| t == tool_lc);
        let matches = |rule: &Rule, wide: bool| -> bool {
            let own = rule.tool() == tool_lc || aliases.iter().any(|a| a == rule.tool());
            let edit_rule = is_edit && matches!(rule.tool(), "edit" | "write");
            if !own && !edit_rule {
                return false;
            }
            match rule.matcher() {
                Matcher::Any => true,
                Matcher::Path(p) => place
                    .as_ref()
                    .is_some_and(|place| self.path_matches(p, place, wide)),
                Matcher::Argument { path: Some(p), .. } => place
                    .as_ref()
                    .is_some_and(|place| self.path_matches(p, place, wide)),
                Matcher::Command(_) | Matcher::Argument { path: None, .. } => false,
            }
        };
        let wide = |r: &Rule| matches(r, true);
        let narrow = |r: &Rule| matches(r, false);
        let subject = format!("{tool} call");
        // A proxied tool is named in rules as `mcp__SERVER__TOOL` (its first
        // alias), not by the name the client shows.
        let rule_name = aliases
            .first()
            .filter(|a| a.starts_with("mcp__"))
            .map_or(tool, String::as_str);
        // A file tool's call is allowed by a rule for its path, not for
        // every call of the tool.
        let path_rule = match (path, aliases.is_empty()) {
            (Some(p), true) if is_edit => Rule::parse(&format!("Edit({})", rule_path(p))).ok(),
            (Some(p), true) if tool_lc == READ_TOOL => {
                Rule::parse(&format!("Read({})", rule_path(p))).ok()
            }
            _ => None,
        };
        let grant = path_rule.or_else(|| Rule::tool_name(rule_name).ok());
        let outcome = (|| {
            if let Some(o) = self.first_match(RuleList::Deny, &wide, &subject) {
                return o;
            }
            if self.mode == Mode::Plan && !read_only {
                return Outcome::plan(format!("{PLAN_MODE_MESSAGE} ({tool} is not read-only)"));
            }
            if let Some(o) = self.session_allow(&narrow, &subject) {
                return o;
            }
            if let Some(o) = self.first_match(RuleList::Ask, &wide, &subject) {
                return o;
            }
            if let Some(o) = self.first_match(RuleList::Allow, &narrow, &subject) {
                return o;
            }
            if read_only {
                return Outcome::mode(Decision::Allow, format!("{tool} is read-only"));
            }
            if is_edit {
                if let Some(o) = place
                    .as_ref()
                    .and_then(|p| self.protected_edit(p, &subject))
                {
                    return o;
                }
            }
            if self.mode == Mode::AcceptEdits && is_edit {
                if let Some(p) = &place {
                    if self.ws.inside(p) {
                        return Outcome::mode(
                            Decision::Allow,
                            format!(
                                "edit of {} inside the working directory (mode acceptEdits)",
                                p.lexical.display()
                            ),
                        );
                    }
                }
            }
            self.unmatched(&subject)
        })()
        .about(&subject)
        .part(PartKind::Call, tool);
        (outcome, grant)
    }

    /// Whether a path pattern matches a place. Deny and ask rules (`wide`)
    /// match the path as written or as it is on disk; an allow rule only
    /// what it is on disk, so a symbolic link does not carry an allow
    /// elsewhere.
    fn path_matches(&self, pattern: &PathPattern, place: &Place, wide: bool) -> bool {
        // Without links on the way the three views are one: match it once.
        let same_anchors = self.ws.anchors_on_disk_as_given();
        pattern.matches(&place.physical, self.ws.physical_anchors(), wide)
            || (!same_anchors && pattern.matches(&place.physical, self.ws.anchors(), wide))
            || (wide
                // Both are normalised: comparing their bytes is enough
                // (and much cheaper than comparing components).
                && (place.lexical.as_os_str() != place.physical.as_os_str() || !same_anchors)
                && pattern.matches(&place.lexical, self.ws.anchors(), true))
    }

    /// Whether a rule of one of `tools` matches a place.
    fn path_rule(&self, rule: &Rule, tools: &[&str], place: &Place, wide: bool) -> bool {
        tools.contains(&rule.tool())
            && match rule.matcher() {
                Matcher::Any => true,
                Matcher::Path(p) => self.path_matches(p, place, wide),
                Matcher::Command(_) | Matcher::Argument { .. } => false,
            }
    }

    /// Whether a list has a `Read`, `Edit` or `Write` rule naming paths.
    fn has_path_rules(&self, lists: &[RuleList]) -> bool {
        // Asked for every command part with guessed words: no allocation,
        // the same rules as `listed` (session rules for deny only).
        let names_paths = |r: &Rule| {
            matches!(r.tool(), READ_TOOL | "edit" | "write")
                && matches!(r.matcher(), Matcher::Path(_))
        };
        lists.iter().any(|&list| {
            self.rules.list(list).iter().any(names_paths)
                || (list == RuleList::Deny && self.session.deny.iter().any(names_paths))
        })
    }

    /// Whether any deny `Read(…)` rule could be walked around by a read the
    /// analysis cannot place.
    fn has_read_denials(&self) -> bool {
        self.rules
            .deny
            .iter()
            .chain(&self.session.deny)
            .any(|r| r.tool() == READ_TOOL && !matches!(r.matcher(), Matcher::Command(_)))
    }

    fn evaluate_bash(&self, tool: &str, args: &Value) -> Verdict {
        let Some(command) = args.get("command").and_then(Value::as_str) else {
            let any = |r: &Rule| r.tool() == SHELL_TOOL && r.is_tool_wide();
            let outcome = self
                .first_match(RuleList::Deny, &any, "bash call")
                .unwrap_or_else(|| {
                    Outcome::opaque(
                        "bash call",
                        "the call has no \"command\" string".to_owned(),
                        self.mode,
                    )
                })
                .part(PartKind::Unanalysable, tool);
            return self.finish(vec![outcome]);
        };
        let base = match args.get("workdir").and_then(Value::as_str) {
            Some(dir) => path::absolute(dir, &self.ws.cwd),
            None => self.ws.cwd.clone(),
        };
        let analysis = shell::analyze(command);
        // Each distinct glob is expanded once for the whole command line.
        let _globs = crate::places::GlobScope::enter();
        let mut outcomes = Vec::with_capacity(analysis.parts.len() + 1);
        // A tool-wide deny (`Bash`) refuses even a command with nothing to run.
        let tool_wide = |r: &Rule| r.tool() == SHELL_TOOL && r.is_tool_wide();
        if let Some(o) = self.first_match(RuleList::Deny, &tool_wide, "bash call") {
            outcomes.push(o.part(PartKind::Call, tool));
        }
        for part in &analysis.parts {
            let outcome = match part {
                Part::Command(c) => self
                    .command_part(c, &base)
                    .part(PartKind::Command, c.allow.as_deref().unwrap_or(&c.text)),
                Part::Write(w) => self
                    .write_part(w, &base)
                    .part(PartKind::Write, &w.path.text()),
                Part::Read(r) => self
                    .read_part(r, &base)
                    .part(PartKind::Read, &r.path.text()),
                Part::Opaque(o) => self.opaque_part(o).part(PartKind::Unanalysable, &o.text),
            };
            outcomes.push(outcome);
        }
        if outcomes.is_empty() {
            outcomes.push(
                Outcome::mode(Decision::Allow, format!("{tool}: the command runs nothing"))
                    .part(PartKind::Call, tool),
            );
        }
        let escalated =
            args.get("sandbox_permissions").and_then(Value::as_str) == Some("require_escalated");
        // What the call would run under: the settings' sandbox, the
        // read-only hold when nothing but the analysis allows it, or the
        // kernel keeping what `Read` deny rules name unread (held for every
        // call but an approved escalation).
        // Asked only of an escalation: most calls never get here.
        let confined = escalated
            .then(|| {
                self.sandbox.or_else(|| {
                    self.read_only_hold.filter(|_| {
                        self.mode == Mode::Plan
                            || runs_on_analysis_alone(&outcomes)
                            || self.has_read_denials()
                    })
                })
            })
            .flatten();
        if self.mode == Mode::Plan && confined.is_some() {
            outcomes.push(
                Outcome::plan(format!(
                    "{PLAN_MODE_MESSAGE} (in plan mode every command runs read-only; nothing runs outside)"
                ))
                .about("escalation out of the sandbox")
                .part(PartKind::Call, tool),
            );
            return self.finish(outcomes);
        }
        if let Some(allowed) = confined {
            let why = args
                .get("justification")
                .and_then(Value::as_str)
                .filter(|j| !j.trim().is_empty())
                .unwrap_or("no justification given");
            let outcome = if !allowed {
                Outcome::mode(
                    Decision::Deny,
                    "running outside the sandbox is disabled by the settings (sandbox.allowUnsandboxedCommands: false)".to_owned(),
                )
            } else if self.mode == Mode::BypassPermissions {
                Outcome::mode(
                    Decision::Allow,
                    format!("runs outside the sandbox ({why}); mode bypassPermissions allows it"),
                )
            } else {
                let mut o = Outcome::mode(
                    Decision::Ask,
                    format!("asks to run outside the sandbox: {why}"),
                );
                // Only the approver answers this, never a hook's allow.
                o.origin = Origin::Sandbox;
                o
            };
            outcomes.push(
                outcome
                    .about("escalation out of the sandbox")
                    .part(PartKind::Call, tool),
            );
        }
        self.finish(outcomes)
    }

    fn command_part(&self, part: &CommandPart, base: &Path) -> Outcome {
        let subject = quoted(part.allow.as_deref().unwrap_or(&part.text));
        let mut outcome = self
            .command_part_outcome(part, base, &subject)
            .about(&subject);
        if let Some(note) = part.note {
            if outcome.decision != Decision::Deny || outcome.origin != Origin::Rule {
                outcome.reason.push_str("; ");
                outcome.reason.push_str(note);
            }
        }
        outcome
    }

    /// The places a command reads, each once (a word repeated thousands of
    /// times is placed once), with what the analysis could not place (as
    /// the word and the reason).
    fn read_places(
        &self,
        words: &[PathWord],
        dirs: &Dirs,
        base: &Path,
    ) -> (Vec<Place>, Option<(String, &'static str)>) {
        self.ws.read_places(words, dirs, base)
    }

    /// A deny or ask `Read(…)` rule for a place a command reads, or (for
    /// the words of a program not described) a deny `Read`, `Edit` or
    /// `Write` rule for a place it may read or write.
    fn path_rule_outcome(
        &self,
        list: RuleList,
        reads: &[Place],
        guessed: &[Place],
        subject: &str,
    ) -> Option<Outcome> {
        let rules = self.listed(list);
        for r in &rules {
            if let Some(p) = reads
                .iter()
                .find(|p| self.path_rule(r, &[READ_TOOL], p, true))
            {
                return Some(Outcome::rule(
                    list,
                    r,
                    &format!("{subject}, which reads {},", p.lexical.display()),
                ));
            }
            // A guess is held only against a rule naming paths: a
            // tool-wide `Read` deny is about the tool, not every word.
            let names_paths = matches!(r.matcher(), Matcher::Path(_));
            if let Some(p) = guessed
                .iter()
                .filter(|_| names_paths)
                .find(|p| self.path_rule(r, &[READ_TOOL, "edit", "write"], p, true))
            {
                return Some(Outcome::rule(
                    list,
                    r,
                    &format!(
                        "{subject}, which may read or write {},",
                        p.lexical.display()
                    ),
                ));
            }
        }
        None
    }

    /// A deny `Read(…)` rule naming a file that exists below a directory a
    /// command reads every file of (`grep -r x .` under `Read(./.env)`).
    fn denied_below(&self, reads: &[Place], subject: &str) -> Option<Outcome> {
        let rules = self.listed(RuleList::Deny);
        for place in reads {
            if !place.physical.is_dir() {
                continue;
            }
            for r in &rules {
                let Matcher::Path(p) = r.matcher() else {
                    continue;
                };
                if r.tool() == READ_TOOL
                    && (p.names_something_below(&place.physical, self.ws.physical_anchors())
                        || p.names_something_below(&place.lexical, self.ws.anchors()))
                {
                    return Some(Outcome::rule(
                        RuleList::Deny,
                        r,
                        &format!(
                            "{subject}, which reads every file under {} (one of them the rule names),",
                            place.lexical.display()
                        ),
                    ));
                }
            }
        }
        None
    }

    /// Whether every place is inside the working directories or allowed by
    /// a `Read(…)` rule; else the first that is not.
    fn reads_allowed<'a>(&self, places: &'a [Place]) -> Result<(), &'a Place> {
        let allowed = |p: &Place| {
            self.ws.inside(p)
                || self
                    .rules
                    .allow
                    .iter()
                    .chain(&self.session.allow)
                    .any(|r| self.path_rule(r, &[READ_TOOL], p, false))
        };
        match places.iter().find(|p| !allowed(p)) {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    fn command_part_outcome(&self, part: &CommandPart, base: &Path, subject: &str) -> Outcome {
        let subject = subject.to_owned();
        let any_view = |r: &Rule| matches_command(r, part);
        if let Some(o) = self.first_match(RuleList::Deny, &any_view, &subject) {
            return o;
        }
        let (reads, unplaced) = self.read_places(&part.reads, &part.dirs, base);
        // Guesses matter only to rules naming paths.
        let guesses =
            !part.guessed.is_empty() && self.has_path_rules(&[RuleList::Deny, RuleList::Ask]);
        let guessed: Vec<Place> = part
            .guessed
            .iter()
            .filter(|_| guesses)
            .filter_map(|g| {
                self.ws
                    .places(&PathWord::Literal(g.clone()), &part.dirs, base, false)
                    .ok()
            })
            .flatten()
            .collect();
        if let Some(o) = self.path_rule_outcome(RuleList::Deny, &reads, &guessed, &subject) {
            return o;
        }
        if part.reads_trees {
            if let Some(o) = self.denied_below(&reads, &subject) {
                return o;
            }
        }
        if part.maybe {
            if let Some(o) = self.first_match(RuleList::Ask, &any_view, &subject) {
                return o;
            }
            if let Some(o) = self.path_rule_outcome(RuleList::Ask, &reads, &guessed, &subject) {
                return o;
            }
            let mut o = Outcome::mode(
                Decision::Allow,
                format!("{subject} may run inside another program's argument; no deny or ask rule names it, and that program is decided on its own"),
            );
            o.secondary = true;
            return o;
        }
        if self.mode == Mode::Plan && !part.read_only {
            return Outcome::plan(format!("{PLAN_MODE_MESSAGE} ({subject} is not read-only)"));
        }
        let allow_view = |r: &Rule| {
            r.tool() == SHELL_TOOL
                && match (r.matcher(), &part.allow) {
                    (Matcher::Any, _) => true,
                    (Matcher::Command(p), Some(text)) => p.matches(text),
                    _ => false,
                }
        };
        let exact = || {
            Some(Grant::Exact(
                part.allow.as_deref().unwrap_or(&part.text).to_owned(),
            ))
        };
        if let Some((word, why)) = &unplaced {
            if self.has_read_denials() {
                return Outcome::opaque(
                    &subject,
                    format!("it reads {word}, and {why}, so a deny Read rule cannot be checked"),
                    self.mode,
                )
                .with_grant(None, exact());
            }
        }
        if part.allow.is_some() {
            if let Some(o) = self.session_allow(&allow_view, &subject) {
                return o;
            }
        }
        if let Some(o) = self.first_match(RuleList::Ask, &any_view, &subject) {
            return o.with_grant(
                part.allow.as_deref().map(|a| Grant::Exact(a.to_owned())),
                exact(),
            );
        }
        if let Some(o) = self.path_rule_outcome(RuleList::Ask, &reads, &guessed, &subject) {
            return o.with_grant(
                part.allow.as_deref().map(|a| Grant::Exact(a.to_owned())),
                exact(),
            );
        }
        let Some(allow_text) = &part.allow else {
            return Outcome::mode(
                Decision::Allow,
                format!("{subject} runs nothing of its own; what it runs or writes is decided separately"),
            );
        };
        if let Some(o) = self.first_match(RuleList::Allow, &allow_view, &subject) {
            return o;
        }
        let grant = Some(Grant::Exact(allow_text.clone()));
        let reads_inside = || -> Result<(), String> {
            if let Some((word, why)) = &unplaced {
                return Err(format!("it reads {word}, and {why}"));
            }
            self.reads_allowed(&reads).map_err(|p| {
                format!(
                    "it reads {}, outside the working directories",
                    p.lexical.display()
                )
            })
        };
        // Reads run unasked in every mode, inside the working directories.
        if part.read_only && self.mode != Mode::BypassPermissions {
            return match reads_inside() {
                Ok(()) => Outcome::mode(
                    Decision::Allow,
                    format!("{subject} is read-only and reads only inside the working directories"),
                ),
                Err(why) => Outcome::mode(
                    if self.mode == Mode::DontAsk {
                        Decision::Deny
                    } else {
                        Decision::Ask
                    },
                    format!("{subject} is read-only, but {why}; mode {} asks", self.mode),
                )
                .with_grant(grant.clone(), grant),
            };
        }
        if self.mode == Mode::AcceptEdits && part.edits_only {
            match reads_inside() {
                Ok(()) => {
                    return Outcome::mode(
                        Decision::Allow,
                        format!("{subject} only makes, changes or removes files, each decided as its own part (mode acceptEdits)"),
                    )
                    .an_edit()
                }
                Err(why) => {
                    return Outcome::mode(
                        Decision::Ask,
                        format!("{subject} edits files, but {why}; mode acceptEdits asks"),
                    )
                    .with_grant(grant.clone(), grant)
                }
            }
        }
        self.unmatched(&subject).with_grant(grant.clone(), grant)
    }

    /// A file a redirection reads.
    fn read_part(&self, part: &FilePart, base: &Path) -> Outcome {
        let found = self.ws.places(&part.path, &part.dirs, base, false);
        let subject = match found.as_deref() {
            Ok([one]) => format!("read of {} ({})", one.lexical.display(), part.op),
            _ => format!("read of {} ({})", part.path.text(), part.op),
        };
        let outcome = (|| {
            let places = found.clone().unwrap_or_default();
            let no_guesses: [Place; 0] = [];
            if let Some(o) = self.path_rule_outcome(RuleList::Deny, &places, &no_guesses, &subject)
            {
                return o;
            }
            if part.maybe {
                let mut o = Outcome::mode(
                    Decision::Allow,
                    format!("{subject} may happen inside another program's argument; no deny rule names it"),
                );
                o.secondary = true;
                return o;
            }
            if let Err(why) = &found {
                if self.has_read_denials() {
                    return Outcome::opaque(
                        &subject,
                        format!("{why}, so a deny Read rule cannot be checked"),
                        self.mode,
                    );
                }
            }
            if let Some(o) = self.path_rule_outcome(RuleList::Ask, &places, &no_guesses, &subject) {
                return o;
            }
            match &found {
                Ok(places) => match self.reads_allowed(places) {
                    Ok(()) => Outcome::mode(
                        Decision::Allow,
                        format!("{subject}: inside the working directories"),
                    ),
                    Err(p) => self.unmatched(&format!(
                        "{subject}: {} is outside the working directories, and",
                        p.lexical.display()
                    )),
                },
                Err(why) => self.unmatched(&format!("{subject} ({why}), and")),
            }
        })();
        outcome.about(&subject)
    }

    fn write_part(&self, part: &FilePart, base: &Path) -> Outcome {
        let found = self.ws.places(&part.path, &part.dirs, base, part.removes);
        let subject = match found.as_deref() {
            Ok([one]) => format!("write to {} ({})", one.lexical.display(), part.op),
            _ => format!("write to {} ({})", part.path.text(), part.op),
        };
        self.write_part_outcome(part, found, &subject)
            .about(&subject)
    }

    fn write_part_outcome(
        &self,
        part: &FilePart,
        found: Result<Vec<Place>, &'static str>,
        subject: &str,
    ) -> Outcome {
        let subject = subject.to_owned();
        let places = found.clone().unwrap_or_default();
        let edit_rule = |r: &Rule, wide: bool| {
            matches!(r.tool(), "edit" | "write")
                && match r.matcher() {
                    Matcher::Any => true,
                    Matcher::Path(p) => {
                        if wide {
                            places.iter().any(|t| self.path_matches(p, t, true))
                        } else {
                            !places.is_empty()
                                && places.iter().all(|t| self.path_matches(p, t, false))
                        }
                    }
                    Matcher::Command(_) | Matcher::Argument { .. } => false,
                }
        };
        let wide = |r: &Rule| edit_rule(r, true);
        let narrow = |r: &Rule| edit_rule(r, false);
        if let Some(o) = self.first_match(RuleList::Deny, &wide, &subject) {
            return o;
        }
        if part.maybe {
            let mut o = Outcome::mode(
                Decision::Allow,
                format!("{subject} may happen inside another program's argument; no deny rule names it, and that program is decided on its own"),
            );
            o.secondary = true;
            return o;
        }
        if self.mode == Mode::Plan {
            return Outcome::plan(format!("{PLAN_MODE_MESSAGE} ({subject} is an edit)"));
        }
        let places = match found {
            Ok(p) => p,
            Err(why) => return Outcome::opaque(&subject, why.to_owned(), self.mode),
        };
        // A file command's writes are granted with the command.
        let grant = match places.as_slice() {
            [one] if part.by.is_none() => {
                Some(Grant::Rule(Rule::edit_path(&one.lexical.to_string_lossy())))
            }
            _ => None,
        };
        if let Some(o) = self.session_allow(&narrow, &subject) {
            return o;
        }
        if let Some(o) = self.first_match(RuleList::Ask, &wide, &subject) {
            return o.with_grant(grant.clone(), grant);
        }
        if let Some(o) = self.first_match(RuleList::Allow, &narrow, &subject) {
            return o;
        }
        if let Some(o) = places.iter().find_map(|p| self.protected_edit(p, &subject)) {
            return o.with_grant(grant.clone(), grant);
        }
        if let Some(by) = &part.by {
            let command_rule = |r: &Rule| {
                r.tool() == SHELL_TOOL
                    && match r.matcher() {
                        Matcher::Any => true,
                        Matcher::Command(p) => p.matches(by),
                        Matcher::Path(_) | Matcher::Argument { .. } => false,
                    }
            };
            if let Some(o) = self
                .session_allow(&command_rule, &subject)
                .or_else(|| self.first_match(RuleList::Allow, &command_rule, &subject))
            {
                return o;
            }
        }
        if self.mode == Mode::AcceptEdits {
            if part.removes {
                if let Some(p) = places.iter().find(|p| self.ws.holds_working_dir(p)) {
                    return Outcome::mode(
                        Decision::Ask,
                        format!(
                            "{subject}: it removes {}, a working directory itself or one above it; mode acceptEdits asks",
                            p.lexical.display()
                        ),
                    )
                    .with_grant(grant.clone(), grant);
                }
            }
            if places.iter().all(|p| self.ws.inside(p)) {
                return Outcome::mode(
                    Decision::Allow,
                    format!("{subject}: inside the working directory (mode acceptEdits)"),
                )
                .an_edit();
            }
        }
        self.unmatched(&subject).with_grant(grant.clone(), grant)
    }

    fn opaque_part(&self, part: &OpaquePart) -> Outcome {
        let subject = quoted(&crate::rule::normalise_space(&part.text));
        self.opaque_part_outcome(part, &subject).about(&subject)
    }

    fn opaque_part_outcome(&self, part: &OpaquePart, subject: &str) -> Outcome {
        let subject = subject.to_owned();
        let deny = |r: &Rule| matches_anywhere(r, &part.views);
        if let Some(o) = self.first_match(RuleList::Deny, &deny, &subject) {
            return o;
        }

        if self.mode == Mode::Plan {
            return Outcome::plan(format!(
                "{PLAN_MODE_MESSAGE} ({subject} cannot be analysed: {})",
                part.why
            ));
        }
        let denial = Grant::Exact(part.text.clone());
        Outcome::opaque(&subject, part.why.clone(), self.mode).with_grant(None, Some(denial))
    }

    /// The rules of a list, configured then (for deny) the session's.
    fn listed(&self, list: RuleList) -> Vec<&Rule> {
        let from_session: &[Rule] = if list == RuleList::Deny {
            &self.session.deny
        } else {
            &[]
        };
        self.rules.list(list).iter().chain(from_session).collect()
    }

    /// The first rule of a list (configured, then session for deny) that matches.
    fn first_match(
        &self,
        list: RuleList,
        matches: &dyn Fn(&Rule) -> bool,
        subject: &str,
    ) -> Option<Outcome> {
        let from_session = if list == RuleList::Deny {
            self.session.deny.iter()
        } else {
            [].iter()
        };
        self.rules
            .list(list)
            .iter()
            .chain(from_session)
            .find(|r| matches(r))
            .map(|r| Outcome::rule(list, r, subject))
    }

    fn session_allow(&self, matches: &dyn Fn(&Rule) -> bool, subject: &str) -> Option<Outcome> {
        self.session
            .allow
            .iter()
            .find(|r| matches(r))
            .map(|r| Outcome::rule(RuleList::Allow, r, subject))
    }

    /// Merges part outcomes into the call's verdict. In dontAsk mode nobody
    /// is asked, so what would be asked (an ask rule) is denied.
    fn finish(&self, mut outcomes: Vec<Outcome>) -> Verdict {
        if self.mode == Mode::DontAsk {
            for o in &mut outcomes {
                if o.decision == Decision::Ask {
                    o.decision = Decision::Deny;
                    o.rank = Rank::DenyMode;
                    o.origin = Origin::Mode;
                    o.reason
                        .push_str("; mode dontAsk denies what it would ask about");
                }
            }
        }
        Verdict::from_outcomes(outcomes)
    }

    /// An edit that neither a mode nor a file command's `Bash` rule allows
    /// unasked: one into a directory whose files configure what runs (`.git`
    /// hooks and config, `.claude`, `.vscode`, `.idea`), as Claude Code
    /// protects them. Only an `Edit`/`Write` allow rule for the path does.
    fn protected_edit(&self, target: &Place, subject: &str) -> Option<Outcome> {
        let dir = protected_dir(&target.lexical).or_else(|| protected_dir(&target.physical))?;
        let (decision, verdict) = if self.mode == Mode::DontAsk {
            (Decision::Deny, "denied, as nobody may be asked,")
        } else {
            (Decision::Ask, "asked")
        };
        Some(Outcome::mode(
            decision,
            format!(
                "{subject}: {dir} is a protected directory (what is in it configures what runs); {verdict} even in mode {}",
                self.mode
            ),
        ))
    }

    fn unmatched(&self, subject: &str) -> Outcome {
        let (decision, verb) = match self.mode {
            Mode::Default | Mode::AcceptEdits | Mode::Plan => (Decision::Ask, "asks about"),
            Mode::DontAsk => (Decision::Deny, "denies"),
            Mode::BypassPermissions => (Decision::Allow, "allows"),
        };
        Outcome::mode(
            decision,
            format!(
                "no rule matches {subject}; mode {} {verb} unmatched calls",
                self.mode
            ),
        )
    }
}

/// Directories whose files configure what runs, protected from edits that
/// a mode allows unasked; Claude Code's list, with its exemptions, and
/// `.dsh` (the accepted definitions of proxied tools: an agent that could
/// edit them could release a tool held for a person).
pub const PROTECTED_DIRS: &[&str] = &[".git", ".claude", ".vscode", ".idea", ".dsh"];

/// Under `.claude`, what Claude Code lets modes edit.
const PROTECTED_EXEMPT: &[&str] = &["commands", "agents", "skills"];

/// The protected directory `path` lies in, if any.
fn protected_dir(path: &Path) -> Option<&'static str> {
    let parts: Vec<&std::ffi::OsStr> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    // The last component is the file itself: a file named `.git` (a
    // worktree's pointer) is protected too.
    for (i, name) in parts.iter().enumerate() {
        let Some(dir) = PROTECTED_DIRS.iter().find(|d| *name == **d) else {
            continue;
        };
        if *dir == ".claude"
            && parts
                .get(i + 1)
                .is_some_and(|next| PROTECTED_EXEMPT.iter().any(|e| *next == *e))
        {
            continue;
        }
        return Some(dir);
    }
    None
}

/// Whether a bash deny or ask rule names a simple command: the command as
/// written from any step of looking through wrappers, its privileged form,
/// or — for a program not known to take only data — anywhere in its
/// arguments.
fn matches_command(rule: &Rule, part: &CommandPart) -> bool {
    rule.tool() == SHELL_TOOL
        && match rule.matcher() {
            Matcher::Any => true,
            Matcher::Command(p) => {
                p.matches_from_any_start(&part.written, part.name_end)
                    || part.views.iter().any(|v| p.matches(v))
                    || part
                        .arguments
                        .as_deref()
                        .is_some_and(|a| p.matches_from_any_start(a, a.len()))
            }
            Matcher::Path(_) | Matcher::Argument { .. } => false,
        }
}

/// Whether a bash rule names a command anywhere in one of `texts`.
fn matches_anywhere(rule: &Rule, texts: &[String]) -> bool {
    rule.tool() == SHELL_TOOL
        && match rule.matcher() {
            Matcher::Any => true,
            Matcher::Command(p) => texts.iter().any(|t| p.matches_from_any_start(t, t.len())),
            Matcher::Path(_) | Matcher::Argument { .. } => false,
        }
}

/// The evaluation plus what *allow always* / *reject always* would add.
#[derive(Debug, Clone)]
pub(crate) struct Verdict {
    pub evaluation: Evaluation,
    /// What the deciding outcome is about.
    pub subject: String,
    /// Rules *allow always* adds (for the parts that were asked about).
    pub grants: Vec<Rule>,
    /// Rules *reject always* adds.
    pub denials: Vec<Rule>,
    /// Each part's outcome, turned into [`PartEvaluation`]s only when
    /// asked for ([`Verdict::parts`]): most decisions need only the call's.
    outcomes: Vec<Outcome>,
}

impl Verdict {
    fn from_outcomes(outcomes: Vec<Outcome>) -> Verdict {
        let mut best: Option<&Outcome> = None;
        for o in &outcomes {
            // A part that only may run inside another program's argument
            // explains nothing when the program itself decides.
            if best.is_none_or(|b| {
                o.rank > b.rank || (o.rank == b.rank && b.secondary && !o.secondary)
            }) {
                best = Some(o);
            }
        }
        let evaluation = match best {
            Some(o) => Evaluation {
                decision: o.decision,
                reason: match (o.decision, outcomes.len()) {
                    (Decision::Allow, n) if n > 1 => {
                        format!("every part is allowed ({n} parts); first: {}", o.reason)
                    }
                    _ => o.reason.clone(),
                },
                rule: o.rule.clone(),
                origin: o.origin,
            },
            None => Evaluation {
                decision: Decision::Allow,
                reason: "nothing to decide".into(),
                rule: None,
                origin: Origin::Mode,
            },
        };
        let subject = best.map(|o| o.subject.clone()).unwrap_or_default();
        let mut grants = Vec::new();
        let mut denials = Vec::new();
        if evaluation.decision == Decision::Ask {
            for o in &outcomes {
                if o.decision == Decision::Ask {
                    if let Some(g) = o.grant.as_ref().and_then(Grant::rule) {
                        if !grants.contains(&g) {
                            grants.push(g);
                        }
                    }
                    if let Some(d) = o.denial.as_ref().and_then(Grant::rule) {
                        if !denials.contains(&d) {
                            denials.push(d);
                        }
                    }
                }
            }
        }
        Verdict {
            evaluation,
            subject,
            grants,
            denials,
            outcomes,
        }
    }

    /// Each part's verdict, in source order.
    pub(crate) fn parts(&self) -> Vec<PartEvaluation> {
        self.outcomes
            .iter()
            .map(|o| PartEvaluation {
                kind: o.kind,
                text: o.text.clone(),
                evaluation: Evaluation {
                    decision: o.decision,
                    reason: o.reason.clone(),
                    rule: o.rule.clone(),
                    origin: o.origin,
                },
            })
            .collect()
    }

    /// What the kernel must hold for an allowed call: read-only when it runs
    /// only on the analysis's word (every part allowed by the mode as a
    /// read, none by a rule or as an acceptEdits edit), and always in plan
    /// mode. `bypassPermissions` allows everything unmatched by choice.
    pub(crate) fn kernel_hold(&self, mode: Mode) -> Option<dsh_tools::KernelHold> {
        if self.evaluation.decision != Decision::Allow {
            return None;
        }
        match mode {
            Mode::Plan => Some(dsh_tools::KernelHold::ReadOnly),
            Mode::BypassPermissions => None,
            _ if runs_on_analysis_alone(&self.outcomes) => Some(dsh_tools::KernelHold::ReadOnly),
            _ => None,
        }
    }

    /// Whether every part that asks is asked by the mode alone.
    pub(crate) fn asks_only_by_mode(&self) -> bool {
        self.outcomes
            .iter()
            .all(|o| o.decision != Decision::Ask || o.origin == Origin::Mode)
    }
}

/// Whether every part is allowed and none by a rule, an approval or as an
/// acceptEdits edit: what runs then rests on the analysis alone.
fn runs_on_analysis_alone(outcomes: &[Outcome]) -> bool {
    outcomes
        .iter()
        .all(|o| o.decision == Decision::Allow && o.origin == Origin::Mode && !o.edit)
}

/// A rule *allow always* or *reject always* would add, made only when
/// the call is asked about: the exact command of a part, or a rule
/// already made.
#[derive(Debug, Clone)]
enum Grant {
    Exact(String),
    Rule(Rule),
}

impl Grant {
    fn rule(&self) -> Option<Rule> {
        Some(match self {
            Grant::Exact(text) => Rule::bash_exact(text),
            Grant::Rule(r) => r.clone(),
        })
    }
}

/// How strongly an outcome says no: the deciding part of a compound command
/// is the first with the highest rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Allow,
    Ask,
    /// Denied by the mode (dontAsk).
    DenyMode,
    /// Vetoed by plan mode.
    Plan,
    /// Denied by a rule.
    DenyRule,
}

#[derive(Debug, Clone)]
struct Outcome {
    rank: Rank,
    decision: Decision,
    origin: Origin,
    rule: Option<String>,
    reason: String,
    grant: Option<Grant>,
    denial: Option<Grant>,
    /// What the outcome is about (`"rm -rf y"`, `write to /x (>)`).
    subject: String,
    /// About something that only may run inside another program's argument.
    secondary: bool,
    /// An edit the mode allows (acceptEdits): not a read the kernel could
    /// hold read-only.
    edit: bool,
    kind: PartKind,
    text: String,
}

impl Outcome {
    fn rule(list: RuleList, rule: &Rule, subject: &str) -> Outcome {
        let (decision, rank, verb) = match list {
            RuleList::Allow => (Decision::Allow, Rank::Allow, "allowed"),
            RuleList::Ask => (Decision::Ask, Rank::Ask, "needs approval"),
            RuleList::Deny => (Decision::Deny, Rank::DenyRule, "denied"),
        };
        Outcome {
            rank,
            decision,
            origin: Origin::Rule,
            rule: Some(rule.as_str().to_owned()),
            reason: format!("{subject} {verb} by rule {list} {rule}"),
            grant: None,
            denial: None,
            subject: subject.to_owned(),
            secondary: false,
            edit: false,
            kind: PartKind::Call,
            text: String::new(),
        }
    }

    fn mode(decision: Decision, reason: String) -> Outcome {
        Outcome {
            rank: match decision {
                Decision::Allow => Rank::Allow,
                Decision::Ask => Rank::Ask,
                Decision::Deny => Rank::DenyMode,
            },
            decision,
            origin: Origin::Mode,
            rule: None,
            reason,
            grant: None,
            denial: None,
            subject: String::new(),
            secondary: false,
            edit: false,
            kind: PartKind::Call,
            text: String::new(),
        }
    }

    fn plan(reason: String) -> Outcome {
        Outcome {
            rank: Rank::Plan,
            decision: Decision::Deny,
            origin: Origin::PlanMode,
            rule: None,
            reason,
            grant: None,
            denial: None,
            subject: String::new(),
            secondary: false,
            edit: false,
            kind: PartKind::Call,
            text: String::new(),
        }
    }

    /// Something we cannot analyse: ask (deny in dontAsk), never allow.
    fn opaque(subject: &str, why: String, mode: Mode) -> Outcome {
        let (decision, rank) = if mode == Mode::DontAsk {
            (Decision::Deny, Rank::DenyMode)
        } else {
            (Decision::Ask, Rank::Ask)
        };
        let tail = if mode == Mode::DontAsk {
            "; mode dontAsk denies what it cannot check"
        } else {
            ""
        };
        Outcome {
            rank,
            decision,
            origin: Origin::Unanalysable,
            rule: None,
            reason: format!("cannot analyse {subject}: {why}{tail}"),
            grant: None,
            denial: None,
            subject: String::new(),
            secondary: false,
            edit: false,
            kind: PartKind::Call,
            text: String::new(),
        }
    }

    fn an_edit(mut self) -> Outcome {
        self.edit = true;
        self
    }

    fn about(mut self, subject: &str) -> Outcome {
        if self.subject.is_empty() {
            self.subject = subject.to_owned();
        }
        self
    }

    fn part(mut self, kind: PartKind, text: &str) -> Outcome {
        self.kind = kind;
        self.text = text.to_owned();
        self
    }

    fn with_grant(mut self, grant: Option<Grant>, denial: Option<Grant>) -> Outcome {
        self.grant = grant;
        self.denial = denial;
        self
    }
}

/// A command's text in quotes for a reason; a long one is cut (a reason
/// is read by a person and a model, and repeats in every part's verdict).
fn quoted(text: &str) -> String {
    const SHOWN: usize = 200;
    if text.len() <= SHOWN + 40 {
        return format!("\"{text}\"");
    }
    let mut cut = SHOWN;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("\"{}…\" ({} bytes)", &text[..cut], text.len())
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<PermissionPolicy>();
    send_sync::<PathPattern>();
};
