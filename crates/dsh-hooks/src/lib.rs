//! # dsh-hooks
//!
//! Claude Code's hook scripts, unchanged, before and after every tool call:
//! the `hooks` section of the settings files as a middleware of the
//! [`dsh_tools`] pipeline, for first-party and proxied MCP tools alike.
//!
//! ```
//! use dsh_hooks::{Hooks, HooksMiddleware, Session};
//! use dsh_policy::Settings;
//! use dsh_tools::{define_tool, ContentBlock, ErrorCode, ToolArgs, ToolExecution, ToolRegistry};
//!
//! #[derive(ToolArgs, serde::Deserialize)]
//! struct Args {
//!     /// What to say.
//!     text: String,
//! }
//!
//! let settings: Settings = r#"{"hooks": {"PreToolUse": [{"matcher": "say",
//!     "hooks": [{"type": "command", "command": "grep -q secret && { echo 'no secrets' >&2; exit 2; }; exit 0"}]}]}}"#
//!     .parse()
//!     .unwrap();
//! let hooks = HooksMiddleware::new(Hooks::from_settings(&settings).unwrap(), Session::new(std::env::temp_dir()));
//! let registry = ToolRegistry::new();
//! registry.register(define_tool("say", "Says it.", |a: Args, _ctx| async move {
//!     Ok(vec![ContentBlock::text(a.text)])
//! })).unwrap();
//! registry.use_middleware(hooks); // outside the permission layer, when there is one
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let said = registry.execute(ToolExecution::new("c1", "say", r#"{"text": "hello"}"#)).await;
//! assert_eq!(said.text(), "hello");
//! let blocked = registry.execute(ToolExecution::new("c2", "say", r#"{"text": "a secret"}"#)).await;
//! assert_eq!(blocked.code(), Some(ErrorCode::HookBlocked));
//! assert_eq!(blocked.text(), "Error: no secrets");
//! # });
//! ```
//!
//! ## Events
//!
//! | event | when | what it can do |
//! |---|---|---|
//! | `PreToolUse` | before the permission layer | block (exit 2), `permissionDecision` allow / deny / ask / defer, `updatedInput`, `additionalContext`, `continue: false` |
//! | `PermissionRequest` | before an *ask* reaches the approver ([`HookApprover`]) | `decision.behavior` allow / deny answers it; exit 2 denies |
//! | `PostToolUse` | after a successful result | `decision: "block"` (or exit 2) turns it into an error, `additionalContext` |
//! | `PostToolUseFailure` | after an error result | the same |
//!
//! Claude Code's other events (`SessionStart`, `Stop`, `Notification`, …)
//! are accepted in the file and never fire: a tool layer has no session,
//! prompt or turn of its own. `disableAllHooks: true` turns every hook off.
//! Only `"type": "command"` hooks run; the settings refuse other types,
//! `async` and `once`, naming them.
//!
//! ## Matchers and names
//!
//! Empty, absent or `*` matches every tool; a matcher of only letters,
//! digits, `_`, `-`, spaces, `,` and `|` is a list of exact names (`Edit|Write`,
//! compared case-insensitively); anything else is an unanchored regular
//! expression (`mcp__github__.*`), as Claude Code reads them. A tool answers
//! to Claude Code's name (`Bash` for `bash`, `BashOutput`, `KillShell`,
//! `mcp__SERVER__TOOL` for a proxied tool) and to ours (`bash`,
//! `SERVER__TOOL`), and `tool_name` in the input is Claude Code's. A bare
//! `mcp__SERVER` matches no tool, as in Claude Code.
//!
//! ## Input
//!
//! One JSON object on stdin: `session_id`, `transcript_path` (empty: there
//! is none), `cwd`, `permission_mode`, `hook_event_name`, `tool_name`,
//! `tool_input` (our arguments; for `bash` also `timeout`, in milliseconds,
//! beside `timeout_ms`), `tool_use_id`; post events add `tool_response`
//! (our result: `content`, `isError`, `error`, `structuredContent`) and
//! `duration_ms`, and `PostToolUseFailure` adds `error` (the text the model
//! sees) and `is_interrupt`. The command runs as `sh -c COMMAND` in the
//! working directory with `CLAUDE_PROJECT_DIR` and `DSH_PROJECT_DIR` set,
//! in its own process group; stdin is closed after the JSON (a hook that
//! does not read it is fine).
//!
//! ## Output
//!
//! * Exit 0: stdout is read as JSON when it is JSON (plain text is for a
//!   transcript and ignored). Exit 2: the call is blocked (`HOOK_BLOCKED`),
//!   the reason from the JSON's blocking decision, else stderr, else
//!   `blocked by PreToolUse hook`; exit 2 overrides a JSON allow. Any other
//!   exit, a signal, a spawn failure, a timeout or JSON that is not an
//!   object: a non-blocking error logged on stderr with the hook's command,
//!   and the call goes on.
//! * `failClosed: true` on a hook (our extension): a timeout, a crash, an
//!   exit code other than 0 and 2, or output that is not JSON blocks.
//! * Decisions of all hooks merge deny > defer > ask > allow. A deny is
//!   `PERMISSION_DENIED` naming the hook's reason. `allow` skips an *ask*
//!   only the mode made; a deny or ask rule of the settings, or a command
//!   the policy cannot analyse, still holds. `ask` goes to the approver
//!   even where the rules allow. `defer` hands the call to the approver
//!   too (Claude Code leaves a deferred call to whoever drives it), so it
//!   outranks an `ask` without weakening it.
//! * `updatedInput` replaces the whole input and is validated again by the
//!   tool's schema (an invalid one is `INVALID_ARGS`); `timeout` is read
//!   back as `timeout_ms`.
//! * `additionalContext` is appended to the result the model sees
//!   (`[hook context] …`). Text for the model over 10 000 characters is
//!   written to a file; the model gets the first 2 000 and the path.
//! * `continue: false` blocks the call (pre) or turns the result into an
//!   error (post) with `stopReason`: there is no agent loop here to stop.
//!   `suppressOutput` is accepted and has nothing to hide here;
//!   `systemMessage` is logged.
//!
//! ## Running
//!
//! All hooks matching one event run in parallel; identical commands run
//! once (the stricter `failClosed` wins). Each has its `timeout` in seconds
//! (default 600, Claude Code's); when it fires, or when the shell exits,
//! or when the call is dropped, the hook's whole process group is killed,
//! so no hook process is left behind — unless it leaves the group itself
//! (`setsid`), which a process group cannot stop; its pipes are then given
//! up two seconds later. Output is read whole, up to 64 MiB a stream (more
//! is an error).
//!
//! ## Claude Code itself
//!
//! [`pre_tool_use_answer`] (the `dsh hook pre-tool-use` command) answers
//! Claude Code's own `PreToolUse` input from our shell-aware policy. Its
//! `allow` skips Claude Code's own prompt with nothing of ours confining
//! what then runs, so it answers `allow` only where the user's explicit
//! allow rules cover the whole call; deny and ask rules, the mode's
//! refusals and commands it cannot analyse are answered; everything else
//! (what only the mode allows or asks about, tools the policy does not
//! model that no rule names) is left to Claude Code by answering nothing.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod answer;
mod claude;
mod config;
mod middleware;
mod run;

pub use answer::{Answer, Permission};
pub use claude::pre_tool_use_answer;
pub use config::{
    claude_name, tool_names, HookConfigError, HookSpec, Hooks, Matcher, DEFAULT_TIMEOUT,
};
pub use middleware::{
    HookApprover, HookLog, HooksMiddleware, ModeSource, Session, MODEL_TEXT_LIMIT,
};
pub use run::{run_hook, HookRun, RunEnd, MAX_OUTPUT};
