//! Running shell commands for a model, locally, leaving nothing behind.
//!
//! An [`Executor`] runs each command in a fresh `bash --noprofile --norc -c`
//! and turns what it printed into the text a model reads
//! ([`RunOutput::model_text`]). It also runs background tasks that the model
//! polls ([`Executor::spawn_background`], [`Executor::read_output`],
//! [`Executor::kill`]).
//!
//! # Running a command
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! use dsh_tool_bash::{Executor, ExecutorConfig, RunRequest};
//!
//! let executor = Executor::new(ExecutorConfig::default())?;
//! let output = executor.run(RunRequest::new("echo hello; echo oops >&2; exit 3")).await?;
//! assert_eq!(output.model_text(), "hello\n[stderr]\noops\n[exit code: 3]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```
//!
//! A non-zero exit is a normal [`RunOutput`], not an error. Errors
//! ([`ExecError`]) are for calls that could not run or did not finish: a missing
//! working directory, `bash` not starting, cancellation.
//!
//! Each call gets:
//!
//! * a new session and process group (`setsid`), so no controlling terminal;
//! * stdin connected to `/dev/null`: a command that reads it sees end-of-file
//!   at once;
//! * the executor's environment minus every variable whose name contains
//!   `KEY`, `SECRET`, `TOKEN` or `PASSWORD` (in any case), minus `BASH_ENV` and
//!   `ENV` (startup files), plus `NO_COLOR=1`, `TERM=dumb`, `PAGER=cat`,
//!   `GIT_PAGER=cat` and `GIT_TERMINAL_PROMPT=0`;
//! * `SIGKILL` if the thread that spawned it dies (`PR_SET_PDEATHSIG`);
//! * the working directory `workdir`, absolute or relative to
//!   [`ExecutorConfig::cwd`].
//!
//! # What the model sees
//!
//! [`RunOutput::model_text`] renders, in this order:
//!
//! 1. stdout; then, when stderr is not empty, a newline if needed, `[stderr]`,
//!    a newline and stderr; `(no output)` when both are empty;
//! 2. one line per truncated stream: `[stdout truncated; full output: PATH]`;
//! 3. `[invalid UTF-8 in stdout replaced with U+FFFD]` when bytes were replaced;
//! 4. `[timeout clamped to Nms]` when the requested timeout was over the maximum;
//! 5. `[timed out after Nms]` when the timeout fired;
//! 6. under a sandbox, when the output says a write or a connection was
//!    refused (`Permission denied`, `Operation not permitted`):
//!    `[sandbox: write to PATH denied under MODE; …]` (or, with no path
//!    named, a generic line), pointing to `sandbox_permissions:
//!    "require_escalated"`;
//! 7. last, always: `[exit code: N]` or `[killed by signal: SIGNAME]`.
//!
//! The status line is there for exit code 0 too, unlike in the reference
//! implementation: a model must never see an empty or null status, and a
//! presenter reads the exit code back from that last line.
//!
//! Escape sequences (colours, cursor movement, OSC titles and links) are
//! removed, and invalid UTF-8 is replaced by U+FFFD.
//!
//! # Long output
//!
//! The model sees at most [`ExecutorConfig::max_output_bytes`] bytes of text
//! per stream. Past that it sees the first quarter and the last three quarters
//! of the budget, with `[… N bytes omitted …]` on a line between them; cuts
//! fall on character boundaries. A stream exactly at the budget is shown
//! whole. The budget counts bytes of text after escape sequences are removed
//! and invalid bytes replaced.
//!
//! The raw bytes of a truncated stream are kept in a spill file (mode 0600) in
//! a directory of the executor's own (mode 0700, under the system's temporary
//! directory, [`Executor::spill_dir`]), up to
//! [`ExecutorConfig::spill_cap_bytes`]. The directory is removed when the last
//! clone of the executor is dropped.
//!
//! Memory stays bounded whatever a command prints: per stream, a head buffer
//! and a tail ring of the budget's size, up to the budget of raw bytes until
//! the spill file opens, a read buffer of at most 256 KiB, and at most 16
//! reads queued for the spill writer (about 5 MiB in all).
//!
//! # Timeouts and cancellation
//!
//! A call runs for [`RunRequest::timeout`] (default
//! [`ExecutorConfig::default_timeout`], clamped to
//! [`ExecutorConfig::max_timeout`]). When it fires, every process of the call
//! gets `SIGTERM`; whatever is still alive [`ExecutorConfig::kill_grace`] later
//! gets `SIGKILL`. The output printed so far is kept.
//!
//! When [`RunRequest::cancel`] fires, every process of the call is killed at
//! once and [`Executor::run`] returns an [`ErrorKind::Cancelled`] error.
//!
//! # No process left behind
//!
//! A call owns every process it starts: when the call ends — its shell
//! exited, the timeout fired, it was cancelled, or its future was dropped —
//! every process it started and that is still running is killed, including
//! ones that called `setsid`, changed their process group or double-forked.
//! Background tasks are the same, ended by [`Executor::kill`], by their shell
//! exiting, or by the executor being dropped. Run a server with
//! [`Executor::spawn_background`], not with `&` in a foreground call.
//!
//! How the executor finds a call's processes is set by
//! [`ExecutorConfig::containment`]:
//!
//! * **cgroup v2** ([`Containment::Cgroup`], chosen by [`Containment::Auto`]
//!   when possible). The executor creates a cgroup `dsh-bash-PID-…` below its
//!   own, and one child cgroup per call (empty ones are reused). The shell is
//!   born inside it (`clone3` with `CLONE_INTO_CGROUP`), so everything it
//!   starts is born inside too. Ending a call writes `1` to `cgroup.kill`,
//!   which kills the whole cgroup atomically, forks in flight included. This
//!   needs a writable cgroup v2 hierarchy with `cgroup.kill` (Linux 5.14+):
//!   root, or a delegated subtree such as a systemd user service.
//! * **Process tree** ([`Containment::ProcessTree`], the fallback). The
//!   executor walks `/proc`: members are the shell, processes in its session or
//!   process group, processes whose environment carries the call's marker
//!   variable `DSH_BASH_CALL_<executor>=<call>`, processes seen as members
//!   before, and their children. Killing freezes every member with `SIGSTOP`,
//!   rescans until nothing new appears, then sends `SIGKILL`.
//!
//! Where `clone3` is refused (seccomp filters of some container runtimes),
//! the shell joins its cgroup itself between `fork` and `exec`.
//! If a cgroup cannot be joined at the first spawn, the executor switches to
//! the process tree for good ([`Executor::containment`] tells which is in use).
//!
//! # Caveats
//!
//! * Process-tree containment loses a process that, all at once, leaves the
//!   session (`setsid`), clears or rewrites its environment (`env -i`), and is
//!   orphaned before the call ends. It also cannot read the environment of
//!   processes that changed user (`sudo`).
//! * A privileged command can move itself out of its cgroup; nothing is
//!   contained against root deliberately escaping.
//! * If the host process is killed with `SIGKILL`, the shells die (parent-death
//!   signal) but their descendants are not killed by that. With
//!   [`ExecutorConfig::watchdog`] on (`dsh` turns it on), a watchdog process
//!   that outlives the host kills them: it waits on a pipe only the host
//!   holds, and when the host is gone writes `cgroup.kill` of the executor's
//!   cgroup, freezes and kills every process carrying the executor's marker
//!   variable, and removes the spill files. Without it, the next executor
//!   set up on the machine removes the stale cgroups and kills what they
//!   still hold; the process-tree fallback cannot. An executor made with
//!   [`Executor::deferred`] sets all this up (spill directory, cgroup,
//!   watchdog, the sweeps of stale ones) before its first command instead
//!   of at creation, so a host that answers before it runs anything does
//!   not wait for it.
//! * The parent-death signal fires when the *thread* that spawned the shell
//!   exits. Tokio's runtime worker threads live as long as the runtime; do not
//!   call the executor from a thread that ends before the calls do (e.g. from
//!   `spawn_blocking`).
//! * Spawning forks the host process (`clone3` without `CLONE_VM`) rather
//!   than using `posix_spawn`'s `vfork`: on an idle machine that costs about
//!   0.1–0.3 ms per call, more on a loaded one. Without `clone3`, joining a
//!   cgroup costs about one RCU grace period (about 5 ms here) per call.
//! * The executor does not make the host process a child subreaper: it would
//!   then have to reap every orphan of the host, including ones it cannot
//!   tell apart from children that others in the process wait for.
//! * After the shell exits and its remaining processes are killed, the
//!   executor waits at most two seconds for the pipes to close; a process that
//!   escaped containment and holds them only costs that wait.
//! * Spill files stay until the executor is dropped; the cap is per stream.
//!   A spill file is written by a thread of its own; when the disk is slower
//!   than the command, reading the pipe waits for it (at most 16 reads are
//!   queued; the waiting blocks the Tokio worker thread), which slows the
//!   command down rather than growing memory.
//! * Dropping the executor blocks up to about a second while background
//!   tasks die.
//! * Background tasks and the processes' exit are driven by the Tokio runtime
//!   the calls are made on; the executor must be used from within one.

use std::ffi::{CString, OsStr, OsString};
use std::fs::{self, DirBuilder};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::unix::pipe;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::contain::{marker_name, Backend, Contained, Containment, Prepared};
use crate::error::{ErrorKind, ExecError};
use crate::output::{Spill, StreamCapture, StreamOutput};
use crate::process::{output_pipe, Proc, RawChild, ReadBuf, DRAIN_LIMIT, KILL_WAIT};
use crate::sys;
use crate::task::{TaskId, TaskLog, Tasks};
use crate::watchdog::Watchdog;

pub use crate::process::Exit;

/// Settings of an [`Executor`]; build it with
/// `ExecutorConfig { field: value, ..ExecutorConfig::default() }`.
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// Working directory of commands without `workdir`, and base of relative
    /// ones. Default: the process's current directory.
    pub cwd: PathBuf,
    /// Timeout of a call that asks for none. Default: 120 s.
    pub default_timeout: Duration,
    /// Largest timeout a call can have; larger requests are clamped. Default: 600 s.
    pub max_timeout: Duration,
    /// Time between `SIGTERM` and `SIGKILL` when a call times out. Default: 3 s.
    pub kill_grace: Duration,
    /// Bytes of text per stream shown to the model. Default: 64 000.
    pub max_output_bytes: usize,
    /// Largest spill file, per stream. Default: 256 MiB.
    pub spill_cap_bytes: u64,
    /// Most background tasks running at once. Default: 64.
    pub max_background_tasks: usize,
    /// Most live tasks (running background tasks and live interactive
    /// sessions) one agent may hold at once, so that one of several agents
    /// sharing an executor cannot take every slot. Default: no limit beyond
    /// the two above.
    pub max_tasks_per_agent: usize,
    /// Longest wait of [`Executor::read_output`]. Default: 30 s.
    pub max_wait: Duration,
    /// Most interactive sessions live at once; starting one more closes the
    /// least recently used idle one. Default: 64.
    pub max_sessions: usize,
    /// How long a session's output must pause before a start or a write
    /// returns early. Default: 150 ms.
    pub session_quiet: Duration,
    /// How no process is left behind. Default: [`Containment::Auto`].
    pub containment: Containment,
    /// Start a watchdog process that, if the host dies without cleaning up
    /// (killed with `SIGKILL`), kills what the executor started and removes
    /// its spill files. Default: `false`; a long-lived host (`dsh mcp`)
    /// turns it on. See the *Caveats* of the no-survivor section.
    pub watchdog: bool,
    /// Keep the spill directory when the executor goes away, so that the
    /// paths a one-shot host printed (`dsh call`) stay readable. A kept
    /// directory is removed by the first executor created after
    /// [`KEPT_SPILL_LIFETIME`] once its owner process has exited. Default:
    /// `false` (removed with the executor).
    pub keep_spill_files: bool,
    /// Variables set for every command, over the scrubbed environment and
    /// the quiet settings (Claude Code's `env` setting). Default: none.
    pub env: Vec<(String, String)>,
    /// Landlock confinement of every command (`dsh-sandbox`); `None` (the
    /// default) or `danger-full-access` for none. A confined command gets a
    /// private temp directory as `TMPDIR`.
    pub sandbox: Option<dsh_sandbox::SandboxPolicy>,
    /// The other working directories (beside `cwd`) a `workspace-write`
    /// sandbox lets commands write under.
    pub sandbox_dirs: Vec<PathBuf>,
    /// Whether a call asking for [`Confine::ReadOnly`] gets it. Default:
    /// `true` (the settings' `sandbox.confineReadOnly`).
    pub confine_read_only: bool,
    /// Whether a `workspace-write` sandbox uses a mount namespace where the
    /// kernel gives one (the working directory writable as a whole, the
    /// protected entries bound read-only); `false` keeps the entry-by-entry
    /// layout. Default: `true`. `DSH_SANDBOX_NO_NAMESPACES=1` forces `false`.
    pub mount_namespaces: bool,
    /// Where the files `Read` deny rules name come from, asked at each
    /// call (rules change during a session). The kernel keeps them from
    /// being read by every command but an approved escalation. Default:
    /// none.
    pub read_denials: Option<ReadDenialsSource>,
    /// The filtering proxy through which commands confined by the
    /// configured sandbox (with its network off) reach the domains the
    /// settings allow: its ports become reachable, its variables are set,
    /// and what it refused ends the call's text. Default: none.
    pub network_proxy: Option<NetworkProxy>,
}

/// A filtering proxy for confined commands (see
/// [`ExecutorConfig::network_proxy`]).
#[derive(Clone)]
pub struct NetworkProxy {
    /// Loopback TCP ports a confined command may connect to.
    pub ports: Vec<u16>,
    /// The variables that send a command's traffic to the proxy, naming
    /// `client` (one call) so what it refuses can be told to that call.
    pub env: PerClient,
    /// What the proxy refused for `client` since last asked: (host, why).
    pub denials: PerClient,
    /// Called with `client` when a command that reaches the proxy starts,
    /// in the task of the call that runs it (so what the proxy asks later
    /// can go to that call's client).
    pub started: Option<OnClient>,
    /// Called with `client` and a future that ends when the shell of the
    /// command that reaches the proxy as `client` has exited (its call or
    /// background task is over): the proxy forgets the client, so a
    /// process that outlived it cannot use the proxy on.
    pub ended: Option<OnClientEnd>,
    /// Serves listeners at `ports` made in a network namespace with only
    /// loopback, until the future given ends (the executor is gone). With
    /// it, and where the kernel gives network namespaces, confined commands
    /// join that namespace (made at their first start, one per executor):
    /// the proxy is all they reach (the stronger mechanism). Without,
    /// Landlock's port rule alone keeps them to the ports.
    pub serve: Option<ServeListeners>,
    /// In the network namespace, TCP is left to the namespace: commands may
    /// listen on loopback and reach their own and each other's servers
    /// (Claude Code's `allowLocalBinding`). Without the namespace: no
    /// effect (Landlock cannot tell loopback from the world).
    pub local_binding: bool,
}

/// Serves the listeners of the commands' network namespace, by port, until
/// the future ends (see [`NetworkProxy::serve`]); an error when they
/// cannot be served.
pub type ServeListeners =
    Arc<dyn Fn(Vec<(u16, std::net::TcpListener)>, ServingEnds) -> io::Result<()> + Send + Sync>;

/// Told a client of the filtering proxy and when its command ends (see
/// [`NetworkProxy::ended`]).
pub type OnClientEnd = Arc<dyn Fn(&str, ServingEnds) + Send + Sync>;

/// Ends when the listeners are to be served no longer.
pub type ServingEnds = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Pairs of text for one client of the filtering proxy (a call).
pub type PerClient = Arc<dyn Fn(&str) -> Vec<(String, String)> + Send + Sync>;

/// Told the name of one client of the filtering proxy (a call).
pub type OnClient = Arc<dyn Fn(&str) + Send + Sync>;

/// What a command's environment depends on beyond the configuration.
#[derive(Clone, Copy)]
struct ChildEnv<'a> {
    /// Confined: its `TMPDIR` is the private temp directory.
    confined: bool,
    /// It reaches the network through the filtering proxy, as this client.
    proxy: Option<&'a str>,
}

impl std::fmt::Debug for NetworkProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkProxy")
            .field("ports", &self.ports)
            .finish_non_exhaustive()
    }
}

/// Gives the files `Read` deny rules name now (see
/// [`ExecutorConfig::read_denials`]).
#[derive(Clone)]
pub struct ReadDenialsSource(Arc<dyn Fn() -> Option<dsh_sandbox::ReadDenials> + Send + Sync>);

impl ReadDenialsSource {
    /// A source calling `f`.
    pub fn new(f: impl Fn() -> Option<dsh_sandbox::ReadDenials> + Send + Sync + 'static) -> Self {
        ReadDenialsSource(Arc::new(f))
    }

    /// The denials now.
    pub fn get(&self) -> Option<dsh_sandbox::ReadDenials> {
        (self.0)()
    }
}

impl std::fmt::Debug for ReadDenialsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadDenialsSource")
    }
}

/// How long a kept spill directory ([`ExecutorConfig::keep_spill_files`])
/// outlives its executor at least: a day.
pub const KEPT_SPILL_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            kill_grace: Duration::from_secs(3),
            max_output_bytes: 64_000,
            spill_cap_bytes: 256 * 1024 * 1024,
            max_background_tasks: 64,
            max_tasks_per_agent: usize::MAX,
            max_wait: Duration::from_secs(30),
            max_sessions: 64,
            session_quiet: Duration::from_millis(150),
            containment: Containment::Auto,
            watchdog: false,
            keep_spill_files: false,
            env: Vec::new(),
            sandbox: None,
            sandbox_dirs: Vec::new(),
            confine_read_only: true,
            mount_namespaces: true,
            read_denials: None,
            network_proxy: None,
        }
    }
}

/// How one command is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Confine {
    /// Under the sandbox the configuration asks for (none when it asks for
    /// none).
    #[default]
    Configured,
    /// Read-only with the network off, whatever the configuration says: the
    /// call runs only because the analysis of its text judged it read-only,
    /// so the kernel holds that promise instead of the analysis. Where the
    /// kernel cannot confine, or [`ExecutorConfig::confine_read_only`] is
    /// off, as [`Confine::Configured`].
    ReadOnly,
    /// Outside any sandbox (an approved escalation).
    Unconfined,
}

/// One foreground command.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunRequest {
    /// The command line, run by `bash -c`.
    pub command: String,
    /// Working directory: absolute, or relative to [`ExecutorConfig::cwd`].
    pub workdir: Option<String>,
    /// Timeout; `None` or zero for the default, clamped to the maximum.
    pub timeout: Option<Duration>,
    /// Cancels the call: its processes are killed and `run` returns an error.
    pub cancel: CancellationToken,
    /// Counts the bytes of output read so far (both streams), for a caller
    /// that reports progress while the command runs.
    pub progress: Option<dsh_tools::ToolProgress>,
    /// How the command is confined. Default: [`Confine::Configured`].
    pub confine: Confine,
    /// Sees each chunk of output (both streams) as it is read.
    pub live: Option<dsh_tools::LiveOutput>,
}

impl RunRequest {
    /// A request for `command` with the defaults.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            ..Self::default()
        }
    }

    /// Sets the working directory.
    pub fn workdir(mut self, workdir: impl Into<String>) -> Self {
        self.workdir = Some(workdir.into());
        self
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Shows the output live, chunk by chunk, while the command runs.
    pub fn live(mut self, live: dsh_tools::LiveOutput) -> Self {
        self.live = Some(live);
        self
    }

    /// Runs outside the sandbox (an approved escalation) when `unconfined`.
    pub fn unconfined(mut self, unconfined: bool) -> Self {
        if unconfined {
            self.confine = Confine::Unconfined;
        }
        self
    }

    /// Sets how the command is confined.
    pub fn confine(mut self, confine: Confine) -> Self {
        self.confine = confine;
        self
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Counts the bytes of output into `progress` while the command runs.
    pub fn progress(mut self, progress: dsh_tools::ToolProgress) -> Self {
        self.progress = Some(progress);
        self
    }
}

/// The outcome of a foreground command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutput {
    /// Standard output, as shown to the model.
    pub stdout: StreamOutput,
    /// Standard error, as shown to the model.
    pub stderr: StreamOutput,
    /// How the shell ended.
    pub exit: Exit,
    /// Whether the timeout fired.
    pub timed_out: bool,
    /// The timeout that applied.
    pub timeout: Duration,
    /// Whether the requested timeout was over the maximum and was lowered to it.
    pub timeout_clamped: bool,
    /// The directory the command ran in.
    pub cwd: PathBuf,
    /// Wall time from spawn to the end of the call.
    pub elapsed: Duration,
    /// The sandbox mode the command ran under, if any.
    pub sandbox: Option<dsh_sandbox::SandboxMode>,
    /// The files `Read` deny rules named, which the kernel kept it from
    /// reading (to name a refused read as such).
    pub(crate) denials: Option<dsh_sandbox::ReadDenials>,
    /// Connections the filtering proxy refused during the call: (host, why).
    pub network_denials: Vec<(String, String)>,
}

impl RunOutput {
    /// The text the model reads (format in the [module docs](crate::executor#what-the-model-sees)).
    pub fn model_text(&self) -> String {
        let mut text = self.stdout.text.clone();
        if !self.stderr.text.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[stderr]\n");
            text.push_str(&self.stderr.text);
        }
        if text.is_empty() {
            text.push_str("(no output)");
        }
        let mut notes = Vec::new();
        for (name, stream) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            if stream.truncated() {
                notes.push(truncation_note(name, stream));
            }
        }
        let lossy: Vec<&str> = [("stdout", &self.stdout), ("stderr", &self.stderr)]
            .into_iter()
            .filter(|(_, s)| s.lossy)
            .map(|(name, _)| name)
            .collect();
        if !lossy.is_empty() {
            notes.push(format!(
                "[invalid UTF-8 in {} replaced with U+FFFD]",
                lossy.join(" and ")
            ));
        }
        if self.timeout_clamped {
            notes.push(format!(
                "[timeout clamped to {}ms]",
                self.timeout.as_millis()
            ));
        }
        if self.timed_out {
            notes.push(format!("[timed out after {}ms]", self.timeout.as_millis()));
        }
        if let Some(note) = sandbox_note(
            self.sandbox,
            self.denials.as_ref(),
            &self.cwd,
            &self.stderr.text,
            &self.stdout.text,
        ) {
            notes.push(note);
        }
        for (host, why) in &self.network_denials {
            notes.push(format!("[sandbox: connection to {host} denied: {why}]"));
        }
        notes.push(self.exit.marker());
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&notes.join("\n"));
        text
    }
}

/// The line that says a failure was the sandbox's, so the model asks for
/// escalation instead of retrying: the path when the message names one.
fn sandbox_note(
    mode: Option<dsh_sandbox::SandboxMode>,
    denials: Option<&dsh_sandbox::ReadDenials>,
    cwd: &Path,
    stderr: &str,
    stdout: &str,
) -> Option<String> {
    static PATTERNS: std::sync::OnceLock<Vec<regex::Regex>> = std::sync::OnceLock::new();
    // Most specific first: a quoted path (coreutils, Python), then
    // `prog: PATH: Permission denied` (bash redirections), then no path.
    let patterns = PATTERNS.get_or_init(|| {
        [
            r"['‘]([^'’\n]+)['’]: (?:Permission denied|Read-only file system)",
            r"(?:Permission denied|Read-only file system): '([^'\n]+)'",
            r"(?m)^[^:\n]+: (?:line \d+: )?([^:\n]+): (?:Permission denied|Read-only file system)",
            r"(Permission denied|Operation not permitted|Read-only file system)",
        ]
        .iter()
        .map(|p| regex::Regex::new(p).expect("the sandbox denial patterns are valid"))
        .collect()
    });
    let escalate = "to run it unconfined, call again with sandbox_permissions: \"require_escalated\" and a justification";
    let read_denied = |path: &str| denials.is_some_and(|d| (d.matcher)(&lexical(&cwd.join(path))));
    // `head: cannot open 'x' for reading: …` names a read, not a write.
    static READ: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let read = READ.get_or_init(|| {
        regex::Regex::new(r"cannot open ['‘]([^'’\n]+)['’] for reading: Permission denied")
            .expect("the read denial pattern is valid")
    });
    for text in [stderr, stdout] {
        if let Some(caps) = read.captures(text) {
            let path = caps[1].trim();
            if read_denied(path) {
                return Some(format!(
                    "[sandbox: reading {path} is denied: a Read deny rule names it]"
                ));
            }
            if let Some(mode) = mode.map(dsh_sandbox::SandboxMode::as_str) {
                return Some(format!(
                    "[sandbox: reading {path} denied under {mode}; {escalate}]"
                ));
            }
        }
        for (i, re) in patterns.iter().enumerate() {
            let Some(caps) = re.captures(text) else {
                continue;
            };
            let path = caps[1].trim();
            if i < 3 && read_denied(path) {
                return Some(format!(
                    "[sandbox: reading {path} is denied: a Read deny rule names it]"
                ));
            }
            let Some(mode) = mode.map(dsh_sandbox::SandboxMode::as_str) else {
                continue;
            };
            return Some(if i < 3 {
                format!("[sandbox: write to {path} denied under {mode}; {escalate}]")
            } else {
                format!("[sandbox: an operation was denied under {mode} (a write outside the writable roots, or a network connection); {escalate}]")
            });
        }
    }
    None
}

/// `path` without `.` and `..` components, as deny rules match paths.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn truncation_note(name: &str, stream: &StreamOutput) -> String {
    match (&stream.spill, &stream.spill_error) {
        (Some(spill), _) if spill.complete => {
            format!("[{name} truncated; full output: {}]", spill.path.display())
        }
        (Some(spill), _) => format!(
            "[{name} truncated; its first {} bytes are in {}]",
            spill.bytes,
            spill.path.display()
        ),
        (None, Some(err)) => format!("[{name} truncated; full output could not be saved: {err}]"),
        (None, None) => format!("[{name} truncated]"),
    }
}

/// Runs shell commands for a model. Cheap to clone; clones share the spill
/// directory, the background tasks and the settings.
///
/// See the [module documentation](crate::executor).
#[derive(Debug, Clone)]
pub struct Executor {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) config: ExecutorConfig,
    /// `dsh-bash-<pid>-<nonce>`: names the spill directory and the cgroup.
    tag: String,
    /// Made with the rest of [`Ready`], before the first command starts.
    pub(crate) spill_dir: PathBuf,
    /// The spill directory made, the containment resolved and the watchdog
    /// running: set up by [`Executor::new`] at once, by
    /// [`Executor::deferred`] before the first command starts.
    ready: std::sync::OnceLock<Ready>,
    /// Held while [`Inner::ready`] sets up, so two first calls set up once.
    setting_up: Mutex<()>,
    /// `/dev/null`, the stdin of every command.
    dev_null: fs::File,
    /// Where `bash` was found, for which `PATH`.
    bash: Mutex<Option<(Option<OsString>, PathBuf)>>,
    next_call: AtomicU64,
    /// Background tasks and interactive sessions.
    tasks: Mutex<Tasks>,
    /// Sandbox layouts, rebuilt only when a directory they read changed.
    layouts: dsh_sandbox::LayoutCache,
    /// Child plans of recent layouts, keyed by their ruleset (and network
    /// and namespace), which the plan keeps alive.
    plans: Mutex<Vec<(PlanKey, Arc<dsh_sandbox::ChildPlan>)>>,
    /// The network namespace of commands that reach the filtering proxy,
    /// made at the first such command and kept (see [`NetworkProxy::serve`]).
    network_namespace: Mutex<Option<Arc<dsh_sandbox::NetworkNamespace>>>,
    /// Cancelled when the executor goes: the proxy stops serving the
    /// namespace's listeners.
    stop_serving: tokio_util::sync::CancellationToken,
}

/// Where a child's stdout and stderr go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outputs {
    /// One pipe each.
    Separate,
    /// One pipe for both, interleaved as written.
    Merged,
}

/// The descriptors a shell starts with.
struct ChildStdio<'a> {
    /// A terminal's slave end: stdin and controlling terminal. `None`:
    /// stdin is `/dev/null` and there is no terminal.
    terminal: Option<&'a OwnedFd>,
    stdout: &'a OwnedFd,
    stderr: &'a OwnedFd,
}

/// What an executor needs before its first command, and nothing before:
/// each piece costs system calls or a process (the sweeps of stale spill
/// directories and cgroups read every entry of the temporary directory and
/// of the cgroup hierarchy; the watchdog is a `sh` of its own).
#[derive(Debug)]
struct Ready {
    backend: Backend,
    /// Cleans up after a host that died without doing so (`config.watchdog`).
    watchdog: Option<Watchdog>,
}

/// A spawned shell, its output pipes and its containment.
pub(crate) struct Spawned {
    pub(crate) child: Proc,
    pub(crate) stdout: pipe::Receiver,
    /// `None` with [`Outputs::Merged`].
    pub(crate) stderr: Option<pipe::Receiver>,
    pub(crate) contained: Contained,
    /// How it is confined, if at all.
    pub(crate) sandbox: Option<Applied>,
}

/// What a cached child plan was made for: its ruleset (by address, kept
/// alive by the plan), the network, the mount namespace.
type PlanKey = (usize, bool, bool, bool);

/// The confinement a command got.
#[derive(Clone)]
pub(crate) struct Applied {
    /// The sandbox mode; `None` when only reads are denied.
    pub(crate) mode: Option<dsh_sandbox::SandboxMode>,
    /// The files `Read` deny rules named, held by the kernel.
    pub(crate) denials: Option<dsh_sandbox::ReadDenials>,
    pub(crate) plan: Arc<dsh_sandbox::ChildPlan>,
    /// It reaches the network through the filtering proxy.
    pub(crate) proxied: bool,
}

/// How the filtering proxy names a call's connections.
fn proxy_client(call: u64) -> String {
    format!("call-{call}")
}

impl Executor {
    /// Creates an executor: its spill directory and, with cgroup containment,
    /// its cgroup.
    ///
    /// # Errors
    ///
    /// When the spill directory cannot be created, or when
    /// [`Containment::Cgroup`] is asked for and unavailable.
    pub fn new(config: ExecutorConfig) -> io::Result<Executor> {
        let (tag, spill_dir) = create_spill_dir()?;
        let executor = Executor::with_names(config, tag, spill_dir)?;
        // On an error the executor drops here and removes the directory.
        let ready = executor.inner.set_up(false)?;
        let _ = executor.inner.ready.set(ready);
        Ok(executor)
    }

    /// Creates an executor that sets up its spill directory, its containment
    /// (cgroup) and its watchdog before its first command, not now: for a
    /// host that must answer quickly and may never run a command (an MCP
    /// server answering `initialize` and `tools/list`, `dsh policy check`).
    /// The watchdog still runs before anything it would clean up exists.
    /// [`Executor::set_up`] does it earlier.
    ///
    /// A failure to set up is the error of the first command (and of each
    /// later one, until setting up succeeds), with the cause
    /// [`Executor::new`] would have returned.
    ///
    /// # Errors
    ///
    /// When `/dev/null` cannot be opened.
    pub fn deferred(config: ExecutorConfig) -> io::Result<Executor> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tag = format!("dsh-bash-{}-{nanos:08x}d{n}", std::process::id());
        let spill_dir = std::env::temp_dir().join(&tag);
        Executor::with_names(config, tag, spill_dir)
    }

    fn with_names(config: ExecutorConfig, tag: String, spill_dir: PathBuf) -> io::Result<Executor> {
        let dev_null = match fs::File::open("/dev/null") {
            Ok(file) => file,
            Err(e) => {
                // Made by `new`, empty; absent for `deferred`.
                let _ = fs::remove_dir(&spill_dir);
                return Err(e);
            }
        };
        Ok(Executor {
            inner: Arc::new(Inner {
                config,
                tag,
                spill_dir,
                ready: std::sync::OnceLock::new(),
                setting_up: Mutex::new(()),
                dev_null,
                bash: Mutex::new(None),
                next_call: AtomicU64::new(1),
                tasks: Mutex::new(Tasks::default()),
                layouts: dsh_sandbox::LayoutCache::default(),
                plans: Mutex::new(Vec::new()),
                network_namespace: Mutex::new(None),
                stop_serving: tokio_util::sync::CancellationToken::new(),
            }),
        })
    }

    /// Sets up what [`Executor::deferred`] left for the first command: the
    /// spill directory, the containment and the watchdog. Does nothing once
    /// that is done.
    ///
    /// # Errors
    ///
    /// Those of [`Executor::new`]: the spill directory cannot be created,
    /// [`Containment::Cgroup`] is asked for and unavailable, the watchdog
    /// cannot start.
    pub fn set_up(&self) -> io::Result<()> {
        self.inner.ready().map(|_| ())
    }

    /// The settings.
    pub fn config(&self) -> &ExecutorConfig {
        &self.inner.config
    }

    /// The private directory holding spill files (removed on drop).
    pub fn spill_dir(&self) -> &Path {
        &self.inner.spill_dir
    }

    /// The containment mechanism in use: [`Containment::Cgroup`] or
    /// [`Containment::ProcessTree`].
    ///
    /// Sets up a [deferred](Executor::deferred) executor first;
    /// [`Containment::ProcessTree`] if that fails.
    pub fn containment(&self) -> Containment {
        self.inner
            .ready()
            .map_or(Containment::ProcessTree, |ready| ready.backend.kind())
    }

    /// Runs one command to its end (exit, timeout) and returns what it printed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Workdir`] when the working directory does not exist (the
    /// message names it), [`ErrorKind::Spawn`] when `bash` cannot be started,
    /// [`ErrorKind::Cancelled`] when `request.cancel` fired — after every
    /// process of the call was killed.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills every process of the call (without waiting
    /// for them to die) and keeps no output.
    pub async fn run(&self, request: RunRequest) -> Result<RunOutput, ExecError> {
        let inner = &self.inner;
        let cwd = inner.resolve_workdir(request.workdir.as_deref())?;
        let (timeout, timeout_clamped) = inner.timeout(request.timeout);
        if request.cancel.is_cancelled() {
            return Err(ExecError::cancelled());
        }
        let call = inner.next_call();
        let started = Instant::now();
        let Spawned {
            mut child,
            stdout,
            stderr,
            contained,
            sandbox: contained_mode,
        } = inner.spawn(
            &request.command,
            &cwd,
            call,
            Outputs::Separate,
            request.confine,
        )?;
        let mut guard = KillOnDrop {
            contained: &contained,
            armed: true,
        };

        let max = inner.config.max_output_bytes;
        let cap = inner.config.spill_cap_bytes;
        let mut out = StreamCapture::new(
            max,
            inner.spill_dir.join(format!("call-{call}-stdout.log")),
            cap,
        );
        let mut err = StreamCapture::new(
            max,
            inner.spill_dir.join(format!("call-{call}-stderr.log")),
            cap,
        );

        let mut status = None;
        let mut timed_out = false;
        let mut cancelled = false;
        {
            let pumps = async {
                let progress = request.progress.as_ref();
                let live = request.live.as_ref();
                let count = |bytes: &[u8]| {
                    if let Some(progress) = progress {
                        progress.add(bytes.len() as u64);
                    }
                    if let Some(live) = live {
                        live.emit(bytes);
                    }
                };
                tokio::join!(
                    pump(Some(stdout), |b| {
                        count(b);
                        out.push(b)
                    }),
                    pump(stderr, |b| {
                        count(b);
                        err.push(b)
                    })
                )
            };
            tokio::pin!(pumps);
            let mut pumps_done = false;
            let deadline = tokio::time::Instant::now() + timeout;

            // Until the shell exits, the timeout fires or the call is cancelled.
            loop {
                tokio::select! {
                    biased;
                    _ = request.cancel.cancelled() => { cancelled = true; break; }
                    waited = child.wait() => { status = Some(waited); break; }
                    _ = &mut pumps, if !pumps_done => pumps_done = true,
                    _ = tokio::time::sleep_until(deadline) => { timed_out = true; break; }
                }
            }

            if timed_out {
                // SIGTERM to everything, then up to the grace for all of it to end.
                contained.signal_all(sys::SIGTERM);
                let grace = tokio::time::Instant::now() + inner.config.kill_grace;
                loop {
                    if status.is_some() && contained.is_empty() {
                        break;
                    }
                    tokio::select! {
                        biased;
                        _ = request.cancel.cancelled() => { cancelled = true; break; }
                        waited = child.wait(), if status.is_none() => status = Some(waited),
                        _ = &mut pumps, if !pumps_done => pumps_done = true,
                        _ = tokio::time::sleep(Duration::from_millis(10)), if status.is_some() => {}
                        _ = tokio::time::sleep_until(grace) => break,
                    }
                }
            }

            // Whatever is left — stragglers of a finished shell, survivors of
            // the grace, everything on cancellation — is killed now.
            guard.armed = false;
            if !contained.is_empty() {
                guard.armed = !contained.kill_and_wait(KILL_WAIT).await;
            }
            if status.is_none() {
                status = tokio::time::timeout(KILL_WAIT, child.wait()).await.ok();
            }

            if !cancelled && !pumps_done {
                // The writers are dead; what they wrote is still in the pipes.
                let _ = tokio::time::timeout(DRAIN_LIMIT, &mut pumps).await;
            }
        }
        drop(guard);
        if cancelled {
            return Err(ExecError::cancelled());
        }
        let exit = match status {
            Some(Ok(status)) => Exit::from_status(status),
            Some(Err(e)) => {
                return Err(ExecError::io(ErrorKind::Io, "waiting for bash", e));
            }
            // Killed, and still not reaped after KILL_WAIT.
            None => Exit::Signal(sys::signal_name(sys::SIGKILL)),
        };
        Ok(RunOutput {
            stdout: out.finish(),
            stderr: err.finish(),
            exit,
            timed_out,
            timeout,
            timeout_clamped,
            cwd,
            elapsed: started.elapsed(),
            sandbox: contained_mode.as_ref().and_then(|a| a.mode),
            network_denials: match (&inner.config.network_proxy, &contained_mode) {
                (Some(proxy), Some(a)) if a.proxied => (proxy.denials)(&proxy_client(call)),
                _ => Vec::new(),
            },
            denials: contained_mode.and_then(|a| a.denials),
        })
    }
}

/// Kills the call's processes if the call ends early (its future dropped).
struct KillOnDrop<'a> {
    contained: &'a Contained,
    armed: bool,
}

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.contained.kill_all();
        }
    }
}

/// Reads `reader` to its end, handing each chunk to `sink`.
async fn pump<R: AsyncRead + Unpin>(reader: Option<R>, mut sink: impl FnMut(&[u8])) {
    let Some(mut reader) = reader else {
        return;
    };
    let mut buf = ReadBuf::new();
    loop {
        match reader.read(buf.space()).await {
            Ok(0) | Err(_) => return,
            Ok(n) => sink(buf.filled(n)),
        }
    }
}

impl Inner {
    /// What the first command needs, set up once.
    fn ready(&self) -> io::Result<&Ready> {
        if let Some(ready) = self.ready.get() {
            return Ok(ready);
        }
        let _one = self.setting_up.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ready) = self.ready.get() {
            return Ok(ready);
        }
        let ready = self.set_up(true)?;
        Ok(self.ready.get_or_init(|| ready))
    }

    /// The spill directory (made here when `make_dir`), the containment
    /// and the watchdog. On an error, what this made is removed.
    fn set_up(&self, make_dir: bool) -> io::Result<Ready> {
        if make_dir {
            let base = self.spill_dir.parent().unwrap_or(Path::new("/"));
            sweep_kept_spill_dirs(base, KEPT_SPILL_LIFETIME);
            DirBuilder::new().mode(0o700).create(&self.spill_dir)?;
            // The umask can only remove bits; make sure anyway.
            if let Err(e) = fs::set_permissions(&self.spill_dir, fs::Permissions::from_mode(0o700))
            {
                let _ = fs::remove_dir(&self.spill_dir);
                return Err(e);
            }
        }
        let undo = || {
            if make_dir {
                let _ = fs::remove_dir_all(&self.spill_dir);
            }
        };
        let backend = Backend::new(self.config.containment, &self.tag).inspect_err(|_| undo())?;
        let watchdog = if self.config.watchdog {
            // Kept spill files are not the watchdog's to remove.
            let spill = (!self.config.keep_spill_files).then_some(self.spill_dir.as_path());
            match Watchdog::start(backend.cgroup_root(), &marker_name(&self.tag), spill) {
                Ok(watchdog) => Some(watchdog),
                Err(e) => {
                    backend.cleanup(Duration::from_secs(1));
                    undo();
                    return Err(e);
                }
            }
        } else {
            None
        };
        Ok(Ready { backend, watchdog })
    }

    /// A fresh call number (names spill files and cgroups).
    pub(crate) fn next_call(&self) -> u64 {
        self.next_call.fetch_add(1, Ordering::Relaxed)
    }

    /// The background tasks and interactive sessions, locked.
    pub(crate) fn lock_tasks(&self) -> MutexGuard<'_, Tasks> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An empty log for task `id`: the model's budget in memory, the raw
    /// output spilled to `ID.log` in the spill directory. A session's log
    /// (`terminal`) collapses redrawn lines.
    pub(crate) fn task_log(&self, id: TaskId, terminal: bool) -> TaskLog {
        let spill = Spill::new(
            self.spill_dir.join(format!("{id}.log")),
            self.config.max_output_bytes,
            self.config.spill_cap_bytes,
        );
        TaskLog::new(self.config.max_output_bytes, spill, terminal)
    }

    /// The directory a command runs in.
    pub(crate) fn resolve_workdir(&self, workdir: Option<&str>) -> Result<PathBuf, ExecError> {
        let dir = match workdir {
            None | Some("") => self.config.cwd.clone(),
            Some(dir) => self.config.cwd.join(dir),
        };
        match fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => Ok(dir),
            Ok(_) => Err(ExecError::new(
                ErrorKind::Workdir,
                format!("working directory {} is not a directory", dir.display()),
            )),
            Err(_) => Err(ExecError::new(
                ErrorKind::Workdir,
                format!("working directory {} does not exist", dir.display()),
            )),
        }
    }

    /// The timeout that applies, and whether the request was clamped.
    fn timeout(&self, requested: Option<Duration>) -> (Duration, bool) {
        let max = self.config.max_timeout;
        match requested.filter(|t| !t.is_zero()) {
            Some(t) if t > max => (max, true),
            Some(t) => (t, false),
            None => (self.config.default_timeout.min(max), false),
        }
    }

    /// Spawns `bash -c command` in `cwd`, contained, its output going to
    /// new pipes.
    ///
    /// With cgroup containment the shell is born in its cgroup (`clone3`);
    /// where that is refused it joins the cgroup itself before `exec`; and if
    /// that fails too, the executor falls back to the process tree for good.
    pub(crate) fn spawn(
        &self,
        command: &str,
        cwd: &Path,
        call: u64,
        outputs: Outputs,
        confine: Confine,
    ) -> Result<Spawned, ExecError> {
        let pipe_error = |e| ExecError::io(ErrorKind::Spawn, "could not create a pipe", e);
        let (stdout, out_writer) = output_pipe().map_err(pipe_error)?;
        let (stderr, err_writer) = match outputs {
            Outputs::Separate => {
                let (reader, writer) = output_pipe().map_err(pipe_error)?;
                (Some(reader), writer)
            }
            Outputs::Merged => (None, out_writer.try_clone().map_err(pipe_error)?),
        };
        let stdio = ChildStdio {
            terminal: None,
            stdout: &out_writer,
            stderr: &err_writer,
        };
        let (child, contained, sandbox) = self.spawn_shell(command, cwd, call, stdio, confine)?;
        Ok(Spawned {
            child,
            stdout,
            stderr,
            contained,
            sandbox,
        })
    }

    /// Spawns `bash -c command` in `cwd`, contained, in a new pseudo-terminal
    /// of `rows` × `cols` that becomes its controlling terminal. Returns the
    /// shell, its containment and the terminal's master end.
    pub(crate) fn spawn_in_terminal(
        &self,
        command: &str,
        cwd: &Path,
        call: u64,
        (rows, cols): (u16, u16),
        confine: Confine,
    ) -> Result<(Proc, Contained, OwnedFd, bool), ExecError> {
        let (master, slave) = sys::open_pty(rows, cols)
            .map_err(|e| ExecError::io(ErrorKind::Spawn, "could not open a pseudo-terminal", e))?;
        let stdio = ChildStdio {
            terminal: Some(&slave),
            stdout: &slave,
            stderr: &slave,
        };
        let (child, contained, applied) = self.spawn_shell(command, cwd, call, stdio, confine)?;
        let held_read_only =
            applied.is_some_and(|a| a.mode == Some(dsh_sandbox::SandboxMode::ReadOnly));
        // The child holds the slave end now; ours would keep the terminal
        // open (no end-of-file) after the child's processes are gone.
        drop(slave);
        Ok((child, contained, master, held_read_only))
    }

    fn spawn_shell(
        &self,
        command: &str,
        cwd: &Path,
        call: u64,
        stdio: ChildStdio<'_>,
        confine: Confine,
    ) -> Result<(Proc, Contained, Option<Applied>), ExecError> {
        let ChildStdio {
            terminal,
            stdout: out_writer,
            stderr: err_writer,
        } = stdio;
        let spawn_error = |e| ExecError::io(ErrorKind::Spawn, "could not start bash", e);
        // Before anything of the call exists: the spill directory (the
        // confined temp directory is in it), the cgroup, the watchdog.
        let Ready { backend, .. } = self.ready().map_err(|e| {
            ExecError::io(ErrorKind::Spawn, "could not set up the bash executor", e)
        })?;
        // Built before the fork: the child only applies it.
        let applied = self.confinement(confine)?;
        let confinement = applied.as_ref().map(|a| a.plan.clone());
        // A private temp directory for every confined command; one that only
        // has reads denied keeps its own.
        let confined = applied.as_ref().is_some_and(|a| a.mode.is_some());
        let proxy = applied
            .as_ref()
            .filter(|a| a.proxied)
            .map(|_| proxy_client(call));
        if let (Some(client), Some(started)) = (
            &proxy,
            self.config
                .network_proxy
                .as_ref()
                .and_then(|n| n.started.as_ref()),
        ) {
            started(client);
        }
        let mode = applied;
        let mut prepared = backend.prepare(call, &self.tag);
        if backend.clone3_allowed() {
            if let Some(dir) = prepared.cgroup_dir() {
                let mut plan = self.plan(
                    command,
                    cwd,
                    terminal,
                    out_writer,
                    err_writer,
                    ChildEnv {
                        confined,
                        proxy: proxy.as_deref(),
                    },
                )?;
                plan.confinement = confinement.clone();
                match sys::spawn_into_cgroup(&plan, dir) {
                    Ok((pid, pidfd)) => {
                        let child = RawChild::new(pid, pidfd).map_err(spawn_error)?;
                        self.tell_end(proxy.as_deref(), pid);
                        return Ok((Proc::Raw(child), prepared.attach(pid as u32), mode));
                    }
                    Err(sys::SpawnFailure::Child(e)) => {
                        prepared.discard();
                        return Err(spawn_error(e));
                    }
                    Err(sys::SpawnFailure::Clone(e)) => {
                        // Not supported or not allowed here (old kernel,
                        // seccomp, no permission on the cgroup): join the
                        // cgroup the slow way. Other failures (no memory,
                        // too many processes) are errors of this call.
                        let unsupported = [
                            libc::ENOSYS,
                            libc::EPERM,
                            libc::EINVAL,
                            libc::E2BIG,
                            libc::EACCES,
                            libc::EOPNOTSUPP,
                        ];
                        if !e
                            .raw_os_error()
                            .is_some_and(|code| unsupported.contains(&code))
                        {
                            prepared.discard();
                            return Err(spawn_error(e));
                        }
                        backend.refuse_clone3();
                    }
                }
            }
        }

        let attempt = |prepared: Prepared| -> Result<(Proc, Contained), (Prepared, io::Error)> {
            let stdio = out_writer
                .try_clone()
                .and_then(|out| Ok((out, err_writer.try_clone()?)));
            let (out, err) = match stdio {
                Ok(pair) => pair,
                Err(e) => return Err((prepared, e)),
            };
            let mut cmd = self.command(
                command,
                cwd,
                &prepared,
                confinement.clone(),
                terminal.is_some(),
                ChildEnv {
                    confined,
                    proxy: proxy.as_deref(),
                },
            );
            if let Some(terminal) = terminal {
                match terminal.try_clone() {
                    Ok(input) => cmd.stdin(Stdio::from(input)),
                    Err(e) => return Err((prepared, e)),
                };
            }
            cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
            let spawned = cmd.spawn();
            // Closes the parent's copies of the child's pipe ends.
            drop(cmd);
            match spawned {
                Ok(child) => match child.id() {
                    Some(pid) => Ok((Proc::Tokio(child), prepared.attach(pid))),
                    None => Err((
                        prepared,
                        io::Error::other("bash exited before it could be tracked"),
                    )),
                },
                Err(e) => Err((prepared, e)),
            }
        };
        if prepared.is_cgroup() && prepared.open_procs().is_err() {
            prepared.discard();
            backend.mark_cgroup_broken();
            prepared = Prepared::tree(call, &self.tag);
        }
        let was_cgroup = prepared.is_cgroup();
        match attempt(prepared) {
            Ok((child, contained)) => {
                self.tell_end(proxy.as_deref(), child.pid());
                Ok((child, contained, mode))
            }
            Err((prepared, e)) if was_cgroup => {
                // Maybe the child could not join its cgroup: try without.
                prepared.discard();
                match attempt(Prepared::tree(call, &self.tag)) {
                    Ok((child, contained)) => {
                        backend.mark_cgroup_broken();
                        self.tell_end(proxy.as_deref(), child.pid());
                        Ok((child, contained, mode))
                    }
                    Err((_, _)) => Err(spawn_error(e)),
                }
            }
            Err((_, e)) => Err(spawn_error(e)),
        }
    }

    /// Tells the filtering proxy when the shell `pid` of `client` ends
    /// ([`NetworkProxy::ended`]). A shell that cannot be watched counts as
    /// ended at once: its commands then cannot use the proxy, rather than
    /// leave it open to what outlives them.
    fn tell_end(&self, client: Option<&str>, pid: i32) {
        let (Some(client), Some(ended)) = (
            client,
            self.config
                .network_proxy
                .as_ref()
                .and_then(|n| n.ended.as_ref()),
        ) else {
            return;
        };
        let pidfd = sys::pidfd_open(pid);
        ended(
            client,
            Box::pin(async move {
                if let Ok(watched) = pidfd.and_then(sys::watch_pidfd) {
                    let _ = watched.readable().await;
                }
            }),
        );
    }

    /// The path of `bash` in `path`, remembered while `PATH` stays the same.
    fn bash_path(&self, path: Option<OsString>) -> Option<PathBuf> {
        let mut cache = self.bash.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((cached_for, program)) = cache.as_ref() {
            if *cached_for == path && program.is_file() {
                return Some(program.clone());
            }
        }
        let program = find_program("bash", path.as_deref())?;
        *cache = Some((path, program.clone()));
        Some(program)
    }

    /// What `clone3`'s child needs, prepared before the clone.
    fn plan(
        &self,
        command: &str,
        cwd: &Path,
        terminal: Option<&OwnedFd>,
        stdout: &OwnedFd,
        stderr: &OwnedFd,
        child_env: ChildEnv<'_>,
    ) -> Result<sys::ExecPlan, ExecError> {
        let nul = |what: &str| {
            ExecError::new(ErrorKind::Spawn, format!("the {what} contains a NUL byte"))
        };
        let env = self.command_env(terminal.is_some(), child_env);
        let path = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.clone());
        let program = self.bash_path(path).ok_or_else(|| {
            ExecError::new(ErrorKind::Spawn, "could not start bash: not found in PATH")
        })?;
        let argv = ["bash", "--noprofile", "--norc", "-c", command]
            .iter()
            .map(|a| CString::new(*a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| nul("command"))?;
        let envp = env
            .into_iter()
            .map(|(name, value)| {
                let mut var = name.into_vec();
                var.push(b'=');
                var.extend_from_slice(value.as_bytes());
                CString::new(var)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| nul("environment"))?;
        Ok(sys::ExecPlan {
            program: CString::new(program.into_os_string().into_vec())
                .map_err(|_| nul("path of bash"))?,
            argv,
            envp,
            cwd: CString::new(cwd.as_os_str().as_bytes()).map_err(|_| nul("working directory"))?,
            stdio: [
                terminal.map_or(self.dev_null.as_raw_fd(), |t| t.as_raw_fd()),
                stdout.as_raw_fd(),
                stderr.as_raw_fd(),
            ],
            confinement: None,
            controlling_tty: terminal.is_some(),
        })
    }

    fn command(
        &self,
        command: &str,
        cwd: &Path,
        prepared: &Prepared,
        confinement: Option<Arc<dsh_sandbox::ChildPlan>>,
        terminal: bool,
        child_env: ChildEnv<'_>,
    ) -> Command {
        let mut cmd = Command::new("bash");
        cmd.arg("--noprofile")
            .arg("--norc")
            .arg("-c")
            .arg(command)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .env_clear()
            .envs(self.command_env(terminal, child_env));
        if let Some((name, value)) = prepared.marker() {
            cmd.env(name, value);
        }
        sys::configure_child(&mut cmd, prepared.cgroup_procs_fd(), confinement, terminal);
        cmd
    }

    /// The commands' environment; a confined command's `TMPDIR` is its
    /// private temp directory (the only place outside the roots it may write).
    /// A command in a terminal gets `TERM=xterm-256color` (what the screen
    /// emulation understands) and may prompt (no `GIT_TERMINAL_PROMPT=0`),
    /// unless the configured variables say otherwise.
    /// A command that reaches the network through the filtering proxy gets
    /// its variables (`HTTP_PROXY`, …, naming the call as `proxy`).
    fn command_env(&self, terminal: bool, child_env: ChildEnv<'_>) -> Vec<(OsString, OsString)> {
        let ChildEnv { confined, proxy } = child_env;
        let mut env = child_environment(&self.config.env);
        let configured = |name: &str| self.config.env.iter().any(|(n, _)| n == name);
        if terminal {
            if !configured("TERM") {
                env.retain(|(n, _)| n != "TERM");
                env.push(("TERM".into(), "xterm-256color".into()));
            }
            if !configured("GIT_TERMINAL_PROMPT") {
                env.retain(|(n, _)| n != "GIT_TERMINAL_PROMPT");
            }
        }
        if confined {
            env.retain(|(n, _)| n != "TMPDIR");
            env.push(("TMPDIR".into(), self.sandbox_temp().into_os_string()));
        }
        if let (Some(client), Some(net)) = (proxy, &self.config.network_proxy) {
            for (name, value) in (net.env)(client) {
                env.retain(|(n, _)| *n != *name);
                env.push((name.into(), value.into()));
            }
        }
        env
    }

    /// The private temp directory of confined commands.
    fn sandbox_temp(&self) -> PathBuf {
        self.spill_dir.join("tmp")
    }

    /// The sandbox a command runs under and what its child does to enter
    /// it, when it is confined.
    fn confinement(&self, confine: Confine) -> Result<Option<Applied>, ExecError> {
        if confine == Confine::Unconfined {
            return Ok(None);
        }
        let denials = self.read_denials();
        let read_only = dsh_sandbox::SandboxPolicy {
            mode: dsh_sandbox::SandboxMode::ReadOnly,
            writable_roots: Vec::new(),
            network: false,
        };
        // Where the kernel cannot hold the read-only promise, nothing
        // changes: the configured sandbox applies (`dsh sandbox status`
        // says so).
        let policy = match &self.config.sandbox {
            _ if confine == Confine::ReadOnly
                && self.config.confine_read_only
                && dsh_sandbox::support().scoping() =>
            {
                Some(&read_only)
            }
            Some(p) if p.mode != dsh_sandbox::SandboxMode::DangerFullAccess => Some(p),
            _ => None,
        };
        // The configured sandbox with its network off reaches the filtering
        // proxy; the read-only hold keeps the network off entirely.
        let proxied = self.config.network_proxy.is_some()
            && policy.is_some_and(|p| !std::ptr::eq(p, &read_only) && !p.network);
        let plan = match policy {
            Some(policy) => self.plan_for(policy, denials.clone(), proxied)?,
            None => self.denials_only_plan(denials.clone())?,
        };
        Ok(plan.map(|plan| Applied {
            mode: policy.map(|p| p.mode),
            denials,
            plan,
            proxied,
        }))
    }

    /// What a child does to enter `policy`'s sandbox in this executor's
    /// directories: the Landlock ruleset (reads denied by `Read` rules
    /// included), read-only binds of the protected entries where a mount
    /// namespace is available, the system-call filter, no capabilities, no
    /// inherited descriptors.
    fn plan_for(
        &self,
        policy: &dsh_sandbox::SandboxPolicy,
        denials: Option<dsh_sandbox::ReadDenials>,
        proxied: bool,
    ) -> Result<Option<Arc<dsh_sandbox::ChildPlan>>, ExecError> {
        // The configured directories only: a call's own `workdir` is where
        // it runs, never a grant (a model could name any directory).
        let mut dirs = vec![self.config.cwd.clone()];
        dirs.extend(self.config.sandbox_dirs.iter().cloned());
        let temp = self.sandbox_temp();
        let Some(mut confinement) = dsh_sandbox::confine(policy, &dirs, &temp) else {
            return Ok(None);
        };
        confinement.namespaces =
            self.config.mount_namespaces && dsh_sandbox::namespaces_available();
        confinement.read_denials = denials;
        let mut net_namespace = None;
        if let Some(net) = self.config.network_proxy.as_ref().filter(|_| proxied) {
            confinement.proxy_ports = net.ports.clone();
            net_namespace = self.network_namespace(net)?;
            confinement.network_namespace = net_namespace.is_some();
            confinement.local_binding = net.local_binding;
        }
        let _ = fs::create_dir_all(&temp);
        let layout = self.layout(&confinement)?;
        let namespace = confinement.namespaces;
        // The same layout (the cache hands back the same ruleset) makes the
        // same plan: prepared once.
        let key = (
            Arc::as_ptr(&layout.ruleset) as usize,
            policy.network,
            namespace,
            proxied,
        );
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, plan)) = plans.iter().find(|(k, _)| *k == key) {
            return Ok(Some(plan.clone()));
        }
        // In a mount namespace of its own, every mount is read-only but the
        // writable roots (so no mode, time or attribute changes of files
        // outside them either).
        let mut config = dsh_sandbox::ChildConfig::for_layout(&confinement, layout);
        config.network_namespace = net_namespace;
        let plan = dsh_sandbox::ChildPlan::prepare(config)
            .map_err(|e| sandbox_unavailable(&e.to_string()))?;
        let plan = Arc::new(plan);
        // A few layouts at a time (the hold, the settings' sandbox, after a
        // change): the oldest goes, and with it its ruleset.
        if plans.len() >= 8 {
            plans.remove(0);
        }
        plans.push((key, plan.clone()));
        Ok(Some(plan))
    }

    /// The network namespace commands reaching the proxy join, made now if
    /// it is not yet and its listeners handed to the proxy; `None` where
    /// there is no server for them or the kernel gives no namespaces (the
    /// port rule alone holds then).
    fn network_namespace(
        &self,
        net: &NetworkProxy,
    ) -> Result<Option<Arc<dsh_sandbox::NetworkNamespace>>, ExecError> {
        let Some(serve) = &net.serve else {
            return Ok(None);
        };
        if !dsh_sandbox::network_namespaces_available() {
            return Ok(None);
        }
        let mut made = self
            .network_namespace
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(namespace) = made.as_ref() {
            return Ok(Some(namespace.clone()));
        }
        // A failure is the call's (nothing weaker runs in its place) and
        // not kept: the next command tries again.
        let (namespace, listeners) = dsh_sandbox::NetworkNamespace::create(&net.ports)
            .map_err(|e| sandbox_unavailable(&e.to_string()))?;
        serve(
            listeners,
            Box::pin(self.stop_serving.clone().cancelled_owned()),
        )
        .map_err(|e| {
            sandbox_unavailable(&format!(
                "cannot serve the commands' network namespace: {e}"
            ))
        })?;
        *made = Some(namespace.clone());
        Ok(Some(namespace))
    }

    /// For a command no sandbox confines: a plan that only keeps the files
    /// `Read` deny rules name from being read, when there are such rules and
    /// the kernel can (Landlock ABI 3). Nothing else changes: no filter, the
    /// capabilities kept.
    fn denials_only_plan(
        &self,
        denials: Option<dsh_sandbox::ReadDenials>,
    ) -> Result<Option<Arc<dsh_sandbox::ChildPlan>>, ExecError> {
        let Some(denials) = denials else {
            return Ok(None);
        };
        if !dsh_sandbox::support().files() {
            return Ok(None);
        }
        let confinement = dsh_sandbox::deny_reads_only(denials, &self.sandbox_temp());
        let layout = self.layout(&confinement)?;
        let plan = dsh_sandbox::ChildPlan::prepare(dsh_sandbox::ChildConfig {
            ruleset: Some(layout.ruleset),
            network: true,
            keep_capabilities: true,
            seccomp: false,
            ..dsh_sandbox::ChildConfig::default()
        })
        .map_err(|e| sandbox_unavailable(&e.to_string()))?;
        Ok(Some(Arc::new(plan)))
    }

    /// The files `Read` deny rules name, as the permission layer has them now.
    fn read_denials(&self) -> Option<dsh_sandbox::ReadDenials> {
        self.config
            .read_denials
            .as_ref()
            .and_then(|source| source.get())
    }

    /// The cached layout of `confinement`; a walk over its bound fails the
    /// call rather than running it with a deny rule the kernel does not hold.
    fn layout(
        &self,
        confinement: &dsh_sandbox::Confinement,
    ) -> Result<dsh_sandbox::Layout, ExecError> {
        self.layouts
            .layout(confinement, dsh_sandbox::support())
            .map_err(|e| match e {
                dsh_sandbox::ConfineError::WalkBound { dir, entries } => sandbox_unavailable(&format!(
                    "the Read deny rules cannot be held by the kernel: finding what they name under {} took more than {entries} entries; name the files more narrowly (./.env rather than .env), or call again with sandbox_permissions: \"require_escalated\" to run it without the kernel holding them (that asks)",
                    dir.display()
                )),
                other => sandbox_unavailable(&other.to_string()),
            })
    }
}

/// The error of a call whose confinement cannot be built: nothing ran.
fn sandbox_unavailable(why: &str) -> ExecError {
    ExecError::new(
        ErrorKind::SandboxUnavailable,
        format!("sandbox unavailable: {why}; nothing ran"),
    )
}

/// The environment commands get: the executor's, scrubbed, plus the quiet
/// settings, then the configured `extra` variables over both.
fn child_environment(extra: &[(String, String)]) -> Vec<(OsString, OsString)> {
    let set = |name: &OsStr| {
        QUIET.iter().any(|(quiet, _)| name == *quiet)
            || extra.iter().any(|(n, _)| name == n.as_str())
    };
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| keeps_variable(name))
        .filter(|(name, _)| !set(name))
        .collect();
    env.extend(
        QUIET
            .iter()
            .filter(|(n, _)| !extra.iter().any(|(e, _)| e == n))
            .map(|(n, v)| (OsString::from(n), OsString::from(v))),
    );
    env.extend(
        extra
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v))),
    );
    env
}

/// Variables every command gets, so tools print plain text and never prompt.
const QUIET: [(&str, &str); 5] = [
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// The first executable `name` in the directories of `path`.
fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            fs::metadata(candidate)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// The words that mark a variable's name as a secret's (any case): such
/// variables never reach commands, and an audit log masks their values.
pub const SECRET_NAME_WORDS: [&str; 4] = ["KEY", "SECRET", "TOKEN", "PASSWORD"];

/// Whether an inherited variable reaches commands: not when its name contains
/// one of [`SECRET_NAME_WORDS`] (any case); not `BASH_ENV` or
/// `ENV`, which would make bash read a startup file; and not `CDPATH`, which
/// sends `cd name` to a directory the permission policy cannot see.
pub(crate) fn keeps_variable(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    if upper == "BASH_ENV" || upper == "ENV" || upper == "CDPATH" {
        return false;
    }
    !SECRET_NAME_WORDS.iter().any(|word| upper.contains(word))
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop_serving.cancel();
        let tasks = match self.tasks.get_mut() {
            Ok(tasks) => std::mem::take(tasks),
            Err(poisoned) => std::mem::take(poisoned.into_inner()),
        };
        tasks.kill_all_blocking(Duration::from_secs(1));
        let ready = self.ready.take();
        if let Some(ready) = &ready {
            ready.backend.cleanup(Duration::from_secs(1));
        }
        if self.config.keep_spill_files {
            // Nothing to keep when nothing was cut.
            let _ = fs::remove_dir(&self.spill_dir);
        } else {
            let _ = fs::remove_dir_all(&self.spill_dir);
        }
        // Last: everything is cleaned up, the watchdog can stand down.
        drop(ready.and_then(|ready| ready.watchdog));
    }
}

/// Removes the spill directories under `base` that executors kept
/// ([`ExecutorConfig::keep_spill_files`]) once their owner process has
/// exited and they are older than `lifetime`. Errors are ignored: a
/// directory of another user is theirs to remove.
pub(crate) fn sweep_kept_spill_dirs(base: &Path, lifetime: Duration) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("dsh-bash-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age >= lifetime);
        if old {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Creates the executor's private spill directory (mode 0700) under the
/// system's temporary directory; returns its tag and path.
fn create_spill_dir() -> io::Result<(String, PathBuf)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    sweep_kept_spill_dirs(&base, KEPT_SPILL_LIFETIME);
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tag = format!("dsh-bash-{}-{nanos:08x}{n}", std::process::id());
        let dir = base.join(&tag);
        match DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                // The umask can only remove bits; make sure anyway.
                fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?;
                return Ok((tag, dir));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not find a free name for the spill directory",
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn kept_spill_dirs_go_once_their_owner_exited_and_a_day_passed() {
        let base = std::env::temp_dir().join(format!("dsh-sweep-test-{}", std::process::id()));
        fs::create_dir_all(&base).unwrap();
        // A PID that cannot be running: beyond the kernel's pid_max.
        let dead = base.join("dsh-bash-4194305-0abc0");
        let live = base.join(format!("dsh-bash-{}-0abc1", std::process::id()));
        let fresh = base.join("dsh-bash-4194306-0abc2");
        let other = base.join("not-ours");
        for dir in [&dead, &live, &fresh, &other] {
            fs::create_dir_all(dir).unwrap();
            fs::write(dir.join("call-1-stdout.log"), "x").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - KEPT_SPILL_LIFETIME - Duration::from_secs(60);
        for dir in [&dead, &live, &other] {
            fs::File::open(dir).unwrap().set_modified(long_ago).unwrap();
        }
        sweep_kept_spill_dirs(&base, KEPT_SPILL_LIFETIME);
        assert!(!dead.exists(), "an old directory of an exited owner stays");
        assert!(live.exists(), "a directory of a live owner went");
        assert!(fresh.exists(), "a directory younger than a day went");
        assert!(
            other.exists(),
            "a directory that is not a spill directory went"
        );
        fs::remove_dir_all(&base).unwrap();
    }

    use super::*;

    fn gone(pid: i32) -> bool {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => matches!(
                stat.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().chars().next()),
                Some(Some('Z' | 'X'))
            ),
        }
    }

    /// Where `clone3` is refused, children join their cgroup themselves.
    #[tokio::test]
    async fn cgroup_without_clone3() {
        let config = ExecutorConfig {
            containment: Containment::Cgroup,
            ..ExecutorConfig::default()
        };
        let Ok(executor) = Executor::new(config) else {
            return; // no cgroup v2 here
        };
        executor.inner.ready().unwrap().backend.refuse_clone3();
        let out = executor
            .run(RunRequest::new(
                "setsid sleep 1000 & echo $!; grep '^0::' /proc/self/cgroup",
            ))
            .await
            .unwrap();
        let mut lines = out.stdout.text.lines();
        let pid: i32 = lines.next().unwrap().parse().unwrap();
        let cgroup = lines.next().unwrap();
        assert!(cgroup.contains(&executor.inner.tag), "{cgroup}");
        assert_eq!(executor.containment(), Containment::Cgroup);
        assert!(gone(pid), "daemon {pid} survived");
    }

    #[test]
    fn scrubs_secret_looking_names() {
        for name in [
            "OPENAI_API_KEY",
            "my_secret",
            "GH_TOKEN",
            "DB_Password",
            "BASH_ENV",
            "ENV",
            "CDPATH",
        ] {
            assert!(!keeps_variable(OsStr::new(name)), "{name}");
        }
        for name in ["PATH", "HOME", "ENVIRONMENT", "LANG"] {
            assert!(keeps_variable(OsStr::new(name)), "{name}");
        }
    }
}
