//! Modes and tool-level rules for tools other than bash; the evaluation's shape.

use dsh_policy::{Decision, Mode, Origin, PermissionPolicy, PermissionRules, PLAN_MODE_MESSAGE};
use dsh_tools::ToolAnnotations;
use serde_json::{json, Value};

const CWD: &str = "/work/proj";

fn policy(allow: &[&str], ask: &[&str], deny: &[&str], mode: Mode) -> PermissionPolicy {
    PermissionPolicy::new(PermissionRules::parse(allow, ask, deny).unwrap(), mode, CWD)
        .with_home(Some("/home/u".into()))
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations::read_only()
}

fn decide(p: &PermissionPolicy, tool: &str, args: Value, ro: bool) -> Decision {
    let a = if ro {
        read_only()
    } else {
        ToolAnnotations::default()
    };
    p.check_annotated(tool, &args, &a).decision
}

#[test]
fn unmatched_calls_by_mode() {
    use Decision::*;
    // (mode, read-only tool, other tool, edit inside cwd, edit outside cwd)
    let table = [
        (Mode::Default, Allow, Ask, Ask, Ask),
        (Mode::AcceptEdits, Allow, Ask, Allow, Ask),
        (Mode::Plan, Allow, Deny, Deny, Deny),
        (Mode::DontAsk, Allow, Deny, Deny, Deny),
        (Mode::BypassPermissions, Allow, Allow, Allow, Allow),
    ];
    for (mode, ro, other, inside, outside) in table {
        let p = policy(&[], &[], &[], mode);
        assert_eq!(
            decide(&p, "grep", json!({"pattern": "x"}), true),
            ro,
            "{mode}"
        );
        assert_eq!(decide(&p, "deploy", json!({}), false), other, "{mode}");
        assert_eq!(
            decide(&p, "edit", json!({"file_path": "src/a.rs"}), false),
            inside,
            "{mode}"
        );
        assert_eq!(
            decide(&p, "Write", json!({"file_path": "/tmp/a.rs"}), false),
            outside,
            "{mode}"
        );
        assert_eq!(
            decide(&p, "edit", json!({"file_path": "../x/a.rs"}), false),
            outside,
            "{mode}"
        );
    }
}

#[test]
fn plan_mode_veto_is_marked_and_explained() {
    let p = policy(&["deploy"], &[], &[], Mode::Plan);
    let e = p.check("deploy", &json!({}));
    assert_eq!(e.decision, Decision::Deny);
    assert_eq!(e.origin, Origin::PlanMode);
    assert!(e.reason.starts_with(PLAN_MODE_MESSAGE), "{}", e.reason);
    assert!(e.reason.contains("deploy is not read-only"), "{}", e.reason);
}

#[test]
fn precedence_is_deny_then_ask_then_allow() {
    let p = policy(
        &["deploy"],
        &["deploy"],
        &["deploy"],
        Mode::BypassPermissions,
    );
    assert_eq!(p.check("deploy", &json!({})).decision, Decision::Deny);
    let p = policy(&["deploy"], &["deploy"], &[], Mode::BypassPermissions);
    assert_eq!(p.check("deploy", &json!({})).decision, Decision::Ask);
    let p = policy(&["deploy"], &[], &[], Mode::DontAsk);
    assert_eq!(p.check("deploy", &json!({})).decision, Decision::Allow);
    // Deny beats read-only.
    let p = policy(&[], &[], &["grep"], Mode::Default);
    assert_eq!(decide(&p, "grep", json!({}), true), Decision::Deny);
}

#[test]
fn tool_names_are_case_insensitive() {
    let p = policy(&["DEPLOY"], &[], &["bash(rm:*)"], Mode::DontAsk);
    assert_eq!(p.check("Deploy", &json!({})).decision, Decision::Allow);
    assert_eq!(
        p.check("BASH", &json!({"command": "rm x"})).decision,
        Decision::Deny
    );
}

#[test]
fn path_specifiers_match_the_path_argument() {
    let p = policy(
        &["Write(docs/**)", "Read(~/notes/*.md)"],
        &[],
        &["Read(*.pem)", "Edit(/etc/**)"],
        Mode::DontAsk,
    );
    assert_eq!(
        decide(&p, "write", json!({"file_path": "docs/a/b.md"}), false),
        Decision::Allow
    );
    assert_eq!(
        decide(&p, "write", json!({"path": "./docs/x"}), false),
        Decision::Allow
    );
    assert_eq!(
        decide(&p, "write", json!({"file_path": "src/x"}), false),
        Decision::Deny
    );
    assert_eq!(
        decide(&p, "write", json!({}), false),
        Decision::Deny,
        "no path: only tool-wide rules match"
    );
    assert_eq!(
        decide(
            &p,
            "read",
            json!({"file_path": "/home/u/notes/a.md"}),
            false
        ),
        Decision::Allow
    );
    assert_eq!(
        decide(&p, "read", json!({"file_path": "/srv/key.pem"}), true),
        Decision::Deny
    );
    // Edit(...) rules cover every file-edit tool.
    assert_eq!(
        decide(&p, "multiedit", json!({"file_path": "/etc/hosts"}), false),
        Decision::Deny
    );
    assert_eq!(
        decide(
            &p,
            "notebookedit",
            json!({"notebook_path": "/etc/x.ipynb"}),
            false
        ),
        Decision::Deny
    );
    // …and bash writes.
    assert_eq!(
        p.check("bash", &json!({"command": "true > /etc/x"}))
            .decision,
        Decision::Deny
    );
}

#[test]
fn edit_tools_are_configurable() {
    let p = policy(&[], &[], &[], Mode::AcceptEdits).with_edit_tools(["apply"]);
    assert_eq!(
        decide(&p, "apply", json!({"path": "a"}), false),
        Decision::Allow
    );
    assert_eq!(
        decide(&p, "edit", json!({"path": "a"}), false),
        Decision::Ask
    );
}

#[test]
fn bash_workdir_places_relative_writes() {
    let p = policy(&["Bash(echo:*)"], &[], &[], Mode::AcceptEdits);
    let e = |args: Value| p.check("bash", &args).decision;
    assert_eq!(
        e(json!({"command": "echo x > f", "workdir": "sub"})),
        Decision::Allow
    );
    assert_eq!(
        e(json!({"command": "echo x > f", "workdir": "/tmp"})),
        Decision::Ask
    );
    assert_eq!(
        e(json!({"command": "echo x > f", "workdir": ".."})),
        Decision::Ask
    );
}

#[test]
fn bash_without_a_command_is_not_allowed() {
    let p = policy(&["Bash(ls)"], &[], &[], Mode::BypassPermissions);
    assert_eq!(p.check("bash", &json!({})).decision, Decision::Ask);
    assert_eq!(
        p.check("bash", &json!({"command": 3})).decision,
        Decision::Ask
    );
    let p = policy(&[], &[], &["Bash"], Mode::BypassPermissions);
    assert_eq!(p.check("bash", &json!({})).decision, Decision::Deny);
    assert_eq!(
        p.check("bash", &json!({"command": ""})).decision,
        Decision::Deny
    );
    let p = policy(&[], &[], &[], Mode::DontAsk);
    assert_eq!(
        p.check("bash", &json!({"command": "  "})).decision,
        Decision::Allow,
        "runs nothing"
    );
}

#[test]
fn evaluation_json_shape() {
    let p = policy(&[], &[], &["Bash(rm -rf:*)"], Mode::Default);
    let e = p.check("bash", &json!({"command": "cd x && rm -rf y"}));
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["rule"], "Bash(rm -rf:*)");
    assert!(v["reason"].as_str().unwrap().contains("rm -rf y"));
    assert_eq!(v.as_object().unwrap().len(), 3);
    let e = p.check("bash", &json!({"command": "make"}));
    assert_eq!(serde_json::to_value(&e).unwrap()["rule"], Value::Null);
    assert_eq!(serde_json::to_value(&e).unwrap()["decision"], "ask");
}

#[test]
fn decisions_merge_by_max() {
    use Decision::*;
    assert!(Allow < Ask && Ask < Deny);
    assert_eq!([Allow, Deny, Ask].into_iter().max(), Some(Deny));
}

#[test]
fn modes_parse_by_name() {
    for m in Mode::ALL {
        assert_eq!(m.as_str().parse::<Mode>().unwrap(), m);
    }
    let err = "yolo".parse::<Mode>().unwrap_err();
    assert!(err.to_string().contains("yolo"));
}

#[test]
fn explain_lists_every_part() {
    let p = policy(&["Bash(ls:*)"], &[], &["Bash(rm:*)"], Mode::Default);
    let parts = p.explain(
        "bash",
        &json!({"command": "ls && echo $(rm x) > out"}),
        &ToolAnnotations::default(),
    );
    let summary: Vec<(String, Decision)> = parts
        .iter()
        .map(|x| (x.text.clone(), x.evaluation.decision))
        .collect();
    assert_eq!(
        summary,
        [
            ("ls".to_owned(), Decision::Allow),
            ("rm x".to_owned(), Decision::Deny),
            // What rm removes is an edit of its own.
            ("x".to_owned(), Decision::Ask),
            ("out".to_owned(), Decision::Ask),
            // echo reads nothing: read-only, it runs unasked.
            ("echo $(rm x)".to_owned(), Decision::Allow),
        ]
    );
}

/// The aliases a proxied MCP tool `tool` of server `srv` carries.
fn aliases(tool: &str) -> Vec<String> {
    vec![
        format!("mcp__srv__{tool}"),
        "mcp__srv".to_owned(),
        "mcp__srv__*".to_owned(),
    ]
}

#[test]
fn rules_name_a_proxied_tool_by_its_aliases() {
    use Decision::*;
    let none = ToolAnnotations::default();
    let check = |p: &PermissionPolicy, tool: &str| {
        p.check_named(tool, &aliases(tool), &json!({}), &none)
            .decision
    };
    let p = policy(
        &["mcp__srv__echo"],
        &["mcp__srv__*"],
        &["mcp__srv__rm"],
        Mode::Default,
    );
    // Deny, then ask (the wildcard), before allow.
    assert_eq!(check(&p, "rm"), Deny);
    assert_eq!(check(&p, "echo"), Ask);
    let p = policy(&["mcp__srv"], &[], &[], Mode::Default);
    assert_eq!(check(&p, "anything"), Allow);
    // Without the aliases the same name matches nothing.
    assert_eq!(decide(&p, "anything", json!({}), false), Ask);
}

#[test]
fn a_proxied_tool_is_never_taken_for_our_shell_or_an_edit_tool() {
    use Decision::*;
    let none = ToolAnnotations::default();
    // Plan mode allows a read-only command through our bash; a proxied tool
    // that happens to be called `bash` is not ours.
    let plan = policy(&[], &[], &[], Mode::Plan);
    let args = json!({"command": "ls"});
    assert_eq!(plan.check_named("bash", &[], &args, &none).decision, Allow);
    assert_eq!(
        plan.check_named("bash", &aliases("bash"), &args, &none)
            .decision,
        Deny
    );
    // acceptEdits allows our edit tools inside the working directory, not
    // another server's tool of the same name.
    let edits = policy(&[], &[], &[], Mode::AcceptEdits);
    let args = json!({"file_path": "/work/proj/a.txt"});
    assert_eq!(
        edits.check_named("write", &[], &args, &none).decision,
        Allow
    );
    assert_eq!(
        edits
            .check_named("write", &aliases("write"), &args, &none)
            .decision,
        Ask
    );
}

#[test]
fn protected_directories_are_asked_about_in_the_modes_that_allow_edits() {
    use Decision::*;
    let none = ToolAnnotations::default();
    let bash = |p: &PermissionPolicy, command: &str| {
        p.check("bash", &json!({ "command": command })).decision
    };
    let bypass = policy(&[], &[], &[], Mode::BypassPermissions);
    for command in [
        "echo x > .git/hooks/pre-commit",
        "echo x > /work/proj/.git/config",
        "echo x > .claude/settings.json",
        "echo x > sub/.vscode/tasks.json",
        "echo x > .idea/workspace.xml",
    ] {
        assert_eq!(bash(&bypass, command), Ask, "{command}");
    }
    // Claude Code's exemptions, and everything else.
    for command in [
        "echo x > .claude/commands/review.md",
        "echo x > .claude/agents/a.md",
        "echo x > .claude/skills/s.md",
        "echo x > src/.gitignore",
        "echo x > notes/git/x",
    ] {
        assert_eq!(bash(&bypass, command), Allow, "{command}");
    }
    // acceptEdits: a write into .git is never an edit inside the working directory.
    let edits = policy(&["Bash(echo:*)"], &[], &[], Mode::AcceptEdits);
    assert_eq!(bash(&edits, "echo x > src/a.rs"), Allow);
    assert_eq!(bash(&edits, "echo x > .git/config"), Ask);
    // File-edit tools too.
    let args = json!({"file_path": "/work/proj/.vscode/settings.json"});
    assert_eq!(bypass.check_annotated("write", &args, &none).decision, Ask);
    assert_eq!(edits.check_annotated("write", &args, &none).decision, Ask);
    let args = json!({"file_path": "/work/proj/src/main.rs"});
    assert_eq!(edits.check_annotated("write", &args, &none).decision, Allow);
    // An explicit allow rule for the path is the user's own answer.
    let allowed = policy(&["Edit(.git/hooks/**)"], &[], &[], Mode::BypassPermissions);
    assert_eq!(bash(&allowed, "echo x > .git/hooks/pre-commit"), Allow);
}
