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
//! A real Claude Code file loads as it is. Every key is checked: a key in
//! no schema (neither Claude Code's nor ours), a malformed rule or a value
//! of the wrong type is an error naming where it is. Claude Code's keys that
//! do not govern tools (`model`, `statusLine`, `includeCoAuthoredBy`, …,
//! [`CLAUDE_CODE_IGNORED_KEYS`]) are accepted and listed in
//! [`Settings::ignored`] for the host to show once. Of the keys that govern
//! tools, `env` sets variables for every command, `permissions.additionalDirectories`
//! extends where `acceptEdits` allows edits, `disableBypassPermissionsMode:
//! "disable"` refuses that mode ([`Settings::effective_mode`]),
//! `hooks` (command hooks; another handler type, `async` or `once` is
//! refused, naming it) and `disableAllHooks` configure the hooks
//! middleware. `sandbox` takes our keys (`mode`, `writableRoots`,
//! `network`) and Claude Code's: `"enabled": true` is `workspace-write`
//! with the network off ([`Settings::sandbox_settings`]); its keys that
//! would grant what Landlock cannot express (allowed domains, local
//! binding, excluded commands, …) are not applied — the sandbox stays
//! stricter — and are listed with the ignored keys. `allowedMcpServers`
//! and `deniedMcpServers` are refused until the proxy honours them.

use crate::policy::{Mode, PermissionPolicy};
use crate::rule::{PermissionRules, Rule, RuleList};
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
    /// Hooks, by event (Claude Code's format; run by the hooks middleware).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<HookSettings>,
    /// Process confinement, our keys (`mode`, `writableRoots`, `network`).
    /// Read from the file's `sandbox` apart from serde: it may hold Claude
    /// Code's keys. See [`Settings::sandbox_settings`] for the effective one.
    #[serde(skip)]
    pub sandbox: Option<SandboxSettings>,
    /// Claude Code's `sandbox.enabled`, when the file has it.
    #[serde(skip)]
    pub sandbox_enabled: Option<bool>,
    /// Claude Code's `sandbox.allowUnsandboxedCommands`: whether a call may
    /// ask to run outside the sandbox (default: yes).
    #[serde(skip)]
    pub sandbox_escalation: Option<bool>,
    /// Claude Code's `sandbox.filesystem.allowWrite`: more writable roots.
    #[serde(skip)]
    pub sandbox_allow_write: Vec<String>,
    /// Claude Code's `sandbox.network` domain lists (and our
    /// `askUnknownDomains`): the network of a confined command goes
    /// through a filtering proxy that applies them.
    #[serde(skip)]
    pub sandbox_network: Option<NetworkDomains>,
    /// Our `sandbox.confineReadOnly`: whether a bash call allowed only
    /// because the analysis judged it read-only runs confined read-only
    /// with the network off (default: yes).
    #[serde(skip)]
    pub sandbox_confine_read_only: Option<bool>,
    /// Variables set for every command the tools run (Claude Code's `env`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// OpenTelemetry export of tool calls (our extension; read by the host,
    /// which starts the exporter).
    #[serde(default, skip_serializing_if = "TelemetrySettings::is_empty")]
    pub telemetry: TelemetrySettings,
    /// Claude Code's `disableAllHooks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_all_hooks: Option<bool>,
    /// Claude Code keys that do not govern tools (`model`, `statusLine`, …),
    /// accepted and ignored; the host lists them once.
    #[serde(skip)]
    pub ignored: Vec<String>,
    /// Limits for the bash tool.
    #[serde(default)]
    pub bash: BashSettings,
    /// The MCP proxy's upstream tools (our extension).
    #[serde(default)]
    pub mcp: McpSettings,
    /// The audit log (our extension).
    #[serde(default)]
    pub audit: AuditSettings,
}

/// `audit`: the log of every tool call (our extension; read by the host,
/// which writes the log).
///
/// ```json
/// {"audit": {"enabled": true, "path": "~/audit", "maxFileBytes": 10485760, "maxFiles": 5,
///            "failClosed": false, "maskArguments": ["apiKey"], "maskPatterns": ["CREDENTIAL"]}}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuditSettings {
    /// Whether calls are logged (the default is the front-end's: on for
    /// `dsh mcp` and `dsh acp`, off for `dsh call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The log's directory: absolute or `~/…` (default
    /// `$XDG_STATE_HOME/dsh/audit`, else `~/.local/state/dsh/audit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Size at which the current file is rotated, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_bytes: Option<u64>,
    /// How many rotated files are kept besides the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u32>,
    /// Calls fail (`AUDIT_UNAVAILABLE`) when their record cannot be
    /// written, instead of going on with the failure reported on stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_closed: Option<bool>,
    /// Argument names (any case, at any depth, `env` entries included)
    /// whose values are masked, besides those the patterns match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mask_arguments: Vec<String>,
    /// Words that mark a name as secret when it contains one (any case),
    /// besides `KEY`, `SECRET`, `TOKEN` and `PASSWORD`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mask_patterns: Vec<String>,
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
    /// What proxied tools' arguments mean, by rule name: `{"mcp__dc__start_process":
    /// {"command": "shell", "timeout_ms": "data"}}`. Replaces a built-in
    /// profile's meanings for that tool. As strong as an allow rule: an
    /// argument said to be `data` is never judged.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arguments: BTreeMap<String, BTreeMap<String, dsh_tools::ArgumentMeaning>>,
    /// A built-in profile for a server, by server name (`"dc":
    /// "desktop-commander"`), or `"none"` for none; a server not named
    /// gets the profile its tool list matches.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub profiles: BTreeMap<String, String>,
    /// Where proxied tools' definitions are pinned, relative to the
    /// working directory (default `.dsh/mcp-pins.json`); `false` turns
    /// pinning off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pins_file: Option<PinsFile>,
}

/// `mcp.pinsFile`: a path, or `false` for no pinning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PinsFile {
    /// The file, relative to the working directory.
    Path(PathBuf),
    /// `false`: nothing is pinned (`true` is the default file).
    Enabled(bool),
}

/// `telemetry`: OpenTelemetry export of tool calls (our extension). Off
/// unless an endpoint is set, here or by the standard
/// `OTEL_EXPORTER_OTLP_*` variables, which win over these keys.
///
/// ```json
/// {"telemetry": {"otlpEndpoint": "http://localhost:4318", "otlpHeaders": {"x-team": "dev"},
///                "serviceName": "dsh", "logCommands": false}}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TelemetrySettings {
    /// The OTLP/HTTP base URL (`/v1/traces` and `/v1/metrics` are added),
    /// as `OTEL_EXPORTER_OTLP_ENDPOINT`; setting it turns the export on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otlp_endpoint: Option<String>,
    /// Headers sent with every export (an API key, a tenant), as
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub otlp_headers: BTreeMap<String, String>,
    /// The `service.name` of what is exported (default `dsh`), as
    /// `OTEL_SERVICE_NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// Whether a call's command text is exported (default: no, as Codex
    /// does not log prompts unless told to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_commands: Option<bool>,
}

impl TelemetrySettings {
    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self == &TelemetrySettings::default()
    }
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
    /// More directories where edits count as inside the working directory
    /// (`acceptEdits`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_directories: Vec<String>,
    /// `"disable"`: the `bypassPermissions` mode is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_bypass_permissions_mode: Option<String>,
    /// Claude Code's switch for its auto mode, which dsh does not have:
    /// accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_auto_mode: Option<String>,
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

/// The hook events of a settings file: Claude Code's names. The four of a
/// tool call (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`,
/// `PermissionRequest`) run; the others are accepted, so a real file loads,
/// and have nothing to fire on in a tool layer ([`HookEvent::applies`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    PermissionRequest,
    PostToolBatch,
    PermissionDenied,
    Notification,
    UserPromptSubmit,
    UserPromptExpansion,
    Stop,
    StopFailure,
    SubagentStart,
    SubagentStop,
    PreCompact,
    PostCompact,
    Elicitation,
    ElicitationResult,
    TeammateIdle,
    TaskCreated,
    TaskCompleted,
    Setup,
    InstructionsLoaded,
    CwdChanged,
    FileChanged,
    ConfigChange,
    WorktreeCreate,
    WorktreeRemove,
    SessionStart,
    SessionEnd,
    PreModelSwitch,
    PostModelSwitch,
    MessageDisplay,
    DirectoryAdded,
}

impl HookEvent {
    /// Whether a tool layer has this event: the four of a tool call.
    pub fn applies(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PermissionRequest
        )
    }
}

/// `hooks`: event → matchers.
pub type HookSettings = BTreeMap<HookEvent, Vec<HookMatcher>>;

/// Which tools a group of hooks applies to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookMatcher {
    /// Empty, absent or `*` for all tools; letters, digits, `_`, `-`, spaces,
    /// `,` and `|` only for a list of exact names; otherwise a regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The hooks to run.
    pub hooks: Vec<HookCommand>,
}

/// One hook: a command (`"type": "command"`, the only type this build runs;
/// the file is refused for any other, naming it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HookCommand {
    /// `command`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The command line, run by `sh -c` in the working directory.
    pub command: String,
    /// Seconds before the hook is killed (default 600, Claude Code's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// Claude Code's spinner text while the hook runs; ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Claude Code's run-once-per-session flag for skills; refused when true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub once: Option<bool>,
    /// Claude Code's background hooks; refused when true.
    #[serde(rename = "async", default, skip_serializing_if = "Option::is_none")]
    pub run_async: Option<bool>,
    /// Our extension: a timeout, a crash or output that is not JSON blocks
    /// the call instead of letting it proceed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_closed: Option<bool>,
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

/// `sandbox.network` as Claude Code writes it, the part dsh applies:
///
/// ```json
/// {"sandbox": {"enabled": true, "network": {
///    "allowedDomains": ["github.com", "*.npmjs.org"], "deniedDomains": ["evil.github.com"],
///    "askUnknownDomains": true}}}
/// ```
///
/// `httpProxyPort` and `socksProxyPort` name a proxy of the user's own,
/// which commands then use instead of ours.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkDomains {
    /// Domains reachable (`github.com`, `*.npmjs.org`, `host:8443`).
    pub allowed_domains: Vec<String>,
    /// Domains never reachable, whatever `allowed_domains` says.
    pub denied_domains: Vec<String>,
    /// Our extension: a domain in neither list is asked about instead of
    /// refused (unset: refused).
    pub ask_unknown_domains: Option<bool>,
    /// A proxy of the user's own for HTTP, on this loopback port.
    pub http_proxy_port: Option<u16>,
    /// A proxy of the user's own for SOCKS5, on this loopback port.
    pub socks_proxy_port: Option<u16>,
    /// Claude Code's `allowLocalBinding`: commands may listen on loopback
    /// ports and connect to them. Held only where confined commands get a
    /// network namespace (nothing outside it reaches their servers).
    pub allow_local_binding: Option<bool>,
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
        let mut settings = text.parse::<Settings>().map_err(|mut e| {
            e.file = Some(path.to_owned());
            e
        })?;
        let project = settings_project(path);
        let p = &mut settings.permissions;
        for list in [&mut p.allow, &mut p.ask, &mut p.deny] {
            for rule in list.iter_mut() {
                *rule = rule.clone().with_root(&project);
            }
        }
        Ok(settings)
    }

    /// The sandbox the settings ask for: ours as given, or Claude Code's
    /// `"enabled": true` read as `workspace-write` with the network off
    /// (Claude Code's sandbox writes to the working directory only and
    /// reaches no domain not listed). `"enabled": false` turns it off.
    pub fn sandbox_settings(&self) -> Option<SandboxSettings> {
        if self.sandbox_enabled == Some(false) {
            return None;
        }
        let mut s = match (&self.sandbox, self.sandbox_enabled) {
            (Some(ours), _) => ours.clone(),
            (None, Some(true)) => SandboxSettings {
                mode: SandboxMode::WorkspaceWrite,
                writable_roots: Vec::new(),
                network: Some(false),
            },
            _ => return None,
        };
        s.writable_roots
            .extend(self.sandbox_allow_write.iter().cloned());
        Some(s)
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
            .with_additional_directories(&self.permissions.additional_directories)
    }

    /// The mode to run in: `mode` (from the command line) or the file's;
    /// refused when it is `bypassPermissions` and the file says
    /// `"disableBypassPermissionsMode": "disable"`.
    ///
    /// # Errors
    /// The mode is disabled by the settings.
    pub fn effective_mode(&self, mode: Option<Mode>) -> Result<Mode, SettingsError> {
        let mode = mode.unwrap_or(self.mode());
        if mode == Mode::BypassPermissions
            && self.permissions.disable_bypass_permissions_mode.as_deref() == Some("disable")
        {
            return Err(invalid(
                "permissions.disableBypassPermissionsMode",
                "the bypassPermissions mode is disabled by the settings",
            ));
        }
        Ok(mode)
    }

    fn check(&self) -> Result<(), SettingsError> {
        for (event, matchers) in self.hooks.iter().flatten() {
            for (i, m) in matchers.iter().enumerate() {
                for (j, h) in m.hooks.iter().enumerate() {
                    let at = |key: &str| format!("hooks.{event:?}[{i}].hooks[{j}].{key}");
                    if h.run_async == Some(true) {
                        return Err(SettingsError::new(
                            SettingsErrorKind::Unsupported,
                            Some(at("async")),
                            "background (async) hooks are not supported; remove \"async\" to run the hook before the call goes on".into(),
                        ));
                    }
                    if h.once == Some(true) {
                        return Err(SettingsError::new(
                            SettingsErrorKind::Unsupported,
                            Some(at("once")),
                            "\"once\" hooks (for skills) are not supported".into(),
                        ));
                    }
                    if h.timeout.is_some_and(|t| !(t > 0.0 && t <= 86_400.0)) {
                        return Err(invalid(
                            at("timeout"),
                            "must be a number of seconds above 0 and at most 86400",
                        ));
                    }
                    if h.command.trim().is_empty() {
                        return Err(invalid(at("command"), "must not be empty"));
                    }
                }
            }
        }
        if self.env.keys().any(|k| k.eq_ignore_ascii_case("CDPATH")) {
            return Err(invalid(
                "env.CDPATH",
                "CDPATH sends `cd name` to directories the permission policy cannot follow; remove it",
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
        for tool in self.mcp.arguments.keys() {
            let well_formed = tool
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
                .is_some_and(|(server, name)| {
                    !server.is_empty() && !name.is_empty() && !name.contains('*')
                });
            if !well_formed {
                return Err(invalid(
                    format!("mcp.arguments.{tool}"),
                    format!("{tool:?}: name one tool as rules do, mcp__SERVER__TOOL"),
                ));
            }
        }
        if let Some(endpoint) = &self.telemetry.otlp_endpoint {
            if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
                return Err(invalid(
                    "telemetry.otlpEndpoint",
                    format!("{endpoint:?}: must be an http:// or https:// URL"),
                ));
            }
        }
        if let Some(name) = self.telemetry.otlp_headers.keys().find(|k| {
            k.is_empty()
                || !k
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        }) {
            return Err(invalid(
                format!("telemetry.otlpHeaders.{name}"),
                "not a valid header name",
            ));
        }
        let a = &self.audit;
        if a.max_file_bytes.is_some_and(|b| b < 1024) {
            return Err(invalid("audit.maxFileBytes", "must be at least 1024"));
        }
        if let Some(path) = &a.path {
            if !(Path::new(path).is_absolute() || path.starts_with("~/")) {
                return Err(invalid(
                    "audit.path",
                    format!("{path:?}: must be an absolute path or start with ~/"),
                ));
            }
        }
        for (key, names) in [
            ("audit.maskArguments", &a.mask_arguments),
            ("audit.maskPatterns", &a.mask_patterns),
        ] {
            if let Some(i) = names.iter().position(|n| n.trim().is_empty()) {
                return Err(invalid(format!("{key}[{i}]"), "must not be empty"));
            }
        }
        if let Some(value) = &self.permissions.disable_bypass_permissions_mode {
            if value != "disable" {
                return Err(invalid(
                    "permissions.disableBypassPermissionsMode",
                    format!("{value:?}: the only value is \"disable\""),
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

/// Top-level keys of Claude Code's settings schema that do not govern tools:
/// accepted and ignored (and listed), so a real file loads as it is.
pub const CLAUDE_CODE_IGNORED_KEYS: &[&str] = &[
    "advisorModel",
    "agent",
    "agentPushNotifEnabled",
    "allowAllClaudeAiMcps",
    "allowManagedHooksOnly",
    "allowManagedMcpServersOnly",
    "allowManagedPermissionRulesOnly",
    "allowedChannelPlugins",
    "allowedHttpHookUrls",
    "alwaysThinkingEnabled",
    "apiKeyHelper",
    "askUserQuestionTimeout",
    "attribution",
    "autoCompactEnabled",
    "autoConnectIde",
    "autoInstallIdeExtension",
    "autoMemoryDirectory",
    "autoMemoryEnabled",
    "autoMode",
    "autoScrollEnabled",
    "autoUpdatesChannel",
    "availableModels",
    "awaySummaryEnabled",
    "awsAuthRefresh",
    "awsCredentialExport",
    "axScreenReader",
    "blockedMarketplaces",
    "browserExternalPageTools",
    "channelsEnabled",
    "claudeMd",
    "claudeMdExcludes",
    "cleanupPeriodDays",
    "companyAnnouncements",
    "defaultShell",
    "diffTool",
    "disableAgentView",
    "disableArtifact",
    "disableAutoMode",
    "disableBrowserExternalNavigation",
    "disableBundledSkills",
    "disableClaudeAiConnectors",
    "disableDeepLinkRegistration",
    "disableMobileSimulatorTools",
    "disableRemoteControl",
    "disableSideloadFlags",
    "disableSkillShellExecution",
    "disableWorkflows",
    "disabledMcpjsonServers",
    "editorMode",
    "effortLevel",
    "emojiCompletionEnabled",
    "enableAllProjectMcpServers",
    "enableArtifact",
    "enabledMcpjsonServers",
    "enabledPlugins",
    "enforceAvailableModels",
    "externalEditorContext",
    "extraKnownMarketplaces",
    "fallbackModel",
    "fastMode",
    "fastModePerSessionOptIn",
    "feedbackSurveyRate",
    "fileCheckpointingEnabled",
    "fileSuggestion",
    "footerLinksRegexes",
    "forceLoginGatewayUrl",
    "forceLoginMethod",
    "forceLoginOrgUUID",
    "forceRemoteSettingsRefresh",
    "gcpAuthRefresh",
    "httpHookAllowedEnvVars",
    "includeCoAuthoredBy",
    "includeGitInstructions",
    "inputNeededNotifEnabled",
    "language",
    "managedMcpServers",
    "minimumVersion",
    "model",
    "modelOverrides",
    "otelHeadersHelper",
    "outputStyle",
    "parentSettingsBehavior",
    "permissionExplainerEnabled",
    "plansDirectory",
    "pluginConfigs",
    "pluginSuggestionMarketplaces",
    "pluginTrustMessage",
    "policyHelper",
    "prUrlTemplate",
    "preferredNotifChannel",
    "prefersReducedMotion",
    "processWrapper",
    "remoteControlAtStartup",
    "requireCoworkFullVmSandbox",
    "requiredMaximumVersion",
    "requiredMinimumVersion",
    "respectGitignore",
    "respondToBashCommands",
    "showClearContextOnPlanAccept",
    "showThinkingSummaries",
    "showTurnDuration",
    "skillListingBudgetFraction",
    "skillListingMaxDescChars",
    "skillOverrides",
    "skipDangerousModePermissionPrompt",
    "skipWebFetchPreflight",
    "skippedMarketplaces",
    "skippedPlugins",
    "spinnerTipsEnabled",
    "spinnerTipsOverride",
    "spinnerVerbs",
    "sshConfigs",
    "sshHostAllowlist",
    "statusLine",
    "strictKnownMarketplaces",
    "strictPluginOnlyCustomization",
    "subagentStatusLine",
    "syntaxHighlightingDisabled",
    "teammateDefaultModel",
    "teammateMode",
    "terminalProgressBarEnabled",
    "theme",
    "tui",
    "useAutoModeDuringPlan",
    "verbose",
    "viewMode",
    "vimInsertModeRemaps",
    "voice",
    "voiceEnabled",
    "wheelScrollAccelerationEnabled",
    "workflowKeywordTriggerEnabled",
    "workflowSizeGuideline",
    "worktree",
    "wslInheritsWindowsSettings",
];

/// Claude Code keys that govern which MCP servers run, which the proxy does
/// not honour yet: refused, since ignoring them would front a server they ban.
const CLAUDE_CODE_REFUSED_KEYS: &[&str] = &["allowedMcpServers", "deniedMcpServers"];

/// Keys of Claude Code's `sandbox` section.
const CLAUDE_CODE_SANDBOX_KEYS: &[&str] = &[
    "allowAppleEvents",
    "allowUnsandboxedCommands",
    "autoAllowBashIfSandboxed",
    "bwrapPath",
    "credentials",
    "enableWeakerNestedSandbox",
    "enableWeakerNetworkIsolation",
    "enabled",
    "enabledPlatforms",
    "excludedCommands",
    "failIfUnavailable",
    "filesystem",
    "ignoreViolations",
    "network",
    "ripgrep",
    "socatPath",
];

/// Our own keys of the `sandbox` section.
const OUR_SANDBOX_KEYS: &[&str] = &["mode", "writableRoots", "network", "confineReadOnly"];

fn invalid(key: impl Into<String>, message: impl Into<String>) -> SettingsError {
    SettingsError::new(SettingsErrorKind::Invalid, Some(key.into()), message.into())
}

/// Claude Code's sandbox keys that would grant more than Landlock can
/// express (domains, local binding, commands run outside): not applied, so
/// the sandbox stays stricter than asked, and listed for the user.
const SANDBOX_KEYS_NOT_APPLIED: &[&str] = &[
    "autoAllowBashIfSandboxed",
    "excludedCommands",
    "ignoreViolations",
    "enableWeakerNestedSandbox",
    "enableWeakerNetworkIsolation",
    "allowAppleEvents",
    "credentials",
];

/// What `sandbox` holds: our keys, Claude Code's `enabled`, its
/// `filesystem.allowWrite` and its `network` domain lists.
type SandboxRead = (
    Option<SandboxSettings>,
    Option<bool>,
    Vec<String>,
    Option<NetworkDomains>,
);

/// Reads `sandbox`: Claude Code's keys and ours, each checked; the Claude
/// Code keys it does not apply are added to `not_applied`.
fn read_sandbox(
    section: serde_json::Value,
    not_applied: &mut Vec<String>,
) -> Result<SandboxRead, SettingsError> {
    let serde_json::Value::Object(mut keys) = section else {
        return Err(invalid("sandbox", "must be a JSON object"));
    };
    if let Some(key) = keys.keys().find(|k| {
        !CLAUDE_CODE_SANDBOX_KEYS.contains(&k.as_str()) && !OUR_SANDBOX_KEYS.contains(&k.as_str())
    }) {
        return Err(invalid(
            format!("sandbox.{key}"),
            "unknown key (neither Claude Code's nor ours)",
        ));
    }
    let enabled = match keys.remove("enabled") {
        None => None,
        Some(serde_json::Value::Bool(b)) => Some(b),
        Some(_) => return Err(invalid("sandbox.enabled", "must be true or false")),
    };
    // What is not applied matters only to a sandbox that is on.
    let mut scratch = Vec::new();
    let not_applied = if enabled == Some(false) {
        &mut scratch
    } else {
        not_applied
    };
    for key in SANDBOX_KEYS_NOT_APPLIED {
        if keys.contains_key(*key) {
            not_applied.push(format!(
                "sandbox.{key} (not applied: the sandbox stays stricter)"
            ));
        }
    }
    // `filesystem`: more writable paths are roots; paths to keep from being
    // read or written inside what is allowed cannot be expressed (Landlock
    // only grants), so they are refused rather than silently weaker.
    let mut allow_write = Vec::new();
    if let Some(fs) = keys.get("filesystem") {
        let serde_json::Value::Object(fs) = fs else {
            return Err(invalid("sandbox.filesystem", "must be a JSON object"));
        };
        for (k, v) in fs {
            let list: Vec<String> = match v {
                serde_json::Value::Array(a) => a
                    .iter()
                    .map(|p| p.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        invalid(
                            format!("sandbox.filesystem.{k}"),
                            "must be an array of strings",
                        )
                    })?,
                _ => {
                    return Err(invalid(
                        format!("sandbox.filesystem.{k}"),
                        "must be an array of strings",
                    ))
                }
            };
            match k.as_str() {
                "allowWrite" => allow_write = list,
                "denyWrite" | "denyRead" if list.is_empty() => {}
                "denyWrite" | "denyRead" => {
                    return Err(SettingsError::new(
                        SettingsErrorKind::Unsupported,
                        Some(format!("sandbox.filesystem.{k}")),
                        "Landlock can only grant access, not take it back inside what it grants; remove these paths from the writable roots instead".into(),
                    ))
                }
                _ => return Err(invalid(format!("sandbox.filesystem.{k}"), "unknown key (allowWrite, denyWrite, denyRead)")),
            }
        }
    }
    let mut domains: Option<NetworkDomains> = None;
    if let Some(serde_json::Value::Object(net)) = keys.get("network") {
        let strings = |k: &str, v: &serde_json::Value| -> Result<Vec<String>, SettingsError> {
            v.as_array()
                .and_then(|a| a.iter().map(|d| d.as_str().map(str::to_owned)).collect())
                .ok_or_else(|| {
                    invalid(
                        format!("sandbox.network.{k}"),
                        "must be an array of strings",
                    )
                })
        };
        let port = |k: &str, v: &serde_json::Value| -> Result<u16, SettingsError> {
            v.as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p > 0)
                .ok_or_else(|| invalid(format!("sandbox.network.{k}"), "must be a port number"))
        };
        let mut d = NetworkDomains::default();
        for (k, v) in net {
            match k.as_str() {
                "allowedDomains" => d.allowed_domains = strings(k, v)?,
                "deniedDomains" => d.denied_domains = strings(k, v)?,
                "askUnknownDomains" => {
                    d.ask_unknown_domains = Some(v.as_bool().ok_or_else(|| {
                        invalid("sandbox.network.askUnknownDomains", "must be true or false")
                    })?)
                }
                "httpProxyPort" => d.http_proxy_port = Some(port(k, v)?),
                "allowLocalBinding" => {
                    d.allow_local_binding = Some(v.as_bool().ok_or_else(|| {
                        invalid("sandbox.network.allowLocalBinding", "must be true or false")
                    })?)
                }
                "socksProxyPort" => d.socks_proxy_port = Some(port(k, v)?),
                _ => {
                    let grants = match v {
                        serde_json::Value::Bool(b) => *b,
                        serde_json::Value::Array(a) => !a.is_empty(),
                        serde_json::Value::Null => false,
                        _ => true,
                    };
                    if grants {
                        not_applied.push(format!(
                            "sandbox.network.{k} (not applied: the sandbox stays stricter)"
                        ));
                    }
                }
            }
        }
        if d != NetworkDomains::default() {
            domains = Some(d);
        }
    }
    // `network` is ours when it is a boolean, Claude Code's when an object.
    let ours_network = matches!(keys.get("network"), Some(serde_json::Value::Bool(_)));
    let ours: serde_json::Map<String, serde_json::Value> = keys
        .into_iter()
        .filter(|(k, v)| {
            k == "mode"
                || k == "writableRoots"
                || (k == "network" && ours_network && v.is_boolean())
        })
        .collect();
    if ours.is_empty() {
        return Ok((None, enabled, allow_write, domains));
    }
    let ours: SandboxSettings =
        serde_path_to_error::deserialize(serde_json::Value::Object(ours))
            .map_err(|e| invalid(format!("sandbox.{}", e.path()), e.into_inner().to_string()))?;
    Ok((Some(ours), enabled, allow_write, domains))
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
        let mut value = value;
        let mut ignored = Vec::new();
        let mut sandbox = None;
        if let serde_json::Value::Object(root) = &mut value {
            for key in CLAUDE_CODE_IGNORED_KEYS {
                if root.remove(*key).is_some() {
                    ignored.push((*key).to_owned());
                }
            }
            sandbox = root.remove("sandbox");
            if let Some(key) = CLAUDE_CODE_REFUSED_KEYS
                .iter()
                .find(|k| root.contains_key(**k))
            {
                return Err(SettingsError::new(
                    SettingsErrorKind::Unsupported,
                    Some((*key).to_owned()),
                    format!("\"{key}\" is not supported by this build yet; remove it (dsh mcp would otherwise front servers it bans or does not allow)"),
                ));
            }
        }
        let mut settings: Settings = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let key = (path != ".").then_some(path);
            SettingsError::new(SettingsErrorKind::Invalid, key, e.into_inner().to_string())
        })?;
        if let Some(section) = sandbox {
            let mut not_applied = Vec::new();
            if let Some(v) = section.get("allowUnsandboxedCommands") {
                settings.sandbox_escalation = Some(v.as_bool().ok_or_else(|| {
                    invalid("sandbox.allowUnsandboxedCommands", "must be true or false")
                })?);
            }
            if let Some(v) = section.get("confineReadOnly") {
                settings.sandbox_confine_read_only =
                    Some(v.as_bool().ok_or_else(|| {
                        invalid("sandbox.confineReadOnly", "must be true or false")
                    })?);
            }
            (
                settings.sandbox,
                settings.sandbox_enabled,
                settings.sandbox_allow_write,
                settings.sandbox_network,
            ) = read_sandbox(section, &mut not_applied)?;
            ignored.extend(not_applied);
        }
        if settings.permissions.disable_auto_mode.is_some() {
            ignored.push("permissions.disableAutoMode".to_owned());
        }
        settings.ignored = ignored;
        settings.check()?;
        Ok(settings)
    }
}

/// The directory a settings file's `/path` rules are relative to: the
/// project holding its `.claude` directory, else the file's own directory.
fn settings_project(file: &Path) -> PathBuf {
    let file = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(file))
            .unwrap_or_else(|_| file.to_path_buf())
    };
    let dir = file.parent().unwrap_or(Path::new("/"));
    match dir.file_name() {
        Some(name) if name == ".claude" => dir.parent().unwrap_or(dir).to_path_buf(),
        _ => dir.to_path_buf(),
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
    for key in [
        "permissions",
        "bash",
        "sandbox",
        "hooks",
        "mcp",
        "env",
        "audit",
    ] {
        if let Some(v) = root.get(key) {
            object(v, key)?;
        }
    }
    if let Some(v) = root.get("telemetry") {
        object(v, "telemetry")?;
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
                        let at = format!("hooks.{event}[{i}].hooks[{j}]");
                        object(h, &at)?;
                        // Another handler type has other keys: name the type,
                        // not the first key the command type does not know.
                        match h.get("type") {
                            Some(Value::String(t)) if t == "command" => {}
                            Some(Value::String(t)) => {
                                return Err(SettingsError::new(
                                    SettingsErrorKind::Unsupported,
                                    Some(format!("{at}.type")),
                                    format!("hooks of type \"{t}\" are not supported; only \"command\" hooks run"),
                                ))
                            }
                            _ => {
                                return Err(invalid(
                                    format!("{at}.type"),
                                    "must be \"command\"",
                                ))
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Where a rule of the effective settings came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleSource {
    /// `allow`, `ask` or `deny`.
    pub list: &'static str,
    /// The rule as written.
    pub rule: String,
    /// The file it was read from.
    pub file: PathBuf,
}

/// The settings files Claude Code reads for a project, least specific
/// first, those that exist: `USER_DIR/settings.json` (when `user_dir` is
/// given), then the project's `.claude/settings.json` and
/// `.claude/settings.local.json`. The project is the first directory from
/// `cwd` upwards that has a `.claude` directory, looked for up to the
/// repository root (the first directory with `.git`).
pub fn discover(cwd: &Path, user_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dir) = user_dir {
        files.push(dir.join("settings.json"));
    }
    if let Some(claude) = project_claude_dir(cwd, user_dir) {
        files.push(claude.join("settings.json"));
        files.push(claude.join("settings.local.json"));
    }
    files.retain(|f| f.is_file());
    files
}

/// The project's `.claude` directory: the first from `cwd` upwards, up to
/// the repository root, that is not the user's own (`user_dir`).
pub fn project_claude_dir(cwd: &Path, user_dir: Option<&Path>) -> Option<PathBuf> {
    let mut dir = Some(cwd);
    while let Some(here) = dir {
        let claude = here.join(".claude");
        if claude.is_dir() && Some(claude.as_path()) != user_dir {
            return Some(claude);
        }
        if here.join(".git").exists() {
            return None;
        }
        dir = here.parent();
    }
    None
}

/// Adds `rule` to `permissions.allow` (or `ask`, `deny`) of the settings
/// file `file` — creating it, and its directory, if needed — keeping every
/// other key. The file is replaced whole (written beside it, then renamed).
///
/// # Errors
/// The file cannot be read, is not a JSON object, or cannot be written.
pub fn remember_rule(file: &Path, list: RuleList, rule: &Rule) -> Result<(), SettingsError> {
    let io = |what: &str, e: std::io::Error| SettingsError {
        kind: SettingsErrorKind::Io,
        file: Some(file.to_owned()),
        key: None,
        message: format!("cannot {what} the settings file: {e}"),
    };
    let mut root = match std::fs::read_to_string(file) {
        Ok(text) => {
            serde_json::from_str::<serde_json::Value>(&text).map_err(|e| SettingsError {
                kind: SettingsErrorKind::Invalid,
                file: Some(file.to_owned()),
                key: None,
                message: format!("not valid JSON: {e}"),
            })?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => return Err(io("read", e)),
    };
    let key = match list {
        RuleList::Allow => "allow",
        RuleList::Ask => "ask",
        RuleList::Deny => "deny",
    };
    let Some(object) = root.as_object_mut() else {
        return Err(SettingsError::new(
            SettingsErrorKind::Invalid,
            None,
            "must be a JSON object".into(),
        ));
    };
    let permissions = object
        .entry("permissions")
        .or_insert_with(|| serde_json::json!({}));
    let Some(permissions) = permissions.as_object_mut() else {
        return Err(invalid("permissions", "must be a JSON object"));
    };
    let rules = permissions
        .entry(key)
        .or_insert_with(|| serde_json::json!([]));
    let Some(rules) = rules.as_array_mut() else {
        return Err(invalid(
            format!("permissions.{key}"),
            "must be an array of rules",
        ));
    };
    let text = serde_json::Value::String(rule.as_str().to_owned());
    if !rules.contains(&text) {
        rules.push(text);
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io("create the directory of", e))?;
    }
    let mut body = serde_json::to_string_pretty(&root).unwrap_or_default();
    body.push('\n');
    let partial = file.with_extension("json.partial");
    std::fs::write(&partial, body).map_err(|e| io("write", e))?;
    std::fs::rename(&partial, file).map_err(|e| io("replace", e))
}

impl Settings {
    /// The effective settings of several files, least specific first, as
    /// Claude Code merges them: rule lists (and `additionalDirectories`,
    /// `mcp.readOnlyTools`) are joined, so a deny anywhere wins; `env` is
    /// merged, the more specific file winning a variable; scalars take the
    /// most specific file that sets them; `disableBypassPermissionsMode`
    /// holds if any file sets it. Each rule's file is kept in `sources`.
    pub fn merge(layers: Vec<(PathBuf, Settings)>) -> (Settings, Vec<RuleSource>) {
        let mut out = Settings::default();
        let mut sources = Vec::new();
        for (file, layer) in layers {
            let p = layer.permissions;
            for (list, rules, into) in [
                ("allow", p.allow, &mut out.permissions.allow),
                ("ask", p.ask, &mut out.permissions.ask),
                ("deny", p.deny, &mut out.permissions.deny),
            ] {
                for rule in rules {
                    if into.contains(&rule) {
                        continue;
                    }
                    sources.push(RuleSource {
                        list,
                        rule: rule.as_str().to_owned(),
                        file: file.clone(),
                    });
                    into.push(rule);
                }
            }
            out.permissions.default_mode = p.default_mode.or(out.permissions.default_mode);
            out.permissions
                .additional_directories
                .extend(p.additional_directories);
            out.permissions.disable_bypass_permissions_mode = out
                .permissions
                .disable_bypass_permissions_mode
                .or(p.disable_bypass_permissions_mode);
            out.permissions.disable_auto_mode =
                p.disable_auto_mode.or(out.permissions.disable_auto_mode);
            out.env.extend(layer.env);
            out.disable_all_hooks = layer.disable_all_hooks.or(out.disable_all_hooks);
            let t = layer.telemetry;
            out.telemetry.otlp_endpoint = t.otlp_endpoint.or(out.telemetry.otlp_endpoint.take());
            out.telemetry.otlp_headers.extend(t.otlp_headers);
            out.telemetry.service_name = t.service_name.or(out.telemetry.service_name.take());
            out.telemetry.log_commands = t.log_commands.or(out.telemetry.log_commands);
            // The most specific file's sandbox holds.
            if layer.sandbox.is_some()
                || layer.sandbox_enabled.is_some()
                || layer.sandbox_escalation.is_some()
                || layer.sandbox_confine_read_only.is_some()
                || !layer.sandbox_allow_write.is_empty()
                || layer.sandbox_network.is_some()
            {
                // Lists join across files, so a deny anywhere holds; the
                // most specific file's single values win.
                out.sandbox_network = match (out.sandbox_network.take(), layer.sandbox_network) {
                    (Some(mut all), Some(more)) => {
                        all.allowed_domains.extend(more.allowed_domains);
                        all.denied_domains.extend(more.denied_domains);
                        all.ask_unknown_domains =
                            more.ask_unknown_domains.or(all.ask_unknown_domains);
                        all.http_proxy_port = more.http_proxy_port.or(all.http_proxy_port);
                        all.socks_proxy_port = more.socks_proxy_port.or(all.socks_proxy_port);
                        all.allow_local_binding =
                            more.allow_local_binding.or(all.allow_local_binding);
                        Some(all)
                    }
                    (all, more) => more.or(all),
                };
                out.sandbox = layer.sandbox.or(out.sandbox.take());
                out.sandbox_enabled = layer.sandbox_enabled.or(out.sandbox_enabled);
                out.sandbox_escalation = layer.sandbox_escalation.or(out.sandbox_escalation);
                out.sandbox_confine_read_only = layer
                    .sandbox_confine_read_only
                    .or(out.sandbox_confine_read_only);
                out.sandbox_allow_write.extend(layer.sandbox_allow_write);
            }
            // Hooks add up across files, as Claude Code runs them all.
            for (event, matchers) in layer.hooks.into_iter().flatten() {
                out.hooks
                    .get_or_insert_with(Default::default)
                    .entry(event)
                    .or_default()
                    .extend(matchers);
            }
            let b = layer.bash;
            out.bash.default_timeout_ms = b.default_timeout_ms.or(out.bash.default_timeout_ms);
            out.bash.max_timeout_ms = b.max_timeout_ms.or(out.bash.max_timeout_ms);
            out.bash.max_output_bytes = b.max_output_bytes.or(out.bash.max_output_bytes);
            out.mcp.call_timeout_ms = layer.mcp.call_timeout_ms.or(out.mcp.call_timeout_ms);
            out.mcp.read_only_tools.extend(layer.mcp.read_only_tools);
            // The more specific file says what a tool's arguments mean.
            out.mcp.arguments.extend(layer.mcp.arguments);
            out.mcp.profiles.extend(layer.mcp.profiles);
            out.mcp.pins_file = layer.mcp.pins_file.or(out.mcp.pins_file.take());
            let a = layer.audit;
            out.audit.enabled = a.enabled.or(out.audit.enabled);
            out.audit.path = a.path.or(out.audit.path.take());
            out.audit.max_file_bytes = a.max_file_bytes.or(out.audit.max_file_bytes);
            out.audit.max_files = a.max_files.or(out.audit.max_files);
            // Fail-closed holds if any file asks for it.
            out.audit.fail_closed = match (out.audit.fail_closed, a.fail_closed) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (x, y) => y.or(x),
            };
            out.audit.mask_arguments.extend(a.mask_arguments);
            out.audit.mask_patterns.extend(a.mask_patterns);
            for key in layer.ignored {
                if !out.ignored.contains(&key) {
                    out.ignored.push(key);
                }
            }
        }
        (out, sources)
    }
}
