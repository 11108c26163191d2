//! [`CallRecord`]: what the log keeps of one call, one JSON line each.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the record's shape, written in every record (`v`).
pub const RECORD_VERSION: u32 = 1;

/// One tool call as the audit log keeps it: one JSON line, camelCase keys,
/// absent optional fields left out.
///
/// ```json
/// {"v":1,"time":"2026-03-01T12:34:56.789Z","callId":"7","tool":"bash",
///  "agent":"alice","client":"claude-code/2.1.3","session":"3f2a…",
///  "arguments":{"command":"GH_TOKEN=[masked] gh pr list"},
///  "decision":{"verdict":"allow","origin":"rule","rule":"Bash(gh pr list:*)",
///              "ruleFile":"/home/a/.claude/settings.json","reason":"allowed by rule …","ms":0},
///  "outcome":{"isError":false,"exitCode":0},
///  "durationMs":412,"outputBytes":1834,"sandbox":"workspace-write"}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    /// The record format's version ([`RECORD_VERSION`]).
    pub v: u32,
    /// When the call reached the outermost layer: RFC 3339, UTC, milliseconds.
    pub time: String,
    /// The call's id (the MCP request id, the ACP tool call id, `call-1` for `dsh call`).
    pub call_id: String,
    /// The tool called, as the caller named it.
    pub tool: String,
    /// The principal: the agent on whose behalf the call ran (over HTTP, the
    /// authenticated principal; `dsh` for `dsh call`); absent on stdio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The client program, `name/version` as it introduced itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The protocol session: the MCP session id over HTTP, the ACP session
    /// id, one id per `dsh mcp` process on stdio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The arguments, secrets masked and long strings cut (see the `mask`
    /// module); the raw text when they were not JSON.
    pub arguments: Value,
    /// How the call was decided; absent when nothing decided (an unknown
    /// tool, arguments the schema refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<RecordedDecision>,
    /// How the call ended.
    pub outcome: Outcome,
    /// From the outermost layer's start to the result, in milliseconds
    /// (waiting for an approval included).
    pub duration_ms: u64,
    /// Bytes of the result's content (text as UTF-8, media as their
    /// base64 text) and structured content (as JSON).
    pub output_bytes: u64,
    /// The confinement the call ran under: `read-only` (the settings', or
    /// held so by the kernel: see [`RecordedDecision::kernel_hold`]),
    /// `workspace-write`, `danger-full-access`, `escalated` (approved to run
    /// outside the sandbox), or `none` (no sandbox configured).
    pub sandbox: String,
    /// The client's W3C trace context for the call, when it sent one: the
    /// record and the call's trace can be joined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// The W3C `tracestate` that came with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
}

/// The permission decision on a call, and who answered an ask.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedDecision {
    /// `allow`, `ask` or `deny`: the verdict before anyone was asked (an
    /// ask's answer is in [`approval`](Self::approval)).
    pub verdict: String,
    /// What decided: `rule`, `mode`, `planMode`, `unanalysable`, `sandbox`, `hook`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The rule that decided, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The settings file the rule came from; `session` for a rule an
    /// *always* answer added during the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_file: Option<String>,
    /// Why, as the model or the user read it (secrets masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What a PreToolUse hook said (`allow: …`, `ask: …`); for a hook that
    /// blocked the call, `deny` with the origin `hook`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// What the kernel was told to hold (`readOnly`), when anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_hold: Option<String>,
    /// Who answered the ask, and what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<RecordedApproval>,
    /// From the permission layer's start to its verdict (or to the
    /// answer), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

/// The answer to an ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedApproval {
    /// Who answered: `client form` (an MCP elicitation), `acp client`,
    /// `terminal`, `hook`, `approval page`, `yes` (`dsh call --yes`), … or
    /// `nobody` (no approver: the call failed closed).
    pub answered_by: String,
    /// `allowOnce`, `allowAlways`, `rejectOnce`, `rejectAlways`,
    /// `unavailable`, `declined` or `cancelled`.
    pub answer: String,
    /// How long the question waited for its answer, in milliseconds.
    pub waited_ms: u64,
}

/// How a call ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The result's `isError`.
    pub is_error: bool,
    /// The machine-routable code of a failure (`PERMISSION_DENIED`,
    /// `TOOL_TIMEOUT`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// A command's exit status (the bash tool; a non-zero exit is not an
    /// error of the call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed a command (`SIGTERM`, `SIGKILL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The command outran its timeout (and was killed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

impl Outcome {
    /// What the bash tool's result text says at its end: the last line is
    /// `[exit code: N]` or `[killed by signal: NAME]`, preceded among the
    /// closing notes by `[timed out after Nms]` when it timed out.
    pub fn read_command_status(&mut self, text: &str) {
        let mut lines = text.lines().rev();
        let Some(last) = lines.next() else {
            return;
        };
        if let Some(code) = last
            .strip_prefix("[exit code: ")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            self.exit_code = code.parse().ok();
        } else if let Some(name) = last
            .strip_prefix("[killed by signal: ")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            self.signal = Some(name.to_owned());
        } else {
            return;
        }
        // The notes before the status: each a bracketed line.
        for line in lines {
            if !(line.starts_with('[') && line.ends_with(']')) {
                break;
            }
            if line.starts_with("[timed out after ") {
                self.timed_out = true;
            }
        }
    }
}

impl CallRecord {
    /// The record as one JSON line, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }

    /// A record read back from a line of the log (`None` for a line that is
    /// not one, e.g. cut short by a full disk).
    pub fn from_line(line: &str) -> Option<CallRecord> {
        serde_json::from_str(line).ok()
    }

    /// The record's time in milliseconds since the epoch.
    pub fn epoch_ms(&self) -> Option<i64> {
        crate::time::parse_rfc3339(&self.time)
    }

    /// The verdict, or `none` when nothing decided.
    pub fn verdict(&self) -> &str {
        self.decision
            .as_ref()
            .map_or("none", |d| d.verdict.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_status_is_read_from_the_closing_markers() {
        let mut o = Outcome::default();
        o.read_command_status("hi\n[exit code: 3]");
        assert_eq!((o.exit_code, o.timed_out), (Some(3), false));
        let mut o = Outcome::default();
        o.read_command_status("(no output)\n[timed out after 200ms]\n[killed by signal: SIGKILL]");
        assert_eq!(o.signal.as_deref(), Some("SIGKILL"));
        assert!(o.timed_out);
        // A marker the command printed itself is output, not a note.
        let mut o = Outcome::default();
        o.read_command_status("[timed out after 1ms]\nlast\n[exit code: 0]");
        assert!(!o.timed_out);
        let mut o = Outcome::default();
        o.read_command_status("Error: something");
        assert_eq!(o, Outcome::default());
    }
}
