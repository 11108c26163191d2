//! The model-facing tools: `bash`, `bash_output` and `bash_kill`, typed
//! [`dsh_tools::Tool`]s over one shared [`Executor`].

use crate::error::{ErrorKind, ExecError};
use crate::executor::{Confine, Executor, ExecutorConfig, RunRequest};
use crate::terminal::{InputCheck, SessionRequest, SessionStart, DEFAULT_SIZE};
use dsh_tools::{
    CheckedAs, ContentBlock, ErrorCode, TerminalExit, Tool, ToolAnnotations, ToolArgs,
    ToolCallKind, ToolCallPresentation, ToolContext, ToolError, ToolExecutionResult, ToolRegistry,
    ToolResultPresentation, ToolTerminal, TypedTool,
};
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// The `bash` description, with the executor's own limits.
fn bash_description(config: &ExecutorConfig) -> String {
    format!(
        "\
Runs a command with `bash -c` and returns its output.

Each call is a fresh non-interactive shell: state (cd, variables, functions) does not persist \
between calls, so chain dependent steps with && in one command. Stdin is closed: a command that \
reads input sees end-of-file, so pass input with arguments, files or a here-doc.

Output: stdout, then `[stderr]` and stderr; `(no output)` when both are empty; then the status, \
`[exit code: N]` or `[killed by signal: SIG]`. A non-zero exit code is a normal result. Each \
stream shows at most {max_output} bytes: the head and the tail with `[… N bytes omitted …]` between \
them, and a note naming a file with the full output (read it with grep, head or tail).

Timeout: timeout_ms, default {default_timeout}, at most {max_timeout}. On timeout the command and \
everything it started are killed and you get the output so far plus `[timed out after Nms]`.

Use run_in_background: true for servers, watchers and long builds: the call returns \
`started background task bash-N` at once and no timeout applies. Read new output with \
bash_output (task_id, optionally wait_ms and a filter regex) and stop the task with bash_kill.

Use tty: true for programs that want a terminal (python3 or node REPLs, prompts, installers, \
ssh, TUIs): the command runs in a pseudo-terminal (rows x cols, default 40x120) and the call \
returns `started interactive session bash-N`, the output so far and the status, once output \
pauses or after yield_time_ms (default 1000); a command that ends by then gives its final \
result. Type into it with bash_write; read with bash_output (screen: true for the rendered \
screen); stop it with bash_kill. timeout_ms, if given, limits the session's life.",
        max_output = config.max_output_bytes,
        default_timeout = config.default_timeout.as_millis(),
        max_timeout = config.max_timeout.as_millis(),
    )
}

/// The `bash_output` description, with the executor's longest wait.
fn bash_output_description(config: &ExecutorConfig) -> String {
    format!(
        "\
Reads the output a background task (started by bash with run_in_background) produced since the \
last read, then its status: `[status: running]`, `[status: completed, exit code: N]` or \
`[status: killed by SIG]`. `(no new output)` when nothing new was printed.

wait_ms waits up to that long (at most {max_wait}) for new output or for the task to end before \
answering; use it instead of sleeping. filter is a regular expression: only matching lines are \
returned (the others are still consumed). For an interactive session, screen: true returns \
the rendered terminal screen (TUIs, progress bars) instead of the new output.",
        max_wait = config.max_wait.as_millis(),
    )
}

const BASH_WRITE_DESCRIPTION: &str = "\
Types input into an interactive session (started by bash with tty: true) and returns the new \
output, once output pauses or after yield_time_ms (default 1000, 100 to 30000), then the \
status. input is text plus named keys in angle brackets: <Enter> (a newline in the text is \
Enter too), <Tab>, <Esc>, <Backspace>, <Up>, <Down>, <Left>, <Right>, <Home>, <End>, \
<PageUp>, <PageDown>, <Delete>, <F1>..<F12>, <C-a>..<C-z> (<C-c> interrupts, <C-d> ends \
input), <M-x>, and <lt> for a literal <. Other text in angle brackets is sent as typed. The \
terminal echoes what you type, as a terminal does.";

const BASH_KILL_DESCRIPTION: &str = "\
Stops a background task started by bash with run_in_background, and every process it started. \
Answers `killed background task bash-N`, or `task bash-N had already finished`.";

/// Arguments of `bash`.
///
/// The argument objects of all three tools are closed: a property the tool
/// does not know (Claude Code's `timeout` for our `timeout_ms`) would
/// otherwise be dropped without a word, and the model would believe it took
/// effect. It is an `INVALID_ARGS` error naming the property meant instead.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line to run.
    pub command: String,
    /// A few words on what the command does, shown to the user.
    pub description: Option<String>,
    /// Timeout in milliseconds (default 120000, at most 600000).
    pub timeout_ms: Option<u64>,
    /// Working directory: absolute, or relative to the session's directory.
    pub workdir: Option<String>,
    /// Start the command in the background and return at once.
    pub run_in_background: Option<bool>,
    /// "require_escalated" to run outside the sandbox (after approval),
    /// when a sandboxed run was refused; "use_default" otherwise.
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Why the command must run outside the sandbox (shown to the approver).
    pub justification: Option<String>,
    /// Run in a pseudo-terminal as an interactive session (REPLs, prompts,
    /// TUIs); drive it with bash_write.
    pub tty: Option<bool>,
    /// With tty: how long to wait for output before returning (default
    /// 1000, 100 to 30000 ms).
    pub yield_time_ms: Option<u64>,
    /// With tty: terminal rows (default 40).
    pub rows: Option<u16>,
    /// With tty: terminal columns (default 120).
    pub cols: Option<u16>,
}

/// Whether a call runs in the configured sandbox.
#[derive(ToolArgs, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPermissions {
    /// In the sandbox the settings configure.
    UseDefault,
    /// Outside it, once approved.
    RequireEscalated,
}

/// Arguments of `bash_output`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct BashOutputArgs {
    /// The background task's id, e.g. bash-1.
    pub task_id: String,
    /// Wait up to this many milliseconds for new output or completion.
    pub wait_ms: Option<u64>,
    /// Regular expression: return only the lines that match.
    pub filter: Option<String>,
    /// For an interactive session: return the rendered screen instead of
    /// the new output.
    pub screen: Option<bool>,
}

/// Arguments of `bash_write`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct BashWriteArgs {
    /// The session's id, e.g. bash-3 (from bash with tty: true).
    pub session_id: String,
    /// Text and named keys: <Enter>, <Tab>, <C-c>, <C-d>, <Up>, <Esc>, …
    pub input: String,
    /// Wait up to this many milliseconds for output (default 1000, 100 to 30000).
    pub yield_time_ms: Option<u64>,
}

/// Arguments of `bash_kill`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct BashKillArgs {
    /// The background task's id, e.g. bash-1.
    pub task_id: String,
}

fn tool_error(err: ExecError) -> ToolError {
    let code = match err.kind() {
        ErrorKind::Cancelled => ErrorCode::Aborted,
        ErrorKind::SandboxUnavailable => ErrorCode::SandboxUnavailable,
        _ => ErrorCode::ToolError,
    };
    ToolError::new(code, err.message())
}

/// The `bash` tool.
#[derive(Clone)]
pub struct BashTool {
    executor: Executor,
    description: String,
}

impl BashTool {
    /// A `bash` tool running commands with `executor`.
    pub fn new(executor: Executor) -> Self {
        let description = bash_description(executor.config());
        BashTool {
            executor,
            description,
        }
    }

    fn cwd_for(&self, workdir: Option<&str>) -> String {
        let base = &self.executor.config().cwd;
        match workdir {
            Some(dir) if Path::new(dir).is_absolute() => dir.to_owned(),
            Some(dir) => base.join(dir).display().to_string(),
            None => base.display().to_string(),
        }
    }
}

impl Tool for BashTool {
    type Args = BashArgs;

    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        &self.description
    }

    async fn call(&self, args: BashArgs, ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::new(
                ErrorCode::InvalidArgs,
                "invalid arguments: \"command\" must not be blank",
            ));
        }
        let escalated = args.sandbox_permissions == Some(SandboxPermissions::RequireEscalated);
        // The permission layer says whether the call runs only on the
        // analysis's word; then the kernel holds it read-only.
        let confine = match ctx.extensions.get::<dsh_tools::KernelHold>() {
            Some(dsh_tools::KernelHold::ReadOnly) => Confine::ReadOnly,
            _ if escalated => Confine::Unconfined,
            _ => Confine::Configured,
        };
        if escalated && args.run_in_background.unwrap_or(false) {
            return Err(ToolError::new(
                ErrorCode::InvalidArgs,
                "invalid arguments: sandbox_permissions \"require_escalated\" runs in the foreground only",
            ));
        }
        if args.tty.unwrap_or(false) {
            if args.run_in_background.unwrap_or(false) {
                return Err(ToolError::new(
                    ErrorCode::InvalidArgs,
                    "invalid arguments: tty and run_in_background exclude each other (a session already runs in the background)",
                ));
            }
            let mut request = SessionRequest::new(args.command);
            request.workdir = args.workdir;
            request.size = Some((
                args.rows.unwrap_or(DEFAULT_SIZE.0),
                args.cols.unwrap_or(DEFAULT_SIZE.1),
            ));
            request.yield_time = args.yield_time_ms.map(Duration::from_millis);
            request.timeout = args.timeout_ms.map(Duration::from_millis);
            request.confine = confine;
            request.cancel = ctx.cancel_token();
            let started = self
                .executor
                .start_session(request, ctx.agent.as_deref())
                .await
                .map_err(tool_error)?;
            return Ok(vec![ContentBlock::text(match started {
                SessionStart::Running { id, output } => {
                    format!("started interactive session {id}\n{output}")
                }
                SessionStart::Finished { output } => output,
            })]);
        }
        if args.run_in_background.unwrap_or(false) {
            let task = self
                .executor
                .spawn_background_confined(
                    &args.command,
                    args.workdir.as_deref(),
                    ctx.agent.as_deref(),
                    confine,
                )
                .map_err(tool_error)?;
            return Ok(vec![ContentBlock::text(format!(
                "started background task {task}"
            ))]);
        }
        let mut request = RunRequest::new(args.command)
            .cancel(ctx.cancel_token())
            .confine(confine);
        if let Some(progress) = ctx.progress {
            request = request.progress(progress);
        }
        if let Some(live) = ctx.extensions.get::<dsh_tools::LiveOutput>() {
            request = request.live(live.clone());
        }
        if let Some(dir) = args.workdir {
            request = request.workdir(dir);
        }
        if let Some(ms) = args.timeout_ms {
            request = request.timeout(Duration::from_millis(ms));
        }
        let output = self.executor.run(request).await.map_err(tool_error)?;
        Ok(vec![ContentBlock::text(output.model_text())])
    }

    fn present_call(&self, args: &BashArgs) -> Option<ToolCallPresentation> {
        let background = args.run_in_background.unwrap_or(false);
        Some(ToolCallPresentation {
            title: args.command.clone(),
            kind: ToolCallKind::Execute,
            raw_input: Some(serde_json::Value::String(args.command.clone())),
            content: args
                .description
                .iter()
                .filter(|d| !d.is_empty())
                .map(|d| ContentBlock::text(d.clone()))
                .collect(),
            terminal: (!background).then(|| ToolTerminal {
                cwd: Some(self.cwd_for(args.workdir.as_deref())),
                ..ToolTerminal::default()
            }),
            locations: Vec::new(),
        })
    }

    fn present_result(
        &self,
        args: &BashArgs,
        result: &ToolExecutionResult,
    ) -> Option<ToolResultPresentation> {
        let text = result.text();
        let trimmed = text.trim_end_matches('\n');
        let content = vec![ContentBlock::text(console_block(trimmed))];
        if args.run_in_background.unwrap_or(false) || result.is_error {
            return Some(ToolResultPresentation {
                title: None,
                content,
                terminal: None,
                locations: Vec::new(),
                diffs: Vec::new(),
            });
        }
        let (output, exit) = split_status(trimmed);
        Some(ToolResultPresentation {
            title: None,
            content,
            terminal: Some(ToolTerminal {
                cwd: None,
                output: Some(output.to_owned()),
                exit,
            }),
            locations: Vec::new(),
            diffs: Vec::new(),
        })
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Run a shell command".into()),
            read_only: Some(false),
            destructive: Some(true),
            idempotent: Some(false),
            open_world: Some(true),
        }
    }

    fn timeout(&self) -> Option<Duration> {
        // The executor enforces the call's own timeout (and kills the process
        // tree); a timeout middleware must not cut in before it does.
        let config = self.executor.config();
        Some(config.max_timeout + config.kill_grace + Duration::from_secs(5))
    }
}

/// `text` in a fenced `console` block, with a fence longer than any run of
/// backticks inside it so the output cannot close the block.
fn console_block(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}console\n{text}\n{fence}")
}

/// Splits the final status marker off the model text: the terminal card's
/// output, and the exit code or signal parsed back from the marker.
fn split_status(text: &str) -> (&str, Option<TerminalExit>) {
    let (body, last) = match text.rfind('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => ("", text),
    };
    let code = last
        .strip_prefix("[exit code: ")
        .and_then(|s| s.strip_suffix(']'))
        .and_then(|code| code.parse().ok())
        .map(TerminalExit::ExitCode);
    let exit = code.or_else(|| {
        last.strip_prefix("[killed by signal: ")
            .and_then(|s| s.strip_suffix(']'))
            .map(|signal| TerminalExit::Signal(signal.to_owned()))
    });
    match exit {
        Some(exit) => (body, Some(exit)),
        None => (text, None),
    }
}

/// The `bash_output` tool.
#[derive(Clone)]
pub struct BashOutputTool {
    executor: Executor,
    description: String,
}

impl BashOutputTool {
    /// A `bash_output` tool reading tasks of `executor`.
    pub fn new(executor: Executor) -> Self {
        let description = bash_output_description(executor.config());
        BashOutputTool {
            executor,
            description,
        }
    }
}

impl Tool for BashOutputTool {
    type Args = BashOutputArgs;

    fn name(&self) -> &str {
        "bash_output"
    }

    fn description(&self) -> &str {
        &self.description
    }

    async fn call(
        &self,
        args: BashOutputArgs,
        ctx: ToolContext,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        let wait = args.wait_ms.map(Duration::from_millis);
        if args.screen.unwrap_or(false) {
            let text = self
                .executor
                .read_screen(&args.task_id, ctx.agent.as_deref(), wait)
                .await
                .map_err(tool_error)?;
            return Ok(vec![ContentBlock::text(text)]);
        }
        let text = self
            .executor
            .read_output(
                &args.task_id,
                ctx.agent.as_deref(),
                wait,
                args.filter.as_deref(),
            )
            .await
            .map_err(tool_error)?;
        Ok(vec![ContentBlock::text(text)])
    }

    fn present_call(&self, args: &BashOutputArgs) -> Option<ToolCallPresentation> {
        Some(ToolCallPresentation {
            title: format!("Read output from background task {}", args.task_id),
            kind: ToolCallKind::Read,
            raw_input: Some(serde_json::json!(args.task_id)),
            content: Vec::new(),
            terminal: None,
            locations: Vec::new(),
        })
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Read background task output".into()),
            read_only: Some(true),
            open_world: Some(false),
            ..ToolAnnotations::default()
        }
    }

    fn timeout(&self) -> Option<Duration> {
        Some(self.executor.config().max_wait + Duration::from_secs(5))
    }

    fn is_concurrency_safe(&self, _args: &BashOutputArgs) -> bool {
        true
    }
}

/// The `bash_kill` tool.
#[derive(Clone)]
pub struct BashKillTool {
    executor: Executor,
}

impl BashKillTool {
    /// A `bash_kill` tool stopping tasks of `executor`.
    pub fn new(executor: Executor) -> Self {
        BashKillTool { executor }
    }
}

impl Tool for BashKillTool {
    type Args = BashKillArgs;

    fn name(&self) -> &str {
        "bash_kill"
    }

    fn description(&self) -> &str {
        BASH_KILL_DESCRIPTION
    }

    async fn call(
        &self,
        args: BashKillArgs,
        ctx: ToolContext,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        let text = self
            .executor
            .kill(&args.task_id, ctx.agent.as_deref())
            .await
            .map_err(tool_error)?;
        Ok(vec![ContentBlock::text(text)])
    }

    fn present_call(&self, args: &BashKillArgs) -> Option<ToolCallPresentation> {
        Some(ToolCallPresentation {
            title: format!("Kill background task {}", args.task_id),
            kind: ToolCallKind::Execute,
            raw_input: Some(serde_json::json!(args.task_id)),
            content: Vec::new(),
            terminal: None,
            locations: Vec::new(),
        })
    }

    /// The executor refuses another agent's task: stopping one's own
    /// changes nothing the call that started it could not (it could have
    /// run in the foreground and been cancelled).
    fn acts_on_own_work(&self) -> bool {
        true
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Stop a background task".into()),
            read_only: Some(false),
            destructive: Some(true),
            idempotent: Some(true),
            open_world: Some(false),
        }
    }
}

/// The `bash_write` tool.
#[derive(Clone)]
pub struct BashWriteTool {
    executor: Executor,
}

impl BashWriteTool {
    /// A `bash_write` tool typing into sessions of `executor`.
    pub fn new(executor: Executor) -> Self {
        BashWriteTool { executor }
    }
}

impl Tool for BashWriteTool {
    type Args = BashWriteArgs;

    fn name(&self) -> &str {
        "bash_write"
    }

    fn description(&self) -> &str {
        BASH_WRITE_DESCRIPTION
    }

    async fn call(
        &self,
        args: BashWriteArgs,
        ctx: ToolContext,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        let cancel = ctx.cancel_token();
        let text = self
            .executor
            .write_session(
                &args.session_id,
                ctx.agent.as_deref(),
                &args.input,
                args.yield_time_ms.map(Duration::from_millis),
                &cancel,
            )
            .await
            .map_err(tool_error)?;
        Ok(vec![ContentBlock::text(text)])
    }

    fn present_call(&self, args: &BashWriteArgs) -> Option<ToolCallPresentation> {
        Some(ToolCallPresentation {
            title: format!("Type into session {}", args.session_id),
            kind: ToolCallKind::Execute,
            raw_input: Some(serde_json::json!(args.input)),
            content: vec![ContentBlock::text(args.input.clone())],
            terminal: None,
            locations: Vec::new(),
        })
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Type into an interactive session".into()),
            read_only: Some(false),
            destructive: Some(true),
            idempotent: Some(false),
            open_world: Some(true),
        }
    }

    fn timeout(&self) -> Option<Duration> {
        Some(crate::terminal::YIELD_RANGE.1 * 2 + Duration::from_secs(5))
    }

    /// Input typed into a shell is checked as the command line it types;
    /// input for another program as that program's command (the session's).
    fn checked_as(&self, args: &BashWriteArgs, agent: Option<&str>) -> Option<CheckedAs> {
        match self
            .executor
            .input_check(&args.session_id, agent, &args.input)
        {
            InputCheck::Command {
                command,
                workdir,
                held,
            } => Some(CheckedAs {
                tool: "bash".into(),
                arguments: serde_json::json!({"command": command, "workdir": workdir}),
                opaque_input: false,
                held,
            }),
            InputCheck::Program {
                command,
                workdir,
                has_text,
                held,
            } => Some(CheckedAs {
                tool: "bash".into(),
                arguments: serde_json::json!({"command": command, "workdir": workdir}),
                opaque_input: has_text,
                held,
            }),
            _ => None,
        }
    }
}

/// Registers `bash`, `bash_output`, `bash_write` and `bash_kill` over one
/// executor, for the registry's lifetime.
///
/// # Errors
/// `DUPLICATE_TOOL` when one of the names is taken (nothing is registered then).
pub fn register_bash_tools(registry: &ToolRegistry, executor: &Executor) -> Result<(), ToolError> {
    // Scoped until all three are in, so a failure leaves none behind.
    let bash = registry.register_scoped(TypedTool::new(BashTool::new(executor.clone())))?;
    let output = registry.register_scoped(TypedTool::new(BashOutputTool::new(executor.clone())))?;
    let write = registry.register_scoped(TypedTool::new(BashWriteTool::new(executor.clone())))?;
    let kill = registry.register_scoped(TypedTool::new(BashKillTool::new(executor.clone())))?;
    for handle in [bash, output, write, kill] {
        handle.keep();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_parsed_back_from_the_marker() {
        assert_eq!(
            split_status("a\nb\n[exit code: 2]"),
            ("a\nb", Some(TerminalExit::ExitCode(2)))
        );
        assert_eq!(
            split_status("(no output)\n[killed by signal: SIGKILL]"),
            ("(no output)", Some(TerminalExit::Signal("SIGKILL".into())))
        );
        assert_eq!(
            split_status("[exit code: 0]"),
            ("", Some(TerminalExit::ExitCode(0)))
        );
        assert_eq!(split_status("no marker"), ("no marker", None));
    }

    #[test]
    fn descriptions_stay_short_and_carry_the_configured_limits() {
        let config = ExecutorConfig {
            max_output_bytes: 1234,
            max_timeout: Duration::from_secs(42),
            max_wait: Duration::from_secs(7),
            ..ExecutorConfig::default()
        };
        let bash = bash_description(&config);
        assert!(bash.contains("at most 1234 bytes"), "{bash}");
        assert!(bash.contains("default 120000, at most 42000"), "{bash}");
        let output = bash_output_description(&config);
        assert!(output.contains("at most 7000"), "{output}");
        for text in [bash.as_str(), output.as_str(), BASH_KILL_DESCRIPTION] {
            assert!(text.len() < 2100, "{} characters", text.len());
        }
    }

    #[test]
    fn console_fence_outgrows_backticks_in_the_output() {
        assert_eq!(console_block("ls"), "```console\nls\n```");
        assert_eq!(console_block("a ```` b"), "`````console\na ```` b\n`````");
    }
}
