//! The settings file: a compatible subset of the Claude Code settings file.
//!
//! ```json
//! {
//!   "permissions": {
//!     "defaultMode": "default",
//!     "allow": ["Bash(git status)", "Bash(npm run test:*)"],
//!     "ask":   ["Bash(git push:*)"],
//!     "deny":  ["Bash(rm -rf:*)"]
//!   },
//!   "bash": {"defaultTimeoutMs": 120000, "maxTimeoutMs": 600000, "maxOutputBytes": 64000},
//!   "mcp": {"callTimeoutMs": 120000, "readOnlyTools": ["mcp__docs__*"]}
//! }
//! ```
//!
//! Every key is checked: an unknown key, a malformed rule or a value of the
//! wrong type is an error naming where it is. `hooks` and `sandbox` are
//! parsed (so a mistake in them is reported precisely) but this build does
//! not run hooks or confine processes, so a file that configures either is
//! refused rather than silently half-honoured. An empty `"hooks": {}` is accepted.

use crate::policy::{Mode, PermissionPolicy};
use crate::rule::{PermissionRules, Rule};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A parsed settings file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// `$schema`: an editor hint, ignored.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Permission rules and the default mode.
    #[serde(default)]
    pub permissions: PermissionSettings,
    /// Hooks (parsed; not supported by this build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<HookSettings>,
    /// Process confinement (parsed; not supported by this build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSettings>,
    /// Limits for the bash tool.
    #[serde(default)]
    pub bash: BashSettings,
    /// The MCP proxy's upstream tools (our extension).
    #[serde(default)]
    pub mcp: McpSettings,
}

/// `mcp`: how `dsh mcp` treats the tools of the servers it proxies.
///
/// ```json
/// {"mcp": {"callTimeoutMs": 60000, "readOnlyTools": ["mcp__docs__*", "mcp__github__get_issue"]}}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpSettings {
    /// How long one upstream `tools/call` may take, in milliseconds
    /// (default 120 000); past it the call is cancelled upstream and fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_ms: Option<u64>,
    /// Upstream tools trusted as read-only (plan mode lets them run, and no
    /// rule is needed for them), named as rules name them: `mcp__NAME__tool`,
    /// `mcp__NAME` or `mcp__NAME__*`, or the exposed name. An upstream's own
    /// `readOnlyHint` is never trusted: it is a claim by the server.
    #[serde(default)]
    pub read_only_tools: Vec<String>,
}

/// `permissions`: the default mode and the three rule lists.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PermissionSettings {
    /// The mode when none is given on the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<Mode>,
    /// Allow rules.
    #[serde(default)]
    pub allow: Vec<Rule>,
    /// Ask rules.
    #[serde(default)]
    pub ask: Vec<Rule>,
    /// Deny rules.
    #[serde(default)]
    pub deny: Vec<Rule>,
}

impl PermissionSettings {
    /// The rule lists.
    pub fn rules(&self) -> PermissionRules {
        PermissionRules {
            allow: self.allow.clone(),
            ask: self.ask.clone(),
            deny: self.deny.clone(),
        }
    }
}

/// `bash`: limits for the bash tool (wired to the executor by the host).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BashSettings {
    /// Timeout of a call that gives none, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_timeout_ms: Option<u64>,
    /// The largest timeout a call may ask for, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_timeout_ms: Option<u64>,
    /// Bytes of output kept per stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<u64>,
}

/// The hook events of a settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    /// Before a tool call.
    PreToolUse,
    /// After a tool call.
    PostToolUse,
    /// A notification to the user.
    Notification,
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// The agent stopped.
    Stop,
    /// A subagent stopped.
    SubagentStop,
    /// Before compaction.
    PreCompact,
    /// A session started.
    SessionStart,
    /// A session ended.
    SessionEnd,
}

/// `hooks`: event → matchers.
pub type HookSettings = BTreeMap<HookEvent, Vec<HookMatcher>>;

/// Which tools a group of hooks applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookMatcher {
    /// `*` or empty for all tools, `a|b` for a list, otherwise a regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The hooks to run.
    pub hooks: Vec<HookCommand>,
}

/// One hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum HookCommand {
    /// Runs a shell command.
    Command {
        /// The command line.
        command: String,
        /// Seconds before the hook is abandoned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
}

/// `sandbox`: how bash commands are confined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxSettings {
    /// The confinement.
    pub mode: SandboxMode,
    /// Extra writable directories (workspace-write).
    #[serde(default)]
    pub writable_roots: Vec<String>,
    /// Whether the network is reachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

/// Sandbox modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing writable.
    ReadOnly,
    /// The workspace (and the writable roots) writable.
    WorkspaceWrite,
    /// No confinement.
    DangerFullAccess,
}

/// What kind of settings error.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsErrorKind {
    /// The file could not be read.
    Io,
    /// Not JSON, an unknown key, a malformed rule or a wrong type.
    Invalid,
    /// A section this build does not support (`hooks`, `sandbox`).
    Unsupported,
}

/// A settings file that cannot be used; says which key and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    kind: SettingsErrorKind,
    file: Option<PathBuf>,
    key: Option<String>,
    message: String,
}

impl SettingsError {
    fn new(kind: SettingsErrorKind, key: Option<String>, message: String) -> Self {
        SettingsError {
            kind,
            file: None,
            key,
            message,
        }
    }

    /// The kind.
    pub fn kind(&self) -> SettingsErrorKind {
        self.kind
    }

    /// Where in the file (`permissions.allow[2]`), when known.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The file, when loaded from one.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        match &self.key {
            Some(key) => write!(f, "settings key {key}: {}", self.message),
            None => write!(f, "settings: {}", self.message),
        }
    }
}

impl std::error::Error for SettingsError {}

impl Settings {
    /// Reads and checks a settings file.
    ///
    /// # Errors
    /// The file cannot be read, or as [`Settings::from_str`], with the file named.
    pub fn load(path: impl AsRef<Path>) -> Result<Settings, SettingsError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| SettingsError {
            kind: SettingsErrorKind::Io,
            file: Some(path.to_owned()),
            key: None,
            message: format!("cannot read the settings file: {e}"),
        })?;
        text.parse::<Settings>().map_err(|mut e| {
            e.file = Some(path.to_owned());
            e
        })
    }

    /// The default mode (`default` when the file gives none).
    pub fn mode(&self) -> Mode {
        self.permissions.default_mode.unwrap_or_default()
    }

    /// The rule lists.
    pub fn rules(&self) -> PermissionRules {
        self.permissions.rules()
    }

    /// A policy from these settings for a working directory; `mode` overrides
    /// the file's `defaultMode` (e.g. `--mode`).
    pub fn policy(&self, cwd: impl Into<PathBuf>, mode: Option<Mode>) -> PermissionPolicy {
        PermissionPolicy::new(self.rules(), mode.unwrap_or(self.mode()), cwd)
    }

    fn check(&self) -> Result<(), SettingsError> {
        if self.hooks.as_ref().is_some_and(|h| !h.is_empty()) {
            return Err(SettingsError::new(
                SettingsErrorKind::Unsupported,
                Some("hooks".into()),
                "hooks are not supported by this build yet; remove the \"hooks\" key (it would otherwise be ignored)".into(),
            ));
        }
        if self.sandbox.is_some() {
            return Err(SettingsError::new(
                SettingsErrorKind::Unsupported,
                Some("sandbox".into()),
                "the sandbox is not supported by this build yet; remove the \"sandbox\" key (commands would otherwise run unconfined)".into(),
            ));
        }
        if self.mcp.call_timeout_ms == Some(0) {
            return Err(SettingsError::new(
                SettingsErrorKind::Invalid,
                Some("mcp.callTimeoutMs".into()),
                "must be greater than 0".into(),
            ));
        }
        for (i, name) in self.mcp.read_only_tools.iter().enumerate() {
            if let Err(e) = Rule::parse(name) {
                return Err(SettingsError::new(
                    SettingsErrorKind::Invalid,
                    Some(format!("mcp.readOnlyTools[{i}]")),
                    format!("not a tool name: {}", e.problem()),
                ));
            }
            if name.contains('(') {
                return Err(SettingsError::new(
                    SettingsErrorKind::Invalid,
                    Some(format!("mcp.readOnlyTools[{i}]")),
                    format!("{name:?}: a tool name, without a specifier"),
                ));
            }
        }
        let b = &self.bash;
        for (key, value) in [
            ("bash.defaultTimeoutMs", b.default_timeout_ms),
            ("bash.maxTimeoutMs", b.max_timeout_ms),
            ("bash.maxOutputBytes", b.max_output_bytes),
        ] {
            if value == Some(0) {
                return Err(SettingsError::new(
                    SettingsErrorKind::Invalid,
                    Some(key.into()),
                    "must be greater than 0".into(),
                ));
            }
        }
        if let (Some(default), Some(max)) = (b.default_timeout_ms, b.max_timeout_ms) {
            if default > max {
                return Err(SettingsError::new(
                    SettingsErrorKind::Invalid,
                    Some("bash.defaultTimeoutMs".into()),
                    format!("{default} is larger than bash.maxTimeoutMs ({max})"),
                ));
            }
        }
        Ok(())
    }
}

impl FromStr for Settings {
    type Err = SettingsError;

    /// Parses and checks settings JSON.
    ///
    /// # Errors
    /// Not JSON, an unknown key, a malformed rule, a wrong type, an
    /// inconsistent `bash` section, or a `hooks`/`sandbox` section.
    fn from_str(text: &str) -> Result<Settings, SettingsError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            SettingsError::new(
                SettingsErrorKind::Invalid,
                None,
                format!("not valid JSON: {e}"),
            )
        })?;
        check_shape(&value)?;
        let settings: Settings = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let key = (path != ".").then_some(path);
            SettingsError::new(SettingsErrorKind::Invalid, key, e.into_inner().to_string())
        })?;
        settings.check()?;
        Ok(settings)
    }
}

/// Serde's derived structs also accept a JSON array (fields by position);
/// a settings file must use objects, so check where objects belong.
fn check_shape(root: &serde_json::Value) -> Result<(), SettingsError> {
    use serde_json::Value;
    fn object(value: &Value, key: &str) -> Result<(), SettingsError> {
        if value.is_object() {
            Ok(())
        } else {
            let key = (!key.is_empty()).then(|| key.to_owned());
            Err(SettingsError::new(
                SettingsErrorKind::Invalid,
                key,
                "must be a JSON object".into(),
            ))
        }
    }
    object(root, "")?;
    for key in ["permissions", "bash", "sandbox", "hooks", "mcp"] {
        if let Some(v) = root.get(key) {
            object(v, key)?;
        }
    }
    if let Some(Value::Object(events)) = root.get("hooks") {
        for (event, matchers) in events {
            let Value::Array(matchers) = matchers else {
                continue;
            };
            for (i, m) in matchers.iter().enumerate() {
                object(m, &format!("hooks.{event}[{i}]"))?;
                if let Some(Value::Array(hooks)) = m.get("hooks") {
                    for (j, h) in hooks.iter().enumerate() {
                        object(h, &format!("hooks.{event}[{i}].hooks[{j}]"))?;
                    }
                }
            }
        }
    }
    Ok(())
}
