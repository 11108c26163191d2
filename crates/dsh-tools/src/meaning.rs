//! What another server's tool does with its arguments, said by the host (a
//! settings file, a built-in profile) so a permission check can judge the
//! call by what it does: a shell command is analysed as our own `bash`
//! would be, a path as our file tools' paths.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// What one argument of a tool means to the permission layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgumentMeaning {
    /// A shell command line (a string), run as `bash -c` would run it.
    Shell,
    /// A command as an array of words, run without a shell (each word is
    /// one argument; the words `|`, `<`, `>` and `>>` may be operators the
    /// server handles itself). Judged as the shell line that runs exactly
    /// those words.
    Argv,
    /// Text typed into a program already running (a shell, a REPL): judged
    /// as a shell line, and never allowed on the analysis's word alone,
    /// since what reads it is not known.
    Input,
    /// A path (or an array of paths) the tool reads.
    Read,
    /// A directory (or an array of them) every file below which the tool
    /// may read (a content search): a deny `Read` rule naming a file below
    /// it refuses the call.
    Tree,
    /// A path (or an array of paths) the tool writes, creates or removes.
    Write,
    /// The directory a shell argument runs in: relative paths in the
    /// command are taken from it.
    Workdir,
    /// A value handed to a program as an operand (a git revision, a branch
    /// name): data unless it starts with `-`, which would make it an option
    /// nobody listed (a number counts as its text); a `REV:PATH` names a
    /// file read, which deny `Read` rules see.
    Operand,
    /// Data that changes nothing the policy guards (a timeout, a text
    /// written to a file whose path is judged, a count).
    Data,
}

impl ArgumentMeaning {
    /// The name a settings file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgumentMeaning::Shell => "shell",
            ArgumentMeaning::Argv => "argv",
            ArgumentMeaning::Input => "input",
            ArgumentMeaning::Read => "read",
            ArgumentMeaning::Tree => "tree",
            ArgumentMeaning::Write => "write",
            ArgumentMeaning::Workdir => "workdir",
            ArgumentMeaning::Operand => "operand",
            ArgumentMeaning::Data => "data",
        }
    }
}

impl fmt::Display for ArgumentMeaning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The meanings of a tool's arguments. An argument a call carries that is
/// not listed has no known meaning: the call cannot run unasked on the
/// meanings' word.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArgumentMeanings {
    /// Argument names (top-level properties) and what they mean.
    pub arguments: Vec<(String, ArgumentMeaning)>,
    /// Where the meanings come from, for messages: `profile filesystem`,
    /// `settings`.
    pub from: String,
    /// The directory the server takes relative paths from (its working
    /// directory), when known; else the host's working directory.
    pub base: Option<std::path::PathBuf>,
}

impl ArgumentMeanings {
    /// The meaning of an argument, if listed.
    pub fn get(&self, name: &str) -> Option<ArgumentMeaning> {
        self.arguments
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, m)| *m)
    }

    /// Whether an argument of this meaning is listed.
    pub fn has(&self, meaning: ArgumentMeaning) -> bool {
        self.arguments.iter().any(|(_, m)| *m == meaning)
    }
}

/// A tool held because its definition changed since a person accepted it:
/// its calls need approval whatever the rules say.
#[derive(Clone)]
pub struct DefinitionHold {
    /// What changed, for the person asked: `description changed: …`.
    pub change: String,
    /// Records the current definition as accepted (an *allow always*).
    pub accept: Arc<dyn Fn() -> Result<(), String> + Send + Sync>,
}

impl fmt::Debug for DefinitionHold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefinitionHold")
            .field("change", &self.change)
            .finish_non_exhaustive()
    }
}
