//! `read`: a file's lines, numbered, a page at a time, in bounded memory.

use crate::records::{ContentHash, EDIT_LIMIT};
use crate::{blocking, failure, Editor, FileTools, MAX_LINE_CHARS};
use base64::Engine;
use dsh_tools::{
    ContentBlock, ErrorCode, Tool, ToolAnnotations, ToolArgs, ToolCallKind, ToolCallPresentation,
    ToolContext, ToolError, ToolLocation,
};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Lines a page holds unless `limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 2_000;
/// The largest image returned as image content (what model services
/// accept per image).
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// How much of a file's start decides whether it is text.
const SNIFF_BYTES: usize = 8 * 1024;

const DESCRIPTION: &str = "\
Reads a file and returns its lines numbered from 1 (like `cat -n`): 2000 lines from the start by \
default; offset is the first line to show (a negative offset counts from the end: -100 shows the \
last 100 lines) and limit how many. Lines longer than 2000 characters are cut, with a marker. An \
answer that would be too long stops early and says which offset to continue from. PNG, JPEG, GIF \
and WebP images come back as images. Other binary files, directories (use glob), devices, FIFOs \
and sockets are refused. Read a file before editing or overwriting it: write and edit refuse a \
file this session has not read, or that changed since.";

/// Arguments of `read`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The file: absolute, or relative to the working directory.
    pub file_path: String,
    /// The first line to show, from 1; negative counts from the end (-100:
    /// the last 100 lines).
    pub offset: Option<i64>,
    /// How many lines to show (default 2000).
    pub limit: Option<u64>,
}

/// The `read` tool.
#[derive(Clone)]
pub struct ReadTool {
    tools: FileTools,
}

impl ReadTool {
    /// `read` over the session's file tools.
    pub fn new(tools: FileTools) -> Self {
        ReadTool { tools }
    }
}

impl Tool for ReadTool {
    type Args = ReadArgs;

    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Read a file".into()),
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        }
    }

    fn is_concurrency_safe(&self, _args: &ReadArgs) -> bool {
        true
    }

    fn present_call(&self, args: &ReadArgs) -> Option<ToolCallPresentation> {
        let range = match (args.offset, args.limit) {
            (Some(o), Some(l)) if o > 0 => format!(" (lines {o}–{})", o as u64 + l.max(1) - 1),
            (Some(o), _) if o < 0 => format!(" (last {} lines)", o.unsigned_abs()),
            (Some(o), None) => format!(" (from line {o})"),
            _ => String::new(),
        };
        Some(ToolCallPresentation {
            title: format!("read {}{range}", args.file_path),
            kind: ToolCallKind::Read,
            locations: vec![ToolLocation {
                path: args.file_path.clone(),
                line: args
                    .offset
                    .and_then(|o| u64::try_from(o).ok())
                    .filter(|&o| o > 0),
            }],
            ..ToolCallPresentation::default()
        })
    }

    async fn call(&self, args: ReadArgs, ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
        let tools = self.tools.clone();
        let path = tools.absolute(&args.file_path);
        let agent = ctx.agent.clone();
        let editor = ctx.extensions.get::<Editor>().cloned();
        let page = match (editor, blocking(move || inspect(&tools, &path)).await?) {
            (_, Inspected::Done(page)) => page,
            (Some(editor), Inspected::Text { physical, .. }) => {
                // The editor's buffer, saved or not, is what the model sees.
                let text = editor.read_text(&physical).await.map_err(|e| {
                    failure(format!(
                        "the editor could not read {}: {e}",
                        physical.display()
                    ))
                })?;
                let bytes = text.into_bytes();
                let hash = crate::content_hash(&bytes);
                let size = bytes.len() as u64;
                let shown = physical.display().to_string();
                let text = text_page(
                    &self.tools,
                    Cursor::new(bytes),
                    size,
                    args.offset,
                    args.limit,
                    &shown,
                )?;
                Page {
                    content: vec![ContentBlock::text(text)],
                    physical,
                    hash: Some(hash),
                }
            }
            (
                None,
                Inspected::Text {
                    file,
                    size,
                    physical,
                    shown,
                },
            ) => {
                let tools = self.tools.clone();
                blocking(move || {
                    let mut file = file;
                    // A file small enough to edit is hashed whole, for the
                    // check before a write; a page may stop anywhere.
                    let hash = if size <= EDIT_LIMIT {
                        Some(hash_from_start(&mut file).map_err(|e| cannot_read(&shown, e))?)
                    } else {
                        None
                    };
                    let text = text_page(&tools, file, size, args.offset, args.limit, &shown)?;
                    Ok(Page {
                        content: vec![ContentBlock::text(text)],
                        physical,
                        hash,
                    })
                })
                .await?
            }
        };
        if let Some(hash) = page.hash {
            self.tools
                .records()
                .saw(agent.as_deref(), &page.physical, hash);
        }
        Ok(page.content)
    }
}

fn cannot_read(shown: &str, e: io::Error) -> ToolError {
    failure(format!("cannot read {shown}: {e}"))
}

/// What the disk says of a file before its text is read.
enum Inspected {
    /// Answered already: an empty file, an image.
    Done(Page),
    /// A text file, open at its start.
    Text {
        file: File,
        size: u64,
        physical: PathBuf,
        shown: String,
    },
}

/// What a read found.
struct Page {
    content: Vec<ContentBlock>,
    /// The file as it is on disk (links resolved), for the read record.
    physical: PathBuf,
    /// The whole content's hash, when the file is small enough to edit.
    hash: Option<ContentHash>,
}

/// Opens `path` for reading without blocking on a FIFO or a device, and
/// refuses whatever is not a regular file.
pub(crate) fn open_regular(path: &Path) -> Result<(File, std::fs::Metadata), ToolError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => failure(format!("{shown} does not exist")),
        _ => failure(format!("cannot read {shown}: {e}")),
    })?;
    refuse_special(path, &meta)?;
    // O_NONBLOCK: a FIFO put there since the check opens without waiting
    // for a writer; the check on the open file below refuses it.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| failure(format!("cannot read {shown}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| failure(format!("cannot read {shown}: {e}")))?;
    refuse_special(path, &meta)?;
    Ok((file, meta))
}

fn refuse_special(path: &Path, meta: &std::fs::Metadata) -> Result<(), ToolError> {
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        return Err(failure(format!(
            "{} is a directory: list it with glob (e.g. pattern \"*\" with this path)",
            path.display()
        )));
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    };
    Err(failure(format!(
        "{} is {what}: read only reads regular files",
        path.display()
    )))
}

fn inspect(tools: &FileTools, path: &Path) -> Result<Inspected, ToolError> {
    let (mut file, meta) = open_regular(path)?;
    let physical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if tools.is_read_denied(&physical) || tools.is_read_denied(path) {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "reading {} is denied: a Read deny rule names it",
                path.display()
            ),
        ));
    }
    let size = meta.len();
    let shown = path.display();
    if size == 0 {
        return Ok(Inspected::Done(Page {
            content: vec![ContentBlock::text(format!("({shown} is empty)"))],
            physical,
            hash: Some(crate::content_hash(b"")),
        }));
    }
    let mut head = vec![0u8; SNIFF_BYTES.min(size as usize)];
    let got = read_up_to(&mut file, &mut head)
        .map_err(|e| failure(format!("cannot read {shown}: {e}")))?;
    head.truncate(got);
    if let Some((mime, kind)) = image_type(&head) {
        if size > MAX_IMAGE_BYTES {
            return Err(failure(format!(
                "{shown} is a {kind} image of {} bytes, more than the {MAX_IMAGE_BYTES} an answer can carry: \
                 make a smaller copy (e.g. with ImageMagick's `convert -resize`) and read that",
                size
            )));
        }
        let mut bytes = head;
        file.read_to_end(&mut bytes)
            .map_err(|e| failure(format!("cannot read {shown}: {e}")))?;
        let hash = crate::content_hash(&bytes);
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        return Ok(Inspected::Done(Page {
            content: vec![
                ContentBlock::image(data, mime),
                ContentBlock::text(format!("({shown}: {kind} image, {size} bytes)")),
            ],
            physical,
            hash: Some(hash),
        }));
    }
    if head.contains(&0) {
        return Err(failure(format!(
            "{shown} is a binary file ({}, {size} bytes): read shows text files and images only",
            binary_type(&head)
        )));
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| cannot_read(&shown.to_string(), e))?;
    Ok(Inspected::Text {
        file,
        size,
        physical,
        shown: shown.to_string(),
    })
}

/// The numbered page of a text, from its start.
fn text_page<R: Read + Seek>(
    tools: &FileTools,
    source: R,
    size: u64,
    offset: Option<i64>,
    limit: Option<u64>,
    shown: &str,
) -> Result<String, ToolError> {
    let limit = limit
        .map_or(DEFAULT_LIMIT, |l| usize::try_from(l).unwrap_or(usize::MAX))
        .max(1);
    let mut reader = LineReader::new(source);
    let start = match offset {
        None | Some(0) => Start::Line(1),
        Some(o) if o > 0 => Start::Line(o as u64),
        Some(_) if size == 0 => Start::Line(1),
        Some(o) => reader
            .start_at_last_lines(o.unsigned_abs(), size)
            .map_err(|e| cannot_read(shown, e))?,
    };
    if size == 0 {
        return Ok(format!("({shown} is empty)"));
    }
    render(tools, &mut reader, start, limit, size, shown).map_err(|e| cannot_read(shown, e))
}

fn hash_from_start<R: Read + Seek>(file: &mut R) -> io::Result<ContentHash> {
    file.seek(SeekFrom::Start(0))?;
    let mut hasher = Sha256::new();
    let mut block = vec![0u8; 256 * 1024];
    loop {
        match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => hasher.update(&block[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    file.seek(SeekFrom::Start(0))?;
    Ok(hasher.finalize().into())
}

fn read_up_to<R: Read>(file: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Where a page starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// At this line number (from 1); the reader is at the file's start.
    Line(u64),
    /// At the reader's position, which is `count` lines before the end of
    /// a file too large to count its lines: numbered from `-count`.
    FromEnd(u64),
}

/// The page's lines, numbered, within the answer budget.
fn render<R: Read + Seek>(
    tools: &FileTools,
    reader: &mut LineReader<R>,
    start: Start,
    limit: usize,
    size: u64,
    shown: &str,
) -> io::Result<String> {
    let budget = tools.config().max_output_chars;
    let (first, from_end) = match start {
        Start::Line(n) => (n, None),
        Start::FromEnd(count) => (1, Some(count)),
    };
    let mut out = String::new();
    if let Some(count) = from_end {
        out.push_str(&format!(
            "[the last {count} lines of {shown} ({size} bytes); a file this large is not counted \
             through, so lines are numbered from the end: -{count} to -1]\n"
        ));
    }
    let mut chars = out.chars().count();
    let mut shown_lines = 0usize;
    let mut lossy = false;
    let mut stopped_for_budget = None;
    let mut more = false;
    let mut line = Line::default();
    while reader.next_line(&mut line)? {
        let number = reader.line_number;
        if number < first {
            continue;
        }
        if shown_lines == limit {
            more = true;
            break;
        }
        let label = match from_end {
            Some(count) => format!("-{}", count + 1 - number),
            None => number.to_string(),
        };
        let rendered = render_line(&label, &line, &mut lossy);
        let len = rendered.chars().count();
        if chars + len > budget && shown_lines > 0 {
            stopped_for_budget = Some(number);
            break;
        }
        chars += len;
        out.push_str(&rendered);
        shown_lines += 1;
    }
    if shown_lines == 0 {
        return Ok(format!(
            "{shown} has {} lines: offset {first} is past its end",
            reader.line_number
        ));
    }
    let last = first + shown_lines as u64 - 1;
    if let Some(next) = stopped_for_budget {
        let next = match from_end {
            Some(count) => format!("-{}", count + 1 - next),
            None => next.to_string(),
        };
        out.push_str(&format!(
            "[… answer cut to stay within {budget} characters: continue with offset={next}, or ask \
             for fewer lines with limit]\n"
        ));
    } else if more && from_end.is_none() {
        if size <= COUNT_LIMIT {
            reader.drain()?;
            out.push_str(&format!(
                "[lines {first}–{last} of {}; read on with offset={}]\n",
                reader.line_number,
                last + 1
            ));
        } else {
            out.push_str(&format!(
                "[lines {first}–{last}; more follow: read on with offset={}]\n",
                last + 1
            ));
        }
    }
    if lossy {
        out.push_str("[the file is not valid UTF-8: invalid bytes are shown as \u{FFFD}]\n");
    }
    if out.ends_with('\n') {
        out.pop();
    }
    Ok(out)
}

/// One numbered line, cut at [`MAX_LINE_CHARS`] characters.
fn render_line(label: &str, line: &Line, lossy: &mut bool) -> String {
    let mut bytes = line.bytes.as_slice();
    if line.dropped == 0 {
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    }
    let text = String::from_utf8_lossy(bytes);
    // Bytes the cut split inside a character are the cut's doing.
    *lossy |= matches!(text, std::borrow::Cow::Owned(_)) && !line.cut_inside_char();
    let mut rendered = format!("{label:>6}\t");
    let mut chars = text.chars();
    rendered.extend(chars.by_ref().take(MAX_LINE_CHARS));
    if line.dropped > 0 || chars.next().is_some() {
        rendered.push_str(&format!(
            " [… line cut at {MAX_LINE_CHARS} characters; the whole line is {} bytes]",
            line.bytes.len() as u64 + line.dropped
        ));
    }
    rendered.push('\n');
    rendered
}

/// Files up to this size are read to the end to count their lines.
const COUNT_LIMIT: u64 = 64 * 1024 * 1024;

/// One line as read: at most enough bytes for [`MAX_LINE_CHARS`]
/// characters, and how many bytes were dropped beyond them.
#[derive(Default)]
struct Line {
    bytes: Vec<u8>,
    dropped: u64,
}

impl Line {
    /// Whether the kept bytes end inside a character (the cut, not the
    /// file, made them invalid).
    fn cut_inside_char(&self) -> bool {
        self.dropped > 0 && std::str::from_utf8(&self.bytes).is_err_and(|e| e.error_len().is_none())
    }
}

/// Reads lines of any length in bounded memory.
struct LineReader<R> {
    reader: BufReader<R>,
    /// The number of the line last read.
    line_number: u64,
}

impl<R: Read + Seek> LineReader<R> {
    fn new(file: R) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, file),
            line_number: 0,
        }
    }

    /// Reads the next line into `line` (without its `\n`); false at the end.
    fn next_line(&mut self, line: &mut Line) -> io::Result<bool> {
        line.bytes.clear();
        line.dropped = 0;
        let cap = MAX_LINE_CHARS * 4 + 4;
        let mut any = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                if any {
                    self.line_number += 1;
                }
                return Ok(any);
            }
            any = true;
            let (take, end) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            let kept = take.min(cap.saturating_sub(line.bytes.len()));
            line.bytes.extend_from_slice(&chunk[..kept]);
            line.dropped += (take - kept) as u64;
            self.reader.consume(if end { take + 1 } else { take });
            if end {
                self.line_number += 1;
                return Ok(true);
            }
        }
    }

    /// Reads to the end, counting lines.
    fn drain(&mut self) -> io::Result<()> {
        let mut line = Line::default();
        while self.next_line(&mut line)? {}
        Ok(())
    }

    /// Positions the reader at the start of the last `count` lines, found
    /// by reading backwards from the end.
    fn start_at_last_lines(&mut self, count: u64, size: u64) -> io::Result<Start> {
        let file = self.reader.get_mut();
        let mut block = vec![0u8; 64 * 1024];
        // A final newline ends the last line; it does not start another.
        file.seek(SeekFrom::Start(size - 1))?;
        let mut last = [0u8; 1];
        read_up_to(file, &mut last)?;
        let mut skip_final = last[0] == b'\n';
        let mut newlines = 0u64;
        let mut pos = size;
        let mut start = 0u64;
        'search: while pos > 0 {
            let len = pos.min(block.len() as u64) as usize;
            pos -= len as u64;
            file.seek(SeekFrom::Start(pos))?;
            let got = read_up_to(file, &mut block[..len])?;
            for i in memchr::memrchr_iter(b'\n', &block[..got]) {
                if skip_final {
                    skip_final = false;
                    continue;
                }
                newlines += 1;
                if newlines == count {
                    start = pos + i as u64 + 1;
                    break 'search;
                }
            }
        }
        // The whole file is fewer lines than asked: it is the page.
        if start == 0 {
            self.reader.seek(SeekFrom::Start(0))?;
            return Ok(Start::Line(1));
        }
        if size <= COUNT_LIMIT {
            // Cheap enough to number the lines truly.
            let before = count_newlines_before(file, start)?;
            self.reader.seek(SeekFrom::Start(start))?;
            self.line_number = before;
            return Ok(Start::Line(before + 1));
        }
        // Seeking the buffered reader also empties its buffer.
        self.reader.seek(SeekFrom::Start(start))?;
        Ok(Start::FromEnd(count))
    }
}

fn count_newlines_before<R: Read + Seek>(file: &mut R, end: u64) -> io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut left = end;
    let mut block = vec![0u8; 256 * 1024];
    let mut count = 0u64;
    while left > 0 {
        let len = left.min(block.len() as u64) as usize;
        let got = read_up_to(file, &mut block[..len])?;
        if got == 0 {
            break;
        }
        count += memchr::memchr_iter(b'\n', &block[..got]).count() as u64;
        left -= got as u64;
    }
    Ok(count)
}

/// The MIME type and name of an image the model can be shown.
fn image_type(head: &[u8]) -> Option<(&'static str, &'static str)> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(("image/png", "PNG"))
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(("image/jpeg", "JPEG"))
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(("image/gif", "GIF"))
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(("image/webp", "WebP"))
    } else {
        None
    }
}

/// A name for a binary file's type, from its first bytes.
fn binary_type(head: &[u8]) -> &'static str {
    const KNOWN: &[(&[u8], &str)] = &[
        (b"\x7fELF", "an ELF executable or library"),
        (b"%PDF", "a PDF document"),
        (
            b"PK\x03\x04",
            "a ZIP archive (or a format built on one: jar, docx, xlsx)",
        ),
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"BZh", "bzip2-compressed data"),
        (b"\xfd7zXZ\x00", "xz-compressed data"),
        (b"(\xb5/\xfd", "zstd-compressed data"),
        (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
        (b"SQLite format 3\x00", "an SQLite database"),
        (b"\x00asm", "a WebAssembly module"),
        (b"\xca\xfe\xba\xbe", "a Java class file or Mach-O binary"),
        (b"ID3", "MP3 audio"),
        (b"OggS", "Ogg media"),
        (b"fLaC", "FLAC audio"),
        (
            b"BM",
            "a BMP image (not shown: only PNG, JPEG, GIF and WebP are)",
        ),
        (
            b"II*\x00",
            "a TIFF image (not shown: only PNG, JPEG, GIF and WebP are)",
        ),
        (
            b"MM\x00*",
            "a TIFF image (not shown: only PNG, JPEG, GIF and WebP are)",
        ),
    ];
    if head.len() >= 8 && &head[4..8] == b"ftyp" {
        return "an MP4/QuickTime/HEIF media file";
    }
    KNOWN
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map_or("binary data", |(_, name)| name)
}
