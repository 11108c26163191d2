//! The plan-mode list of read-only commands.

/// Commands plan mode lets through, when their arguments keep them read-only
/// (see [`is_read_only_command`](crate::is_read_only_command) for the checks).
///
/// A command counts only when named plainly (`ls`, not `/bin/ls` or `./ls`),
/// and a command line is read-only only when every part of it is, and it
/// writes no file (no `>`, `>>`, `tee FILE`, …).
pub const READ_ONLY_COMMANDS: &[&str] = &[
    // files and directories
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "file",
    "stat",
    "du",
    "df",
    "tree",
    "find",
    "fd",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "pwd",
    "cd",
    "pushd",
    "popd",
    // searching
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "which",
    "whereis",
    "type",
    // text
    "echo",
    "printf",
    "sort",
    "uniq",
    "cut",
    "tr",
    "nl",
    "od",
    "hexdump",
    "strings",
    "column",
    "cmp",
    "diff",
    "comm",
    "jq",
    "tee",
    // checksums
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "b2sum",
    // system information
    "date",
    "cal",
    "whoami",
    "id",
    "groups",
    "uname",
    "hostname",
    "uptime",
    "env",
    "printenv",
    "ps",
    "pgrep",
    "free",
    "nproc",
    "locale",
    "tty",
    // no effect
    "true",
    "false",
    "test",
    "[",
    "sleep",
    "seq",
    // version control (subcommands checked)
    "git",
];

/// Whether a simple command (`argv[0]` and its literal arguments) is
/// read-only by the plan-mode list and its per-command argument checks:
///
/// * `find` without `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`,
///   `-fprint`, `-fprint0`, `-fprintf`, `-fls`; `fd` without `-x`/`-X`;
/// * `rg` without `--pre`; `sort` without `-o`/`--output`/`--compress-program`;
///   `tree` without `-o`/`-R`; `file` without `-C`; `date` without `-s`/`--set`;
///   `hostname` with no operands; `uniq` with at most one operand;
/// * `git` with at most `--no-pager`, `-P`, `--no-optional-locks` or `-C DIR`
///   before one of `status`, `log`, `diff`, `show`, `rev-parse`, `ls-files`,
///   `ls-tree`, `blame`, `describe`, `shortlog`, `cat-file`, `merge-base`,
///   `show-ref`, `grep` (without `-O`), `branch` and `tag` (listing only),
///   `remote` (`-v`, `show`, `get-url`), `stash list|show`, `config --get…|--list`,
///   `reflog` (`show`), `worktree list`; never with `--output`, `--ext-diff`
///   or `--open-files-in-pager`.
pub fn is_read_only_command<S: AsRef<str>>(argv: &[S]) -> bool {
    let Some(name) = argv.first().map(AsRef::as_ref) else {
        return false;
    };
    if !READ_ONLY_COMMANDS.contains(&name) {
        return false;
    }
    let args: Vec<&str> = argv[1..].iter().map(AsRef::as_ref).collect();
    let has = |opts: &[&str]| {
        args.iter().any(|a| {
            opts.iter()
                .any(|o| a == o || (o.starts_with("--") && a.starts_with(&format!("{o}="))))
        })
    };
    let operands = || args.iter().filter(|a| !a.starts_with('-')).count();
    match name {
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "fd" => !has(&["-x", "-X", "--exec", "--exec-batch"]),
        "rg" => !has(&["--pre"]),
        "sort" => {
            !has(&["--output", "--compress-program"])
                && !args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('o'))
        }
        "tree" => !has(&["-o", "-R"]),
        "file" => !has(&["-C", "--compile"]),
        "date" => !has(&["--set"]) && !args.iter().any(|a| a.starts_with("-s")),
        "hostname" => {
            args.is_empty()
                || args
                    .iter()
                    .all(|a| matches!(*a, "-f" | "-s" | "-i" | "-I" | "-d" | "--fqdn" | "--short"))
        }
        "uniq" => operands() <= 1,
        "git" => git_is_read_only(&args),
        _ => true,
    }
}

/// Commands whose arguments are checked: any argument that is not a plain
/// literal (a variable, a glob that could match a file named `-delete`)
/// makes them not read-only.
pub(crate) const ARGUMENT_CHECKED: &[&str] = &[
    "find", "fd", "rg", "sort", "tree", "file", "date", "hostname", "uniq", "git",
];

fn git_is_read_only(args: &[&str]) -> bool {
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "--no-pager" | "-P" | "--no-optional-locks" => i += 1,
            "-C" => i += 2,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return false;
    };
    let rest = &args[i + 1..];
    let banned = rest.iter().any(|a| {
        a.starts_with("--output")
            || *a == "--ext-diff"
            || *a == "-O"
            || a.starts_with("--open-files-in-pager")
    });
    if banned {
        return false;
    }
    let any = |opts: &[&str]| rest.iter().any(|a| opts.contains(a));
    match *sub {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame"
        | "describe" | "shortlog" | "cat-file" | "merge-base" | "show-ref" | "grep"
        | "whatchanged" | "count-objects" => true,
        "branch" => {
            let modifying = [
                "-d",
                "-D",
                "--delete",
                "-m",
                "-M",
                "--move",
                "-c",
                "-C",
                "--copy",
                "-f",
                "--force",
                "-u",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
                "-t",
                "--track",
                "--no-track",
            ];
            if rest.iter().any(|a| {
                modifying.contains(a)
                    || a.starts_with("--set-upstream-to=")
                    || a.starts_with("--track=")
            }) {
                return false;
            }
            let positional = rest.iter().any(|a| !a.starts_with('-'));
            !positional
                || any(&[
                    "-l",
                    "--list",
                    "-a",
                    "--all",
                    "-r",
                    "--remotes",
                    "--contains",
                    "--no-contains",
                    "--merged",
                    "--no-merged",
                    "--points-at",
                ])
        }
        "tag" => {
            let modifying = [
                "-d",
                "--delete",
                "-a",
                "--annotate",
                "-s",
                "--sign",
                "-f",
                "--force",
                "-m",
                "-F",
                "-u",
                "-e",
            ];
            !rest.iter().any(|a| modifying.contains(a))
                && (rest.is_empty() || any(&["-l", "--list"]))
        }
        "remote" => rest.is_empty() || matches!(rest[0], "-v" | "--verbose" | "show" | "get-url"),
        "stash" => matches!(rest.first(), Some(&"list") | Some(&"show")),
        "config" => any(&["--get", "--get-all", "--get-regexp", "--list", "-l"]),
        "reflog" => rest.is_empty() || rest[0] == "show",
        "worktree" => rest.first() == Some(&"list"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ro(cmd: &str) -> bool {
        let argv: Vec<&str> = cmd.split_whitespace().collect();
        is_read_only_command(&argv)
    }

    #[test]
    fn list() {
        for yes in [
            "ls -la",
            "cat a",
            "grep -r x .",
            "rg foo",
            "find . -name x",
            "git status",
            "git log --oneline",
            "git diff HEAD~1",
            "git show HEAD",
            "git branch",
            "git branch -a",
            "git --no-pager log",
            "git -C sub status",
            "sort a",
            "uniq a",
            "head -n 3 f",
            "echo hi",
            "pwd",
            "wc -l x",
            "tree",
            "du -sh .",
            "git branch --list 'feat*'",
        ] {
            assert!(ro(yes), "{yes}");
        }
        for no in [
            "rm x",
            "find . -delete",
            "find . -exec rm {} ;",
            "find . -fprint out",
            "sort -o out a",
            "uniq a b",
            "git push",
            "git commit -m x",
            "git branch new",
            "git branch -D old",
            "git -c core.pager=x log",
            "git diff --output=x",
            "rg --pre cat x",
            "date -s now",
            "tree -o out",
            "hostname evil",
            "git tag v1",
            "git stash",
            "sed -n 1p x",
            "awk 1 x",
            "git",
            "python -c 1",
        ] {
            assert!(!ro(no), "{no}");
        }
    }
}
