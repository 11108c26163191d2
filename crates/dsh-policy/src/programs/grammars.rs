//! The small grammars rows name: what a program's options alone cannot
//! say. The git subcommands whose verdict depends on their first word
//! (`git stash list`, `git remote show -n`), `find`'s expression, `jq`
//! imports, what `cargo test -- …` passes to the test binary, `less +!`
//! and `zip -TT`. Larger grammars have modules of their own (git's
//! configuration, tar, sed and awk, curl, wget and ssh).

use super::{apply, lookup, Understanding};
use crate::options::Scan;
use crate::word::Arg;

/// `less +CMD` runs a less command at start; `!` and `|` among them run a
/// shell.
pub(super) fn less(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    if args
        .iter()
        .any(|a| a.value.starts_with('+') && a.value.contains(['!', '|']))
    {
        u.run("less runs a shell command given with +");
    }
}

/// `zip -TT CMD` runs CMD to test the archive (a two-letter option the
/// row's notation cannot spell).
pub(super) fn zip(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    if args.iter().any(|a| a.value == "-TT") {
        u.run("zip runs a test command named in an option");
    }
}

/// Evaluates `words` against another subcommand's row (`git stash show`
/// takes `git diff`'s options).
fn as_row(row: &str, words: &[Arg], u: &mut Understanding) {
    let Some(program) = lookup(row) else {
        u.not_read_only(format!("{row} has no row"));
        return;
    };
    let mut inner = Understanding::default();
    apply(row, program, words, &mut inner);
    if !inner.read_only {
        u.not_read_only(inner.why_not.unwrap_or_default());
    }
    u.reads.extend(inner.reads);
    for w in inner.writes {
        u.write(w.target, w.how);
    }
    if let Some(why) = inner.runs {
        u.run(why);
    }
}

fn operands(args: &[Arg]) -> impl Iterator<Item = &Arg> {
    args.iter().filter(|a| !a.value.starts_with('-'))
}

fn given(args: &[Arg], names: &[&str]) -> bool {
    args.iter().any(|a| {
        let name = a.value.split_once('=').map_or(a.value.as_str(), |(n, _)| n);
        names.contains(&name)
    })
}

/// `git branch` lists unless it is given a name (without a listing option).
pub(super) fn git_branch(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    let listing = given(
        args,
        &[
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
        ],
    );
    if operands(args).next().is_some() && !listing {
        u.not_read_only("git branch with a name makes or changes a branch");
    }
}

/// `git tag` lists unless it is given a name (without `-l`).
pub(super) fn git_tag(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    if operands(args).next().is_some() && !given(args, &["-l", "--list"]) {
        u.not_read_only("git tag with a name makes a tag");
    }
}

/// `git remote`, `-v`, `get-url`, and `show -n` (without `-n` it asks
/// the remote over the network).
pub(super) fn git_remote(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    let mut words = args
        .iter()
        .skip_while(|a| matches!(a.value.as_str(), "-v" | "--verbose"));
    match words.next().map(|a| a.value.as_str()) {
        None | Some("get-url") => {}
        Some("show") if given(args, &["-n"]) => {}
        Some("show") => {
            u.not_read_only("git remote show contacts the remote (read-only only with -n)")
        }
        Some(other) => u.not_read_only(format!("git remote {other} is not read-only")),
    }
}

/// `git stash list` and `git stash show`, with log and diff options.
pub(super) fn git_stash(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    match args.first().map(|a| a.value.as_str()) {
        Some("list") => as_row("git log", &args[1..], u),
        Some("show") => as_row("git diff", &args[1..], u),
        _ => u.not_read_only("git stash without list or show changes the stash"),
    }
}

/// `git reflog`, `git reflog show` (with log options); not `expire`, `delete`.
pub(super) fn git_reflog(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    match args.first().map(|a| a.value.as_str()) {
        None => {}
        Some("show") => as_row("git log", &args[1..], u),
        Some(v) if v.starts_with('-') => {}
        Some(other) => u.not_read_only(format!("git reflog {other} is not read-only")),
    }
}

/// `git worktree list` only.
pub(super) fn git_worktree(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    let mut words = args.iter().map(|a| a.value.as_str());
    if words.next() != Some("list")
        || !words.all(|w| matches!(w, "--porcelain" | "-v" | "--verbose" | "-z"))
    {
        u.not_read_only("only git worktree list is read-only");
    }
}

/// `git config` that only gets or lists.
pub(super) fn git_config(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    const READS: &[&str] = &[
        "get",
        "list",
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
    ];
    const KNOWN: &[&str] = &[
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "-z",
        "--null",
        "--name-only",
        "--includes",
        "--no-includes",
        "--bool",
        "--int",
        "--path",
        "--type",
        "--default",
        "--all",
        "--regexp",
        "--value",
        "--fixed-value",
    ];
    let mut reading = false;
    let mut i = 0;
    let mut operands = 0;
    while i < args.len() {
        let v = args[i].value.as_str();
        let name = v.split_once('=').map_or(v, |(n, _)| n);
        i += 1;
        if READS.contains(&name) {
            reading = true;
        } else if matches!(v, "-f" | "--file" | "--blob") {
            if let Some(f) = args.get(i) {
                u.reads.push(f.clone());
            }
            i += 1;
        } else if name == "--file" {
            u.reads.push(Arg::plain(&v["--file=".len()..]));
        } else if v.starts_with('-') && !KNOWN.contains(&name) {
            u.not_read_only(format!("git config {v} is not a read-only option"));
        } else if !v.starts_with('-') {
            operands += 1;
        }
    }
    let first_is_read = args
        .first()
        .is_some_and(|a| matches!(a.value.as_str(), "get" | "list"));
    if !reading || (operands > 2 && !first_is_read) {
        u.not_read_only("git config without --get or --list sets a value");
    }
}

/// `find`'s expression: read-only when every word is a test or action
/// that only reads and prints (the walker follows `-exec` commands and
/// records `-delete` and `-fprint` writes itself).
pub(super) fn find(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    /// Tests and actions that read and print; the number is how many
    /// words they take.
    const PRIMARIES: &[(&str, usize)] = &[
        ("-name", 1),
        ("-iname", 1),
        ("-path", 1),
        ("-ipath", 1),
        ("-wholename", 1),
        ("-iwholename", 1),
        ("-regex", 1),
        ("-iregex", 1),
        ("-regextype", 1),
        ("-type", 1),
        ("-xtype", 1),
        ("-size", 1),
        ("-empty", 0),
        ("-newer", 1),
        ("-anewer", 1),
        ("-cnewer", 1),
        ("-mtime", 1),
        ("-mmin", 1),
        ("-atime", 1),
        ("-amin", 1),
        ("-ctime", 1),
        ("-cmin", 1),
        ("-used", 1),
        ("-perm", 1),
        ("-user", 1),
        ("-group", 1),
        ("-uid", 1),
        ("-gid", 1),
        ("-nouser", 0),
        ("-nogroup", 0),
        ("-links", 1),
        ("-inum", 1),
        ("-samefile", 1),
        ("-readable", 0),
        ("-writable", 0),
        ("-executable", 0),
        ("-maxdepth", 1),
        ("-mindepth", 1),
        ("-depth", 0),
        ("-d", 0),
        ("-prune", 0),
        ("-quit", 0),
        ("-print", 0),
        ("-print0", 0),
        ("-printf", 1),
        ("-ls", 0),
        ("-follow", 0),
        ("-xdev", 0),
        ("-mount", 0),
        ("-noleaf", 0),
        ("-true", 0),
        ("-false", 0),
        ("-not", 0),
        ("-a", 0),
        ("-and", 0),
        ("-o", 0),
        ("-or", 0),
        ("-daystart", 0),
        ("-ignore_readdir_race", 0),
        ("-noignore_readdir_race", 0),
        ("-fstype", 1),
        ("-lname", 1),
        ("-ilname", 1),
        ("-context", 1),
        ("-warn", 0),
        ("-nowarn", 0),
        ("-help", 0),
        ("--help", 0),
        ("-version", 0),
        ("--version", 0),
        ("(", 0),
        (")", 0),
        ("!", 0),
        (",", 0),
    ];
    let mut i = 0;
    // Leading options.
    while let Some(a) = args.get(i) {
        match a.value.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            v if v.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut roots = Vec::new();
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if v.starts_with('-') || matches!(v, "(" | ")" | "!" | ",") {
            break;
        }
        roots.push(a.clone());
        i += 1;
    }
    if roots.is_empty() {
        roots.push(Arg::plain("."));
    }
    u.reads.extend(roots);
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        match PRIMARIES.iter().find(|(p, _)| *p == v) {
            Some((p, n)) => {
                if matches!(*p, "-newer" | "-anewer" | "-cnewer" | "-samefile") {
                    u.reads.extend(args.get(i).cloned());
                }
                i += n;
            }
            None => {
                u.not_read_only(format!(
                    "find {v} is not a read-only test or action by the program table"
                ));
                return;
            }
        }
    }
}

/// A jq program that imports a module reads a file the analysis cannot
/// place (`import "/etc/x" as $d`).
pub(super) fn jq(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    let imports = args.iter().any(|a| {
        a.value
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|w| matches!(w, "import" | "include"))
    });
    if imports {
        u.not_read_only("its jq program imports a module from a file");
    }
}

/// What follows `--` goes to the test binary: libtest's `--logfile`
/// writes where it says.
pub(super) fn cargo_test_binary(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    let mut rest = args.iter().skip_while(|a| a.value != "--").skip(1);
    while let Some(a) = rest.next() {
        if a.value == "--logfile" {
            if let Some(f) = rest.next() {
                u.write(f.clone(), "the test binary's --logfile");
            }
        } else if let Some(f) = a.value.strip_prefix("--logfile=") {
            u.write(Arg::plain(f), "the test binary's --logfile");
        }
    }
}
