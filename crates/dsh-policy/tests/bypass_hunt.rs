//! Command lines found by a review of the program table, the option engine
//! and the walker that the policy allows unasked (or does not deny) although
//! they write, run code, reach the network or read what a deny rule covers.
//!
//! Same shape as `unsafe_allows.rs`: each class is one test over a table of
//! `(command, why it is dangerous)`; a test lists every failing case at once;
//! the working directory is a real directory. Every case was checked against
//! the real program (xxd, GNU coreutils, file, git 2.47) in a scratch
//! directory.

mod hunt;

use hunt::*;
use std::path::Path;

// ---------------------------------------------------------------------------
// 1. xxd reads its options word by word
// ---------------------------------------------------------------------------

/// xxd does not use getopt: each word is matched on its first two
/// characters (`-pl` is `-p`, the `l` ignored), a value is only ever the
/// next word when the option is the whole word, and a second operand is the
/// output file. The table reads `-pl X` as the bundle `-p -l X`, so it
/// thinks the input file is `-l`'s value and the output file is the input.
#[test]
fn xxd_words_are_not_getopt_bundles() {
    let cases: &[(&str, &str)] = &[
        (
            "xxd -pl README.md out.txt",
            "`-pl` is `-p`: README.md is the input, out.txt is written",
        ),
        (
            "xxd -ps README.md out.txt",
            "`-ps` is `-p`: out.txt is written",
        ),
        (
            "xxd -pc -r -pl hex.txt src/main.rs",
            "`-pc` is `-p`, so `-r` is an option: reverts hex.txt into arbitrary bytes over src/main.rs",
        ),
        (
            "xxd -pc -r -ps hex.txt build.rs",
            "the same, writing a build script cargo runs",
        ),
    ];
    let wd = Workdir::new("xxd");
    assert_none("xxd", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 2. git config: `get` and `list` as a value
// ---------------------------------------------------------------------------

/// The git config grammar counts a command as reading when any word is
/// `get` or `list`, and allows two other operands. In the old syntax
/// `git config NAME VALUE VALUE-PATTERN` the word is a value pattern, and
/// the command sets NAME.
#[test]
fn git_config_sets_with_get_as_a_word() {
    let cases: &[(&str, &str)] = &[
        (
            "git config core.fsmonitor 'touch /tmp/hunt-fsm' get; git status",
            "sets core.fsmonitor, which `git status` then runs through the shell",
        ),
        (
            "git config core.hooksPath list",
            "sets core.hooksPath to `list`: hooks then come from ./list",
        ),
        (
            "git config --global core.pager 'sh -c id' get",
            "sets the pager for every repository in ~/.gitconfig",
        ),
        (
            "git config user.name evil get",
            "sets user.name (the value pattern `get` matches nothing, so a line is added)",
        ),
        (
            "git config alias.st '!touch /tmp/hunt-alias' list",
            "defines an alias that runs a shell command",
        ),
    ];
    let wd = Workdir::new("config");
    assert_none("git config", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 3. Listing modes recognised by a word anywhere
// ---------------------------------------------------------------------------

/// The grammars of `git tag`, `git branch` and `git remote show` look for
/// `-l`, `-a`, `-n`… as any word, although the word is the value of another
/// option or an operand after `--`. git then creates or contacts.
#[test]
fn git_list_modes_recognised_by_a_word() {
    let cases: &[(&str, &str)] = &[
        (
            "git tag --format -l v9",
            "`-l` is the value of `--format`: creates the tag v9",
        ),
        ("git tag --format -l v9 HEAD", "the same, naming the commit"),
        (
            "git branch --format -l newbranch",
            "`-l` is the value of `--format`: creates the branch",
        ),
        (
            "git branch --sort -a newbranch",
            "`-a` is the value of `--sort`: creates the branch",
        ),
        (
            "git remote show origin -- -n",
            "`-n` after `--` is a remote's name: origin is queried over the network",
        ),
    ];
    let wd = Workdir::new("listing");
    assert_none("git list modes", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 4. The merged option list of rev, fold, fmt, expand, …
// ---------------------------------------------------------------------------

/// One row describes eight programs with one option list, so an option one
/// of them takes a value for (`join -1 FIELD`, `expand -t LIST`) is read so
/// for all: `fmt -t` (a flag: tagged paragraphs) and `fold -1` / `fmt -1` /
/// `expand -1` (a width or tab stop) then hide the next word, a file.
#[test]
fn merged_option_list_hides_file_operands() {
    let cases: &[(&str, &str)] = &[
        (
            "fmt -t /etc/passwd README.md",
            "`fmt -t` is a flag: prints /etc/passwd",
        ),
        ("fmt -1 /etc/passwd", "`-1` is a width: prints /etc/passwd"),
        ("fold -1 /etc/passwd", "`-1` is a width: prints /etc/passwd"),
        (
            "expand -1 /etc/passwd",
            "`-1` is a tab stop: prints /etc/passwd",
        ),
        (
            "unexpand -1 /etc/passwd",
            "`-1` is a tab stop: prints /etc/passwd",
        ),
    ];
    let wd = Workdir::new("merged");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        ("fmt -t .env README.md", "prints .env"),
        ("fold -1 .env", "prints .env a character a line"),
        ("expand -1 .env", "prints .env"),
        ("fmt -1 secrets/key", "prints secrets/key"),
    ];
    found.extend(failures(&wd, denied, DENIED));
    assert_none("merged options", found);
}

// ---------------------------------------------------------------------------
// 5. A list of files in one option value
// ---------------------------------------------------------------------------

/// `file -m` takes a colon-separated list of magic files; each line of a
/// file that is not magic is echoed in a warning. The value is placed as one
/// path, so the second file is never placed.
#[test]
fn file_magic_list_reads_every_member() {
    let cases: &[(&str, &str)] = &[
        (
            "file -m README.md:/etc/passwd README.md",
            "reads /etc/passwd; every line is echoed in a warning",
        ),
        (
            "file --magic-file=README.md:/etc/passwd src",
            "the same with the long option",
        ),
    ];
    let wd = Workdir::new("magic");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        ("file -m README.md:.env README.md", "echoes .env's lines"),
        ("file -m src/main.rs:secrets/key src", "echoes secrets/key"),
    ];
    found.extend(failures(&wd, denied, DENIED));
    assert_none("file -m", found);
}

// ---------------------------------------------------------------------------
// 6. git flags that run a program the configuration names
// ---------------------------------------------------------------------------

/// Like `--ext-diff` and `--textconv` on `git diff` (which the table marks
/// as running code named elsewhere), these flags make git run a driver or
/// program from the configuration: textconv and smudge filters (git-lfs
/// downloads over the network), `gpg.program` / `gpg.ssh.program`.
#[test]
fn git_flags_that_run_configured_programs() {
    let cases: &[(&str, &str)] = &[
        (
            "git cat-file --textconv HEAD:README.md",
            "runs the textconv driver .gitattributes names",
        ),
        (
            "git cat-file --filters HEAD:README.md",
            "runs the smudge filter (git-lfs fetches from the network)",
        ),
        (
            "git grep --textconv TODO",
            "runs the textconv driver on every matching file",
        ),
        (
            "git log --show-signature",
            "runs gpg.program on signed commits",
        ),
        ("git show --show-signature HEAD", "the same for git show"),
        (
            "git log --format=%G?",
            "a signature placeholder runs gpg.program",
        ),
    ];
    let wd = Workdir::new("drivers");
    assert_none("configured programs", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 7. git operands read as data although they are files
// ---------------------------------------------------------------------------

/// `git grep`'s row takes every operand after the pattern as data and
/// `git blame`'s takes the first as a revision, so a file there is never
/// checked against `Read` rules; `git blame --reverse` is a flag, listed
/// as taking a value. These print the working tree's file.
#[test]
fn git_file_operands_read_as_data() {
    let cases: &[(&str, &str)] = &[
        (
            "git grep --no-index TOKEN .env",
            "prints the lines of .env (untracked or not)",
        ),
        ("git grep -h TOKEN -- .env", "prints the lines of .env"),
        (
            "git grep --untracked -e '' -- secrets/key",
            "prints secrets/key",
        ),
        (
            "git blame .env",
            "annotates .env, working tree changes included",
        ),
        ("git blame -- .env", "the same after `--`"),
        (
            "git blame --reverse HEAD .env",
            "`--reverse` is a flag: HEAD is the revision, .env the file",
        ),
        (
            "git blame -S README.md .env",
            "the file after an option's value",
        ),
    ];
    let wd = Workdir::new("operands");
    assert_none("git operands", failures(&wd, cases, DENIED));
}

// ---------------------------------------------------------------------------
// 8. /proc names for the working directory
// ---------------------------------------------------------------------------

/// `/proc/self/cwd` is the reading process's working directory: these are
/// the denied files under another name. `/proc/self/root` is followed; the
/// working directory's link is not.
#[test]
fn proc_names_for_the_working_directory() {
    let cases: &[(&str, &str)] = &[
        ("cat /proc/self/cwd/.env", "reads ./.env"),
        ("cat /proc/thread-self/cwd/.env", "reads ./.env"),
        ("head /proc/self/cwd/secrets/key", "reads ./secrets/key"),
        (
            "cat /proc/self/cwd/up/passwd",
            "reads /etc/passwd through the link `up`",
        ),
    ];
    let wd = Workdir::new("proc");
    wd.link("up", Path::new("/etc"));
    assert_none("/proc", failures(&wd, cases, DENIED));
}

// ---------------------------------------------------------------------------
// 9. Deny rules on a subcommand walked around
// ---------------------------------------------------------------------------

/// `Bash(git push:*)` must deny a push however it is spelled: a subcommand
/// word that expands to `push` plus white space, git's dashed program for
/// the subcommand, an alias defined on the line.
#[test]
fn denied_subcommand_spelled_otherwise() {
    let cases: &[(&str, &str)] = &[
        ("git push$IFS", "`$IFS` splits away: runs `git push`"),
        ("git push${IFS}origin", "runs `git push origin`"),
        (
            "/usr/lib/git-core/git-push origin",
            "git's program for the push subcommand",
        ),
        (
            "/usr/local/libexec/git-core/git-push",
            "the same where git is installed from source",
        ),
        (
            "git -c alias.pp=push pp origin main",
            "an alias for push defined with `-c`",
        ),
        (
            "git config alias.pp push get; git pp",
            "an alias for push defined with the `get` value-pattern trick",
        ),
    ];
    let wd = Workdir::new("deny-push");
    assert_none("deny git push", failures(&wd, cases, DENIED));
}

// ---------------------------------------------------------------------------
// 10. Recursive reads of a directory that holds a denied file
// ---------------------------------------------------------------------------

/// A recursive search of `.` (or of the working directory by default)
/// reads .env and secrets/key and prints the matching lines; a `Read` deny
/// rule on a file inside is not checked against the directory.
#[test]
fn recursive_reads_of_a_directory_holding_denied_files() {
    let cases: &[(&str, &str)] = &[
        (
            "grep -r TOKEN",
            "`grep -r` searches . and prints .env's line",
        ),
        ("grep -r TOKEN .", "the same, naming ."),
        ("grep -rh TOKEN --include=.env", "only .env is searched"),
        ("rg -uu TOKEN", "rg with hidden files searches .env"),
        (
            "git grep --no-index TOKEN",
            "searches every file here, .env included",
        ),
        (
            "git grep --untracked -e secret",
            "searches untracked files, secrets/key included",
        ),
    ];
    let wd = Workdir::new("recursive");
    assert_none("recursive reads", failures(&wd, cases, DENIED));
}
