//! What `sed` and `awk` scripts do besides reading input and printing.
//!
//! A rule such as `Bash(sed:*)` or `Bash(awk:*)` is meant to allow a text
//! filter, but both languages can run shell commands (sed's `e` command and
//! `s///e` flag; awk's `system()` and pipes) and write files (sed's `w`,
//! awk's `print > "file"`). [`sed_script`] and [`awk_program`] read the
//! script text, without running anything, and list those effects so the
//! caller can ask before such a script runs.
//!
//! Both analysers are conservative. They follow what the real programs do
//! when they read a script (GNU sed 4.8's `compile.c`; the gawk, mawk and
//! onetrue-awk lexers) rather than searching for substrings, so that the
//! letters `e` and `w` inside a regular expression or inserted text are not
//! mistaken for commands, and a command hidden inside something that only
//! looks like a regular expression is not missed. Whatever they cannot
//! follow exactly, including the places where awk implementations disagree
//! about how to read the program, becomes [`ScriptEffect::Unknown`]: an
//! analyser never guesses "harmless".
//!
//! Both work byte by byte. Every byte that matters to the syntax is ASCII,
//! and in UTF-8 an ASCII byte is never part of a longer character, so this
//! agrees with sed and awk in UTF-8 and single-byte locales. Neither
//! recurses, each byte is looked at a bounded number of times, and no input
//! makes them panic.

use std::collections::HashSet;

/// What a sed or awk script does beyond reading its input and printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScriptEffect {
    /// It writes this file (as written in the script; `/dev/stdout` and
    /// `/dev/stderr` are NOT reported).
    Writes(String),
    /// It runs shell code or another program (sed `e`, `s///e`; awk
    /// `system()`, pipes `|`, `|&`).
    RunsCode(&'static str),
    /// The analyser cannot tell what it does (treated by the caller as
    /// unanalysable): a construct it does not parse.
    Unknown(&'static str),
}

/// GNU sed script (the text of one -e argument or the first operand).
/// Returns every effect; empty = only reads and prints.
///
/// Each distinct effect is listed once, in the order first seen. A script
/// sed would reject ends with an `Unknown`, after the effects found before
/// the error (sed opens `w` files while it reads the script, so those are
/// created even when a later part is rejected).
pub(crate) fn sed_script(script: &str) -> Vec<ScriptEffect> {
    let mut sed = Sed {
        s: script.as_bytes(),
        pos: 0,
        effects: Effects::default(),
    };
    if let Err(why) = sed.program() {
        sed.effects.push(ScriptEffect::Unknown(why));
    }
    sed.effects.list
}

/// awk program text (POSIX awk, gawk, mawk). Returns every effect; empty =
/// only reads and prints.
///
/// Each distinct effect is listed once, in the order first seen. When the
/// text cannot be tokenised the analysis stops with an `Unknown`.
pub(crate) fn awk_program(program: &str) -> Vec<ScriptEffect> {
    let mut awk = Awk {
        s: program.as_bytes(),
        pos: 0,
        prev: Prev::Expr,
        cont: false,
        open: Vec::new(),
        parens: 0,
        ctrl_pending: false,
        print_base: None,
        effects: Effects::default(),
    };
    if let Err(why) = awk.program() {
        awk.effects.push(ScriptEffect::Unknown(why));
    }
    awk.effects.list
}

/// Effects in the order first seen, each once. File names are kept in a set
/// and the other effects apart, so that a script writing many files stays
/// linear.
#[derive(Default)]
struct Effects {
    list: Vec<ScriptEffect>,
    files: HashSet<String>,
    /// The `RunsCode` and `Unknown` effects seen: few distinct messages.
    others: Vec<ScriptEffect>,
}

impl Effects {
    fn push(&mut self, effect: ScriptEffect) {
        let new = match &effect {
            ScriptEffect::Writes(file) => self.files.insert(file.clone()),
            other if self.others.contains(other) => false,
            other => {
                self.others.push(other.clone());
                true
            }
        };
        if new {
            self.list.push(effect);
        }
    }

    /// A write, unless the file is one of the standard streams.
    fn write(&mut self, file: &[u8]) {
        if file != b"/dev/stdout" && file != b"/dev/stderr" {
            self.push(ScriptEffect::Writes(
                String::from_utf8_lossy(file).into_owned(),
            ));
        }
    }
}

type Parsed<T = ()> = Result<T, &'static str>;

// ---------------------------------------------------------------- sed ----

const SED_E_COMMAND: &str = "sed's e command runs a shell command";
const SED_E_FLAG: &str = "sed's s///e flag runs the pattern space as a shell command";

/// The kinds of sed address that matter to the checks sed makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Addr {
    Other,
    /// `+N` or `~N`: only allowed as the second address.
    Step,
}

/// A reader that mirrors GNU sed's `compile_program`: `next` is sed's
/// `inchar`, `back` its `savchar`.
struct Sed<'a> {
    s: &'a [u8],
    pos: usize,
    effects: Effects,
}

impl Sed<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    /// Un-reads `c`, which must be what the last `next` returned.
    fn back(&mut self, c: Option<u8>) {
        if c.is_some() {
            self.pos -= 1;
        }
    }

    /// The next character that is not a space or a tab.
    fn nonblank(&mut self) -> Option<u8> {
        loop {
            match self.next() {
                Some(b' ' | b'\t') => {}
                c => return c,
            }
        }
    }

    /// Digits starting with `first`; whether the number is non-zero.
    fn integer(&mut self, first: Option<u8>) -> bool {
        let mut c = first;
        let mut nonzero = false;
        while let Some(d @ b'0'..=b'9') = c {
            nonzero |= d != b'0';
            c = self.next();
        }
        self.back(c);
        nonzero
    }

    /// After a command: only `;`, a newline, `}`, `#` or the end may follow.
    fn end_of_command(&mut self) -> Parsed {
        match self.nonblank() {
            c @ Some(b'}' | b'#') => {
                self.back(c);
                Ok(())
            }
            None | Some(b'\n' | b';') => Ok(()),
            Some(_) => Err("extra characters after a sed command"),
        }
    }

    /// A label for `:`, `b`, `t`, `T` or `v`: it ends at white space, `;`,
    /// `}` or `#`. Returns whether it is empty.
    fn label(&mut self) -> bool {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        let start = self.pos;
        while !matches!(
            self.peek(),
            None | Some(b'\n' | b' ' | b'\t' | b';' | b'}' | b'#')
        ) {
            self.pos += 1;
        }
        self.pos == start
    }

    /// The file name of `r R w W` and `s///w`: everything to the end of the
    /// line, `;`, `}` and spaces included, no escapes. Returns where it is.
    fn filename(&mut self) -> Parsed<std::ops::Range<usize>> {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        let start = self.pos;
        while !matches!(self.peek(), None | Some(b'\n')) {
            self.pos += 1;
        }
        let end = self.pos;
        if self.peek() == Some(b'\n') {
            self.pos += 1;
        }
        if start == end {
            return Err("a sed r, R, w or W command without a file name");
        }
        Ok(start..end)
    }

    /// `w FILE`, `W FILE` or the `w FILE` flag of `s`.
    fn write(&mut self) -> Parsed {
        let name = self.filename()?;
        let s = self.s;
        self.effects.write(&s[name]);
        Ok(())
    }

    /// The text of `a i c e`: to the first newline not escaped by a
    /// backslash (`read_text_to_slash` and `read_text`). `ch` is the first
    /// non-blank character after the command letter.
    fn text(&mut self, ch: Option<u8>) -> Parsed {
        match ch {
            None => return Err("a sed a, c or i command without text"),
            // `a\`: the character after the backslash starts the text;
            // a newline there is the classic `a\` + newline form.
            Some(b'\\') => {
                if self.next().is_none() {
                    // sed continues the text in the next -e argument.
                    return Ok(());
                }
            }
            Some(_) => self.back(ch),
        }
        loop {
            match self.next() {
                None | Some(b'\n') => return Ok(()),
                Some(b'\\') => {
                    if self.next().is_none() {
                        return Ok(());
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// A bracket expression in a regular expression, after its `[`
    /// (`snarf_char_class`): returns the character that ended it, `]` when
    /// it is closed. A delimiter inside it does not end the regex.
    fn char_class(&mut self) -> Option<u8> {
        // 0 outside [: :], [. .], [= =]; 1 after their `[`; 2 inside;
        // 3 after the closing `:`, `.` or `=`.
        let mut state = 0u8;
        let mut delim = 0u8;
        let mut ch = self.next();
        if ch == Some(b'^') {
            ch = self.next();
        }
        if ch == Some(b']') {
            ch = self.next();
        }
        loop {
            match ch {
                None | Some(b'\n') => return ch,
                Some(c @ (b'.' | b':' | b'=')) => {
                    if state == 1 {
                        delim = c;
                        state = 2;
                        ch = self.next();
                        continue;
                    } else if state == 2 && c == delim {
                        state = 3;
                        ch = self.next();
                        continue;
                    }
                }
                Some(b'[') => {
                    if state == 0 {
                        state = 1;
                    }
                    ch = self.next();
                    continue;
                }
                Some(b']') => {
                    if state <= 1 {
                        return ch;
                    } else if state == 3 {
                        state = 0;
                    }
                }
                Some(_) => {}
            }
            state &= !1;
            ch = self.next();
        }
    }

    /// A regex or replacement up to the delimiter `slash` (`match_slash`).
    /// A backslash escapes any character, newline included; an unescaped
    /// newline ends the command unterminated.
    fn delimited(&mut self, slash: Option<u8>, regex: bool, unterminated: &'static str) -> Parsed {
        let Some(slash) = slash else {
            return Err(unterminated);
        };
        if !slash.is_ascii() {
            // GNU sed refuses it in UTF-8 locales; elsewhere the script
            // always fails later (a continuation byte follows).
            return Err("a sed delimiter that is not an ASCII character");
        }
        loop {
            match self.next() {
                None | Some(b'\n') => return Err(unterminated),
                Some(c) if c == slash => return Ok(()),
                Some(b'\\') => {
                    if self.next().is_none() {
                        return Err(unterminated);
                    }
                }
                Some(b'[') if regex => {
                    if self.char_class() != Some(b']') {
                        return Err(unterminated);
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// The flags after `s/re/rep/` (`mark_subst_opts`).
    fn substitute_flags(&mut self) -> Parsed {
        let (mut p, mut g, mut n) = (false, false, false);
        loop {
            match self.nonblank() {
                Some(b'i' | b'I' | b'm' | b'M') => {}
                Some(b'e') => self.effects.push(ScriptEffect::RunsCode(SED_E_FLAG)),
                Some(b'p') if !p => p = true,
                Some(b'g') if !g => g = true,
                Some(b'w') => return self.write(),
                Some(d @ b'0'..=b'9') if !n => {
                    n = true;
                    if !self.integer(Some(d)) {
                        return Err("a zero number flag on a sed s command");
                    }
                }
                c @ Some(b'}' | b'#') => {
                    self.back(c);
                    return Ok(());
                }
                None | Some(b'\n' | b';') => return Ok(()),
                Some(b'\r') if self.peek() == Some(b'\n') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => return Err("an unknown or repeated flag on a sed s command"),
            }
        }
    }

    /// One address starting with `ch` (`compile_address`), or `None` when
    /// `ch` does not start one (it is then the command).
    fn address(&mut self, ch: u8) -> Parsed<Option<Addr>> {
        match ch {
            b'/' | b'\\' => {
                let slash = if ch == b'\\' { self.next() } else { Some(b'/') };
                self.delimited(slash, true, "an unterminated sed address regex")?;
                loop {
                    match self.nonblank() {
                        Some(b'I' | b'M') => {}
                        c => {
                            self.back(c);
                            return Ok(Some(Addr::Other));
                        }
                    }
                }
            }
            b'0'..=b'9' => {
                self.integer(Some(ch));
                match self.nonblank() {
                    Some(b'~') => {
                        let c = self.nonblank();
                        self.integer(c);
                    }
                    c => self.back(c),
                }
                Ok(Some(Addr::Other))
            }
            b'+' | b'~' => {
                let c = self.nonblank();
                // A zero step is a null address, which sed accepts anywhere.
                Ok(Some(if self.integer(c) {
                    Addr::Step
                } else {
                    Addr::Other
                }))
            }
            b'$' => Ok(Some(Addr::Other)),
            _ => Ok(None),
        }
    }

    fn program(&mut self) -> Parsed {
        let mut depth = 0usize;
        loop {
            let mut ch = loop {
                match self.next() {
                    Some(b';' | b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') => {}
                    c => break c,
                }
            };
            let Some(first) = ch else { break };
            let mut addresses = 0;
            if let Some(a1) = self.address(first)? {
                if a1 == Addr::Step {
                    return Err("a sed +N or ~N address in first place");
                }
                addresses = 1;
                ch = self.nonblank();
                if ch == Some(b',') {
                    let c = self.nonblank();
                    match c {
                        Some(c) if self.address(c)?.is_some() => {}
                        _ => return Err("a sed address range without a second address"),
                    }
                    addresses = 2;
                    ch = self.nonblank();
                }
            }
            if ch == Some(b'!') {
                ch = self.nonblank();
                if ch == Some(b'!') {
                    return Err("more than one ! on a sed command");
                }
            }
            match ch {
                None => return Err("a sed address without a command"),
                Some(b'#') => {
                    if addresses > 0 {
                        return Err("a sed comment after an address");
                    }
                    while !matches!(self.next(), None | Some(b'\n')) {}
                }
                Some(b'v') => {
                    self.label();
                }
                Some(b'{') => depth += 1,
                Some(b'}') => {
                    if depth == 0 {
                        return Err("an unexpected } in a sed script");
                    }
                    if addresses > 0 {
                        return Err("an address on a sed }");
                    }
                    self.end_of_command()?;
                    depth -= 1;
                }
                Some(b'e') => {
                    self.effects.push(ScriptEffect::RunsCode(SED_E_COMMAND));
                    let c = self.nonblank();
                    if !matches!(c, None | Some(b'\n')) {
                        self.text(c)?;
                    }
                }
                Some(b'a' | b'i' | b'c') => {
                    let c = self.nonblank();
                    self.text(c)?;
                }
                Some(b':') => {
                    if addresses > 0 {
                        return Err("an address on a sed label");
                    }
                    if self.label() {
                        return Err("a sed : without a label");
                    }
                }
                Some(b'b' | b't' | b'T') => {
                    self.label();
                }
                Some(c @ (b'q' | b'Q' | b'l' | b'L')) => {
                    if addresses == 2 && matches!(c, b'q' | b'Q') {
                        return Err("two addresses on a sed q or Q command");
                    }
                    let c = self.nonblank();
                    if matches!(c, Some(b'0'..=b'9')) {
                        self.integer(c);
                    } else {
                        self.back(c);
                    }
                    self.end_of_command()?;
                }
                Some(
                    b'=' | b'd' | b'D' | b'F' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p'
                    | b'P' | b'z' | b'x',
                ) => self.end_of_command()?,
                // Reading a file is harmless.
                Some(b'r' | b'R') => {
                    self.filename()?;
                }
                Some(b'w' | b'W') => self.write()?,
                Some(b's') => {
                    const UNTERMINATED: &str = "an unterminated sed s command";
                    let slash = self.next();
                    self.delimited(slash, true, UNTERMINATED)?;
                    self.delimited(slash, false, UNTERMINATED)?;
                    self.substitute_flags()?;
                }
                Some(b'y') => {
                    const UNTERMINATED: &str = "an unterminated sed y command";
                    let slash = self.next();
                    self.delimited(slash, false, UNTERMINATED)?;
                    self.delimited(slash, false, UNTERMINATED)?;
                    self.end_of_command()?;
                }
                Some(_) => return Err("an unknown sed command"),
            }
        }
        if depth > 0 {
            return Err("an unmatched { in a sed script");
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- awk ----

const AWK_SYSTEM: &str = "awk's system() runs a shell command";
const AWK_PIPE: &str = "an awk pipe (|) runs a shell command";
const AWK_COPROCESS: &str = "gawk's |& runs a command as a coprocess";

// Where awk implementations read a `/` differently (gawk decides with its
// grammar, mawk by the previous token), or where it is a syntax error in
// some, the analyser does not pick one.
const AFTER_BUILTIN: &str =
    "a / after an awk built-in function name (division in gawk, a regex in mawk)";
const AFTER_INCREMENT: &str = "a / after ++ or -- (division in gawk, a regex in mawk)";
const AFTER_CONDITION: &str =
    "a / after the condition of if, while or for (a regex in gawk, division in mawk)";
const AFTER_NEWLINE_IN_PARENS: &str = "a / after a newline inside parentheses in awk";

/// Words after which a `/` starts a regex (they expect an expression or
/// begin a statement). `getline` is not one: after it `/` divides.
const AWK_KEYWORDS: &[&[u8]] = &[
    b"BEGIN",
    b"END",
    b"BEGINFILE",
    b"ENDFILE",
    b"function",
    b"func",
    b"if",
    b"else",
    b"while",
    b"for",
    b"do",
    b"break",
    b"continue",
    b"next",
    b"nextfile",
    b"exit",
    b"return",
    b"delete",
    b"in",
    b"print",
    b"printf",
    b"switch",
    b"case",
    b"default",
];

/// Built-in functions of POSIX awk, gawk and mawk (`system` is handled on
/// its own).
const AWK_BUILTINS: &[&[u8]] = &[
    b"length",
    b"substr",
    b"index",
    b"split",
    b"sub",
    b"gsub",
    b"match",
    b"sprintf",
    b"sin",
    b"cos",
    b"atan2",
    b"exp",
    b"log",
    b"sqrt",
    b"int",
    b"rand",
    b"srand",
    b"tolower",
    b"toupper",
    b"close",
    b"fflush",
    b"gensub",
    b"strftime",
    b"systime",
    b"mktime",
    b"asort",
    b"asorti",
    b"patsplit",
    b"and",
    b"or",
    b"xor",
    b"lshift",
    b"rshift",
    b"compl",
    b"strtonum",
    b"isarray",
    b"typeof",
    b"mkbool",
    b"bindtextdomain",
    b"dcgettext",
    b"dcngettext",
];

/// What the previous token says about a following `/`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// An operand is expected (start, operator, `(`, `,`, `;`, `{`, `}`,
    /// newline, keyword): a `/` starts a regex.
    Expr,
    /// An operand just ended (name, number, string, regex, `)`, `]`,
    /// `getline`): a `/` divides.
    Operand,
    /// Awk implementations disagree: a `/` here is `Unknown`.
    Ambiguous(&'static str),
}

/// An open `(` or `[`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Paren,
    /// The `(` of `if`, `while`, `for` or `switch`.
    Condition,
    Bracket,
}

struct Awk<'a> {
    s: &'a [u8],
    pos: usize,
    prev: Prev,
    /// The previous token lets the statement go on after a newline (`,`,
    /// `&&`, an operator, …).
    cont: bool,
    open: Vec<Open>,
    /// Open `(`, which is what gawk and mawk count for `print … > file`.
    parens: usize,
    /// The last token was `if`, `while`, `for` or `switch`.
    ctrl_pending: bool,
    /// Inside a `print` or `printf` statement begun at this paren depth: a
    /// `>` at that depth redirects output instead of comparing.
    print_base: Option<usize>,
    effects: Effects,
}

/// gawk's view of bracket expressions in a regex literal (its `yylex`).
#[derive(Clone, Copy)]
struct GawkBrackets {
    depth: i64,
    first: i64,
    len: i64,
    last: u8,
}

impl GawkBrackets {
    fn new() -> Self {
        GawkBrackets {
            depth: 0,
            first: -1,
            len: 0,
            last: 0,
        }
    }

    fn char(&mut self, c: u8, peek: Option<u8>) {
        let cur = self.len;
        match c {
            b'[' if peek == Some(b':') || self.depth == 0 => {
                self.depth += 1;
                if self.depth == 1 {
                    self.first = cur;
                }
            }
            b']' => {
                let literal = self.depth > 0
                    && (cur == self.first + 1 || (cur == self.first + 2 && self.last == b'^'));
                if !literal {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.first = -1;
                    }
                }
            }
            _ => {}
        }
        self.len += 1;
        self.last = c;
    }

    fn escape(&mut self, d: u8) {
        self.len += 2;
        self.last = d;
    }

    fn inside(&self) -> bool {
        self.depth > 0
    }
}

/// mawk's view of bracket expressions in a regex literal (its `collect_RE`).
#[derive(Clone, Copy, Default)]
struct MawkBrackets {
    boxed: i64,
    first: Option<usize>,
    first_after_bracket: bool,
    len: usize,
}

impl MawkBrackets {
    fn char(&mut self, c: u8, peek: Option<u8>) {
        let i = self.len;
        self.len += 1;
        match c {
            b'^' if self.first == Some(i) && self.first_after_bracket => {
                self.first = Some(i + 1);
                self.first_after_bracket = false;
            }
            b'[' if self.boxed == 0 => {
                self.first = Some(i + 1);
                self.first_after_bracket = true;
                self.boxed = 1;
            }
            b'[' if peek == Some(b':') => self.boxed += 1,
            b']' if self.boxed > 0 && self.first != Some(i) => self.boxed -= 1,
            _ => {}
        }
    }

    fn escape(&mut self, d: u8) {
        // mawk keeps `\/` as one character.
        self.len += if d == b'/' { 1 } else { 2 };
    }

    fn inside(&self) -> bool {
        self.boxed > 0
    }
}

impl Awk<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.s.get(self.pos + ahead).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn eat(&mut self, c: u8) -> bool {
        let yes = self.peek() == Some(c);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn set(&mut self, prev: Prev, cont: bool) {
        self.prev = prev;
        self.cont = cont;
    }

    fn program(&mut self) -> Parsed {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                // A backslash in code only continues the line.
                b'\\' => {
                    self.pos += 1;
                    while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
                        self.pos += 1;
                    }
                    if !self.eat(b'\n') {
                        return Err("a backslash in awk code that does not end the line");
                    }
                }
                b'\n' => {
                    self.pos += 1;
                    self.newline();
                }
                b'#' => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                _ => self.token(c)?,
            }
        }
        if !self.open.is_empty() {
            return Err("an unclosed ( or [ in an awk program");
        }
        Ok(())
    }

    fn newline(&mut self) {
        if self.open.is_empty() {
            // The newline ends the statement, so a `/` starts a regex;
            // after `if (…)` mawk may skip the newline, so that stays
            // ambiguous.
            if self.prev != Prev::Ambiguous(AFTER_CONDITION) {
                self.prev = Prev::Expr;
            }
        } else if self.prev == Prev::Operand {
            // A syntax error in gawk and mawk; not worth guessing.
            self.prev = Prev::Ambiguous(AFTER_NEWLINE_IN_PARENS);
        }
        if let Some(base) = self.print_base {
            if self.parens <= base && !self.cont {
                self.print_base = None;
            }
        }
    }

    fn token(&mut self, c: u8) -> Parsed {
        let condition = std::mem::take(&mut self.ctrl_pending);
        self.pos += 1;
        match c {
            b'"' => {
                self.string()?;
                self.set(Prev::Operand, false);
            }
            b'/' => match self.prev {
                Prev::Expr => {
                    self.regex()?;
                    self.set(Prev::Operand, false);
                }
                Prev::Operand => {
                    self.eat(b'=');
                    self.set(Prev::Expr, true);
                }
                Prev::Ambiguous(why) => return Err(why),
            },
            b'@' => self.at()?,
            b'0'..=b'9' => self.number(c),
            b'.' if matches!(self.peek(), Some(b'0'..=b'9')) => self.number(c),
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => self.word(),
            b'(' => {
                self.open.push(if condition {
                    Open::Condition
                } else {
                    Open::Paren
                });
                self.parens += 1;
                self.set(Prev::Expr, true);
            }
            b')' => {
                let prev = match self.open.pop() {
                    Some(Open::Paren) => Prev::Operand,
                    Some(Open::Condition) => Prev::Ambiguous(AFTER_CONDITION),
                    _ => return Err("an unbalanced ) in an awk program"),
                };
                self.parens -= 1;
                self.set(prev, false);
            }
            b'[' => {
                self.open.push(Open::Bracket);
                self.set(Prev::Expr, true);
            }
            b']' => {
                if self.open.pop() != Some(Open::Bracket) {
                    return Err("an unbalanced ] in an awk program");
                }
                self.set(Prev::Operand, false);
            }
            b'{' | b'}' | b';' => {
                self.print_base = None;
                self.set(Prev::Expr, false);
            }
            b'|' => {
                if !self.eat(b'|') {
                    let what = if self.eat(b'&') {
                        AWK_COPROCESS
                    } else {
                        AWK_PIPE
                    };
                    // `print | cmd` and `cmd | getline` alike. Only an
                    // output pipe ends the print statement's redirection;
                    // `print ("cmd" | getline) > "f"` still writes "f".
                    self.effects.push(ScriptEffect::RunsCode(what));
                    if self.print_base == Some(self.parens) {
                        self.print_base = None;
                    }
                }
                self.set(Prev::Expr, true);
            }
            b'&' => {
                if !self.eat(b'&') {
                    return Err("a single & in an awk program");
                }
                self.set(Prev::Expr, true);
            }
            b'>' => {
                if self.eat(b'=') {
                    // `>=` always compares.
                } else if self.eat(b'>') || self.print_base == Some(self.parens) {
                    // `>>` is always a redirection in gawk; `>` is one at
                    // the top level of a print statement.
                    self.redirection();
                    self.print_base = None;
                }
                self.set(Prev::Expr, true);
            }
            b'+' | b'-' => {
                if self.eat(c) {
                    self.set(Prev::Ambiguous(AFTER_INCREMENT), false);
                } else {
                    self.eat(b'=');
                    self.set(Prev::Expr, true);
                }
            }
            b',' | b'<' | b'=' | b'!' | b'~' | b'*' | b'%' | b'^' | b'?' | b':' | b'$' => {
                self.set(Prev::Expr, true);
            }
            _ => return Err("a character awk does not accept outside strings and comments"),
        }
        Ok(())
    }

    /// A string literal, after its `"`.
    fn string(&mut self) -> Parsed {
        const UNTERMINATED: &str = "an unterminated awk string";
        loop {
            match self.next() {
                None | Some(b'\n') => return Err(UNTERMINATED),
                Some(b'"') => return Ok(()),
                Some(b'\\') => match self.next() {
                    None => return Err(UNTERMINATED),
                    // gawk escapes the character after the CR, mawk the CR.
                    Some(b'\r') => return Err("a backslash before a carriage return in awk"),
                    Some(_) => {}
                },
                Some(_) => {}
            }
        }
    }

    /// A regex literal, after its `/`. It ends at the first unescaped `/`,
    /// as onetrue-awk reads it; if gawk or mawk would see that `/` inside a
    /// bracket expression and read on, the implementations disagree.
    fn regex(&mut self) -> Parsed {
        const UNTERMINATED: &str = "an unterminated awk regex literal";
        let mut gawk = GawkBrackets::new();
        let mut mawk = MawkBrackets::default();
        loop {
            match self.next() {
                None | Some(b'\n') => return Err(UNTERMINATED),
                Some(b'/') => {
                    if gawk.inside() || mawk.inside() {
                        return Err("a / inside a bracket expression of an awk regex literal (awk implementations disagree where it ends)");
                    }
                    return Ok(());
                }
                Some(b'\\') => match self.next() {
                    None => return Err(UNTERMINATED),
                    Some(b'\r') => return Err("a backslash before a carriage return in awk"),
                    // A continued line: nothing is added to the regex.
                    Some(b'\n') => {}
                    Some(d) => {
                        gawk.escape(d);
                        mawk.escape(d);
                    }
                },
                Some(c) => {
                    let peek = self.peek();
                    gawk.char(c, peek);
                    mawk.char(c, peek);
                }
            }
        }
    }

    /// A number (the first character is already read). Letters after it
    /// start a new name, as in gawk and mawk.
    fn number(&mut self, first: u8) {
        if first == b'0'
            && matches!(self.peek(), Some(b'x' | b'X'))
            && self.peek_at(1).is_some_and(|c| c.is_ascii_hexdigit())
        {
            self.pos += 1;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.pos += 1;
            }
        } else {
            let mut point = first == b'.';
            loop {
                match self.peek() {
                    Some(b'0'..=b'9') => self.pos += 1,
                    Some(b'.') if !point => {
                        point = true;
                        self.pos += 1;
                    }
                    _ => break,
                }
            }
            if matches!(self.peek(), Some(b'e' | b'E')) {
                let digit_at = if matches!(self.peek_at(1), Some(b'+' | b'-')) {
                    2
                } else {
                    1
                };
                if matches!(self.peek_at(digit_at), Some(b'0'..=b'9')) {
                    self.pos += digit_at;
                    while matches!(self.peek(), Some(b'0'..=b'9')) {
                        self.pos += 1;
                    }
                }
            }
        }
        self.set(Prev::Operand, false);
    }

    /// A name (its first character is already read).
    fn word(&mut self) {
        let start = self.pos - 1;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.pos += 1;
        }
        let word = &self.s[start..self.pos];
        match word {
            // Whatever follows: a call, with or without a space before `(`,
            // or gawk's `awk::system`.
            b"system" => {
                self.effects.push(ScriptEffect::RunsCode(AWK_SYSTEM));
                self.set(Prev::Ambiguous(AFTER_BUILTIN), false);
            }
            b"getline" => self.set(Prev::Operand, false),
            b"print" | b"printf" => {
                self.set(Prev::Expr, false);
                self.print_base = Some(self.parens);
            }
            b"if" | b"while" | b"for" | b"switch" => {
                self.set(Prev::Expr, false);
                self.ctrl_pending = true;
            }
            _ if AWK_KEYWORDS.contains(&word) => self.set(Prev::Expr, false),
            _ if AWK_BUILTINS.contains(&word) => self.set(Prev::Ambiguous(AFTER_BUILTIN), false),
            _ => self.set(Prev::Operand, false),
        }
    }

    /// After gawk's `@`: a typed regex `@/re/`, `@namespace`, or code
    /// that cannot be followed (`@load`, `@include`, an indirect call).
    fn at(&mut self) -> Parsed {
        if self.eat(b'/') {
            self.regex()?;
            self.set(Prev::Operand, false);
            return Ok(());
        }
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.pos += 1;
        }
        let why = match &self.s[start..self.pos] {
            b"namespace" => {
                self.set(Prev::Expr, false);
                return Ok(());
            }
            b"load" => "gawk's @load loads an extension",
            b"include" | b"nsinclude" => "gawk's @include reads more awk code",
            b"" => "a gawk @ that is not followed by a name",
            _ => "a gawk @ directive or indirect function call",
        };
        self.effects.push(ScriptEffect::Unknown(why));
        self.set(Prev::Operand, false);
        Ok(())
    }

    /// An output redirection, after `>` or `>>`: a write to a string literal
    /// that ends the statement, else a file chosen at run time. Only looks
    /// ahead; the tokens are read as usual afterwards.
    fn redirection(&mut self) {
        let s = self.s;
        let blank = |i: &mut usize| {
            while matches!(s.get(*i), Some(b' ' | b'\t' | b'\r')) {
                *i += 1;
            }
        };
        let mut i = self.pos;
        blank(&mut i);
        if s.get(i) != Some(&b'"') {
            self.effects.push(ScriptEffect::Unknown(
                "awk output redirected to a file named at run time",
            ));
            return;
        }
        i += 1;
        let start = i;
        let mut escaped = false;
        loop {
            match s.get(i) {
                // The string token reports it.
                None | Some(b'\n') => return,
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    i += 2;
                }
                Some(_) => i += 1,
            }
        }
        let name = &s[start..i];
        i += 1;
        blank(&mut i);
        if !matches!(s.get(i), None | Some(b';' | b'\n' | b'}' | b'#')) {
            // gawk concatenates `> "a" x` into the file name.
            self.effects.push(ScriptEffect::Unknown(
                "awk output redirected to a file name built at run time",
            ));
        } else if escaped {
            self.effects.push(ScriptEffect::Unknown(
                "an awk output file name with backslash escapes",
            ));
        } else if name.is_empty() {
            self.effects
                .push(ScriptEffect::Unknown("an empty awk output file name"));
        } else {
            self.effects.write(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ScriptEffect::{RunsCode, Unknown, Writes};
    use super::*;

    fn is_unknown(effects: &[ScriptEffect]) -> bool {
        effects.iter().any(|e| matches!(e, Unknown(_)))
    }

    fn runs_code(effects: &[ScriptEffect]) -> bool {
        effects.iter().any(|e| matches!(e, RunsCode(_)))
    }

    fn writes(effects: &[ScriptEffect], file: &str) -> bool {
        effects.contains(&Writes(file.to_string()))
    }

    const SED_HARMLESS: &[&str] = &[
        "s/foo/bar/g",
        "1d",
        "/^#/d",
        "p",
        "s|/usr|/opt|",
        "s/[/]/x/",
        "y/abc/xyz/",
        "1~2p",
        "$!N",
        ":a;N;$!ba;s/\\n/ /g",
        "/start/,/end/{s/a/b/;p}",
        "a\\\ntext with w and e letters",
        "i hello world",
        "s/e/E/2",
        "r /etc/hostname",
        "w /dev/stdout",
        "s/x/y/w /dev/stderr",
        "# comment with e and w",
        "s/we/ew/",
        // more addresses
        "0,/re/d",
        "2,~4p",
        "3,+2p",
        "\\%x%Ip",
        "/x/I,/y/Mp",
        "1 , 3 ! p",
        "$ p",
        "+p",
        "~ 0p",
        // labels end at white space, `;`, `}` and `#`
        ":a p",
        ": a;b a",
        ":top\n/x/b top",
        "/x/{b end\n};:end",
        "t;T",
        // text commands run to the end of the line
        "1a foo ; w out",
        "1c\\\nnew line\\\n w and e",
        "$a\\",
        "a\\  indented e",
        "1i\\ w x",
        // regexes and replacements
        "s/a\\/b/c/",
        "s,a\\,b,w,",
        "s/[[:alpha:]/]/e/",
        "s/[]/]/w/",
        "s/[^]/]/e/",
        "s/a\\\nb/c/",
        "s/x/\\n/;s/\\(e\\)/\\1w/g",
        "s/x/y/I ; s/a/b/ M g 3 p",
        "{s/x/y/}",
        "s\\a\\b\\",
        "y/e/w/;y,a\\,b,xyz,",
        // other commands
        "=;l;l 5;L;q5;Q 1;F;z;x;h;H;g;G;n;N;P;D",
        "R /dev/stdin",
        "W /dev/stdout",
        "v 4.2",
        "#n\np",
        "1{p};{p}",
        "1!{/x/{p}}",
        "p # trailing comment ; w out",
        "",
        " ;\n ; ",
    ];

    #[test]
    fn sed_harmless_scripts_have_no_effects() {
        for script in SED_HARMLESS {
            assert_eq!(sed_script(script), vec![], "{script:?}");
        }
    }

    #[test]
    fn sed_effects() {
        let cases: &[(&str, ScriptEffect)] = &[
            ("1e id", RunsCode(SED_E_COMMAND)),
            ("e", RunsCode(SED_E_COMMAND)),
            ("2 e rm -rf ~", RunsCode(SED_E_COMMAND)),
            ("$!e", RunsCode(SED_E_COMMAND)),
            ("e;p", RunsCode(SED_E_COMMAND)),
            ("1{e\n}", RunsCode(SED_E_COMMAND)),
            ("\\%x%Ie date", RunsCode(SED_E_COMMAND)),
            ("y/a/b/;e", RunsCode(SED_E_COMMAND)),
            ("s/x/id/e", RunsCode(SED_E_FLAG)),
            ("s/x/id/ g e", RunsCode(SED_E_FLAG)),
            ("s|x|id|e", RunsCode(SED_E_FLAG)),
            ("s/[/]/id/e", RunsCode(SED_E_FLAG)),
            ("s/a/b/;s/c/d/e", RunsCode(SED_E_FLAG)),
            ("w out.txt", Writes("out.txt".into())),
            ("s/a/b/w /tmp/f", Writes("/tmp/f".into())),
            ("/x/W log", Writes("log".into())),
            ("1{w a\n}", Writes("a".into())),
            ("s/a/b/gw f", Writes("f".into())),
            ("s/a/b/w f ; p", Writes("f ; p".into())),
            ("w /dev/stdout ", Writes("/dev/stdout ".into())),
            ("w /dev/stdin", Writes("/dev/stdin".into())),
            ("wfile", Writes("file".into())),
            (":a w x", Writes("x".into())),
            ("a text\nw x", Writes("x".into())),
            ("s/[[:space:]]/ /w x", Writes("x".into())),
            ("1!W\tspaced name", Writes("spaced name".into())),
        ];
        for (script, effect) in cases {
            let found = sed_script(script);
            assert!(found.contains(effect), "{script:?}: {found:?}");
            assert!(!is_unknown(&found), "{script:?}: {found:?}");
        }
    }

    #[test]
    fn sed_reports_every_effect_once() {
        assert_eq!(
            sed_script("w a\ns/x/y/ew b\n1e\nw a\ne"),
            vec![
                Writes("a".into()),
                RunsCode(SED_E_FLAG),
                Writes("b".into()),
                RunsCode(SED_E_COMMAND),
            ]
        );
    }

    #[test]
    fn sed_unparsable_scripts_are_unknown() {
        for script in [
            "s/a/b",
            "s/a/b/x",
            "s/a",
            "s",
            "s/[/x/",
            "s/[\n]/x/",
            "s/a/b/pp",
            "s/a/b/0",
            "s/a\nb/c/",
            "sébéc",
            "y/abc",
            "y/a/b/p",
            "k",
            "1",
            "1,",
            "1,p",
            "+3p",
            "~2p",
            "1!!p",
            "1#x",
            "1:a",
            ":",
            "1}",
            "}",
            "p;}",
            "{p",
            "1{p",
            "px",
            "p\r\n",
            "l 5 x",
            "1,2q",
            "a",
            "1 a",
            "w",
            "r",
            "s/x/y/w",
            "/x",
            "\\",
            "\\%x",
        ] {
            let found = sed_script(script);
            assert!(is_unknown(&found), "{script:?}: {found:?}");
        }
        // The effects before the error are kept.
        let found = sed_script("w out\nk");
        assert_eq!(found[0], Writes("out".into()));
        assert!(is_unknown(&found));
    }

    const AWK_HARMLESS: &[&str] = &[
        "{print $1}",
        "$3 > 100",
        "NR==1",
        "{ if ($1 > $2) print }",
        "{print ($1 > 2)}",
        "BEGIN{FS=\":\"} {print $1}",
        "{a[$1]++} END{for(k in a) print k, a[k]}",
        "{print $1 || $2}",
        "/a|b/ {print}",
        "{x = 4 / 2; print x}",
        "{ getline line < \"f\"; print line }",
        "{ print \"a|b\" }",
        "# system( in a comment",
        // more division and regex
        "{ print $1/$2, a[1] / 2, (x) / 3, NF/2, 1e3/2 }",
        "{ x /= 2; y = x / 2 / 3 }",
        "$0 ~ /=x/ && !/y/",
        "/a\\/b/",
        "{ print \"a\" /x/ 1 }",
        "{ x = a\n/ 2 /\n}",
        "{ sub(/a[bc]d/, \"x\"); gsub(/[[:digit:]]+/, \"#\") }",
        "{ print /[]a]/, /[^]a]/, /[\\/]/ }",
        "@/typed regex/",
        "{ print \"x\" > \"/dev/stdout\"; printf \"y\" > \"/dev/stderr\" }",
        "{ print\n x = a > b }",
        "{ printf(\"%d\\n\", a > b) }",
        "function f(a, b) { return a / b }\n{ print f($1, $2) }",
        "BEGIN { while ((getline line < ARGV[1]) > 0) n++; close(ARGV[1]); fflush() }",
        "{ print length($0) / 2 }",
        "{ printf \"%s %s\\n\", $1, \"x\\\"y\" }",
        "{ s = \"a\\\nb\" }",
        "@namespace \"ns\"\n{ print }",
        "BEGIN { x = 0x1F; y = .5; z = 1.5e-3 }",
        "{ print } \\\n END { print NR }",
        "",
    ];

    #[test]
    fn awk_harmless_programs_have_no_effects() {
        for program in AWK_HARMLESS {
            assert_eq!(awk_program(program), vec![], "{program:?}");
        }
    }

    #[test]
    fn awk_effects() {
        let runs = [
            "BEGIN{system(\"id\")}",
            "{print | \"sh\"}",
            "{print $0 | \"mail x\"}",
            "BEGIN { \"date\" | getline d }",
            "BEGIN{print \"x\" |& \"cmd\"}",
            "BEGIN { system (\"id\") }",
            "BEGIN { awk::system(\"id\") }",
            "BEGIN { while ((\"ls\" | getline f) > 0) print f }",
            "{ print $1 > \"out\" | \"sh\" }",
            "{ x = 1 / 2; system(x) }",
            "/a\\/b/ { system(\"id\") }",
        ];
        for program in runs {
            let found = awk_program(program);
            assert!(runs_code(&found), "{program:?}: {found:?}");
        }
        let writes_to = [
            ("{print > \"out\"}", "out"),
            ("{print >\"out\"}", "out"),
            ("{printf \"%s\", $0 >> \"/tmp/log\"}", "/tmp/log"),
            ("{ print (a, b) > \"out\" }", "out"),
            ("{ printf(\"%d\\n\", $1) > \"o\" }", "o"),
            ("{ print a,\n b > \"f\" }", "f"),
            ("{ if (x) print > \"a\"; else print > \"b\" }", "b"),
            ("{ print > \"f\" # note\n}", "f"),
            ("{ print (\"cmd\" | getline) > \"g\" }", "g"),
            ("{ print \"x\" > \"/dev/stdout \" }", "/dev/stdout "),
        ];
        for (program, file) in writes_to {
            let found = awk_program(program);
            assert!(writes(&found, file), "{program:?}: {found:?}");
            assert!(!is_unknown(&found), "{program:?}: {found:?}");
        }
    }

    #[test]
    fn awk_unknown_programs() {
        for program in [
            "{print > $1}",
            "{print > \"a\" \"b\"}",
            "{print > \"a\\x41\"}",
            "{print > \"\"}",
            "{print >> file}",
            // gawk and mawk count only parentheses here: a redirection,
            // then a syntax error.
            "{ print a[b > c ? 1 : 2] }",
            "@load \"x\"",
            "@include \"y\"",
            "{ f = \"system\"; @f(\"id\") }",
            "{ print \"abc }",
            "{ print \"abc\n\" }",
            "{ print /abc }",
            "{ if (x) /re/ ~ $0 }",
            "{ if (x) /\"/; system(\"id\"); y = \"\" }",
            "{ y = x++ / 2 / 1 }",
            "{ print length / 2 }",
            "/[/]/ { print }",
            "{ x = (1\n/ 2) }",
            "{ print 'x' }",
            "{ print é }",
            "{ print (1 }",
            "{ print 1) }",
            "{ a[1 }",
            "{ x = a & b }",
            "{ x = 1 \\ 2 }",
            "{ s = \"a\\\r\" }",
        ] {
            let found = awk_program(program);
            assert!(is_unknown(&found), "{program:?}: {found:?}");
        }
    }

    /// A small fixed-seed generator, so the fuzz test is reproducible.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn both(text: &str) {
        let _ = sed_script(text);
        let _ = awk_program(text);
    }

    #[test]
    fn no_panic_on_truncated_garbled_or_random_input() {
        const PIECES: &[&str] = &[
            "/",
            "\\",
            "[",
            "]",
            "[:",
            ":]",
            "^",
            "{",
            "}",
            "(",
            ")",
            ";",
            "\n",
            "\r",
            " ",
            "\"",
            "'",
            "|",
            "&",
            ">",
            ">>",
            "<",
            "!",
            "$",
            "#",
            "@",
            "e",
            "w",
            "s",
            "y",
            "a",
            "~",
            "+",
            ",",
            "1",
            "0x",
            "print",
            "system",
            "é",
            "\u{1F600}",
        ];
        let mut samples: Vec<&str> = SED_HARMLESS.to_vec();
        samples.extend_from_slice(AWK_HARMLESS);
        samples.extend([
            "s/x/id/e",
            "1{w a\n}",
            "BEGIN{print \"x\" |& \"cmd\"}",
            "{printf \"%s\", $0 >> \"/tmp/log\"}",
            "@include \"y\"",
        ]);
        let mut rng = XorShift(0x5eed_1234_abcd_9876);
        for sample in &samples {
            // Every prefix and suffix at a character boundary.
            for (i, _) in sample.char_indices() {
                both(&sample[..i]);
                both(&sample[i..]);
            }
            // Random insertions and deletions.
            for _ in 0..40 {
                let mut text = sample.to_string();
                for _ in 0..1 + rng.below(4) {
                    let bounds: Vec<usize> = text
                        .char_indices()
                        .map(|(i, _)| i)
                        .chain([text.len()])
                        .collect();
                    let at = bounds[rng.below(bounds.len())];
                    if rng.below(3) == 0 && at < text.len() {
                        text.remove(at);
                    } else {
                        text.insert_str(at, PIECES[rng.below(PIECES.len())]);
                    }
                }
                both(&text);
            }
        }
        // Random bytes, made valid UTF-8, and random runs of syntax pieces.
        for _ in 0..2000 {
            let len = rng.below(64);
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            both(&String::from_utf8_lossy(&bytes));
            let text: String = (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect();
            both(&text);
        }
    }

    #[test]
    fn large_inputs_are_handled_in_one_pass() {
        const MIB: usize = 1 << 20;
        let sed = "s/[a/]/b/gw f\n".repeat(MIB / 14);
        assert_eq!(sed_script(&sed), vec![Writes("f".into())]);
        let braces = format!("{}p{}", "{".repeat(MIB / 2), "}".repeat(MIB / 2));
        assert_eq!(sed_script(&braces), vec![]);
        let text = format!("a{}", "x\\\n".repeat(MIB / 3));
        assert_eq!(sed_script(&text), vec![]);

        let awk = "{ print $1 / 2 > \"out\" }\n".repeat(MIB / 26);
        assert_eq!(awk_program(&awk), vec![Writes("out".into())]);
        let parens = format!("{{ x = {}1{} }}", "(".repeat(MIB / 2), ")".repeat(MIB / 2));
        assert_eq!(awk_program(&parens), vec![]);
        let regex = format!("/{}/", "[[:".repeat(MIB / 3));
        assert!(is_unknown(&awk_program(&regex)));
        let many_files: String = (0..50_000)
            .map(|i| format!("{{ print > \"f{i}\"; system(\"x\") }}\n"))
            .collect();
        assert_eq!(awk_program(&many_files).len(), 50_001);
        let many_files: String = (0..50_000).map(|i| format!("w f{i}\ne\n")).collect();
        assert_eq!(sed_script(&many_files).len(), 50_001);
    }
}
