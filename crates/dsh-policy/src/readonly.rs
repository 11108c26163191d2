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
///   `-fprint`, `-fprint0`, `-fprintf`, `-fls`; `fd` without `-x`/`-X`
///   (also bundled or attached) or `--exec…`; `printf` without `-v`;
/// * `rg` without `--pre`; `sort` without `-o` and with only exactly spelled
///   known long options; `tree` without `-o`/`-R`; `file` without `-C`;
///   `date` without `-s` and with only exactly spelled known long options;
///   `hostname` with no operands; `uniq` with at most one operand;
/// * `git` with at most `--no-pager`, `-P`, `--no-optional-locks` or `-C DIR`
///   before one of `status`, `log`, `diff`, `show`, `rev-parse`, `ls-files`,
///   `ls-tree`, `blame`, `describe`, `shortlog`, `cat-file`, `merge-base`,
///   `show-ref`, `grep` (without `-O`), `branch` and `tag` (listing only),
///   `remote` (`-v`, `show`, `get-url`), `stash list|show`, `config --get…|--list`,
///   `reflog` (`show`), `worktree list`; never with `--output`, `--ext-diff`
///   or `--open-files-in-pager`, nor any abbreviation of them.
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
        "fd" => !args.iter().any(|a| {
            (a.starts_with('-') && !a.starts_with("--") && a.contains(['x', 'X']))
                || long_abbreviates(a, &["exec", "exec-batch"])
                || a.starts_with("--exec")
        }),
        "rg" => !has(&["--pre"]),
        "sort" => {
            only_known_long(&args, SORT_LONG)
                && !args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('o'))
        }
        "tree" => !has(&["-o", "-R"]),
        "file" => !has(&["-C", "--compile"]),
        "date" => {
            only_known_long(&args, DATE_LONG)
                && !args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
        }
        "hostname" => {
            args.is_empty()
                || args
                    .iter()
                    .all(|a| matches!(*a, "-f" | "-s" | "-i" | "-I" | "-d" | "--fqdn" | "--short"))
        }
        "uniq" => operands() <= 1,
        "printf" => !args.iter().any(|a| a.starts_with("-v")),
        "git" => git_is_read_only(&args),
        _ => true,
    }
}

/// `sort`'s long options that keep it read-only (exact spellings).
const SORT_LONG: &[&str] = &[
    "--ignore-leading-blanks",
    "--dictionary-order",
    "--ignore-case",
    "--general-numeric-sort",
    "--ignore-nonprinting",
    "--month-sort",
    "--human-numeric-sort",
    "--numeric-sort",
    "--random-sort",
    "--random-source",
    "--reverse",
    "--sort",
    "--version-sort",
    "--batch-size",
    "--check",
    "--debug",
    "--files0-from",
    "--field-separator",
    "--key",
    "--merge",
    "--stable",
    "--buffer-size",
    "--temporary-directory",
    "--parallel",
    "--unique",
    "--zero-terminated",
    "--help",
    "--version",
];

/// `date`'s long options that keep it read-only (exact spellings).
const DATE_LONG: &[&str] = &[
    "--date",
    "--debug",
    "--file",
    "--iso-8601",
    "--resolution",
    "--rfc-email",
    "--rfc-3339",
    "--reference",
    "--universal",
    "--utc",
    "--help",
    "--version",
];

/// Every long option (`--name` or `--name=value`, before a `--`) is one of
/// `known`: an abbreviation or an unknown option is not read-only.
fn only_known_long(args: &[&str], known: &[&str]) -> bool {
    for a in args {
        if *a == "--" {
            break;
        }
        if a.starts_with("--") {
            let name = a.split_once('=').map_or(*a, |(n, _)| n);
            if !known.contains(&name) {
                return false;
            }
        }
    }
    true
}

/// Whether `arg` is a long option that is (an abbreviation of) one of `names`.
fn long_abbreviates(arg: &str, names: &[&str]) -> bool {
    let Some(long) = arg.strip_prefix("--") else {
        return false;
    };
    let name = long.split_once('=').map_or(long, |(n, _)| n);
    !name.is_empty() && names.iter().any(|n| n.starts_with(name))
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
            || a.starts_with("--open-files-in-pager")
            || long_abbreviates(a, &["output", "ext-diff", "open-files-in-pager"])
            || (*sub == "grep" && a.starts_with('-') && !a.starts_with("--") && a.contains('O'))
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
            let modifying_long = [
                "delete",
                "move",
                "copy",
                "force",
                "set-upstream-to",
                "set-upstream",
                "unset-upstream",
                "edit-description",
                "track",
                "no-track",
                "create-reflog",
                "recurse-submodules",
            ];
            if rest.iter().any(|a| {
                modifying.contains(a)
                    || a.starts_with("--set-upstream")
                    || a.starts_with("--del")
                    || a.starts_with("--track=")
                    || long_abbreviates(a, &modifying_long)
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && a.contains(['d', 'D', 'm', 'M', 'c', 'C', 'u', 'f', 't']))
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
        "remote" => {
            let sub = rest.iter().find(|a| !matches!(**a, "-v" | "--verbose"));
            sub.is_none_or(|s| matches!(*s, "show" | "get-url"))
        }
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
            "sort -n --reverse a",
            "sort --check a",
            "git remote -v",
            "git remote show origin",
            "git grep -n x",
            "date -u",
            "date --iso-8601=seconds",
            "fd -H x",
            "git branch -a -v",
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
            "printf -v x %s 1",
            "sort --o out a",
            "sort --outp=out a",
            "sort --compress=sh a",
            "sort --c=x a",
            "git grep -Oless x",
            "git grep --open x",
            "git grep -nO x",
            "git remote -v add x y",
            "git remote add x y",
            "git remote rename a b",
            "git branch --del x",
            "git branch --mo a b",
            "git branch --set-upstream x",
            "git branch -vd x",
            "git branch --unset-upstream",
            "git branch --edit-description",
            "git branch -f x",
            "git diff --outp=x",
            "git log --ext x",
            "date --se now",
            "date -us now",
            "date --s now",
            "fd -xrm x",
            "fd -Hx rm",
            "fd --exec rm",
            "fd --exe rm",
            "fd -X rm",
        ] {
            assert!(!ro(no), "{no}");
        }
    }
}
