//! Another server's tools judged by what their arguments mean: a shell
//! argument as our `bash`, a path as our file tools', typed text as
//! `bash_write`'s input; rules naming the tool with a specifier; a held
//! definition asking whatever the rules say.

#[path = "support/temp_dir.rs"]
mod temp_dir;
use temp_dir::TempDir;

use dsh_policy::{
    ApprovalAnswer, ApprovalRequest, Approver, Decision, Mode, Origin, PermissionMiddleware,
    PermissionPolicy, PermissionRules, RuleList,
};
use dsh_tools::{
    ArgumentMeaning, ArgumentMeanings, ContentBlock, DefinitionHold, Dialect, ErrorCode,
    ToolContext, ToolDefinition, ToolExecution, ToolFuture, ToolRegistry,
};
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ArgumentMeaning::*;

fn aliases(server: &str, tool: &str) -> Vec<String> {
    vec![
        format!("mcp__{server}__{tool}"),
        format!("mcp__{server}"),
        format!("mcp__{server}__*"),
    ]
}

fn meanings(list: &[(&str, ArgumentMeaning)]) -> ArgumentMeanings {
    ArgumentMeanings {
        arguments: list.iter().map(|(n, m)| ((*n).to_owned(), *m)).collect(),
        from: "the test".into(),
        base: None,
    }
}

fn policy(dir: &Path, allow: &[&str], ask: &[&str], deny: &[&str], mode: Mode) -> PermissionPolicy {
    let rules = PermissionRules::parse(allow, ask, deny).unwrap();
    PermissionPolicy::new(rules, mode, dir).with_home(Some("/home/u".into()))
}

struct Case<'a> {
    policy: PermissionPolicy,
    server: &'a str,
}

impl Case<'_> {
    fn check(
        &self,
        tool: &str,
        m: &[(&str, ArgumentMeaning)],
        args: Value,
    ) -> dsh_policy::Evaluation {
        self.policy.check_proxied(
            &format!("{}__{tool}", self.server),
            &aliases(self.server, tool),
            &meanings(m),
            &args,
        )
    }
}

const START: &[(&str, ArgumentMeaning)] = &[("command", Shell), ("timeout_ms", Data)];
const TYPE: &[(&str, ArgumentMeaning)] = &[("pid", Data), ("input", Input)];
const READ: &[(&str, ArgumentMeaning)] = &[("path", Read), ("head", Data)];
const WRITE: &[(&str, ArgumentMeaning)] = &[("path", Write), ("content", Data)];
const EXEC: &[(&str, ArgumentMeaning)] = &[("command", Argv), ("directory", Workdir)];

fn project() -> TempDir {
    let dir = TempDir::new("proxied");
    std::fs::write(dir.path().join(".env"), "KEY=1").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hi").unwrap();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    dir
}

#[test]
fn a_shell_argument_is_judged_as_our_bash_command() {
    let dir = project();
    let case = Case {
        policy: policy(
            dir.path(),
            &["Bash(npm test:*)"],
            &["Bash(git push:*)"],
            &["Bash(rm:*)"],
            Mode::Default,
        ),
        server: "dc",
    };
    let start = |cmd: &str| {
        case.check(
            "start_process",
            START,
            json!({"command": cmd, "timeout_ms": 5000}),
        )
    };
    let denied = start("npm test && rm -rf ~");
    assert_eq!(denied.decision, Decision::Deny, "{denied:?}");
    assert_eq!(denied.rule.as_deref(), Some("Bash(rm:*)"));
    // Deny rules see commands wherever they hide.
    assert_eq!(start("echo $(rm -rf /tmp/x)").decision, Decision::Deny);
    assert_eq!(start("bash -c 'ls; rm x'").decision, Decision::Deny);
    // Read-only lines run unasked; allow rules allow; the rest asks.
    assert_eq!(start("ls -la").decision, Decision::Allow);
    assert_eq!(start("npm test -- --watch").decision, Decision::Allow);
    assert_eq!(start("make").decision, Decision::Ask);
    assert_eq!(start("git push origin main").decision, Decision::Ask);
    assert_eq!(start("$(curl x)").decision, Decision::Ask);
    // A shell argument that is not text cannot be judged.
    let odd = case.check("start_process", START, json!({"command": ["ls"]}));
    assert_eq!(odd.decision, Decision::Ask);
}

#[test]
fn plan_and_dont_ask_modes_hold_for_shell_arguments() {
    let dir = project();
    let plan = Case {
        policy: policy(dir.path(), &[], &[], &[], Mode::Plan),
        server: "dc",
    };
    assert_eq!(
        plan.check("start_process", START, json!({"command": "ls -la"}))
            .decision,
        Decision::Allow
    );
    let refused = plan.check("start_process", START, json!({"command": "touch x"}));
    assert_eq!(
        (refused.decision, refused.origin),
        (Decision::Deny, Origin::PlanMode)
    );
    let dont_ask = Case {
        policy: policy(dir.path(), &[], &[], &[], Mode::DontAsk),
        server: "dc",
    };
    assert_eq!(
        dont_ask
            .check("start_process", START, json!({"command": "make"}))
            .decision,
        Decision::Deny
    );
}

#[test]
fn rules_naming_the_tool_match_its_shell_argument_as_bash_rules() {
    let dir = project();
    let case = Case {
        policy: policy(
            dir.path(),
            &["mcp__dc__start_process(make:*)"],
            &[],
            &["mcp__dc__start_process(rm:*)", "mcp__dc__*(shutdown:*)"],
            Mode::Default,
        ),
        server: "dc",
    };
    let start = |cmd: &str| case.check("start_process", START, json!({"command": cmd}));
    let denied = start("cd /tmp; rm x");
    assert_eq!(denied.decision, Decision::Deny);
    assert_eq!(denied.rule.as_deref(), Some("mcp__dc__start_process(rm:*)"));
    assert_eq!(start("sudo shutdown now").decision, Decision::Deny);
    assert_eq!(start("make all").decision, Decision::Allow);
    assert_eq!(start("make all && git push").decision, Decision::Ask);
    // The tool's rules are its own: our bash is not widened by them.
    let ours = case.policy.check("bash", &json!({"command": "make all"}));
    assert_eq!(ours.decision, Decision::Ask);
}

#[test]
fn a_tool_wide_allow_covers_the_tool_but_not_what_deny_and_ask_rules_name() {
    let dir = project();
    let case = Case {
        policy: policy(
            dir.path(),
            &["mcp__dc"],
            &["Bash(git push:*)"],
            &["Bash(rm:*)"],
            Mode::Default,
        ),
        server: "dc",
    };
    let start = |cmd: &str| case.check("start_process", START, json!({"command": cmd}));
    assert_eq!(start("make").decision, Decision::Allow);
    assert_eq!(start("make; rm -rf x").decision, Decision::Deny);
    assert_eq!(start("git push").decision, Decision::Ask);
    let wide_deny = Case {
        policy: policy(
            dir.path(),
            &["Bash(ls:*)"],
            &[],
            &["mcp__dc__start_process"],
            Mode::Default,
        ),
        server: "dc",
    };
    let denied = wide_deny.check("start_process", START, json!({"command": "ls"}));
    assert_eq!(denied.decision, Decision::Deny);
    assert!(wide_deny
        .policy
        .denies_every_call("dc__start_process", &aliases("dc", "start_process")));
    assert!(!wide_deny
        .policy
        .denies_every_call("dc__read_file", &aliases("dc", "read_file")));
}

#[test]
fn typed_text_holds_deny_rules_and_runs_unasked_only_by_a_rule() {
    let dir = project();
    let case = Case {
        policy: policy(
            dir.path(),
            &["Bash(npm test:*)"],
            &[],
            &["Bash(rm:*)"],
            Mode::Default,
        ),
        server: "dc",
    };
    let typed = |input: &str| {
        case.check(
            "interact_with_process",
            TYPE,
            json!({"pid": 4242, "input": input}),
        )
    };
    assert_eq!(typed("rm -rf x").decision, Decision::Deny);
    // `ls` would be read-only for a shell; but what reads it is unknown.
    assert_eq!(typed("ls").decision, Decision::Ask);
    assert_eq!(typed("import os; os.system('id')").decision, Decision::Ask);
    assert_eq!(typed("npm test").decision, Decision::Allow);
    let plan = Case {
        policy: policy(dir.path(), &["Bash(npm test:*)"], &[], &[], Mode::Plan),
        server: "dc",
    };
    let refused = plan.check(
        "interact_with_process",
        TYPE,
        json!({"pid": 1, "input": "npm test"}),
    );
    assert_eq!(
        (refused.decision, refused.origin),
        (Decision::Deny, Origin::PlanMode)
    );
}

#[test]
fn path_arguments_follow_read_and_edit_rules_and_the_working_directories() {
    let dir = project();
    let p = dir.path();
    let case = Case {
        policy: policy(
            p,
            &[],
            &[],
            &["Read(./.env)", "mcp__files__read_text_file(./private/**)"],
            Mode::Default,
        ),
        server: "files",
    };
    let read = |path: String| case.check("read_text_file", READ, json!({"path": path}));
    let denied = read(p.join(".env").display().to_string());
    assert_eq!(denied.decision, Decision::Deny, "{denied:?}");
    assert_eq!(denied.rule.as_deref(), Some("Read(./.env)"));
    assert_eq!(read(".env".into()).decision, Decision::Deny);
    assert_eq!(read("./sub/../.env".into()).decision, Decision::Deny);
    assert_eq!(read("private/key".into()).decision, Decision::Deny);
    assert_eq!(read("notes.txt".into()).decision, Decision::Allow);
    // Outside the working directories: asked, as a command's read is.
    assert_eq!(read("/etc/passwd".into()).decision, Decision::Ask);
    assert_eq!(read("~/.ssh/id_rsa".into()).decision, Decision::Ask);
    // An array of paths: each one counts.
    let many = case.check(
        "read_multiple_files",
        &[("paths", Read)],
        json!({"paths": ["notes.txt", ".env"]}),
    );
    assert_eq!(many.decision, Decision::Deny);
}

#[test]
fn writes_follow_edit_rules_modes_and_protected_directories() {
    let dir = project();
    let p = dir.path();
    let hook = p.join(".git/hooks/pre-commit").display().to_string();
    let bypass = Case {
        policy: policy(p, &[], &[], &[], Mode::BypassPermissions),
        server: "files",
    };
    let write = |case: &Case, path: &str| {
        case.check("write_file", WRITE, json!({"path": path, "content": "x"}))
    };
    assert_eq!(
        write(&bypass, &hook).decision,
        Decision::Ask,
        "a protected directory asks even in bypass"
    );
    assert_eq!(write(&bypass, "out.txt").decision, Decision::Allow);
    let plan = Case {
        policy: policy(p, &[], &[], &[], Mode::Plan),
        server: "files",
    };
    let refused = write(&plan, "out.txt");
    assert_eq!(
        (refused.decision, refused.origin),
        (Decision::Deny, Origin::PlanMode)
    );
    assert_eq!(
        plan.check("read_text_file", READ, json!({"path": "notes.txt"}))
            .decision,
        Decision::Allow
    );
    let accept = Case {
        policy: policy(p, &[], &[], &["Edit(./locked/**)"], Mode::AcceptEdits),
        server: "files",
    };
    assert_eq!(write(&accept, "out.txt").decision, Decision::Allow);
    assert_eq!(write(&accept, "/tmp/elsewhere").decision, Decision::Ask);
    assert_eq!(write(&accept, "locked/a").decision, Decision::Deny);
    let default = Case {
        policy: policy(p, &[], &[], &[], Mode::Default),
        server: "files",
    };
    assert_eq!(write(&default, "out.txt").decision, Decision::Ask);
}

#[test]
fn arguments_without_a_known_meaning_ask_and_operands_may_not_be_options() {
    let dir = project();
    let case = Case {
        policy: policy(dir.path(), &[], &[], &[], Mode::Default),
        server: "dc",
    };
    let with_shell = case.check(
        "start_process",
        START,
        json!({"command": "ls", "shell": "/tmp/evil"}),
    );
    assert_eq!(with_shell.decision, Decision::Ask);
    assert!(
        with_shell.reason.contains("\"shell\""),
        "{}",
        with_shell.reason
    );
    let plan = Case {
        policy: policy(dir.path(), &[], &[], &[], Mode::Plan),
        server: "dc",
    };
    let refused = plan.check(
        "start_process",
        START,
        json!({"command": "ls", "shell": "/tmp/evil"}),
    );
    assert_eq!(refused.decision, Decision::Deny);
    let diff: &[(&str, ArgumentMeaning)] = &[("repo_path", Read), ("target", Operand)];
    let git = Case {
        policy: policy(dir.path(), &[], &[], &[], Mode::Default),
        server: "git",
    };
    let path = dir.path().display().to_string();
    assert_eq!(
        git.check(
            "git_diff",
            diff,
            json!({"repo_path": path, "target": "main"})
        )
        .decision,
        Decision::Allow
    );
    assert_eq!(
        git.check(
            "git_diff",
            diff,
            json!({"repo_path": path, "target": "--output=/tmp/x"})
        )
        .decision,
        Decision::Ask
    );
    // A tool whose arguments are all data runs.
    assert_eq!(
        case.check("list_sessions", &[], json!({})).decision,
        Decision::Allow
    );
}

#[test]
fn an_argv_array_is_read_as_a_shell_line_in_its_directory() {
    let dir = project();
    let p = dir.path().display().to_string();
    let case = Case {
        policy: policy(
            dir.path(),
            &[],
            &[],
            &["Bash(rm:*)", "Read(./.env)"],
            Mode::Default,
        ),
        server: "sh",
    };
    let exec = |words: Value| {
        case.check(
            "execute_command",
            EXEC,
            json!({"command": words, "directory": p}),
        )
    };
    assert_eq!(exec(json!(["rm", "-rf", "x"])).decision, Decision::Deny);
    assert_eq!(exec(json!(["ls", "-la"])).decision, Decision::Allow);
    // Operator words are operators: the strictest reading.
    assert_eq!(exec(json!(["ls", "|", "rm", "x"])).decision, Decision::Deny);
    assert_eq!(exec(json!(["cat", ".env"])).decision, Decision::Deny);
}

/// A proxied tool that records its calls, with meanings and maybe a hold.
struct Proxied {
    aliases: Vec<String>,
    meanings: ArgumentMeanings,
    hold: Option<DefinitionHold>,
    runs: Arc<Mutex<Vec<Value>>>,
}

impl ToolDefinition for Proxied {
    fn name(&self) -> &str {
        "dc__start_process"
    }
    fn description(&self) -> &str {
        "starts a process"
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object"})
    }
    fn execute(&self, args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        self.runs.lock().unwrap().push(args);
        Box::pin(async { Ok(vec![ContentBlock::text("ran")]) })
    }
    fn aliases(&self) -> &[String] {
        &self.aliases
    }
    fn argument_meanings(&self) -> Option<&ArgumentMeanings> {
        Some(&self.meanings)
    }
    fn definition_hold(&self) -> Option<DefinitionHold> {
        self.hold.clone()
    }
}

#[derive(Clone)]
struct Answers(Arc<Mutex<Vec<ApprovalRequest>>>, ApprovalAnswer);

impl Approver for Answers {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        self.0.lock().unwrap().push(request);
        let answer = self.1;
        Box::pin(async move { answer })
    }
}

fn proxied_registry(
    mode: Mode,
    hold: Option<DefinitionHold>,
    answer: ApprovalAnswer,
) -> (
    ToolRegistry,
    Arc<Mutex<Vec<Value>>>,
    Answers,
    PermissionMiddleware,
) {
    let rules =
        PermissionRules::parse(Vec::<&str>::new(), Vec::<&str>::new(), ["Bash(rm:*)"]).unwrap();
    let permissions = PermissionMiddleware::new(PermissionPolicy::new(rules, mode, "/work/proj"));
    let answers = Answers(Arc::default(), answer);
    permissions.set_approver(Some(Arc::new(answers.clone())));
    let registry = ToolRegistry::new();
    let runs = Arc::new(Mutex::new(Vec::new()));
    registry
        .register(Proxied {
            aliases: aliases("dc", "start_process"),
            meanings: meanings(START),
            hold,
            runs: runs.clone(),
        })
        .unwrap();
    registry.use_middleware(permissions.clone());
    (registry, runs, answers, permissions)
}

async fn start(registry: &ToolRegistry, command: &str) -> dsh_tools::ToolExecutionResult {
    registry
        .execute(ToolExecution::new(
            "c",
            "dc__start_process",
            json!({"command": command}),
        ))
        .await
}

#[tokio::test]
async fn through_the_middleware_denied_calls_never_reach_the_tool() {
    let (registry, runs, answers, _) =
        proxied_registry(Mode::Default, None, ApprovalAnswer::AllowOnce);
    let denied = start(&registry, "npm test && rm -rf ~").await;
    assert_eq!(denied.code(), Some(ErrorCode::PermissionDenied));
    assert!(runs.lock().unwrap().is_empty());
    assert!(!start(&registry, "ls -la").await.is_error);
    assert_eq!(
        answers.0.lock().unwrap().len(),
        0,
        "a read-only line runs unasked"
    );
    assert!(!start(&registry, "make").await.is_error);
    assert_eq!(answers.0.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn allow_always_grants_the_command_for_the_proxied_tool_only() {
    let (registry, _, answers, permissions) =
        proxied_registry(Mode::Default, None, ApprovalAnswer::AllowAlways);
    assert!(!start(&registry, "make all").await.is_error);
    let offered = answers.0.lock().unwrap()[0].allow_always_rules.clone();
    assert_eq!(offered, vec!["mcp__dc__start_process(make all)".to_owned()]);
    assert!(!start(&registry, "make all").await.is_error);
    assert_eq!(answers.0.lock().unwrap().len(), 1, "asked once");
    let policy = permissions.policy();
    assert_eq!(
        policy
            .check("bash", &json!({"command": "make all"}))
            .decision,
        Decision::Ask
    );
    assert!(policy
        .session_rules()
        .list(RuleList::Allow)
        .iter()
        .any(|r| r.as_str() == "mcp__dc__start_process(make all)"));
}

#[tokio::test]
async fn a_held_definition_asks_even_for_what_the_rules_allow_and_always_accepts_it() {
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let hold = DefinitionHold {
        change: "description changed".into(),
        accept: Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }),
    };
    let (registry, runs, answers, _) = proxied_registry(
        Mode::BypassPermissions,
        Some(hold.clone()),
        ApprovalAnswer::AllowAlways,
    );
    assert!(!start(&registry, "ls").await.is_error);
    let asked = answers.0.lock().unwrap()[0].clone();
    assert!(
        asked.reason.contains("held: description changed"),
        "{}",
        asked.reason
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    assert_eq!(runs.lock().unwrap().len(), 1);
    // Asked for another reason too, the person still sees what changed.
    assert!(!start(&registry, "make").await.is_error);
    let asked = answers.0.lock().unwrap()[1].clone();
    assert!(
        asked.reason.contains("held: description changed"),
        "{}",
        asked.reason
    );
    // A deny rule still denies, asking nobody.
    assert!(start(&registry, "rm x").await.is_error);
    assert_eq!(answers.0.lock().unwrap().len(), 2);
    // dontAsk refuses a held tool.
    let (registry, runs, _, _) =
        proxied_registry(Mode::DontAsk, Some(hold), ApprovalAnswer::AllowOnce);
    let refused = start(&registry, "ls").await;
    assert_eq!(refused.code(), Some(ErrorCode::PermissionDenied));
    assert!(runs.lock().unwrap().is_empty());
}

#[test]
fn only_what_every_shell_reads_alike_runs_unasked() {
    // The server's shell may be zsh or fish, where these run code that
    // bash would not.
    let dir = project();
    let case = Case {
        policy: policy(dir.path(), &["Bash(npm test:*)"], &[], &[], Mode::Default),
        server: "dc",
    };
    let start = |cmd: &str| {
        case.check("start_process", START, json!({ "command": cmd }))
            .decision
    };
    for zsh_or_fish in [
        "x='$(touch /tmp/p)'; echo ${(e)x}",
        "ls *(e:'touch /tmp/p':)",
        "cat =(touch /tmp/p)",
        "ls (touch /tmp/p)",
        "npm test ${(e)x}",
        "echo \"$HOME\"",
        "echo 'a\\'b'",
    ] {
        assert_eq!(start(zsh_or_fish), Decision::Ask, "{zsh_or_fish}");
    }
    for plain in [
        "grep -c '^[a-z]*$' notes.txt",
        "git log --format='%h %s' -n 3",
        "find . -name '*.rs' | head -n 5",
        "ls -la . && cat notes.txt 2>&1",
        "npm test -- --watch",
    ] {
        assert_eq!(start(plain), Decision::Allow, "{plain}");
    }
    // The user's allow of the whole tool stands.
    let wide = Case {
        policy: policy(
            dir.path(),
            &["mcp__dc__start_process"],
            &[],
            &["Bash(rm:*)"],
            Mode::Default,
        ),
        server: "dc",
    };
    let check = |cmd: &str| {
        wide.check("start_process", START, json!({ "command": cmd }))
            .decision
    };
    assert_eq!(check("echo $HOME"), Decision::Allow);
    assert_eq!(check("echo $HOME; rm x"), Decision::Deny);
}
