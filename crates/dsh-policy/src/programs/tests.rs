use super::*;
use crate::{is_read_only_command, Mode, Origin, PermissionPolicy, PermissionRules};
use serde_json::json;

/// Splits a command line of the examples into words: quotes and
/// backslashes as the shell reads them, no expansion.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' if in_word => {
                out.push(std::mem::take(&mut cur));
                in_word = false;
            }
            ' ' => {}
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            other => {
                in_word = true;
                cur.push(other);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

#[test]
fn every_row_compiles_and_every_name_is_one_row() {
    let mut seen = std::collections::HashSet::new();
    for row in rows() {
        if let Err(e) = compile(*row) {
            panic!("{e}");
        }
        for name in row.names.split('|') {
            assert!(seen.insert(name), "{name} has two rows");
        }
    }
}

/// The policy's verdict on a command line in plan mode, in a directory
/// holding every file the examples name: refused by plan mode means not
/// read-only.
fn plan_mode_says_read_only(policy: &PermissionPolicy, line: &str) -> (bool, String) {
    let e = policy.check("bash", &json!({ "command": line }));
    (e.origin != Origin::PlanMode, e.reason)
}

#[test]
fn row_examples_hold_and_the_public_check_agrees_with_the_policy() {
    let dir = std::env::temp_dir().join(format!("dsh-policy-rows-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).expect("temp dir");
    let policy = PermissionPolicy::new(PermissionRules::new(), Mode::Plan, &dir);
    let mut failures = Vec::new();
    let mut checked = 0;
    for row in rows() {
        let cases = row
            .read_only
            .iter()
            .map(|e| (e, true))
            .chain(row.not_read_only.iter().map(|e| (e, false)));
        for (example, expected) in cases {
            checked += 1;
            let (policy_says, reason) = plan_mode_says_read_only(&policy, example);
            if policy_says != expected {
                failures.push(format!(
                    "{example:?}: the policy says read-only = {policy_says} ({reason})"
                ));
            }
            if example.contains('$') {
                // The public check takes literal words.
                continue;
            }
            let argv = words(example);
            let public = is_read_only_command(&argv);
            if public != expected {
                failures.push(format!("{example:?}: is_read_only_command says {public}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(checked > 200, "only {checked} examples");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn reads(name: &str, args: &[&str]) -> Vec<String> {
    let args: Vec<Arg> = args.iter().map(|a| Arg::plain(a)).collect();
    understand(name, &args)
        .reads
        .into_iter()
        .map(|a| a.value)
        .collect()
}

#[test]
fn reads_of_read_only_commands() {
    assert_eq!(reads("cat", &["-n", "a", "--", "-b"]), ["a", "-b"]);
    assert_eq!(reads("head", &["-n", "5", ".env"]), [".env"]);
    assert_eq!(reads("grep", &["-rn", "TODO", "src"]), ["src"]);
    assert_eq!(reads("grep", &["-e", "x", ".env"]), [".env"]);
    assert_eq!(reads("grep", &["-f", "pats", "x"]), ["pats", "x"]);
    assert!(reads("grep", &["x"]).is_empty(), "grep x reads stdin");
    assert_eq!(reads("rg", &["x"]), ["."]);
    assert_eq!(reads("ls", &["-la"]), ["."]);
    assert_eq!(reads("ls", &["/etc"]), ["/etc"]);
    assert_eq!(reads("cut", &["-d", "/", "-f2", "f"]), ["f"]);
    assert_eq!(reads("jq", &[".a", "x.json"]), ["x.json"]);
    assert_eq!(
        reads("jq", &["--rawfile", "v", "/etc/shadow", "."]),
        ["/etc/shadow"]
    );
    assert_eq!(reads("date", &["-f", "/etc/shadow"]), ["/etc/shadow"]);
    assert_eq!(reads("diff", &["-I/usr/include", "a"]), ["a"]);
    assert_eq!(reads("git", &["-C", "/etc", "status"]), ["/etc"]);
    assert!(reads("echo", &[".env"]).is_empty());
    assert!(understand("python3", &[]).interpreter);
    assert!(!understand("frobnicate", &[]).known);
    assert!(understand("python3.12", &[]).interpreter);
}

#[test]
fn multi_word_rules_see_through_global_options() {
    let view = |line: &str| -> Vec<String> {
        let w = words(line);
        let args: Vec<Arg> = w[1..].iter().map(|a| Arg::plain(a)).collect();
        understand(&w[0], &args)
            .subcommand_views
            .iter()
            .map(|v| {
                v.iter()
                    .map(|a| a.value.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    assert_eq!(view("git -C . push origin"), ["git push origin"]);
    assert_eq!(view("git --no-pager push"), ["git push"]);
    assert_eq!(view("git -c x=y push"), ["git push"]);
    assert_eq!(view("git --git-dir=.git push"), ["git push"]);
    assert!(view("git --frob x push").contains(&"git push".to_owned()));
    assert_eq!(view("npm --prefix . publish"), ["npm publish"]);
    assert_eq!(view("cargo +nightly publish"), ["cargo publish"]);
    assert_eq!(view("kubectl -n x delete pod p"), ["kubectl delete pod p"]);
    assert!(
        view("git push").is_empty(),
        "the command as written is its own view"
    );
}
