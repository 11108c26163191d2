//! What the policy knows about programs: one table, one row per program
//! (or per subcommand: `git log`, `npm test`), from which everything the
//! analysis says about a simple command is derived:
//!
//! * whether it is **read-only** — only when its row says the program
//!   reads, and every option given (bundled, attached, after operands as
//!   GNU permutes them) is listed as read-only and every operand has a
//!   place in the row's operand list. A program without a row, an option
//!   nobody listed, an abbreviation, a word the analysis cannot see that
//!   could be an option: not read-only;
//! * the **files** it reads and writes (operands and option values whose
//!   role says so), for `Read(…)`/`Edit(…)` rules;
//! * the options that make it **run** other code (`rg --pre`, `go test
//!   -exec`), which no allow rule covers: the command is unanalysable;
//! * whether its arguments are **only data**, or may be commands it runs
//!   (deny rules then look for the denied command among them);
//! * for programs with subcommands, the **global options** before the
//!   subcommand, so that a deny rule `Bash(git push:*)` sees `git -C .
//!   push` as `git push`.
//!
//! Each row carries examples of what must and must not count as
//! read-only; a test checks them all against the derived verdict and
//! against [`is_read_only_command`](crate::is_read_only_command). The few
//! programs whose grammar needs code (git's configuration, tar, sed, awk,
//! curl, wget, ssh, less) name it in their row ([`Grammar`]); the shell's
//! own words (wrappers, `find`, `xargs`, `env`, shells) are the walker's.

mod files;
mod git;
mod grammars;
mod net;
mod table;
mod tar;

use crate::options::{self, Options, Role, Scan};
use crate::word::Arg;
use std::collections::HashMap;
use std::sync::OnceLock;

/// What a program does with nothing but the options its row lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// It reads (files, the system's state) and prints.
    ReadOnly,
    /// It makes, changes or removes the files its operands name.
    Edits,
    /// Anything else: it builds, installs, sends, runs scripts.
    Acts,
    /// It runs code given to it (a file or a string) that the policy
    /// cannot see into.
    Interpreter,
}

/// Code for what a row's options cannot say: adds to what the table
/// derived from the words read with the row's options.
pub(crate) type Grammar = fn(&Scan<'_, '_>, &[Arg], &mut Understanding);

/// The note for a script file.
pub(crate) const SCRIPT_NOTE: &str =
    "it runs a script the policy cannot see into; only a sandbox limits what that script does";

/// The note for an interpreter.
pub(crate) const INTERPRETER_NOTE: &str =
    "it is an interpreter: the policy cannot see into the code it runs; only a sandbox limits what that code does";

/// One row of the table, as written in [`table`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    /// Names, separated by `|`; a subcommand's row is named with its
    /// program: `git log`.
    pub names: &'static str,
    pub kind: Kind,
    /// Its options (see [`crate::options`] for the notation).
    pub options: &'static str,
    /// Its operands in order: `r` read, `w` written, `d` data, `p` the
    /// pattern (absent when an option gave it), `+` a `+format` word; each
    /// with `?` (optional) or `*` (any number). Empty: it takes none.
    pub operands: &'static str,
    /// Options may follow operands (GNU); otherwise the first operand
    /// ends them.
    pub permute: bool,
    /// With no file operand it reads the working directory (`ls`, `rg`).
    pub walks: bool,
    /// Every word is data, options included (`echo`, `true`).
    pub any_words: bool,
    /// Its arguments are data, never a command it runs.
    pub data: bool,
    /// The files it reads and writes are all the row and its grammar say
    /// (read-only programs, file commands, sed and awk); for any other
    /// program every word may be a path.
    pub files: bool,
    /// An operand `@FILE` is a file of more arguments (gcc, binutils).
    pub at_files: bool,
    /// The row lists every option the program has: a word the analysis
    /// cannot see can only be one of them (read-only when none of them
    /// writes, runs or changes anything).
    pub complete: bool,
    /// It reads every file under the directories it is given (`rg`).
    pub trees: bool,
    /// A bundle of short options must not hold one that takes a value
    /// (`tree -To x` gives `-T` and `-o` a word each).
    pub strict_bundles: bool,
    /// For a program with subcommands: its options before the
    /// subcommand. Rows named `PROGRAM SUB` describe the subcommands.
    pub global: Option<&'static str>,
    pub grammar: Option<Grammar>,
    /// Command lines that must count as read-only (checked by the row
    /// test, which is where they are read).
    #[cfg_attr(not(test), allow(dead_code))]
    pub read_only: &'static [&'static str],
    /// Command lines that must not.
    #[cfg_attr(not(test), allow(dead_code))]
    pub not_read_only: &'static [&'static str],
}

impl Row {
    pub(crate) const fn new(names: &'static str, kind: Kind) -> Row {
        Row {
            names,
            kind,
            options: "",
            operands: "",
            permute: true,
            walks: false,
            any_words: false,
            data: false,
            files: false,
            at_files: false,
            complete: false,
            trees: false,
            strict_bundles: false,
            global: None,
            grammar: None,
            read_only: &[],
            not_read_only: &[],
        }
    }
    pub(crate) const fn opts(self, options: &'static str) -> Row {
        Row { options, ..self }
    }
    pub(crate) const fn operands(self, operands: &'static str) -> Row {
        Row { operands, ..self }
    }
    pub(crate) const fn no_permute(self) -> Row {
        Row {
            permute: false,
            ..self
        }
    }
    pub(crate) const fn walks(self) -> Row {
        Row {
            walks: true,
            ..self
        }
    }
    pub(crate) const fn any_words(self) -> Row {
        Row {
            any_words: true,
            data: true,
            ..self
        }
    }
    pub(crate) const fn data(self) -> Row {
        Row { data: true, ..self }
    }
    pub(crate) const fn files(self) -> Row {
        Row {
            files: true,
            ..self
        }
    }
    pub(crate) const fn at_files(self) -> Row {
        Row {
            at_files: true,
            ..self
        }
    }
    pub(crate) const fn complete(self) -> Row {
        Row {
            complete: true,
            ..self
        }
    }
    pub(crate) const fn trees(self) -> Row {
        Row {
            trees: true,
            ..self
        }
    }
    pub(crate) const fn strict_bundles(self) -> Row {
        Row {
            strict_bundles: true,
            ..self
        }
    }
    pub(crate) const fn global(self, options: &'static str) -> Row {
        Row {
            global: Some(options),
            ..self
        }
    }
    pub(crate) const fn grammar(self, grammar: Grammar) -> Row {
        Row {
            grammar: Some(grammar),
            ..self
        }
    }
    pub(crate) const fn examples(
        self,
        read_only: &'static [&'static str],
        not_read_only: &'static [&'static str],
    ) -> Row {
        Row {
            read_only,
            not_read_only,
            ..self
        }
    }
}

/// One operand place of a row.
#[derive(Debug, Clone, Copy)]
struct Operand {
    role: Role,
    /// A `+format` word (`date +%s`).
    plus: bool,
    min: usize,
    /// `None`: any number.
    max: Option<usize>,
}

/// A row, ready to use.
#[derive(Debug)]
pub(crate) struct Program {
    pub row: Row,
    options: Options,
    global: Options,
    operands: Vec<Operand>,
    /// Some option writes or runs something.
    has_effects: bool,
    /// Some option is not read-only.
    has_changes: bool,
    /// How its operand writes are named in reasons.
    label: &'static str,
}

fn compile(row: Row) -> Result<Program, String> {
    let name = row.names.split('|').next().unwrap_or("");
    let options = Options::parse(name, row.options).map_err(|e| format!("{}: {e}", row.names))?;
    let global = Options::parse(name, row.global.unwrap_or(""))
        .map_err(|e| format!("{} (global): {e}", row.names))?;
    let mut operands = Vec::new();
    for token in row.operands.split_whitespace() {
        let (body, min, max) = match token.as_bytes().last() {
            Some(b'?') => (&token[..token.len() - 1], 0, Some(1)),
            Some(b'*') => (&token[..token.len() - 1], 0, None),
            _ => (token, 1, Some(1)),
        };
        let (role, plus) = match body {
            "r" => (Role::Read, false),
            "w" => (Role::Write, false),
            "d" => (Role::Data, false),
            "p" => (Role::Pattern, false),
            "+" => (Role::Data, true),
            other => return Err(format!("{}: unknown operand {other:?}", row.names)),
        };
        operands.push(Operand {
            role,
            plus,
            min,
            max,
        });
    }
    let has_effects = options.opts.iter().chain(&global.opts).any(|o| {
        o.takes
            .roles()
            .any(|r| matches!(r, Role::Write | Role::Run))
    });
    let has_changes = options.opts.iter().any(|o| !o.is_read_only());
    Ok(Program {
        row,
        options,
        global,
        operands,
        has_effects,
        has_changes,
        label: name,
    })
}

/// The table, by every name of every row.
fn table() -> &'static HashMap<&'static str, &'static Program> {
    static TABLE: OnceLock<HashMap<&'static str, &'static Program>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map = HashMap::new();
        for row in table::ROWS {
            // A row that does not compile is a bug the row test names; a
            // program without a row is not read-only, so it fails closed.
            let Ok(program) = compile(*row) else { continue };
            // Built once per process, so leaking is bounded by the table.
            let program: &'static Program = Box::leak(Box::new(program));
            for name in row.names.split('|') {
                map.insert(name, program);
            }
        }
        map
    })
}

/// The row of a program (a basename), or of `program sub`.
pub(crate) fn lookup(name: &str) -> Option<&'static Program> {
    table().get(name).copied()
}

/// A file a command writes.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub target: Arg,
    /// How (`sort -o`, `rm -r`), for the reason.
    pub how: &'static str,
    /// The name is removed (`rm`, `mv`'s source): a link there is not followed.
    pub removes: bool,
    /// An operand of a file command (`mkdir build`): a `Bash` allow rule
    /// for the command covers it, as in Claude Code.
    pub own: bool,
}

/// What a simple command does, as far as its row says.
#[derive(Debug, Default)]
pub(crate) struct Understanding {
    /// The program has a row.
    pub known: bool,
    /// Every part of it is known to be read-only.
    pub read_only: bool,
    /// Why it is not read-only, when it has a row (for the reason).
    pub why_not: Option<String>,
    /// Files (or directories) it reads.
    pub reads: Vec<Arg>,
    /// Words that are probably not paths (a sed script) but could name
    /// one: deny and ask rules look at them.
    pub maybe_reads: Vec<Arg>,
    /// Files it writes.
    pub writes: Vec<Write>,
    /// It runs code the analysis cannot see: unanalysable, for this reason.
    pub runs: Option<String>,
    /// Its arguments are data, never a command it runs.
    pub data: bool,
    /// It is an interpreter.
    pub interpreter: bool,
    /// The reads and writes above are every file it names (not a guess).
    pub files_known: bool,
    /// When they are not: the words that may name files, as its row reads
    /// them (operands, not option values that are data, nor the
    /// subcommand); `None` when it has no row, and every word may.
    pub guesses: Option<Vec<Arg>>,
    /// It reads every file under the directories it reads (`grep -r`,
    /// `rg`): a deny `Read` rule for a file in one of them applies.
    pub reads_trees: bool,
    /// It does nothing but its reads and writes (`mkdir`, `cp`, `sed -i`):
    /// `acceptEdits` allows it when they are.
    pub edits_only: bool,
    /// The command with the global options before its subcommand left
    /// out (`git push origin` for `git -C . push origin`), each a
    /// candidate when an option's arity is not known: deny and ask rules
    /// see them.
    pub subcommand_views: Vec<Vec<Arg>>,
}

impl Understanding {
    pub(crate) fn not_read_only(&mut self, why: impl Into<String>) {
        self.read_only = false;
        if self.why_not.is_none() {
            self.why_not = Some(why.into());
        }
    }

    pub(crate) fn run(&mut self, why: impl Into<String>) {
        if self.runs.is_none() {
            self.runs = Some(why.into());
        }
        self.not_read_only("it runs other code");
    }

    /// A write its options or script make (`sort -o F`, `sed 'w F'`).
    pub(crate) fn write(&mut self, target: Arg, how: &'static str) {
        self.push_write(target, how, false, false);
    }

    /// A write of a file command's operand.
    pub(crate) fn own_write(&mut self, target: Arg, how: &'static str, removes: bool) {
        self.push_write(target, how, removes, true);
    }

    fn push_write(&mut self, target: Arg, how: &'static str, removes: bool, own: bool) {
        // `-` is standard output (`curl -o -`, `wget -O -`).
        if target.literal && target.value == "-" {
            return;
        }
        self.writes.push(Write {
            target,
            how,
            removes,
            own,
        });
        self.not_read_only("it writes a file");
    }
}

pub(super) const UNSEEN_ARGUMENT: &str =
    "an argument the analysis cannot see could be an option that runs code or writes a file";

/// What `name args…` does by the table (`name` is a basename).
pub(crate) fn understand(name: &str, args: &[Arg]) -> Understanding {
    let mut u = Understanding::default();
    let Some(program) = lookup(name) else {
        // `python3.12` is `python3`.
        let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        u.interpreter = lookup(trimmed).is_some_and(|p| p.row.kind == Kind::Interpreter);
        u.why_not = Some(format!("{name} has no row in the program table"));
        // git runs `git-push` for `git push`: a deny rule sees it so.
        if let Some(sub) = name.strip_prefix("git-").filter(|s| !s.is_empty()) {
            let mut view = vec![Arg::plain("git"), Arg::plain(sub)];
            view.extend(args.iter().cloned());
            u.subcommand_views.push(view);
        }
        return u;
    };
    u.known = true;
    if program.row.global.is_some() {
        subcommand(name, program, args, &mut u);
    } else {
        apply(name, program, args, &mut u);
    }
    u
}

/// A program with subcommands: its global options, then the subcommand's row.
fn subcommand(name: &str, program: &Program, args: &[Arg], u: &mut Understanding) {
    let scan = options::scan(args, &program.global, false);
    effects(name, program, &scan, u);
    u.data = program.row.data;
    u.read_only = scan.read_only_options();
    if !u.read_only {
        u.not_read_only(format!(
            "{name} has a global option the table does not list as read-only"
        ));
    }
    match views(name, &program.global, args) {
        Some(views) => u.subcommand_views = views,
        None => u.run(format!(
            "{name} has more options before its subcommand than the analysis follows"
        )),
    }
    if let Some(grammar) = program.row.grammar {
        grammar(&scan, args, u);
    }
    let Some(sub) = scan.operands.first() else {
        u.not_read_only(format!("{name} without a subcommand"));
        return;
    };
    let at = args.len() - (scan.operands.len() - 1);
    let rest = &args[at..];
    let full = format!("{name} {}", sub.value);
    match (sub.exact(), lookup(&full)) {
        (Some(_), Some(row)) => {
            let read_only = u.read_only;
            let mut inner = Understanding {
                known: true,
                ..Understanding::default()
            };
            apply(&full, row, rest, &mut inner);
            u.read_only = read_only && inner.read_only;
            if u.why_not.is_none() {
                u.why_not = inner.why_not;
            }
            u.reads.extend(inner.reads);
            u.maybe_reads.extend(inner.maybe_reads);
            u.writes.extend(inner.writes);
            u.edits_only = inner.edits_only;
            u.reads_trees = inner.reads_trees;
            if u.runs.is_none() {
                u.runs = inner.runs;
            }
            u.data = inner.data;
            u.files_known = inner.files_known;
            u.guesses = inner.guesses;
            u.interpreter |= inner.interpreter;
        }
        _ => {
            u.not_read_only(format!("{full} has no row in the program table"));
            u.data = false;
            u.guesses = Some(path_words(rest));
        }
    }
}

/// Where a subcommand may start after global options: every position
/// that the options' arities leave possible, up to the first that is
/// certainly it.
fn views(name: &str, global: &Options, args: &[Arg]) -> Option<Vec<Vec<Arg>>> {
    /// Most candidate places for the subcommand the views follow; past it
    /// the command is not analysable (an option nobody listed, before it,
    /// many times).
    const MOST: usize = 16;
    let mut out = Vec::new();
    let mut i = 0;
    let mut value_may_follow = false;
    while i < args.len() {
        let a = &args[i];
        let v = a.value.as_str();
        if a.literal && v.starts_with('-') && v.len() > 1 && v != "--" {
            let s = options::scan(std::slice::from_ref(a), global, false);
            let taken = s.options.iter().any(|g| {
                g.opts
                    .iter()
                    .any(|o| matches!(o.takes, options::Takes::Value(..)))
                    && g.values.is_empty()
            });
            value_may_follow = s.unknown || taken;
            i += 1;
            if taken && !s.unknown {
                // Its value is the next word, certainly.
                i += 1;
                value_may_follow = false;
            }
            continue;
        }
        if a.literal && v.starts_with('+') && i == 0 {
            // `cargo +nightly publish`: a toolchain.
            i += 1;
            continue;
        }
        if out.len() == MOST {
            return None;
        }
        if i > 0 {
            let mut view = vec![Arg::plain(name)];
            view.extend(args[i..].iter().cloned());
            out.push(view);
        }
        // A word the analysis cannot see may be an option taking the next
        // word as its value: the subcommand may still follow.
        if !value_may_follow && a.literal {
            break;
        }
        value_may_follow = !a.literal;
        i += 1;
    }
    Some(out)
}

/// The effects of the options given: files read and written, code run.
fn effects(name: &str, program: &Program, scan: &Scan, u: &mut Understanding) {
    for g in &scan.options {
        for (value, role) in g.valued() {
            match role {
                Role::Run => u.run(format!(
                    "{name} {} runs a program or code named in it",
                    g.written
                )),
                Role::Write => {
                    let how = g
                        .opts
                        .iter()
                        .find(|o| o.takes.roles().any(|r| r == Role::Write))
                        .map_or("an option", |o| o.label);
                    u.write(value.clone(), how);
                }
                Role::Read | Role::PatternFile => u.reads.push(value.clone()),
                Role::ReadList if value.literal => {
                    u.reads.extend(
                        value
                            .value
                            .split(':')
                            .filter(|f| !f.is_empty())
                            .map(Arg::plain),
                    );
                }
                Role::ReadList => u.reads.push(value.clone()),
                Role::Data | Role::Pattern => {}
            }
        }
        if g.opts.iter().any(|o| o.runs) {
            u.run(format!(
                "{name} {} runs a program its configuration names",
                g.written
            ));
        }
        // A value that runs or writes, missing or abbreviated away, still
        // names the option.
        if g.values.is_empty()
            && g.opts
                .iter()
                .any(|o| o.takes.roles().any(|r| r == Role::Run))
        {
            u.run(format!("{name} {} runs a program named in it", g.written));
        }
    }
    if scan.unseen && program.has_effects {
        u.run(UNSEEN_ARGUMENT);
    }
}

/// Applies a row without subcommands (or a subcommand's row).
pub(super) fn apply(name: &str, program: &Program, args: &[Arg], u: &mut Understanding) {
    let row = &program.row;
    u.data = row.data;
    u.interpreter = row.kind == Kind::Interpreter;
    u.files_known = row.kind == Kind::ReadOnly || row.files;
    u.reads_trees = row.trees;
    let scan = options::scan(args, &program.options, row.permute);
    if !u.files_known {
        // Operands, and the values of options the row does not know (or
        // knows to name files): a value it knows to be data is no path.
        let mut guesses: Vec<Arg> = scan.operands.iter().map(|a| (*a).clone()).collect();
        for g in &scan.options {
            let data = !g.opts.is_empty()
                && g.opts.iter().all(|o| {
                    o.takes
                        .roles()
                        .all(|r| matches!(r, Role::Data | Role::Pattern))
                });
            if !data {
                guesses.extend(g.values.iter().cloned());
            }
        }
        u.guesses = Some(guesses);
    }
    if row.any_words {
        u.read_only = row.kind == Kind::ReadOnly;
    } else {
        words(name, program, &scan, args, u);
    }
    if let Some(grammar) = row.grammar {
        grammar(&scan, args, u);
    }
}

/// What the row's options and operands say of the words.
fn words(name: &str, program: &Program, scan: &Scan, args: &[Arg], u: &mut Understanding) {
    let row = &program.row;
    u.read_only = row.kind == Kind::ReadOnly;
    if !u.read_only {
        u.why_not = Some(format!("{name} changes things (the program table says so)"));
    }
    effects(name, program, scan, u);
    if let Some(g) = scan.options.iter().find(|g| !g.is_read_only()) {
        u.not_read_only(format!(
            "{name} {}: the program table does not list it as a read-only option",
            g.written
        ));
    }
    if scan.unseen && (program.has_changes || !row.complete) {
        u.not_read_only(format!(
            "{name} has an argument the analysis cannot see, which could be any option"
        ));
    }
    if row.strict_bundles && bundles_a_value(args, &program.options) {
        u.not_read_only(format!("{name} reads a bundle of options word by word"));
    }
    let pattern_given = scan.options.iter().any(|g| {
        g.valued()
            .any(|(_, r)| matches!(r, Role::Pattern | Role::PatternFile))
    });
    operands(name, program, &scan.operands, pattern_given, u);
    if row.walks && u.reads.is_empty() && u.writes.is_empty() {
        u.reads.push(Arg::plain("."));
    }
}

/// Assigns operands to the row's places.
fn operands(
    name: &str,
    program: &Program,
    given: &[&Arg],
    pattern_given: bool,
    u: &mut Understanding,
) {
    let mut rest = given.iter().copied().peekable();
    for place in &program.operands {
        if place.role == Role::Pattern && pattern_given {
            continue;
        }
        let mut taken = 0;
        while place.max.is_none_or(|m| taken < m) {
            let Some(a) = rest.next_if(|a| !place.plus || a.value.starts_with('+')) else {
                break;
            };
            taken += 1;
            if program.row.at_files && a.value.starts_with('@') {
                u.reads.push(Arg::plain(&a.value[1..]));
                u.not_read_only(format!(
                    "{name} reads more arguments from a file ({})",
                    a.value
                ));
                continue;
            }
            match place.role {
                Role::Read | Role::PatternFile | Role::ReadList => u.reads.push((*a).clone()),
                // A pattern the analysis cannot see may split into more
                // words, files among them (`grep $x README.md`); so may
                // any word bash splits (`date +$f`).
                Role::Pattern if !a.literal => u.reads.push((*a).clone()),
                _ if a.may_split() => u.reads.push((*a).clone()),
                Role::Write => u.write((*a).clone(), program.label),
                Role::Run => u.run(format!("{name} runs its operand")),
                Role::Data | Role::Pattern => {}
            }
        }
        if taken < place.min {
            break;
        }
    }
    let extra: Vec<&Arg> = rest.collect();
    if !extra.is_empty() {
        for a in &extra {
            u.reads.push((*a).clone());
        }
        u.not_read_only(format!(
            "{name} takes no operand like {} (by the program table)",
            extra[0].raw
        ));
    }
}

/// Whether a bundle of short options (`-To`) holds one that takes a value
/// and is not last or has letters after it.
fn bundles_a_value(args: &[Arg], options: &Options) -> bool {
    args.iter().any(|a| {
        let v = a.value.as_str();
        v.starts_with('-')
            && !v.starts_with("--")
            && v.len() > 2
            && v[1..].chars().any(|c| {
                options
                    .opts
                    .iter()
                    .any(|o| o.shorts.contains(&c) && o.takes != options::Takes::Nothing)
            })
    })
}

/// Whether a simple command (its literal words) is read-only by the table.
pub(crate) fn is_read_only(argv: &[Arg]) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    let Some(name) = first.exact() else {
        return false;
    };
    if name.contains('/') {
        return false;
    }
    let u = understand(name, &argv[1..]);
    u.read_only && u.runs.is_none() && u.writes.is_empty()
}

/// Every word that may name a path: operands, `--name=value` values, an
/// attached short-option value with a `/` in it (`-I/usr/include`), and
/// any word the analysis cannot see.
fn path_words(args: &[Arg]) -> Vec<Arg> {
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
    path_words(args)
        .into_iter()
        .filter_map(|a| a.exact().map(str::to_owned))
        .collect()
}

/// Every name of a read-only program's row (for the public list).
pub(crate) fn read_only_names() -> impl Iterator<Item = &'static str> {
    table::ROWS
        .iter()
        .filter(|r| r.kind == Kind::ReadOnly && r.global.is_none() && !r.names.contains(' '))
        .flat_map(|r| r.names.split('|'))
}

/// Every row (for the row test).
#[cfg(test)]
pub(crate) fn rows() -> &'static [Row] {
    table::ROWS
}

#[cfg(test)]
mod tests;
