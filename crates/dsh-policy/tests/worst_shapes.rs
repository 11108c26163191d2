//! Memory of a decision: every worst shape, at the 1 MiB input limit and at
//! the largest size the analysis still reads in full, is decided as its
//! rules say within 64 MiB at its peak. Memory is deterministic, so this
//! guards against the quadratic shapes coming back (a chain of `nohup` took
//! over 5 GB before, and brush-parser's tree of a 1 MiB command line of
//! short words takes 100–300 MiB, which the parser's budget now prevents).
//! Time is the bench's (`cargo bench -p dsh-policy`).

use dsh_policy::Decision;
use serde_json::json;

mod shapes;

/// A relative path `depth` names deep, ending in `last`.
fn deep(depth: usize, last: &str) -> String {
    let mut path = "a/".repeat(depth);
    path.push_str(last);
    path
}

#[test]
fn a_deep_path_is_decided_against_a_rule_at_any_depth() {
    let project = shapes::Project::new();
    let policy = project.policy();
    let bash = |path: &str| {
        policy
            .check("bash", &json!({ "command": format!("cat {path}") }))
            .decision
    };
    let read = |path: &str| policy.check("Read", &json!({ "file_path": path })).decision;
    for depth in [0, 1, 63, 64, 65, 40_000] {
        let secret = deep(depth, ".env");
        assert_eq!(bash(&secret), Decision::Deny, "cat, {depth} deep");
        assert_eq!(read(&secret), Decision::Deny, "Read, {depth} deep");
        // Inside a directory named `.env`, too.
        let inside = format!("{}/x", deep(depth, ".env"));
        assert_eq!(bash(&inside), Decision::Deny, "cat inside, {depth} deep");
        assert_eq!(read(&inside), Decision::Deny, "Read inside, {depth} deep");
        // No rule names it: `cat` is allowed, a `Read` call (no rule allows
        // the tool) asked about.
        let other = deep(depth, ".envrc");
        assert_eq!(bash(&other), Decision::Allow, "cat, {depth} deep");
        assert_eq!(read(&other), Decision::Ask, "Read, {depth} deep");
    }
    let absolute = format!("{}/{}", policy.cwd().display(), deep(40_000, ".env"));
    assert_eq!(bash(&absolute), Decision::Deny);
    assert_eq!(read(&absolute), Decision::Deny);
}

#[test]
fn a_repeated_glob_is_decided_as_once() {
    let project = shapes::Project::new();
    let policy = project.policy();
    let bash = |command: String| policy.check("bash", &json!({ "command": command }));
    let many = bash("cat *.rs ".repeat(2_000));
    assert_eq!(many.decision, Decision::Allow, "{}", many.reason);
    // `*` names `.env` (dot files too, as the analysis expands it): a deny
    // rule for one copy is one for all.
    let e = bash("ls *; ".repeat(2_000));
    assert_eq!(e.decision, Decision::Deny, "{}", e.reason);
    let e = bash(format!("{}cat .*", "cat *.rs; ".repeat(2_000)));
    assert_eq!(e.decision, Decision::Deny, "{}", e.reason);
    // The expansions are the decision's own: a file made since is seen.
    assert_eq!(bash("cat *.md".into()).decision, Decision::Allow);
    std::fs::write(policy.cwd().join("notes.md"), "x").unwrap();
    std::fs::create_dir(policy.cwd().join("docs")).unwrap();
    std::fs::write(policy.cwd().join("docs/.env"), "x").unwrap();
    assert_eq!(bash("cat d*/.e*".into()).decision, Decision::Deny);
}

#[test]
fn every_worst_shape_is_decided_within_the_memory_target() {
    let project = shapes::Project::new();
    let policy = project.policy();
    let mut failures = Vec::new();
    for shape in shapes::shapes() {
        let sizes = [
            ("in full", shape.largest_analysed(), shape.full),
            ("at the limit", shape.at_limit(), shape.whole),
        ];
        for (size, command, expect) in sizes {
            assert!(
                command.len() <= shapes::LIMIT,
                "{} is over the limit",
                shape.name
            );
            let (decision, reason, took, peak) = shapes::measure(&policy, &command);
            let bytes = command.len();
            let whole = shapes::decided_whole(&command);
            drop(command);
            eprintln!(
                "{} {size} ({} KiB): {decision}, {took:?}, peak {:.1} MiB",
                shape.name,
                bytes >> 10,
                peak as f64 / (1 << 20) as f64
            );
            if peak > shapes::MEMORY_TARGET {
                failures.push(format!("{} {size}: peak {} MiB", shape.name, peak >> 20));
            }
            if whole != (size == "at the limit") {
                failures.push(format!("{} {size}: decided whole: {whole}", shape.name));
            }
            if decision != expect {
                let reason: String = reason.chars().take(200).collect();
                failures.push(format!(
                    "{} {size}: {decision} instead of {expect} ({reason})",
                    shape.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
