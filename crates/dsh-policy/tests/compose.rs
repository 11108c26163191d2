//! Property test: a random composition of allowed, denied and unmatched
//! simple commands, joined by random operators and hidden in random shell
//! constructs, is decided exactly as the rule says: deny if any part is
//! denied, otherwise ask (dontAsk: deny; bypassPermissions: allow) if any
//! part is unmatched, otherwise allow.

use dsh_policy::{Decision, Mode, PermissionPolicy, PermissionRules};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Allowed,
    Unmatched,
    Denied,
}

const ALLOWED: &[&str] = &[
    "ls -la",
    "git status",
    "echo hi",
    "cat README.md",
    "ls",
    "true",
];
const DENIED: &[&str] = &[
    "rm -rf build",
    "curl http://example.invalid",
    "rm x",
    "rm -f a b",
];
const UNMATCHED: &[&str] = &[
    "make",
    "npm install",
    "python3 x.py",
    "cargo build --release",
];

const OPERATORS: &[&str] = &[" && ", " || ", "; ", " | ", " & ", "\n", " |& ", " ;\n "];

fn policy(mode: Mode) -> PermissionPolicy {
    let rules = PermissionRules::parse(
        [
            "Bash(ls:*)",
            "Bash(git status)",
            "Bash(echo:*)",
            "Bash(cat:*)",
            "Bash(true)",
        ],
        [] as [&str; 0],
        ["Bash(rm:*)", "Bash(curl:*)"],
    )
    .unwrap();
    PermissionPolicy::new(rules, mode, "/work/proj")
}

/// A simple command of a class, in one of many disguises that keep its meaning.
fn segment() -> impl Strategy<Value = (Class, String)> {
    let simple = prop_oneof![
        prop::sample::select(ALLOWED).prop_map(|c| (Class::Allowed, c.to_owned())),
        prop::sample::select(DENIED).prop_map(|c| (Class::Denied, c.to_owned())),
        prop::sample::select(UNMATCHED).prop_map(|c| (Class::Unmatched, c.to_owned())),
    ];
    (simple, 0usize..14).prop_map(|((class, cmd), wrap)| {
        let wrapped = match wrap {
            0 => cmd,
            1 => format!("echo $({cmd})"),
            2 => format!("echo `{cmd}`"),
            3 => format!("( {cmd} )"),
            4 => format!("{{ {cmd}; }}"),
            5 => format!("LC_ALL=C {cmd}"),
            6 => format!("timeout 5 {cmd}"),
            7 => format!("bash -c '{cmd}'"),
            8 => format!("if true; then {cmd}; fi"),
            9 => format!("cat <({cmd})"),
            10 => format!("nice -n 5 nohup {cmd}"),
            11 => format!("for i in 1 2; do {cmd}; done"),
            12 => format!("echo \"x $({cmd}) y\""),
            _ => format!("env LANG=C command {cmd}"),
        };
        (class, wrapped)
    })
}

fn composition() -> impl Strategy<Value = (Vec<Class>, String)> {
    prop::collection::vec((segment(), prop::sample::select(OPERATORS)), 1..8).prop_map(|parts| {
        let mut classes = Vec::new();
        let mut command = String::new();
        let n = parts.len();
        for (i, ((class, seg), op)) in parts.into_iter().enumerate() {
            classes.push(class);
            command.push_str(&seg);
            if i + 1 < n {
                command.push_str(op);
            }
        }
        (classes, command)
    })
}

fn expected(classes: &[Class], mode: Mode) -> Decision {
    match classes.iter().max() {
        Some(Class::Denied) => Decision::Deny,
        Some(Class::Unmatched) => match mode {
            Mode::DontAsk => Decision::Deny,
            Mode::BypassPermissions => Decision::Allow,
            _ => Decision::Ask,
        },
        _ => Decision::Allow,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn composition_is_decided_by_its_parts((classes, command) in composition()) {
        for mode in [Mode::Default, Mode::DontAsk, Mode::BypassPermissions] {
            let e = policy(mode).check("bash", &json!({ "command": command }));
            prop_assert_eq!(
                e.decision,
                expected(&classes, mode),
                "mode {} command {:?}: {}", mode, command, e.reason
            );
        }
    }

    /// Arbitrary text never panics and is never allowed unless every part is.
    #[test]
    fn arbitrary_text_is_safe(text in "[ -~\\n]{0,80}") {
        let e = policy(Mode::Default).check("bash", &json!({ "command": text }));
        if e.decision == Decision::Allow {
            let parts = policy(Mode::Default).explain("bash", &json!({ "command": text }), &Default::default());
            prop_assert!(parts.iter().all(|p| p.evaluation.decision == Decision::Allow));
        }
    }
}
