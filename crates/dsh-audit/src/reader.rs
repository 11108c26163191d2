//! Reading the log back: every file in order, filtered, and following it.

use crate::record::CallRecord;
use crate::writer::CURRENT_FILE;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The log's files, oldest first: `audit.N.jsonl` … `audit.1.jsonl`, then
/// `audit.jsonl` (those that exist).
///
/// # Errors
/// The directory cannot be read.
pub fn log_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut rotated: Vec<(u32, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(n) = name
            .strip_prefix("audit.")
            .and_then(|rest| rest.strip_suffix(".jsonl"))
            .and_then(|n| n.parse::<u32>().ok())
        {
            rotated.push((n, entry.path()));
        }
    }
    rotated.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut files: Vec<PathBuf> = rotated.into_iter().map(|(_, p)| p).collect();
    let current = dir.join(CURRENT_FILE);
    if current.is_file() {
        files.push(current);
    }
    Ok(files)
}

/// Which records to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only records at or after this time (milliseconds since the epoch).
    pub since_ms: Option<i64>,
    /// Only calls of this tool (any case).
    pub tool: Option<String>,
    /// Only calls with this verdict (`allow`, `ask`, `deny`).
    pub decision: Option<String>,
}

impl Filter {
    /// Whether `record` passes.
    pub fn accepts(&self, record: &CallRecord) -> bool {
        if let Some(since) = self.since_ms {
            if record.epoch_ms().is_none_or(|t| t < since) {
                return false;
            }
        }
        if let Some(tool) = &self.tool {
            if !record.tool.eq_ignore_ascii_case(tool) {
                return false;
            }
        }
        if let Some(decision) = &self.decision {
            if !record.verdict().eq_ignore_ascii_case(decision) {
                return false;
            }
        }
        true
    }
}

/// One line of the log: the text as written, and the record it holds.
#[derive(Debug, Clone)]
pub struct Line {
    /// The line without its newline.
    pub text: String,
    /// The record, when the line is one.
    pub record: Option<CallRecord>,
}

/// Reads the log's files in order from the start, and then what is added
/// to them, across rotations.
///
/// [`Reader::poll`] returns the complete lines that are new since the last
/// call. When the current file was rotated since (its inode is another),
/// the rest of the file held is read, then the files rotated after it, then
/// the new current file. A line not yet ended by a newline waits for it.
pub struct Reader {
    dir: PathBuf,
    /// Files still to read from the start, oldest first.
    queue: Vec<PathBuf>,
    /// The file being read, and its inode.
    open: Option<(BufReader<File>, u64)>,
}

impl Reader {
    /// A reader of the log in `dir`, from its oldest record.
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn new(dir: &Path) -> io::Result<Reader> {
        Ok(Reader {
            dir: dir.to_owned(),
            queue: log_files(dir)?,
            open: None,
        })
    }

    /// The complete lines that are new.
    ///
    /// # Errors
    /// A file cannot be read.
    pub fn poll(&mut self) -> io::Result<Vec<Line>> {
        let mut lines = Vec::new();
        loop {
            if let Some((file, _)) = &mut self.open {
                read_lines(file, &mut lines)?;
            }
            if !self.queue.is_empty() {
                let next = self.queue.remove(0);
                match File::open(&next) {
                    Ok(file) => {
                        let ino = file.metadata()?.ino();
                        self.open = Some((BufReader::new(file), ino));
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
                continue;
            }
            // Everything queued is read: has the current file moved on?
            let held = self.open.as_ref().map(|(_, ino)| *ino);
            let current = std::fs::metadata(self.dir.join(CURRENT_FILE)).ok();
            match (held, current) {
                (Some(ino), Some(meta)) if meta.ino() != ino => {
                    self.queue = self.newer_than(ino)?;
                    if let Some((file, _)) = &mut self.open {
                        read_lines(file, &mut lines)?;
                    }
                    self.open = None;
                }
                (None, Some(_)) => self.queue = vec![self.dir.join(CURRENT_FILE)],
                _ => return Ok(lines),
            }
        }
    }

    /// The files written after the one with inode `ino`, oldest first.
    fn newer_than(&self, ino: u64) -> io::Result<Vec<PathBuf>> {
        let files = log_files(&self.dir)?;
        let at = files
            .iter()
            .position(|f| std::fs::metadata(f).is_ok_and(|m| m.ino() == ino));
        Ok(match at {
            Some(i) => files[i + 1..].to_vec(),
            // Rotated out of existence: everything there is now is newer.
            None => files,
        })
    }
}

fn read_lines(file: &mut BufReader<File>, lines: &mut Vec<Line>) -> io::Result<()> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = file.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        if buf.last() != Some(&b'\n') {
            // A record still being written: read it again whole later.
            file.seek(SeekFrom::Current(-i64::try_from(n).unwrap_or(0)))?;
            return Ok(());
        }
        let text = String::from_utf8_lossy(&buf[..n - 1]).into_owned();
        if text.is_empty() {
            continue;
        }
        let record = CallRecord::from_line(&text);
        lines.push(Line { text, record });
    }
}

/// Every complete line of the log in `dir`, oldest first.
///
/// # Errors
/// The directory or a file cannot be read.
pub fn read_all(dir: &Path) -> io::Result<Vec<Line>> {
    Reader::new(dir)?.poll()
}
