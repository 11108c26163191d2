//! Grammars of the programs that edit files by their operands (`rm`,
//! `mkdir`, `touch`, `cp`, `mv`) and of the script languages whose
//! scripts are parsed (`sed`, `awk`): what they read, write and remove.

use super::Understanding;
use crate::options::{Role, Scan};
use crate::scripts::{self, ScriptEffect};
use crate::word::Arg;

/// `rm`: removes its operands.
pub(super) fn rm(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    let recursive = scan.options.iter().any(|g| g.is("rR", &["recursive"]));
    let how = if recursive { "rm -r" } else { "rm" };
    edits(scan, args, u, |operands, u| {
        for f in operands {
            u.own_write(f.clone(), how, true);
        }
    });
}

/// `rmdir`: removes its operands.
pub(super) fn rmdir(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    edits(scan, args, u, |operands, u| {
        for f in operands {
            u.own_write(f.clone(), "rmdir", true);
        }
    });
}

/// `mkdir`: makes its operands.
pub(super) fn mkdir(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    edits(scan, args, u, |operands, u| {
        for f in operands {
            u.own_write(f.clone(), "mkdir", false);
        }
    });
}

/// `touch`: makes or changes its operands (`-r FILE` is a read the row
/// gives).
pub(super) fn touch(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    edits(scan, args, u, |operands, u| {
        for f in operands {
            u.own_write(f.clone(), "touch", false);
        }
    });
}

/// `cp`: reads its sources, writes the last operand or `-t DIR`.
pub(super) fn cp(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    copy(scan, args, u, "cp");
}

/// `mv`: as `cp`, and removes its sources.
pub(super) fn mv(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    copy(scan, args, u, "mv");
}

fn copy(scan: &Scan, args: &[Arg], u: &mut Understanding, how: &'static str) {
    // A recursive copy reads every file under its sources.
    u.reads_trees = how == "cp"
        && scan
            .options
            .iter()
            .any(|g| g.is("rRa", &["recursive", "archive"]));
    let target_dir = scan
        .options
        .iter()
        .find(|g| g.is("t", &["target-directory"]))
        .and_then(|g| g.values.first().cloned());
    // Following links, a recursive copy copies what they lead to.
    if u.reads_trees && scan.options.iter().any(|g| g.is("L", &["dereference"])) {
        super::grammars::follows_links(u);
    }
    // A backup moves the file the copy replaces to another name, which a
    // later command can read: the replaced file is read, the backup written.
    let backup = scan
        .options
        .iter()
        .any(|g| g.is("bS", &["backup", "suffix"]));
    edits(scan, args, u, |operands, u| {
        let mut operands = operands.to_vec();
        let dest = match target_dir {
            Some(d) => Some(d),
            None => operands.pop(),
        };
        if backup {
            if let Some(d) = &dest {
                u.reads.push(d.clone());
                for src in &operands {
                    if let (Some(dir), Some(name)) = (d.exact(), src.exact()) {
                        let base = name.rsplit('/').next().unwrap_or(name);
                        u.reads
                            .push(Arg::plain(&format!("{}/{base}", dir.trim_end_matches('/'))));
                    }
                }
                u.write(
                    Arg::unknown("the backup of the file it replaces"),
                    "a backup",
                );
            }
        }
        for src in operands {
            u.reads.push(src.clone());
            if how == "mv" {
                u.own_write(src, "mv", true);
            }
        }
        match dest {
            Some(d) => u.own_write(d, how, false),
            None => u.edits_only = false,
        }
    });
}

/// The shape every file command shares: with only the options its row
/// lists (an abbreviation that stands for one of them counts, as
/// getopt_long reads it), it does nothing but the edits `each` records.
fn edits(
    scan: &Scan,
    _args: &[Arg],
    u: &mut Understanding,
    each: impl FnOnce(&[Arg], &mut Understanding),
) {
    let operands: Vec<Arg> = scan.operands.iter().map(|a| (*a).clone()).collect();
    u.edits_only = !scan.unknown && !scan.unseen && scan.options.iter().all(|g| g.opts.len() == 1);
    each(&operands, u);
}

/// Adds what a script does: files it writes, or code it runs.
fn script_effects(found: Vec<ScriptEffect>, how: &'static str, u: &mut Understanding) {
    for e in found {
        match e {
            ScriptEffect::Writes(f) => u.write(Arg::plain(&f), how),
            ScriptEffect::RunsCode(why) | ScriptEffect::Unknown(why) => u.run(why),
        }
    }
}

/// The scripts given by option (`-e`), else the first operand; and the
/// operands after it.
fn scripts_and_files<'a>(scan: &'a Scan) -> Option<(Vec<&'a Arg>, Vec<&'a Arg>)> {
    let mut scripts: Vec<&Arg> = Vec::new();
    for g in &scan.options {
        for (v, role) in g.valued() {
            if role == Role::Pattern {
                scripts.push(v);
            }
        }
    }
    let mut operands = scan.operands.iter().copied();
    if scripts.is_empty() {
        scripts.push(operands.next()?);
    }
    Some((scripts, operands.collect()))
}

/// `sed`: its script is parsed (`w FILE` writes, `e` runs); with `-i` it
/// writes its files and does nothing else.
pub(super) fn sed(scan: &Scan, args: &[Arg], u: &mut Understanding) {
    if scan
        .options
        .iter()
        .any(|g| g.is("e", &["expression"]) && g.values.is_empty())
    {
        u.run("sed -e without a script");
        return;
    }
    let in_place = scan.options.iter().any(|g| g.is("i", &["in-place"]));
    let sandboxed = scan.options.iter().any(|g| g.is("", &["sandbox"]));
    let Some((scripts, files)) = scripts_and_files(scan) else {
        return;
    };
    if scripts.iter().any(|s| !s.literal) {
        u.run("sed runs a script the analysis cannot see");
        return;
    }
    u.reads.extend(files.iter().map(|f| (*f).clone()));
    // Its script may read files of its own (`r FILE`): deny and ask rules
    // look at every word of it.
    for a in args.iter().filter(|a| a.literal) {
        for word in a.value.split_whitespace() {
            u.maybe_reads.push(Arg::plain(word));
        }
    }
    if !sandboxed {
        // sed joins its -e scripts with newlines and reads them as one.
        let joined: Vec<&str> = scripts.iter().map(|s| s.value.as_str()).collect();
        script_effects(scripts::sed_script(&joined.join("\n")), "sed w", u);
    }
    if in_place {
        // `-i SUFFIX` keeps a backup: FILE+SUFFIX, or, when the suffix
        // holds `/` or `*`, the suffix with `*` as the file's name, from
        // the file's directory (`-i'.git/hooks/*'`).
        let suffix = scan
            .options
            .iter()
            .filter(|g| g.is("i", &["in-place"]))
            .find_map(|g| g.values.first());
        for f in &files {
            if let Some(s) = suffix {
                u.write(backup_of(f, s), "sed -i backup");
            }
        }
        for f in files {
            u.write(f.clone(), "sed -i");
        }
        u.edits_only = !scan.unknown && !scan.unseen && u.runs.is_none();
    }
}

/// Where `sed -i SUFFIX` keeps the backup of `file`.
fn backup_of(file: &Arg, suffix: &Arg) -> Arg {
    let (Some(path), Some(suffix)) = (file.exact(), suffix.exact()) else {
        return Arg::unknown("the backup sed keeps");
    };
    if !suffix.contains(['/', '*']) {
        return Arg::plain(&format!("{path}{suffix}"));
    }
    let (dir, name) = match path.rsplit_once('/') {
        Some((dir, name)) => (format!("{dir}/"), name),
        None => (String::new(), path),
    };
    let backup = suffix.replace('*', name);
    if backup.starts_with('/') {
        Arg::plain(&backup)
    } else {
        Arg::plain(&format!("{dir}{backup}"))
    }
}

/// `awk`: its program is parsed (`print > FILE` writes, `system()` runs);
/// its operands are reads.
pub(super) fn awk(scan: &Scan, _args: &[Arg], u: &mut Understanding) {
    if scan
        .options
        .iter()
        .any(|g| g.is("e", &["source"]) && g.values.is_empty())
    {
        u.run("awk -e without a program");
        return;
    }
    for g in &scan.options {
        if g.is("opd", &["pretty-print", "profile", "dump-variables"]) && g.values.is_empty() {
            u.write(Arg::unknown("awk's default output file"), "awk -o");
        }
    }
    let Some((programs, files)) = scripts_and_files(scan) else {
        return;
    };
    u.reads.extend(files.iter().map(|f| (*f).clone()));
    for program in programs {
        if !program.literal {
            u.run("awk runs a program the analysis cannot see");
            return;
        }
        script_effects(scripts::awk_program(&program.value), "awk print >", u);
    }
}
