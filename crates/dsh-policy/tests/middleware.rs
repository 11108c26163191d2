//! The middleware through a real `ToolRegistry`, with tools that record
//! whether they ran: denials, plan mode, approval (each answer), fail-closed
//! without an approver.

use dsh_policy::{
    ApprovalAnswer, ApprovalRequest, ApproveAll, Approver, Decision, DecisionNote, DecisionSlot,
    Mode, PermissionMiddleware, PermissionPolicy, PermissionRules, Rule, RuleList,
};
use dsh_tools::{
    ContentBlock, Dialect, ErrorCode, ToolAnnotations, ToolContext, ToolDefinition, ToolExecution,
    ToolExecutionResult, ToolFuture, ToolRegistry,
};
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

const CWD: &str = "/work/proj";

/// A tool that records the arguments of every call that reached it.
struct Recorder {
    name: &'static str,
    read_only: bool,
    runs: Arc<Mutex<Vec<Value>>>,
}

impl ToolDefinition for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "records its calls"
    }

    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object"})
    }

    fn execute(&self, args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        self.runs.lock().unwrap().push(args);
        Box::pin(async { Ok(vec![ContentBlock::text("ran")]) })
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(self.read_only),
            ..ToolAnnotations::default()
        }
    }
}

/// Answers from a script, and keeps every request.
#[derive(Clone, Default)]
struct Scripted {
    answers: Arc<Mutex<VecDeque<ApprovalAnswer>>>,
    requests: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl Scripted {
    fn new(answers: &[ApprovalAnswer]) -> Self {
        Scripted {
            answers: Arc::new(Mutex::new(answers.iter().copied().collect())),
            requests: Arc::default(),
        }
    }

    fn asked(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    fn last(&self) -> ApprovalRequest {
        self.requests.lock().unwrap().last().cloned().unwrap()
    }
}

impl Approver for Scripted {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        self.requests.lock().unwrap().push(request);
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("the approver was asked more often than scripted");
        Box::pin(async move { answer })
    }
}

struct Harness {
    registry: ToolRegistry,
    permissions: PermissionMiddleware,
    bash_runs: Arc<Mutex<Vec<Value>>>,
    edit_runs: Arc<Mutex<Vec<Value>>>,
    read_runs: Arc<Mutex<Vec<Value>>>,
    calls: usize,
}

impl Harness {
    fn new(allow: &[&str], ask: &[&str], deny: &[&str], mode: Mode) -> Self {
        let rules = PermissionRules::parse(allow, ask, deny).unwrap();
        let permissions = PermissionMiddleware::new(PermissionPolicy::new(rules, mode, CWD));
        let registry = ToolRegistry::new();
        let bash_runs = Arc::new(Mutex::new(Vec::new()));
        let edit_runs = Arc::new(Mutex::new(Vec::new()));
        let read_runs = Arc::new(Mutex::new(Vec::new()));
        for (name, read_only, runs) in [
            ("bash", false, &bash_runs),
            ("edit", false, &edit_runs),
            ("read", true, &read_runs),
        ] {
            registry
                .register(Recorder {
                    name,
                    read_only,
                    runs: runs.clone(),
                })
                .unwrap();
        }
        registry.use_middleware(permissions.clone());
        Harness {
            registry,
            permissions,
            bash_runs,
            edit_runs,
            read_runs,
            calls: 0,
        }
    }

    fn approver(self, approver: impl Approver) -> Self {
        self.permissions.set_approver(Some(Arc::new(approver)));
        self
    }

    async fn call(&mut self, tool: &str, args: Value) -> ToolExecutionResult {
        self.calls += 1;
        let exec = ToolExecution::new(format!("c{}", self.calls), tool, args);
        self.registry.execute(exec).await
    }

    async fn bash(&mut self, command: &str) -> ToolExecutionResult {
        self.call("bash", json!({ "command": command })).await
    }

    fn bash_ran(&self) -> usize {
        self.bash_runs.lock().unwrap().len()
    }
}

#[tokio::test]
async fn allowed_calls_run() {
    let mut h = Harness::new(&["Bash(ls:*)", "Bash(cd:*)"], &[], &[], Mode::Default);
    let r = h.bash("cd src && ls -la").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "ran");
    assert_eq!(h.bash_ran(), 1);
}

#[tokio::test]
async fn denied_calls_do_not_run_and_name_the_rule() {
    let mut h =
        Harness::new(&["Bash(cd:*)"], &[], &["Bash(rm -rf:*)"], Mode::Default).approver(ApproveAll);
    let r = h.bash("cd x && rm -rf y").await;
    assert!(r.is_error);
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(
        r.text(),
        "Error: permission denied by rule deny Bash(rm -rf:*) for \"rm -rf y\""
    );
    assert_eq!(h.bash_ran(), 0);
}

#[tokio::test]
async fn ask_without_approver_fails_closed() {
    let mut h = Harness::new(&[], &[], &[], Mode::Default);
    let r = h.bash("make").await;
    assert_eq!(r.code(), Some(ErrorCode::ApprovalUnavailable));
    assert!(
        r.text()
            .starts_with("Error: approval required but no approver is available"),
        "{}",
        r.text()
    );
    assert_eq!(h.bash_ran(), 0);
    let r = h.call("edit", json!({"file_path": "src/a.rs"})).await;
    assert_eq!(r.code(), Some(ErrorCode::ApprovalUnavailable));
    assert!(h.edit_runs.lock().unwrap().is_empty());
}

#[tokio::test]
async fn allow_once_runs_and_asks_again() {
    let approver = Scripted::new(&[ApprovalAnswer::AllowOnce, ApprovalAnswer::AllowOnce]);
    let mut h = Harness::new(&[], &[], &[], Mode::Default).approver(approver.clone());
    assert!(!h.bash("make").await.is_error);
    assert!(!h.bash("make").await.is_error);
    assert_eq!(approver.asked(), 2);
    assert_eq!(h.bash_ran(), 2);
    let req = approver.last();
    assert_eq!(req.tool, "bash");
    assert_eq!(req.call_id, "c2");
    assert_eq!(req.arguments, json!({"command": "make"}));
    assert!(
        req.reason.contains("no rule matches \"make\""),
        "{}",
        req.reason
    );
    assert_eq!(req.allow_always_rules, ["Bash(make)"]);
    assert_eq!(req.reject_always_rules, ["Bash(make)"]);
}

#[tokio::test]
async fn allow_always_persists_for_the_session() {
    let approver = Scripted::new(&[ApprovalAnswer::AllowAlways, ApprovalAnswer::AllowOnce]);
    let mut h = Harness::new(&["Bash(cd:*)"], &[], &[], Mode::Default).approver(approver.clone());
    // Only the part that was asked about is granted: `make`, exactly.
    assert!(!h.bash("cd x && make").await.is_error);
    assert_eq!(approver.last().allow_always_rules, ["Bash(make)"]);
    assert_eq!(
        h.permissions.policy().session_rules().allow,
        [Rule::parse("Bash(make)").unwrap()]
    );
    // The next call runs without asking.
    assert!(!h.bash("make").await.is_error);
    assert!(!h.bash("timeout 60 make").await.is_error);
    assert_eq!(approver.asked(), 1);
    // A different command still asks.
    assert!(!h.bash("make install").await.is_error);
    assert_eq!(approver.asked(), 2);
    assert_eq!(h.bash_ran(), 4);
}

#[tokio::test]
async fn allow_always_outranks_ask_rules_but_not_deny_rules() {
    let approver = Scripted::new(&[ApprovalAnswer::AllowAlways]);
    let mut h = Harness::new(
        &[],
        &["Bash(git push:*)"],
        &["Bash(git push --force:*)"],
        Mode::Default,
    )
    .approver(approver.clone());
    assert!(!h.bash("git push origin main").await.is_error);
    assert_eq!(approver.last().rule.as_deref(), Some("Bash(git push:*)"));
    assert!(!h.bash("git push origin main").await.is_error);
    assert_eq!(approver.asked(), 1);
    let r = h.bash("git push --force origin main").await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(h.bash_ran(), 2);
}

#[tokio::test]
async fn reject_once_denies_and_asks_again() {
    let approver = Scripted::new(&[ApprovalAnswer::RejectOnce, ApprovalAnswer::AllowOnce]);
    let mut h = Harness::new(&[], &[], &[], Mode::Default).approver(approver.clone());
    let r = h.bash("make").await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(
        r.text(),
        "Error: permission denied: the user rejected this call (\"make\")"
    );
    assert_eq!(h.bash_ran(), 0);
    assert!(!h.bash("make").await.is_error);
    assert_eq!(approver.asked(), 2);
}

#[tokio::test]
async fn reject_always_denies_for_the_session() {
    let approver = Scripted::new(&[ApprovalAnswer::RejectAlways, ApprovalAnswer::AllowOnce]);
    let mut h = Harness::new(&[], &[], &[], Mode::Default).approver(approver.clone());
    let r = h.bash("make").await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert!(
        r.text()
            .contains("the user rejected this call and all like it"),
        "{}",
        r.text()
    );
    // Denied without asking from now on, even inside a compound command.
    let r = h.bash("ls && make").await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert!(r.text().contains("by rule deny Bash(make)"), "{}", r.text());
    assert_eq!(approver.asked(), 1);
    // Other commands still ask.
    assert!(!h.bash("make install").await.is_error);
    assert_eq!(approver.asked(), 2);
    assert_eq!(h.bash_ran(), 1);
}

#[tokio::test]
async fn approve_all_does_not_override_deny() {
    let mut h = Harness::new(&[], &[], &["Bash(rm:*)"], Mode::Default).approver(ApproveAll);
    assert!(!h.bash("make").await.is_error);
    assert_eq!(
        h.bash("make && rm x").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    assert_eq!(h.bash_ran(), 1);
}

#[tokio::test]
async fn plan_mode_vetoes_changes_with_plan_mode_code() {
    let mut h =
        Harness::new(&["Bash(make)"], &[], &["Bash(rm:*)"], Mode::Plan).approver(ApproveAll);
    let r = h.bash("make").await;
    assert_eq!(r.code(), Some(ErrorCode::PlanMode));
    assert!(
        r.text()
            .starts_with("Error: plan mode: finish your plan and ask the user to approve it"),
        "{}",
        r.text()
    );
    // Read-only commands and read-only tools run.
    assert!(!h.bash("ls -la && git status | head").await.is_error);
    assert!(!h.call("read", json!({"file_path": "a.rs"})).await.is_error);
    assert_eq!(h.read_runs.lock().unwrap().len(), 1);
    // Writes and non-read-only tools are vetoed.
    assert_eq!(
        h.bash("echo x > notes.md").await.code(),
        Some(ErrorCode::PlanMode)
    );
    assert_eq!(
        h.call("edit", json!({"file_path": "a.rs"})).await.code(),
        Some(ErrorCode::PlanMode)
    );
    // A deny rule is still reported as a denial.
    assert_eq!(
        h.bash("rm x").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    assert_eq!(h.bash_ran(), 1);
    // Leaving plan mode.
    h.permissions.set_mode(Mode::Default);
    assert_eq!(h.permissions.mode(), Mode::Default);
    assert!(!h.bash("make").await.is_error);
    assert_eq!(h.bash_ran(), 2);
}

#[tokio::test]
async fn accept_edits_allows_edits_inside_the_working_directory() {
    let mut h = Harness::new(
        &["Bash(echo:*)"],
        &[],
        &["Edit(/etc/**)"],
        Mode::AcceptEdits,
    );
    assert!(
        !h.call("edit", json!({"file_path": "src/lib.rs"}))
            .await
            .is_error
    );
    assert!(
        !h.call("edit", json!({"file_path": "/work/proj/README.md"}))
            .await
            .is_error
    );
    assert!(!h.bash("echo hi > notes.md").await.is_error);
    let r = h.call("edit", json!({"file_path": "../other/x"})).await;
    assert_eq!(r.code(), Some(ErrorCode::ApprovalUnavailable));
    let r = h.call("edit", json!({"file_path": "/etc/hosts"})).await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    let r = h.bash("echo hi > /tmp/x").await;
    assert_eq!(r.code(), Some(ErrorCode::ApprovalUnavailable));
    assert_eq!(h.edit_runs.lock().unwrap().len(), 2);
    assert_eq!(h.bash_ran(), 1);
}

#[tokio::test]
async fn other_tools_follow_tool_rules_and_modes() {
    let mut h = Harness::new(&["Edit(docs/**)"], &[], &["Read(*.env)"], Mode::DontAsk);
    // A read-only tool runs in dontAsk, unless a deny rule matches.
    assert!(
        !h.call("read", json!({"file_path": "src/a.rs"}))
            .await
            .is_error
    );
    let r = h.call("READ", json!({"file_path": "x"})).await;
    assert_eq!(
        r.code(),
        Some(ErrorCode::UnknownTool),
        "tool names in the registry are exact"
    );
    let r = h
        .call("read", json!({"file_path": "config/prod.env"}))
        .await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert!(
        r.text().contains("by rule deny Read(*.env)"),
        "{}",
        r.text()
    );
    // An edit tool matched by an Edit rule runs; unmatched is denied in dontAsk.
    assert!(
        !h.call("edit", json!({"file_path": "docs/a.md"}))
            .await
            .is_error
    );
    let r = h.call("edit", json!({"file_path": "src/a.rs"})).await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(h.edit_runs.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn allow_always_for_a_file_tool_grants_its_path_not_the_tool() {
    let approver = Scripted::new(&[ApprovalAnswer::AllowAlways, ApprovalAnswer::AllowOnce]);
    let mut h = Harness::new(&[], &[], &[], Mode::Default).approver(approver.clone());
    assert!(!h.call("edit", json!({"file_path": "a"})).await.is_error);
    assert_eq!(approver.last().allow_always_rules, ["Edit(a)"]);
    assert!(!h.call("edit", json!({"file_path": "a"})).await.is_error);
    assert_eq!(approver.asked(), 1);
    // Another file is asked about again: the answer was about `a`.
    assert!(!h.call("edit", json!({"file_path": "b"})).await.is_error);
    assert_eq!(approver.asked(), 2);
}

#[tokio::test]
async fn unknown_tools_and_malformed_arguments_pass_to_dispatch() {
    let mut h = Harness::new(&[], &[], &["Bash"], Mode::DontAsk);
    assert_eq!(
        h.call("nope", json!({})).await.code(),
        Some(ErrorCode::UnknownTool)
    );
    let exec = ToolExecution::new("x", "bash", "{not json");
    let r = h.registry.execute(exec).await;
    assert_eq!(r.code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(h.bash_ran(), 0);
}

#[tokio::test]
async fn unanalysable_commands_are_asked_even_in_bypass_mode() {
    let approver = Scripted::new(&[ApprovalAnswer::AllowAlways, ApprovalAnswer::RejectOnce]);
    let mut h =
        Harness::new(&[], &[], &["Bash(rm:*)"], Mode::BypassPermissions).approver(approver.clone());
    assert!(!h.bash("make && ls").await.is_error);
    assert_eq!(approver.asked(), 0);
    assert!(!h.bash("$CMD x").await.is_error);
    assert_eq!(approver.asked(), 1);
    // Nothing can be granted for it: it is asked again.
    assert_eq!(approver.last().allow_always_rules, Vec::<String>::new());
    assert_eq!(
        h.bash("$CMD x").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    assert_eq!(approver.asked(), 2);
    assert_eq!(
        h.bash("ls; rm x").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
}

#[tokio::test]
async fn added_rules_take_effect() {
    let mut h = Harness::new(&[], &[], &[], Mode::DontAsk);
    assert_eq!(
        h.bash("make").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    h.permissions
        .add_rule(RuleList::Allow, Rule::parse("Bash(make:*)").unwrap());
    assert!(!h.bash("make test").await.is_error);
    assert_eq!(
        h.permissions
            .check("bash", &json!({"command": "make"}))
            .decision,
        dsh_policy::Decision::Allow
    );
}

#[derive(dsh_tools::ToolArgs, serde::Deserialize)]
struct CommandArgs {
    /// The command.
    command: String,
}

#[tokio::test]
async fn arguments_the_schema_refuses_get_the_schemas_message_and_never_run() {
    let permissions = PermissionMiddleware::new(PermissionPolicy::new(
        PermissionRules::parse(&[] as &[&str], &[] as &[&str], &["Bash(rm:*)"]).unwrap(),
        Mode::Default,
        CWD,
    ));
    let registry = ToolRegistry::new();
    let ran = Arc::new(Mutex::new(0));
    let counter = ran.clone();
    registry
        .register(dsh_tools::define_tool(
            "bash",
            "Runs a command.",
            move |args: CommandArgs, _| {
                let counter = counter.clone();
                async move {
                    *counter.lock().unwrap() += 1;
                    Ok(vec![ContentBlock::text(args.command)])
                }
            },
        ))
        .unwrap();
    registry.use_middleware(permissions);
    for args in [
        json!({}),
        json!({"command": 5}),
        json!({"command": ["rm", "-rf"]}),
    ] {
        let result = registry
            .execute(ToolExecution::new("c1", "bash", args.clone()))
            .await;
        assert_eq!(result.code(), Some(ErrorCode::InvalidArgs), "{args}");
        assert!(
            result.text().starts_with("Error: invalid arguments: "),
            "{}",
            result.text()
        );
    }
    assert_eq!(*ran.lock().unwrap(), 0);
}

/// A call with a decision slot in its extensions; the note it leaves.
async fn noted(h: &mut Harness, tool: &str, args: Value) -> (ToolExecutionResult, DecisionNote) {
    h.calls += 1;
    let slot = DecisionSlot::new();
    let mut exec = ToolExecution::new(format!("c{}", h.calls), tool, args);
    exec.extensions.insert(slot.clone());
    let result = h.registry.execute(exec).await;
    (result, slot.note())
}

#[tokio::test]
async fn the_decision_is_noted_for_an_audit_trail() {
    let mut h = Harness::new(&["Bash(ls:*)"], &[], &["Bash(rm:*)"], Mode::Default)
        .approver(Scripted::new(&[ApprovalAnswer::AllowOnce]));

    let (result, note) = noted(&mut h, "bash", json!({"command": "ls -la"})).await;
    assert!(!result.is_error);
    assert_eq!(note.decision, Some(Decision::Allow));
    assert_eq!(note.origin, Some("rule"));
    assert_eq!(note.rule.as_deref(), Some("Bash(ls:*)"));
    assert!(note.approval.is_none());
    assert!(note.started.is_some() && note.decided.is_some());

    let (result, note) = noted(&mut h, "bash", json!({"command": "rm -rf x"})).await;
    assert!(result.is_error);
    assert_eq!(note.decision, Some(Decision::Deny));
    assert_eq!(note.rule.as_deref(), Some("Bash(rm:*)"));

    let (result, note) = noted(&mut h, "bash", json!({"command": "make"})).await;
    assert!(!result.is_error);
    assert_eq!(note.decision, Some(Decision::Ask));
    let approval = note.approval.expect("the answer is noted");
    assert_eq!(approval.answer, ApprovalAnswer::AllowOnce);
    assert_eq!(approval.answered_by, "approver");

    // Without an approver: nobody answered.
    h.permissions.set_approver(None);
    let (_, note) = noted(&mut h, "bash", json!({"command": "make"})).await;
    assert_eq!(
        note.approval.map(|a| a.answered_by),
        Some("nobody".to_owned())
    );
}
