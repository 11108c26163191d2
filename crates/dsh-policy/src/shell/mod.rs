//! Shell analysis: a command line → every simple command it runs, every file
//! it writes through a redirection (or `tee`, or `find -fprint`/`-delete`),
//! and every piece we cannot understand.
//!
//! Parsing is brush-parser's (the parser of the brush shell); this module
//! only walks its syntax tree. Nothing here runs or expands anything.

use crate::programs;
use crate::quick;
use crate::word::{is_plain_byte, Arg, Dirs, PathWord};

mod builtins;
mod text;
mod variables;
mod wrappers;

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::ParserOptions;
use builtins::{
    builtin_changes_the_shell, cd_target, join_dir, printf_sets_dangerous_variable, reads_a_stream,
    union_dirs, FOREIGN_SHELLS, SHELLS, SUBSCRIPT_COMMANDS,
};
use std::panic::AssertUnwindSafe;
use text::{
    arithmetic_part_expands, basename, brace_expand, ends_exec, evaluates_value,
    expands_unseen_value, flat, has_brace, has_glob, has_glob_or_brace, is_arithmetic_test,
    literal_starts, names_a_variable, plain_arithmetic, render, render_from,
    starts_with_literal_name, value_is_inert, MAX_BRACE_WORD, MAX_BRACE_WORDS, SHELL_CODE_BYTES,
};
use variables::{exported_variable_is_risky, is_startup_variable, shell_variable_is_risky};
use wrappers::{
    assignment_name, plain_word, strict_options, watch_command, with_positional, Skip, WatchUse,
    COMMAND, DOAS, EXEC, IONICE, NICE, NO_OPTIONS, SETSID, STDBUF, SUDO, TASKSET, TIME, TIMEOUT,
    XARGS,
};

/// Longest command line analysed; longer ones are asked about.
pub(crate) const MAX_COMMAND_BYTES: usize = 1 << 20;
/// Up to this nesting bound the parse runs on the caller's stack.
const INLINE_NESTING: usize = 24;
/// Beyond this nesting bound a command line is not analysed (asked about).
const MAX_NESTING: usize = 2_000;
/// Stack per unit of nesting bound on the analysis thread.
const STACK_PER_LEVEL: usize = 64 * 1024;
/// How deep `$(…)`, `bash -c`, `eval` and expansions may nest.
const MAX_DEPTH: usize = 64;
/// Work the parser may do for one command line, in units of `parse_cost`
/// (about one per token, plus one per 16 bytes read, summed over every
/// text handed to it, nested ones included). brush-parser's tree takes up
/// to about 1 KiB and a few microseconds per token, so a 1 MiB command line
/// of short words would take hundreds of MiB; within the budget a decision
/// stays near 20 ms and 20 MiB. Past it the command line is asked about
/// whole, and its text is checked against deny and ask rules from every
/// word start.
const PARSE_BUDGET: usize = 24_000;

/// What a command line does, as far as policy is concerned.
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    /// In source order (substitutions before the command that uses them).
    pub parts: Vec<Part>,
}

/// One thing the policy decides on.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// A simple command.
    Command(CommandPart),
    /// A file written.
    Write(FilePart),
    /// A file read by a redirection (`< file`).
    Read(FilePart),
    /// Something we cannot analyse: asked about, never allowed.
    Opaque(OpaquePart),
}

/// A simple command.
#[derive(Debug, Clone)]
pub(crate) struct CommandPart {
    /// The command with assignments and wrappers looked through.
    pub text: String,
    /// Forms checked from their start against deny and ask rules besides
    /// `written`: the privileged form an allow rule must match.
    pub views: Vec<String>,
    /// The command as written (leading assignments, wrappers and all), in
    /// normal form. Deny and ask rules are checked from every word start up
    /// to `name_end`, the end of the command's name: each step of looking
    /// through wrappers, and the basename of a path (`/bin/rm` → `rm`).
    pub written: String,
    /// See `written`.
    pub name_end: usize,
    /// For a command not known to take only data as arguments: the
    /// arguments' values, space-separated. Deny and ask rules are checked
    /// from every word start in it, since the command may run them
    /// (`flock L rm x`, `ssh host 'rm x'`).
    pub arguments: Option<String>,
    /// The form an allow rule must match, or `None` when the command needs
    /// no allow of its own (`bash -c '…'`, `eval '…'`, `tee`: what they run
    /// or write is decided as separate parts).
    pub allow: Option<String>,
    /// Read-only by the plan-mode list.
    pub read_only: bool,
    /// Files it reads, by its operands (a read-only command's, `cp`'s
    /// sources, the script `source` runs).
    pub reads: Vec<PathWord>,
    /// It reads every file under the directories among `reads` (`grep -r`).
    pub reads_trees: bool,
    /// For a program whose operands are not known: its literal words, each
    /// of which may be a path it reads or writes (deny and ask rules look).
    pub guessed: Vec<String>,
    /// Where its relative paths are.
    pub dirs: Dirs,
    /// It does nothing but its reads and the writes recorded as its own
    /// write parts (`mkdir`, `cp`, `rm`, `sed -i`): `acceptEdits` allows it
    /// when they are.
    pub edits_only: bool,
    /// Found in a string another program may run as code (`ssh host '…'`):
    /// only deny and ask rules apply; the program itself is decided as
    /// its own part.
    pub maybe: bool,
    /// What the policy cannot see into (a script, an interpreter's code),
    /// for the reason given to the user.
    pub note: Option<&'static str>,
}

/// A file a command writes, or a redirection reads.
#[derive(Debug, Clone)]
pub(crate) struct FilePart {
    pub path: PathWord,
    /// How it is read or written (`<`, `>`, `>>`, `tee`, `cp`, …).
    pub op: &'static str,
    /// Found in a string another program may run (see [`CommandPart::maybe`]):
    /// only deny rules apply.
    pub maybe: bool,
    /// Where a relative path is.
    pub dirs: Dirs,
    /// The name is removed (`rm`, `rmdir`, `mv`'s source): a symbolic link
    /// there is not followed.
    pub removes: bool,
    /// For what a file command (`mkdir`, `cp`, `rm`, …) writes: the form
    /// of that command an allow rule must match. A `Bash(…)` allow rule
    /// for the command then covers its writes, as it would in Claude Code
    /// (deny and ask `Edit` rules still apply).
    pub by: Option<String>,
}

/// Something we cannot analyse.
#[derive(Debug, Clone)]
pub(crate) struct OpaquePart {
    /// The text in question.
    pub text: String,
    /// Texts checked against deny and ask rules from every word start
    /// (best effort: the denied command anywhere in them counts).
    pub views: Vec<String>,
    /// Why it cannot be analysed.
    pub why: String,
}

/// Analyses a command line.
pub(crate) fn analyze(command: &str) -> Analysis {
    if command.len() > MAX_COMMAND_BYTES {
        return opaque_only(command, "the command is too long to analyse");
    }
    if has_oversized_fd_number(command) {
        return opaque_only(command, "a redirection names an out-of-range descriptor");
    }
    if parse_cost(command) > PARSE_BUDGET {
        return too_large(command);
    }
    let bound = nesting_bound(command);
    if bound <= INLINE_NESTING {
        return analyze_here(command);
    }
    if bound > MAX_NESTING {
        return opaque_only(command, "the command is nested too deeply to analyse");
    }
    // Deeply nested input: parse (and drop the tree) on a thread whose stack
    // grows with the nesting, so no input can overflow the caller's stack.
    let owned = command.to_owned();
    let stack = (4 << 20) + bound.saturating_mul(STACK_PER_LEVEL);
    let spawned = std::thread::Builder::new()
        .name("dsh-policy-parse".into())
        .stack_size(stack)
        .spawn(move || analyze_here(&owned));
    match spawned.map(|h| h.join()) {
        Ok(Ok(analysis)) => analysis,
        _ => opaque_only(command, "the parser failed on it"),
    }
}

fn analyze_here(command: &str) -> Analysis {
    analyze_with(command, true)
}

/// The analysis with brush-parser only (no [`quick`] path), for the test
/// that both parse alike.
#[cfg(test)]
pub(crate) fn analyze_without_quick(command: &str) -> Analysis {
    analyze_with(command, false)
}

fn analyze_with(command: &str, quick: bool) -> Analysis {
    let mut analyzer = Analyzer {
        out: Analysis::default(),
        quick,
        depth: 0,
        options: ParserOptions::default(),
        maybe: 0,
        dynamic_value: None,
        evaluates_names: None,
        budget: PARSE_BUDGET,
        exhausted: false,
        dirs: Some(vec![String::new()]),
        last_cd: None,
        loops: 0,
        // `CDPATH` sends `cd name` elsewhere: with it in the command line,
        // no `cd` is followed.
        cdpath: command.contains("CDPATH"),
    };
    analyzer.script(command);
    if analyzer.exhausted {
        return too_large(command);
    }
    if let (Some(value), Some(site)) = (&analyzer.dynamic_value, &analyzer.evaluates_names) {
        // Bash evaluates a variable's value as code in arithmetic, `${!x}`
        // and `${x@P}`; a value the analysis cannot see may hold code.
        let text = format!("{value} … {site}");
        analyzer.opaque(
            &text,
            "a variable gets a value the analysis cannot see, and the command line evaluates variables as code (arithmetic, ${!x}, ${x@P})",
        );
    }
    analyzer.out
}

fn too_large(command: &str) -> Analysis {
    let why = format!(
        "the command line is too large to analyse in full (the parser's budget is about {} words and operators)",
        PARSE_BUDGET
    );
    opaque_only(command, &why)
}

/// What parsing `text` costs against `PARSE_BUDGET`: an upper bound on the
/// tokens bash's grammar can make of it (a token starts at an operator or
/// quoting character, or at a word after a blank), plus one unit per 16
/// bytes, so re-reading the same long text at every nesting level is paid.
fn parse_cost(text: &str) -> usize {
    let mut tokens = 0usize;
    let mut in_word = false;
    for b in text.bytes() {
        match b {
            b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' | b'`' | b'$' | b'"' | b'\'' | b'\\'
            | b'{' | b'}' | b'\n' => {
                tokens += 1;
                in_word = false;
            }
            b' ' | b'\t' => in_word = false,
            _ if !in_word => {
                tokens += 1;
                in_word = true;
            }
            _ => {}
        }
    }
    tokens + text.len() / 16
}

fn opaque_only(command: &str, why: &str) -> Analysis {
    Analysis {
        parts: vec![Part::Opaque(OpaquePart {
            text: command.to_owned(),
            views: vec![crate::rule::normalise_space(command)],
            why: why.to_owned(),
        })],
    }
}

/// An upper bound on how deeply the parser could recurse: every nesting
/// construct needs an opening character or a reserved word, so counting them
/// all (quoted or not) can only over-estimate.
fn nesting_bound(s: &str) -> usize {
    let mut n = s
        .bytes()
        .filter(|b| matches!(b, b'(' | b'{' | b'`' | b'[' | b'!'))
        .count();
    for w in s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if matches!(
            w,
            "if" | "while" | "until" | "for" | "select" | "case" | "coproc" | "function" | "time"
        ) {
            n += 1;
        }
    }
    if s.contains("[[") {
        // `[[ a && b && … ]]` builds a nested expression tree.
        n += s.matches("&&").count() + s.matches("||").count();
    }
    n
}

/// A run of ten or more digits before `<` or `>` is an fd number the parser
/// cannot hold; refuse it before parsing.
fn has_oversized_fd_number(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut run = 0usize;
    for &b in bytes {
        if b.is_ascii_digit() {
            run += 1;
        } else {
            if run >= 10 && (b == b'<' || b == b'>') {
                return true;
            }
            run = 0;
        }
    }
    false
}

/// What looking through a command's wrappers found.
struct LookedThrough {
    /// The wrapped command's first word.
    start: usize,
    /// A wrapper or an assignment gives it privileges (`sudo`, `LD_PRELOAD=`).
    privileged: bool,
    /// The privileges as written, for the form an allow rule must match.
    priv_prefix: Vec<String>,
    /// The words name nothing to run (`command -v rm`, `env`).
    runs_nothing: bool,
}

/// Where a command's standard input comes from, when a shell may read a script from it.
#[derive(Debug, Clone)]
enum Stdin {
    /// A literal here-document or here-string.
    Script(String),
    /// Something else (a file, an expanded here-document).
    Unknown,
}

/// A script being walked: its text, and how to find a span of it (the
/// parser's positions count characters).
struct Src<'a> {
    text: &'a str,
    /// The byte offset of every character, for a text that is not ASCII
    /// and may hold arithmetic (the only place spans are needed).
    offsets: Option<Vec<u32>>,
}

impl<'a> Src<'a> {
    fn new(text: &'a str) -> Self {
        let offsets = (!text.is_ascii() && text.contains("((")).then(|| {
            text.char_indices()
                .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
                .collect()
        });
        Src { text, offsets }
    }

    fn byte(&self, char_index: usize) -> usize {
        match &self.offsets {
            None => char_index.min(self.text.len()),
            Some(table) => table
                .get(char_index)
                .map_or(self.text.len(), |&b| b as usize),
        }
    }

    /// The text of a span (empty when the positions do not fit the text).
    fn span(&self, loc: &brush_parser::SourceSpan) -> &'a str {
        let start = self.byte(loc.start.index);
        let end = self.byte(loc.end.index).max(start);
        self.text.get(start..end).unwrap_or("")
    }
}

/// How many wrappers of one simple command are looked through; past that
/// the command is unanalysable (deny rules still see into it).
const MAX_WRAPPERS: usize = 32;

struct Analyzer {
    out: Analysis,
    /// Plain command lines skip brush-parser ([`quick`]).
    quick: bool,
    depth: usize,
    options: ParserOptions,
    /// Above zero while walking a string another program may run as code.
    maybe: usize,
    /// An assignment whose value the analysis cannot see (an expansion,
    /// an ANSI-C escape, a command's output), as written.
    dynamic_value: Option<String>,
    /// A place where bash evaluates a variable's value as code: arithmetic
    /// naming a variable, `${!x}`, `${x@P}`, a non-literal subscript.
    evaluates_names: Option<String>,
    /// What is left of `PARSE_BUDGET`.
    budget: usize,
    /// Set when a parse would have gone past the budget; the whole command
    /// line is then unanalysable.
    exhausted: bool,
    /// Where relative paths are at this point of the walk.
    dirs: Dirs,
    /// The directories the last `cd` moved to (without where it started),
    /// for `cd x && …`, where what follows runs only if it did move.
    last_cd: Option<Vec<String>>,
    /// Above zero inside a loop, where a `cd` may run many times.
    loops: usize,
    /// The command line mentions `CDPATH`.
    cdpath: bool,
}

/// How many directories a command line's `cd`s may leave possible before
/// the analysis stops following them.
const MAX_DIRS: usize = 16;

impl Analyzer {
    /// Pays for parsing `text`; `false` (and the analysis marked
    /// exhausted) when the budget cannot.
    fn afford(&mut self, text: &str) -> bool {
        let cost = parse_cost(text);
        if self.exhausted || cost > self.budget {
            self.exhausted = true;
            return false;
        }
        self.budget -= cost;
        true
    }

    /// Records a part; inside a string another program may run, it only
    /// counts for deny and ask rules.
    fn push(&mut self, mut part: Part) {
        if self.maybe > 0 {
            match &mut part {
                Part::Command(c) => c.maybe = true,
                Part::Write(w) | Part::Read(w) => w.maybe = true,
                // The string may not be shell code at all (`python3 -c
                // 'print(1)'`); the program's own part already has every
                // word of it checked against deny and ask rules.
                Part::Opaque(_) => return,
            }
        }
        self.out.parts.push(part);
    }

    fn opaque(&mut self, text: &str, why: impl Into<String>) {
        self.push(Part::Opaque(OpaquePart {
            text: text.to_owned(),
            views: vec![crate::rule::normalise_space(text)],
            why: why.into(),
        }));
    }

    /// Enters one level of nesting; `false` (and an opaque part) when too deep.
    fn enter(&mut self, text: &str) -> bool {
        if self.depth >= MAX_DEPTH {
            self.opaque(text, "nested too deeply to analyse");
            return false;
        }
        self.depth += 1;
        true
    }

    /// Parses and walks a script.
    fn script(&mut self, src: &str) {
        if !self.afford(src) || !self.enter(src) {
            return;
        }
        let options = &self.options;
        let quick = if self.quick { quick::parse(src) } else { None };
        let parsed = match quick {
            Some(program) => Ok(Ok(program)),
            None => std::panic::catch_unwind(AssertUnwindSafe(|| {
                brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), options)
                    .parse_program()
            })),
        };
        match parsed {
            Ok(Ok(program)) => {
                let source = Src::new(src);
                for list in &program.complete_commands {
                    self.list(list, &source);
                }
            }
            Ok(Err(err)) => self.opaque(src, format!("bash cannot parse it ({err})")),
            Err(_) => self.opaque(src, "the parser failed on it"),
        }
        self.depth -= 1;
    }

    /// Walks a string that a program we do not know may run as shell code
    /// (`ssh host 'rm x'`, `tmux new 'rm x'`): what it finds counts only
    /// for deny and ask rules.
    fn maybe_script(&mut self, text: &str) {
        self.maybe += 1;
        let dirs = self.dirs.clone();
        self.script(text);
        self.dirs = dirs;
        self.maybe -= 1;
    }

    fn list(&mut self, list: &ast::CompoundList, src: &Src) {
        for item in &list.0 {
            let and_or = &item.0;
            let before = self.dirs.clone();
            self.last_cd = None;
            self.pipeline(&and_or.first, src);
            // `cd x && a && b`: a and b run only where cd moved to. After
            // the list, either may be the current directory.
            let moved = self.last_cd.take().filter(|_| {
                !and_or.additional.is_empty()
                    && and_or
                        .additional
                        .iter()
                        .all(|n| matches!(n, ast::AndOr::And(_)))
                    && !and_or.first.bang
                    && matches!(and_or.first.seq.as_slice(), [ast::Command::Simple(_)])
            });
            let refined = moved.is_some() && self.dirs.is_some();
            if refined {
                self.dirs = moved;
            }
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, src),
                }
            }
            if refined {
                self.dirs = union_dirs(&before, &self.dirs);
            }
        }
    }

    /// What a `cd` to `target` (`None`: a place the analysis cannot
    /// know) leaves possible: where it started (it may fail, or run in a
    /// subshell) and where it goes.
    fn change_dir(&mut self, target: Option<String>) {
        self.last_cd = None;
        let (Some(target), Some(current), 0, false) =
            (target, self.dirs.as_ref(), self.loops, self.cdpath)
        else {
            self.dirs = None;
            return;
        };
        let moved: Vec<String> = current.iter().map(|d| join_dir(d, &target)).collect();
        let all = union_dirs(&self.dirs, &Some(moved.clone()));
        self.dirs = all.filter(|d| d.len() <= MAX_DIRS);
        if self.dirs.is_some() {
            self.last_cd = Some(moved);
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, src: &Src) {
        for command in &pipeline.seq {
            self.command_node(command, src);
        }
    }

    fn command_node(&mut self, command: &ast::Command, src: &Src) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, src),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound, src);
                self.redirect_list(redirects.as_ref(), src);
            }
            ast::Command::Function(def) => {
                // A function can take the name of any command (`ls() { rm
                // …; }`), and runs wherever and however often it is
                // called: the line is not analysable. Its body is still
                // walked, for deny and ask rules only.
                let name = def.fname.value.clone();
                self.opaque(
                    &format!("{name}() {{ … }}"),
                    "it defines a function, which can replace any command and runs wherever it is called",
                );
                let dirs = self.dirs.take();
                self.maybe += 1;
                self.compound(&def.body.0, src);
                self.redirect_list(def.body.1.as_ref(), src);
                self.maybe -= 1;
                self.dirs = dirs;
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr);
                self.redirect_list(redirects.as_ref(), src);
            }
        }
    }

    fn redirect_list(&mut self, redirects: Option<&ast::RedirectList>, src: &Src) {
        if let Some(list) = redirects {
            let mut stdin = None;
            for r in &list.0 {
                self.redirect(r, &mut stdin, src);
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, src: &Src) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => {
                let exprs = [a.expr.value.as_str()];
                if !plain_arithmetic(src.span(&a.loc), "", &exprs) {
                    self.opaque(
                        &span_text(src, &a.loc),
                        "arithmetic can run code, or it is not really arithmetic",
                    );
                }
                self.arithmetic(&a.expr.value);
            }
            C::ArithmeticForClause(f) => {
                let exprs: Vec<&str> = [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                    .map(|e| e.value.as_str())
                    .collect();
                if !plain_arithmetic(src.span(&f.loc), "for", &exprs) {
                    self.opaque(
                        &span_text(src, &f.loc),
                        "arithmetic can run code, or it is not really arithmetic",
                    );
                }
                for e in exprs {
                    self.arithmetic(e);
                }
                self.loop_body(&f.body.list, src);
            }
            C::BraceGroup(b) => self.list(&b.list, src),
            C::Subshell(s) => self.list(&s.list, src),
            C::ForClause(f) => {
                if shell_variable_is_risky(&f.variable_name)
                    || is_startup_variable(&f.variable_name)
                {
                    self.opaque(
                        &format!("for {} in …", f.variable_name),
                        "the loop sets a variable that changes what later commands run or where they read",
                    );
                }
                let mut dynamic = false;
                for w in f.values.iter().flatten() {
                    let arg = self.word(&w.value);
                    dynamic |= !arg.literal || arg.pattern || !value_is_inert(&arg.value);
                }
                if dynamic {
                    // The loop variable takes values the analysis cannot see.
                    self.note_dynamic_value(&format!("for {} in …", f.variable_name));
                }
                self.loop_body(&f.body.list, src);
            }
            C::CaseClause(c) => {
                self.word(&c.value.value);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd, src);
                    }
                }
            }
            C::IfClause(i) => {
                self.list(&i.condition, src);
                self.list(&i.then, src);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, src);
                    }
                    self.list(&e.body, src);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.loops += 1;
                self.list(&w.0, src);
                self.list(&w.1.list, src);
                self.loops -= 1;
            }
            C::Coprocess(c) => self.command_node(&c.body, src),
        }
    }

    fn loop_body(&mut self, body: &ast::CompoundList, src: &Src) {
        self.loops += 1;
        self.list(body, src);
        self.loops -= 1;
    }

    fn note_dynamic_value(&mut self, text: &str) {
        if self.dynamic_value.is_none() {
            self.dynamic_value = Some(text.to_owned());
        }
    }

    fn note_evaluation(&mut self, text: &str) {
        if self.evaluates_names.is_none() {
            self.evaluates_names = Some(text.to_owned());
        }
    }

    /// An operand that bash may evaluate as an array subscript (`a[$(…)]`)
    /// runs the code in it: unanalysable.
    fn subscript_code(&mut self, raw: &str) -> bool {
        if raw.contains('[') && raw.contains(['$', '`', '\\']) {
            self.opaque(raw, "an array subscript in it can run code");
            return true;
        }
        false
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        // An explicit stack: `[[ a && b && … ]]` may be long.
        let mut stack = vec![expr];
        while let Some(e) = stack.pop() {
            match e {
                E::And(a, b) | E::Or(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                E::Not(a) | E::Parenthesized(a) => stack.push(a),
                E::UnaryTest(op, w) => {
                    let arg = self.word(&w.value);
                    self.subscript_code(&w.value);
                    if matches!(
                        op,
                        ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                            | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                    ) && !arg.literal
                    {
                        self.opaque(
                            &w.value,
                            "-v evaluates the subscript of a name the analysis cannot see, which can run code",
                        );
                    }
                }
                E::BinaryTest(op, a, b) => {
                    self.word(&a.value);
                    self.word(&b.value);
                    self.subscript_code(&a.value);
                    self.subscript_code(&b.value);
                    if is_arithmetic_test(op)
                        && (expands_unseen_value(&a.value) || expands_unseen_value(&b.value))
                    {
                        self.opaque(
                            &format!("[[ {} … {} ]]", a.value, b.value),
                            "an arithmetic comparison evaluates a value the analysis cannot see, which can run code stored in it",
                        );
                    }
                    if is_arithmetic_test(op) {
                        // `-eq` and friends evaluate both sides as arithmetic.
                        for w in [&a.value, &b.value] {
                            if names_a_variable(w) {
                                self.note_evaluation(&format!("[[ {} {} ]]", a.value, b.value));
                            }
                        }
                    }
                }
            }
        }
    }

    fn simple(&mut self, cmd: &ast::SimpleCommand, src: &Src) {
        let mut words: Vec<Arg> = Vec::new();
        let mut env: Vec<(String, String)> = Vec::new();
        let mut stdin: Option<Stdin> = None;
        let prefix = cmd.prefix.iter().flat_map(|p| p.0.iter());
        for item in prefix {
            self.item(item, &mut words, &mut env, &mut stdin, src);
        }
        if let Some(w) = &cmd.word_or_name {
            let arg = self.word(&w.value);
            words.push(arg);
        }
        let suffix = cmd.suffix.iter().flat_map(|s| s.0.iter());
        for item in suffix {
            self.item(item, &mut words, &mut env, &mut stdin, src);
        }
        let texts: Vec<String> = env.iter().map(|(_, text)| text.clone()).collect();
        if words.is_empty() {
            // Assignments or redirections alone: shell variables, exported
            // only when the environment already has them.
            if env.iter().any(|(name, _)| shell_variable_is_risky(name)) {
                self.opaque(
                    &texts.join(" "),
                    "it sets a variable that changes what later commands run",
                );
            }
            return;
        }
        // Assignments before a command are in its environment.
        let dangerous_env = env.iter().any(|(name, _)| exported_variable_is_risky(name));
        self.command(words, texts, dangerous_env, stdin);
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        words: &mut Vec<Arg>,
        env: &mut Vec<(String, String)>,
        stdin: &mut Option<Stdin>,
        src: &Src,
    ) {
        use ast::CommandPrefixOrSuffixItem as I;
        match item {
            I::IoRedirect(r) => self.redirect(r, stdin, src),
            I::Word(w) => {
                let arg = self.word(&w.value);
                words.push(arg);
            }
            I::AssignmentWord(assignment, w) => {
                if words.is_empty() {
                    let name = self.assignment(assignment, &w.value);
                    env.push((name, w.value.clone()));
                } else {
                    // An argument that looks like an assignment (`export X=1`).
                    let arg = self.word(&w.value);
                    self.assignment_argument(&words[0], &arg);
                    words.push(arg);
                }
            }
            I::ProcessSubstitution(kind, sub) => {
                self.list(&sub.list, src);
                let text = match kind {
                    ast::ProcessSubstitutionKind::Read => "<(…)",
                    ast::ProcessSubstitutionKind::Write => ">(…)",
                };
                words.push(Arg::unknown(text));
            }
        }
    }

    /// An assignment given to `export`, `declare`, `local`, … as an argument.
    fn assignment_argument(&mut self, command: &Arg, arg: &Arg) {
        let Some(name) = assignment_name(arg) else {
            return;
        };
        // `declare -x` exports too; count `declare` and `typeset` as exporting.
        let exported = matches!(command.value.as_str(), "export" | "declare" | "typeset");
        if is_startup_variable(&name) {
            self.opaque(&arg.raw, "it sets a shell's startup file");
        } else if (exported && exported_variable_is_risky(&name)) || shell_variable_is_risky(&name)
        {
            self.opaque(
                &arg.raw,
                "it sets a variable that changes what later commands run",
            );
        }
        let value = arg.value.split_once('=').map_or("", |(_, v)| v);
        if arg.literal && (value.contains("$(") || value.contains('`')) {
            self.opaque(
                &arg.raw,
                "it stores code in a variable that arithmetic could run",
            );
        }
        if !arg.literal || !value_is_inert(value) {
            self.note_dynamic_value(&arg.raw);
        }
    }

    /// Walks an assignment's value; returns the variable's name. Notes a
    /// value the analysis cannot see, and refuses one that stores code.
    fn assignment(&mut self, assignment: &ast::Assignment, raw: &str) -> String {
        let name = match &assignment.name {
            ast::AssignmentName::VariableName(n) => n.as_str(),
            ast::AssignmentName::ArrayElementName(n, index) => {
                self.arithmetic(index);
                n.as_str()
            }
        };
        let mut values: Vec<Arg> = Vec::new();
        match &assignment.value {
            ast::AssignmentValue::Scalar(w) => values.push(self.word(&w.value)),
            ast::AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if let Some(k) = key {
                        self.word(&k.value);
                    }
                    values.push(self.word(&value.value));
                }
            }
        }
        if is_startup_variable(name) {
            self.opaque(raw, "it sets a shell's startup file");
        }
        let stores_code = values
            .iter()
            .any(|v| v.literal && (v.value.contains("$(") || v.value.contains('`')));
        if stores_code {
            self.opaque(
                raw,
                "it stores code in a variable that arithmetic could run",
            );
        }
        if values
            .iter()
            .any(|v| !v.literal || v.pattern || !value_is_inert(&v.value))
        {
            self.note_dynamic_value(raw);
        }
        name.to_owned()
    }

    /// Looks through wrappers, handles the commands that run other commands
    /// or write files, and records the simple command.
    fn command(
        &mut self,
        argv: Vec<Arg>,
        env: Vec<String>,
        dangerous_env: bool,
        stdin: Option<Stdin>,
    ) {
        let Some(mut argv) = self.expand_braces(argv, &env) else {
            return;
        };
        let privileged = dangerous_env;
        let env_text = env.join(" ");
        // The command as written, rendered once: every step of looking
        // through wrappers is a suffix of it, so no step renders again.
        let (written, offsets) = render_from(&env_text, &argv);
        // What makes the command privileged, as written (`sudo -u x`,
        // `LD_PRELOAD=y`): an allow rule must match it followed by the
        // looked-through command, so a wrapper's rule never allows it.
        let mut priv_prefix: Vec<String> = Vec::new();
        if dangerous_env {
            priv_prefix.push(env_text.clone());
        }
        let Some(LookedThrough {
            start,
            privileged,
            priv_prefix,
            runs_nothing,
        }) = self.look_through(&mut argv, &written, privileged, priv_prefix)
        else {
            return;
        };
        let inner = &argv[start..];
        let Some(name) = inner[0].exact().map(str::to_owned) else {
            self.opaque_command(
                &written,
                &argv,
                start,
                "the command name is not a literal word",
            );
            return;
        };
        let base = basename(&name).to_owned();
        // The synthetic word xargs appends is not in `written`.
        let at = offsets.get(start).copied().unwrap_or(written.len());
        let text = if inner.last().is_some_and(|a| a.raw == "…" && !a.literal)
            && offsets.len() < argv.len()
        {
            format!("{} …", &written[at..])
        } else {
            written[at..].to_owned()
        };
        let name_end = at + inner[0].display().len();
        let mut views = Vec::new();
        let allow_form = if privileged {
            if priv_prefix.is_empty() {
                // Privileged in a way we did not record: only as written.
                written.clone()
            } else {
                format!("{} {}", priv_prefix.join(" "), text)
            }
        } else {
            text.clone()
        };
        if allow_form != text {
            views.push(allow_form.clone());
        }
        let mut allow = Some(allow_form);
        // What the program table knows of it: whether it only reads, what
        // files it reads and writes, what its options make it run.
        let understood = programs::understand(&base, &inner[1..]);
        let mut read_only = !privileged && !name.contains('/') && understood.read_only;
        let mut note = None;
        if SUBSCRIPT_COMMANDS.contains(&base.as_str())
            && inner[1..]
                .iter()
                .any(|a| a.raw.contains('[') && a.raw.contains(['$', '`', '\\']))
        {
            self.opaque_command(
                &written,
                &argv,
                start,
                "an array subscript in it can run code",
            );
            return;
        }
        if base == "printf" && printf_sets_dangerous_variable(&inner[1..]) {
            self.opaque_command(
                &written,
                &argv,
                start,
                "it sets a variable that changes what later commands run",
            );
            return;
        }
        if let Some(why) = self.reads_into_risky_variable(&base, &inner[1..]) {
            self.opaque_command(&written, &argv, start, why);
            return;
        }
        if let Some(why) = builtin_changes_the_shell(&base, &inner[1..]) {
            self.opaque_command(&written, &argv, start, why);
            return;
        }
        if let Some(why) = &understood.runs {
            self.opaque_command(&written, &argv, start, why);
            // A deny rule for the subcommand still sees it (`git -c x=y push`).
            if let Some(Part::Opaque(o)) = self.out.parts.last_mut() {
                o.views
                    .extend(understood.subcommand_views.iter().map(|v| render(v)));
            }
            return;
        }
        // What its options and scripts write, before the command itself.
        for w in understood.writes.iter().filter(|w| !w.own) {
            read_only = false;
            self.write_file(w.target.clone(), w.how, w.removes);
        }
        for view in &understood.subcommand_views {
            views.push(render(view));
        }
        if inner.iter().any(|a| !a.literal) {
            views.push(literal_starts(inner));
        }
        let mut precise = false;
        match base.as_str() {
            b if SHELLS.contains(&b) => match self.shell(inner, stdin.as_ref()) {
                ShellUse::Script => {
                    precise = true;
                    if !privileged {
                        allow = None;
                    }
                    read_only = !privileged;
                }
                ShellUse::File => note = Some(programs::SCRIPT_NOTE),
                ShellUse::Opaque(why) => {
                    self.opaque_command(&written, &argv, start, why);
                    return;
                }
            },
            b if FOREIGN_SHELLS.contains(&b)
                && inner
                    .iter()
                    .skip(1)
                    .any(|a| a.value.starts_with('-') && a.value.contains('c')) =>
            {
                self.opaque_command(
                    &written,
                    &argv,
                    start,
                    "it runs code in a shell we do not parse",
                );
                return;
            }
            "eval" => {
                let args = &inner[1..];
                if args.iter().all(|a| a.literal) {
                    let script: Vec<&str> = args.iter().map(|a| a.value.as_str()).collect();
                    self.script(&script.join(" "));
                    precise = true;
                    if !privileged {
                        allow = None;
                    }
                    read_only = !privileged;
                } else {
                    self.opaque_command(
                        &written,
                        &argv,
                        start,
                        "eval of a string that is not literal",
                    );
                    return;
                }
            }
            "trap" => {
                let args = &inner[1..];
                if let Some(first) = args.first() {
                    if !first.value.starts_with('-') && args.len() >= 2 {
                        // It runs later (after every command, for DEBUG),
                        // wherever the shell is then: what it does to the
                        // rest of the line is not followed.
                        if first.literal {
                            let dirs = self.dirs.take();
                            self.maybe_script(&first.value);
                            self.dirs = dirs;
                        }
                        self.opaque_command(
                            &written,
                            &argv,
                            start,
                            "trap sets code that runs later, around the rest of the line",
                        );
                        return;
                    }
                }
            }
            "find" => match self.find(inner) {
                Some(ro) => read_only &= ro,
                None => {
                    self.opaque_command(
                        &written,
                        &argv,
                        start,
                        "find with an expression word that is not a plain literal",
                    );
                    return;
                }
            },
            // What tee writes is decided as write parts.
            "tee" if !privileged => allow = None,
            // Inside another program's string, a `cd` moves nothing here.
            "cd" | "pushd" | "popd" if self.maybe == 0 => {
                // `HOME=/etc cd` goes where the assignment says.
                let target = if env.is_empty() && start == 0 {
                    cd_target(&base, &inner[1..])
                } else {
                    None
                };
                self.change_dir(target);
            }
            "source" | "."
                if inner
                    .get(1)
                    .is_some_and(|a| a.exact().is_none_or(reads_a_stream)) =>
            {
                self.opaque_command(
                    &written,
                    &argv,
                    start,
                    "it runs a script whose path is not literal",
                );
                return;
            }
            "source" | "." => note = Some(programs::SCRIPT_NOTE),
            "alias" if inner.iter().skip(1).any(|a| a.value.contains('=')) => {
                self.opaque_command(
                    &written,
                    &argv,
                    start,
                    "it defines an alias, which can change what later commands run",
                );
                return;
            }
            "hash"
                if inner
                    .iter()
                    .skip(1)
                    .any(|a| a.value.starts_with('-') && a.value.contains('p')) =>
            {
                self.opaque_command(
                    &written,
                    &argv,
                    start,
                    "it sets the program a command name runs",
                );
                return;
            }
            "enable" if inner.len() > 1 => {
                self.opaque_command(
                    &written,
                    &argv,
                    start,
                    "it loads or disables shell builtins",
                );
                return;
            }
            "watch" => match watch_command(inner) {
                WatchUse::Script(script) => {
                    self.script(&script);
                    precise = true;
                    if !privileged {
                        allow = None;
                    }
                    read_only = !privileged;
                }
                WatchUse::Exec(words) => {
                    if self.enter(&text) {
                        self.command(words, Vec::new(), false, None);
                        self.depth -= 1;
                    }
                    precise = true;
                    if !privileged {
                        allow = None;
                    }
                    read_only = !privileged;
                }
                WatchUse::Nothing => {}
                WatchUse::Opaque => {
                    self.opaque_command(
                        &written,
                        &argv,
                        start,
                        "watch runs a command that is not literal",
                    );
                    return;
                }
            },
            _ => {}
        }
        if note.is_none() && understood.interpreter {
            note = Some(programs::INTERPRETER_NOTE);
        }
        let allow_by = allow.clone();
        let reads: Vec<PathWord> = understood.reads.iter().map(PathWord::of).collect();
        let mut guessed: Vec<String> = understood
            .maybe_reads
            .iter()
            .filter_map(|a| a.exact().map(str::to_owned))
            .collect();
        if !understood.files_known {
            match &understood.guesses {
                Some(words) => {
                    guessed.extend(words.iter().filter_map(|a| a.exact().map(str::to_owned)))
                }
                None => guessed.extend(programs::path_like_words(&inner[1..])),
            }
        }

        // A program not known to take only data may run what its arguments
        // say: deny and ask rules look for their commands in them.
        let arguments = if precise || runs_nothing || understood.data {
            None
        } else {
            for a in &inner[1..] {
                if a.literal && a.value.contains(SHELL_CODE_BYTES) {
                    self.maybe_script(&a.value);
                }
            }
            // What it reads on stdin may be commands too (`at now <<< 'rm x'`).
            if let Some(Stdin::Script(script)) = &stdin {
                self.maybe_script(script);
            }
            (inner.len() > 1).then(|| flat(&inner[1..]))
        };
        self.push(Part::Command(CommandPart {
            text,
            views,
            written,
            name_end,
            arguments,
            allow,
            read_only,
            reads,
            reads_trees: understood.reads_trees,
            guessed,
            dirs: self.dirs.clone(),
            edits_only: understood.edits_only && !privileged,
            maybe: false,
            note,
        }));
        // What a file command writes, after the command itself.
        for w in understood.writes.into_iter().filter(|w| w.own) {
            self.write_file(w.target, w.how, w.removes);
            if let Some(Part::Write(part)) = self.out.parts.last_mut() {
                part.by.clone_from(&allow_by);
            }
        }
    }

    /// Looks through the wrappers at the start of a simple command
    /// (`timeout 5`, `env X=1`, `sudo -u x`, `xargs -0`): where the wrapped
    /// command starts, whether a wrapper made it privileged (and how, as
    /// written), and whether the words run nothing (`command -v rm`).
    /// `None` when a wrapper cannot be looked through: the command is then
    /// recorded as unanalysable.
    fn look_through(
        &mut self,
        argv: &mut Vec<Arg>,
        written: &str,
        mut privileged: bool,
        mut priv_prefix: Vec<String>,
    ) -> Option<LookedThrough> {
        let mut start = 0usize;
        let mut wrappers = 0usize;
        let mut runs_nothing = false;
        loop {
            let Some(name) = argv[start].exact() else {
                self.opaque_command(
                    written,
                    argv,
                    start,
                    "the command name is not a literal word",
                );
                return None;
            };
            if wrappers == MAX_WRAPPERS {
                self.opaque_command(
                    written,
                    argv,
                    start,
                    "it has more wrappers than the analysis follows",
                );
                return None;
            }
            let rest = &argv[start + 1..];
            let skip = match basename(name) {
                "timeout" => with_positional(strict_options(rest, &TIMEOUT)),
                "nice" => strict_options(rest, &NICE).into(),
                "nohup" | "builtin" | "busybox" => strict_options(rest, &NO_OPTIONS).into(),
                "stdbuf" => strict_options(rest, &STDBUF).into(),
                "setsid" => strict_options(rest, &SETSID).into(),
                // `time -- cmd` runs cmd; the parser leaves the `--` as a word.
                "--" => Skip::Inner(0),
                "ionice" => match strict_options(rest, &IONICE) {
                    Ok((_, opts))
                        if opts.iter().any(|(n, _)| {
                            matches!(
                                n.as_str(),
                                "-p" | "-P" | "-u" | "--pid" | "--pgid" | "--uid"
                            )
                        }) =>
                    {
                        Skip::NoCommand
                    }
                    other => other.into(),
                },
                "taskset" => match strict_options(rest, &TASKSET) {
                    Ok((_, opts))
                        if opts
                            .iter()
                            .any(|(n, _)| matches!(n.as_str(), "-p" | "--pid")) =>
                    {
                        Skip::NoCommand
                    }
                    // Options, then the mask or CPU list, then the command.
                    other => with_positional(other),
                },
                "command" => match strict_options(rest, &COMMAND) {
                    Ok((_, opts))
                        if opts.iter().any(|(n, _)| matches!(n.as_str(), "-v" | "-V")) =>
                    {
                        Skip::NoCommand
                    }
                    other => other.into(),
                },
                "exec" => match strict_options(rest, &EXEC) {
                    // A program may act by the name it is run under
                    // (`git-branch`, `pkill` for `pgrep`): deny rules see
                    // it under that name.
                    Ok((i, opts)) if opts.iter().any(|(n, _)| n == "-a") => {
                        let name = opts
                            .iter()
                            .find_map(|(n, v)| (n == "-a").then(|| v.clone()).flatten())
                            .unwrap_or_default();
                        let after: &[Arg] = rest.get(i + 1..).unwrap_or(&[]);
                        let mut renamed = vec![Arg::plain(&name)];
                        renamed.extend(after.iter().cloned());
                        let mut views = vec![render(&renamed)];
                        if let Some(sub) = basename(&name).strip_prefix("git-") {
                            let mut git = vec![Arg::plain("git"), Arg::plain(sub)];
                            git.extend(after.iter().cloned());
                            views.push(render(&git));
                        }
                        self.opaque_command(
                            written,
                            argv,
                            start,
                            "exec -a runs the program under another name",
                        );
                        if let Some(Part::Opaque(o)) = self.out.parts.last_mut() {
                            o.views.extend(views);
                        }
                        return None;
                    }
                    other => other.into(),
                },
                "env" => self.skip_env(rest, &mut privileged),
                "xargs" => match strict_options(rest, &XARGS) {
                    Ok((_, opts))
                        if opts
                            .iter()
                            .any(|(n, _)| n.starts_with("--process-slot-var")) =>
                    {
                        Skip::Opaque("xargs sets a variable named in its options for what it runs")
                    }
                    Ok((i, opts)) => {
                        for (n, v) in &opts {
                            if let ("-a" | "--arg-file", Some(file)) = (n.as_str(), v) {
                                self.read(&Arg::plain(file), "xargs -a");
                            }
                        }
                        let replace = opts.iter().rev().find_map(|(n, v)| match n.as_str() {
                            "-I" | "-i" | "--replace" => {
                                Some(v.clone().unwrap_or_else(|| "{}".to_owned()))
                            }
                            _ => None,
                        });
                        let cmd_at = start + 1 + i;
                        match replace {
                            Some(r) if cmd_at < argv.len() => {
                                let cmd = &argv[cmd_at];
                                let shell_like = cmd.exact().is_some_and(|c| {
                                    let b = basename(c);
                                    SHELLS.contains(&b)
                                        || FOREIGN_SHELLS.contains(&b)
                                        || b == "eval"
                                });
                                if r.is_empty() || shell_like || cmd.value.contains(r.as_str()) {
                                    Skip::Opaque(
                                        "xargs puts its input into a shell or a command name",
                                    )
                                } else {
                                    // Words holding the replacement are not known.
                                    for w in &mut argv[cmd_at..] {
                                        if w.value.contains(r.as_str()) {
                                            w.literal = false;
                                        }
                                    }
                                    Skip::Inner(i)
                                }
                            }
                            Some(_) => Skip::NoCommand,
                            None => {
                                if cmd_at < argv.len() {
                                    // xargs appends words read from its input
                                    // to the command: arguments not known.
                                    argv.push(Arg::unknown("…"));
                                }
                                Skip::Inner(i)
                            }
                        }
                    }
                    Err(why) => Skip::Opaque(why),
                },
                "sudo" => {
                    privileged = true;
                    strict_options(rest, &SUDO).into()
                }
                "doas" => {
                    privileged = true;
                    strict_options(rest, &DOAS).into()
                }
                "time" => match strict_options(rest, &TIME) {
                    Ok((i, opts)) => {
                        for (n, v) in &opts {
                            if let ("-o" | "--output", Some(target)) = (n.as_str(), v) {
                                self.write(Arg::plain(target), "time -o");
                            }
                        }
                        Ok::<_, &'static str>((i, opts)).into()
                    }
                    Err(why) => Skip::Opaque(why),
                },
                _ => break,
            };
            let skip = match skip {
                Skip::Positional(n) => match argv.get(start + 1 + n) {
                    None => Skip::NoCommand,
                    Some(a) if plain_word(a).is_none() => {
                        Skip::Opaque("a wrapper's argument is not a plain literal word")
                    }
                    Some(_) => Skip::Inner(n + 1),
                },
                other => other,
            };
            match skip {
                Skip::Inner(n) if start + 1 + n < argv.len() => {
                    let wrapper = argv[start].exact().map(basename).unwrap_or("");
                    let own = &argv[start..start + 1 + n];
                    if matches!(wrapper, "sudo" | "doas") {
                        priv_prefix.push(render(own));
                    } else if wrapper == "env" {
                        let dangerous: Vec<Arg> = own[1..]
                            .iter()
                            .filter(|a| {
                                assignment_name(a).is_some_and(|n| exported_variable_is_risky(&n))
                            })
                            .cloned()
                            .collect();
                        if !dangerous.is_empty() {
                            priv_prefix.push(render(&dangerous));
                        }
                    }
                    start += 1 + n;
                    wrappers += 1;
                }
                Skip::Opaque(why) => {
                    self.opaque_command(written, argv, start, why);
                    return None;
                }
                Skip::NoCommand => {
                    // `command -v rm`, `env`: the words name nothing to run.
                    runs_nothing = true;
                    break;
                }
                Skip::Inner(_) | Skip::Positional(_) => break,
            }
        }
        Some(LookedThrough {
            start,
            privileged,
            priv_prefix,
            runs_nothing,
        })
    }

    /// Records a simple command we cannot analyse, from its words: deny and
    /// ask rules see the command as written and every word in it.
    fn opaque_command(&mut self, written: &str, argv: &[Arg], start: usize, why: &str) {
        let text = render(&argv[start..]);
        let mut views = vec![written.to_owned(), flat(argv)];
        // `git push$IFS`: the literal start of a word it cannot see may be
        // a whole word once bash has split it.
        if argv.iter().any(|a| !a.literal) {
            views.push(literal_starts(argv));
        }
        self.push(Part::Opaque(OpaquePart {
            text,
            views,
            why: why.to_owned(),
        }));
    }

    /// `read`, `mapfile`, `readarray`: variables get values from input (not
    /// known); into a variable that changes what runs, unanalysable.
    fn reads_into_risky_variable(&mut self, base: &str, args: &[Arg]) -> Option<&'static str> {
        if !matches!(base, "read" | "mapfile" | "readarray") {
            return None;
        }
        self.note_dynamic_value(base);
        let risky = args.iter().any(|a| {
            let v = a.value.as_str();
            if v.starts_with('-') {
                return false;
            }
            let name = v.split('[').next().unwrap_or(v);
            !a.literal || shell_variable_is_risky(name) || is_startup_variable(name)
        });
        risky.then_some("it reads input into a variable that changes what later commands run")
    }

    /// Brace expansion, as bash does it before anything else: `{rm,-rf,x}`
    /// is `rm -rf x`. A word whose expansion the analysis cannot prove (a
    /// quoted or expanded member, too many results) makes the command
    /// unanalysable; `None` then.
    fn expand_braces(&mut self, argv: Vec<Arg>, env: &[String]) -> Option<Vec<Arg>> {
        if !argv.iter().any(|a| a.brace) {
            return Some(argv);
        }
        let mut out: Vec<Arg> = Vec::with_capacity(argv.len() + 8);
        for a in &argv {
            if !a.brace {
                out.push(a.clone());
                continue;
            }
            let provable = a.literal
                && a.raw.len() <= MAX_BRACE_WORD
                && !a.raw.contains(['\'', '"', '\\', '$', '`']);
            let mut words = Vec::new();
            if !provable || !brace_expand(&a.raw, &mut words, MAX_BRACE_WORDS) {
                let written = format!("{} {}", env.join(" "), render(&argv));
                self.opaque_command(
                    written.trim_start(),
                    &argv,
                    0,
                    "brace expansion the analysis cannot follow (a quoted or expanded member, or too many words)",
                );
                // Deny rules see the members as the words they may become.
                if let Some(Part::Opaque(o)) = self.out.parts.last_mut() {
                    o.views.push(flat(&argv).replace(['{', '}', ','], " "));
                }
                return None;
            }
            for w in words {
                let pattern = has_glob(&w);
                out.push(Arg {
                    value: w.clone(),
                    raw: w,
                    literal: true,
                    pattern,
                    brace: false,
                });
            }
        }
        Some(out)
    }

    fn skip_env(&mut self, rest: &[Arg], privileged: &mut bool) -> Skip {
        const FLAGS: &[&str] = &[
            "-i",
            "--ignore-environment",
            "-0",
            "--null",
            "-v",
            "--debug",
            "--list-signal-handling",
            "--block-signal",
            "--default-signal",
            "--ignore-signal",
        ];
        let mut i = 0;
        while i < rest.len() {
            if assignment_name(&rest[i]).is_some() {
                break;
            }
            let Some(v) = plain_word(&rest[i]) else {
                return Skip::Opaque("env with an argument that is not a plain literal word");
            };
            if v == "--" {
                i += 1;
                break;
            }
            if v == "-" {
                // A lone `-` is `-i`, and ends the options.
                i += 1;
                break;
            }
            if !v.starts_with('-') {
                break;
            }
            if v == "-S" || v.starts_with("--split-string") || v.starts_with("-S") {
                return Skip::Opaque("env -S splits a string into a command");
            }
            if FLAGS.contains(&v) {
                i += 1;
                continue;
            }
            let (name, value) = match v {
                "-C" | "--chdir" | "-u" | "--unset" => {
                    let Some(value) = rest.get(i + 1) else {
                        return Skip::NoCommand;
                    };
                    if plain_word(value).is_none() {
                        return Skip::Opaque(
                            "env with an argument that is not a plain literal word",
                        );
                    }
                    i += 2;
                    (v, true)
                }
                _ => {
                    let attached = if v.starts_with("--") {
                        v.split_once('=').map(|(n, _)| n)
                    } else {
                        v.get(..2)
                    };
                    match attached {
                        Some(
                            n @ ("-C" | "--chdir" | "-u" | "--unset" | "--block-signal"
                            | "--default-signal" | "--ignore-signal"),
                        ) => {
                            i += 1;
                            (n, true)
                        }
                        _ => return Skip::Opaque("env with an option we do not know"),
                    }
                }
            };
            if value && matches!(name, "-C" | "--chdir") {
                self.change_dir(None);
            }
        }
        // NAME=VALUE assignments.
        while i < rest.len() {
            match assignment_name(&rest[i]) {
                Some(name) if is_startup_variable(&name) => {
                    return Skip::Opaque("it sets a shell's startup file");
                }
                Some(name) => {
                    if exported_variable_is_risky(&name) {
                        *privileged = true;
                    }
                    i += 1;
                }
                None => break,
            }
        }
        if i < rest.len() {
            Skip::Inner(i)
        } else {
            Skip::NoCommand
        }
    }

    fn shell(&mut self, argv: &[Arg], stdin: Option<&Stdin>) -> ShellUse {
        let mut i = 1;
        let mut command_mode = false;
        let mut stdin_mode = false;
        while i < argv.len() {
            let Some(v) = argv[i].exact() else {
                return ShellUse::Opaque("a shell option is not a literal word");
            };
            if v == "--" || v == "-" {
                i += 1;
                break;
            }
            if let Some(long) = v.strip_prefix("--") {
                if matches!(long, "version" | "help") {
                    return ShellUse::File;
                }
                if matches!(long, "rcfile" | "init-file") {
                    return ShellUse::Opaque("the shell reads a startup file");
                }
                i += 1;
                continue;
            }
            if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
                let flags = &v[1..];
                if v.starts_with('-') && flags.contains('i') {
                    return ShellUse::Opaque("an interactive shell reads startup files");
                }
                if v.starts_with('-') && flags.contains('c') {
                    command_mode = true;
                }
                if flags.contains('s') {
                    stdin_mode = true;
                }
                if flags.contains('O') {
                    return ShellUse::Opaque(
                        "the shell starts with shopt options that change how it expands globs or runs commands",
                    );
                }
                if flags.contains('o') {
                    let name = argv.get(i + 1).and_then(|a| a.exact()).unwrap_or("");
                    if !matches!(
                        name,
                        "errexit" | "nounset" | "xtrace" | "verbose" | "pipefail"
                    ) {
                        return ShellUse::Opaque(
                            "the shell starts with an option that changes how it expands words or runs commands",
                        );
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            break;
        }
        if command_mode {
            return match argv.get(i) {
                None => ShellUse::Opaque("-c without a script"),
                Some(a) if !a.literal => {
                    ShellUse::Opaque("the shell runs a script that is not a literal string")
                }
                Some(a) => {
                    self.script(&a.value);
                    ShellUse::Script
                }
            };
        }
        if i < argv.len() && !stdin_mode {
            match argv[i].exact() {
                None => {
                    return ShellUse::Opaque("the shell runs a script whose path is not literal")
                }
                Some(path) if reads_a_stream(path) => {
                    return ShellUse::Opaque("the shell reads a script from a stream")
                }
                Some(_) => return ShellUse::File,
            }
        }
        match stdin {
            Some(Stdin::Script(s)) => {
                let s = s.clone();
                self.script(&s);
                ShellUse::Script
            }
            _ => ShellUse::Opaque("the shell reads a script from standard input"),
        }
    }

    /// Walks `find`'s expression: `-exec CMD ;` commands become parts,
    /// `-delete` and `-fprint*` become writes. Returns whether it is read-only.
    fn find(&mut self, argv: &[Arg]) -> Option<bool> {
        let args = &argv[1..];
        // Every word must be a plain literal: an expansion could become an
        // action (`-delete`, `-exec`). A glob is fine when its first
        // character is literal and cannot start an operator or an option;
        // so is `~` or `~/path`.
        let mut k = 0;
        while k < args.len() {
            let a = &args[k];
            k += 1;
            if let Some("-exec" | "-execdir" | "-ok" | "-okdir") = plain_word(a) {
                // The command's words: each must have a known value (so the
                // terminator is where it seems to be).
                while k < args.len() {
                    let w = &args[k];
                    k += 1;
                    if w.exact().is_none() || w.raw.contains("$'") {
                        return None;
                    }
                    if ends_exec(args, k - 1) {
                        break;
                    }
                }
                continue;
            }
            if plain_word(a).is_some() {
                continue;
            }
            let r = a.raw.as_str();
            let safe_glob = a.literal
                && a.pattern
                && !r.contains(['{', '$', '`', '\'', '"', '\\'])
                && r.starts_with(|c: char| {
                    c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_')
                });
            let tilde = (r == "~" || r.starts_with("~/")) && r[1..].bytes().all(is_plain_byte);
            if !(safe_glob || tilde) {
                return None;
            }
        }
        let mut i = 0;
        // Leading options -H -L -P, -D debugopts, -Olevel.
        while i < args.len() {
            match args[i].value.as_str() {
                "-H" | "-L" | "-P" => i += 1,
                "-D" => i += 2,
                v if v.starts_with("-O") => i += 1,
                _ => break,
            }
        }
        let mut roots: Vec<Arg> = Vec::new();
        while i < args.len() {
            let v = args[i].value.as_str();
            if v.starts_with('-') || matches!(v, "(" | ")" | "!" | ",") {
                break;
            }
            roots.push(args[i].clone());
            i += 1;
        }
        if roots.is_empty() {
            roots.push(Arg::plain("."));
        }
        let mut read_only = true;
        while i < args.len() {
            let v = args[i].value.as_str();
            match v {
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    read_only = false;
                    let from = i + 1;
                    let mut end = from;
                    while end < args.len() && !ends_exec(args, end) {
                        end += 1;
                    }
                    if end > from {
                        let name = &args[from];
                        if name.exact().is_none_or(|n| n.contains("{}")) {
                            return None;
                        }
                        // Words holding `{}` get file names: not known.
                        let mut words = args[from..end].to_vec();
                        for w in &mut words {
                            if w.value.contains("{}") {
                                w.literal = false;
                            }
                        }
                        if self.enter(&words[0].value) {
                            self.command(words, Vec::new(), false, None);
                            self.depth -= 1;
                        }
                    }
                    i = end + 1;
                }
                "-delete" => {
                    read_only = false;
                    for root in roots.clone() {
                        self.write(root, "find -delete");
                    }
                    i += 1;
                }
                "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                    read_only = false;
                    if let Some(target) = args.get(i + 1) {
                        self.write(target.clone(), "find -fprint");
                    }
                    i += if v == "-fprintf" { 3 } else { 2 };
                }
                _ => i += 1,
            }
        }
        Some(read_only)
    }

    fn write(&mut self, target: Arg, op: &'static str) {
        self.write_file(target, op, false);
    }

    fn read(&mut self, target: &Arg, op: &'static str) {
        self.push(Part::Read(FilePart {
            path: PathWord::of(target),
            op,
            maybe: false,
            dirs: self.dirs.clone(),
            removes: false,
            by: None,
        }));
    }

    fn write_file(&mut self, target: Arg, op: &'static str, removes: bool) {
        if let Some(t) = target.exact() {
            if matches!(
                t,
                "/dev/null"
                    | "/dev/stdout"
                    | "/dev/stderr"
                    | "/dev/tty"
                    | "/dev/fd/1"
                    | "/dev/fd/2"
            ) {
                return;
            }
        }
        let path = match PathWord::of(&target) {
            // A write target is never a glob we expand.
            PathWord::Glob(_) => PathWord::Unknown(target.raw.clone()),
            other => other,
        };
        self.push(Part::Write(FilePart {
            path,
            op,
            maybe: false,
            dirs: self.dirs.clone(),
            removes,
            by: None,
        }));
    }

    fn redirect(&mut self, r: &ast::IoRedirect, stdin: &mut Option<Stdin>, src: &Src) {
        use ast::IoFileRedirectKind as K;
        use ast::IoFileRedirectTarget as T;
        match r {
            ast::IoRedirect::File(fd, kind, target) => {
                let input = matches!(kind, K::Read | K::ReadAndWrite | K::DuplicateInput);
                if fd.map_or(input, |f| f == 0) {
                    // The last redirection of descriptor 0 is what a
                    // shell reading its script from stdin reads.
                    *stdin = Some(Stdin::Unknown);
                }
                match target {
                    T::Filename(w) => {
                        let arg = self.word(&w.value);
                        if arg.value.starts_with("/dev/tcp/") || arg.value.starts_with("/dev/udp/")
                        {
                            self.opaque(&arg.raw, "the redirection opens a network connection");
                            return;
                        }
                        match kind {
                            K::Write => self.write(arg, ">"),
                            K::Append => self.write(arg, ">>"),
                            K::Clobber => self.write(arg, ">|"),
                            K::ReadAndWrite => {
                                self.read(&arg, "<>");
                                self.write(arg, "<>");
                            }
                            K::Read if !arg.literal && !starts_with_literal_name(&arg.raw) => {
                                self.opaque(
                                    &arg.raw,
                                    "it reads from a path the analysis cannot see, which could open a network connection (/dev/tcp/…)",
                                );
                            }
                            K::Read => self.read(&arg, "<"),
                            K::DuplicateInput | K::DuplicateOutput => {}
                        }
                    }
                    T::Fd(_) => {}
                    T::ProcessSubstitution(_, sub) => self.list(&sub.list, src),
                    T::Duplicate(w) => {
                        let arg = self.word(&w.value);
                        let is_fd = arg.literal && {
                            let v = arg.value.strip_suffix('-').unwrap_or(&arg.value);
                            v.is_empty() || v.bytes().all(|b| b.is_ascii_digit())
                        };
                        if matches!(kind, K::DuplicateOutput) && !is_fd {
                            // `>&file` writes stdout and stderr to file.
                            self.write(arg, ">&");
                        }
                    }
                }
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                let body = &doc.doc.value;
                // An expanding body is what bash makes of it (`\$` → `$`).
                let script = if doc.requires_expansion {
                    self.heredoc_body(body)
                } else {
                    Some(body.clone())
                };
                if fd.is_none_or(|f| f == 0) {
                    *stdin = Some(match script {
                        Some(s) => Stdin::Script(s),
                        None => Stdin::Unknown,
                    });
                }
            }
            ast::IoRedirect::HereString(fd, w) => {
                let arg = self.word(&w.value);
                if fd.is_none_or(|f| f == 0) {
                    *stdin = Some(if arg.literal {
                        Stdin::Script(arg.value)
                    } else {
                        Stdin::Unknown
                    });
                }
            }
            ast::IoRedirect::OutputAndError(w, append) => {
                let arg = self.word(&w.value);
                if arg.value.starts_with("/dev/tcp/") || arg.value.starts_with("/dev/udp/") {
                    self.opaque(&arg.raw, "the redirection opens a network connection");
                    return;
                }
                self.write(arg, if *append { "&>>" } else { "&>" });
            }
        }
    }

    /// Walks an expanding here-document body; returns what bash makes of
    /// it when that is known (no expansion left, escapes resolved).
    fn heredoc_body(&mut self, body: &str) -> Option<String> {
        if !body.contains(['$', '`', '\\']) {
            return Some(body.to_owned());
        }
        if body.contains("\\\n") {
            // Bash joins the lines first: `$\<newline>(…)` is a command
            // substitution the parser of the body does not see.
            self.opaque(
                body,
                "a backslash-newline in an expanding here-document can join text into a substitution",
            );
            self.maybe_script(&body.replace("\\\n", ""));
            return None;
        }
        if !self.afford(body) || !self.enter(body) {
            return None;
        }
        let value = match word::parse_heredoc(body, &self.options) {
            Ok(pieces) => {
                let mut acc = Acc::new();
                self.pieces(&pieces, body, true, &mut acc);
                acc.literal.then_some(acc.value)
            }
            Err(err) => {
                self.opaque(body, format!("cannot parse the here-document ({err})"));
                None
            }
        };
        self.depth -= 1;
        value
    }

    /// Walks an arithmetic expression for substitutions. An array
    /// subscript with an expansion or escape in it runs code (bash expands
    /// subscripts again when it evaluates them); a name's value is
    /// evaluated too.
    fn arithmetic(&mut self, expr: &str) {
        if names_a_variable(expr) {
            self.note_evaluation(expr);
        }
        if expands_unseen_value(expr) {
            // Bash evaluates the expanded text again: a value holding
            // `a[$(…)]` runs that command.
            self.opaque(
                expr,
                "arithmetic over a value the analysis cannot see (a substitution or an expansion) can run code stored in it",
            );
        }
        if expr.contains('[') && expr.contains(['$', '`', '\\']) {
            self.opaque(expr, "an array subscript in arithmetic can run code");
        }
        if !expr.contains(['$', '`']) {
            return;
        }
        if !self.afford(expr) || !self.enter(expr) {
            return;
        }
        match word::parse_heredoc(expr, &self.options) {
            Ok(pieces) => {
                let mut acc = Acc::new();
                self.pieces(&pieces, expr, true, &mut acc);
            }
            Err(err) => self.opaque(
                expr,
                format!("cannot parse the arithmetic expression ({err})"),
            ),
        }
        self.depth -= 1;
    }

    /// Walks the inside of `${…}` for substitutions (quotes taken literally,
    /// which can only find more, never fewer), and notes the forms that
    /// evaluate a value as code: `${!x}`, `${x@P}`, arithmetic subscripts
    /// and offsets.
    fn parameter(&mut self, text: &str) {
        let inner = text
            .strip_prefix("${")
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or("");
        if evaluates_value(inner) {
            self.note_evaluation(text);
        }
        if !inner.contains(['$', '`']) {
            return;
        }
        if inner.contains("$(") || inner.contains('`') || arithmetic_part_expands(inner) {
            // An offset or subscript is arithmetic over the substituted
            // text; other operators are walked, but how bash splits and
            // quotes inside `${…}` is not modelled closely enough to vouch
            // for what a substitution there makes.
            self.opaque(
                text,
                "a parameter expansion holds a substitution, or arithmetic over a value the analysis cannot see",
            );
        }
        if !self.afford(inner) || !self.enter(text) {
            return;
        }
        match word::parse_heredoc(inner, &self.options) {
            Ok(pieces) => {
                let mut acc = Acc::new();
                self.pieces(&pieces, inner, true, &mut acc);
            }
            Err(err) => self.opaque(text, format!("cannot parse the expansion ({err})")),
        }
        self.depth -= 1;
    }

    /// A word: its literal value when it has one; substitutions inside it
    /// are analysed as scripts of their own.
    fn word(&mut self, raw: &str) -> Arg {
        if !raw.is_empty() && raw.bytes().all(is_plain_byte) {
            return Arg::plain(raw);
        }
        let mut acc = Acc::new();
        let brace;
        if raw
            .bytes()
            .all(|b| is_plain_byte(b) || matches!(b, b'*' | b'?' | b'[' | b']' | b'{' | b'}'))
        {
            acc.value.push_str(raw);
            brace = has_brace(raw);
            acc.pattern = brace || has_glob(raw);
        } else {
            // The unquoted text with every other piece as one placeholder:
            // bash expands braces only where they and a separator are
            // unquoted (`{rm,"-rf",~}` is three words, `'{a,b}'` one).
            acc.skeleton = raw.contains('{').then(String::new);
            if !self.afford(raw) {
                return Arg::unknown(raw);
            }
            match word::parse(raw, &self.options) {
                Ok(pieces) => self.pieces(&pieces, raw, false, &mut acc),
                Err(err) => {
                    self.opaque(raw, format!("cannot parse the word ({err})"));
                    acc.literal = false;
                }
            }
            brace = acc.skeleton.as_deref().is_some_and(has_brace);
            acc.pattern |= brace;
        }
        Arg {
            value: acc.value,
            raw: raw.to_owned(),
            literal: acc.literal,
            pattern: acc.pattern,
            brace,
        }
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource], src: &str, quoted: bool, acc: &mut Acc) {
        for p in pieces {
            let slice = src.get(p.start_index..p.end_index).unwrap_or("");
            if let Some(skeleton) = &mut acc.skeleton {
                match &p.piece {
                    WordPiece::Text(s) if !quoted => skeleton.push_str(s),
                    _ => skeleton.push('Q'),
                }
            }
            match &p.piece {
                WordPiece::Text(s) => {
                    if !quoted && has_glob_or_brace(s) {
                        acc.pattern = true;
                    }
                    acc.value.push_str(s);
                }
                WordPiece::SingleQuotedText(s) => acc.value.push_str(s),
                WordPiece::AnsiCQuotedText(s) => {
                    if s.contains('\\') {
                        acc.literal = false;
                        acc.value.push_str(slice);
                    } else {
                        acc.value.push_str(s);
                    }
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, src, true, acc);
                }
                WordPiece::TildeExpansion(_) => {
                    acc.literal = false;
                    acc.value.push_str(slice);
                }
                WordPiece::ParameterExpansion(_) => {
                    acc.literal = false;
                    self.parameter(slice);
                    acc.value.push_str(slice);
                }
                WordPiece::CommandSubstitution(script)
                | WordPiece::BackquotedCommandSubstitution(script) => {
                    acc.literal = false;
                    self.script(script);
                    acc.value.push_str(slice);
                }
                WordPiece::EscapeSequence(s) => {
                    let escaped = s.strip_prefix('\\').unwrap_or(s);
                    if escaped != "\n" {
                        acc.value.push_str(escaped);
                    }
                }
                WordPiece::ArithmeticExpression(expr) => {
                    acc.literal = false;
                    self.arithmetic(&expr.value);
                    acc.value.push_str(slice);
                }
            }
        }
    }
}

/// The text of a span, for a message (`((…))` when it is empty).
fn span_text(src: &Src, loc: &brush_parser::SourceSpan) -> String {
    let text = src.span(loc);
    if text.trim().is_empty() {
        String::from("((…))")
    } else {
        text.to_owned()
    }
}

/// Accumulates a word's value while walking its pieces.
struct Acc {
    value: String,
    literal: bool,
    pattern: bool,
    /// The word's unquoted text, other pieces as placeholders, when it may
    /// hold a brace expansion.
    skeleton: Option<String>,
}

impl Acc {
    fn new() -> Self {
        Acc {
            value: String::new(),
            literal: true,
            pattern: false,
            skeleton: None,
        }
    }
}

enum ShellUse {
    /// A script we analysed (`-c '…'`, a literal here-document).
    Script,
    /// A script file: an ordinary command.
    File,
    /// We cannot tell what it runs.
    Opaque(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE_OPS: &[&str] = &["rm", "rm -r", "rmdir", "mkdir", "touch", "cp", "mv"];

    fn commands(src: &str) -> Vec<String> {
        analyze(src)
            .parts
            .into_iter()
            // What file commands (`rm`, `cp`) write is tested with them.
            .filter(|p| !matches!(p, Part::Write(w) if FILE_OPS.contains(&w.op)))
            .map(|p| match p {
                Part::Command(c) => c.text,
                Part::Write(w) => format!("write {} {}", w.op, w.path.text()),
                Part::Read(r) => format!("read {} {}", r.op, r.path.text()),
                Part::Opaque(o) => format!("opaque {}", o.text),
            })
            .collect()
    }

    #[test]
    fn splits_every_simple_command() {
        assert_eq!(commands("cd x && rm -rf y"), ["cd x", "rm -rf y"]);
        assert_eq!(
            commands("a; b | c || d & e\nf"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(
            commands("echo $(rm a) `rm b`"),
            ["rm a", "rm b", "echo $(rm a) `rm b`"]
        );
        assert_eq!(
            commands("diff <(ls) <(rm x)"),
            ["ls", "rm x", "diff <(…) <(…)"]
        );
        assert_eq!(commands("{ rm a; }"), ["rm a"]);
        assert_eq!(commands("( rm a )"), ["rm a"]);
        assert_eq!(
            commands("if a; then b; elif c; then d; else e; fi"),
            ["a", "b", "c", "d", "e"]
        );
        assert_eq!(
            commands("for i in $(seq 3); do rm $i; done"),
            ["seq 3", "rm $i"]
        );
        assert_eq!(commands("case $(x) in a) y;; esac"), ["x", "y"]);
        assert_eq!(
            commands("f() { rm x; }; f"),
            ["opaque f() { … }", "rm x", "f"]
        );
        assert_eq!(commands("while a; do b; done"), ["a", "b"]);
        assert_eq!(
            commands("echo ${x:-$(rm y)}"),
            ["opaque ${x:-$(rm y)}", "rm y", "echo ${x:-$(rm y)}"]
        );
        assert_eq!(
            commands("echo $(( $(rm z) + 1 ))"),
            ["opaque  $(rm z) + 1 ", "rm z", "echo $(( $(rm z) + 1 ))"]
        );
        assert_eq!(commands("[[ -f $(rm x) ]]"), ["rm x"]);
        assert_eq!(commands("x=$(rm y)"), ["rm y"]);
    }

    #[test]
    fn unquotes_and_looks_through() {
        assert_eq!(commands("'r'm \"-rf\" \\x"), ["rm -rf x"]);
        assert_eq!(commands("r\\\nm -rf x"), ["rm -rf x"]);
        assert_eq!(commands("FOO=1 timeout -s KILL 5 nice -n 3 rm x"), ["rm x"]);
        assert_eq!(
            commands("env -i A=1 nohup stdbuf -oL command rm x"),
            ["rm x"]
        );
        // xargs appends words read from its input.
        assert_eq!(commands("xargs -0 -n 1 rm -f"), ["rm -f …"]);
        assert_eq!(
            commands("bash -c 'ls; rm x'"),
            ["ls", "rm x", "bash -c 'ls; rm x'"]
        );
        assert_eq!(commands("sh -ec \"rm x\""), ["rm x", "sh -ec 'rm x'"]);
        assert_eq!(commands("eval 'rm x'"), ["rm x", "eval 'rm x'"]);
        assert_eq!(commands("command -v rm"), ["command -v rm"]);
        assert_eq!(
            commands("find . -name x -exec rm {} \\;"),
            ["rm {}", "find . -name x -exec rm {} ;"]
        );
    }

    #[test]
    fn writes() {
        assert_eq!(
            commands("echo a > out.txt 2>&1"),
            ["write > out.txt", "echo a"]
        );
        assert_eq!(commands("ls &>> log"), ["write &>> log", "ls"]);
        assert_eq!(commands("echo hi >| f"), ["write >| f", "echo hi"]);
        assert_eq!(commands("echo hi > /dev/null"), ["echo hi"]);
        assert_eq!(
            commands("echo x | tee -a a b"),
            ["echo x", "write tee a", "write tee b", "tee -a a b"]
        );
        assert_eq!(
            commands("find . -delete"),
            ["write find -delete .", "find . -delete"]
        );
        assert_eq!(
            commands("find /tmp -fprint out"),
            ["write find -fprint out", "find /tmp -fprint out"]
        );
        assert_eq!(commands("{ ls; } > out"), ["ls", "write > out"]);
    }

    #[test]
    fn opaque_things() {
        assert!(commands("$CMD arg")[0].starts_with("opaque"));
        assert!(commands("eval \"$x\"")[0].starts_with("opaque"));
        assert!(commands("bash -c \"$x\"")[0].starts_with("opaque"));
        assert!(commands("echo 'unterminated")[0].starts_with("opaque"));
        assert!(commands("curl x | bash")[1].starts_with("opaque"));
        // Brace expansion is followed where it is provable, refused where not.
        assert_eq!(commands("{rm,-rf,x}"), ["rm -rf x"]);
        assert!(commands("{rm,\"-rf\",~}")[0].starts_with("opaque"));
        assert!(commands("env -S 'rm x'")[0].starts_with("opaque"));
        assert!(commands("PATH=/tmp:$PATH")[0].starts_with("opaque"));
        assert!(commands("99999999999>x ls")[0].starts_with("opaque"));
        assert_eq!(commands("bash <<EOF\nrm x\nEOF\n"), ["rm x", "bash"]);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let deep = format!("{}x{}", "$(".repeat(500), ")".repeat(500));
        let a = analyze(&deep);
        assert!(a.parts.iter().any(|p| matches!(p, Part::Opaque(_))));
        let deeper = format!("{}x{}", "( ".repeat(5_000), " )".repeat(5_000));
        let a = analyze(&deeper);
        assert!(matches!(a.parts[0], Part::Opaque(_)));
        let ifs = format!("{}x{}", "if ".repeat(300), "; then :; fi".repeat(300));
        assert!(!analyze(&ifs).parts.is_empty());
    }
}
