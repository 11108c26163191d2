//! Our policy as a Claude Code `PreToolUse` hook: `dsh hook pre-tool-use`.
//!
//! Claude Code runs the command before each of its own tool calls, and an
//! `allow` it prints skips Claude Code's own permission prompt. The hook
//! therefore only ever makes Claude Code stricter, except where an explicit
//! allow rule of the user's settings vouches for the whole call: see
//! [`pre_tool_use_answer`].

use dsh_policy::{Decision, Evaluation, Mode, Origin, PermissionPolicy};
use dsh_tools::ToolAnnotations;
use serde_json::{json, Value};

/// Claude Code's tools that only read a path the policy can place.
const PATH_READ_TOOLS: &[&str] = &["Read", "NotebookRead", "Glob", "Grep", "LS"];

/// Claude Code's tools that edit the file their path argument names.
const PATH_EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// How much the policy knows about one of Claude Code's tools.
enum Known {
    /// `Bash`: the command line is split into parts, each decided.
    Shell,
    /// A tool that reads or edits the path it names: decided by path
    /// rules, the working directories and the mode.
    Path {
        /// The tool only reads.
        read_only: bool,
    },
    /// Anything else (`WebFetch`, `Task`, `TodoWrite`, `mcp__…`): only
    /// the rules that name it say anything about it.
    Unmodelled {
        /// The names rules may also use for it (`mcp__SERVER`,
        /// `mcp__SERVER__*` for an MCP server's tool).
        aliases: Vec<String>,
    },
}

impl Known {
    /// Compared case-insensitively, so that no spelling of a name passes a
    /// tool the policy models as one it does not.
    fn of(tool: &str) -> Known {
        let is = |names: &[&str]| names.iter().any(|n| n.eq_ignore_ascii_case(tool));
        if tool.eq_ignore_ascii_case("Bash") {
            Known::Shell
        } else if is(PATH_READ_TOOLS) {
            Known::Path { read_only: true }
        } else if is(PATH_EDIT_TOOLS) {
            Known::Path { read_only: false }
        } else {
            Known::Unmodelled {
                aliases: mcp_aliases(tool),
            }
        }
    }
}

/// The names rules may use for Claude Code's `mcp__SERVER__TOOL`, lower
/// case: `mcp__SERVER` and `mcp__SERVER__*`. The server is the first
/// segment, as Claude Code splits the name. Another name has none.
fn mcp_aliases(tool: &str) -> Vec<String> {
    let lower = tool.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("mcp__") else {
        return Vec::new();
    };
    match rest.split_once("__") {
        Some((server, name)) if !server.is_empty() && !name.is_empty() => {
            vec![format!("mcp__{server}"), format!("mcp__{server}__*")]
        }
        _ => Vec::new(),
    }
}

/// The answer to Claude Code's `PreToolUse` input from our policy, or
/// `None` to leave the call to Claude Code's own permission flow.
///
/// An `allow` answered here skips Claude Code's own prompt, and nothing of
/// ours confines what then runs: the kernel layer that holds a call our
/// policy allowed only because the mode judged it harmless exists in our
/// pipeline, not in Claude Code. So the hook never widens Claude Code on
/// the strength of our analysis alone; it widens it only where the user's
/// own allow rule says so, and it may always make it stricter:
///
/// | call | answer |
/// |---|---|
/// | a deny rule matches (any part of a command line) | `deny` |
/// | `Bash`, `Read`, `Edit`, … denied by the mode (plan mode's veto, `dontAsk`) | `deny` |
/// | an ask rule matches, or the command line cannot be analysed | `ask` |
/// | `Bash`: every part allowed by an allow rule | `allow` |
/// | `Bash`: some part allowed only by the mode (read-only, runs nothing of its own, may run inside another program's argument, a read or write inside the working directory) | nothing |
/// | `Read`, `Edit`, …: an allow rule matches the path | `allow` |
/// | `Read`, `Edit`, …: allowed by the mode (a read-only tool, even outside the working directories; an `acceptEdits` edit inside them) | nothing |
/// | any tool: only the mode would ask | nothing |
/// | `WebFetch`, `Task`, `TodoWrite`, `mcp__…`: a deny, ask or allow rule names it | that rule's verdict |
/// | `WebFetch`, `Task`, `TodoWrite`, `mcp__…`: no rule names it | nothing |
///
/// "Nothing" means Claude Code decides by its own rules and modes, as if
/// the hook were not there.
///
/// **A command line** is allowed only when every one of its parts (see
/// [`PermissionPolicy::explain`]) got its allow from a rule the user wrote.
/// A part the analysis alone vouches for (read-only, or a `bash -c` or
/// `tee` that "runs nothing of its own", or a command that "may run inside
/// another program's argument") counts as not allowed by a rule, so the
/// line is left to Claude Code: `npm test && ls` under `Bash(npm test:*)`
/// stays silent. A part's verdict does not say whether the mode found it
/// harmless or found it needs nothing, except in the wording of its
/// reason, and an answer that skips a prompt must not rest on wording;
/// staying silent costs one prompt of Claude Code's, a wrong allow skips
/// one.
///
/// **Tools the policy does not model** are decided by their rules alone:
/// the mode's verdict on them (plan mode vetoing `ExitPlanMode` or
/// `TodoWrite`, `dontAsk` denying what no rule names) is Claude Code's to
/// give, by rules it knows and we do not.
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
    let (eval, decision) = match Known::of(tool) {
        Known::Shell => {
            let none = ToolAnnotations::default();
            let eval = policy.check_annotated("bash", args, &none);
            let decision = match (eval.decision, eval.origin) {
                (Decision::Allow, _) => {
                    // The call's verdict names its first allowed part only;
                    // every other part must have its rule too.
                    let parts = policy.explain("bash", args, &none);
                    let by_rules =
                        !parts.is_empty() && parts.iter().all(|p| allowed_by_rule(&p.evaluation));
                    by_rules.then_some(Decision::Allow)
                }
                _ => modelled(&eval),
            };
            (eval, decision)
        }
        Known::Path { read_only } => {
            let annotations = if read_only {
                ToolAnnotations::read_only()
            } else {
                ToolAnnotations::default()
            };
            let eval = policy.check_annotated(tool, args, &annotations);
            let decision = match eval.decision {
                Decision::Allow => allowed_by_rule(&eval).then_some(Decision::Allow),
                _ => modelled(&eval),
            };
            (eval, decision)
        }
        Known::Unmodelled { aliases } => {
            // Decided as a read-only tool: then no mode veto (plan mode)
            // stands before the rules, and what no rule names comes out as
            // the mode's allow, which is dropped below.
            let eval = policy.check_named(tool, &aliases, args, &ToolAnnotations::read_only());
            // A rule's ask stays a rule's verdict when `dontAsk` turns it
            // into a deny: the rule is still named.
            let decision = match eval.decision {
                Decision::Allow => allowed_by_rule(&eval).then_some(Decision::Allow),
                other => eval.rule.is_some().then_some(other),
            };
            (eval, decision)
        }
    };
    let Some(decision) = decision else {
        return Ok(None);
    };
    Ok(Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision.as_str(),
            "permissionDecisionReason": reason(&eval),
        }
    })))
}

/// Whether an allow came from a rule the user wrote, not from the mode.
fn allowed_by_rule(eval: &Evaluation) -> bool {
    eval.decision == Decision::Allow && eval.origin == Origin::Rule && eval.rule.is_some()
}

/// The answer on a call of a tool the policy models that it does not
/// allow: a deny of any origin (stricter than Claude Code is always
/// allowed), an ask of a rule or of a command that cannot be analysed;
/// nothing for an ask only the mode makes, which Claude Code makes too.
fn modelled(eval: &Evaluation) -> Option<Decision> {
    match (eval.decision, eval.origin) {
        (Decision::Allow, _) => None,
        (Decision::Deny, _) => Some(Decision::Deny),
        (Decision::Ask, Origin::Mode) => None,
        (Decision::Ask, _) => Some(Decision::Ask),
    }
}

/// `dsh: REASON`, with ` (rule RULE)` when the reason does not already
/// name the rule (a rule's verdict says `… by rule deny Bash(rm:*)`).
fn reason(eval: &Evaluation) -> String {
    match &eval.rule {
        Some(rule) if !eval.reason.contains(rule.as_str()) => {
            format!("dsh: {} (rule {rule})", eval.reason)
        }
        _ => format!("dsh: {}", eval.reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_policy::PermissionRules;

    const CWD: &str = "/work/proj";

    fn policy(allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionPolicy {
        let rules = PermissionRules::parse(
            allow.iter().copied(),
            ask.iter().copied(),
            deny.iter().copied(),
        )
        .unwrap();
        PermissionPolicy::new(rules, Mode::Default, CWD).with_home(Some("/home/u".into()))
    }

    /// Claude Code's input, as it sends it.
    fn input(mode: &str, tool: &str, tool_input: Value) -> Value {
        json!({
            "session_id": "abc123",
            "transcript_path": "/home/u/.claude/projects/proj/x.jsonl",
            "cwd": CWD,
            "permission_mode": mode,
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": "toolu_01",
        })
    }

    /// The decision answered (`None`: silent) and its reason.
    fn answer_in(
        p: &PermissionPolicy,
        mode: &str,
        tool: &str,
        tool_input: Value,
    ) -> (Option<String>, String) {
        let answer = pre_tool_use_answer(p, &input(mode, tool, tool_input)).unwrap();
        match answer {
            None => (None, String::new()),
            Some(a) => {
                let out = &a["hookSpecificOutput"];
                assert_eq!(out["hookEventName"], "PreToolUse");
                (
                    out["permissionDecision"].as_str().map(str::to_owned),
                    out["permissionDecisionReason"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            }
        }
    }

    fn decision(p: &PermissionPolicy, tool: &str, tool_input: Value) -> Option<String> {
        answer_in(p, "default", tool, tool_input).0
    }

    fn bash(p: &PermissionPolicy, command: &str) -> Option<String> {
        decision(p, "Bash", json!({ "command": command }))
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_owned())
    }

    #[test]
    fn a_read_outside_the_working_directory_is_never_allowed_by_the_mode() {
        let none = policy(&[], &[], &[]);
        for mode in ["default", "acceptEdits", "bypassPermissions", "plan"] {
            let (d, _) = answer_in(&none, mode, "Read", json!({"file_path": "/etc/shadow"}));
            assert_eq!(d, None, "{mode}");
        }
        for (tool, args) in [
            ("Glob", json!({"pattern": "*", "path": "/etc"})),
            ("Grep", json!({"pattern": "root", "path": "/etc"})),
            ("LS", json!({"path": "/etc"})),
            ("NotebookRead", json!({"notebook_path": "/etc/x.ipynb"})),
        ] {
            assert_eq!(decision(&none, tool, args), None, "{tool}");
        }
        // Nor inside: the mode's read-only allow is Claude Code's to give.
        let inside = json!({"file_path": format!("{CWD}/README.md")});
        assert_eq!(decision(&none, "Read", inside), None);
    }

    #[test]
    fn an_explicit_allow_rule_for_the_path_allows_it() {
        let p = policy(&["Read(//etc/shadow)"], &[], &[]);
        let (d, why) = answer_in(&p, "default", "Read", json!({"file_path": "/etc/shadow"}));
        assert_eq!(d, some("allow"));
        assert_eq!(why.matches("Read(//etc/shadow)").count(), 1, "{why}");
        // Only for that path.
        assert_eq!(
            decision(&p, "Read", json!({"file_path": "/etc/passwd"})),
            None
        );
    }

    #[test]
    fn edits_are_allowed_only_by_a_rule() {
        let none = policy(&[], &[], &[]);
        let inside =
            json!({"file_path": format!("{CWD}/src/lib.rs"), "old_string": "a", "new_string": "b"});
        let outside = json!({"file_path": "/etc/hosts", "content": "x"});
        for mode in ["default", "acceptEdits"] {
            for tool in ["Edit", "Write", "MultiEdit"] {
                assert_eq!(answer_in(&none, mode, tool, inside.clone()).0, None);
                assert_eq!(answer_in(&none, mode, tool, outside.clone()).0, None);
            }
        }
        let ruled = policy(&["Edit(./src/**)"], &[], &["Edit(//etc/**)"]);
        assert_eq!(decision(&ruled, "Edit", inside), some("allow"));
        assert_eq!(decision(&ruled, "Write", outside), some("deny"));
        // Plan mode's veto is stricter than Claude Code: answered.
        let plan = answer_in(
            &none,
            "plan",
            "Write",
            json!({"file_path": format!("{CWD}/x")}),
        );
        assert_eq!(plan.0, some("deny"));
    }

    #[test]
    fn a_bash_line_is_allowed_only_when_every_part_has_its_rule() {
        let p = policy(
            &[
                "Bash(npm test:*)",
                "Bash(ssh:*)",
                "Bash(echo:*)",
                "Bash(ls:*)",
            ],
            &[],
            &[],
        );
        assert_eq!(bash(&p, "npm test -- --watch=false"), some("allow"));
        assert_eq!(bash(&p, "npm test && ls src"), some("allow"));
        // The call's verdict names a rule (its first part), but `cat` is
        // allowed only because the mode judged it read-only.
        assert_eq!(bash(&p, "npm test && cat README.md"), None);
        // A part that runs nothing of its own, or may run inside another
        // program's argument: the analysis vouches for it, not a rule.
        assert_eq!(bash(&p, "bash -c 'npm test'"), None);
        assert_eq!(bash(&p, "ssh host 'npm test'"), None);
        // A write inside the working directory the mode would allow.
        let edits = answer_in(
            &p,
            "acceptEdits",
            "Bash",
            json!({"command": "echo hi > out.txt"}),
        );
        assert_eq!(edits.0, None);
        // A command that runs nothing.
        assert_eq!(bash(&p, ""), None);
        assert_eq!(bash(&p, "# just a comment"), None);
    }

    #[test]
    fn read_only_bash_is_left_to_claude_code() {
        let none = policy(&[], &[], &[]);
        for cmd in ["ls", "git status", "cat /etc/shadow", "grep -r x src"] {
            assert_eq!(bash(&none, cmd), None, "{cmd}");
        }
        for mode in ["acceptEdits", "bypassPermissions"] {
            let (d, _) = answer_in(&none, mode, "Bash", json!({"command": "mkdir x"}));
            assert_eq!(d, None, "{mode}");
        }
        // Only the mode would ask: silent too.
        assert_eq!(bash(&none, "make"), None);
    }

    #[test]
    fn deny_and_ask_rules_and_unanalysable_lines_are_answered() {
        let p = policy(
            &["Bash(npm test:*)"],
            &["Bash(git push:*)"],
            &["Bash(rm:*)", "Read(./.env)"],
        );
        let (d, why) = answer_in(&p, "default", "Bash", json!({"command": "rm -rf x"}));
        assert_eq!(d, some("deny"));
        assert!(why.starts_with("dsh: "), "{why}");
        assert_eq!(why.matches("Bash(rm:*)").count(), 1, "{why}");
        assert_eq!(bash(&p, "npm test && rm -rf build"), some("deny"));
        assert_eq!(bash(&p, "cat .env | base64"), some("deny"));
        let env = json!({"file_path": format!("{CWD}/.env")});
        assert_eq!(decision(&p, "Read", env), some("deny"));
        let (d, why) = answer_in(
            &p,
            "default",
            "Bash",
            json!({"command": "git push origin main"}),
        );
        assert_eq!(d, some("ask"));
        assert_eq!(why.matches("Bash(git push:*)").count(), 1, "{why}");
        assert_eq!(bash(&p, "eval \"$X\""), some("ask"));
        // dontAsk denies what it would ask about: stricter, answered.
        let (d, _) = answer_in(&p, "dontAsk", "Bash", json!({"command": "make"}));
        assert_eq!(d, some("deny"));
    }

    #[test]
    fn unmodelled_tools_answer_only_their_rules() {
        let none = policy(&[], &[], &[]);
        for tool in [
            "WebFetch",
            "WebSearch",
            "Task",
            "TodoWrite",
            "ExitPlanMode",
            "mcp__github__create_issue",
        ] {
            for mode in [
                "default",
                "plan",
                "dontAsk",
                "bypassPermissions",
                "acceptEdits",
            ] {
                let (d, _) = answer_in(&none, mode, tool, json!({"url": "https://x.example"}));
                assert_eq!(d, None, "{tool} in {mode}");
            }
        }
        let p = policy(
            &["WebSearch", "mcp__docs"],
            &["WebFetch"],
            &["mcp__github__*", "Task"],
        );
        assert_eq!(
            decision(&p, "WebSearch", json!({"query": "x"})),
            some("allow")
        );
        assert_eq!(decision(&p, "mcp__docs__search", json!({})), some("allow"));
        assert_eq!(
            decision(&p, "WebFetch", json!({"url": "https://x"})),
            some("ask")
        );
        // An ask rule holds in plan mode too: no mode veto stands before it.
        let (d, _) = answer_in(&p, "plan", "WebFetch", json!({"url": "https://x"}));
        assert_eq!(d, some("ask"));
        let (d, _) = answer_in(&p, "dontAsk", "WebFetch", json!({"url": "https://x"}));
        assert_eq!(d, some("deny"));
        let (d, why) = answer_in(&p, "default", "mcp__github__create_issue", json!({}));
        assert_eq!(d, some("deny"));
        assert_eq!(why.matches("mcp__github__*").count(), 1, "{why}");
        assert_eq!(decision(&p, "Task", json!({"prompt": "x"})), some("deny"));
        assert_eq!(decision(&p, "TodoWrite", json!({"todos": []})), None);
        // Another server's tool is not named by `mcp__docs`.
        assert_eq!(decision(&p, "mcp__docsearch__q", json!({})), None);
    }

    #[test]
    fn the_rule_is_named_once() {
        let rule_reason = Evaluation {
            decision: Decision::Deny,
            reason: "\"rm -rf x\" denied by rule deny Bash(rm:*)".into(),
            rule: Some("Bash(rm:*)".into()),
            origin: Origin::Rule,
        };
        assert_eq!(
            reason(&rule_reason),
            "dsh: \"rm -rf x\" denied by rule deny Bash(rm:*)"
        );
        let other = Evaluation {
            reason: "something else".into(),
            ..rule_reason
        };
        assert_eq!(reason(&other), "dsh: something else (rule Bash(rm:*))");
    }

    #[test]
    fn mcp_names_give_server_aliases() {
        assert_eq!(
            mcp_aliases("mcp__GitHub__create_issue"),
            ["mcp__github", "mcp__github__*"]
        );
        assert!(mcp_aliases("mcp__github").is_empty());
        assert!(mcp_aliases("WebFetch").is_empty());
    }

    #[test]
    fn input_that_is_not_claude_codes_is_an_error() {
        let p = policy(&[], &[], &[]);
        assert!(pre_tool_use_answer(&p, &json!({"tool_name": 5})).is_err());
        assert!(pre_tool_use_answer(&p, &json!({"tool_name": "Bash"})).is_err());
    }
}
