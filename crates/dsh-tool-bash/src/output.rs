//! From raw pipe bytes to what the model sees, in bounded memory.
//!
//! Every chunk a command writes goes, in this order, through:
//!
//! 1. [`Spill`]: the raw bytes, unchanged, to a spill file (created only once a
//!    stream outgrows the model's budget; capped);
//! 2. [`AnsiStripper`]: terminal escape sequences removed;
//! 3. [`Utf8Decoder`]: invalid UTF-8 replaced by U+FFFD, remembering that it
//!    happened; a character split across two chunks is put back together;
//! 4. [`HeadTail`] (foreground calls) or the background log: the first and the
//!    last bytes of the text, in fixed-size buffers.
//!
//! Nothing here grows with the size of the output.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The replacement character, UTF-8 encoded.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// The line that stands for bytes left out of a stream.
pub(crate) fn omitted_marker(bytes: u64) -> String {
    format!("[… {bytes} bytes omitted …]")
}

// ---------------------------------------------------------------- ANSI

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AnsiState {
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (`ESC ( B`).
    EscapeIntermediate,
    /// Control Sequence: `ESC [` params intermediates final.
    Csi,
    /// String sequences (OSC, DCS, SOS, PM, APC) until BEL or ST.
    Str,
    /// ESC seen inside a string sequence: `\` ends it (ST).
    StrEscape,
}

/// Removes ECMA-48 escape sequences from a byte stream, chunk by chunk.
///
/// Handles CSI (`ESC [ … final`), OSC and the other string sequences (`ESC ]`,
/// `ESC P`, `ESC X`, `ESC ^`, `ESC _`, ended by BEL or `ESC \`) and two- or
/// three-byte escapes (`ESC c`, `ESC ( B`). A string sequence also ends at a
/// newline, so a stray `ESC ]` cannot swallow the rest of the output. Other
/// control characters (`\r`, `\t`, backspace) are kept. 8-bit C1 controls are
/// left alone: in UTF-8 text those bytes are continuation bytes.
#[derive(Debug)]
pub(crate) struct AnsiStripper {
    state: AnsiState,
}

impl AnsiStripper {
    pub(crate) fn new() -> Self {
        Self {
            state: AnsiState::Ground,
        }
    }

    /// Feeds `input`; `emit` receives the text between escape sequences.
    pub(crate) fn strip(&mut self, input: &[u8], mut emit: impl FnMut(&[u8])) {
        const ESC: u8 = 0x1b;
        let mut i = 0;
        while i < input.len() {
            if self.state == AnsiState::Ground {
                match find_esc(&input[i..]) {
                    Some(at) => {
                        if at > 0 {
                            emit(&input[i..i + at]);
                        }
                        i += at + 1;
                        self.state = AnsiState::Escape;
                    }
                    None => {
                        emit(&input[i..]);
                        return;
                    }
                }
                continue;
            }
            let b = input[i];
            i += 1;
            self.state = match self.state {
                AnsiState::Ground => AnsiState::Ground,
                AnsiState::Escape => match b {
                    b'[' => AnsiState::Csi,
                    b']' | b'P' | b'X' | b'^' | b'_' => AnsiState::Str,
                    0x20..=0x2f => AnsiState::EscapeIntermediate,
                    ESC => AnsiState::Escape,
                    0x30..=0x7e => AnsiState::Ground,
                    _ => {
                        emit(&[b]);
                        AnsiState::Ground
                    }
                },
                AnsiState::EscapeIntermediate => match b {
                    0x20..=0x2f => AnsiState::EscapeIntermediate,
                    0x30..=0x7e => AnsiState::Ground,
                    ESC => AnsiState::Escape,
                    _ => {
                        emit(&[b]);
                        AnsiState::Ground
                    }
                },
                AnsiState::Csi => match b {
                    0x20..=0x3f => AnsiState::Csi,
                    0x40..=0x7e => AnsiState::Ground,
                    ESC => AnsiState::Escape,
                    _ => {
                        emit(&[b]);
                        AnsiState::Ground
                    }
                },
                AnsiState::Str => match b {
                    0x07 => AnsiState::Ground,
                    ESC => AnsiState::StrEscape,
                    b'\n' => {
                        emit(b"\n");
                        AnsiState::Ground
                    }
                    _ => AnsiState::Str,
                },
                AnsiState::StrEscape => {
                    if b == b'\\' {
                        AnsiState::Ground
                    } else {
                        // Not ST: the ESC starts a new sequence; look at `b` again.
                        i -= 1;
                        AnsiState::Escape
                    }
                }
            };
        }
    }
}

/// Index of the first ESC byte, eight bytes at a time.
fn find_esc(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const ESCS: u64 = ONES * 0x1b;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        // Zero bytes of `x` are the ESC bytes of the chunk; this is non-zero
        // exactly when `x` has a zero byte.
        let x = u64::from_le_bytes(word) ^ ESCS;
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            return chunk.iter().position(|&b| b == 0x1b).map(|at| offset + at);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == 0x1b)
        .map(|at| offset + at)
}

// ---------------------------------------------------------------- UTF-8

/// Length of the UTF-8 sequence a lead byte announces (0 for a non-lead byte).
fn utf8_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 0,
    }
}

/// Decodes a byte stream as UTF-8, chunk by chunk, replacing invalid bytes with
/// U+FFFD. Everything it emits is valid UTF-8, and it never emits part of a
/// character.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    pending: [u8; 4],
    pending_len: usize,
    /// How many times bytes were replaced so far.
    replacements: u64,
}

impl Utf8Decoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Whether any byte was replaced so far.
    pub(crate) fn replaced(&self) -> bool {
        self.replacements > 0
    }

    /// How many times bytes were replaced so far (grows with every replacement).
    pub(crate) fn replacements(&self) -> u64 {
        self.replacements
    }

    /// Feeds `input`; `emit` receives valid UTF-8.
    pub(crate) fn feed(&mut self, mut input: &[u8], mut emit: impl FnMut(&[u8])) {
        if self.pending_len > 0 {
            let need = utf8_width(self.pending[0]).max(2);
            while self.pending_len < need {
                match input.first() {
                    Some(&b) if b & 0xc0 == 0x80 => {
                        self.pending[self.pending_len] = b;
                        self.pending_len += 1;
                        input = &input[1..];
                    }
                    Some(_) => break,
                    None => return,
                }
            }
            if self.pending_len == need && std::str::from_utf8(&self.pending[..need]).is_ok() {
                emit(&self.pending[..need]);
            } else {
                emit(REPLACEMENT);
                self.replacements += 1;
            }
            self.pending_len = 0;
        }
        loop {
            match std::str::from_utf8(input) {
                Ok(_) => {
                    if !input.is_empty() {
                        emit(input);
                    }
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    if valid > 0 {
                        emit(&input[..valid]);
                    }
                    match e.error_len() {
                        Some(bad) => {
                            emit(REPLACEMENT);
                            self.replacements += 1;
                            input = &input[valid + bad..];
                        }
                        None => {
                            let rest = &input[valid..];
                            self.pending[..rest.len()].copy_from_slice(rest);
                            self.pending_len = rest.len();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream: an incomplete character left over becomes U+FFFD.
    pub(crate) fn finish(&mut self, mut emit: impl FnMut(&[u8])) {
        if self.pending_len > 0 {
            self.pending_len = 0;
            self.replacements += 1;
            emit(REPLACEMENT);
        }
    }
}

/// The largest index `<= at` that starts a character of `text` (valid UTF-8).
pub(crate) fn floor_char_boundary(text: &[u8], at: usize) -> usize {
    let mut at = at.min(text.len());
    while at > 0 && at < text.len() && text[at] & 0xc0 == 0x80 {
        at -= 1;
    }
    at
}

/// The smallest index `>= at` that starts a character of `text`.
pub(crate) fn ceil_char_boundary(text: &[u8], at: usize) -> usize {
    let mut at = at.min(text.len());
    while at < text.len() && text[at] & 0xc0 == 0x80 {
        at += 1;
    }
    at
}

/// Text from bytes this module produced (always valid UTF-8 after boundary
/// cuts); lossy just in case, so that no input can make it panic.
pub(crate) fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

// ---------------------------------------------------------------- ring

/// The last `capacity` bytes pushed into it.
#[derive(Debug)]
pub(crate) struct Ring {
    buf: Vec<u8>,
    capacity: usize,
    /// Index of the oldest byte once the buffer is full.
    start: usize,
}

impl Ring {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            buf: Vec::new(),
            capacity,
            start: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn push(&mut self, mut data: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        if data.len() >= self.capacity {
            data = &data[data.len() - self.capacity..];
            self.buf.clear();
            self.buf.extend_from_slice(data);
            self.start = 0;
            return;
        }
        let room = self.capacity - self.buf.len();
        if room > 0 {
            let now = room.min(data.len());
            self.buf.extend_from_slice(&data[..now]);
            data = &data[now..];
        }
        // Full: overwrite the oldest bytes, wrapping around.
        while !data.is_empty() {
            let now = (self.capacity - self.start).min(data.len());
            self.buf[self.start..self.start + now].copy_from_slice(&data[..now]);
            self.start = (self.start + now) % self.capacity;
            data = &data[now..];
        }
    }

    /// The last `n` bytes (or all, if fewer), oldest first.
    pub(crate) fn last(&self, n: usize) -> Vec<u8> {
        let n = n.min(self.buf.len());
        let mut all = Vec::with_capacity(self.buf.len());
        all.extend_from_slice(&self.buf[self.start..]);
        all.extend_from_slice(&self.buf[..self.start]);
        all.split_off(all.len() - n)
    }
}

// ---------------------------------------------------------------- head + tail

/// Bytes of a budget given to the head; the tail gets the rest.
pub(crate) fn head_budget(max: usize) -> usize {
    max / 4
}

/// Keeps what the model will see of one foreground stream: if the text fits in
/// `max` bytes, all of it; otherwise its first quarter and last three quarters.
#[derive(Debug)]
pub(crate) struct HeadTail {
    max: usize,
    head: Vec<u8>,
    tail: Ring,
    total: u64,
}

impl HeadTail {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max,
            head: Vec::new(),
            tail: Ring::new(max - head_budget(max)),
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, text: &[u8]) {
        self.total += text.len() as u64;
        if self.head.len() < self.max {
            let take = (self.max - self.head.len()).min(text.len());
            self.head.extend_from_slice(&text[..take]);
        }
        self.tail.push(text);
    }

    /// Whether the text outgrew the budget.
    pub(crate) fn truncated(&self) -> bool {
        self.total > self.max as u64
    }

    /// The text to show and the number of bytes left out of it.
    pub(crate) fn render(&self) -> (String, u64) {
        if !self.truncated() {
            return (text_of(&self.head), 0);
        }
        let head_end = floor_char_boundary(&self.head, head_budget(self.max));
        let head = &self.head[..head_end];
        let tail_all = self.tail.last(self.max - head_budget(self.max));
        let tail = &tail_all[ceil_char_boundary(&tail_all, 0)..];
        let omitted = self.total - head.len() as u64 - tail.len() as u64;
        (join_head_tail(head, omitted, tail), omitted)
    }
}

/// `head`, the omission marker on its own line, then `tail`.
pub(crate) fn join_head_tail(head: &[u8], omitted: u64, tail: &[u8]) -> String {
    let mut out = text_of(head);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&omitted_marker(omitted));
    out.push('\n');
    out.push_str(&text_of(tail));
    out
}

// ---------------------------------------------------------------- spill

/// A file holding the raw bytes of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpillFile {
    /// Where it is (inside the executor's private directory).
    pub path: PathBuf,
    /// How many bytes it holds.
    pub bytes: u64,
    /// `false` when the stream was longer than the spill cap, so the file holds
    /// only its first `bytes` bytes.
    pub complete: bool,
}

/// Chunks queued for a spill writer thread, at most (each up to a read's size).
const SPILL_QUEUE: usize = 16;

/// Where spilled bytes go: a thread that writes them (so that reading the
/// pipe goes on while the disk catches up), or the file itself.
#[derive(Debug)]
enum SpillSink {
    Thread {
        queue: std::sync::mpsc::SyncSender<Vec<u8>>,
        writer: std::thread::JoinHandle<()>,
        error: std::sync::Arc<std::sync::Mutex<Option<io::Error>>>,
    },
    File(File),
}

impl SpillSink {
    fn new(file: File) -> SpillSink {
        let (queue, chunks) = std::sync::mpsc::sync_channel::<Vec<u8>>(SPILL_QUEUE);
        let error = std::sync::Arc::new(std::sync::Mutex::new(None));
        let thread_error = std::sync::Arc::clone(&error);
        let mut thread_file = match file.try_clone() {
            Ok(clone) => clone,
            Err(_) => return SpillSink::File(file),
        };
        let spawned = std::thread::Builder::new()
            .name("dsh-bash-spill".into())
            .spawn(move || {
                for chunk in chunks {
                    if let Err(e) = thread_file.write_all(&chunk) {
                        if let Ok(mut slot) = thread_error.lock() {
                            *slot = Some(e);
                        }
                        return;
                    }
                }
            });
        match spawned {
            Ok(writer) => SpillSink::Thread {
                queue,
                writer,
                error,
            },
            Err(_) => SpillSink::File(file),
        }
    }

    fn write(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            SpillSink::File(file) => file.write_all(data),
            SpillSink::Thread { queue, error, .. } => {
                if let Some(e) = error.lock().ok().and_then(|mut slot| slot.take()) {
                    return Err(e);
                }
                // Blocks while the queue is full: the disk sets the pace.
                queue
                    .send(data.to_vec())
                    .map_err(|_| io::Error::other("the spill writer stopped"))
            }
        }
    }

    /// Waits until everything queued is written.
    fn close(self) -> io::Result<()> {
        match self {
            SpillSink::File(mut file) => file.flush(),
            SpillSink::Thread {
                queue,
                writer,
                error,
            } => {
                drop(queue);
                let _ = writer.join();
                match error.lock().ok().and_then(|mut slot| slot.take()) {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Writes a raw stream to a spill file, opened only once the stream is longer
/// than `threshold` bytes (or when asked to), capped at `cap` bytes.
#[derive(Debug)]
pub(crate) struct Spill {
    path: PathBuf,
    threshold: usize,
    cap: u64,
    /// Raw bytes held until the file opens (at most `threshold`).
    pending: Vec<u8>,
    sink: Option<SpillSink>,
    /// Whether the file was created.
    opened: bool,
    /// Whether the stream ended (no more bytes will come).
    sealed: bool,
    written: u64,
    total: u64,
    error: Option<String>,
}

impl Spill {
    pub(crate) fn new(path: PathBuf, threshold: usize, cap: u64) -> Self {
        Self {
            path,
            threshold,
            cap,
            pending: Vec::new(),
            sink: None,
            opened: false,
            sealed: false,
            written: 0,
            total: 0,
            error: None,
        }
    }

    /// How many raw bytes went through.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    pub(crate) fn push(&mut self, raw: &[u8]) {
        self.total += raw.len() as u64;
        if self.error.is_some() || self.sealed {
            return;
        }
        if !self.opened {
            if self.pending.len() + raw.len() <= self.threshold {
                self.pending.extend_from_slice(raw);
                return;
            }
            if let Err(e) = self.open() {
                self.fail(e);
                return;
            }
        }
        self.write(raw);
    }

    fn open(&mut self) -> io::Result<()> {
        let file = create_private_file(&self.path)?;
        self.opened = true;
        self.sink = Some(SpillSink::new(file));
        let pending = std::mem::take(&mut self.pending);
        self.write(&pending);
        Ok(())
    }

    fn write(&mut self, data: &[u8]) {
        let room = self.cap.saturating_sub(self.written);
        let now = (data.len() as u64).min(room) as usize;
        if now == 0 {
            return;
        }
        if let Some(sink) = self.sink.as_mut() {
            match sink.write(&data[..now]) {
                Ok(()) => self.written += now as u64,
                Err(e) => self.fail(e),
            }
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.error = Some(format!("{}: {e}", self.path.display()));
        self.sink = None;
        self.pending = Vec::new();
    }

    /// Waits until everything sent to the file is written.
    fn close_sink(&mut self) {
        if let Some(sink) = self.sink.take() {
            if let Err(e) = sink.close() {
                self.fail(e);
            }
        }
    }

    fn file(&self) -> Result<Option<SpillFile>, String> {
        match &self.error {
            Some(err) => Err(err.clone()),
            None => Ok(Some(SpillFile {
                path: self.path.clone(),
                bytes: self.written,
                complete: self.written == self.total,
            })),
        }
    }

    /// Marks the end of the stream and waits for the file to be written.
    pub(crate) fn seal(&mut self) {
        self.sealed = true;
        self.close_sink();
    }

    /// Ends the stream. With `keep`, makes sure a file holds the whole stream
    /// (up to the cap) and returns it; without, removes any file written.
    pub(crate) fn finish(&mut self, keep: bool) -> Result<Option<SpillFile>, String> {
        if !keep {
            self.sealed = true;
            self.sink = None;
            if self.opened {
                let _ = std::fs::remove_file(&self.path);
            }
            self.pending = Vec::new();
            return Ok(None);
        }
        let spill = self.persist();
        self.seal();
        spill?;
        self.file()
    }

    /// Makes sure a spill file exists and receives the stream from now on;
    /// returns it (while the stream runs, its last bytes may still be on
    /// their way to the disk).
    pub(crate) fn persist(&mut self) -> Result<Option<SpillFile>, String> {
        if self.error.is_none() && !self.opened {
            if let Err(e) = self.open() {
                self.fail(e);
            }
            if self.sealed {
                self.close_sink();
            }
        }
        self.file()
    }
}

/// Creates `path` for writing, mode 0600, failing if it exists.
pub(crate) fn create_private_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

// ---------------------------------------------------------------- one stream

/// One foreground stream as the model sees it, with what was done to it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamOutput {
    /// The text shown to the model: escape sequences removed, invalid UTF-8
    /// replaced, and — past the budget — head, omission marker, tail.
    pub text: String,
    /// Bytes the command wrote to the stream.
    pub raw_bytes: u64,
    /// Bytes of text after stripping and decoding, before truncation.
    pub text_bytes: u64,
    /// Bytes of text left out of [`text`](Self::text) (0 when not truncated).
    pub omitted_bytes: u64,
    /// Whether invalid UTF-8 was replaced by U+FFFD.
    pub lossy: bool,
    /// The spill file holding the raw stream, when the text was truncated.
    pub spill: Option<SpillFile>,
    /// Why the spill file could not be written, when it could not.
    pub spill_error: Option<String>,
}

impl StreamOutput {
    /// Whether the model sees only part of the stream.
    pub fn truncated(&self) -> bool {
        self.omitted_bytes > 0
    }
}

/// The whole pipeline for one foreground stream.
#[derive(Debug)]
pub(crate) struct StreamCapture {
    spill: Spill,
    ansi: AnsiStripper,
    utf8: Utf8Decoder,
    text: HeadTail,
}

impl StreamCapture {
    pub(crate) fn new(max_bytes: usize, spill_path: PathBuf, spill_cap: u64) -> Self {
        Self {
            spill: Spill::new(spill_path, max_bytes, spill_cap),
            ansi: AnsiStripper::new(),
            utf8: Utf8Decoder::new(),
            text: HeadTail::new(max_bytes),
        }
    }

    pub(crate) fn push(&mut self, raw: &[u8]) {
        self.spill.push(raw);
        let Self {
            ansi, utf8, text, ..
        } = self;
        ansi.strip(raw, |clean| utf8.feed(clean, |valid| text.push(valid)));
    }

    pub(crate) fn finish(mut self) -> StreamOutput {
        let Self { utf8, text, .. } = &mut self;
        utf8.finish(|valid| text.push(valid));
        let truncated = self.text.truncated();
        let (spill, spill_error) = match self.spill.finish(truncated) {
            Ok(spill) => (spill, None),
            Err(e) => (None, Some(e)),
        };
        let (shown, omitted) = self.text.render();
        StreamOutput {
            text: shown,
            raw_bytes: self.spill.total(),
            text_bytes: self.text.total,
            omitted_bytes: omitted,
            lossy: self.utf8.replaced(),
            spill,
            spill_error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip_all(chunks: &[&[u8]]) -> Vec<u8> {
        let mut s = AnsiStripper::new();
        let mut out = Vec::new();
        for c in chunks {
            s.strip(c, |b| out.extend_from_slice(b));
        }
        out
    }

    #[test]
    fn strips_csi_osc_and_short_escapes() {
        assert_eq!(strip_all(&[b"\x1b[1;31mred\x1b[0m plain"]), b"red plain");
        assert_eq!(
            strip_all(&[b"\x1b]8;;http://x\x07link\x1b]8;;\x1b\\ end"]),
            b"link end"
        );
        assert_eq!(strip_all(&[b"a\x1b(Bb\x1bcc\x1b[?25lz"]), b"abcz");
        assert_eq!(strip_all(&[b"keep\r\tthis\x08"]), b"keep\r\tthis\x08");
    }

    #[test]
    fn finds_esc_anywhere() {
        for len in 0..40 {
            for at in 0..len {
                let mut bytes = vec![b'x'; len];
                bytes[at] = 0x1b;
                assert_eq!(find_esc(&bytes), Some(at), "{len} {at}");
            }
            assert_eq!(find_esc(&vec![0x9b; len]), None);
        }
    }

    #[test]
    fn strips_sequences_split_across_chunks() {
        assert_eq!(
            strip_all(&[b"x\x1b", b"[3", b"2mgreen\x1b]0;ti", b"tle\x1b", b"\\y"]),
            b"xgreeny"
        );
    }

    #[test]
    fn unterminated_string_sequence_ends_at_newline() {
        assert_eq!(
            strip_all(&[b"\x1b]junk without end\nnext line"]),
            b"\nnext line"
        );
    }

    fn decode_all(chunks: &[&[u8]]) -> (String, bool) {
        let mut d = Utf8Decoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, |b| {
                assert!(std::str::from_utf8(b).is_ok());
                out.extend_from_slice(b)
            });
        }
        d.finish(|b| out.extend_from_slice(b));
        (String::from_utf8(out).unwrap(), d.replaced())
    }

    #[test]
    fn joins_characters_split_across_chunks() {
        let euro = "€".as_bytes();
        assert_eq!(
            decode_all(&[&euro[..1], &euro[1..2], &euro[2..]]),
            ("€".into(), false)
        );
        let crab = "a🦀b".as_bytes();
        assert_eq!(
            decode_all(&[&crab[..3], &crab[3..]]),
            ("a🦀b".into(), false)
        );
    }

    #[test]
    fn replaces_invalid_bytes() {
        assert_eq!(decode_all(&[b"a\xffb"]), ("a\u{FFFD}b".into(), true));
        assert_eq!(
            decode_all(&[b"a\xe2\x82", b"b"]),
            ("a\u{FFFD}b".into(), true)
        );
        assert_eq!(decode_all(&[b"end\xe2\x82"]), ("end\u{FFFD}".into(), true));
    }

    #[test]
    fn ring_keeps_the_last_bytes() {
        let mut r = Ring::new(5);
        r.push(b"abc");
        assert_eq!(r.last(10), b"abc");
        r.push(b"defg");
        assert_eq!(r.last(10), b"cdefg");
        r.push(b"h");
        assert_eq!(r.last(3), b"fgh");
        r.push(b"0123456789");
        assert_eq!(r.last(5), b"56789");
    }

    #[test]
    fn head_tail_at_and_over_the_budget() {
        let mut h = HeadTail::new(8);
        h.push(b"abcdefgh");
        assert_eq!(h.render(), ("abcdefgh".into(), 0));
        h.push(b"i");
        assert_eq!(h.render(), ("ab\n[… 1 bytes omitted …]\ndefghi".into(), 1));
    }

    #[test]
    fn head_tail_never_splits_a_character() {
        let mut h = HeadTail::new(8);
        h.push("aééééé".as_bytes()); // 11 bytes: the head cut falls inside "é"
        assert_eq!(h.render(), ("a\n[… 4 bytes omitted …]\nééé".into(), 4));
        let mut h = HeadTail::new(8);
        h.push("éééééa".as_bytes()); // 11 bytes: the tail cut falls inside "é"
        assert_eq!(h.render(), ("é\n[… 4 bytes omitted …]\nééa".into(), 4));
    }
}
