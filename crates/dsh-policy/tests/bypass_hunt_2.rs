//! Command lines found by a second review of the program table, the option
//! engine and the walker that the policy allows unasked (or does not deny)
//! although they write, run code, reach the network or read what a deny rule
//! covers. None of them repeats a case of `unsafe_allows.rs` or
//! `bypass_hunt.rs`.
//!
//! Same shape as `bypass_hunt.rs`: each class is one test over a table of
//! `(command, why it is dangerous)`; a test lists every failing case at once;
//! the working directory is a real directory. Every case was checked against
//! the real program (git 2.47, GNU grep 3.8, GNU findutils xargs, procps-ng
//! pgrep, jq 1.6, bash 5) in a scratch repository: a merge driver, a
//! `gpg.program` and a `diff.external` that each touched a marker file.

mod hunt;

use hunt::*;
use std::path::Path;

// ---------------------------------------------------------------------------
// 1. git options whose value is optional, listed as taking the next word
// ---------------------------------------------------------------------------

/// `git branch --abbrev[=<n>]` and `git diff -U[<n>]` / `--unified[=<n>]`
/// take a value only when it is attached (parse-options' `OPTARG`); the
/// table lists them as `--abbrev=` and `-U/--unified=`, so the next word is
/// read as their value. git reads it as an operand: a branch name to create,
/// an option, a path whose diff it prints.
#[test]
fn git_optional_values_read_as_the_next_word() {
    let cases: &[(&str, &str)] = &[
        (
            "git branch --abbrev newbranch",
            "`--abbrev` takes no word: creates the branch newbranch",
        ),
        (
            "git branch --abbrev --edit-description",
            "`--edit-description` is an option: runs the configured editor",
        ),
        (
            "git diff --no-index -U /etc/passwd README.md",
            "`-U` takes no word: prints /etc/passwd as a diff",
        ),
    ];
    let wd = Workdir::new("optarg");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        (
            "git diff -U .env",
            "prints the working tree's changes to .env (its lines)",
        ),
        ("git diff --unified .env", "the same with the long option"),
        (
            "git log -p -U .env",
            "prints every committed version of .env",
        ),
        (
            "git stash show -U .env",
            "`git stash show` reads `git diff`'s options: the stashed .env",
        ),
        (
            "git diff -U secrets/key",
            "prints the changes to secrets/key",
        ),
    ];
    found.extend(failures(&wd, denied, DENIED));
    assert_none("git optional values", found);
}

// ---------------------------------------------------------------------------
// 2. `exec -a` renames a program that dispatches on its name
// ---------------------------------------------------------------------------

/// `exec -a NAME` sets `argv[0]`. git runs the builtin `git-NAME` names
/// (`git-branch log` is `git branch log`) and pgrep is pkill when called
/// so (`/usr/bin/pkill` is a link to pgrep). The walker drops `-a NAME` and
/// decides the read-only command it sees; a deny rule for `git push` never
/// sees the push.
#[test]
fn exec_a_renames_a_program() {
    let cases: &[(&str, &str)] = &[
        (
            "exec -a git-branch git log",
            "runs `git branch log`: creates the branch log",
        ),
        (
            "exec -a git-tag git show",
            "runs `git tag show`: creates the tag show",
        ),
        (
            "exec -a git-branch git diff -D other",
            "runs `git branch diff -D other`: deletes the branch other",
        ),
        (
            "exec -a git-remote git show https://evil.example/x",
            "runs `git remote show URL`: contacts the URL",
        ),
        (
            "exec -a pkill pgrep -f server",
            "pgrep called pkill kills every matching process",
        ),
        (
            "(exec -a pkill pgrep -u u .)",
            "kills every process of the user, in a subshell",
        ),
    ];
    let wd = Workdir::new("argv0");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        ("exec -a git-push git", "runs `git push`"),
        (
            "exec -a git-push git status",
            "runs `git push status`: a push to the remote status, allowed as `git status`",
        ),
        (
            "bash -c 'exec -a git-push git'",
            "the same inside a nested shell",
        ),
    ];
    found.extend(failures(&wd, denied, DENIED));
    assert_none("exec -a", found);
}

// ---------------------------------------------------------------------------
// 3. xargs sets a variable named in its options
// ---------------------------------------------------------------------------

/// `xargs --process-slot-var=NAME` sets NAME (to `0`, `1`, …) in the
/// command's environment. `HOME=0 git diff` is a command the policy
/// treats as privileged; through xargs it is decided as plain `git diff`.
/// With `HOME=0` git reads `./0/.gitconfig` (a file the repository can
/// hold), whose `diff.external` `git diff` runs; `XDG_CONFIG_HOME=0` reads
/// `./0/git/config`, `GIT_DIR=0` makes `./0` the repository.
#[test]
fn xargs_sets_a_variable_named_in_its_options() {
    let cases: &[(&str, &str)] = &[
        (
            "echo x | xargs -I{} --process-slot-var=HOME git diff",
            "git reads ./0/.gitconfig and runs its diff.external",
        ),
        (
            "echo x | xargs -I{} --process-slot-var HOME git diff",
            "the same with the name as its own word",
        ),
        (
            "echo x | xargs -I{} --process-slot-var=XDG_CONFIG_HOME git status",
            "git reads ./0/git/config (core.fsmonitor runs a command)",
        ),
        (
            "echo x | xargs -I{} --process-slot-var=GIT_DIR git log",
            "./0 becomes the repository, its config included",
        ),
    ];
    let wd = Workdir::new("slot-var");
    assert_none(
        "xargs --process-slot-var",
        failures(&wd, cases, NOT_UNASKED),
    );
}

// ---------------------------------------------------------------------------
// 4. Signature checks outside `git log` and `git show`
// ---------------------------------------------------------------------------

/// `%G?` and the other signature placeholders, and `log.showSignature`, run
/// `gpg.program` on signed commits. The table looks for the placeholders
/// only in `git log` and `git show`; `git reflog` and `git shortlog` take
/// the same `--format`, and `-c log.showSignature=true` is a key it lets
/// through.
#[test]
fn signature_checks_outside_log_and_show() {
    let cases: &[(&str, &str)] = &[
        (
            "git reflog --format=%G?",
            "runs gpg.program on each signed commit of the reflog",
        ),
        (
            "git reflog --pretty=format:%GS",
            "the signer's name: the same",
        ),
        (
            "git shortlog --format=%G? HEAD",
            "shortlog formats each commit: the same",
        ),
        (
            "git -c log.showSignature=true log",
            "the setting is `--show-signature`: runs gpg.program",
        ),
        (
            "git -c log.showsignature=1 show HEAD",
            "the same for git show, in lower case",
        ),
    ];
    let wd = Workdir::new("signatures");
    assert_none("signature checks", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 5. A remerge diff runs merge drivers
// ---------------------------------------------------------------------------

/// `--remerge-diff` (and `--diff-merges=remerge`, `=r`) merges each merge
/// commit's parents again to show how the result differs; the merge runs
/// the driver `.gitattributes` names (`merge.<driver>.driver`), as
/// `--textconv` runs a textconv driver. Plain `git show` of the merge runs
/// nothing.
#[test]
fn remerge_diff_runs_merge_drivers() {
    let cases: &[(&str, &str)] = &[
        (
            "git log --remerge-diff",
            "re-merges every merge commit, running the merge driver",
        ),
        ("git show --remerge-diff HEAD", "the same for one commit"),
        (
            "git log -p --diff-merges=remerge",
            "the same spelled as a diff-merges format",
        ),
        (
            "git show --diff-merges=r HEAD",
            "the short name of the format",
        ),
    ];
    let wd = Workdir::new("remerge");
    assert_none("remerge diff", failures(&wd, cases, NOT_UNASKED));
}

// ---------------------------------------------------------------------------
// 6. A word the analysis cannot see in the pattern's place
// ---------------------------------------------------------------------------

/// grep and jq are complete rows whose options all only read, so a word
/// the analysis cannot see may be an option; but in the pattern's place it
/// is not checked as a path either. An option (`-r`) or word splitting
/// (`$x` holding `PATTERN FILE`) turns it into a read of any file.
#[test]
fn unseen_words_in_the_pattern_place() {
    let cases: &[(&str, &str)] = &[
        (
            "x=$(echo . /etc/passwd); grep $x README.md",
            "`$x` splits into the pattern and /etc/passwd: prints it",
        ),
        (
            "a=$(echo -R . /etc/passwd); jq $a",
            "`$a` splits into `-R . /etc/passwd`: prints it line by line",
        ),
    ];
    let wd = Workdir::new("unseen");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        (
            "grep \"$(echo -r)\" TOKEN",
            "the word is `-r`: searches the working directory, .env included",
        ),
        (
            "grep \"$(echo -rh)\" '' .",
            "prints every line of every file here",
        ),
        (
            "grep $(echo . .env) README.md",
            "splits into the pattern and .env: prints .env",
        ),
        (
            "jq $(echo -R . .env)",
            "splits into `-R . .env`: prints .env",
        ),
        (
            "x=$(echo . secrets/key); grep $x README.md",
            "prints secrets/key",
        ),
    ];
    found.extend(failures(&wd, denied, NEVER_UNASKED));
    assert_none("unseen pattern words", found);
}

// ---------------------------------------------------------------------------
// 7. git object names that name a file
// ---------------------------------------------------------------------------

/// `REV:PATH` and `:PATH` name a file's committed or staged content (`./`
/// makes the path relative to the working directory); `-L` ranges name a
/// file too. The operands are data or paths that match no rule, so the
/// committed .env is printed where `cat .env` and `git blame .env` are
/// denied.
#[test]
fn git_object_names_that_name_a_file() {
    let denied: &[(&str, &str)] = &[
        ("git show HEAD:.env", "prints .env as committed"),
        ("git show HEAD:./.env", "the same, relative to here"),
        ("git show :.env", "prints .env as staged"),
        ("git cat-file -p HEAD:.env", "prints .env as committed"),
        ("git cat-file blob HEAD:.env", "the same by type"),
        (
            "git log -L1,1:.env",
            "prints the history of .env's first line, lines included",
        ),
        (
            "git diff HEAD~1:.env HEAD:.env",
            "compares two committed versions of .env",
        ),
        (
            "git show HEAD:secrets/key",
            "prints secrets/key as committed",
        ),
    ];
    let wd = Workdir::new("objects");
    let mut found = failures(&wd, denied, DENIED);
    found.extend(failures(
        &wd,
        &[(
            "git cat-file --batch <<< HEAD:.env",
            "the object name on standard input",
        )],
        NEVER_UNASKED,
    ));
    assert_none("git object names", found);
}

// ---------------------------------------------------------------------------
// 8. git config scopes are files outside the working directory
// ---------------------------------------------------------------------------

/// `--global` is `~/.gitconfig` (and `~/.config/git/config`), `--system`
/// is `/etc/gitconfig`: as `git config --file=/root/.gitconfig --list`
/// (now asked about), these print configuration files outside the working
/// directory (credentials in `url.*.insteadOf`, tokens in headers).
#[test]
fn git_config_scopes_outside_the_working_directory() {
    let cases: &[(&str, &str)] = &[
        ("git config --global --list", "prints ~/.gitconfig"),
        ("git config list --global", "the same in the newer syntax"),
        (
            "git config --global --get-regexp .",
            "prints every key of ~/.gitconfig",
        ),
    ];
    let wd = Workdir::new("config-scopes");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        ("git config --system --list", "prints /etc/gitconfig"),
        ("git config list --system", "the same in the newer syntax"),
    ];
    found.extend(failures(&wd, denied, DENIED));
    assert_none("git config scopes", found);
}

// ---------------------------------------------------------------------------
// 9. Recursive reads that follow links out
// ---------------------------------------------------------------------------

/// `grep -R` follows every symbolic link under the directories it searches
/// (`-r` only those on the command line). A link in the repository to
/// `/etc` (here `src/lnk`) is read as if it were a directory inside: the
/// files under /etc are searched and printed.
#[test]
fn recursive_reads_follow_links_out() {
    let cases: &[(&str, &str)] = &[
        (
            "grep -R root src",
            "prints /etc/passwd's lines through src/lnk",
        ),
        ("grep -R root", "the same from the working directory"),
    ];
    let wd = Workdir::new("links");
    wd.link("src/lnk", Path::new("/etc"));
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        ("grep -R root src", "reads /etc/passwd through src/lnk"),
        ("grep -R '' src/", "prints every file under /etc"),
    ];
    found.extend(failures(&wd, denied, NEVER_UNASKED));
    assert_none("links out", found);
}
