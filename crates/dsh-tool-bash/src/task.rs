//! The tasks that outlive a call — background tasks and interactive
//! sessions — in one registry: their ids (`bash-N`, one numbering for both),
//! their owners, the bounded log their output goes to, the reads of that
//! log, and the one monitor that drives a task to its end, whatever its
//! output comes from (a pipe, a terminal).
//!
//! A log keeps, in memory, at most the model's budget of recent text plus
//! the first quarter of that budget of the output not yet read; the spill
//! file holds the raw output. A read returns what was produced since the
//! previous read: when that is more than the budget, the head and the tail
//! with `[… N bytes omitted …]` between them, and the spill file named.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use regex::Regex;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::contain::Contained;
use crate::error::{ErrorKind, ExecError};
use crate::lines::LineCollapser;
use crate::output::{
    ceil_char_boundary, floor_char_boundary, head_budget, join_head_tail, omitted_marker, text_of,
    AnsiStripper, Ring, Spill, Utf8Decoder,
};
use crate::process::{Exit, Proc, ReadBuf, DRAIN_LIMIT, KILL_WAIT};
use crate::pty::Terminal;
use crate::sys;

/// The id of a background task: `bash-N`, numbered from 1 per executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub(crate) u64);

impl TaskId {
    /// Parses `bash-N`.
    pub fn parse(text: &str) -> Option<TaskId> {
        let n = text.strip_prefix("bash-")?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        n.parse().ok().map(TaskId)
    }

    /// The task's number.
    pub fn number(self) -> u64 {
        self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bash-{}", self.0)
    }
}

/// The executor's background tasks and interactive sessions.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    last_id: u64,
    pub(crate) tasks: BTreeMap<u64, Task>,
}

#[derive(Debug)]
pub(crate) struct Task {
    pub(crate) owner: Option<String>,
    pub(crate) shared: Arc<TaskShared>,
    /// The terminal of an interactive session; `None` for a plain task.
    pub(crate) terminal: Option<Arc<Terminal>>,
}

impl Tasks {
    /// The id the next task gets: the one to name its spill file with, and
    /// to [`register`](Self::register) it under once it runs.
    pub(crate) fn next_id(&self) -> TaskId {
        TaskId(self.last_id + 1)
    }

    /// Records a task that was just started as `id` (from
    /// [`next_id`](Self::next_id)), owned by `owner`, its output going to
    /// `log` (and to `screen`, for a session, which also has its `terminal`).
    /// Returns what its monitor and its readers share.
    pub(crate) fn register(
        &mut self,
        id: TaskId,
        owner: Option<&str>,
        log: TaskLog,
        screen: Option<vt100::Parser>,
        contained: &Arc<Contained>,
        terminal: Option<Arc<Terminal>>,
    ) -> Arc<TaskShared> {
        self.last_id = id.0;
        let (changed, _) = watch::channel(0);
        let shared = Arc::new(TaskShared {
            state: Mutex::new(TaskState {
                log,
                status: None,
                screen,
                notice: None,
            }),
            changed,
            contained: Mutex::new(Some(Arc::clone(contained))),
        });
        self.tasks.insert(
            id.0,
            Task {
                owner: owner.map(str::to_string),
                shared: Arc::clone(&shared),
                terminal,
            },
        );
        shared
    }

    /// Task `task_id` of `agent`, with its terminal when it is an
    /// interactive session.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownTask`], [`ErrorKind::ForeignTask`].
    #[allow(clippy::type_complexity)]
    pub(crate) fn lookup(
        &self,
        task_id: &str,
        agent: Option<&str>,
    ) -> Result<(TaskId, Arc<TaskShared>, Option<Arc<Terminal>>), ExecError> {
        let id = TaskId::parse(task_id.trim()).ok_or_else(|| ExecError::unknown_task(task_id))?;
        let task = self
            .tasks
            .get(&id.0)
            .ok_or_else(|| ExecError::unknown_task(task_id))?;
        if task.owner.as_deref() != agent {
            return Err(ExecError::new(
                ErrorKind::ForeignTask,
                format!("task {id} belongs to another agent"),
            ));
        }
        Ok((id, Arc::clone(&task.shared), task.terminal.clone()))
    }

    /// Kills every task's processes and waits, up to `limit` in all, for them to die.
    pub(crate) fn kill_all_blocking(&self, limit: Duration) {
        let running: Vec<Arc<Contained>> = self
            .tasks
            .values()
            .filter_map(|task| task.shared.contained())
            .collect();
        for contained in &running {
            contained.kill_all();
        }
        let deadline = std::time::Instant::now() + limit;
        for contained in &running {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            contained.kill_and_wait_blocking(left);
        }
    }

    /// How many background tasks (not sessions) are running.
    pub(crate) fn running(&self) -> usize {
        self.tasks
            .values()
            .filter(|t| t.terminal.is_none() && t.shared.lock().status.is_none())
            .count()
    }

    /// Refuses a new task of `agent` when it already holds `max` live ones
    /// (running background tasks and live sessions).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooManyTasks`].
    pub(crate) fn check_agent_room(
        &self,
        agent: Option<&str>,
        max: usize,
    ) -> Result<(), ExecError> {
        if max == usize::MAX {
            return Ok(());
        }
        let live = self
            .tasks
            .values()
            .filter(|t| t.owner.as_deref() == agent && t.shared.lock().status.is_none())
            .count();
        if live >= max {
            return Err(ExecError::new(
                ErrorKind::TooManyTasks,
                format!(
                    "too many live tasks for this agent: {live} background tasks and interactive sessions are running (at most {max} per agent); stop one with bash_kill before starting another"
                ),
            ));
        }
        Ok(())
    }

    /// Drops the in-memory output of the oldest finished tasks with unread
    /// output beyond `keep` (their spill file keeps it).
    pub(crate) fn evict_finished(&mut self, keep: usize) {
        let holding: Vec<&Task> = self
            .tasks
            .values()
            .filter(|t| {
                let state = t.shared.lock();
                state.status.is_some() && !state.log.released
            })
            .collect();
        let excess = holding.len().saturating_sub(keep);
        for task in holding.into_iter().take(excess) {
            task.shared.lock().log.release(true);
        }
    }
}

/// What a task's monitor and its readers share.
#[derive(Debug)]
pub(crate) struct TaskShared {
    pub(crate) state: Mutex<TaskState>,
    /// Bumped on new output and on completion.
    pub(crate) changed: watch::Sender<u64>,
    /// The task's processes; released (its cgroup back to the pool) once the
    /// task has ended and every process of it is gone.
    pub(crate) contained: Mutex<Option<Arc<Contained>>>,
}

impl TaskShared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, TaskState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task's containment while it runs.
    pub(crate) fn contained(&self) -> Option<Arc<Contained>> {
        self.contained
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn append(&self, raw: &[u8]) {
        {
            let mut state = self.lock();
            if let Some(screen) = &mut state.screen {
                screen.process(raw);
            }
            state.log.push_raw(raw);
        }
        self.changed.send_modify(|n| *n += 1);
    }

    pub(crate) fn finish(&self, exit: Exit) {
        {
            let mut state = self.lock();
            state.log.finish();
            state.log.spill.seal();
            state.status = Some(exit);
        }
        self.changed.send_modify(|n| *n += 1);
    }
}

pub(crate) struct TaskState {
    pub(crate) log: TaskLog,
    /// `None` while running.
    pub(crate) status: Option<Exit>,
    /// The rendered screen of an interactive session.
    pub(crate) screen: Option<vt100::Parser>,
    /// Said once, in the next read, before the status (a session closed to
    /// make room, a timeout).
    pub(crate) notice: Option<String>,
}

impl fmt::Debug for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskState")
            .field("log", &self.log)
            .field("status", &self.status)
            .field("screen", &self.screen.as_ref().map(|s| s.screen().size()))
            .field("notice", &self.notice)
            .finish()
    }
}

/// A task's output: bounded, read incrementally.
#[derive(Debug)]
pub(crate) struct TaskLog {
    /// A session's redrawn lines collapsed; its last line stays pending.
    lines: Option<LineCollapser>,
    /// The pending line as the last read showed it.
    shown_pending: Vec<u8>,
    max: usize,
    spill: Spill,
    ansi: AnsiStripper,
    utf8: Utf8Decoder,
    /// The most recent text, up to `max` bytes.
    recent: Ring,
    /// The first bytes of text from `read_offset` on (up to the head budget),
    /// valid while `head_valid`.
    head: Vec<u8>,
    head_valid: bool,
    /// Bytes of text so far.
    total: u64,
    /// Bytes of text already returned by reads.
    read_offset: u64,
    /// Whether bytes were replaced since the last read.
    lossy_unread: bool,
    /// In-memory copies dropped (the task finished and was read, or evicted).
    released: bool,
}

impl TaskLog {
    pub(crate) fn new(max: usize, spill: Spill, terminal: bool) -> Self {
        Self {
            lines: terminal.then(|| LineCollapser::new(max)),
            shown_pending: Vec::new(),
            max,
            spill,
            ansi: AnsiStripper::new(),
            utf8: Utf8Decoder::new(),
            recent: Ring::new(max),
            head: Vec::new(),
            head_valid: true,
            total: 0,
            read_offset: 0,
            lossy_unread: false,
            released: false,
        }
    }

    fn push_raw(&mut self, raw: &[u8]) {
        self.spill.push(raw);
        self.decode(|ansi, utf8, sink| ansi.strip(raw, |clean| utf8.feed(clean, &mut *sink)));
    }

    fn finish(&mut self) {
        self.decode(|_, utf8, sink| utf8.finish(sink));
        if let Some(mut lines) = self.lines.take() {
            self.decode(|_, _, sink| lines.finish(sink));
        }
    }

    /// The line a session is still drawing.
    fn pending(&self) -> &[u8] {
        self.lines.as_ref().map_or(&[], |l| l.pending())
    }

    /// Runs `step` with the decoders and a sink that takes decoded text into
    /// the ring and the head; notes replaced bytes for the next read.
    fn decode(
        &mut self,
        step: impl FnOnce(&mut AnsiStripper, &mut Utf8Decoder, &mut dyn FnMut(&[u8])),
    ) {
        let replacements = self.utf8.replacements();
        let Self {
            ansi,
            utf8,
            recent,
            head,
            head_valid,
            total,
            max,
            released,
            lines,
            ..
        } = self;
        let head_cap = head_budget(*max);
        let keep_head = *head_valid && !*released;
        let mut keep = |text: &[u8]| push_text(text, recent, head, keep_head, head_cap, total);
        match lines {
            Some(lines) => step(ansi, utf8, &mut |text: &[u8]| lines.feed(text, &mut keep)),
            None => step(ansi, utf8, &mut keep),
        }
        // Every read whose text had bytes replaced gets the note.
        if self.utf8.replacements() > replacements {
            self.lossy_unread = true;
        }
    }

    /// Drops the in-memory text; with `persist`, first makes sure the spill
    /// file holds the output.
    fn release(&mut self, persist: bool) {
        if persist && self.total > self.read_offset {
            let _ = self.spill.persist();
        }
        self.recent = Ring::new(0);
        self.head = Vec::new();
        self.head_valid = false;
        self.released = true;
    }

    pub(crate) fn unread(&self) -> u64 {
        self.total - self.read_offset
    }

    /// Text of `[read_offset, end)` as the model sees it, and the bytes left
    /// out of it. `end` is `total` or lies within the recent ring.
    fn render(&self, end: u64) -> (String, u64) {
        let len = end - self.read_offset;
        let ring_start = self.total - self.recent.len() as u64;
        if len <= self.max as u64 && self.read_offset >= ring_start {
            let from_end = (self.total - self.read_offset) as usize;
            let mut bytes = self.recent.last(from_end);
            bytes.truncate(len as usize);
            return (text_of(&bytes), 0);
        }
        // Only reached with end == total (see `consumable_end`).
        let head: &[u8] = if self.head_valid {
            // The head holds a few bytes past its budget so the cut can fall
            // on a character boundary.
            let cut = head_budget(self.max).min(self.head.len());
            &self.head[..floor_char_boundary(&self.head, cut)]
        } else {
            &[]
        };
        let tail_budget = self.max - head_budget(self.max);
        let tail_all = self.recent.last(tail_budget.min(len as usize - head.len()));
        let tail = &tail_all[ceil_char_boundary(&tail_all, 0)..];
        let omitted = len - head.len() as u64 - tail.len() as u64;
        if head.is_empty() && tail.is_empty() {
            return (format!("{}\n", omitted_marker(omitted)), omitted);
        }
        (join_head_tail(head, omitted, tail), omitted)
    }

    /// Where a read may stop: everything when the task finished or the unread
    /// text outgrew memory; otherwise, for line-based (filtered) reads, after
    /// the last complete line.
    fn consumable_end(&self, whole_lines: bool, finished: bool) -> u64 {
        let unread = self.unread();
        if !whole_lines || finished || unread > self.max as u64 {
            return self.total;
        }
        let bytes = self.recent.last(unread as usize);
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(at) => self.read_offset + at as u64 + 1,
            None => self.read_offset,
        }
    }

    /// Moves the read offset to `end` and refills the head from there.
    fn advance(&mut self, end: u64) {
        self.read_offset = end;
        self.lossy_unread = false;
        self.head.clear();
        let ring_start = self.total - self.recent.len() as u64;
        self.head_valid = !self.released && end >= ring_start;
        if self.head_valid {
            let mut rest = self.recent.last((self.total - end) as usize);
            rest.truncate(head_budget(self.max) + HEAD_SLACK);
            self.head = rest;
        }
    }
}

/// Bytes kept past the head's budget: enough to finish the character that
/// straddles the budget, so the head is cut on a character boundary.
const HEAD_SLACK: usize = 3;

fn push_text(
    text: &[u8],
    recent: &mut Ring,
    head: &mut Vec<u8>,
    head_valid: bool,
    head_cap: usize,
    total: &mut u64,
) {
    *total += text.len() as u64;
    recent.push(text);
    let keep = head_cap + HEAD_SLACK;
    if head_valid && head.len() < keep {
        let take = (keep - head.len()).min(text.len());
        head.extend_from_slice(&text[..take]);
    }
}

/// The status line of a task.
fn status_line(status: Option<&Exit>) -> String {
    match status {
        None => "[status: running]".to_string(),
        Some(Exit::Code(code)) => format!("[status: completed, exit code: {code}]"),
        Some(Exit::Signal(name)) => format!("[status: killed by {name}]"),
    }
}

/// Frees a finished task's memory once everything was read.
pub(crate) fn note_read_shared(shared: &TaskShared) {
    let mut state = shared.lock();
    if state.status.is_some() && state.log.unread() == 0 {
        state.log.release(false);
    }
}

/// Answers a read, or `None` to keep waiting (never when `last_chance`).
pub(crate) fn read_log(
    shared: &TaskShared,
    filter: Option<&Regex>,
    last_chance: bool,
) -> Option<String> {
    let mut state = shared.lock();
    let finished = state.status.is_some();
    let log = &state.log;
    let end = log.consumable_end(filter.is_some(), finished);
    let (mut text, omitted) = if end > log.read_offset {
        log.render(end)
    } else {
        (String::new(), 0)
    };
    // A session's last line (a prompt, a bar) shows while it is drawn; it
    // counts as new when it changed since the last read showed it.
    let pending = if filter.is_none() {
        log.pending().to_vec()
    } else {
        Vec::new()
    };
    let pending_new = !pending.is_empty() && pending != log.shown_pending;
    if end > log.read_offset || pending_new {
        text.push_str(&text_of(&pending));
    }
    let body = match filter {
        None if text.is_empty() => "(no new output)".to_string(),
        None => text,
        Some(_) if end == log.read_offset => "(no new output)".to_string(),
        Some(re) => {
            let marker = omitted_marker(omitted);
            let kept: String = text
                .split_inclusive('\n')
                .filter(|line| {
                    let line = line.strip_suffix('\n').unwrap_or(line);
                    (omitted > 0 && line == marker) || re.is_match(line)
                })
                .collect();
            if kept.is_empty() {
                if !finished && !last_chance {
                    return None;
                }
                "(no new output matching the filter)".to_string()
            } else {
                kept
            }
        }
    };
    if !finished && !last_chance && end == log.read_offset && !pending_new {
        return None;
    }
    let mut answer = body;
    if !answer.ends_with('\n') {
        answer.push('\n');
    }
    if omitted > 0 {
        let note = match state.log.spill.persist() {
            Ok(Some(spill)) if spill.complete => {
                format!("[output truncated; full output: {}]", spill.path.display())
            }
            Ok(Some(spill)) => format!(
                "[output truncated; its first {} bytes are in {}]",
                spill.bytes,
                spill.path.display()
            ),
            Ok(None) => "[output truncated]".to_string(),
            Err(e) => format!("[output truncated; full output could not be saved: {e}]"),
        };
        answer.push_str(&note);
        answer.push('\n');
    }
    if state.log.lossy_unread {
        answer.push_str("[invalid UTF-8 replaced with U+FFFD]\n");
    }
    if let Some(notice) = state.notice.take() {
        answer.push_str(&notice);
        answer.push('\n');
    }
    answer.push_str(&status_line(state.status.as_ref()));
    state.log.advance(end);
    state.log.shown_pending = pending;
    Some(answer)
}

/// Where a task's output comes from: the pipe of a background task (stdout
/// and stderr merged), the terminal of a session.
pub(crate) trait OutputSource: Send {
    /// Reads into `buf`; `Ok(0)` or an error ends the output.
    fn read_into<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a;
}

impl OutputSource for pipe::Receiver {
    fn read_into<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a {
        self.read(buf)
    }
}

impl OutputSource for Arc<Terminal> {
    fn read_into<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a {
        Terminal::read(self, buf)
    }
}

/// Drives a task: pumps its output into the log (and a session's screen),
/// ends it when `timeout` (if any) runs out — `SIGTERM`, then after `grace`
/// `SIGKILL` — and when its shell exits kills what it left behind, drains
/// the output and records the status.
pub(crate) async fn monitor(
    shared: Arc<TaskShared>,
    contained: Arc<Contained>,
    mut child: Proc,
    mut output: impl OutputSource,
    timeout: Option<Duration>,
    grace: Duration,
) {
    let mut buf = ReadBuf::new();
    let mut eof = false;
    // The next timer: when to send SIGTERM, then when to kill.
    let mut timer = timeout.map(|t| (Instant::now() + t, false));
    let status = loop {
        let alarm = timer.map(|(at, _)| at);
        tokio::select! {
            waited = child.wait() => break waited,
            read = output.read_into(buf.space()), if !eof => match read {
                // From a terminal, EIO: every slave end is closed.
                Ok(0) | Err(_) => eof = true,
                Ok(n) => shared.append(buf.filled(n)),
            },
            _ = tokio::time::sleep_until(alarm.unwrap_or_else(Instant::now)), if alarm.is_some() => {
                match timer {
                    Some((_, false)) => {
                        if let Some(t) = timeout {
                            shared.lock().notice = Some(format!("[timed out after {}ms]", t.as_millis()));
                        }
                        contained.signal_all(sys::SIGTERM);
                        timer = Some((Instant::now() + grace, true));
                    }
                    _ => {
                        contained.kill_all();
                        timer = None;
                    }
                }
            }
        }
    };
    if !contained.is_empty() {
        contained.kill_and_wait(KILL_WAIT).await;
    }
    if !eof {
        let drain = async {
            loop {
                match output.read_into(buf.space()).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => shared.append(buf.filled(n)),
                }
            }
        };
        let _ = tokio::time::timeout(DRAIN_LIMIT, drain).await;
    }
    let exit = match status {
        Ok(status) => Exit::from_status(status),
        Err(_) => Exit::Signal(sys::signal_name(sys::SIGKILL)),
    };
    shared.finish(exit);
    // Nothing of the task is left: give its cgroup (and descriptor) back now
    // rather than when the finished task is evicted.
    shared
        .contained
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    drop(contained);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids() {
        assert_eq!(TaskId::parse("bash-12"), Some(TaskId(12)));
        assert_eq!(TaskId(3).to_string(), "bash-3");
        for bad in ["bash-", "bash-x", "12", "bash--1", "bash-+1"] {
            assert_eq!(TaskId::parse(bad), None, "{bad}");
        }
    }

    fn log(max: usize) -> TaskLog {
        let dir = std::env::temp_dir().join("dsh-bash-unit-never-created");
        TaskLog::new(max, Spill::new(dir.join("x.log"), usize::MAX, 0), false)
    }

    #[test]
    fn incremental_reads_and_head_tail() {
        let mut l = log(8);
        l.push_raw(b"abc");
        assert_eq!(l.render(l.total), ("abc".into(), 0));
        l.advance(l.total);
        l.push_raw(b"0123456789"); // 10 unread, budget 8: head 2, tail 6
        assert_eq!(
            l.render(l.total),
            ("01\n[… 2 bytes omitted …]\n456789".into(), 2)
        );
        l.advance(l.total);
        assert_eq!(l.unread(), 0);
        l.push_raw(b"xy\nz");
        assert_eq!(l.consumable_end(true, false), l.total - 1);
        assert_eq!(l.render(l.total - 1), ("xy\n".into(), 0));
    }

    #[test]
    fn reads_never_split_characters() {
        let mut l = log(8);
        l.push_raw("é".as_bytes());
        l.push_raw(&"€".as_bytes()[..1]);
        assert_eq!(l.render(l.total), ("é".into(), 0));
        l.advance(l.total);
        l.push_raw(&"€".as_bytes()[1..]);
        assert_eq!(l.render(l.total), ("€".into(), 0));
    }
}
