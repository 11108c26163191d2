//! Our policy as a Claude Code `PreToolUse` hook: `dsh hook pre-tool-use`.

use dsh_policy::{Decision, Mode, Origin, PermissionPolicy};
use dsh_tools::ToolAnnotations;
use serde_json::{json, Value};

/// Claude Code's tools that only read.
const READ_ONLY_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LS", "NotebookRead", "WebSearch"];

/// The answer to Claude Code's `PreToolUse` input from our policy, or
/// `None` to leave the call to Claude Code's own flow (what only the mode
/// would ask about: Claude Code asks or allows by its own rules then).
///
/// `permission_mode` of the input, when it is one of ours, is the mode the
/// policy decides in.
///
/// # Errors
/// The input is not Claude Code's `PreToolUse` JSON (says what is missing).
pub fn pre_tool_use_answer(
    policy: &PermissionPolicy,
    input: &Value,
) -> Result<Option<Value>, String> {
    let tool = input
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or("the input has no \"tool_name\" string: is it Claude Code's PreToolUse JSON?")?;
    let args = input
        .get("tool_input")
        .filter(|v| v.is_object())
        .ok_or("the input has no \"tool_input\" object")?;
    let mut policy = policy.clone();
    if let Some(mode) = input
        .get("permission_mode")
        .and_then(Value::as_str)
        .and_then(|m| m.parse::<Mode>().ok())
    {
        policy.set_mode(mode);
    }
    let name = match tool {
        "Bash" => "bash".to_owned(),
        other => other.to_ascii_lowercase(),
    };
    let annotations = if READ_ONLY_TOOLS.contains(&tool) {
        ToolAnnotations::read_only()
    } else {
        ToolAnnotations::default()
    };
    let eval = policy.check_annotated(&name, args, &annotations);
    let decision = match (eval.decision, eval.origin) {
        (Decision::Allow, _) => "allow",
        (Decision::Deny, _) => "deny",
        (Decision::Ask, Origin::Mode) => return Ok(None),
        (Decision::Ask, _) => "ask",
    };
    let reason = match &eval.rule {
        Some(rule) => format!("dsh: {} (rule {rule})", eval.reason),
        None => format!("dsh: {}", eval.reason),
    };
    Ok(Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })))
}
