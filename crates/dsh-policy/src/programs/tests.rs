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
            quote @ ('\'' | '"') => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == quote {
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
    // A word the analysis cannot see may be an option taking the next word.
    let mut args = vec![Arg::unknown("\"$flag\"")];
    args.extend(["delete", "pod", "p"].map(Arg::plain));
    let u = understand("kubectl", &args);
    let seen: Vec<String> = u
        .subcommand_views
        .iter()
        .map(|v| {
            v.iter()
                .map(|a| a.value.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert!(
        seen.contains(&"kubectl delete pod p".to_owned()),
        "{seen:?}"
    );
    // Past the views it follows, the command is not analysable.
    let mut args: Vec<Arg> = Vec::new();
    for k in 0..20 {
        args.push(Arg::plain(&format!("--frob{k}")));
        args.push(Arg::plain("x"));
    }
    args.extend(["delete", "pod", "p"].map(Arg::plain));
    assert!(understand("kubectl", &args).runs.is_some());
}

fn args(words: &[&str]) -> Vec<Arg> {
    words.iter().map(|w| Arg::plain(w)).collect()
}

fn code(name: &str, words: &[&str]) -> bool {
    understand(name, &args(words)).runs.is_some()
}

fn writes(name: &str, words: &[&str]) -> Vec<String> {
    understand(name, &args(words))
        .writes
        .into_iter()
        .map(|w| w.target.value)
        .collect()
}

fn use_of(name: &str, words: &[&str]) -> Understanding {
    understand(name, &args(words))
}

#[test]
fn options_that_run_code() {
    for (name, words) in [
        ("git", &["-c", "core.pager=sh -c id", "log"][..]),
        ("git", &["-c", "alias.x=!rm -rf ~", "x"]),
        ("git", &["--config-env=core.pager=X", "log"]),
        ("git", &["fetch", "--upload-pack=touch /tmp/x", "origin"]),
        ("git", &["push", "--rec=evil", "origin"]),
        ("git", &["rebase", "-x", "rm x", "HEAD~2"]),
        ("git", &["grep", "-Oless", "x"]),
        ("git", &["bisect", "run", "rm", "x"]),
        ("git", &["submodule", "foreach", "rm x"]),
        ("git", &["clone", "--template=/tmp/t", "url"]),
        ("git", &["clone", "-c", "core.fsmonitor=id", "url"]),
        ("rg", &["--pre", "sh", "x"]),
        ("rg", &["--pre=sh", "x"]),
        ("rg", &["--hostname-bin", "id", "x"]),
        ("tar", &["-cf", "x.tar", "--checkpoint-action=exec=id", "."]),
        ("tar", &["--to-command=sh", "-xf", "x.tar"]),
        ("tar", &["-I", "sh -c id", "-xf", "x.tar"]),
        ("tar", &["--use-comp=id", "-xf", "x"]),
        ("sed", &["1e id", "f"]),
        ("sed", &["-n", "-e", "s/x/id/e", "f"]),
        ("sed", &["-f", "script.sed", "f"]),
        ("awk", &["BEGIN{system(\"id\")}"]),
        ("awk", &["-f", "prog.awk", "x"]),
        ("sort", &["--compress-program=sh", "x"]),
        ("fd", &["-x", "rm"]),
        ("fd", &["-Hx", "rm"]),
        ("fd", &["--exec-batch", "rm"]),
        ("man", &["-P", "sh -c id", "ls"]),
        ("less", &["+!id", "f"]),
        ("ssh", &["-o", "ProxyCommand=sh -c id", "host"]),
        ("ssh", &["-oLocalCommand=id", "host"]),
        ("ssh", &["-F", "cfg", "host"]),
        ("rsync", &["-e", "sh -c id", "a", "b:"]),
        ("rsync", &["--rsync-path=id", "a", "b:"]),
        ("cargo", &["test", "--config", "target.x.runner='sh'"]),
        ("curl", &["-K", "cfg", "url"]),
        ("wget", &["-e", "x=y", "url"]),
        ("zip", &["-T", "--unzip-command", "sh", "a.zip", "f"]),
    ] {
        assert!(code(name, words), "{name} {words:?}");
    }
}

#[test]
fn options_that_write() {
    assert_eq!(writes("git", &["log", "--output=out.txt"]), ["out.txt"]);
    assert_eq!(writes("git", &["diff", "--out", "o"]), ["o"]);
    assert_eq!(
        writes("git", &["format-patch", "-o", "dir", "HEAD~1"]),
        ["dir"]
    );
    assert_eq!(
        writes("git", &["config", "core.pager", "less"]),
        [".git/config"]
    );
    assert_eq!(
        writes("git", &["config", "--file", "f", "--add", "a.b", "c"]),
        ["f"]
    );
    assert_eq!(writes("tree", &["-ao", "out"]), ["out"]);
    assert_eq!(writes("tree", &["-aoout"]), ["out"]);
    assert_eq!(writes("sort", &["-no", "out", "in"]), ["out"]);
    assert_eq!(writes("sort", &["--outp=out", "in"]), ["out"]);
    assert_eq!(writes("sed", &["-i", "s/a/b/", "f1", "f2"]), ["f1", "f2"]);
    // The backup too: FILE+SUFFIX, or the suffix as a path from the file.
    assert_eq!(writes("sed", &["-ni.bak", "s/a/b/p", "f"]), ["f.bak", "f"]);
    assert_eq!(
        writes("sed", &["-i.git/hooks/*", "s/a/b/", "d/pre-commit"]),
        ["d/.git/hooks/pre-commit", "d/pre-commit"]
    );
    assert_eq!(writes("sed", &["w out", "f"]), ["out"]);
    assert_eq!(writes("tar", &["czf", "out.tgz", "dir"]), ["out.tgz"]);
    assert_eq!(writes("tar", &["-c", "-f", "out.tar", "dir"]), ["out.tar"]);
    assert_eq!(writes("tar", &["--create", "--file=o.tar", "d"]), ["o.tar"]);
    assert_eq!(writes("tar", &["xzf", "a.tgz", "-C", "dest"]), ["dest"]);
    assert_eq!(writes("curl", &["-o", "page.html", "url"]), ["page.html"]);
    assert_eq!(writes("awk", &["{print > \"out\"}", "f"]), ["out"]);
}

#[test]
fn everyday_forms_do_nothing_more() {
    for (name, words) in [
        ("git", &["log", "--oneline", "-n", "5"][..]),
        ("git", &["-c", "color.ui=always", "log"]),
        ("git", &["commit", "-m", "rm old files"]),
        ("git", &["config", "--get", "user.name"]),
        ("git", &["config", "user.name"]),
        ("git", &["grep", "-n", "x"]),
        ("git", &["rebase", "-i", "HEAD~2"]),
        ("rg", &["-n", "--pre-glob", "*.gz", "foo"]),
        ("rg", &["--pretty", "foo"]),
        ("tar", &["tzf", "a.tgz"]),
        ("tar", &["-tvf", "a.tar"]),
        ("sed", &["-n", "s/a/b/p", "f"]),
        ("sed", &["s/we/ew/g", "f"]),
        ("awk", &["{print $1}", "f"]),
        ("awk", &["-F:", "$3 > 100", "/etc/passwd"]),
        ("sort", &["-n", "-k2", "f"]),
        ("tree", &["-a", "-L", "2"]),
        ("fd", &["-e", "rs", "x"]),
        ("ssh", &["-o", "StrictHostKeyChecking=no", "host", "ls"]),
        ("curl", &["-s", "-H", "Accept: x", "url"]),
        ("curl", &["-o", "-", "url"]),
        ("cargo", &["test", "-p", "x"]),
    ] {
        let u = crate::programs::understand(name, &args(words));
        assert!(
            u.runs.is_none() && u.writes.is_empty(),
            "{name} {words:?}: {u:?}"
        );
    }
}

#[test]
fn data_commands() {
    let data = |name: &str, words: &[&str]| understand(name, &args(words)).data;
    assert!(data("echo", &["rm", "x"]));
    assert!(data("git", &["commit", "-m", "rm x"]));
    assert!(data("git", &["-C", "d", "rm", "x"]));
    assert!(!data("git", &["bisect", "run", "rm", "x"]));
    assert!(!data("git", &["my-alias"]));
    assert!(!data("flock", &["l", "rm", "x"]));
}

#[test]
fn file_commands() {
    let cp = use_of("cp", &["-r", "a", "b", "dest/"]);
    assert!(cp.edits_only);
    let r: Vec<_> = cp.reads.iter().map(|a| a.value.as_str()).collect();
    assert_eq!(r, ["a", "b"]);
    assert_eq!(cp.writes[0].target.value, "dest/");
    let cp = use_of("cp", &["-t", "d", "a"]);
    assert_eq!(cp.writes[0].target.value, "d");
    assert!(
        !use_of("cp", &["-s", "a", "b"]).edits_only,
        "symlinks are not copies"
    );
    assert!(!use_of("rm", &["--no-preserve-root", "-rf", "/"]).edits_only);
    let rm = use_of("rm", &["-rf", "x"]);
    assert_eq!((rm.writes[0].how, rm.writes[0].removes), ("rm -r", true));
    let mv = use_of("mv", &["a", "b"]);
    assert_eq!(mv.writes.len(), 2);
    assert!(use_of("touch", &["-r", "ref", "f"]).reads[0].value == "ref");
    assert!(use_of("mkdir", &["-p", "-m", "755", "a/b"]).edits_only);
    assert!(use_of("sed", &["-i", "s/a/b/", "f"]).edits_only);
    assert!(!use_of("sed", &["s/a/b/", "f"]).edits_only);
}
