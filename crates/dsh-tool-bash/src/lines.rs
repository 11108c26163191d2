//! Terminal text collapsed to what the lines finally showed.
//!
//! A program in a terminal redraws: a progress bar returns to the start of
//! its line (`\r`) and prints the next state, an echo of Backspace moves
//! back over a character. The model should read the last state of each
//! line, not every frame. [`LineCollapser`] takes decoded text (escape
//! sequences already removed) and emits finished lines; the line still
//! being drawn stays [`pending`](LineCollapser::pending).
//!
//! Rules: `\r\n` is a line break; `\r` followed by anything else starts the
//! line over (what `\r` plus erase-to-end-of-line, the progress-bar idiom,
//! shows); Backspace removes the character before it (`\b \b`, the echo of
//! an erase, leaves the line as the terminal shows it). A line longer than
//! the limit is emitted as it stands, so memory stays bounded. Programs that
//! move the cursor elsewhere (TUIs) are what the rendered screen is for.

/// Collapses redrawn lines; see the [module documentation](self).
#[derive(Debug)]
pub(crate) struct LineCollapser {
    line: Vec<u8>,
    /// A `\r` came last: the next character starts the line over, unless it
    /// is `\n`.
    carriage_return: bool,
    max_line: usize,
}

impl LineCollapser {
    /// A collapser emitting lines of at most about `max_line` bytes.
    pub(crate) fn new(max_line: usize) -> Self {
        Self {
            line: Vec::new(),
            carriage_return: false,
            max_line: max_line.max(1),
        }
    }

    /// Feeds valid UTF-8 text; `emit` gets each finished line, `\n` included.
    pub(crate) fn feed(&mut self, text: &[u8], mut emit: impl FnMut(&[u8])) {
        for &byte in text {
            if self.carriage_return && byte != b'\n' && byte != b'\r' {
                self.line.clear();
            }
            self.carriage_return = false;
            match byte {
                b'\n' => {
                    self.line.push(b'\n');
                    emit(&self.line);
                    self.line.clear();
                }
                b'\r' => self.carriage_return = true,
                0x08 => {
                    // Back over one character (all its bytes).
                    while let Some(b) = self.line.pop() {
                        if b & 0xC0 != 0x80 {
                            break;
                        }
                    }
                }
                _ => {
                    // Cut only before a character's first byte.
                    if byte & 0xC0 != 0x80 && self.line.len() >= self.max_line {
                        emit(&self.line);
                        self.line.clear();
                    }
                    self.line.push(byte);
                }
            }
        }
    }

    /// The line being drawn (no `\n` yet).
    pub(crate) fn pending(&self) -> &[u8] {
        &self.line
    }

    /// Ends the text: the pending line, if any, is emitted as it stands.
    pub(crate) fn finish(&mut self, mut emit: impl FnMut(&[u8])) {
        if !self.line.is_empty() {
            emit(&self.line);
            self.line.clear();
        }
        self.carriage_return = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collapse(chunks: &[&str]) -> (String, String) {
        let mut c = LineCollapser::new(1000);
        let mut out = Vec::new();
        for chunk in chunks {
            c.feed(chunk.as_bytes(), |l| out.extend_from_slice(l));
        }
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(c.pending().to_vec()).unwrap(),
        )
    }

    #[test]
    fn progress_lines_collapse_to_their_last_state() {
        assert_eq!(
            collapse(&["get  10%\rget  50%\r", "get 100%\r\ndone\r\n"]),
            ("get 100%\ndone\n".into(), String::new())
        );
        assert_eq!(collapse(&["a\rb"]), (String::new(), "b".into()));
        // The state at the moment of reading, when the bar is still going.
        assert_eq!(collapse(&["50%\r"]), (String::new(), "50%".into()));
    }

    #[test]
    fn backspace_echo_erases_characters() {
        assert_eq!(collapse(&["abc\x08 \x08\x08 \x08d"]).1, "ad");
        assert_eq!(collapse(&["é\x08x"]).1, "x");
    }

    #[test]
    fn prompts_stay_pending_until_their_line_ends() {
        assert_eq!(collapse(&[">>> "]), (String::new(), ">>> ".into()));
        assert_eq!(
            collapse(&[">>> ", "x=1\r\n>>> "]),
            (">>> x=1\n".into(), ">>> ".into())
        );
    }

    #[test]
    fn long_lines_are_cut_on_character_boundaries() {
        let mut c = LineCollapser::new(4);
        let mut out = Vec::new();
        c.feed("abcé€x".as_bytes(), |l| {
            out.push(String::from_utf8(l.to_vec()).unwrap())
        });
        assert_eq!(out, ["abcé"]);
        assert_eq!(c.pending(), "€x".as_bytes());
        c.finish(|l| out.push(String::from_utf8(l.to_vec()).unwrap()));
        assert_eq!(out, ["abcé", "€x"]);
    }
}
