//! What files a simple command reads and writes by its operands: the
//! knowledge behind `Read(…)`/`Edit(…)` rules for bash, and behind the modes
//! that let reads (and, in `acceptEdits`, edits) inside the working
//! directories run unasked.
//!
//! A command listed here is described completely: its reads, its writes,
//! and whether that is all it does to files. Any other program is not
//! known, and every literal word of it is taken as a path it may read or
//! write, which deny and ask rules look at (so a denied path named by a
//! program nobody listed is still denied).

use crate::commands::{self, scan};
use crate::word::Arg;

/// What a simple command does to files, by its words.
#[derive(Debug, Default)]
pub(crate) struct FileUse {
    /// Files (or directories) it reads.
    pub reads: Vec<Arg>,
    /// Words that are probably not paths (a search pattern, a jq filter)
    /// but could be: deny and ask rules look at them.
    pub maybe_reads: Vec<Arg>,
    /// Files it writes: (target, how, whether it removes the name).
    pub writes: Vec<(Arg, &'static str, bool)>,
    /// The command does nothing else than these reads and writes (`mkdir`,
    /// `cp`, `rm`): in `acceptEdits` it is allowed when they are.
    pub edits_only: bool,
    /// Not a command described here: every word may be a path.
    pub unknown: bool,
}

/// What `name` (a basename, not a read-only command: those are the
/// program table's) does to files with these arguments.
pub(crate) fn file_use(name: &str, args: &[Arg]) -> FileUse {
    match name {
        "mkdir" | "touch" | "rm" | "rmdir" | "cp" | "mv" => file_command(name, args),
        "sed" => sed(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        "source" | "." => FileUse {
            reads: args.first().cloned().into_iter().collect(),
            ..FileUse::default()
        },
        _ => FileUse {
            unknown: true,
            ..FileUse::default()
        },
    }
}

/// Every word that may name a path: operands, `--name=value` values, an
/// attached short-option value with a `/` in it (`-I/usr/include`), and
/// any word the analysis cannot see.
fn words(args: &[Arg]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut options = true;
    for a in args {
        if !a.literal {
            out.push(a.clone());
            continue;
        }
        let v = a.value.as_str();
        if options && v == "--" {
            options = false;
            continue;
        }
        if options && v.len() > 1 && v.starts_with('-') {
            if let Some((_, value)) = v.strip_prefix("--").and_then(|l| l.split_once('=')) {
                out.push(Arg::plain(value));
            } else if !v.starts_with("--") && v.len() > 3 && v[2..].contains('/') {
                out.push(Arg::plain(&v[2..]));
            }
            continue;
        }
        if v != "-" {
            out.push(a.clone());
        }
    }
    out
}

/// The literal words of a program not described here that may be paths.
pub(crate) fn path_like_words(args: &[Arg]) -> Vec<String> {
    words(args)
        .into_iter()
        .filter_map(|a| a.exact().map(str::to_owned))
        .collect()
}

/// Words the analysis cannot see count as reads it cannot place.
fn non_literal(args: &[Arg], out: &mut FileUse) {
    for a in args.iter().filter(|a| !a.literal) {
        if !out.reads.iter().any(|r| r.raw == a.raw) {
            out.reads.push(a.clone());
        }
    }
}

/// `sed`: reads its files; with `-i` it writes them too (the writes are
/// its effects, recorded by the command table) and does nothing else.
fn sed(args: &[Arg]) -> FileUse {
    let s = scan(args, &commands::SED);
    let mut out = FileUse::default();
    let mut script_given = false;
    let mut in_place = false;
    for o in &s.options {
        script_given |= o.is("ef", &["expression", "file"]);
        in_place |= o.is("i", &["in-place"]);
        if o.is("f", &["file"]) {
            out.reads.extend(o.value.clone());
        }
    }
    let mut operands = s.operands.into_iter();
    if !script_given {
        operands.next();
    }
    out.reads.extend(operands.cloned());
    non_literal(args, &mut out);
    // Its script may read files of its own (`r FILE`): deny and ask rules
    // look at every word of it.
    for a in args.iter().filter(|a| a.literal) {
        for word in a.value.split_whitespace() {
            out.maybe_reads.push(Arg::plain(word));
        }
    }
    out.edits_only = in_place && !s.unknown;
    out
}

/// `awk PROGRAM FILE…`: what its program writes or runs is its effects
/// (the command table analyses the program); its operands are reads.
fn awk(args: &[Arg]) -> FileUse {
    let s = scan(args, &commands::AWK);
    let mut out = FileUse::default();
    let mut program_given = false;
    for o in &s.options {
        if o.is("fEie", &["file", "exec", "include", "source"]) {
            program_given = true;
            if !o.is("e", &["source"]) {
                out.reads.extend(o.value.clone());
            }
        }
    }
    let mut operands = s.operands.into_iter();
    if !program_given {
        operands.next();
    }
    out.reads.extend(operands.cloned());
    non_literal(args, &mut out);
    out
}

/// An option of a file command: its short letter, its long names, and
/// whether it takes a value.
struct FileOption {
    short: Option<char>,
    long: &'static [&'static str],
    valued: bool,
}

const fn flag(short: char, long: &'static [&'static str]) -> FileOption {
    FileOption {
        short: Some(short),
        long,
        valued: false,
    }
}

const fn valued(short: char, long: &'static [&'static str]) -> FileOption {
    FileOption {
        short: Some(short),
        long,
        valued: true,
    }
}

const fn long_flag(long: &'static [&'static str]) -> FileOption {
    FileOption {
        short: None,
        long,
        valued: false,
    }
}

const RM: &[FileOption] = &[
    flag('f', &["force"]),
    flag('r', &["recursive"]),
    flag('R', &[]),
    flag('d', &["dir"]),
    flag('v', &["verbose"]),
    flag('i', &[]),
    flag('I', &[]),
    long_flag(&["one-file-system", "preserve-root"]),
];

const RMDIR: &[FileOption] = &[
    flag('p', &["parents"]),
    flag('v', &["verbose"]),
    long_flag(&["ignore-fail-on-non-empty"]),
];

const MKDIR: &[FileOption] = &[
    flag('p', &["parents"]),
    flag('v', &["verbose"]),
    valued('m', &["mode"]),
];

const TOUCH: &[FileOption] = &[
    flag('a', &[]),
    flag('c', &["no-create"]),
    flag('m', &[]),
    flag('f', &[]),
    valued('d', &["date"]),
    valued('t', &[]),
    valued('r', &["reference"]),
    FileOption {
        short: None,
        long: &["time"],
        valued: true,
    },
];

const CP: &[FileOption] = &[
    flag('a', &["archive"]),
    flag('b', &[]),
    flag('d', &[]),
    flag('f', &["force"]),
    flag('H', &[]),
    flag('i', &["interactive"]),
    flag('L', &["dereference"]),
    flag('n', &["no-clobber"]),
    flag('p', &[]),
    flag('P', &["no-dereference"]),
    flag('r', &["recursive"]),
    flag('R', &[]),
    flag('T', &["no-target-directory"]),
    flag('u', &[]),
    flag('v', &["verbose"]),
    flag('x', &["one-file-system"]),
    valued('t', &["target-directory"]),
    valued('S', &["suffix"]),
    long_flag(&[
        "backup",
        "preserve",
        "no-preserve",
        "parents",
        "remove-destination",
        "strip-trailing-slashes",
        "update",
        "attributes-only",
        "sparse",
        "reflink",
        "debug",
    ]),
];

const MV: &[FileOption] = &[
    flag('b', &[]),
    flag('f', &["force"]),
    flag('i', &["interactive"]),
    flag('n', &["no-clobber"]),
    flag('T', &["no-target-directory"]),
    flag('u', &[]),
    flag('v', &["verbose"]),
    valued('t', &["target-directory"]),
    valued('S', &["suffix"]),
    long_flag(&[
        "backup",
        "strip-trailing-slashes",
        "update",
        "exchange",
        "no-copy",
        "debug",
    ]),
];

/// `mkdir`, `touch`, `rm`, `rmdir`, `cp`, `mv`: with only the options
/// listed, these do nothing but make, change and remove the files their
/// operands name.
fn file_command(name: &str, args: &[Arg]) -> FileUse {
    let table = match name {
        "rm" => RM,
        "rmdir" => RMDIR,
        "mkdir" => MKDIR,
        "touch" => TOUCH,
        "cp" => CP,
        _ => MV,
    };
    let mut out = FileUse {
        edits_only: true,
        ..FileUse::default()
    };
    let mut operands: Vec<Arg> = Vec::new();
    let mut target_dir: Option<Arg> = None;
    let mut recursive = false;
    let mut i = 0;
    let mut options = true;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let v = a.value.as_str();
        if !a.literal && options {
            // It could be an option we do not know.
            out.edits_only = false;
            operands.push(a.clone());
            continue;
        }
        if options && v == "--" {
            options = false;
            continue;
        }
        if !options || v == "-" || !v.starts_with('-') {
            operands.push(a.clone());
            continue;
        }
        // One option word: `--name[=value]` or a bundle of short letters.
        let mut given: Vec<(&FileOption, Option<Arg>)> = Vec::new();
        if let Some(long) = v.strip_prefix("--") {
            let (n, attached) = match long.split_once('=') {
                Some((n, val)) => (n, Some(Arg::plain(val))),
                None => (long, None),
            };
            let found: Vec<&FileOption> = table
                .iter()
                .filter(|o| o.long.iter().any(|l| !n.is_empty() && l.starts_with(n)))
                .collect();
            match found.as_slice() {
                [o] => {
                    let value = if o.valued && attached.is_none() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        attached
                    };
                    given.push((o, value));
                }
                _ => out.edits_only = false,
            }
        } else {
            let bundle = &v[1..];
            for (k, c) in bundle.char_indices() {
                let Some(o) = table.iter().find(|o| o.short == Some(c)) else {
                    out.edits_only = false;
                    break;
                };
                if o.valued {
                    let rest = &bundle[k + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        Some(Arg::plain(rest))
                    };
                    given.push((o, value));
                    break;
                }
                given.push((o, None));
            }
        }
        for (o, value) in given {
            recursive |= matches!(o.short, Some('r' | 'R')) || o.long.contains(&"recursive");
            match (o.short, value) {
                (Some('t'), Some(dir)) => target_dir = Some(dir),
                (Some('r'), Some(reference)) if name == "touch" => out.reads.push(reference),
                _ => {}
            }
        }
    }
    match name {
        "rm" | "rmdir" => {
            let op = if recursive { "rm -r" } else { name_op(name) };
            for f in operands {
                out.writes.push((f, op, true));
            }
        }
        "mkdir" | "touch" => {
            for f in operands {
                out.writes.push((f, name_op(name), false));
            }
        }
        _ => {
            let dest = match target_dir {
                Some(d) => Some(d),
                None => operands.pop(),
            };
            for src in operands {
                out.reads.push(src.clone());
                if name == "mv" {
                    out.writes.push((src, "mv", true));
                }
            }
            match dest {
                Some(d) => out.writes.push((d, name_op(name), false)),
                None => out.edits_only = false,
            }
        }
    }
    out
}

fn name_op(name: &str) -> &'static str {
    match name {
        "rm" => "rm",
        "rmdir" => "rmdir",
        "mkdir" => "mkdir",
        "touch" => "touch",
        "cp" => "cp",
        _ => "mv",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn use_of(name: &str, args: &[&str]) -> FileUse {
        let args: Vec<Arg> = args.iter().map(|a| Arg::plain(a)).collect();
        file_use(name, &args)
    }

    #[test]
    fn file_commands() {
        let cp = use_of("cp", &["-r", "a", "b", "dest/"]);
        assert!(cp.edits_only);
        let r: Vec<_> = cp.reads.iter().map(|a| a.value.as_str()).collect();
        assert_eq!(r, ["a", "b"]);
        assert_eq!(cp.writes[0].0.value, "dest/");
        let cp = use_of("cp", &["-t", "d", "a"]);
        assert_eq!(cp.writes[0].0.value, "d");
        assert!(
            !use_of("cp", &["-s", "a", "b"]).edits_only,
            "symlinks are not copies"
        );
        assert!(!use_of("rm", &["--no-preserve-root", "-rf", "/"]).edits_only);
        let rm = use_of("rm", &["-rf", "x"]);
        assert_eq!((rm.writes[0].1, rm.writes[0].2), ("rm -r", true));
        let mv = use_of("mv", &["a", "b"]);
        assert_eq!(mv.writes.len(), 2);
        assert!(use_of("touch", &["-r", "ref", "f"]).reads[0].value == "ref");
        assert!(use_of("mkdir", &["-p", "-m", "755", "a/b"]).edits_only);
        assert!(use_of("sed", &["-i", "s/a/b/", "f"]).edits_only);
        assert!(!use_of("sed", &["s/a/b/", "f"]).edits_only);
    }
}
