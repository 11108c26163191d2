//! The input syntax of `bash_write`: text with named keys in angle brackets.
//!
//! Text is sent as typed; a newline in it is the Enter key (`\r`, what a
//! terminal's keyboard sends). A name in angle brackets is a key:
//!
//! | Keys | Sends |
//! |------|-------|
//! | `<Enter>` (`<Return>`, `<CR>`), `<Tab>`, `<Esc>`, `<Space>`, `<Backspace>` (`<BS>`) | `\r`, `\t`, `ESC`, ` `, `DEL` |
//! | `<Up>` `<Down>` `<Right>` `<Left>` `<Home>` `<End>` | cursor keys (application mode when the program asked for it) |
//! | `<PageUp>` `<PageDown>` `<Insert>` `<Delete>` (`<Del>`), `<F1>` … `<F12>` | their escape sequences |
//! | `<C-a>` … `<C-z>`, `<C-@>`, `<C-[>`, `<C-\>`, `<C-]>`, `<C-^>`, `<C-_>` | the control character (`<C-c>` interrupts, `<C-d>` ends input) |
//! | `<M-x>` (`<A-x>`) | `ESC` then `x` |
//! | `<lt>` | a literal `<` |
//!
//! Names are case-insensitive. Anything else in angle brackets (`<div>`,
//! `a < b`) is literal text; `<C-…>` or `<M-…>` naming no key is an error,
//! so that a typo is not typed into the program.

use crate::error::{ErrorKind, ExecError};

/// Input encoded for the terminal, and what a shell reading it would be
/// given as command text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct EncodedInput {
    /// The bytes to write to the terminal.
    pub(crate) bytes: Vec<u8>,
    /// The text typed, with Enter, `<C-c>` and `<C-u>` as line breaks and
    /// other control keys left out: what a shell at its prompt would run.
    pub(crate) typed: String,
    /// Whether keys that edit or recall a line (Tab, cursor keys, history,
    /// Backspace, …) were sent: the command a shell ends up running is then
    /// not the typed text.
    pub(crate) edits: bool,
}

/// Encodes `input`. With `application_cursor` the cursor keys send the
/// sequences of the terminal's application mode (`ESC O A`), as a program
/// that asked for it (`vim`, `less`) expects.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`] for a `<C-…>`, `<M-…>` or `<F…>` naming no key.
pub(crate) fn encode(input: &str, application_cursor: bool) -> Result<EncodedInput, ExecError> {
    let mut out = EncodedInput::default();
    let mut rest = input;
    while let Some(open) = rest.find('<') {
        push_text(&mut out, &rest[..open]);
        let after = &rest[open + 1..];
        let name = after.find('>').map(|close| &after[..close]);
        match name.map(|n| key(n, application_cursor)).transpose()? {
            Some(Some(key)) => {
                out.bytes.extend_from_slice(&key.bytes);
                match key.effect {
                    Effect::Text(text) => out.typed.push_str(text),
                    Effect::LineBreak => out.typed.push('\n'),
                    Effect::Edit => out.edits = true,
                    Effect::Control => {}
                }
                rest = &after[name.map_or(0, str::len) + 1..];
            }
            _ => {
                push_text(&mut out, "<");
                rest = after;
            }
        }
    }
    push_text(&mut out, rest);
    Ok(out)
}

fn push_text(out: &mut EncodedInput, text: &str) {
    for c in text.chars() {
        if c == '\n' {
            out.bytes.push(b'\r');
            out.typed.push('\n');
        } else {
            let mut buf = [0; 4];
            out.bytes
                .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            out.typed.push(c);
        }
    }
}

struct Key {
    bytes: Vec<u8>,
    effect: Effect,
}

/// What a key does to the command line a shell would read.
enum Effect {
    Text(&'static str),
    LineBreak,
    Edit,
    Control,
}

/// The key `name` names; `Ok(None)` for text that names no key.
fn key(name: &str, application_cursor: bool) -> Result<Option<Key>, ExecError> {
    let lower = name.to_ascii_lowercase();
    let key = |bytes: &[u8], effect| {
        Ok(Some(Key {
            bytes: bytes.to_vec(),
            effect,
        }))
    };
    let cursor = |letter: u8| {
        let bytes = if application_cursor {
            vec![0x1b, b'O', letter]
        } else {
            vec![0x1b, b'[', letter]
        };
        Ok(Some(Key {
            bytes,
            effect: Effect::Edit,
        }))
    };
    match lower.as_str() {
        "enter" | "return" | "cr" => return key(b"\r", Effect::LineBreak),
        "tab" => return key(b"\t", Effect::Edit),
        "esc" | "escape" => return key(b"\x1b", Effect::Edit),
        "space" => return key(b" ", Effect::Text(" ")),
        "backspace" | "bs" => return key(b"\x7f", Effect::Edit),
        "lt" => return key(b"<", Effect::Text("<")),
        "up" => return cursor(b'A'),
        "down" => return cursor(b'B'),
        "right" => return cursor(b'C'),
        "left" => return cursor(b'D'),
        "home" => return cursor(b'H'),
        "end" => return cursor(b'F'),
        "pageup" => return key(b"\x1b[5~", Effect::Edit),
        "pagedown" => return key(b"\x1b[6~", Effect::Edit),
        "insert" => return key(b"\x1b[2~", Effect::Edit),
        "delete" | "del" => return key(b"\x1b[3~", Effect::Edit),
        _ => {}
    }
    let invalid = || {
        Err(ExecError::new(
            ErrorKind::InvalidInput,
            format!("unknown key <{name}> in input; write <lt> for a literal <"),
        ))
    };
    if let Some(n) = lower.strip_prefix('f').filter(|n| !n.is_empty()) {
        if !n.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(None);
        }
        let bytes: &[u8] = match n {
            "1" => b"\x1bOP",
            "2" => b"\x1bOQ",
            "3" => b"\x1bOR",
            "4" => b"\x1bOS",
            "5" => b"\x1b[15~",
            "6" => b"\x1b[17~",
            "7" => b"\x1b[18~",
            "8" => b"\x1b[19~",
            "9" => b"\x1b[20~",
            "10" => b"\x1b[21~",
            "11" => b"\x1b[23~",
            "12" => b"\x1b[24~",
            _ => return invalid(),
        };
        return key(bytes, Effect::Edit);
    }
    if let Some(c) = lower.strip_prefix("c-") {
        let byte = match c.as_bytes() {
            [b @ b'a'..=b'z'] => b - b'a' + 1,
            [b'@'] | [b' '] => 0,
            [b'['] => 0x1b,
            [b'\\'] => 0x1c,
            [b']'] => 0x1d,
            [b'^'] => 0x1e,
            [b'_'] => 0x1f,
            _ => return invalid(),
        };
        // Interrupt and kill-line end the line a shell was reading; the
        // others (end of input, suspend, …) send nothing to run.
        let effect = match byte {
            0x03 | 0x15 => Effect::LineBreak,
            0x0d | 0x0a => Effect::LineBreak,
            0x04 | 0x1a | 0x1c => Effect::Control,
            _ => Effect::Edit,
        };
        return key(&[byte], effect);
    }
    if let Some(c) = lower
        .strip_prefix("m-")
        .or_else(|| lower.strip_prefix("a-"))
    {
        // The character as written (not lowered): Meta-Shift-x is ESC X.
        let original = &name[2..];
        if c.chars().count() != 1 {
            return invalid();
        }
        let mut bytes = vec![0x1b];
        bytes.extend_from_slice(original.as_bytes());
        return key(&bytes, Effect::Edit);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(input: &str) -> Vec<u8> {
        encode(input, false).unwrap().bytes
    }

    #[test]
    fn text_and_named_keys() {
        assert_eq!(bytes("print(1)<Enter>"), b"print(1)\r");
        assert_eq!(bytes("a\nb"), b"a\rb");
        assert_eq!(bytes("<C-c><c-D><Tab><esc>"), b"\x03\x04\t\x1b");
        assert_eq!(
            bytes("<Up><Down><Left><Right>"),
            b"\x1b[A\x1b[B\x1b[D\x1b[C"
        );
        assert_eq!(encode("<Up>", true).unwrap().bytes, b"\x1bOA");
        assert_eq!(bytes("<M-b><F1><F12><Del>"), b"\x1bb\x1bOP\x1b[24~\x1b[3~");
        assert_eq!(bytes("<lt>Enter>"), b"<Enter>");
    }

    #[test]
    fn angle_brackets_that_name_no_key_are_text() {
        assert_eq!(bytes("<div>a < b</div>"), b"<div>a < b</div>");
        assert_eq!(bytes("x <"), b"x <");
        assert_eq!(bytes("<>"), b"<>");
        assert_eq!(bytes("<Fun>"), b"<Fun>");
    }

    #[test]
    fn a_mistyped_key_is_an_error_not_text() {
        for bad in ["<C-1>", "<C-ab>", "<M-xy>", "<F13>"] {
            let err = encode(bad, false).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad}");
            assert!(err.message().contains("unknown key"), "{}", err.message());
        }
    }

    #[test]
    fn typed_text_is_what_a_shell_would_run() {
        let e = encode("rm -rf x<C-c>ls<Enter>", false).unwrap();
        assert_eq!(e.typed, "rm -rf x\nls\n");
        assert!(!e.edits);
        let e = encode("rm -r<Tab><Enter>", false).unwrap();
        assert!(e.edits);
        let e = encode("<Up><Enter>", false).unwrap();
        assert!(e.edits);
        let e = encode("<C-d>", false).unwrap();
        assert_eq!(e.typed, "");
        assert!(!e.edits);
    }
}
