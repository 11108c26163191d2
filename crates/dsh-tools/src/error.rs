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
}

impl ErrorCode {
    /// The wire form, e.g. `"INVALID_ARGS"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::DuplicateTool => "DUPLICATE_TOOL",
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
        }
    }

    /// The error class name that goes with the code in `ToolErrorInfo.name`
    /// (the reference's `HarnessError` subclass names).
    pub fn error_name(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgs => "ToolArgsError",
            ErrorCode::UnknownTool => "ToolNotFoundError",
            ErrorCode::DuplicateTool => "DuplicateToolError",
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
