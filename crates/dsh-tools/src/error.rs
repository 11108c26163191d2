//! Structured errors: [`ErrorCode`] and [`ToolError`].

use crate::validate::Violation;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A machine-routable error code. Serialises as SCREAMING_SNAKE (`"INVALID_ARGS"`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Arguments are not JSON, not an object, or violate the schema.
    InvalidArgs,
    /// No tool of that name.
    UnknownTool,
    /// A tool of that name is already registered.
    DuplicateTool,
    /// A tool's name is not what model providers accept (`^[a-zA-Z0-9_-]{1,64}$`).
    InvalidToolName,
    /// A tool's schema is inconsistent (a default or enum value that does not fit its type).
    InvalidSchema,
    /// The tool body failed without a more specific code.
    ToolError,
    /// The tool body or a middleware panicked.
    ToolPanicked,
    /// Cancelled before the body started.
    AbortedBeforeDispatch,
    /// Cancelled after the body started.
    Aborted,
    /// The call outran its deadline.
    ToolTimeout,
    /// A deny rule, a hook or a user said no.
    PermissionDenied,
    /// A rule said *ask* and nobody can be asked.
    ApprovalUnavailable,
    /// Plan mode vetoed a call that could change something.
    PlanMode,
    /// A hook blocked the call.
    HookBlocked,
    /// The requested confinement cannot be applied on this machine.
    SandboxUnavailable,
    /// A caller's limit (calls at once) was reached; the call did not start.
    LimitExceeded,
    /// The audit log cannot be written and the settings say calls must
    /// then fail (`audit.failClosed`).
    AuditUnavailable,
}

impl ErrorCode {
    /// The wire form, e.g. `"INVALID_ARGS"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::DuplicateTool => "DUPLICATE_TOOL",
            ErrorCode::InvalidToolName => "INVALID_TOOL_NAME",
            ErrorCode::InvalidSchema => "INVALID_SCHEMA",
            ErrorCode::ToolError => "TOOL_ERROR",
            ErrorCode::ToolPanicked => "TOOL_PANICKED",
            ErrorCode::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::ToolTimeout => "TOOL_TIMEOUT",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::ApprovalUnavailable => "APPROVAL_UNAVAILABLE",
            ErrorCode::PlanMode => "PLAN_MODE",
            ErrorCode::HookBlocked => "HOOK_BLOCKED",
            ErrorCode::SandboxUnavailable => "SANDBOX_UNAVAILABLE",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::AuditUnavailable => "AUDIT_UNAVAILABLE",
        }
    }

    /// The error class name that goes with the code in `ToolErrorInfo.name`
    /// (the reference's `HarnessError` subclass names).
    pub fn error_name(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgs => "ToolArgsError",
            ErrorCode::UnknownTool => "ToolNotFoundError",
            ErrorCode::DuplicateTool => "DuplicateToolError",
            ErrorCode::InvalidToolName => "InvalidToolNameError",
            ErrorCode::InvalidSchema => "InvalidSchemaError",
            ErrorCode::ToolError => "ToolError",
            ErrorCode::ToolPanicked => "ToolPanickedError",
            ErrorCode::AbortedBeforeDispatch | ErrorCode::Aborted => "AbortError",
            ErrorCode::ToolTimeout => "ToolTimeoutError",
            ErrorCode::PermissionDenied => "PermissionDeniedError",
            ErrorCode::ApprovalUnavailable => "ApprovalUnavailableError",
            ErrorCode::PlanMode => "PlanModeError",
            ErrorCode::HookBlocked => "HookBlockedError",
            ErrorCode::SandboxUnavailable => "SandboxUnavailableError",
            ErrorCode::LimitExceeded => "LimitExceededError",
            ErrorCode::AuditUnavailable => "AuditUnavailableError",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure the model sees: a code, a message, and for [`ErrorCode::InvalidArgs`]
/// every schema violation.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    code: ErrorCode,
    message: String,
    violations: Vec<Violation>,
}

impl ToolError {
    /// An error with an explicit code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            violations: Vec::new(),
        }
    }

    /// A plain tool failure (`TOOL_ERROR`).
    pub fn msg(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ToolError, message)
    }

    /// `INVALID_ARGS` with every violation; the message is `invalid arguments: v1; v2`.
    pub fn invalid_args(violations: Vec<Violation>) -> Self {
        let mut message = String::from("invalid arguments: ");
        for (i, v) in violations.iter().enumerate() {
            if i > 0 {
                message.push_str("; ");
            }
            message.push_str(v.message());
        }
        ToolError {
            code: ErrorCode::InvalidArgs,
            message,
            violations,
        }
    }

    /// The machine-routable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message the model sees (after `Error: `).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The schema violations of an `INVALID_ARGS` error; empty otherwise.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// The message of an error and of every error that caused it:
/// `cannot open config: permission denied`.
fn chain_message(err: &(dyn std::error::Error + 'static)) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Some errors repeat their source in their own message.
        if !message.ends_with(&cause_text) {
            message.push_str(": ");
            message.push_str(&cause_text);
        }
        source = cause.source();
    }
    message
}

impl ToolError {
    /// A `TOOL_ERROR` from any error, its causes appended (`a: b: c`).
    ///
    /// ```
    /// use dsh_tools::{ErrorCode, ToolError};
    ///
    /// fn read_config(path: &str) -> Result<String, ToolError> {
    ///     Ok(std::fs::read_to_string(path)?)
    /// }
    /// let err = read_config("/nonexistent/config").unwrap_err();
    /// assert_eq!(err.code(), ErrorCode::ToolError);
    /// assert!(err.message().starts_with("No such file or directory"));
    /// ```
    pub fn from_error(err: &(dyn std::error::Error + 'static)) -> Self {
        Self::msg(chain_message(err))
    }
}

/// `?` on the errors tool bodies and middleware meet most: each becomes
/// `TOOL_ERROR` with the error's message (and its causes).
macro_rules! from_errors {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for ToolError {
            fn from(err: $t) -> Self {
                ToolError::from_error(&err)
            }
        }
    )*};
}

from_errors!(
    std::io::Error,
    serde_json::Error,
    std::fmt::Error,
    std::num::ParseIntError,
    std::num::ParseFloatError,
    std::str::Utf8Error,
    std::string::FromUtf8Error,
);

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::msg(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::msg(message)
    }
}

impl From<Box<dyn std::error::Error + Send + Sync + 'static>> for ToolError {
    fn from(err: Box<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        ToolError::from_error(err.as_ref())
    }
}

impl From<Box<dyn std::error::Error + 'static>> for ToolError {
    fn from(err: Box<dyn std::error::Error + 'static>) -> Self {
        ToolError::from_error(err.as_ref())
    }
}

/// `?` on an `anyhow::Error` (with the `anyhow` feature): `TOOL_ERROR` with
/// its whole context chain.
#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for ToolError {
    fn from(err: anyhow::Error) -> Self {
        ToolError::msg(format!("{err:#}"))
    }
}
