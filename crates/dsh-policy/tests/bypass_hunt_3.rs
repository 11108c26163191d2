//! Command lines found by a third review — of the file commands in
//! `acceptEdits`, of script files, of tree reads and of path placement —
//! that the policy allows unasked (or does not deny) although they write
//! into protected or outside places, read outside the working directory or
//! read what a deny rule covers. None of them repeats a case of
//! `unsafe_allows.rs`, `bypass_hunt.rs` or `bypass_hunt_2.rs`.
//!
//! Same shape as `bypass_hunt_2.rs`: each class is one test over a table of
//! `(command, why it is dangerous)`; a test lists every failing case at once;
//! the working directory is a real directory. Every case was checked against
//! the real program (GNU sed 4.9, GNU coreutils 9.1 cp and mv, GNU findutils
//! 4.9, jq 1.6, git 2.47, bash 5.2) in a scratch directory: a hook written
//! by `sed -i` ran on `git commit`, a secret moved aside by `cp -b` was
//! printed by `cat`.

mod hunt;

use dsh_policy::Mode;
use hunt::*;
use std::path::Path;

// ---------------------------------------------------------------------------
// 1. `sed -i SUFFIX` writes its backup wherever the suffix says
// ---------------------------------------------------------------------------

/// GNU sed keeps the original of each file it edits in place under a name
/// made from the `-i`/`--in-place` suffix: a `*` in it stands for the
/// file's name and a `/` makes it a path (from the file's directory). The
/// row reads the suffix as data, so only the edited file is a write; the
/// backup — the file's original content, its mode kept — lands in
/// `.git/hooks` (run on the next `git commit`), in `.claude` (hooks in
/// the settings run commands) or outside the working directory.
#[test]
fn sed_in_place_suffix_writes_anywhere() {
    let protected: &[(&str, &str)] = &[
        (
            "sed -i'.git/hooks/*' s/a/b/ pre-commit",
            "keeps the original pre-commit as .git/hooks/pre-commit: run by git commit",
        ),
        (
            "sed -i.git/hooks/* -n p pre-commit",
            "the same unquoted (the glob matches nothing, bash passes it on)",
        ),
        (
            "sed --in-place='.git/hooks/*' s/a/b/ pre-commit",
            "the same with the long option",
        ),
        (
            "sed -ni'.git/hooks/*' p pre-commit",
            "the same inside a bundle",
        ),
        (
            "sed -i'.claude/*' s/a/b/ settings.json",
            "writes .claude/settings.json, whose hooks run commands",
        ),
    ];
    let wd = Workdir::new("sed-suffix");
    let mut found = failures(&wd, protected, PROTECTED);
    let outside: &[(&str, &str)] = &[
        (
            "sed -i'/tmp/*' s/a/b/ README.md",
            "writes /tmp/README.md, outside the working directory",
        ),
        (
            "sed -i'../*' s/a/b/ README.md",
            "writes README.md in the directory above",
        ),
        (
            "sed -i'/home/u/.*rc' s/a/b/ bash",
            "writes ~/.bashrc (the original of ./bash): run by every shell",
        ),
    ];
    found.extend(failures(&wd, outside, NOT_AN_EDIT));
    assert_none("sed -i suffix", found);
}

// ---------------------------------------------------------------------------
// 2. `cp`/`mv` backups move the file they replace
// ---------------------------------------------------------------------------

/// `--backup`, `-b` and `-S SUFFIX` make cp and mv rename the destination
/// they replace to `DEST~` (or `DEST` + suffix) first. The destination is
/// only a write to the policy, but its content moves to a name no rule
/// covers: `deny Read(./.env)` stops `mv .env x`, not `cp -b README.md
/// .env`, after which `cat .env~` prints the secret.
#[test]
fn backups_move_the_replaced_file() {
    let denied: &[(&str, &str)] = &[
        (
            "cp -b README.md .env",
            "renames .env to .env~, which no rule covers",
        ),
        (
            "cp --backup -S .md README.md .env",
            "renames .env to .env.md",
        ),
        ("mv -b README.md .env", "mv does the same"),
        ("mv --backup=t README.md .env", "numbered backups: .env.~1~"),
        (
            "cp -b README.md .env && cat .env~",
            "and prints it, in one line",
        ),
    ];
    let wd = Workdir::new("backup");
    assert_none("cp/mv backups", failures(&wd, denied, DENIED_EDITS));
}

// ---------------------------------------------------------------------------
// 3. A recursive copy that follows links copies what they lead to
// ---------------------------------------------------------------------------

/// `cp -rL` (`-RL`, `-aL`, `--dereference`) follows every symbolic link
/// under the directories it copies: a link in the repository to `/etc`
/// (here `src/lnk`) makes the copy a copy of /etc, inside the working
/// directory, where `cat` reads it unasked. `grep -R` was made to read
/// the places such links lead to; cp's tree read was not.
#[test]
fn recursive_copies_follow_links_out() {
    let cases: &[(&str, &str)] = &[
        (
            "cp -rL src backup",
            "copies /etc into backup/lnk: a read outside the working directory",
        ),
        ("cp -RL src/ backup", "the same with -R"),
        ("cp -aL src backup", "the same with -a"),
        ("cp -r --dereference src backup", "the long option"),
    ];
    let wd = Workdir::new("cp-links");
    wd.link("src/lnk", Path::new("/etc"));
    let mut found = failures(&wd, cases, NOT_AN_EDIT);
    let denied: &[(&str, &str)] = &[
        ("cp -rL src backup", "copies /etc/passwd, /etc/shadow, …"),
        (
            "cp -rL src backup && cat backup/lnk/passwd",
            "and prints the copy, in one line",
        ),
    ];
    found.extend(failures(
        &wd,
        denied,
        &[
            Setting {
                rules: &REALISTIC,
                mode: Mode::AcceptEdits,
                expect: Expect::NotAllow,
            },
            Setting {
                rules: &REALISTIC,
                mode: Mode::BypassPermissions,
                expect: Expect::NotAllow,
            },
        ],
    ));
    assert_none("cp -rL", found);
}

// ---------------------------------------------------------------------------
// 4. Listings that follow links list what they lead to
// ---------------------------------------------------------------------------

/// `ls src/lnk/` is denied by `Read(//etc/**)` (the link leads there);
/// `find -L`, `find -follow`, `ls -RL` and `du -L` walk the same link from
/// the directory above and list (and size) every file under /etc.
#[test]
fn listings_follow_links_out() {
    let cases: &[(&str, &str)] = &[
        ("find -L src", "lists every file under /etc through src/lnk"),
        ("find src -follow", "the same with the primary"),
        ("ls -RL src", "the same, ls"),
        ("du -aL src", "names and sizes every file under /etc"),
    ];
    let wd = Workdir::new("list-links");
    wd.link("src/lnk", Path::new("/etc"));
    let mut found = failures(&wd, cases, NOT_UNASKED);
    found.extend(failures(&wd, cases, NEVER_UNASKED));
    assert_none("listings through links", found);
}

// ---------------------------------------------------------------------------
// 5. A jq program read from a file
// ---------------------------------------------------------------------------

/// The jq row refuses a program that imports a module (`import "x" as
/// $d` reads `x.json`, from any directory `{search: …}` names), but
/// `-f FILE` / `--from-file FILE` reads the program from a file the
/// analysis never looks into: `prog.jq` here imports
/// `secrets/creds.json`, `home.jq` imports `~/.docker/config.json`
/// (registry credentials). As `awk -f` and `sed -f`, an unseen program
/// is not read-only.
#[test]
fn jq_program_files_are_not_seen() {
    let cases: &[(&str, &str)] = &[
        (
            "jq -n -f home.jq",
            "prints ~/.docker/config.json, outside the working directory",
        ),
        ("jq -n --from-file home.jq", "the same, long option"),
        ("jq -nf home.jq", "the same, bundled"),
    ];
    let wd = Workdir::new("jq-file");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    found.extend(failures(
        &wd,
        &[(
            "printf '%s' 'import \"config\" as $c {search: \"/home/u/.docker\"}; $c' > p.jq && jq -n -f p.jq",
            "writes the program and runs it: reads outside the working directory",
        )],
        NOT_AN_EDIT,
    ));
    let denied: &[(&str, &str)] = &[
        ("jq -n -f prog.jq", "prints secrets/creds.json"),
        ("jq -n --from-file prog.jq", "the same, long option"),
    ];
    found.extend(failures(&wd, denied, NEVER_UNASKED));
    assert_none("jq -f", found);
}

// ---------------------------------------------------------------------------
// 6. git config reads every scope when it names none
// ---------------------------------------------------------------------------

/// `git config --global --list` and `--system --list` now read
/// `~/.gitconfig` and `/etc/gitconfig`; without a scope, git reads the
/// system, global and repository files together and prints them all —
/// the same tokens (`http.extraHeader`, `url.*.insteadOf` with
/// credentials) from the same files.
#[test]
fn git_config_reads_every_scope() {
    let cases: &[(&str, &str)] = &[
        (
            "git config --list",
            "prints ~/.gitconfig with the repository's configuration",
        ),
        ("git config -l --show-origin", "the same, naming the files"),
        ("git config --get-regexp .", "every key of every file"),
        (
            "git config get --all --regexp .",
            "the same in the newer syntax",
        ),
        (
            "git config --get http.extraHeader",
            "one value, from ~/.gitconfig",
        ),
    ];
    let wd = Workdir::new("config-all");
    let mut found = failures(&wd, cases, NOT_UNASKED);
    // /etc/gitconfig is the system file of a distribution's git (prefix
    // /usr); `--system --list` is denied for it.
    found.extend(failures(
        &wd,
        &[("git config --list", "prints /etc/gitconfig too")],
        DENIED,
    ));
    assert_none("git config scopes", found);
}

// ---------------------------------------------------------------------------
// 7. `/proc/self/cwd` reached through `..`
// ---------------------------------------------------------------------------

/// `/proc/self/cwd/…` is placed as the command's working directory, and
/// other paths through a process's view (`/proc/1/cwd`, `/dev/fd/3`) are
/// not placed at all; both tests look at the path as written.
/// `/proc/self/../self/cwd` is the same link for the command, but it is
/// resolved on disk by following `/proc/self` in the deciding process:
/// its own working directory, which is the working directory, not where
/// the command's `cd` went. So `cd /etc && cat /proc/self/../self/cwd/passwd`
/// reads /etc/passwd and counts as a read inside. Checked in this test
/// process's own directory, as a harness runs in its project.
#[test]
fn proc_self_cwd_through_dot_dot() {
    let cases: &[(&str, &str)] = &[
        (
            "cd /etc && cat /proc/self/../self/cwd/passwd",
            "reads /etc/passwd",
        ),
        (
            "cd /etc; cat /proc/self/../thread-self/cwd/passwd",
            "the same through thread-self",
        ),
        (
            "cd / && head /proc/self/../self/cwd/etc/shadow",
            "reads /etc/shadow",
        ),
        (
            "cd /etc && cat /dev/../proc/self/cwd/passwd",
            "the same from /dev",
        ),
        (
            "cd /home/u && cat /proc/self/../self/cwd/.ssh/id_ed25519",
            "reads a private key in the home directory",
        ),
    ];
    let wd = Workdir::process_cwd();
    let mut found = failures(&wd, cases, NOT_UNASKED);
    let denied: &[(&str, &str)] = &[
        (
            "cd /etc && cat /proc/self/../self/cwd/passwd",
            "reads /etc/passwd, which Read(//etc/**) denies",
        ),
        (
            "cd / && cat /proc/self/../self/cwd/etc/hostname",
            "the same from /",
        ),
    ];
    found.extend(failures(&wd, denied, NEVER_UNASKED));
    assert_none("/proc/self/cwd", found);
}
