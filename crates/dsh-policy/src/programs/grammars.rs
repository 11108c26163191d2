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

/// Whether the scan holds one of these options (as read with the row's
/// options, so a word that is another option's value does not count).
fn has(scan: &Scan, shorts: &str, longs: &[&str]) -> bool {
    scan.options.iter().any(|g| g.is(shorts, longs))
}

/// `%(signature…)` in a ref format or sort key verifies signatures, which
/// runs the configured gpg program.
fn signature_atoms(scan: &Scan, u: &mut Understanding) {
    if scan.options.iter().any(|g| {
        g.is("", &["format", "sort"]) && g.values.iter().any(|v| v.value.contains("signature"))
    }) {
        u.run("a signature atom runs the configured gpg program");
    }
}

/// `git branch` lists unless it is given a name (without a listing option).
pub(super) fn git_branch(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    signature_atoms(scan, u);
    let listing = has(
        scan,
        "lar",
        &[
            "list",
            "all",
            "remotes",
            "contains",
            "no-contains",
            "merged",
            "no-merged",
            "points-at",
        ],
    );
    if !scan.operands.is_empty() && !listing {
        u.not_read_only("git branch with a name makes or changes a branch");
    }
}

/// `git tag` lists unless it is given a name (without `-l`).
pub(super) fn git_tag(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    signature_atoms(scan, u);
    if !scan.operands.is_empty() && !has(scan, "l", &["list"]) {
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
        Some("show") => {
            // `-n` counts only among the options before the names.
            let offline = words
                .take_while(|a| a.value.starts_with('-') && a.value != "--")
                .any(|a| a.value == "-n");
            if !offline {
                u.not_read_only("git remote show contacts the remote (read-only only with -n)");
            }
        }
        Some(other) => u.not_read_only(format!("git remote {other} is not read-only")),
    }
}

/// `git log --format=%G?` and the other signature placeholders run the
/// configured gpg program; `--diff-merges=remerge` runs merge drivers; a
/// `REV:PATH` operand or `-L…:PATH` reads PATH.
pub(super) fn git_format(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    for g in &scan.options {
        if g.is("", &["format", "pretty"]) && g.values.iter().any(|v| v.value.contains("%G")) {
            u.run("a signature placeholder runs the configured gpg program");
        }
        if g.is("", &["diff-merges"])
            && g.values
                .iter()
                .any(|v| matches!(v.value.as_str(), "remerge" | "r"))
        {
            u.run("a remerge diff runs the merge drivers the repository configures");
        }
        if g.is("L", &[]) {
            for v in &g.values {
                if let Some((_, file)) = v.value.rsplit_once(':') {
                    u.reads.push(Arg::plain(file));
                }
            }
        }
    }
    git_objects(scan, args, u);
}

/// git's paths are patterns (`'*.env'` matches at any depth, `:!x` is
/// everything but x): one with a wildcard or magic reads every file under
/// the directory before its first wildcard.
fn pathspecs(scan: &Scan, u: &mut Understanding) {
    for a in &scan.operands {
        let v = a.value.as_str();
        let magic = v.starts_with(":(") || v.starts_with(":!") || v.starts_with(":^");
        if !magic && !v.contains(['*', '?', '[']) {
            continue;
        }
        let literal = if magic {
            ""
        } else {
            &v[..v.find(['*', '?', '[']).unwrap_or(v.len())]
        };
        let dir = literal
            .rsplit_once('/')
            .map_or(".", |(d, _)| if d.is_empty() { "/" } else { d });
        u.reads.retain(|r| r.value != v);
        u.reads.push(Arg::plain(dir));
        u.reads_trees = true;
    }
}

/// Operands naming a file in a commit or the index (`HEAD:.env`,
/// `:0:.env`, `:./x`): reads of that file, placed from the working
/// directory (the repository's root when the agent works there).
pub(super) fn git_objects(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    pathspecs(scan, u);
    if scan
        .options
        .iter()
        .any(|g| g.is("", &["batch", "batch-check", "batch-command", "stdin"]))
    {
        u.reads
            .push(Arg::unknown("(the objects named on standard input)"));
    }
    for a in &scan.operands {
        let v = a.value.as_str();
        if v.starts_with('-') {
            continue;
        }
        let Some((_, after)) = v.split_once(':') else {
            continue;
        };
        // `:N:path` names a stage of the index.
        let path = match after.split_once(':') {
            Some((stage, rest)) if v.starts_with(':') && stage.len() == 1 => rest,
            _ => after,
        };
        // `:/text` searches commit messages.
        if path.is_empty() || path.starts_with('/') {
            continue;
        }
        u.reads.push(Arg::plain(path.trim_start_matches("./")));
    }
}

/// `xxd` reads an option by its first letters and a value only as the
/// next word, and writes its second operand: read-only only with whole
/// words it knows and one file.
pub(super) fn xxd(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    const FLAGS: &[&str] = &["-a", "-b", "-C", "-E", "-e", "-h", "-i", "-p", "-u", "-d"];
    const VALUED: &[&str] = &["-c", "-g", "-l", "-n", "-o", "-s"];
    let mut files = 0;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        if !a.literal {
            u.not_read_only("xxd has a word the analysis cannot see");
        } else if FLAGS.contains(&v) {
        } else if VALUED.contains(&v) {
            i += 1;
        } else if v.starts_with('-') && v != "-" {
            u.not_read_only(format!(
                "xxd {v} is not an option the table knows as a whole word"
            ));
        } else {
            files += 1;
            if files == 1 {
                u.reads.push(a.clone());
            } else {
                u.write(a.clone(), "xxd");
            }
        }
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
pub(super) fn git_reflog(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    git_format(scan, args, u);
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

/// `git config` that only gets or lists: `get` or `list` as its first
/// word (the newer syntax), or an action option (`--get`, `--list`) with at
/// most the name and a value pattern.
pub(super) fn git_config(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    const ACTIONS: &[&str] = &[
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
        "--show-names",
        "--url",
    ];
    // The scope's files: the user's and the system's configuration.
    let scoped = |names: &[&str]| {
        args.iter()
            .any(|a| names.contains(&a.value.split_once('=').map_or(a.value.as_str(), |(n, _)| n)))
    };
    // Without a scope git reads every one of them.
    let only_here = scoped(&["--local", "--worktree", "--file", "-f", "--blob"]);
    let global = scoped(&["--global"]);
    let system = scoped(&["--system"]);
    if global || (!only_here && !system) {
        u.reads.push(Arg::unknown("~/.gitconfig"));
        u.reads.push(Arg::unknown("~/.config/git/config"));
    }
    if system || (!only_here && !global) {
        u.reads.push(Arg::plain("/etc/gitconfig"));
    }
    let subcommand = args
        .first()
        .map(|a| a.value.as_str())
        .filter(|v| matches!(*v, "get" | "list"));
    let mut action = subcommand.is_some();
    let mut operands = 0;
    let mut i = usize::from(subcommand.is_some());
    while let Some(a) = args.get(i) {
        i += 1;
        let v = a.value.as_str();
        let name = v.split_once('=').map_or(v, |(n, _)| n);
        if !a.literal {
            u.not_read_only("git config has a word the analysis cannot see");
        } else if ACTIONS.contains(&name) && subcommand.is_none() {
            action = true;
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
    let listing = args
        .iter()
        .any(|a| matches!(a.value.as_str(), "--list" | "-l"));
    let most = if subcommand == Some("list") || listing {
        0
    } else {
        2
    };
    if !action || operands > most {
        u.not_read_only("git config without get or list sets a value");
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
    if args
        .iter()
        .any(|a| matches!(a.value.as_str(), "-L" | "-follow"))
    {
        follows_links(u);
    }
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

/// `grep -r` (and `-R`, `-d recurse`) reads every file under its
/// operands, the working directory when it names none.
pub(super) fn grep(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    // grep takes any unambiguous start of `recurse` (`-d rec`).
    let recurse = |v: &Arg| !v.literal || (v.value.len() >= 3 && "recurse".starts_with(&v.value));
    let recursive = has(scan, "rR", &["recursive", "dereference-recursive"])
        || scan
            .options
            .iter()
            .any(|g| g.is("d", &["directories"]) && g.values.iter().any(recurse));
    if recursive {
        u.reads_trees = true;
        if u.reads.is_empty() {
            u.reads.push(Arg::plain("."));
        }
    }
    if has(scan, "R", &["dereference-recursive"]) {
        follows_links(u);
    }
}

/// A tree read that follows symbolic links reads wherever they lead.
pub(super) fn follows_links(u: &mut Understanding) {
    u.reads
        .push(Arg::unknown("(the files the links under the tree lead to)"));
}

/// `rg -L`, `ag -f`: the tree read follows links.
pub(super) fn follow_option(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    if has(scan, "Lf", &["follow"]) {
        follows_links(u);
    }
}

/// `diff -r` reads every file under the directories it compares, and
/// follows the links there unless told not to.
pub(super) fn diff(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    if has(scan, "r", &["recursive"]) {
        u.reads_trees = true;
        if !has(scan, "", &["no-dereference"]) {
            follows_links(u);
        }
    }
}

/// `ls -R -L`: a recursive listing that follows links lists wherever
/// they lead.
pub(super) fn ls(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    if has(scan, "R", &["recursive"]) && has(scan, "L", &["dereference"]) {
        follows_links(u);
    }
}

/// `du -L`: du walks the tree, and following links walks wherever they
/// lead.
pub(super) fn du(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    if has(scan, "L", &["dereference"]) {
        follows_links(u);
    }
}

/// `tree -l`: tree walks the tree, and following links walks wherever
/// they lead.
pub(super) fn tree(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    if has(scan, "l", &[]) {
        follows_links(u);
    }
}
