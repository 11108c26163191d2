//! The public read-only check, derived from the program table.

use crate::word::Arg;

/// The programs that can be read-only: those whose row in the program
/// table says they only read (with the options and operands the row lists).
///
/// A command counts only when named plainly (`ls`, not `/bin/ls` or
/// `./ls`), and a command line is read-only only when every part of it
/// is, and it writes no file (no `>`, `>>`, `tee FILE`, …).
pub fn read_only_programs() -> Vec<&'static str> {
    crate::programs::read_only_names().collect()
}

/// Whether a simple command (`argv[0]` and its literal arguments) is
/// read-only: its program has a row in the program table that says it
/// reads, and every option (bundled, attached, abbreviated, after
/// operands) and every operand it is given has a read-only place in that
/// row. An option nobody listed, or a program without a row, is not
/// read-only. The policy's own verdict on a command part is this one (on
/// top of it, the shell analysis refuses what the shell itself would do:
/// redirections, substitutions, variables).
///
/// ```
/// use dsh_policy::is_read_only_command;
/// assert!(is_read_only_command(&["git", "log", "--oneline", "-5"]));
/// assert!(!is_read_only_command(&["rg", "--hostname-bin", "id", "x"]));
/// assert!(!is_read_only_command(&["ls", "--some-unknown-option"]));
/// ```
pub fn is_read_only_command<S: AsRef<str>>(argv: &[S]) -> bool {
    let words: Vec<Arg> = argv.iter().map(|a| Arg::plain(a.as_ref())).collect();
    crate::programs::is_read_only(&words)
}
