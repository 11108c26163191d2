//! Interactive sessions: a command in a pseudo-terminal, driven by writes.
//!
//! A session is a background task with a terminal: the same id space
//! (`bash-N`), the same containment, the same bounded log read by
//! [`Executor::read_output`] and ended by [`Executor::kill`]. Its output is
//! the terminal's stream with escape sequences removed and redrawn lines
//! collapsed ([`crate::lines`]); the line being drawn (a prompt) shows in
//! every read until it changes. [`Executor::read_screen`] renders the screen
//! instead, for TUIs and progress bars.
//!
//! Waiting: a start or a write returns once output has come and then
//! stopped for [`ExecutorConfig::session_quiet`], when the session ends, or
//! after the yield time, whichever is first.
//!
//! Limits: at most [`ExecutorConfig::max_sessions`] live sessions; starting
//! one more closes the one used least recently that no call is using, and
//! its next read says so.
//!
//! [`ExecutorConfig::session_quiet`]: crate::ExecutorConfig::session_quiet
//! [`ExecutorConfig::max_sessions`]: crate::ExecutorConfig::max_sessions

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::{ErrorKind, ExecError};
use crate::executor::{Confine, Executor};
use crate::keys;
use crate::pty::Terminal;
use crate::task::{monitor, note_read_shared, read_log, Task, TaskId, TaskShared, TaskState};

/// The default terminal size, rows × columns.
pub const DEFAULT_SIZE: (u16, u16) = (40, 120);
/// The default yield time of a start or a write.
pub const DEFAULT_YIELD: Duration = Duration::from_millis(1000);
/// The shortest and longest yield time; requests are clamped.
pub const YIELD_RANGE: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_millis(30_000));

/// A request to start an interactive session.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SessionRequest {
    /// The command line, run by `bash -c` in the terminal.
    pub command: String,
    /// Working directory: absolute, or relative to the executor's.
    pub workdir: Option<String>,
    /// Terminal size, rows × columns (default [`DEFAULT_SIZE`]).
    pub size: Option<(u16, u16)>,
    /// How long the start waits for output (default [`DEFAULT_YIELD`]).
    pub yield_time: Option<Duration>,
    /// The session's whole lifetime; `None` for no limit.
    pub timeout: Option<Duration>,
    /// How the session is confined (for its whole life: what is typed
    /// into it later runs inside the same confinement).
    pub confine: Confine,
    /// Cancels the start: the session is killed.
    pub cancel: CancellationToken,
}

impl SessionRequest {
    /// A request for `command` with the defaults.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            ..Self::default()
        }
    }
}

/// What starting a session gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStart {
    /// The session runs: its id and the output so far (model text).
    Running {
        /// The session's id, for `bash_write`, `bash_output`, `bash_kill`.
        id: TaskId,
        /// The output so far, then `[status: running]`.
        output: String,
    },
    /// The command ended within the yield time: its whole output and status.
    Finished {
        /// The output, then `[exit code: N]` or `[killed by signal: SIG]`.
        output: String,
    },
}

fn clamp_yield(requested: Option<Duration>) -> Duration {
    requested
        .unwrap_or(DEFAULT_YIELD)
        .clamp(YIELD_RANGE.0, YIELD_RANGE.1)
}

/// Whether the program reading a session's terminal asked for application
/// cursor keys.
fn application_cursor_keys(state: &TaskState) -> bool {
    state
        .screen
        .as_ref()
        .is_some_and(|s| s.screen().application_cursor())
}

impl Executor {
    /// Starts `request.command` in a new pseudo-terminal, owned by `agent`,
    /// and waits for its first output (see the [module docs](crate::terminal)).
    ///
    /// # Errors
    ///
    /// As [`spawn_background`](Self::spawn_background);
    /// [`ErrorKind::TooManySessions`] when every live session is in use;
    /// [`ErrorKind::Cancelled`] (the session killed) when the start is
    /// cancelled.
    pub async fn start_session(
        &self,
        request: SessionRequest,
        agent: Option<&str>,
    ) -> Result<SessionStart, ExecError> {
        let inner = &self.inner;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            ExecError::new(
                ErrorKind::NoRuntime,
                "interactive sessions need a Tokio runtime",
            )
        })?;
        let cwd = inner.resolve_workdir(request.workdir.as_deref())?;
        let (rows, cols) = request.size.unwrap_or(DEFAULT_SIZE);
        let (rows, cols) = (rows.clamp(2, 1000), cols.clamp(10, 1000));
        let yield_time = clamp_yield(request.yield_time);
        let (id, shared, terminal, child, contained) = {
            let mut tasks = inner.lock_tasks();
            tasks.check_agent_room(agent, inner.config.max_tasks_per_agent)?;
            make_room(&mut tasks.tasks, inner.config.max_sessions)?;
            tasks.evict_finished(inner.config.max_background_tasks);
            let id = tasks.next_id();
            let (child, contained, master, held_read_only) = inner.spawn_in_terminal(
                &request.command,
                &cwd,
                inner.next_call(),
                (rows, cols),
                request.confine,
            )?;
            let terminal = Terminal::open(master, request.command.clone(), cwd, held_read_only)
                .map_err(|e| ExecError::io(ErrorKind::Spawn, "could not watch the terminal", e))?;
            let terminal = Arc::new(terminal);
            let contained = Arc::new(contained);
            let screen = vt100::Parser::new(
                std::num::NonZeroU16::new(rows).unwrap_or(std::num::NonZeroU16::MIN),
                std::num::NonZeroU16::new(cols).unwrap_or(std::num::NonZeroU16::MIN),
                0,
            );
            let shared = tasks.register(
                id,
                agent,
                inner.task_log(id, true),
                Some(screen),
                &contained,
                Some(Arc::clone(&terminal)),
            );
            (id, shared, terminal, child, contained)
        };
        let mut changes = shared.changed.subscribe();
        runtime.spawn(monitor(
            Arc::clone(&shared),
            contained,
            child,
            Arc::clone(&terminal),
            request.timeout.filter(|t| !t.is_zero()),
            inner.config.kill_grace,
        ));
        let waited = wait_quiet(
            &shared,
            &mut changes,
            Instant::now() + yield_time,
            inner.config.session_quiet,
            &request.cancel,
        )
        .await;
        terminal.touch(-1);
        if waited.is_err() {
            if let Some(contained) = shared.contained() {
                contained.kill_all();
            }
            return Err(ExecError::cancelled());
        }
        let answer = read_log(&shared, None, true).unwrap_or_default();
        note_read_shared(&shared);
        let exit = shared.lock().status.clone();
        Ok(match exit {
            None => SessionStart::Running { id, output: answer },
            Some(exit) => {
                let body = answer
                    .rsplit_once('\n')
                    .map_or("", |(body, _status)| body)
                    .to_string();
                let body = if body.is_empty() {
                    "(no output)".to_string()
                } else {
                    body
                };
                SessionStart::Finished {
                    output: format!("{body}\n{}", exit.marker()),
                }
            }
        })
    }

    /// Writes `input` (text and named keys, see [`crate::keys`]) to session
    /// `session_id`, then returns its new output, waiting as a start does.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownTask`], [`ErrorKind::ForeignTask`],
    /// [`ErrorKind::InvalidInput`] for an unknown key (nothing written),
    /// [`ErrorKind::NoInput`] for a task without a terminal or a session
    /// that has ended.
    pub async fn write_session(
        &self,
        session_id: &str,
        agent: Option<&str>,
        input: &str,
        yield_time: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<String, ExecError> {
        let (id, shared, terminal) = self.inner.lock_tasks().lookup(session_id, agent)?;
        let Some(terminal) = terminal else {
            return Err(ExecError::new(
                ErrorKind::NoInput,
                format!("task {id} has no terminal (started without tty: true); it takes no input"),
            ));
        };
        let application_cursor = application_cursor_keys(&shared.lock());
        let encoded = keys::encode(input, application_cursor)?;
        if shared.lock().status.is_some() {
            return Err(ExecError::new(
                ErrorKind::NoInput,
                format!("session {id} has ended; read its output with bash_output"),
            ));
        }
        terminal.touch(1);
        let deadline = Instant::now() + clamp_yield(yield_time);
        let mut changes = shared.changed.subscribe();
        changes.borrow_and_update();
        let written = terminal.write(&encoded.bytes, deadline).await;
        let result = match written {
            Ok(written) => {
                let waited = wait_quiet(
                    &shared,
                    &mut changes,
                    deadline,
                    self.inner.config.session_quiet,
                    cancel,
                )
                .await;
                match waited {
                    Err(()) => Err(ExecError::cancelled()),
                    Ok(()) => {
                        let mut answer = read_log(&shared, None, true).unwrap_or_default();
                        note_read_shared(&shared);
                        if written < encoded.bytes.len() {
                            answer = format!(
                                "[only {written} of {} bytes of input were taken: the program is not reading its terminal]\n{answer}",
                                encoded.bytes.len()
                            );
                        }
                        Ok(answer)
                    }
                }
            }
            Err(e) => Err(ExecError::io(
                ErrorKind::NoInput,
                format!("could not write to session {id}"),
                e,
            )),
        };
        terminal.touch(-1);
        result
    }

    /// The rendered screen of session `session_id`, then its status; waits
    /// up to `wait` for the screen to change. The stream's unread output
    /// counts as read.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownTask`], [`ErrorKind::ForeignTask`],
    /// [`ErrorKind::NoInput`] for a task without a terminal.
    pub async fn read_screen(
        &self,
        session_id: &str,
        agent: Option<&str>,
        wait: Option<Duration>,
    ) -> Result<String, ExecError> {
        let (id, shared, terminal) = self.inner.lock_tasks().lookup(session_id, agent)?;
        let Some(terminal) = terminal else {
            return Err(ExecError::new(
                ErrorKind::NoInput,
                format!(
                    "task {id} has no terminal (started without tty: true): read it without screen"
                ),
            ));
        };
        terminal.touch(1);
        let wait = wait
            .unwrap_or(Duration::ZERO)
            .min(self.inner.config.max_wait);
        if !wait.is_zero() {
            let mut changes = shared.changed.subscribe();
            changes.borrow_and_update();
            let _ = tokio::time::timeout(wait, changes.changed()).await;
        }
        // Consume the stream, then replace its text by the screen.
        let answer = read_log(&shared, None, true).unwrap_or_default();
        note_read_shared(&shared);
        let status = answer.rsplit_once('\n').map_or(answer.as_str(), |(_, s)| s);
        let screen = {
            let state = shared.lock();
            state
                .screen
                .as_ref()
                .map(|s| s.screen().contents())
                .unwrap_or_default()
        };
        terminal.touch(-1);
        Ok(format!("{}\n{status}", screen.trim_end()))
    }
}

/// How a permission check should see input for a session
/// ([`Executor::input_check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputCheck {
    /// A shell is among the session's processes, so the input may run as
    /// commands (now, or typed ahead for later): check the typed text as a
    /// command line.
    Command {
        /// The text typed, one line per Enter.
        command: String,
        /// The session's working directory.
        workdir: PathBuf,
        /// The session runs read-only, so what the input does is held too.
        held: bool,
    },
    /// No shell runs in the session: the input is data for the program the
    /// session started with; check that command again.
    Program {
        /// The session's command.
        command: String,
        /// The session's working directory.
        workdir: PathBuf,
        /// Whether the input holds text (not only control keys): what it
        /// makes the program do is then unknown.
        has_text: bool,
        /// The session runs read-only, so what the input does is held too.
        held: bool,
    },
    /// Nothing can be said (an unknown session, line-editing keys sent to a
    /// shell): check the write as a call of its own.
    Unknown,
}

impl Executor {
    /// How a permission check should see `input` for session `session_id`.
    pub fn input_check(&self, session_id: &str, agent: Option<&str>, input: &str) -> InputCheck {
        let Ok((_, shared, Some(terminal))) = self.inner.lock_tasks().lookup(session_id, agent)
        else {
            return InputCheck::Unknown;
        };
        let application_cursor = application_cursor_keys(&shared.lock());
        let Ok(encoded) = keys::encode(input, application_cursor) else {
            return InputCheck::Unknown;
        };
        let workdir = terminal.cwd.clone();
        let held = terminal.held_read_only;
        match shared.contained() {
            Some(contained) if Terminal::runs_shell(&contained) => {
                if encoded.edits {
                    InputCheck::Unknown
                } else {
                    InputCheck::Command {
                        command: encoded.typed,
                        workdir,
                        held,
                    }
                }
            }
            _ => InputCheck::Program {
                command: terminal.command.clone(),
                workdir,
                has_text: !encoded.typed.trim().is_empty(),
                held,
            },
        }
    }
}

/// Closes the least recently used idle session when `max` are live.
fn make_room(
    tasks: &mut std::collections::BTreeMap<u64, Task>,
    max: usize,
) -> Result<(), ExecError> {
    let live: Vec<(&u64, &Task)> = tasks
        .iter()
        .filter(|(_, t)| {
            t.terminal.is_some() && {
                let state = t.shared.lock();
                state.status.is_none() && state.notice.is_none()
            }
        })
        .collect();
    if live.len() < max {
        return Ok(());
    }
    let idle = live
        .iter()
        .filter_map(|(id, t)| {
            let used = t.terminal.as_ref()?.idle_since()?;
            Some((used, **id, Arc::clone(&t.shared)))
        })
        .min_by_key(|(used, id, _)| (*used, *id));
    let Some((_, id, shared)) = idle else {
        return Err(ExecError::new(
            ErrorKind::TooManySessions,
            format!("too many interactive sessions: {max} are live and all in use; stop one with bash_kill"),
        ));
    };
    shared.lock().notice = Some(format!(
        "[session bash-{id} was closed to make room for a new one: at most {max} sessions run at once]"
    ));
    if let Some(contained) = shared.contained() {
        contained.kill_all();
    }
    Ok(())
}

/// Waits until output came and then stopped for `quiet`, the session ended,
/// or `deadline`. `Err` when cancelled.
async fn wait_quiet(
    shared: &TaskShared,
    changes: &mut watch::Receiver<u64>,
    deadline: Instant,
    quiet: Duration,
    cancel: &CancellationToken,
) -> Result<(), ()> {
    let mut last_output = None::<Instant>;
    loop {
        if shared.lock().status.is_some() {
            return Ok(());
        }
        let until = last_output.map_or(deadline, |t| (t + quiet).min(deadline));
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(()),
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                last_output = Some(Instant::now());
            }
            _ = tokio::time::sleep_until(until) => return Ok(()),
        }
    }
}
