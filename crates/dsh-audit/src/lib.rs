//! # dsh-audit
//!
//! The audit log of dsh: **one JSON line per tool call**, written as the
//! call ends — who asked (principal, client, session), what (tool,
//! arguments with secrets masked), why it was allowed or refused (the
//! verdict, the rule and the settings file it came from, who answered an
//! ask and what), how it ended (exit code or signal, `isError`, error
//! code), how long it took, how much it printed and under which sandbox.
//! That is its one job; [`reader`] reads the log back for `dsh audit`.
//!
//! ```
//! use dsh_audit::{AuditConfig, AuditLog, AuditMiddleware, Masking};
//! use dsh_tools::{ToolExecution, ToolRegistry};
//! # let dir = std::env::temp_dir().join(format!("dsh-audit-doc-{}", std::process::id()));
//!
//! let registry = ToolRegistry::new();
//! // … the tools and the other layers first; then, outermost:
//! let log = AuditLog::open(AuditConfig::new(&dir))?;
//! registry.use_middleware_first(AuditMiddleware::new(Some(log.clone()), Masking::new(["TOKEN"], ["apiKey"])));
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! registry.execute(ToolExecution::new("c1", "nope", r#"{"apiKey":"k-123"}"#)).await;
//! # });
//! assert!(log.flush(std::time::Duration::from_secs(5)));
//! let lines = dsh_audit::reader::read_all(&dir)?;
//! let record = lines[0].record.as_ref().unwrap();
//! assert_eq!(record.tool, "nope");
//! assert_eq!(record.outcome.error_code.as_deref(), Some("UNKNOWN_TOOL"));
//! assert_eq!(record.arguments["apiKey"], "[masked]");
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! ## How it is built, and why
//!
//! * **A middleware, outermost.** [`AuditMiddleware`] wraps every other
//!   layer, so a hook's block, a rule's denial, an ask nobody answered, a
//!   timeout and a panic are all recorded, each as the caller saw it. It
//!   puts a `dsh_policy::DecisionSlot` in the call for the permission layer
//!   to fill, and reads the `dsh_tools::CallOrigin` a front-end put there.
//! * **A writer thread behind a bounded queue.** The call's task makes the
//!   record and hands the line over without waiting ([`AuditLog::submit`]);
//!   one thread appends it. When the queue is full (the disk far behind),
//!   the record is dropped and counted rather than holding up the call or
//!   growing memory.
//! * **Never blocking a call on the disk.** A failed write is counted and
//!   said on stderr (once, then at most once a minute); the half record is
//!   cut off. `audit.failClosed` turns that around: the call's result
//!   becomes `AUDIT_UNAVAILABLE`, and no call runs until a record can be
//!   written again.
//! * **Files.** `audit.jsonl` in the log's directory (0700), files 0600;
//!   rotated by size to `audit.1.jsonl` … `audit.N.jsonl`. Processes sharing
//!   the directory take an advisory lock (`.lock`) to rotate and write, and
//!   each record is one `write` to a file opened for appending, so their
//!   lines do not interleave.
//! * **Masking** (the [`mask`] module): values of arguments and `env`
//!   entries whose names are secrets' (the words the bash tool scrubs from
//!   the environment, and the settings' lists), and secrets inside strings
//!   that name themselves (`TOKEN=… cmd`, `--password …`, `Bearer …`).
//!
//! The [`CallRecord`] is public and stable (its `v` says the version): an
//! observer ([`AuditMiddleware::with_observer`]) gets each one as it is
//! made, for telemetry or a page of recent calls.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod mask;
mod middleware;
pub mod reader;
mod record;
pub mod time;
mod writer;

pub use mask::Masking;
pub use middleware::{AuditMiddleware, RecordObserver};
pub use record::{CallRecord, Outcome, RecordedApproval, RecordedDecision, RECORD_VERSION};
pub use writer::{
    default_dir, AuditConfig, AuditLog, AuditStats, CURRENT_FILE, DEFAULT_MAX_FILES,
    DEFAULT_MAX_FILE_BYTES, DEFAULT_QUEUE,
};
