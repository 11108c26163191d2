//! `dsh audit`: the audit log read back, filtered, printed; and what the
//! other commands need to keep writing it.

use crate::cli::UsageError;
use dsh_audit::reader::{Filter, Line, Reader};
use dsh_audit::CallRecord;
use dsh_harness::Pipeline;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// How often `--follow` looks for new records.
const FOLLOW_EVERY: Duration = Duration::from_millis(200);

/// Makes SIGXFSZ catchable: a write past `RLIMIT_FSIZE` then fails with
/// `EFBIG` instead of killing dsh. The handler stays for the process's life.
pub fn survive_file_size_limit() {
    use tokio::signal::unix::{signal, SignalKind};
    // Registered once; the stream itself is not needed.
    let _ = signal(SignalKind::from_raw(libc::SIGXFSZ));
}

/// `--since`: a duration ago, or a time; in milliseconds since the epoch.
pub fn since(text: &str) -> Option<i64> {
    if let Some(ago) = dsh_audit::time::parse_duration(text) {
        let now = dsh_audit::time::epoch_ms(std::time::SystemTime::now());
        return Some(now - i64::try_from(ago.as_millis()).unwrap_or(i64::MAX));
    }
    dsh_audit::time::parse_rfc3339(text)
}

/// The log's directory the settings name, else the default one.
pub fn settings_dir(pipeline: &Pipeline) -> Result<PathBuf, UsageError> {
    if let Some(path) = &pipeline.settings().audit.path {
        if let Some(rest) = path.strip_prefix("~/") {
            if let Some(home) = std::env::var_os("HOME") {
                return Ok(PathBuf::from(home).join(rest));
            }
        } else {
            return Ok(PathBuf::from(path));
        }
    }
    dsh_audit::default_dir().ok_or_else(|| {
        UsageError(
            "no audit log directory: neither XDG_STATE_HOME nor HOME is set; give --path".into(),
        )
    })
}

/// Prints the log in `dir`; with `follow`, then what is added, until
/// SIGINT, SIGTERM or a closed standard output.
pub async fn print(
    dir: &Path,
    filter: &Filter,
    follow: bool,
    json: bool,
) -> Result<ExitCode, UsageError> {
    let mut reader = match Reader::new(dir) {
        Ok(reader) => reader,
        Err(e) if e.kind() == io::ErrorKind::NotFound && !follow => {
            let _ = writeln!(io::stderr(), "dsh audit: no audit log in {}", dir.display());
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => wait_for(dir).await?,
        Err(e) => {
            return Err(UsageError(format!(
                "cannot read the audit log in {}: {e}",
                dir.display()
            )))
        }
    };
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        let lines = reader.poll().map_err(|e| {
            UsageError(format!(
                "cannot read the audit log in {}: {e}",
                dir.display()
            ))
        })?;
        if show(&lines, filter, json).is_err() {
            // The reader went away (a closed pipe): nothing left to do.
            return Ok(ExitCode::SUCCESS);
        }
        if !follow {
            return Ok(ExitCode::SUCCESS);
        }
        tokio::select! {
            () = &mut stop => return Ok(ExitCode::SUCCESS),
            () = tokio::time::sleep(FOLLOW_EVERY) => {}
        }
    }
}

/// Waits for the log's directory to appear (`--follow` before any call).
async fn wait_for(dir: &Path) -> Result<Reader, UsageError> {
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        if let Ok(reader) = Reader::new(dir) {
            return Ok(reader);
        }
        tokio::select! {
            () = &mut stop => return Err(UsageError("interrupted".into())),
            () = tokio::time::sleep(FOLLOW_EVERY) => {}
        }
    }
}

async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
}

fn show(lines: &[Line], filter: &Filter, json: bool) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for line in lines {
        // Lines that are no record (another program's, a newer format's)
        // are passed over.
        let Some(record) = &line.record else { continue };
        if !filter.accepts(record) {
            continue;
        }
        if json {
            writeln!(out, "{}", line.text)?;
        } else {
            writeln!(out, "{}", human(record))?;
        }
    }
    out.flush()
}

/// One call in a line: time, tool, decision, rule or what decided (and who
/// answered), outcome, duration, what was run.
pub fn human(r: &CallRecord) -> String {
    let mut decided = match &r.decision {
        None => "-".to_owned(),
        Some(d) => {
            let mut s = d.verdict.clone();
            match (&d.rule, &d.origin) {
                (Some(rule), _) => s.push_str(&format!(" {rule}")),
                (None, Some(origin)) => s.push_str(&format!(" ({origin})")),
                (None, None) => {}
            }
            if let Some(a) = &d.approval {
                s.push_str(&format!(" → {} by {}", a.answer, a.answered_by));
            }
            s
        }
    };
    if decided.is_empty() {
        decided.push('-');
    }
    let o = &r.outcome;
    let outcome = match (&o.error_code, o.exit_code, &o.signal) {
        (Some(code), _, _) => code.clone(),
        (None, _, Some(signal)) => format!("signal {signal}"),
        (None, Some(code), None) => format!("exit {code}"),
        (None, None, None) if o.is_error => "error".to_owned(),
        (None, None, None) => "ok".to_owned(),
    };
    let outcome = if o.timed_out {
        format!("{outcome} (timed out)")
    } else {
        outcome
    };
    let what = match r.arguments.get("command").and_then(|c| c.as_str()) {
        Some(command) => command.to_owned(),
        None => r.arguments.to_string(),
    };
    let what: String = what.replace('\n', "⏎");
    let what = if what.chars().count() > 80 {
        format!("{}…", what.chars().take(79).collect::<String>())
    } else {
        what
    };
    let who = r.agent.as_deref().or(r.client.as_deref()).unwrap_or("-");
    format!(
        "{}  {:<10} {:<40} {:<20} {:>6}ms  {}  {}",
        r.time, r.tool, decided, outcome, r.duration_ms, who, what
    )
}

/// How many calls of the audit log the approval page keeps at hand.
const RECENT_KEPT: usize = 50;

/// The last calls of the audit log, for the approval page: read once from
/// the start, then only what was added (across rotations).
pub struct RecentCalls {
    dir: PathBuf,
    read: std::sync::Mutex<(
        Option<Reader>,
        std::collections::VecDeque<serde_json::Value>,
    )>,
}

impl RecentCalls {
    /// The calls of the log in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        RecentCalls {
            dir,
            read: std::sync::Mutex::default(),
        }
    }
}

/// A record as the page lists it: when, what, how it was decided, how it ended.
fn recent_entry(record: &CallRecord) -> serde_json::Value {
    let what = match record.arguments.get("command").and_then(|c| c.as_str()) {
        Some(command) => format!("{} `{command}`", record.tool),
        None => format!("{} {}", record.tool, record.arguments),
    };
    let decided = record.decision.as_ref().map(|d| {
        let mut said = d.verdict.clone();
        if let Some(rule) = &d.rule {
            said.push_str(&format!(" by {rule}"));
        }
        if let Some(a) = &d.approval {
            said.push_str(&format!("; {} answered {}", a.answered_by, a.answer));
        }
        said
    });
    let o = &record.outcome;
    let ended = match (&o.error_code, o.exit_code, &o.signal) {
        (Some(code), _, _) => code.clone(),
        (None, _, Some(signal)) => format!("killed by {signal}"),
        (None, Some(code), None) => format!("exit {code}"),
        (None, None, None) => "ok".to_owned(),
    };
    serde_json::json!({
        "time": record.time,
        "call": what,
        "decision": decided,
        "outcome": ended,
        "agent": record.agent,
    })
}

impl dsh_approvals::RecentRecords for RecentCalls {
    fn title(&self) -> String {
        "Recent calls (audit log)".to_owned()
    }

    fn recent(&self, limit: usize) -> Vec<serde_json::Value> {
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        let (reader, kept) = &mut *read;
        if reader.is_none() {
            *reader = Reader::new(&self.dir).ok();
        }
        if let Some(lines) = reader.as_mut().and_then(|r| r.poll().ok()) {
            for record in lines.iter().filter_map(|line| line.record.as_ref()) {
                kept.push_back(recent_entry(record));
                if kept.len() > RECENT_KEPT {
                    kept.pop_front();
                }
            }
        }
        kept.iter().rev().take(limit).cloned().collect()
    }
}
