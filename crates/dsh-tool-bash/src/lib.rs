//! # dsh-tool-bash
//!
//! The local executor behind the `bash`, `bash_output` and `bash_kill` tools:
//! a fresh `bash -c` per command with stdin closed and secrets scrubbed from
//! its environment, output bounded and cleaned for a model (head and tail,
//! escape sequences removed, spill files for the rest), timeouts with a
//! `SIGTERM` grace, background tasks read incrementally, and no process left
//! behind — not even a `setsid` daemon or a double-forked grandchild.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! use std::time::Duration;
//! use dsh_tool_bash::{Executor, ExecutorConfig, RunRequest};
//!
//! let executor = Executor::new(ExecutorConfig::default())?;
//! let out = executor.run(RunRequest::new("printf 'a\\nb\\n'")).await?;
//! assert_eq!(out.model_text(), "a\nb\n[exit code: 0]");
//!
//! let task = executor.spawn_background("echo started; sleep 60", None, Some("agent-1"))?;
//! let text = executor
//!     .read_output(&task.to_string(), Some("agent-1"), Some(Duration::from_secs(5)), None)
//!     .await?;
//! assert_eq!(text, "started\n[status: running]");
//! assert_eq!(
//!     executor.kill(&task.to_string(), Some("agent-1")).await?,
//!     format!("killed background task {task}")
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```
//!
//! The [`executor`] module documents the behaviour in full, including how
//! processes are contained and the caveats.
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod background;
mod contain;
mod error;
pub mod executor;
pub mod keys;
mod lines;
mod output;
mod process;
mod pty;
mod sys;
mod task;
pub mod terminal;
mod tools;
mod watchdog;

pub use contain::Containment;
pub use error::{ErrorKind, ExecError};
pub use executor::{
    Confine, Executor, ExecutorConfig, Exit, NetworkProxy, OnClient, OnClientEnd, PerClient,
    ReadDenialsSource, RunOutput, RunRequest, ServeListeners, ServingEnds, KEPT_SPILL_LIFETIME,
    SECRET_NAME_WORDS,
};
pub use output::{SpillFile, StreamOutput};
pub use task::TaskId;
pub use terminal::{InputCheck, SessionRequest, SessionStart};
pub use tools::{
    register_bash_tools, BashArgs, BashKillArgs, BashKillTool, BashOutputArgs, BashOutputTool,
    BashTool, BashWriteArgs, BashWriteTool, SandboxPermissions,
};
