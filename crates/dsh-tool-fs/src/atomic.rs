//! Replacing a file's content atomically: the new bytes go to a temporary
//! file in the same directory (so the rename cannot cross file systems),
//! which is flushed to disk and renamed over the target. A reader sees the
//! old content or the new, never a half-written file; a crash leaves the
//! old file and at worst a stray temporary file.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A temporary file next to its target, removed unless committed.
pub struct Staged {
    temporary: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staged {
    /// Writes `bytes` to a new temporary file beside `target` with `mode`
    /// (the permission bits), flushed to disk.
    pub fn new(target: &Path, bytes: &[u8], mode: u32) -> io::Result<Staged> {
        let dir = target.parent().unwrap_or(Path::new("/"));
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut last_error = None;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let temporary = dir.join(format!(".{name}.dsh-{}-{n}.tmp", std::process::id()));
            // Never through a link, never over an existing file.
            let opened = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&temporary);
            let mut file = match opened {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    last_error = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let staged = Staged {
                temporary,
                target: target.to_path_buf(),
                committed: false,
            };
            // The mode is set on the open file: a umask cannot narrow it.
            file.set_permissions(Permissions::from_mode(mode & 0o7777))?;
            file.write_all(bytes)?;
            file.sync_all()?;
            return Ok(staged);
        }
        Err(last_error.unwrap_or_else(|| io::Error::other("no free temporary name")))
    }

    /// Renames the temporary file over the target.
    pub fn commit(mut self) -> io::Result<()> {
        fs::rename(&self.temporary, &self.target)?;
        self.committed = true;
        // The rename is durable once the directory is.
        if let Some(dir) = self.target.parent() {
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }

    /// Where the content waits.
    pub fn temporary(&self) -> &Path {
        &self.temporary
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

/// Replaces `target`'s content with `bytes`, keeping `mode`.
pub fn replace(target: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    Staged::new(target, bytes, mode)?.commit()
}
