//! The proxy: other MCP servers' tools as tools of our registry, so every
//! middleware of the pipeline (permission rules, approvals, hooks, limits)
//! applies to them as to our own.
//!
//! * **Start.** [`Proxy::start`] connects to every upstream (a child process
//!   on stdio, or a streamable-HTTP endpoint) with rmcp's client, trying the
//!   stateless `server/discover` start and falling back to `initialize`, and
//!   registers its tools under the names [`naming`] gives. A server that
//!   cannot start, or two tools claiming one name, is a start-up error naming
//!   both.
//! * **Calls.** Arguments are checked against the upstream's own JSON Schema
//!   (every violation, as `INVALID_ARGS`) before anything is sent. Results
//!   pass through whole: every content block with its extra fields,
//!   `structuredContent`, `isError`. A call cancelled downstream is cancelled
//!   upstream (`notifications/cancelled`); the upstream's progress reaches
//!   the client under the client's own progress token. Past the call timeout
//!   (`mcp.callTimeoutMs`, default 120 s) the call is cancelled upstream and
//!   fails with `TOOL_TIMEOUT`.
//! * **Trust.** An upstream's annotations are its own claims: `tools/list`
//!   shows them, the pipeline never trusts them. A tool is read-only (plan
//!   mode lets it run) only when `mcp.readOnlyTools` names it.
//! * **Environment.** A stdio upstream gets the variables its config sets and
//!   only the harmless ones of ours ([`INHERITED_ENV`]); no token, key or
//!   password of the host reaches it unless the config passes it on.
//! * **Faults.** An upstream that crashes, closes its pipes or stops speaking
//!   MCP fails the call in flight with an error naming the server and the
//!   cause (its exit status, its last line on stderr). The next call starts it
//!   again: at once after the first failure, then after 250 ms, 500 ms, 1 s;
//!   after [`MAX_FAILURES`] failures in a row without an answer to a call,
//!   every call says so, and a restart is tried only every
//!   [`GIVE_UP_PAUSE`] (a server that crashes at once does not run in a loop;
//!   one that is back after a redeploy is found again). Waiting for a start
//!   counts against the call's timeout. Its stderr goes to ours, each line
//!   prefixed with `[NAME]`.
//! * **List changes.** `notifications/tools/list_changed` from an upstream
//!   re-reads its tools and updates the registry, which tells our client.
//! * **Exit.** [`Proxy::shutdown`] closes every connection and kills every
//!   upstream's process group; dropping the proxy kills them too.

pub mod config;
pub mod naming;
pub mod pins;
pub mod poison;
pub mod profiles;

use crate::CALL;
use dsh_tools::{
    ArgumentMeaning, ArgumentMeanings, ContentBlock, DefinitionHold, Dialect, ErrorCode,
    OutputFuture, ToolAnnotations, ToolArguments, ToolContext, ToolDefinition, ToolError,
    ToolFuture, ToolOutput, ToolRegistry, Violation, ViolationKind,
};
use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, RequestId, ServerResult, SubscriptionFilterBuilder,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RoleClient, RunningService,
};
use rmcp::{ClientHandler, Peer, ServiceError};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

pub use config::{
    load_mcp_config, parse_mcp_config, UpstreamConfig, UpstreamSandbox, UpstreamTransport,
};

/// Host variables a stdio upstream inherits; everything else it gets only
/// from its config's `env`. None of these holds a secret.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// Failures in a row after which an upstream is no longer restarted.
pub const MAX_FAILURES: u32 = 5;

/// After [`MAX_FAILURES`] failures in a row, the time between restart attempts.
pub const GIVE_UP_PAUSE: Duration = Duration::from_secs(30);

/// How long an upstream may take to start and answer its first `tools/list`.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an upstream has to answer a ping after a call timed out.
const PING_WAIT: Duration = Duration::from_secs(5);

/// How long a dead upstream's exit status is waited for, to name the cause.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// Lines of an upstream's stderr kept to explain a crash.
const STDERR_KEPT: usize = 3;

/// The longest stderr line passed on whole; a longer one comes in pieces.
const STDERR_LINE_MAX: usize = 8 * 1024;

/// A start-up failure of the proxy: an upstream that cannot start, a
/// malformed config, a name claimed twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyError(String);

impl ProxyError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ProxyError(message.into())
    }
}

impl std::fmt::Display for ProxyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProxyError {}

/// How the proxy treats its upstreams (the settings' `mcp` section).
#[derive(Clone)]
pub struct ProxyOptions {
    /// How long one `tools/call` may take.
    pub call_timeout: Duration,
    /// Tool names trusted as read-only, as rules name them (lower-cased here).
    pub read_only_tools: Vec<String>,
    /// The working directory of stdio upstreams without a `cwd`.
    pub cwd: PathBuf,
    /// Where an upstream's stderr lines go (ours by default).
    pub stderr: Arc<dyn Fn(&str) + Send + Sync>,
    /// The sandbox stdio upstreams start in (the settings' `sandbox`), with
    /// each server's overrides; `None`: unconfined.
    pub sandbox: Option<dsh_sandbox::SandboxPolicy>,
    /// What proxied tools' arguments mean, by rule name
    /// (`mcp__SERVER__TOOL`, lower-case): the settings' `mcp.arguments`,
    /// over any profile's.
    pub arguments: HashMap<String, Vec<(String, ArgumentMeaning)>>,
    /// The profile of a server (lower-case name), by profile name or
    /// `none`; a server not named here gets the profile its tools match.
    pub profiles: HashMap<String, String>,
    /// The project's pinned tool definitions; `None`: nothing is pinned.
    pub pins: Option<Arc<pins::Pins>>,
}

impl ProxyOptions {
    /// Defaults: 120 s per call, nothing trusted read-only, the process's
    /// own working directory, stderr to ours.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        ProxyOptions {
            call_timeout: Duration::from_secs(120),
            read_only_tools: Vec::new(),
            cwd: cwd.into(),
            // Never a panic when our stderr is gone: the reader must keep
            // draining the upstream's pipe.
            stderr: Arc::new(|line| {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "{line}");
            }),
            sandbox: None,
            arguments: HashMap::new(),
            profiles: HashMap::new(),
            pins: None,
        }
    }
}

/// The upstreams of one `dsh mcp`, their tools registered in a registry.
pub struct Proxy {
    upstreams: Vec<Arc<Upstream>>,
}

impl Proxy {
    /// Connects to every upstream and registers its tools in `registry`.
    ///
    /// # Errors
    /// An upstream that cannot start or list its tools, or an exposed name
    /// claimed twice (by two upstream tools, or by one and a tool already in
    /// `registry`): the error names both.
    pub async fn start(
        configs: Vec<UpstreamConfig>,
        registry: &ToolRegistry,
        options: ProxyOptions,
    ) -> Result<Proxy, ProxyError> {
        let options = Arc::new(options);
        let mut names = std::collections::BTreeSet::new();
        for config in &configs {
            if config.name.eq_ignore_ascii_case("mcp") {
                return Err(ProxyError::new(
                    "an upstream may not be named \"mcp\": its tools would read as mcp__SERVER__TOOL rule names of other servers".to_owned(),
                ));
            }
            if !names.insert(config.name.to_ascii_lowercase()) {
                return Err(ProxyError::new(format!(
                    "two upstreams are named {:?} (rules could not tell them apart); give the one after -- another --name",
                    config.name
                )));
            }
        }
        let upstreams: Vec<Arc<Upstream>> = configs
            .into_iter()
            .map(|config| Upstream::new(config, options.clone(), registry))
            .collect();
        let proxy = Proxy { upstreams };
        let listed =
            futures::future::join_all(proxy.upstreams.iter().map(|u| u.first_list())).await;
        let mut planned: BTreeMap<String, (String, String)> = BTreeMap::new();
        let mut tools = Vec::new();
        for (upstream, listed) in proxy.upstreams.iter().zip(listed) {
            for tool in listed? {
                let claim = (upstream.config.name.clone(), tool.upstream_name.clone());
                let builtin = registry
                    .names()
                    .into_iter()
                    .any(|n| n.eq_ignore_ascii_case(&tool.exposed));
                if builtin {
                    return Err(ProxyError::new(format!(
                        "tool {:?} of upstream {:?} has the name of a built-in tool {:?}; front the server with --mcp-config (its tools become {}__TOOL) or serve it with --no-builtin",
                        claim.1, claim.0, tool.exposed, claim.0
                    )));
                }
                if let Some(problem) = impersonates(&tool.exposed) {
                    return Err(ProxyError::new(format!(
                        "tool {:?} of upstream {:?} would be exposed as {:?}, {problem}",
                        claim.1, claim.0, tool.exposed
                    )));
                }
                // Rules compare names without case: so do collisions.
                if let Some((server, other)) =
                    planned.insert(tool.exposed.to_ascii_lowercase(), claim.clone())
                {
                    return Err(ProxyError::new(format!(
                        "two upstream tools claim the name {:?}: tool {other:?} of upstream {server:?} and tool {:?} of upstream {:?}",
                        tool.exposed, claim.1, claim.0
                    )));
                }
                tools.push((upstream.clone(), tool));
            }
        }
        // The client shows a proxied tool under its own name for us (e.g.
        // `mcp__dsh__echo`); rules name it by the server dsh starts: say
        // which rule names which tool, once.
        for (upstream, tool) in &tools {
            let rule = naming::rule_aliases(&upstream.config.name, &tool.upstream_name)
                .into_iter()
                .next()
                .unwrap_or_default();
            (upstream.options.stderr)(&format!(
                "[dsh] upstream {:?}: tool {:?} is exposed as {:?}; rules name it {rule}",
                upstream.config.name, tool.upstream_name, tool.exposed
            ));
        }
        for (upstream, tool) in tools {
            upstream.register(registry, tool).map_err(|e| {
                ProxyError::new(format!(
                    "cannot register a tool of upstream {:?}: {e}",
                    upstream.config.name
                ))
            })?;
        }
        for upstream in &proxy.upstreams {
            upstream.watch_list_changes();
        }
        Ok(proxy)
    }

    /// Whether `tool` is one of the proxied tools (its progress comes from
    /// its server, not from our ticker).
    pub fn owns(&self, tool: &str) -> bool {
        self.upstreams
            .iter()
            .any(|u| lock(&u.registered).contains_key(tool))
    }

    /// Closes every connection and waits for every upstream process to be gone.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.upstreams.iter().map(|u| u.close())).await;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        for upstream in &self.upstreams {
            upstream.kill_now();
        }
    }
}

// ------------------------------------------------------------- one upstream

/// One upstream server and its connection.
struct Upstream {
    config: UpstreamConfig,
    options: Arc<ProxyOptions>,
    registry: ToolRegistry,
    link: tokio::sync::Mutex<Link>,
    /// The live connection, for a kill without the async lock.
    current: Mutex<Option<Arc<Connection>>>,
    /// Exposed name → the upstream's listing of the tools registered now.
    registered: Mutex<BTreeMap<String, Value>>,
    /// Upstream progress tokens of calls in flight → where the client wants progress.
    progress: Arc<Mutex<ProgressRoutes>>,
    /// Fires when the upstream says its tool list changed.
    list_changed: Arc<tokio::sync::Notify>,
    /// Set once closed: nothing is started again.
    closed: std::sync::atomic::AtomicBool,
    /// Failed starts and crashes since the last call that completed.
    failures: std::sync::atomic::AtomicU32,
    /// The profile last said on stderr to judge its tools' arguments.
    profile_said: Mutex<Option<&'static str>>,
}

/// The client of a call: where its progress goes.
#[derive(Clone)]
pub(crate) struct Downstream {
    pub(crate) peer: Peer<rmcp::service::RoleServer>,
    pub(crate) token: ProgressToken,
}

/// Where one call's upstream progress goes, and the last value sent.
struct Route {
    downstream: Downstream,
    last: tokio::sync::Mutex<Option<f64>>,
}

enum Link {
    /// Never started, or closed cleanly.
    Idle,
    Up(Arc<Connection>),
    /// Crashed or failed to start; `cause` says why the last time.
    Down {
        retry_at: Instant,
        cause: String,
    },
}

struct Connection {
    service: RunningService<RoleClient, UpstreamClient>,
    /// The process of a stdio upstream; `None` over HTTP, or once reaped.
    child: Mutex<Option<Box<dyn ChildWrapper>>>,
    stderr: Arc<StderrTail>,
}

/// The last lines an upstream wrote on stderr, to explain its death.
#[derive(Default)]
struct StderrTail {
    lines: Mutex<Vec<String>>,
    /// Set at end-of-file: every line is in.
    closed: std::sync::atomic::AtomicBool,
}

impl StderrTail {
    fn last(&self) -> Option<String> {
        lock(&self.lines).last().cloned()
    }

    fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl Connection {
    fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Kills the upstream's whole process group.
    fn kill(&self) {
        if let Some(child) = lock(&self.child).as_mut() {
            let _ = child.start_kill();
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A tool as the upstream listed it, with the names we give it, what its
/// arguments mean and its pinned definition's digest.
struct ListedTool {
    upstream_name: String,
    exposed: String,
    tool: rmcp::model::Tool,
    meanings: Option<ArgumentMeanings>,
    digest: Option<String>,
}

impl Upstream {
    fn new(
        config: UpstreamConfig,
        options: Arc<ProxyOptions>,
        registry: &ToolRegistry,
    ) -> Arc<Self> {
        Arc::new(Upstream {
            config,
            options,
            registry: registry.clone(),
            link: tokio::sync::Mutex::new(Link::Idle),
            current: Mutex::new(None),
            registered: Mutex::new(BTreeMap::new()),
            progress: Arc::new(Mutex::new(ProgressRoutes::default())),
            list_changed: Arc::new(tokio::sync::Notify::new()),
            closed: std::sync::atomic::AtomicBool::new(false),
            failures: std::sync::atomic::AtomicU32::new(0),
            profile_said: Mutex::new(None),
        })
    }

    fn name(&self) -> &str {
        &self.config.name
    }

    /// Starts the upstream and lists its tools (at start-up).
    async fn first_list(&self) -> Result<Vec<ListedTool>, ProxyError> {
        let connection = self
            .connection()
            .await
            .map_err(|e| ProxyError::new(e.message().to_owned()))?;
        self.list(&connection)
            .await
            .map_err(|e| ProxyError::new(e.message().to_owned()))
    }

    async fn list(&self, connection: &Connection) -> Result<Vec<ListedTool>, ToolError> {
        let listed = tokio::time::timeout(START_TIMEOUT, connection.peer().list_all_tools())
            .await
            .map_err(|_| {
                self.fault(format!(
                    "did not answer tools/list within {} s",
                    START_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| self.fault(format!("tools/list failed: {}", plain(&e))))?;
        let tools = listed
            .into_iter()
            .map(|tool| {
                let upstream_name = tool.name.to_string();
                let wanted = if self.config.prefixed {
                    format!("{}__{upstream_name}", self.config.name)
                } else {
                    upstream_name.clone()
                };
                let exposed = naming::exposed_name(&wanted);
                if exposed != wanted {
                    (self.options.stderr)(&format!(
                        "[dsh] upstream {:?}: tool {wanted:?} is exposed as {exposed:?} (model providers accept 1-64 characters of a-zA-Z0-9_-)",
                        self.config.name
                    ));
                }
                ListedTool {
                    upstream_name,
                    exposed,
                    tool,
                    meanings: None,
                    digest: None,
                }
            })
            .collect();
        Ok(self.understood(tools))
    }

    /// The tools with their arguments' meanings (the settings', else the
    /// profile the server's tool list matches) and their pins.
    fn understood(&self, mut tools: Vec<ListedTool>) -> Vec<ListedTool> {
        let server = self.name().to_ascii_lowercase();
        let profile = match self.options.profiles.get(&server).map(String::as_str) {
            Some("none") => None,
            Some(name) => profiles::profile_named(name),
            None => {
                let schemas: Vec<(String, Value)> = tools
                    .iter()
                    .map(|t| {
                        (
                            t.upstream_name.clone(),
                            Value::Object((*t.tool.input_schema).clone()),
                        )
                    })
                    .collect();
                let pairs: Vec<(&str, &Value)> =
                    schemas.iter().map(|(n, v)| (n.as_str(), v)).collect();
                profiles::matching(&pairs)
            }
        };
        let mut said = lock(&self.profile_said);
        if *said != profile.map(|p| p.name) {
            if let Some(p) = profile {
                (self.options.stderr)(&format!(
                    "[dsh] upstream {:?}: its tools' arguments are judged by the built-in profile {:?} ({})",
                    self.config.name, p.name, p.about
                ));
            }
            *said = profile.map(|p| p.name);
        }
        drop(said);
        let base = match &self.config.transport {
            UpstreamTransport::Stdio { cwd, .. } => Some(match cwd {
                Some(dir) => self.options.cwd.join(dir),
                None => self.options.cwd.clone(),
            }),
            UpstreamTransport::Http { .. } => None,
        };
        for listed in &mut tools {
            let rule = naming::rule_aliases(self.name(), &listed.upstream_name)
                .into_iter()
                .next()
                .unwrap_or_default();
            listed.meanings = match self.options.arguments.get(&rule) {
                Some(arguments) => Some(ArgumentMeanings {
                    arguments: arguments.clone(),
                    from: "the settings' mcp.arguments".into(),
                    base: None,
                }),
                None => profile.and_then(|p| p.meanings(&listed.upstream_name)),
            }
            .map(|mut m| {
                m.base = base.clone();
                m
            });
        }
        tools
    }

    /// Pins a tool about to be registered: recorded the first time, held
    /// when its definition is not the accepted one or carries instructions
    /// aimed at the model (said on stderr). Returns its digest.
    fn pin(&self, listed: &ListedTool) -> Option<String> {
        let pins = self.options.pins.as_ref()?;
        let rule = naming::rule_aliases(self.name(), &listed.upstream_name)
            .into_iter()
            .next()
            .unwrap_or_default();
        let listing = serde_json::to_value(&listed.tool).unwrap_or_default();
        let definition = pins::definition(&listing);
        let description = listed.tool.description.as_deref().unwrap_or("");
        let input = Value::Object((*listed.tool.input_schema).clone());
        let findings = poison::findings(&listed.upstream_name, description, &input);
        let tool = &listed.upstream_name;
        match pins.observe(&rule, &definition, &findings) {
            Ok(pins::Observed::Accepted) => {}
            Ok(pins::Observed::Held(change)) => (self.options.stderr)(&format!(
                "[dsh] upstream {:?}: tool {tool:?} is held ({change}); its calls ask until `dsh pins accept {rule}`",
                self.config.name
            )),
            Err(err) => (self.options.stderr)(&format!(
                "[dsh] upstream {:?}: tool {tool:?} is held: {err}",
                self.config.name
            )),
        }
        Some(pins::digest(&definition))
    }

    fn register(
        self: &Arc<Self>,
        registry: &ToolRegistry,
        listed: ListedTool,
    ) -> Result<(), ToolError> {
        let listing = serde_json::to_value(&listed.tool).unwrap_or_default();
        let mut listed = listed;
        listed.digest = self.pin(&listed);
        let tool = UpstreamTool::new(self.clone(), listed)?;
        let exposed = tool.exposed.clone();
        registry.register_arc(Arc::new(tool))?;
        lock(&self.registered).insert(exposed, listing);
        Ok(())
    }

    /// Re-reads the tool list and brings the registry in line with it.
    async fn refresh(self: &Arc<Self>) {
        let Ok(connection) = self.connection().await else {
            return;
        };
        let Ok(listed) = self.list(&connection).await else {
            return;
        };
        // Only what changed is replaced: a tool listed as before stays
        // registered, so calls in between never find it missing.
        let old: BTreeMap<String, Value> = lock(&self.registered).clone();
        let fresh: BTreeMap<String, Value> = listed
            .iter()
            .map(|t| {
                (
                    t.exposed.clone(),
                    serde_json::to_value(&t.tool).unwrap_or_default(),
                )
            })
            .collect();
        for (exposed, listing) in &old {
            if fresh.get(exposed) != Some(listing) {
                self.registry.unregister(exposed);
                lock(&self.registered).remove(exposed);
            }
        }
        for tool in listed {
            if old.get(&tool.exposed) == fresh.get(&tool.exposed) {
                continue;
            }
            let exposed = tool.exposed.clone();
            let taken = self
                .registry
                .names()
                .into_iter()
                .any(|n| n.eq_ignore_ascii_case(&exposed));
            let problem = impersonates(&exposed)
                .map(str::to_owned)
                .or_else(|| taken.then(|| "which another tool has".to_owned()));
            if let Some(problem) = problem {
                (self.options.stderr)(&format!(
                    "[dsh] upstream {:?}: tool {exposed:?} left out after its list changed: its name is one {problem}",
                    self.config.name
                ));
                continue;
            }
            if let Err(e) = self.register(&self.registry, tool) {
                (self.options.stderr)(&format!(
                    "[dsh] upstream {:?}: tool {exposed:?} left out after its list changed: {}",
                    self.config.name,
                    e.message()
                ));
            }
        }
    }

    fn watch_list_changes(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let changed = self.list_changed.clone();
        tokio::spawn(async move {
            loop {
                changed.notified().await;
                let Some(upstream) = Weak::upgrade(&weak) else {
                    return;
                };
                if upstream.closed.load(std::sync::atomic::Ordering::Acquire) {
                    return;
                }
                upstream.refresh().await;
            }
        });
    }

    /// The live connection, starting (or restarting) the upstream if needed.
    async fn connection(&self) -> Result<Arc<Connection>, ToolError> {
        let mut link = self.link.lock().await;
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            return Err(self.fault("is shut down".into()));
        }
        if let Link::Up(connection) = &*link {
            if !connection.peer().is_transport_closed() {
                return Ok(connection.clone());
            }
            // It died between calls: found now, restarted at once below.
            let connection = connection.clone();
            let cause = describe_death(&connection, "closed its connection between calls").await;
            *lock(&self.current) = None;
            *link = self.down(cause);
        }
        let failures = self.failures.load(std::sync::atomic::Ordering::Acquire);
        let restart = match &*link {
            Link::Up(connection) => return Ok(connection.clone()),
            Link::Idle => false,
            Link::Down { retry_at, cause } => {
                let now = Instant::now();
                if failures >= MAX_FAILURES && now < *retry_at {
                    return Err(self.fault(format!(
                        "failed {failures} times in a row (last: {cause}); it is tried again only every {} s, next in {} s",
                        GIVE_UP_PAUSE.as_secs(),
                        (*retry_at - now).as_secs() + 1
                    )));
                }
                if now < *retry_at {
                    return Err(self.fault(format!(
                        "is down ({cause}); it is restarted on a call after {} ms",
                        (*retry_at - now).as_millis()
                    )));
                }
                true
            }
        };
        match self.start().await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *link = Link::Up(connection.clone());
                *lock(&self.current) = Some(connection.clone());
                if restart {
                    // A restarted server may list other tools.
                    self.list_changed.notify_one();
                }
                Ok(connection)
            }
            Err(cause) => {
                *link = self.down(cause.clone());
                Err(self.fault(cause))
            }
        }
    }

    /// After a call timed out: a server that does not answer a ping either
    /// is stuck or cannot be heard (a response it sent too big to read, a
    /// dead server whose pipe a child holds open). Either way the next call
    /// must not wait out its timeout again: the server is restarted.
    fn check_alive(self: Arc<Self>, connection: Arc<Connection>) {
        tokio::spawn(async move {
            let ping = ClientRequest::PingRequest(rmcp::model::PingRequest::default());
            let answered =
                tokio::time::timeout(PING_WAIT, connection.peer().send_request(ping)).await;
            // Any answer, an error included (a revision without `ping`), is a
            // server that hears and speaks.
            let heard = matches!(answered, Ok(Ok(_)) | Ok(Err(ServiceError::McpError(_))));
            if !heard {
                let what = format!(
                    "did not answer a ping within {} s after a call timed out",
                    PING_WAIT.as_secs()
                );
                self.failed(&connection, &what).await;
            }
        });
    }

    /// Counts one more failure in a row: the link is down until its back-off ends.
    fn down(&self, cause: String) -> Link {
        let failures = self
            .failures
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            + 1;
        Link::Down {
            retry_at: Instant::now() + backoff(failures),
            cause,
        }
    }

    /// Marks `failed` dead (if it is still the live connection) and says why.
    async fn failed(&self, failed: &Arc<Connection>, what: &str) -> String {
        let cause = describe_death(failed, what).await;
        let mut link = self.link.lock().await;
        if let Link::Up(current) = &*link {
            if Arc::ptr_eq(current, failed) {
                *link = self.down(cause.clone());
                *lock(&self.current) = None;
            }
        }
        cause
    }

    /// A call completed: the failures in a row are over.
    fn call_completed(&self) {
        self.failures.store(0, std::sync::atomic::Ordering::Release);
    }

    async fn start(&self) -> Result<Connection, String> {
        let handler = UpstreamClient {
            progress: self.progress.clone(),
            list_changed: self.list_changed.clone(),
        };
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        match &self.config.transport {
            UpstreamTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                // Until the connection owns it, a start given up half-way
                // (its call cancelled) still kills the whole process group.
                let mut spawned = self.spawn(command, args, env, cwd.as_deref())?;
                let stdin = spawned.inner_mut().stdin().take();
                let stdout = spawned.inner_mut().stdout().take();
                let stderr = spawned.inner_mut().stderr().take();
                let mut child = GroupGuard(Some(spawned));
                let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
                    let _ = child.start_kill();
                    return Err("its stdin or stdout could not be opened".into());
                };
                let stderr_tail = Arc::new(StderrTail::default());
                match stderr {
                    Some(stderr) => self.forward_stderr(stderr, stderr_tail.clone()),
                    None => stderr_tail
                        .closed
                        .store(true, std::sync::atomic::Ordering::Release),
                }
                let started = tokio::time::timeout(
                    START_TIMEOUT,
                    handler.serve_with_lifecycle((stdout, stdin), lifecycle),
                )
                .await;
                let service = match started {
                    Ok(Ok(service)) => service,
                    Ok(Err(e)) => {
                        let cause = exit_cause(
                            child.take(),
                            &stderr_tail,
                            &format!("did not start: {}", plain(&e)),
                        )
                        .await;
                        return Err(cause);
                    }
                    Err(_) => {
                        let _ = child.start_kill();
                        return Err(format!(
                            "did not finish its MCP start within {} s",
                            START_TIMEOUT.as_secs()
                        ));
                    }
                };
                let connection = Connection {
                    service,
                    child: Mutex::new(child.take()),
                    stderr: stderr_tail,
                };
                self.listen(&connection);
                Ok(connection)
            }
            UpstreamTransport::Http { url, headers } => {
                let mut config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let name = http::HeaderName::try_from(name.as_str())
                        .map_err(|e| format!("header {name:?} is not a valid header name: {e}"))?;
                    let value = http::HeaderValue::try_from(value.as_str())
                        .map_err(|e| format!("header {name} has an invalid value: {e}"))?;
                    custom.insert(name, value);
                }
                config = config.custom_headers(custom);
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
                let service = tokio::time::timeout(
                    START_TIMEOUT,
                    handler.serve_with_lifecycle(transport, lifecycle),
                )
                .await
                .map_err(|_| {
                    format!(
                        "{url} did not finish its MCP start within {} s",
                        START_TIMEOUT.as_secs()
                    )
                })?
                .map_err(|e| format!("{url} did not start: {}", plain(&e)))?;
                let connection = Connection {
                    service,
                    child: Mutex::new(None),
                    stderr: Arc::new(StderrTail {
                        closed: std::sync::atomic::AtomicBool::new(true),
                        ..StderrTail::default()
                    }),
                };
                self.listen(&connection);
                Ok(connection)
            }
        }
    }

    /// On a stateless (2026-07-28) connection, list changes arrive only on a
    /// `listen` stream: open one. Older connections send them unasked.
    fn listen(&self, connection: &Connection) {
        let version = connection
            .peer()
            .peer_info()
            .map(|i| i.protocol_version.clone());
        if version != Some(ProtocolVersion::V_2026_07_28) {
            return;
        }
        let peer = connection.peer().clone();
        let changed = self.list_changed.clone();
        tokio::spawn(async move {
            let filter = SubscriptionFilterBuilder::default()
                .tools_list_changed()
                .build();
            let Ok(mut subscription) = peer.listen(filter).await else {
                return;
            };
            while let Ok(Some(notification)) = subscription.next().await {
                if matches!(
                    notification,
                    rmcp::model::ServerNotification::ToolListChangedNotification(_)
                ) {
                    changed.notify_one();
                }
            }
        });
    }

    fn spawn(
        &self,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<&Path>,
    ) -> Result<Box<dyn ChildWrapper>, String> {
        let mut cmd = tokio::process::Command::new(command);
        let workdir = match cwd {
            Some(dir) if dir.is_absolute() => dir.to_path_buf(),
            Some(dir) => self.options.cwd.join(dir),
            None => self.options.cwd.clone(),
        };
        cmd.args(args)
            .env_clear()
            .current_dir(&workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in std::env::vars_os() {
            if key
                .to_str()
                .is_some_and(|k| INHERITED_ENV.contains(&k) || k.starts_with("LC_"))
            {
                cmd.env(key, value);
            }
        }
        cmd.envs(env);
        if let Some(tmp) = self.confine(&mut cmd, &workdir)? {
            cmd.env("TMPDIR", tmp);
        }
        let mut wrapped = CommandWrap::from(cmd);
        wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        wrapped
            .spawn()
            .map_err(|e| format!("cannot run {command:?}: {e}"))
    }

    /// Starts the server in the settings' sandbox, with its own overrides:
    /// it may write only under its working directory, its writable roots
    /// and a private temp directory (returned, for `TMPDIR`).
    fn confine(
        &self,
        cmd: &mut tokio::process::Command,
        workdir: &Path,
    ) -> Result<Option<PathBuf>, String> {
        let Some(base) = &self.options.sandbox else {
            return Ok(None);
        };
        let own = &self.config.sandbox;
        let policy = dsh_sandbox::SandboxPolicy {
            mode: base.mode,
            writable_roots: base
                .writable_roots
                .iter()
                .chain(&own.writable_roots)
                .cloned()
                .collect(),
            network: own.network.unwrap_or(base.network),
        };
        let tmp = std::env::temp_dir().join(format!(
            "dsh-upstream-{}-{}",
            self.config.name,
            std::process::id()
        ));
        let Some(confinement) = dsh_sandbox::confine(&policy, &[workdir.to_path_buf()], &tmp)
        else {
            return Ok(None);
        };
        dsh_sandbox::private_dir(&tmp)
            .map_err(|e| format!("cannot create its temp directory {}: {e}", tmp.display()))?;
        let ruleset = confinement
            .ruleset(dsh_sandbox::support())
            .map_err(|e| format!("sandbox unavailable: {e}; the server was not started"))?;
        // The same hardening as a confined command: no capabilities, no
        // inherited descriptors, the system-call filter.
        let plan = dsh_sandbox::ChildPlan::prepare(dsh_sandbox::ChildConfig {
            ruleset: Some(std::sync::Arc::new(ruleset)),
            network: policy.network,
            ..dsh_sandbox::ChildConfig::default()
        })
        .map_err(|e| format!("sandbox unavailable: {e}; the server was not started"))?;
        plan.attach(cmd);
        Ok(Some(tmp))
    }

    fn forward_stderr(&self, stderr: tokio::process::ChildStderr, tail: Arc<StderrTail>) {
        let sink = self.options.stderr.clone();
        let name = self.config.name.clone();
        tokio::spawn(async move {
            // Bytes, not text: a server may write anything, and the pipe
            // must be drained to its end or the server blocks or dies.
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            loop {
                line.clear();
                let read = (&mut reader)
                    .take(STDERR_LINE_MAX as u64)
                    .read_until(b'\n', &mut line)
                    .await;
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end_matches(['\n', '\r']).to_owned();
                sink(&format!("[{name}] {text}"));
                let mut kept = lock(&tail.lines);
                if kept.len() == STDERR_KEPT {
                    kept.remove(0);
                }
                kept.push(text);
            }
            tail.closed
                .store(true, std::sync::atomic::Ordering::Release);
        });
    }

    /// An error of this upstream: `upstream "NAME" …`.
    fn fault(&self, what: String) -> ToolError {
        // The model reads this: an endpoint's path and query (where a
        // `${TOKEN}` may have gone) are left out.
        let what = match &self.config.transport {
            UpstreamTransport::Http { url, .. } => what.replace(url.as_str(), &origin(url)),
            UpstreamTransport::Stdio { .. } => what,
        };
        ToolError::new(
            ErrorCode::ToolError,
            format!("upstream {:?} {what}", self.config.name),
        )
    }

    async fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        let old = std::mem::replace(&mut *self.link.lock().await, Link::Idle);
        *lock(&self.current) = None;
        self.list_changed.notify_one();
        if let Link::Up(connection) = old {
            connection.kill();
            let child = lock(&connection.child).take();
            if let Some(mut child) = child {
                let _ = tokio::time::timeout(EXIT_WAIT * 4, child.wait()).await;
            }
            connection.service.cancellation_token().cancel();
        }
    }

    fn kill_now(&self) {
        if let Some(connection) = lock(&self.current).take() {
            connection.kill();
        }
    }
}

/// Why an exposed name may not be used, if it may not: one our policy
/// gives a meaning of its own.
fn impersonates(exposed: &str) -> Option<&'static str> {
    let lower = exposed.to_ascii_lowercase();
    if lower.starts_with("mcp__") {
        Some("which reads as a rule name of another server (mcp__SERVER__TOOL)")
    } else if lower == "bash" {
        Some("which is the name of our shell tool in every rule")
    } else {
        None
    }
}

/// `scheme://host:port` of a URL: what an error may show of it (no
/// credentials, path or query).
fn origin(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let host_end = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    let authority = &url[after_scheme..host_end];
    let host = authority
        .rfind('@')
        .map_or(authority, |at| &authority[at + 1..]);
    format!("{}{host}", &url[..after_scheme])
}

/// An rmcp error as a reader wants it: without the Rust type paths some
/// of its messages carry (`Transport [rmcp::transport::…] error: …`).
fn plain(error: &dyn std::fmt::Display) -> String {
    let mut text = error.to_string();
    while let Some(start) = text.find(" [rmcp::") {
        let mut depth = 0;
        let mut end = None;
        for (i, c) in text[start + 1..].char_indices() {
            match c {
                '[' | '<' => depth += 1,
                ']' | '>' => {
                    depth -= 1;
                    if depth == 0 && c == ']' {
                        end = Some(start + 1 + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        match end {
            Some(end) => text.replace_range(start..end, ""),
            None => break,
        }
    }
    text
}

/// A child being started: its process group is killed if it is dropped.
struct GroupGuard(Option<Box<dyn ChildWrapper>>);

impl GroupGuard {
    fn start_kill(&mut self) -> std::io::Result<()> {
        match self.0.as_mut() {
            Some(child) => child.start_kill(),
            None => Ok(()),
        }
    }

    /// Hands the child over: the guard no longer kills it.
    fn take(&mut self) -> Option<Box<dyn ChildWrapper>> {
        self.0.take()
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let _ = self.start_kill();
    }
}

/// The delay before restart number `failures` (counting from one).
fn backoff(failures: u32) -> Duration {
    match failures {
        0 | 1 => Duration::ZERO,
        n if n >= MAX_FAILURES => GIVE_UP_PAUSE,
        n => Duration::from_millis(250 << (n - 2).min(6)),
    }
}

/// Why a connection died: `what`, its exit status, its last stderr line.
async fn describe_death(connection: &Connection, what: &str) -> String {
    // Killed before it is reaped: a group whose leader is reaped could
    // have its id reused, and a kill after that would hit a stranger.
    connection.kill();
    let try_wait = || {
        let mut slot = lock(&connection.child);
        match slot.as_mut() {
            Some(child) => {
                let status = child.try_wait().ok().flatten()?;
                // Reaped: nothing left to kill.
                *slot = None;
                Some(Some(status))
            }
            None => Some(None),
        }
    };
    // Give a crashing process a moment to finish dying and its stderr to
    // reach us to its end.
    let deadline = Instant::now() + EXIT_WAIT;
    let mut status = None;
    loop {
        if status.is_none() {
            status = try_wait();
        }
        if (status.is_some() && connection.stderr.is_closed()) || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    cause_text(what, status.flatten(), &connection.stderr)
}

async fn exit_cause(child: Option<Box<dyn ChildWrapper>>, tail: &StderrTail, what: &str) -> String {
    let status = match child {
        Some(mut child) => {
            // Its group goes first, while the leader is not reaped.
            let _ = child.start_kill();
            match tokio::time::timeout(EXIT_WAIT, child.wait()).await {
                Ok(Ok(status)) => Some(status),
                _ => None,
            }
        }
        None => None,
    };
    let deadline = Instant::now() + EXIT_WAIT;
    while !tail.is_closed() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    cause_text(what, status, tail)
}

fn cause_text(what: &str, status: Option<std::process::ExitStatus>, tail: &StderrTail) -> String {
    use std::os::unix::process::ExitStatusExt;
    let mut cause = what.to_owned();
    match status {
        Some(s) if s.code().is_some() => cause.push_str(&format!(
            "; it exited with status {}",
            s.code().unwrap_or(0)
        )),
        Some(s) => cause.push_str(&format!(
            "; it was killed by signal {}",
            s.signal().unwrap_or(0)
        )),
        None => {}
    }
    if let Some(line) = tail.last() {
        cause.push_str(&format!("; its last stderr line: {line}"));
    }
    cause
}

// ------------------------------------------------------- the rmcp client side

/// Our side of an upstream connection: forwards progress, hears list changes.
#[derive(Clone)]
struct UpstreamClient {
    progress: Arc<Mutex<ProgressRoutes>>,
    list_changed: Arc<tokio::sync::Notify>,
}

impl ClientHandler for UpstreamClient {
    fn get_info(&self) -> ClientConfig {
        let mut info = Implementation::from_build_env();
        info.name = "dsh".into();
        info.version = env!("CARGO_PKG_VERSION").into();
        ClientConfig::new(ClientCapabilities::default(), info)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let route = {
            let mut routes = lock(&self.progress);
            match routes.routes.get(&params.progress_token) {
                Some(route) => route.clone(),
                None => {
                    // Progress can beat the call's own bookkeeping (its
                    // route is set up once the request is on its way): kept
                    // until the route comes, a few calls' worth at most.
                    if routes.early.len() >= EARLY_PROGRESS_KEPT {
                        routes.early.clear();
                    }
                    let token = params.progress_token.clone();
                    routes.early.entry(token).or_default().push(params);
                    return;
                }
            }
        };
        forward_progress(&route, params).await;
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }
}

// ---------------------------------------------------------------- the tool

/// One upstream tool as a tool of our registry.
pub struct UpstreamTool {
    upstream: Arc<Upstream>,
    upstream_name: String,
    exposed: String,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    validator: jsonschema::Validator,
    aliases: Vec<String>,
    trusted: ToolAnnotations,
    advertised: ToolAnnotations,
    meanings: Option<ArgumentMeanings>,
    /// The pins and this definition's digest, when definitions are pinned.
    pin: Option<(Arc<pins::Pins>, String)>,
}

impl UpstreamTool {
    fn new(upstream: Arc<Upstream>, listed: ListedTool) -> Result<Self, ToolError> {
        let ListedTool {
            upstream_name,
            exposed,
            tool,
            meanings,
            digest,
        } = listed;
        let pin = upstream.options.pins.clone().zip(digest);
        let server = upstream.name().to_owned();
        let input_schema = Value::Object((*tool.input_schema).clone());
        let validator = jsonschema::validator_for(&input_schema).map_err(|e| {
            ToolError::new(
                ErrorCode::InvalidSchema,
                format!("upstream {server:?} tool {upstream_name:?} has an input schema that is not valid JSON Schema: {e}"),
            )
        })?;
        let output_schema = tool
            .output_schema
            .as_ref()
            .map(|s| Value::Object((**s).clone()));
        let mut description = tool.description.as_deref().unwrap_or("").to_owned();
        let wanted_plain = if upstream.config.prefixed {
            format!("{server}__{upstream_name}")
        } else {
            upstream_name.clone()
        };
        if exposed != wanted_plain {
            if !description.is_empty() {
                description.push_str("\n\n");
            }
            description.push_str(&format!(
                "(Tool {upstream_name:?} of MCP server {server:?}, renamed {exposed:?}: model providers accept 1-64 characters of a-zA-Z0-9_-.)"
            ));
        }
        let mut advertised: ToolAnnotations = tool
            .annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok())
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        if advertised.title.is_none() {
            advertised.title = tool.title.clone();
        }
        let aliases = naming::rule_aliases(&server, &upstream_name);
        let exposed_lc = exposed.to_ascii_lowercase();
        let read_only = upstream
            .options
            .read_only_tools
            .iter()
            .any(|t| *t == exposed_lc || aliases.contains(t));
        let trusted = ToolAnnotations {
            title: advertised.title.clone(),
            read_only: read_only.then_some(true),
            ..ToolAnnotations::default()
        };
        Ok(UpstreamTool {
            upstream,
            upstream_name,
            exposed,
            description,
            input_schema,
            output_schema,
            validator,
            aliases,
            trusted,
            advertised,
            meanings,
            pin,
        })
    }

    fn violations(&self, args: &Value) -> Vec<Violation> {
        if self.validator.is_valid(args) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for error in self.validator.iter_errors(args) {
            push_violations(&error, &mut out);
        }
        out
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let violations = self.violations(&args);
        if !violations.is_empty() {
            return Err(ToolError::invalid_args(violations));
        }
        let Value::Object(arguments) = args else {
            return Err(ToolError::invalid_args(vec![Violation::new(
                ViolationKind::WrongType(dsh_tools::SchemaType::Object),
                "arguments",
                "must be an object",
            )]));
        };
        let upstream = &self.upstream;
        // A start (or a restart) counts against the call's time.
        let started = Instant::now();
        let timeout = upstream.options.call_timeout;
        let connection = tokio::time::timeout(timeout, upstream.connection())
            .await
            .map_err(|_| {
                ToolError::new(
                    ErrorCode::ToolTimeout,
                    format!(
                        "upstream {:?} did not finish starting within the call's {} ms (mcp.callTimeoutMs)",
                        upstream.name(),
                        timeout.as_millis()
                    ),
                )
            })??;
        let left = timeout.saturating_sub(started.elapsed());
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(self.upstream_name.clone()).with_arguments(arguments),
        ));
        let peer = connection.peer().clone();
        let handle = match peer
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                let cause = upstream
                    .failed(
                        &connection,
                        &format!("could not be sent tools/call: {}", plain(&e)),
                    )
                    .await;
                return Err(upstream.fault(cause));
            }
        };
        let downstream = CALL.try_with(|call| call.downstream()).ok().flatten();
        let progress = ProgressRoute::new(
            &upstream.progress,
            handle.progress_token.clone(),
            downstream,
        );
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let outcome = tokio::select! {
            response = handle.await_response() => Some(response),
            _ = cancelled(ctx.cancel.as_ref()) => None,
            _ = tokio::time::sleep(left) => {
                guard.send("timeout");
                self.upstream.clone().check_alive(connection.clone());
                return Err(ToolError::new(
                    ErrorCode::ToolTimeout,
                    format!(
                        "upstream {:?} did not answer tools/call {:?} within {} ms (mcp.callTimeoutMs); the call was cancelled upstream",
                        upstream.name(), self.upstream_name, timeout.as_millis()
                    ),
                ));
            }
        };
        drop(progress);
        let Some(response) = outcome else {
            guard.send("cancelled by the client");
            return Err(ToolError::new(ErrorCode::Aborted, "the call was cancelled"));
        };
        guard.id = None;
        match response {
            Ok(ServerResult::CallToolResult(result)) => {
                upstream.call_completed();
                Ok(ToolOutput {
                    content: result.content.into_iter().map(our_block).collect(),
                    structured_content: result.structured_content,
                    is_error: result.is_error.unwrap_or(false),
                })
            }
            Ok(ServerResult::InputRequiredResult(_)) => Err(upstream.fault(format!(
                "asked for input during tools/call {:?} (a multi-round request), which dsh does not forward",
                self.upstream_name
            ))),
            Ok(ServerResult::CreateTaskResult(_)) => Err(upstream.fault(format!(
                "answered tools/call {:?} with a task, which dsh does not follow",
                self.upstream_name
            ))),
            Ok(_) => Err(upstream.fault(format!(
                "answered tools/call {:?} with something that is not a tool result",
                self.upstream_name
            ))),
            Err(ServiceError::McpError(e)) => Err({
                // An answer all the same: the server hears and speaks.
                upstream.call_completed();
                upstream.fault(format!(
                "refused tools/call {:?}: {} (JSON-RPC error {})",
                self.upstream_name, e.message, e.code.0
            ))
            }),
            Err(e) => {
                let what = match e {
                    ServiceError::TransportClosed => format!(
                        "closed its connection during tools/call {:?}",
                        self.upstream_name
                    ),
                    e => format!(
                        "failed during tools/call {:?} ({})",
                        self.upstream_name,
                        plain(&e)
                    ),
                };
                let cause = upstream.failed(&connection, &what).await;
                Err(upstream.fault(cause))
            }
        }
    }
}

/// Our content block from rmcp's: the same wire shape, every field kept.
fn our_block(block: rmcp::model::ContentBlock) -> ContentBlock {
    serde_json::to_value(&block)
        .ok()
        .and_then(|wire| serde_json::from_value(wire).ok())
        .unwrap_or_else(|| {
            ContentBlock::text("[dsh: the upstream sent a content block of an unknown kind]")
        })
}

/// The routes of the calls in flight, and progress that came before its route.
#[derive(Default)]
struct ProgressRoutes {
    routes: HashMap<ProgressToken, Arc<Route>>,
    early: HashMap<ProgressToken, Vec<ProgressNotificationParam>>,
}

/// Upstream progress tokens whose notifications are kept before their route.
const EARLY_PROGRESS_KEPT: usize = 64;

/// Sends one upstream progress notification to the call's client.
async fn forward_progress(route: &Route, params: ProgressNotificationParam) {
    // Notifications may be handled out of order; the client must see
    // progress only grow, so a stale one is dropped.
    let mut last = route.last.lock().await;
    if last.is_some_and(|last| params.progress <= last) {
        return;
    }
    *last = Some(params.progress);
    let mut forwarded = params;
    forwarded.progress_token = route.downstream.token.clone();
    let _ = route.downstream.peer.notify_progress(forwarded).await;
}

/// Routes one call's upstream progress to its client while it runs.
struct ProgressRoute<'a> {
    routes: &'a Mutex<ProgressRoutes>,
    token: Option<ProgressToken>,
}

impl<'a> ProgressRoute<'a> {
    fn new(
        routes: &'a Mutex<ProgressRoutes>,
        token: ProgressToken,
        downstream: Option<Downstream>,
    ) -> Self {
        match downstream {
            Some(downstream) => {
                let route = Arc::new(Route {
                    downstream,
                    last: tokio::sync::Mutex::new(None),
                });
                let early = {
                    let mut all = lock(routes);
                    all.routes.insert(token.clone(), route.clone());
                    all.early.remove(&token)
                };
                if let Some(early) = early {
                    tokio::spawn(async move {
                        for params in early {
                            forward_progress(&route, params).await;
                        }
                    });
                }
                ProgressRoute {
                    routes,
                    token: Some(token),
                }
            }
            // No client to tell; what the upstream sends is dropped at the end.
            None => ProgressRoute {
                routes,
                token: Some(token),
            },
        }
    }
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            let mut all = lock(self.routes);
            all.routes.remove(&token);
            all.early.remove(&token);
        }
    }
}

/// Sends `notifications/cancelled` for a request still in flight when the
/// call ends early (its future dropped, cancelled, timed out).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl CancelOnDrop {
    fn send(&mut self, reason: &str) {
        if let Some(id) = self.id.take() {
            // Dropped outside a runtime: nothing can be sent, and nothing panics.
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let peer = self.peer.clone();
            let reason = reason.to_owned();
            runtime.spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
                    .await;
            });
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.send("the call was dropped");
    }
}

/// A jsonschema error in our message format (`"path" must be a string`,
/// `missing required property "a.b"`, `"x" is not a declared property`),
/// jsonschema's own wording for the keywords ours has no words for.
fn push_violations(error: &jsonschema::ValidationError<'_>, out: &mut Vec<Violation>) {
    use dsh_tools::SchemaType;
    use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
    use jsonschema::JsonType;
    let path = instance_path(error.instance_path());
    let child = |name: &str| {
        if path == "arguments" {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    let masked = error.masked().to_string();
    let theirs = masked.strip_prefix("value ").unwrap_or(&masked);
    let violation = match error.kind() {
        Kind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            Violation::new(ViolationKind::Missing, &child(&name), "")
        }
        Kind::Type {
            kind: TypeKind::Single(ty),
        } => {
            let ours = match ty {
                JsonType::String => Some(SchemaType::String),
                JsonType::Number => Some(SchemaType::Number),
                JsonType::Integer => Some(SchemaType::Integer),
                JsonType::Boolean => Some(SchemaType::Boolean),
                JsonType::Object => Some(SchemaType::Object),
                JsonType::Array => Some(SchemaType::Array),
                JsonType::Null => None,
            };
            match ours {
                Some(ty) => Violation::new(ViolationKind::WrongType(ty), &path, ty.must_be()),
                None => Violation::new(ViolationKind::Schema, &path, theirs),
            }
        }
        Kind::Enum { .. } | Kind::Constant { .. } => {
            Violation::new(ViolationKind::NotOneOf, &path, theirs)
        }
        Kind::AdditionalProperties { unexpected } | Kind::UnevaluatedProperties { unexpected } => {
            for key in unexpected {
                out.push(Violation::new(
                    ViolationKind::Undeclared,
                    &child(key),
                    "is not a declared property",
                ));
            }
            return;
        }
        Kind::Minimum { limit } => Violation::new(
            ViolationKind::OutOfRange,
            &path,
            &format!("must be at least {limit}"),
        ),
        Kind::Maximum { limit } => Violation::new(
            ViolationKind::OutOfRange,
            &path,
            &format!("must be at most {limit}"),
        ),
        Kind::ExclusiveMinimum { .. }
        | Kind::ExclusiveMaximum { .. }
        | Kind::MinLength { .. }
        | Kind::MaxLength { .. }
        | Kind::MinItems { .. }
        | Kind::MaxItems { .. } => Violation::new(ViolationKind::OutOfRange, &path, theirs),
        _ => Violation::new(ViolationKind::Schema, &path, theirs),
    };
    out.push(violation);
}

/// `a.b`, `tags[1]`, `servers[1].host`; `arguments` for the whole object.
fn instance_path(location: &jsonschema::paths::Location) -> String {
    let mut out = String::new();
    for segment in location {
        match segment {
            jsonschema::paths::LocationSegment::Property(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&key);
            }
            jsonschema::paths::LocationSegment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        "arguments".to_owned()
    } else {
        out
    }
}

impl ToolDefinition for UpstreamTool {
    fn name(&self) -> &str {
        &self.exposed
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self, _dialect: Dialect) -> Value {
        self.input_schema.clone()
    }

    /// The content alone, for a caller that asks for no more: the
    /// upstream's own failure becomes a `TOOL_ERROR` with its text.
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let output = self.call(args, ctx).await?;
            if !output.is_error {
                return Ok(output.content);
            }
            let text: Vec<&str> = output
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            Err(ToolError::new(ErrorCode::ToolError, text.join("\n")))
        })
    }

    fn has_output(&self) -> bool {
        true
    }

    fn execute_output(
        self: Arc<Self>,
        args: ToolArguments,
        ctx: ToolContext,
    ) -> OutputFuture<'static> {
        Box::pin(async move {
            let args = args
                .into_value()
                .map_err(|violation| ToolError::invalid_args(vec![violation]))?;
            self.call(args, ctx).await
        })
    }

    fn annotations(&self) -> ToolAnnotations {
        self.trusted.clone()
    }

    fn advertised_annotations(&self) -> ToolAnnotations {
        self.advertised.clone()
    }

    fn output_schema(&self) -> Option<Value> {
        self.output_schema.clone()
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn argument_meanings(&self) -> Option<&ArgumentMeanings> {
        self.meanings.as_ref()
    }

    fn definition_hold(&self) -> Option<DefinitionHold> {
        let (pins, digest) = self.pin.as_ref()?;
        let name = self.aliases.first()?;
        let change = pins.hold(name, digest)?;
        let (pins, accepted_name, digest) = (pins.clone(), name.clone(), digest.clone());
        Some(DefinitionHold {
            change: format!("{change}; `dsh pins accept {name}` accepts it"),
            accept: Arc::new(move || pins.accept(&accepted_name, &digest)),
        })
    }

    fn check_arguments(&self, args: &Value) -> Result<(), ToolError> {
        let violations = self.violations(args);
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ToolError::invalid_args(violations))
        }
    }
}

/// Fires when `token` does; never without one.
async fn cancelled(token: Option<&dsh_tools::CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_paths_are_cut_from_messages() {
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::A<reqwest::Client>>] error: Client error: refused";
        assert_eq!(
            plain(&raw),
            "Send message error Transport error: Client error: refused"
        );
        assert_eq!(plain(&"nothing to cut [x]"), "nothing to cut [x]");
    }

    #[test]
    fn errors_show_only_the_origin_of_an_endpoint() {
        assert_eq!(
            origin("http://127.0.0.1:8080/mcp?key=s3cret"),
            "http://127.0.0.1:8080"
        );
        assert_eq!(origin("http://host"), "http://host");
        assert_eq!(origin("http://user:pw@host/x"), "http://host");
    }

    #[test]
    fn restarts_back_off() {
        let delays: Vec<u128> = (1..=5).map(|n| backoff(n).as_millis()).collect();
        assert_eq!(delays, [0, 250, 500, 1000, 30_000]);
    }
}
