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
//! The registry, the log and the monitor are the ones interactive sessions
//! use too ([`crate::task`]); this module is the executor's interface to
//! background tasks.
//!
//! [`ExecutorConfig::max_output_bytes`]: crate::ExecutorConfig::max_output_bytes
//! [`ExecutorConfig::spill_cap_bytes`]: crate::ExecutorConfig::spill_cap_bytes
//! [`ExecutorConfig::max_background_tasks`]: crate::ExecutorConfig::max_background_tasks

use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use crate::error::{ErrorKind, ExecError};
use crate::executor::{Confine, Executor, Outputs, Spawned};
use crate::process::{Exit, KILL_WAIT};
use crate::task::{monitor, note_read_shared, read_log, TaskId};

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
        self.spawn_background_confined(command, workdir, agent, Confine::Configured)
    }

    /// As [`spawn_background`](Self::spawn_background), confined as `confine` says.
    ///
    /// # Errors
    ///
    /// As [`spawn_background`](Self::spawn_background).
    pub fn spawn_background_confined(
        &self,
        command: &str,
        workdir: Option<&str>,
        agent: Option<&str>,
        confine: Confine,
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
        let mut tasks = inner.lock_tasks();
        if tasks.running() >= max_tasks {
            return Err(ExecError::new(
                ErrorKind::TooManyTasks,
                format!(
                    "too many background tasks: {max_tasks} are running; stop one with bash_kill before starting another"
                ),
            ));
        }
        tasks.check_agent_room(agent, inner.config.max_tasks_per_agent)?;
        tasks.evict_finished(max_tasks);
        let id = tasks.next_id();

        let Spawned {
            child,
            stdout: receiver,
            contained,
            ..
        } = inner.spawn(command, &cwd, inner.next_call(), Outputs::Merged, confine)?;
        let contained = Arc::new(contained);
        let log = inner.task_log(id, false);
        let shared = tasks.register(id, agent, log, None, &contained, None);
        drop(tasks);
        // No timeout: a background task runs until it exits or is killed.
        runtime.spawn(monitor(
            shared,
            contained,
            child,
            receiver,
            None,
            inner.config.kill_grace,
        ));
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
        let (_, shared, _) = self.inner.lock_tasks().lookup(task_id, agent)?;
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
        let (_, shared, _) = self.inner.lock_tasks().lookup(task_id, agent)?;
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
        let (id, shared, _) = self.inner.lock_tasks().lookup(task_id, agent)?;
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
