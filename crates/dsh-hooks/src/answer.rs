//! What one hook's run says, read as Claude Code reads it: the exit code
//! first (0 reads stdout as JSON when it is JSON, 2 blocks, anything else is
//! a non-blocking error), then the JSON's fields for the event.

use crate::config::HookSpec;
use crate::run::{HookRun, RunEnd, MAX_OUTPUT};
use dsh_policy::HookEvent;
use serde_json::Value;

/// A `PreToolUse` permission decision. Merged deny > defer > ask > allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    /// Skip the mode's ask.
    Allow,
    /// Ask the user.
    Ask,
    /// Leave it to whoever drives the agent: the approver.
    Defer,
    /// Refuse the call.
    Deny,
}

/// What one hook said.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// The call is blocked (exit 2, a failed `failClosed` hook), for this reason.
    pub block: Option<String>,
    /// `continue: false`: stop, for this reason.
    pub stop: Option<String>,
    /// `permissionDecision` and its reason (`PreToolUse`), or the
    /// `decision.behavior` (`PermissionRequest`: allow or deny).
    pub permission: Option<(Permission, String)>,
    /// `decision: "block"` of a post event, with its reason.
    pub post_block: Option<String>,
    /// `updatedInput`: the whole new input.
    pub updated_input: Option<Value>,
    /// `additionalContext`: for the model.
    pub context: Option<String>,
    /// A non-blocking error, for the log.
    pub error: Option<String>,
    /// `systemMessage`: for the user, logged.
    pub message: Option<String>,
}

fn first_line(text: &str) -> &str {
    text.trim().lines().next().unwrap_or("")
}

/// Reads one run of `spec` for `event`.
pub fn interpret(event: HookEvent, spec: &HookSpec, run: &HookRun) -> Answer {
    let failure = |why: String| {
        let mut a = Answer::default();
        if spec.fail_closed {
            a.block = Some(format!(
                "the {event:?} hook `{}` {why} (it fails closed)",
                spec.command
            ));
        } else {
            a.error = Some(why);
        }
        a
    };
    if run.overflowed {
        return failure(format!("printed more than {} MiB", MAX_OUTPUT >> 20));
    }
    match &run.end {
        RunEnd::TimedOut => {
            return failure(format!("timed out after {} s", spec.timeout.as_secs_f64()))
        }
        RunEnd::SpawnFailed(why) => return failure(why.clone()),
        RunEnd::Signalled(sig) => return failure(format!("was killed by signal {sig}")),
        RunEnd::Exited(2) => {
            let reason = json(&run.stdout)
                .and_then(|v| blocking_reason(event, &v))
                .or_else(|| Some(run.stderr.trim().to_owned()).filter(|s| !s.is_empty()))
                .unwrap_or_else(|| format!("blocked by {event:?} hook"));
            return Answer {
                block: Some(reason),
                ..Answer::default()
            };
        }
        RunEnd::Exited(0) => {}
        RunEnd::Exited(code) => {
            let detail = first_line(&run.stderr);
            return failure(if detail.is_empty() {
                format!("exited with code {code}")
            } else {
                format!("exited with code {code}: {detail}")
            });
        }
    }
    let out = run.stdout.trim();
    if out.is_empty() {
        return Answer::default();
    }
    let Some(value) = json(out) else {
        // Plain text on exit 0 is for the transcript in Claude Code: not an
        // error, unless the hook fails closed or it meant to be JSON.
        if out.starts_with('{') || spec.fail_closed {
            return failure("printed output that is not JSON".into());
        }
        return Answer::default();
    };
    let Value::Object(obj) = &value else {
        return failure("printed JSON that is not an object".into());
    };
    let mut a = Answer::default();
    let specific = obj.get("hookSpecificOutput").and_then(Value::as_object);
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    if obj.get("continue") == Some(&Value::Bool(false)) {
        a.stop = Some(
            text(obj.get("stopReason"))
                .unwrap_or_else(|| format!("a {event:?} hook stopped the call")),
        );
    }
    a.message = text(obj.get("systemMessage"));
    a.context = text(specific.and_then(|s| s.get("additionalContext")))
        .or_else(|| text(obj.get("additionalContext")));
    let reason = text(obj.get("reason"));
    match event {
        HookEvent::PreToolUse => {
            let decision = specific
                .and_then(|s| s.get("permissionDecision"))
                .and_then(Value::as_str);
            let why = text(specific.and_then(|s| s.get("permissionDecisionReason")))
                .or(reason.clone())
                .unwrap_or_default();
            a.permission = match decision {
                Some("allow") => Some((Permission::Allow, why)),
                Some("ask") => Some((Permission::Ask, why)),
                Some("defer") => Some((Permission::Defer, why)),
                Some("deny") => Some((Permission::Deny, why)),
                Some(other) => {
                    return failure(format!(
                        "gave permissionDecision {other:?} (allow, deny, ask or defer)"
                    ))
                }
                // The older top-level form.
                None => match obj.get("decision").and_then(Value::as_str) {
                    Some("approve") => Some((Permission::Allow, why)),
                    Some("block") => Some((Permission::Deny, why)),
                    _ => None,
                },
            };
            a.updated_input = specific.and_then(|s| s.get("updatedInput")).cloned();
        }
        HookEvent::PermissionRequest => {
            let d = specific.and_then(|s| s.get("decision"));
            let message = text(d.and_then(|d| d.get("message"))).unwrap_or_default();
            a.permission = match d.and_then(|d| d.get("behavior")).and_then(Value::as_str) {
                Some("allow") => Some((Permission::Allow, message)),
                Some("deny") => Some((Permission::Deny, message)),
                None => None,
                Some(other) => {
                    return failure(format!("gave decision.behavior {other:?} (allow or deny)"))
                }
            };
        }
        _ => {
            if obj.get("decision").and_then(Value::as_str) == Some("block") {
                a.post_block = Some(reason.unwrap_or_else(|| format!("blocked by {event:?} hook")));
            }
        }
    }
    a
}

fn json(text: &str) -> Option<Value> {
    serde_json::from_str(text.trim()).ok()
}

/// The reason of a blocking decision a JSON output gives, when it gives one.
fn blocking_reason(event: HookEvent, v: &Value) -> Option<String> {
    let specific = v.get("hookSpecificOutput");
    let reason = match event {
        HookEvent::PreToolUse
            if specific.and_then(|s| s.get("permissionDecision")) == Some(&"deny".into()) =>
        {
            specific.and_then(|s| s.get("permissionDecisionReason"))
        }
        HookEvent::PermissionRequest => specific
            .and_then(|s| s.get("decision"))
            .filter(|d| d.get("behavior") == Some(&"deny".into()))
            .and_then(|d| d.get("message")),
        _ if v.get("decision") == Some(&"block".into()) => v.get("reason"),
        _ => None,
    };
    reason
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|s| !s.is_empty())
}
