//! What each agent has read: the content hash a write is checked against.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The hash of a file's whole content.
pub type ContentHash = [u8; 32];

/// The hash of `bytes`.
pub fn content_hash(bytes: &[u8]) -> ContentHash {
    Sha256::digest(bytes).into()
}

/// For each agent and file, the hash of the content it last saw (by a
/// `read`, or by its own `write`, `edit` or patch).
#[derive(Default)]
pub struct ReadRecords {
    seen: Mutex<HashMap<(Option<String>, PathBuf), ContentHash>>,
}

/// Why a file may not be changed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unseen {
    /// The agent never read it.
    NeverRead,
    /// It changed since the agent read it.
    Changed,
}

impl ReadRecords {
    /// Records that `agent` saw `content_hash` as `path`'s content.
    pub fn saw(&self, agent: Option<&str>, path: &Path, hash: ContentHash) {
        self.lock()
            .insert((agent.map(str::to_owned), path.to_path_buf()), hash);
    }

    /// Whether `agent` saw `path` as it is now (`current`).
    pub fn check(
        &self,
        agent: Option<&str>,
        path: &Path,
        current: &ContentHash,
    ) -> Result<(), Unseen> {
        match self
            .lock()
            .get(&(agent.map(str::to_owned), path.to_path_buf()))
        {
            None => Err(Unseen::NeverRead),
            Some(seen) if seen == current => Ok(()),
            Some(_) => Err(Unseen::Changed),
        }
    }

    /// Forgets `path` for `agent` (a file it deleted).
    pub fn forget(&self, agent: Option<&str>, path: &Path) {
        self.lock()
            .remove(&(agent.map(str::to_owned), path.to_path_buf()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Option<String>, PathBuf), ContentHash>> {
        // A panic elsewhere while holding the lock leaves the map whole.
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }
}
