//! Command lines found by a sixth review — of the program table's rows
//! marked `.complete()` — that plan mode allows although they are not
//! read-only. A complete row claims to list every option its program has,
//! so a word the analysis cannot see (`"$f"`) is taken for one of the
//! listed options, all read-only; an option the real program has and the
//! row leaves out breaks that claim. None of them repeats a case of
//! `unsafe_allows.rs` or of the earlier `bypass_hunt*.rs` corpora.
//!
//! Every complete row was compared with its program on a Debian machine
//! (GNU coreutils 9.1, grep 3.8, diffutils 3.8, util-linux 2.38.1, jq
//! 1.6): `--help`, the long option names in the binary, and every short
//! letter tried one by one. Of the options the rows leave out, only one
//! does more than read: diffutils' `-l/--paginate`, which pipes the output
//! through `/usr/bin/pr` (`strace -f -e trace=execve diff -l a b` shows
//! `execve("/usr/bin/pr", ["/usr/bin/pr", "-h", "diff -l a b"])`). The
//! row's own example counts `diff -l a b` as not read-only, and plan mode
//! refuses it even under `allow Bash(diff:*)`; hidden in a variable it is
//! allowed there.
//!
//! The unseen word is also a read of a path not known before the command
//! runs, so without an allow rule (or with a deny `Read` rule) the line is
//! asked about anyway: the hole is plan mode with an allow rule for the
//! program and no deny `Read` rule. It runs a fixed program (`/usr/bin/pr`,
//! which only formats), so it is a broken claim more than a dangerous one.
//!
//! Same shape as `bypass_hunt_5.rs`: each class is one test over a table
//! of `(command, why it is dangerous)`; a test lists every failing case at
//! once; the working directory is a real directory.

mod hunt;

use dsh_policy::Mode;
use hunt::*;

/// An allow rule for `diff`, no deny rule.
const ALLOW_DIFF: Rules = Rules {
    label: "allow Bash(diff:*)",
    allow: &["Bash(diff:*)"],
    ask: &[],
    deny: &[],
};

/// Plan mode under an allow rule: only read-only lines run (it refuses
/// `diff -l README.md src/main.rs`).
const PLAN_WITH_ALLOW: &[Setting] = &[Setting {
    rules: &ALLOW_DIFF,
    mode: Mode::Plan,
    expect: Expect::NotAllow,
}];

// ---------------------------------------------------------------------------
// 1. diff: `-l/--paginate` runs a program
// ---------------------------------------------------------------------------

/// `diff -l` and `diff --paginate` (and its abbreviation `--pag`) run
/// `/usr/bin/pr` on diff's output. The `diff` row is complete and lists
/// neither, so a word the analysis cannot see is taken to be a read-only
/// option of the row, and the line is read-only.
#[test]
fn diff_paginate_hidden_in_a_word() {
    let wd = Workdir::new("diff-paginate");
    let runs: &[(&str, &str)] = &[
        (
            "f=$(printf %s --paginate); diff \"$f\" README.md src/main.rs",
            "diff --paginate runs /usr/bin/pr on its output",
        ),
        (
            "f=$(printf %s -l); diff \"$f\" README.md src/main.rs",
            "diff -l runs /usr/bin/pr on its output",
        ),
        (
            "diff -u \"$(printf %s --pag)\" README.md src/main.rs",
            "diff reads --pag as --paginate: runs /usr/bin/pr",
        ),
        (
            "diff \"$(printf %s -ul)\" README.md src/main.rs",
            "a bundle ending in -l: runs /usr/bin/pr",
        ),
        (
            "for o in -l; do diff \"$o\" README.md src/main.rs; done",
            "the loop variable is -l: runs /usr/bin/pr",
        ),
        (
            "diff \"$DIFF_OPTS\" README.md src/main.rs",
            "DIFF_OPTS=--paginate in the environment: runs /usr/bin/pr",
        ),
    ];
    let mut found = failures(&wd, runs, PLAN_WITH_ALLOW);
    // The same lines without an allow rule are asked about (the word is
    // an unknown read too); kept so that a fix does not trade one for the
    // other.
    found.extend(failures(&wd, runs, NOT_UNASKED));
    assert_none("diff -l/--paginate hidden in a word", found);
}
