//! [`AuditLog`]: the files, and the thread that writes them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The current file's name in the log's directory; rotated files are
/// `audit.1.jsonl` (the newest) to `audit.N.jsonl`.
pub const CURRENT_FILE: &str = "audit.jsonl";

/// Default [`AuditConfig::max_file_bytes`]: 10 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Default [`AuditConfig::max_files`]: rotated files kept.
pub const DEFAULT_MAX_FILES: u32 = 5;

/// Default [`AuditConfig::queue`]: records waiting for the writer.
pub const DEFAULT_QUEUE: usize = 1024;

/// How often a continuing write failure is reported on stderr.
const REPORT_EVERY: Duration = Duration::from_secs(60);

/// Where and how the log is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// The directory of the files (created 0700 when missing).
    pub dir: PathBuf,
    /// The current file is rotated before a record would take it past
    /// this size.
    pub max_file_bytes: u64,
    /// Rotated files kept besides the current one; older ones are removed.
    pub max_files: u32,
    /// A call whose record cannot be written fails (`AUDIT_UNAVAILABLE`),
    /// and while the last write failed no call runs.
    pub fail_closed: bool,
    /// Records waiting for the writer at most; one more is dropped (and
    /// counted) rather than holding up its call.
    pub queue: usize,
}

impl AuditConfig {
    /// The defaults in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        AuditConfig {
            dir: dir.into(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_files: DEFAULT_MAX_FILES,
            fail_closed: false,
            queue: DEFAULT_QUEUE,
        }
    }
}

/// The default directory: `$XDG_STATE_HOME/dsh/audit`, else
/// `~/.local/state/dsh/audit` (`None` without a home).
pub fn default_dir() -> Option<PathBuf> {
    match std::env::var_os("XDG_STATE_HOME") {
        Some(dir) if Path::new(&dir).is_absolute() => Some(PathBuf::from(dir).join("dsh/audit")),
        _ => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|home| PathBuf::from(home).join(".local/state/dsh/audit")),
    }
}

/// Counts of the log's records so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuditStats {
    /// Written.
    pub written: u64,
    /// Not written: the write failed.
    pub failed: u64,
    /// Not written: the queue was full.
    pub dropped: u64,
}

enum Job {
    Record {
        line: Vec<u8>,
        ack: Option<tokio::sync::oneshot::Sender<Result<(), String>>>,
    },
    Flush(mpsc::Sender<()>),
}

struct Shared {
    dir: PathBuf,
    written: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    /// The last write succeeded (or none was tried).
    healthy: AtomicBool,
    last_error: Mutex<Option<String>>,
    /// When a failure was last reported, and how many went unreported since.
    reported: Mutex<(Option<Instant>, u64)>,
}

/// The audit log: records go to a writer thread through a bounded queue,
/// so a call never waits for the disk (unless [`AuditConfig::fail_closed`]).
/// Cheap to clone; the thread ends when the last clone is dropped, after
/// writing what is queued.
///
/// # Errors and a full disk
///
/// A record that cannot be written (a full disk, a file size limit, a
/// directory that went away) is counted ([`AuditLog::stats`]) and reported
/// on stderr — the first failure at once, then at most once a minute with
/// the count — and the call goes on. A write cut short is undone (the file
/// is truncated back), so the log holds no half line. With `fail_closed`
/// the call's result becomes an `AUDIT_UNAVAILABLE` error instead, and the
/// calls that follow are refused before they run until a record (a refused
/// call's included) can be written again.
#[derive(Clone)]
pub struct AuditLog {
    tx: SyncSender<Job>,
    shared: Arc<Shared>,
    fail_closed: bool,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("dir", &self.shared.dir)
            .field("fail_closed", &self.fail_closed)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Opens the log in `config.dir` (creating it 0700) and starts its
    /// writer thread.
    ///
    /// # Errors
    /// The directory cannot be created or its current file opened, or the
    /// thread cannot start. A host that does not fail closed may go on
    /// without a log, saying so.
    pub fn open(config: AuditConfig) -> io::Result<AuditLog> {
        let mut files = Files::new(&config)?;
        files.ensure_open()?;
        let (tx, rx) = mpsc::sync_channel::<Job>(config.queue.max(1));
        let shared = Arc::new(Shared {
            dir: config.dir.clone(),
            written: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            healthy: AtomicBool::new(true),
            last_error: Mutex::new(None),
            reported: Mutex::new((None, 0)),
        });
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("dsh-audit".into())
            .spawn(move || {
                for job in rx {
                    match job {
                        Job::Record { line, ack } => {
                            let result = files.write(&line);
                            thread_shared.outcome(&result);
                            if let Some(ack) = ack {
                                let _ = ack.send(result.map_err(|e| e.to_string()));
                            }
                        }
                        Job::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            })?;
        Ok(AuditLog {
            tx,
            shared,
            fail_closed: config.fail_closed,
        })
    }

    /// The directory of the files.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Whether calls fail when their record cannot be written.
    pub fn fail_closed(&self) -> bool {
        self.fail_closed
    }

    /// Whether the last write succeeded.
    pub fn healthy(&self) -> bool {
        self.shared.healthy.load(Ordering::Acquire)
    }

    /// Why the last failed write failed.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.shared.last_error).clone()
    }

    /// The counts so far.
    pub fn stats(&self) -> AuditStats {
        AuditStats {
            written: self.shared.written.load(Ordering::Relaxed),
            failed: self.shared.failed.load(Ordering::Relaxed),
            dropped: self.shared.dropped.load(Ordering::Relaxed),
        }
    }

    /// Queues a line without waiting; a full queue drops it (counted and
    /// reported).
    pub fn submit(&self, line: Vec<u8>) {
        match self.tx.try_send(Job::Record { line, ack: None }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
                self.shared
                    .report("the writer is behind: the queue of records is full");
            }
            Err(TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
                self.shared.report("the writer thread is gone");
            }
        }
    }

    /// Writes a line and waits until it is in the file or failed. A full
    /// queue fails at once (the writer is behind): the caller, failing
    /// closed, refuses its call rather than wait without bound.
    ///
    /// # Errors
    /// Why it could not be written.
    pub async fn write(&self, line: Vec<u8>) -> Result<(), String> {
        let (ack, done) = tokio::sync::oneshot::channel();
        let job = Job::Record {
            line,
            ack: Some(ack),
        };
        match self.tx.try_send(job) {
            Ok(()) => done
                .await
                .unwrap_or_else(|_| Err("the audit writer is gone".to_owned())),
            Err(TrySendError::Full(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
                Err("the audit writer is behind (its queue is full)".to_owned())
            }
            Err(TrySendError::Disconnected(_)) => Err("the audit writer is gone".to_owned()),
        }
    }

    /// Waits until the records queued before this call are written, up to
    /// `timeout`; whether they were. Hosts call it before exiting.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (done, wait) = mpsc::channel();
        let deadline = Instant::now() + timeout;
        let mut job = Job::Flush(done);
        loop {
            match self.tx.try_send(job) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    job = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return false,
            }
        }
        wait.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok()
    }
}

impl Shared {
    fn outcome(&self, result: &io::Result<()>) {
        match result {
            Ok(()) => {
                self.written.fetch_add(1, Ordering::Relaxed);
                let was = self.healthy.swap(true, Ordering::AcqRel);
                if !was {
                    let lost = self.failed.load(Ordering::Relaxed);
                    let _ = writeln!(
                        io::stderr(),
                        "dsh: the audit log in {} is written again ({lost} records could not be written)",
                        self.dir.display()
                    );
                    *lock(&self.reported) = (None, 0);
                }
            }
            Err(e) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                self.healthy.store(false, Ordering::Release);
                *lock(&self.last_error) = Some(e.to_string());
                self.report(&e.to_string());
            }
        }
    }

    /// Says on stderr that records are being lost: the first time at once,
    /// then at most every [`REPORT_EVERY`].
    fn report(&self, why: &str) {
        let mut reported = lock(&self.reported);
        let now = Instant::now();
        if reported
            .0
            .is_some_and(|at| now.duration_since(at) < REPORT_EVERY)
        {
            reported.1 += 1;
            return;
        }
        let stats = (
            self.failed.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
        );
        let _ = writeln!(
            io::stderr(),
            "dsh: cannot write the audit log in {}: {why} ({} records not written, {} dropped so far; calls go on — set audit.failClosed to refuse them instead)",
            self.dir.display(),
            stats.0,
            stats.1,
        );
        *reported = (Some(now), 0);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The files of the log, owned by the writer thread.
struct Files {
    dir: PathBuf,
    max_file_bytes: u64,
    max_files: u32,
    /// The current file and its inode (to notice another process's rotation).
    current: Option<(File, u64)>,
    /// Held while rotating and writing, so that processes sharing the
    /// directory neither interleave a rotation with a write nor rotate twice.
    lock: Option<File>,
}

impl Files {
    fn new(config: &AuditConfig) -> io::Result<Files> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&config.dir)?;
        Ok(Files {
            dir: config.dir.clone(),
            max_file_bytes: config.max_file_bytes.max(1),
            max_files: config.max_files,
            current: None,
            lock: None,
        })
    }

    fn path(&self, index: u32) -> PathBuf {
        if index == 0 {
            self.dir.join(CURRENT_FILE)
        } else {
            self.dir.join(format!("audit.{index}.jsonl"))
        }
    }

    /// Opens the current file unless the one held still is it.
    fn ensure_open(&mut self) -> io::Result<()> {
        let path = self.path(0);
        if let Some((_, ino)) = &self.current {
            if fs::metadata(&path).is_ok_and(|m| m.ino() == *ino) {
                return Ok(());
            }
        }
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)?;
        let ino = file.metadata()?.ino();
        self.current = Some((file, ino));
        Ok(())
    }

    fn lock_file(&mut self) -> io::Result<()> {
        if self.lock.is_none() {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(self.dir.join(".lock"))?;
            self.lock = Some(file);
        }
        Ok(())
    }

    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        // The directory may have been removed: make it again.
        if !self.dir.is_dir() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)?;
            self.lock = None;
        }
        self.lock_file()?;
        let lock = self.lock.take();
        if let Some(lock) = &lock {
            lock.lock()?;
        }
        let written = self.write_locked(line);
        if let Some(lock) = &lock {
            let _ = lock.unlock();
        }
        self.lock = lock;
        written
    }

    fn write_locked(&mut self, line: &[u8]) -> io::Result<()> {
        self.ensure_open()?;
        let size = self.held()?.metadata()?.len();
        if size > 0 && size + line.len() as u64 > self.max_file_bytes {
            self.rotate()?;
            self.ensure_open()?;
        }
        let mut file: &File = self.held()?;
        let before = file.metadata()?.len();
        // One write call per record: appends from several processes do not interleave.
        let result = file.write_all(line);
        if result.is_err() {
            // No half record: cut what did get written.
            let _ = file.set_len(before);
        }
        result
    }

    fn held(&self) -> io::Result<&File> {
        self.current
            .as_ref()
            .map(|(f, _)| f)
            .ok_or_else(|| io::Error::other("the audit file is not open"))
    }

    /// `audit.jsonl` → `audit.1.jsonl` → … → `audit.N.jsonl`, the oldest
    /// removed.
    fn rotate(&mut self) -> io::Result<()> {
        self.current = None;
        if self.max_files == 0 {
            return fs::remove_file(self.path(0));
        }
        let _ = fs::remove_file(self.path(self.max_files));
        for i in (1..self.max_files).rev() {
            match fs::rename(self.path(i), self.path(i + 1)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        fs::rename(self.path(0), self.path(1))
    }
}
