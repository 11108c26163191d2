//! The executor's error type.

use std::fmt;
use std::io;

/// What went wrong, for routing; the message says it for people and models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The working directory does not exist or is not a directory.
    Workdir,
    /// `bash` could not be started.
    Spawn,
    /// The call was cancelled through its [`CancellationToken`](tokio_util::sync::CancellationToken);
    /// every process it started has been killed.
    Cancelled,
    /// The executor already runs its maximum number of background tasks.
    TooManyTasks,
    /// No background task has that id.
    UnknownTask,
    /// The background task belongs to another agent.
    ForeignTask,
    /// The output filter is not a valid regular expression.
    InvalidFilter,
    /// The executor could not set itself up (spill directory, cgroup).
    Setup,
    /// Background tasks need a Tokio runtime, and there was none.
    NoRuntime,
    /// An I/O error while running a command.
    Io,
    /// The sandbox the settings ask for cannot be enforced by this kernel:
    /// nothing ran.
    SandboxUnavailable,
    /// Input for an interactive session names a key that does not exist.
    InvalidInput,
    /// Input was sent to a background task that has no terminal, or to a
    /// session that has ended.
    NoInput,
    /// Every live interactive session is in use: none can be closed to make
    /// room for another.
    TooManySessions,
}

/// An error of the executor. [`Display`](fmt::Display) gives the message the
/// model should see.
#[derive(Debug)]
pub struct ExecError {
    kind: ErrorKind,
    message: String,
    source: Option<io::Error>,
}

impl ExecError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn io(kind: ErrorKind, message: impl Into<String>, source: io::Error) -> Self {
        let message = format!("{}: {source}", message.into());
        Self {
            kind,
            message,
            source: Some(source),
        }
    }

    pub(crate) fn cancelled() -> Self {
        Self::new(
            ErrorKind::Cancelled,
            "command cancelled; every process it started was killed",
        )
    }

    pub(crate) fn unknown_task(id: &str) -> Self {
        Self::new(
            ErrorKind::UnknownTask,
            format!("unknown bash task \"{id}\""),
        )
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, as the model should see it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
