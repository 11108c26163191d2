//! The words of a command line as the analysis sees them: a word after
//! quote removal ([`Arg`]), a path it names ([`PathWord`]), and where
//! relative paths are ([`Dirs`]). A leaf: every other module of the
//! analysis builds on these, and they know none of it.

/// A word of a command, after quote removal when it is literal.
#[derive(Debug, Clone)]
pub(crate) struct Arg {
    /// The literal value (quote-removed) when `literal`, else best-effort text.
    pub value: String,
    /// The word as written.
    pub raw: String,
    /// No expansion of any kind (parameter, command, arithmetic, tilde).
    pub literal: bool,
    /// Unquoted glob or brace characters (`*?[{`): fine as an argument,
    /// not as a command name or write target.
    pub pattern: bool,
    /// An unquoted brace expansion (`{a,b}`, `{1..3}`): bash makes several
    /// words of it.
    pub brace: bool,
}

impl Arg {
    pub(crate) fn plain(s: &str) -> Arg {
        Arg {
            value: s.to_owned(),
            raw: s.to_owned(),
            literal: true,
            pattern: false,
            brace: false,
        }
    }

    /// A word whose value is not known (`<(…)`, what xargs appends).
    pub(crate) fn unknown(text: &str) -> Arg {
        Arg {
            value: text.to_owned(),
            raw: text.to_owned(),
            literal: false,
            pattern: false,
            brace: false,
        }
    }

    /// Whether bash may split the word into several: an expansion outside
    /// double quotes (`$x`, `$(…)`, a backquote) in a word that is not
    /// literal.
    pub(crate) fn may_split(&self) -> bool {
        if self.literal {
            return false;
        }
        let mut single = false;
        let mut double = false;
        let mut escaped = false;
        for c in self.raw.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if !single => escaped = true,
                '\'' if !double => single = !single,
                '"' if !single => double = !double,
                '$' | '`' if !single && !double => return true,
                _ => {}
            }
        }
        false
    }

    /// A literal word without glob or brace characters.
    pub(crate) fn exact(&self) -> Option<&str> {
        (self.literal && !self.pattern).then_some(self.value.as_str())
    }

    pub(crate) fn display(&self) -> std::borrow::Cow<'_, str> {
        if !self.literal {
            return std::borrow::Cow::Borrowed(self.raw.as_str());
        }
        let v = &self.value;
        if !v.is_empty()
            && !v
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '\'' | '"'))
        {
            return std::borrow::Cow::Borrowed(v.as_str());
        }
        let mut out = String::with_capacity(v.len() + 2);
        out.push('\'');
        for c in v.chars() {
            if c == '\'' {
                out.push_str("'\\''");
            } else {
                out.push(c);
            }
        }
        out.push('\'');
        std::borrow::Cow::Owned(out)
    }
}

/// A path a command names, as far as the analysis knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathWord {
    /// A literal path.
    Literal(String),
    /// `~/rest` (`~` alone: an empty rest).
    Home(String),
    /// A literal glob (`src/*.rs`), expanded when the call is decided.
    Glob(String),
    /// Not known before the command runs (`$f`, `$(…)`), as written.
    Unknown(String),
}

impl PathWord {
    pub(crate) fn of(arg: &Arg) -> PathWord {
        if let Some(v) = arg.exact() {
            return PathWord::Literal(v.to_owned());
        }
        if arg.literal && arg.pattern && !arg.brace {
            return PathWord::Glob(arg.value.clone());
        }
        let home = if arg.raw == "~" {
            Some("")
        } else {
            arg.raw.strip_prefix("~/")
        };
        match home {
            Some(rest) if rest.bytes().all(is_plain_byte) => PathWord::Home(rest.to_owned()),
            _ => PathWord::Unknown(arg.raw.clone()),
        }
    }

    /// The path as written (for reasons).
    pub(crate) fn text(&self) -> String {
        match self {
            PathWord::Literal(t) | PathWord::Glob(t) | PathWord::Unknown(t) => t.clone(),
            PathWord::Home(rest) if rest.is_empty() => "~".to_owned(),
            PathWord::Home(rest) => format!("~/{rest}"),
        }
    }
}

/// Where relative paths are resolved at a point of the command line: the
/// directories (relative to the call's working directory, absolute, or
/// `~…`), one of which is the shell's current directory there; `None` when
/// the analysis cannot tell (`cd "$x"`, a `cd` in a loop or a function).
pub(crate) type Dirs = Option<Vec<String>>;

/// Characters that never need the word parser: the word is its own value.
pub(crate) fn is_plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_' | b'.' | b'/' | b'=' | b':' | b',' | b'+' | b'@' | b'%' | b'^'
        )
}
