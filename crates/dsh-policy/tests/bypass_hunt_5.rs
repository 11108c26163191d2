//! Command lines found by a fifth review — of brace expansion — that the
//! policy allows unasked (or does not deny) although they read outside the
//! working directory or read what a deny rule covers. None of them repeats
//! a case of `unsafe_allows.rs` or of the earlier `bypass_hunt*.rs`
//! corpora.
//!
//! Same shape as `bypass_hunt_4.rs`: each class is one test over a table
//! of `(command, why it is dangerous)`; a test lists every failing case at
//! once; the working directory is a real directory. Every case was checked
//! against bash 5.2 and GNU coreutils/grep in a scratch directory holding
//! a directory named `{`: `cat {{/../.env,README.md}` printed `.env`,
//! `cat {{/a/b/c/d/e/f/g/h,/../../../../../../../../etc/hostname}` printed
//! `/etc/hostname`.

mod hunt;

use hunt::*;

// ---------------------------------------------------------------------------
// 1. An unmatched `{` before a brace group
// ---------------------------------------------------------------------------

/// Bash expands the first brace group that closes, whatever comes before
/// it: `{{a,b}` is `{a {b`, the unmatched `{` staying in every word. The
/// analysis gives up on the whole word when its first `{` does not close
/// and takes it as one literal path (`{{/../.env,x}`, lexically the file
/// `.env,x}` of the working directory). With a directory named `{` in the
/// working directory (one `mkdir` away in `acceptEdits`, or part of the
/// repository), each member is a path of its own through `{/..`: `.env`,
/// or anything outside once the first member's components make the
/// literal word stay inside.
#[test]
fn unmatched_brace_before_a_group() {
    let wd = Workdir::new("unmatched-brace");
    std::fs::create_dir_all(wd.path.join("{")).unwrap();
    let outside: &[(&str, &str)] = &[
        (
            "cat {{/a/b/c/d/e/f/g/h,/../../../../../../../../etc/hostname}",
            "bash runs `cat {/a/b/c/d/e/f/g/h {/../../../../../../../../etc/hostname`: prints /etc/hostname",
        ),
        (
            "ls {{/a/b/c/d/e/f/g/h,/../../../../../../../..}",
            "bash lists `{/../../../../../../../..`, the root directory",
        ),
    ];
    let mut found = failures(&wd, outside, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        (
            "cat {{/../.env,README.md}",
            "bash runs `cat {/../.env {README.md`: prints .env",
        ),
        ("head -n1 {{/../.env,x}", "the same, head"),
        (
            "grep -r TOKEN {{/..,x}",
            "bash searches `{/..`, the working directory, .env included",
        ),
    ];
    found.extend(failures(&wd, denied, DENIED));
    // `acceptEdits` (the `bypassPermissions` setting is in `DENIED`).
    found.extend(failures(&wd, denied, &DENIED_EDITS[..1]));
    assert_none("unmatched brace before a group", found);
}

/// The same in one line, the directory made first: `mkdir` is an edit
/// `acceptEdits` and `bypassPermissions` allow, and the read after it is
/// not seen to reach `.env` or outside.
#[test]
fn unmatched_brace_after_mkdir() {
    let wd = Workdir::new("unmatched-brace-mkdir");
    let denied: &[(&str, &str)] = &[
        (
            "mkdir -p '{' && cat {{/../.env,README.md}",
            "makes `{`, then bash runs `cat {/../.env {README.md`: prints .env",
        ),
        (
            "mkdir -p '{' && grep -r TOKEN {{/..,x}",
            "makes `{`, then grep searches the working directory through `{/..`",
        ),
    ];
    let mut found = failures(&wd, denied, DENIED);
    found.extend(failures(&wd, denied, &DENIED_EDITS[..1]));
    let outside: &[(&str, &str)] = &[(
        "mkdir -p '{' && cat {{/a/b/c/d/e/f/g/h,/../../../../../../../../etc/hostname}",
        "makes `{`, then prints /etc/hostname: a read outside is no edit",
    )];
    found.extend(failures(&wd, outside, NOT_AN_EDIT));
    assert_none("unmatched brace after mkdir", found);
}
