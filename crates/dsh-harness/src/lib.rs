//! # dsh-harness
//!
//! The standard dsh pipeline, assembled from settings: what `dsh call`,
//! `dsh policy check` and the protocol front-ends run, so that a rule or a
//! limit means the same thing in each of them. A Rust program gets exactly
//! what `dsh` builds in three lines:
//!
//! ```
//! use dsh_harness::{Pipeline, PipelineOptions};
//! use dsh_tools::ToolExecution;
//!
//! # let dir = std::env::temp_dir();
//! let pipeline = Pipeline::build(&PipelineOptions::default().cwd(&dir))?;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let result = pipeline.registry().execute(ToolExecution::new("c1", "bash", r#"{"command":"rm -rf x"}"#)).await;
//! // The default mode asks before a command no rule allows; with nobody to ask, it fails closed.
//! assert_eq!(result.code(), Some(dsh_tools::ErrorCode::ApprovalUnavailable));
//! # });
//! # Ok::<(), dsh_harness::HarnessError>(())
//! ```
//!
//! ## What is assembled, in order
//!
//! 1. The first-party tools: the file tools of `dsh-tool-fs` (`read`,
//!    `write`, `edit`, `glob`, `grep`, `apply_patch`: the same output
//!    budget, `Read` deny rules kept out of listings and searches, writes
//!    held to the sandbox's writable directories), and `bash`, `bash_output`, `bash_write`,
//!    `bash_kill`, over one [`Executor`] configured from the settings'
//!    `bash` and `sandbox` sections and the working directory. The executor lives as long as the pipeline, so
//!    background tasks outlive a single call. Unless `bash.maxOutputBytes`
//!    says otherwise, a result keeps [`DEFAULT_OUTPUT_BYTES_PER_STREAM`] bytes
//!    of each stream (head and tail), so a whole result fits what clients show.
//!    The executor runs a watchdog: if the host is killed with `SIGKILL`, the
//!    commands it started and its spill files go with it.
//! 2. The middleware, outermost first: the hooks of the settings
//!    (`dsh-hooks`: `PreToolUse` before the permission layer, so its
//!    decision reaches it; none when the settings have no hooks or
//!    `disableAllHooks`), then the permission policy (rules and mode from
//!    the settings, the mode overridable by [`PipelineOptions::mode`]).
//!    Nothing else is added. `PermissionRequest` hooks answer an *ask*
//!    before the front-end's approver.
//! 3. Confinement is the executor's, per call, as the permission layer
//!    decided it: a call allowed only because the analysis judged it
//!    read-only runs read-only with the network off (`sandbox.confineReadOnly`),
//!    other calls under the settings' sandbox, and what `Read` deny rules
//!    name is kept unread by the kernel for every call but an approved
//!    escalation. Timeouts are the bash tools' own (`bash.defaultTimeoutMs`,
//!    `bash.maxTimeoutMs`), enforced by the executor.
//!
//! ## What waits for the first command
//!
//! Building a pipeline does only what `initialize` and `tools/list` (or a
//! policy check) need: the settings are read, merged and checked, the rules
//! compiled, the hooks configured and the tools registered, so a bad
//! settings file is still an error of [`Pipeline::build`]. The executor is
//! [deferred](Executor::deferred): its spill directory, its cgroup and its
//! watchdog process are set up before its first command starts, not before
//! the front-end's first answer. They were most of the cost of starting
//! `dsh mcp` (the sweeps of stale spill directories and cgroups read every
//! entry of the temporary directory and of the cgroup hierarchy; the
//! watchdog is a process of its own), and nothing needs them until a command
//! runs: the watchdog still runs before anything it would have to clean up
//! exists. [`Pipeline::set_up_executor`] does it at once; a failure to set up
//! is otherwise the first `bash` call's error (`could not set up the bash
//! executor: …`), not an error of [`Pipeline::build`]. The Landlock ABI is
//! probed at build (a few system calls): the policy needs it to know whether
//! read-only verdicts are held by the kernel.
//!
//! ## The audit log
//!
//! [`Pipeline::audit_middleware`] makes the `dsh-audit` layer from the
//! settings' `audit` section (directory, rotation, masking lists,
//! `failClosed`), with the files the rules came from and the sandbox mode;
//! the front-end adds what it knows (the session, observers) and installs it
//! with [`Pipeline::install_audit`] once every other layer is in place, so
//! that it is the outermost and records what any layer refused. Whether it
//! is on by default is the front-end's to say.
//!
//! Approval (who answers an *ask*) is the front-end's: a terminal, an editor,
//! an MCP client. [`Pipeline::set_approver`] installs one; with none, *ask*
//! fails closed with `APPROVAL_UNAVAILABLE`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod network;

pub use network::NetworkMechanism;

use dsh_mcp::{Proxy, ProxyError, ProxyOptions, UpstreamConfig};
use dsh_policy::{Approver, Evaluation, Mode, PermissionMiddleware, Settings, UnknownMode};
use dsh_tool_bash::{register_bash_tools, Executor, ExecutorConfig, ReadDenialsSource};
use dsh_tools::ToolRegistry;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Why a pipeline could not be built. Each names what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The settings file could not be read, parsed, or has an unknown key or
    /// a malformed rule.
    #[error("{0}")]
    Settings(#[from] dsh_policy::SettingsError),
    /// The working directory does not exist or cannot be read.
    #[error("working directory {}: {source}", path.display())]
    Cwd {
        /// The directory asked for.
        path: PathBuf,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    /// The permission mode is unknown.
    #[error("{0}")]
    Mode(#[from] UnknownMode),
    /// The bash executor could not be set up.
    #[error("cannot set up the bash executor: {0}")]
    Executor(std::io::Error),
    /// A first-party tool could not be registered.
    #[error("cannot register the first-party tools: {0}")]
    Register(dsh_tools::ToolError),
    /// An upstream MCP server could not be fronted.
    #[error("{0}")]
    Upstream(ProxyError),
    /// The settings' `mcp` section names a profile that does not exist, or
    /// the pins file cannot be read.
    #[error("{0}")]
    Proxied(String),
    /// The settings' `hooks` section cannot be used (a matcher that is no
    /// regular expression).
    #[error("{0}")]
    Hooks(#[from] dsh_hooks::HookConfigError),
    /// The audit log cannot be opened, and the settings say calls must not
    /// run unrecorded (`audit.failClosed`).
    #[error("cannot open the audit log in {}: {source} (audit.failClosed is set, so nothing may run unrecorded)", dir.display())]
    Audit {
        /// The log's directory.
        dir: PathBuf,
        /// Why it cannot be opened.
        source: std::io::Error,
    },
}

/// What to build the pipeline from. The default: no settings file (every
/// default), the settings' own mode, the current directory.
#[derive(Debug, Clone, Default)]
pub struct PipelineOptions {
    settings: Option<PathBuf>,
    mode: Option<Mode>,
    cwd: Option<PathBuf>,
    keep_spill_files: bool,
    no_builtin_tools: bool,
    add_dirs: Vec<PathBuf>,
    no_user_settings: bool,
    settings_only: bool,
    remember_always: bool,
    max_tasks_per_agent: Option<usize>,
}

impl PipelineOptions {
    /// Reads this settings file (Claude Code's format; see `dsh-policy`).
    pub fn settings(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings = Some(path.into());
        self
    }

    /// Overrides the settings' permission mode.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Overrides the permission mode by its name (`default`, `plan`, …).
    ///
    /// # Errors
    /// [`HarnessError::Mode`] for an unknown name.
    pub fn mode_name(self, name: &str) -> Result<Self, HarnessError> {
        Ok(self.mode(name.parse::<Mode>()?))
    }

    /// The working directory of commands and of path rules (the current
    /// directory when unset).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Another working directory (`--add-dir`): edits there count as inside
    /// in `acceptEdits`, beside the settings' `additionalDirectories`.
    pub fn add_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.add_dirs.push(dir.into());
        self
    }

    /// Skips the user's settings (`~/.claude/settings.json`).
    pub fn no_user_settings(mut self, skip: bool) -> Self {
        self.no_user_settings = skip;
        self
    }

    /// Reads only the `--settings` file, none of the files Claude Code reads.
    pub fn settings_only(mut self, only: bool) -> Self {
        self.settings_only = only;
        self
    }

    /// Writes *allow always* and *reject always* answers as rules to the
    /// project's `.claude/settings.local.json`, as Claude Code does, so the
    /// next run honours them (off: they last the session).
    pub fn remember_always(mut self, remember: bool) -> Self {
        self.remember_always = remember;
        self
    }

    /// At most `max` live background tasks and interactive sessions per
    /// agent (`dsh mcp --http`: per principal).
    pub fn max_tasks_per_agent(mut self, max: usize) -> Self {
        self.max_tasks_per_agent = Some(max);
        self
    }

    /// Registers no first-party tool (`dsh mcp --no-builtin`: the
    /// upstreams' tools alone, behind the same middleware).
    pub fn without_builtin_tools(mut self, without: bool) -> Self {
        self.no_builtin_tools = without;
        self
    }

    /// Keep the full output of truncated results after the pipeline goes
    /// away, for a one-shot host whose printed spill paths must stay
    /// readable; see `ExecutorConfig::keep_spill_files` for when they are
    /// removed.
    pub fn keep_spill_files(mut self, keep: bool) -> Self {
        self.keep_spill_files = keep;
        self
    }
}

/// The assembled pipeline: a registry with the first-party tools behind the
/// middleware, and the parts a front-end talks to.
pub struct Pipeline {
    registry: ToolRegistry,
    permissions: PermissionMiddleware,
    hooks: Option<dsh_hooks::HooksMiddleware>,
    /// Where the filtering proxy's connection records go, once the audit
    /// log is open.
    connection_log: network::ConnectionLog,
    executor: Executor,
    cwd: PathBuf,
    settings: Settings,
    sources: Vec<dsh_policy::RuleSource>,
    files: Vec<PathBuf>,
}

impl Pipeline {
    /// Builds the pipeline.
    ///
    /// # Errors
    /// A [`HarnessError`] naming the settings key, rule, directory or mode at fault.
    pub fn build(options: &PipelineOptions) -> Result<Pipeline, HarnessError> {
        let cwd = resolve_cwd(options.cwd.as_deref())?;
        let user = (!options.no_user_settings)
            .then(user_settings_dir)
            .flatten();
        let mut files = if options.settings_only {
            Vec::new()
        } else {
            dsh_policy::discover(&cwd, user.as_deref())
        };
        files.extend(options.settings.iter().cloned());
        let layers = files
            .iter()
            .map(|file| Ok((file.clone(), Settings::load(file)?)))
            .collect::<Result<Vec<_>, HarnessError>>()?;
        let (settings, sources) = Settings::merge(layers);
        let config = ExecutorConfig {
            keep_spill_files: options.keep_spill_files,
            max_tasks_per_agent: options.max_tasks_per_agent.unwrap_or(usize::MAX),
            sandbox: sandbox_policy(&settings, &cwd),
            sandbox_dirs: settings
                .permissions
                .additional_directories
                .iter()
                .map(PathBuf::from)
                .chain(options.add_dirs.iter().cloned())
                .map(|d| if d.is_absolute() { d } else { cwd.join(d) })
                .collect(),
            ..executor_config(&settings, &cwd)
        };
        let sandboxed = config
            .sandbox
            .as_ref()
            .is_some_and(|s| s.mode != dsh_sandbox::SandboxMode::DangerFullAccess);
        // The kernel holds read-only what runs on the analysis's word alone.
        let holds_reads = config.confine_read_only && dsh_sandbox::support().scoping();
        let mode = settings.effective_mode(options.mode)?;
        if !settings.ignored.is_empty() {
            use std::io::Write;
            // Listed once, so a user sees what the file says that dsh leaves to Claude Code.
            let _ = writeln!(
                std::io::stderr(),
                "dsh: settings ignored (not about tools) or not applied: {}",
                settings.ignored.join(", ")
            );
        }
        // The settings' additionalDirectories, then --add-dir.
        let mut policy = settings
            .policy(cwd.clone(), Some(mode))
            .with_additional_directories(&options.add_dirs);
        // Either way a confined call may ask to run outside.
        let escalation = settings.sandbox_escalation.unwrap_or(true);
        if sandboxed {
            policy = policy.with_sandbox(escalation);
        }
        if holds_reads {
            policy = policy.with_read_only_hold(escalation);
        }
        let permissions = PermissionMiddleware::new(policy);
        // The kernel keeps what `Read` deny rules name from being read, as
        // the rules stand at each call (*reject always* adds some).
        let mut config = config;
        config.read_denials = Some({
            let permissions = permissions.clone();
            ReadDenialsSource::new(move || {
                permissions
                    .read_denial_paths()
                    .map(|paths| dsh_sandbox::ReadDenials {
                        literal: paths.literal.clone(),
                        search: paths.search.clone(),
                        key: paths.key().to_owned(),
                        matcher: Arc::new(move |p: &Path| paths.is_denied(p)),
                    })
            })
        });
        // Claude Code's domain lists: the network through a filtering proxy.
        let connection_log = network::ConnectionLog::default();
        let network = network::start(
            settings.sandbox_network.as_ref(),
            config.sandbox.as_ref(),
            &permissions,
            connection_log.clone(),
        )
        .map_err(HarnessError::Proxied)?;
        // The proxy lives as long as the executor holds its closures.
        config.network_proxy = network;
        let file_tools = Self::file_tools(&config, &cwd, &permissions);
        let executor = Executor::deferred(config).map_err(HarnessError::Executor)?;
        let registry = ToolRegistry::new();
        if !options.no_builtin_tools {
            register_bash_tools(&registry, &executor).map_err(HarnessError::Register)?;
            dsh_tool_fs::register_fs_tools(&registry, &file_tools)
                .map_err(HarnessError::Register)?;
        }
        // Hooks are outside the permission layer: a PreToolUse hook's
        // decision reaches it with the call.
        let hooks = dsh_hooks::Hooks::from_settings(&settings)?;
        let hooks = (!hooks.is_empty()).then(|| {
            let project = dsh_policy::project_claude_dir(&cwd, user.as_deref())
                .and_then(|d| d.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| cwd.clone());
            let session = dsh_hooks::Session {
                project_dir: project,
                ..dsh_hooks::Session::new(cwd.clone())
            };
            let mode = permissions.clone();
            dsh_hooks::HooksMiddleware::new(hooks, session)
                .with_mode(Arc::new(move || mode.mode().as_str().to_owned()))
        });
        if let Some(hooks) = &hooks {
            registry.use_middleware(hooks.clone());
            if hooks.has(dsh_policy::HookEvent::PermissionRequest) {
                permissions.set_approver(Some(Arc::new(hooks.approver(None))));
            }
        }
        registry.use_middleware(permissions.clone());
        if options.remember_always {
            let local = dsh_policy::project_claude_dir(&cwd, user.as_deref())
                .unwrap_or_else(|| cwd.join(".claude"))
                .join("settings.local.json");
            permissions.set_remember(Some(Arc::new(move |list, rule| {
                use std::io::Write;
                // The rule holds for the session either way; say where it did not stick.
                let said = match dsh_policy::remember_rule(&local, list, rule) {
                    Ok(()) => format!("dsh: {rule} saved to {}", local.display()),
                    Err(e) => format!("dsh: {rule} holds for this session only: {e}"),
                };
                let _ = writeln!(std::io::stderr(), "{said}");
            })));
        }
        Ok(Pipeline {
            registry,
            permissions,
            hooks,
            connection_log,
            executor,
            cwd,
            settings,
            sources,
            files,
        })
    }

    /// The settings files read, least specific first.
    pub fn settings_files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The file each rule of the effective settings came from.
    pub fn rule_sources(&self) -> &[dsh_policy::RuleSource] {
        &self.sources
    }

    /// Where proxied tools' definitions are pinned (`mcp.pinsFile`, by
    /// default `.dsh/mcp-pins.json` in the working directory); `None` when
    /// the settings turn pinning off.
    pub fn pins_path(&self) -> Option<PathBuf> {
        match &self.settings.mcp.pins_file {
            Some(dsh_policy::PinsFile::Enabled(false)) => None,
            Some(dsh_policy::PinsFile::Path(p)) => Some(self.cwd.join(p)),
            _ => Some(self.cwd.join(dsh_mcp::upstream::pins::DEFAULT_PINS_FILE)),
        }
    }

    /// Fronts MCP servers: their tools join the registry, behind the same
    /// middleware, with the settings' `mcp` section (call timeout, tools
    /// trusted read-only).
    ///
    /// # Errors
    /// [`HarnessError::Upstream`]: a server that cannot start, a name claimed twice.
    pub async fn start_upstreams(
        &self,
        upstreams: Vec<UpstreamConfig>,
    ) -> Result<Proxy, HarnessError> {
        let mcp = &self.settings.mcp;
        let mut options = ProxyOptions::new(&self.cwd);
        // Third-party servers run in the same confinement as commands.
        options.sandbox = sandbox_policy(&self.settings, &self.cwd);
        if let Some(ms) = mcp.call_timeout_ms {
            options.call_timeout = std::time::Duration::from_millis(ms);
        }
        options.read_only_tools = mcp
            .read_only_tools
            .iter()
            .map(|t| t.to_ascii_lowercase())
            .collect();
        options.arguments = mcp
            .arguments
            .iter()
            .map(|(tool, args)| {
                let args = args.iter().map(|(name, m)| (name.clone(), *m)).collect();
                (tool.to_ascii_lowercase(), args)
            })
            .collect();
        for (server, profile) in &mcp.profiles {
            if profile != "none" && dsh_mcp::upstream::profiles::profile_named(profile).is_none() {
                let known: Vec<&str> = dsh_mcp::upstream::profiles::PROFILES
                    .iter()
                    .map(|p| p.name)
                    .collect();
                return Err(HarnessError::Proxied(format!(
                    "mcp.profiles.{server}: no built-in profile {profile:?} (there are: {}, and \"none\")",
                    known.join(", ")
                )));
            }
            options
                .profiles
                .insert(server.to_ascii_lowercase(), profile.clone());
        }
        if let Some(path) = self.pins_path() {
            let pins = dsh_mcp::upstream::pins::Pins::open(path).map_err(HarnessError::Proxied)?;
            options.pins = Some(std::sync::Arc::new(pins));
        }
        Proxy::start(upstreams, &self.registry, options)
            .await
            .map_err(HarnessError::Upstream)
    }

    /// The audit layer the settings ask for, not yet installed, handing
    /// each record to `observer` too (telemetry): `None` when the log is off
    /// (`audit.enabled`, else `enabled_by_default`) or cannot be opened and
    /// need not be (said on stderr) and there is no observer; with an
    /// observer, a layer without a file. Masks the names the bash tool
    /// scrubs from the environment and the settings' `audit.maskPatterns`
    /// and `audit.maskArguments`.
    ///
    /// # Errors
    /// [`HarnessError::Audit`]: the log cannot be opened and
    /// `audit.failClosed` is set (or no directory can be found for it).
    pub fn audit_middleware(
        &self,
        enabled_by_default: bool,
        observer: Option<dsh_audit::RecordObserver>,
    ) -> Result<Option<dsh_audit::AuditMiddleware>, HarnessError> {
        let log = self.audit_log(enabled_by_default)?;
        // The filtering proxy's connections go to the same log.
        *self
            .connection_log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = log.clone();
        if log.is_none() && observer.is_none() {
            return Ok(None);
        }
        let audit = &self.settings.audit;
        let masking = dsh_audit::Masking::new(
            dsh_tool_bash::SECRET_NAME_WORDS
                .iter()
                .map(|w| (*w).to_owned())
                .chain(audit.mask_patterns.iter().cloned()),
            audit.mask_arguments.iter(),
        );
        // The mode as the executor got it, named as the settings name it.
        let sandbox =
            sandbox_policy(&self.settings, &self.cwd).map_or("none", |policy| policy.mode.as_str());
        let mut layer = dsh_audit::AuditMiddleware::new(log, masking)
            .with_rule_sources(self.sources.clone())
            .with_sandbox(sandbox);
        if let Some(observer) = observer {
            layer = layer.with_observer(observer);
        }
        Ok(Some(layer))
    }

    /// The audit log the settings ask for, opened; `None` when it is off or
    /// cannot be opened and need not be.
    fn audit_log(
        &self,
        enabled_by_default: bool,
    ) -> Result<Option<dsh_audit::AuditLog>, HarnessError> {
        let audit = &self.settings.audit;
        if !audit.enabled.unwrap_or(enabled_by_default) {
            return Ok(None);
        }
        let fail_closed = audit.fail_closed.unwrap_or(false);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let dir = match (&audit.path, home) {
            (Some(p), Some(home)) if p.starts_with("~/") => Some(home.join(&p[2..])),
            (Some(p), _) if Path::new(p).is_absolute() => Some(PathBuf::from(p)),
            (Some(_), None) => None,
            (Some(p), _) => Some(self.cwd.join(p)),
            (None, _) => dsh_audit::default_dir(),
        };
        let opened = match dir {
            Some(dir) => {
                let mut config = dsh_audit::AuditConfig::new(&dir);
                config.max_file_bytes = audit
                    .max_file_bytes
                    .unwrap_or(dsh_audit::DEFAULT_MAX_FILE_BYTES);
                config.max_files = audit.max_files.unwrap_or(dsh_audit::DEFAULT_MAX_FILES);
                config.fail_closed = fail_closed;
                dsh_audit::AuditLog::open(config)
                    .map_err(|source| HarnessError::Audit { dir, source })
            }
            None => Err(HarnessError::Audit {
                dir: PathBuf::from("$XDG_STATE_HOME/dsh/audit"),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "neither XDG_STATE_HOME nor HOME is set; set audit.path",
                ),
            }),
        };
        let log = match opened {
            Ok(log) => log,
            Err(err) if fail_closed => return Err(err),
            Err(err) => {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "dsh: {}; calls are not recorded",
                    err.to_string().replace(
                        " (audit.failClosed is set, so nothing may run unrecorded)",
                        ""
                    )
                );
                return Ok(None);
            }
        };
        Ok(Some(log))
    }

    /// Installs `audit` outside every layer installed so far: call it once
    /// the front-end's own layers are in place.
    pub fn install_audit(&self, audit: dsh_audit::AuditMiddleware) {
        self.registry.use_middleware_first(audit);
    }

    /// How a confined command's network is held under these settings on
    /// this machine (what the executor was given decides the same way).
    pub fn network_mechanism(&self) -> NetworkMechanism {
        network::mechanism(
            self.settings.sandbox_network.as_ref(),
            sandbox_policy(&self.settings, &self.cwd).as_ref(),
        )
    }

    /// The settings the pipeline was built from.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The registry every call goes through.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The permission layer installed in the registry (to switch modes or
    /// read the rules *allow always* added).
    pub fn permissions(&self) -> &PermissionMiddleware {
        &self.permissions
    }

    /// The executor behind the bash tools.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Sets up the executor now (its spill directory, cgroup and watchdog),
    /// which it otherwise does before its first command.
    ///
    /// # Errors
    /// [`HarnessError::Executor`]: what stops the bash tools from running.
    pub fn set_up_executor(&self) -> Result<(), HarnessError> {
        self.executor.set_up().map_err(HarnessError::Executor)
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Sets who answers *ask* verdicts (`None`: nobody, they fail closed).
    /// `PermissionRequest` hooks, when the settings have them, answer first.
    pub fn set_approver(&self, approver: Option<Arc<dyn Approver>>) {
        match &self.hooks {
            Some(hooks) if hooks.has(dsh_policy::HookEvent::PermissionRequest) => self
                .permissions
                .set_approver(Some(Arc::new(hooks.approver(approver)))),
            _ => self.permissions.set_approver(approver),
        }
    }

    /// The verdict of every part of a call (simple commands, written files,
    /// unanalysable text), with the tool's own annotations and aliases.
    pub fn explain(&self, tool: &str, args: &Value) -> Vec<dsh_policy::PartEvaluation> {
        let (annotations, aliases) = self.tool_facts(tool);
        self.permissions
            .policy()
            .explain_named(tool, &aliases, args, &annotations)
    }

    /// How the policy decides a call, with the tool's own annotations
    /// (read-only tools), running nothing: what `dsh policy check` prints.
    pub fn check(&self, tool: &str, args: &Value) -> Evaluation {
        let (annotations, aliases) = self.tool_facts(tool);
        self.permissions
            .policy()
            .check_named(tool, &aliases, args, &annotations)
    }

    /// The file tools of a session: the executor's output budget, the files
    /// `Read` deny rules name (never listed or searched, as the rules stand at
    /// each call) and, under a sandbox, the directories writes may go to.
    fn file_tools(
        config: &ExecutorConfig,
        cwd: &Path,
        permissions: &PermissionMiddleware,
    ) -> dsh_tool_fs::FileTools {
        let mut fs = dsh_tool_fs::FsConfig::new(cwd);
        fs.max_output_chars = config.max_output_bytes;
        let denials = permissions.clone();
        fs.read_denied = Some(Arc::new(move |path: &Path| {
            denials
                .read_denial_paths()
                .is_some_and(|paths| paths.is_denied(path))
        }));
        fs.writable_roots = config.sandbox.as_ref().and_then(|sandbox| {
            let physical = |d: &Path| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf());
            match sandbox.mode {
                dsh_sandbox::SandboxMode::DangerFullAccess => None,
                dsh_sandbox::SandboxMode::ReadOnly => Some(Vec::new()),
                dsh_sandbox::SandboxMode::WorkspaceWrite => Some(
                    std::iter::once(cwd)
                        .chain(config.sandbox_dirs.iter().map(PathBuf::as_path))
                        .chain(sandbox.writable_roots.iter().map(PathBuf::as_path))
                        .map(physical)
                        .collect(),
                ),
            }
        });
        fs.protected_names = dsh_sandbox::PROTECTED_NAMES
            .iter()
            .map(|n| (*n).to_owned())
            .collect();
        dsh_tool_fs::FileTools::new(fs)
    }

    /// What the policy needs to know of a registered tool: its trusted
    /// annotations and the other names rules may use (none for an unknown tool).
    fn tool_facts(&self, tool: &str) -> (dsh_tools::ToolAnnotations, Vec<String>) {
        self.registry
            .get(tool)
            .map(|t| (t.annotations(), t.aliases().to_vec()))
            .unwrap_or_default()
    }
}

/// The settings' sandbox as the executor's policy: writable roots taken
/// from the working directory (`~/` from the home directory), the network
/// off unless `network: true`.
fn sandbox_policy(settings: &Settings, cwd: &Path) -> Option<dsh_sandbox::SandboxPolicy> {
    let s = settings.sandbox_settings()?;
    Some(dsh_sandbox::SandboxPolicy {
        mode: match s.mode {
            dsh_policy::SandboxMode::ReadOnly => dsh_sandbox::SandboxMode::ReadOnly,
            dsh_policy::SandboxMode::WorkspaceWrite => dsh_sandbox::SandboxMode::WorkspaceWrite,
            dsh_policy::SandboxMode::DangerFullAccess => dsh_sandbox::SandboxMode::DangerFullAccess,
        },
        writable_roots: s
            .writable_roots
            .iter()
            .map(|r| {
                let home = std::env::var_os("HOME").map(PathBuf::from);
                match (r.strip_prefix("~/"), home) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ if Path::new(r).is_absolute() => PathBuf::from(r),
                    _ => cwd.join(r),
                }
            })
            .collect(),
        network: s.network.unwrap_or(false),
    })
}

/// Claude Code's user directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn user_settings_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".claude")),
    }
}

fn resolve_cwd(dir: Option<&Path>) -> Result<PathBuf, HarnessError> {
    match dir {
        Some(dir) => std::fs::canonicalize(dir).map_err(|source| HarnessError::Cwd {
            path: dir.to_owned(),
            source,
        }),
        None => std::env::current_dir().map_err(|source| HarnessError::Cwd {
            path: PathBuf::from("."),
            source,
        }),
    }
}

/// Text per stream of a bash result when the settings give no
/// `bash.maxOutputBytes`: both streams, the omission markers and the spill
/// file paths then stay under 30 000 characters, below where clients cut a
/// tool result (Claude Code cuts MCP results above about 25 000 tokens) and
/// about what Claude Code's own Bash shows inline.
pub const DEFAULT_OUTPUT_BYTES_PER_STREAM: usize = 14_000;

/// The executor's configuration: the settings' `bash` section over the defaults.
fn executor_config(settings: &Settings, cwd: &Path) -> ExecutorConfig {
    let defaults = ExecutorConfig::default();
    let ms = |value: Option<u64>, default: Duration| value.map_or(default, Duration::from_millis);
    ExecutorConfig {
        cwd: cwd.to_owned(),
        default_timeout: ms(settings.bash.default_timeout_ms, defaults.default_timeout),
        max_timeout: ms(settings.bash.max_timeout_ms, defaults.max_timeout),
        max_output_bytes: settings
            .bash
            .max_output_bytes
            .map_or(DEFAULT_OUTPUT_BYTES_PER_STREAM, |b| {
                usize::try_from(b).unwrap_or(usize::MAX)
            }),
        // A front-end may be killed with SIGKILL: nothing it started may survive it.
        watchdog: true,
        confine_read_only: settings.sandbox_confine_read_only.unwrap_or(true),
        env: settings
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        ..defaults
    }
}
