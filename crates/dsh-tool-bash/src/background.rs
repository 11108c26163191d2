//! Background tasks: started, then read and killed by id.
//!
//! A task's stdout and stderr share one pipe, so they interleave as they would
//! in a terminal. Its output goes through the same pipeline as a foreground
//! stream (spill file, escape sequences removed, invalid UTF-8 replaced) into
//! a log that keeps, in memory, at most [`ExecutorConfig::max_output_bytes`]
//! of recent text plus the first quarter of that budget of the output not yet
//! read. A read returns what was produced since the previous read; when that
//! is more than the budget, it returns the head and the tail with
//! `[… N bytes omitted …]` between them and names the spill file, which holds
//! the raw output (from the start, up to [`ExecutorConfig::spill_cap_bytes`]).
//!
//! Limits: at most [`ExecutorConfig::max_background_tasks`] tasks *running* at
//! once — finished tasks do not count, so the model is never stuck with
//! tasks it cannot kill. A finished task keeps its unread output until it is
//! read; beyond that many finished tasks with unread output, the oldest ones
//! drop their in-memory copy (reads then point to the spill file).
//!
//! [`ExecutorConfig::max_output_bytes`]: crate::ExecutorConfig::max_output_bytes
//! [`ExecutorConfig::spill_cap_bytes`]: crate::ExecutorConfig::spill_cap_bytes
//! [`ExecutorConfig::max_background_tasks`]: crate::ExecutorConfig::max_background_tasks

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use regex::Regex;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::watch;

use crate::contain::Contained;
use crate::error::{ErrorKind, ExecError};
use crate::executor::{Executor, Exit, Outputs, ReadBuf, Spawned, DRAIN_LIMIT, KILL_WAIT};
use crate::lines::LineCollapser;
use crate::output::{
    ceil_char_boundary, floor_char_boundary, head_budget, join_head_tail, text_of, AnsiStripper,
    Ring, Spill, Utf8Decoder,
};
use crate::process::Proc;

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

/// The executor's background tasks.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    pub(crate) last_id: u64,
    pub(crate) tasks: BTreeMap<u64, Task>,
}

#[derive(Debug)]
pub(crate) struct Task {
    pub(crate) owner: Option<String>,
    pub(crate) shared: Arc<TaskShared>,
    /// The terminal of an interactive session; `None` for a plain task.
    pub(crate) terminal: Option<Arc<crate::terminal::Terminal>>,
}

impl Tasks {
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

    fn running(&self) -> usize {
        self.tasks
            .values()
            .filter(|t| t.terminal.is_none() && t.shared.lock().status.is_none())
            .count()
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
            return (
                format!("{}\n", crate::output::omitted_marker(omitted)),
                omitted,
            );
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

impl Executor {
    /// Starts `command` in the background and returns its id at once.
    ///
    /// No timeout applies, and no call's cancellation stops it: it runs until
    /// it exits, [`kill`](Self::kill) ends it, or the executor is dropped.
    /// `agent` owns it: reads and kills by another agent are refused.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Workdir`] for a missing working directory,
    /// [`ErrorKind::TooManyTasks`] when
    /// [`max_background_tasks`](crate::ExecutorConfig::max_background_tasks)
    /// are running, [`ErrorKind::Spawn`] when `bash` cannot start,
    /// [`ErrorKind::NoRuntime`] outside a Tokio runtime.
    pub fn spawn_background(
        &self,
        command: &str,
        workdir: Option<&str>,
        agent: Option<&str>,
    ) -> Result<TaskId, ExecError> {
        let inner = &self.inner;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            ExecError::new(
                ErrorKind::NoRuntime,
                "background tasks need a Tokio runtime",
            )
        })?;
        let cwd = inner.resolve_workdir(workdir)?;
        let max_tasks = inner.config.max_background_tasks;
        let mut tasks = inner.tasks.lock().unwrap_or_else(|p| p.into_inner());
        if tasks.running() >= max_tasks {
            return Err(ExecError::new(
                ErrorKind::TooManyTasks,
                format!(
                    "too many background tasks: {max_tasks} are running; stop one with bash_kill before starting another"
                ),
            ));
        }
        tasks.evict_finished(max_tasks);
        let id = TaskId(tasks.last_id + 1);

        let Spawned {
            child,
            stdout: receiver,
            contained,
            ..
        } = inner.spawn(command, &cwd, inner.next_call(), Outputs::Merged, false)?;
        let contained = Arc::new(contained);
        tasks.last_id = id.0;

        let spill = Spill::new(
            inner.spill_dir.join(format!("{id}.log")),
            inner.config.max_output_bytes,
            inner.config.spill_cap_bytes,
        );
        let (changed, _) = watch::channel(0);
        let shared = Arc::new(TaskShared {
            state: Mutex::new(TaskState {
                log: TaskLog::new(inner.config.max_output_bytes, spill, false),
                status: None,
                screen: None,
                notice: None,
            }),
            changed,
            contained: Mutex::new(Some(Arc::clone(&contained))),
        });
        tasks.tasks.insert(
            id.0,
            Task {
                owner: agent.map(str::to_string),
                shared: Arc::clone(&shared),
                terminal: None,
            },
        );
        drop(tasks);
        runtime.spawn(monitor(shared, contained, child, receiver));
        Ok(id)
    }

    /// Returns the output task `task_id` produced since the previous read,
    /// then its status line (`[status: running]`,
    /// `[status: completed, exit code: N]`, `[status: killed by SIG]`).
    ///
    /// `(no new output)` stands for no new output. With `wait` (capped at
    /// [`max_wait`](crate::ExecutorConfig::max_wait)), waits up to that long
    /// for new output or for the task to end. With `filter`, a regular
    /// expression, only matching lines are returned, only complete lines are
    /// consumed while the task runs, and waiting ends at the first matching
    /// line; `(no new output matching the filter)` when lines came but none
    /// matched.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownTask`] (`unknown bash task "ID"`),
    /// [`ErrorKind::ForeignTask`] (`task bash-N belongs to another agent`),
    /// [`ErrorKind::InvalidFilter`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: output is consumed only when the answer is returned.
    pub async fn read_output(
        &self,
        task_id: &str,
        agent: Option<&str>,
        wait: Option<Duration>,
        filter: Option<&str>,
    ) -> Result<String, ExecError> {
        let filter = match filter.filter(|f| !f.is_empty()) {
            Some(f) => Some(Regex::new(f).map_err(|e| {
                ExecError::new(ErrorKind::InvalidFilter, format!("invalid filter: {e}"))
            })?),
            None => None,
        };
        let (_, shared) = self.inner.lookup(task_id, agent)?;
        let wait = wait
            .unwrap_or(Duration::ZERO)
            .min(self.inner.config.max_wait);
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = shared.changed.subscribe();
        loop {
            changes.borrow_and_update();
            let last_chance = tokio::time::Instant::now() >= deadline;
            if let Some(answer) = read_log(&shared, filter.as_ref(), last_chance) {
                note_read_shared(&shared);
                return Ok(answer);
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep_until(deadline) => {}
            }
        }
    }

    /// How task `task_id` ended, or `None` while it runs. Reads nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownTask`], [`ErrorKind::ForeignTask`].
    pub fn task_exit(&self, task_id: &str, agent: Option<&str>) -> Result<Option<Exit>, ExecError> {
        let (_, shared) = self.inner.lookup(task_id, agent)?;
        let exit = shared.lock().status.clone();
        Ok(exit)
    }

    /// Kills task `task_id` and everything it started, and waits for it to end.
    ///
    /// Returns `killed background task bash-N`, or
    /// `task bash-N had already finished`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownTask`], [`ErrorKind::ForeignTask`].
    pub async fn kill(&self, task_id: &str, agent: Option<&str>) -> Result<String, ExecError> {
        let (id, shared) = self.inner.lookup(task_id, agent)?;
        let mut changes = shared.changed.subscribe();
        if shared.lock().status.is_some() {
            return Ok(format!("task {id} had already finished"));
        }
        let deadline = tokio::time::Instant::now() + KILL_WAIT;
        loop {
            changes.borrow_and_update();
            if shared.lock().status.is_some() {
                break;
            }
            if let Some(contained) = shared.contained() {
                contained.kill_all();
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        Ok(format!("killed background task {id}"))
    }
}

impl crate::executor::Inner {
    fn lookup(
        &self,
        task_id: &str,
        agent: Option<&str>,
    ) -> Result<(TaskId, Arc<TaskShared>), ExecError> {
        self.lookup_task(task_id, agent)
            .map(|(id, shared, _)| (id, shared))
    }

    /// A task by id, with its terminal when it is an interactive session.
    #[allow(clippy::type_complexity)]
    pub(crate) fn lookup_task(
        &self,
        task_id: &str,
        agent: Option<&str>,
    ) -> Result<
        (
            TaskId,
            Arc<TaskShared>,
            Option<Arc<crate::terminal::Terminal>>,
        ),
        ExecError,
    > {
        let id = TaskId::parse(task_id.trim()).ok_or_else(|| ExecError::unknown_task(task_id))?;
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        let task = tasks
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
            let marker = crate::output::omitted_marker(omitted);
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

/// Drives a task: pumps its output, and when its shell exits kills what it
/// left behind, drains the pipe and records the status.
async fn monitor(
    shared: Arc<TaskShared>,
    contained: Arc<Contained>,
    mut child: Proc,
    mut pipe: pipe::Receiver,
) {
    let mut buf = ReadBuf::new();
    let mut eof = false;
    let status = loop {
        tokio::select! {
            waited = child.wait() => break waited,
            read = pipe.read(buf.space()), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => shared.append(buf.filled(n)),
            },
        }
    };
    if !contained.is_empty() {
        contained.kill_and_wait(KILL_WAIT).await;
    }
    if !eof {
        let drain = async {
            loop {
                match pipe.read(buf.space()).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => shared.append(buf.filled(n)),
                }
            }
        };
        let _ = tokio::time::timeout(DRAIN_LIMIT, drain).await;
    }
    let exit = match status {
        Ok(status) => Exit::from_status(status),
        Err(_) => Exit::Signal(crate::sys::signal_name(crate::sys::SIGKILL)),
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
