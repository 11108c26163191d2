//! Where a serving `dsh` says how to reach its page: a 0600 file per
//! process in `$XDG_STATE_HOME/dsh/approvals/` (else
//! `~/.local/state/dsh/approvals/`), holding the page's URL and the
//! terminal's bearer token, removed when the server ends.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The directory of the state files: `$XDG_STATE_HOME/dsh/approvals` (an
/// absolute `XDG_STATE_HOME` only), else `$HOME/.local/state/dsh/approvals`.
pub fn state_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .map(|d| d.join("dsh/approvals"))
}

/// What a state file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerState {
    /// The serving process.
    pub pid: u32,
    /// Its start time (field 22 of `/proc/PID/stat`), so that another
    /// process that got the same pid later is not taken for it.
    pub started: String,
    /// The page's base URL, `http://127.0.0.1:PORT`.
    pub url: String,
    /// The terminal's bearer token.
    pub token: String,
}

/// A process's start time from `/proc/PID/stat`; `None` when it is gone or a zombie.
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(19).map(|s| (*s).to_owned())
}

/// This process's state file; removed when dropped.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    /// Writes this process's state file in `dir` (created 0700), mode 0600,
    /// whole or not at all (written beside, then renamed).
    ///
    /// # Errors
    /// The I/O error, with the path.
    pub fn write(dir: &Path, url: &str, token: &str) -> Result<StateFile, String> {
        let pid = std::process::id();
        let state = ServerState {
            pid,
            started: start_time(pid).unwrap_or_default(),
            url: url.to_owned(),
            token: token.to_owned(),
        };
        let fail = |what: &Path, e: std::io::Error| format!("cannot write {}: {e}", what.display());
        std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| fail(dir, e))?;
        let path = dir.join(format!("{pid}.json"));
        let partial = dir.join(format!(".{pid}.json.partial"));
        let _ = std::fs::remove_file(&partial);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&partial)
            .map_err(|e| fail(&partial, e))?;
        let text = serde_json::to_string(&state).unwrap_or_default();
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| fail(&partial, e))?;
        std::fs::rename(&partial, &path).map_err(|e| fail(&path, e))?;
        Ok(StateFile { path })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StateFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The servers whose state files in `dir` name a live process, by pid. A
/// file of a process that is gone (or whose pid another process has now)
/// is removed; a file that does not read is skipped.
pub fn live_servers(dir: &Path) -> Vec<ServerState> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut live = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        let Ok(pid) = stem.parse::<u32>() else {
            continue;
        };
        let state = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<ServerState>(&text).ok());
        match state {
            Some(state) if state.pid == pid && start_time(pid).as_ref() == Some(&state.started) => {
                live.push(state);
            }
            Some(_) => {
                let _ = std::fs::remove_file(&path);
            }
            None if start_time(pid).is_none() => {
                let _ = std::fs::remove_file(&path);
            }
            None => {}
        }
    }
    live.sort_by_key(|s| s.pid);
    live
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("dsh-approvals-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_state_file_is_private_found_while_live_and_gone_when_dropped() {
        let dir = temp("live");
        let file = StateFile::write(&dir, "http://127.0.0.1:1", "secret").unwrap();
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let live = live_servers(&dir);
        assert_eq!(live.len(), 1);
        assert_eq!(live[0].pid, std::process::id());
        assert_eq!(live[0].token, "secret");
        drop(file);
        assert!(live_servers(&dir).is_empty());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stale_files_are_removed() {
        let dir = temp("stale");
        std::fs::create_dir_all(&dir).unwrap();
        // A pid no process has (above the kernel's maximum), and this
        // process's pid with another start time (a reused pid).
        let dead = dir.join("4194305.json");
        std::fs::write(
            &dead,
            r#"{"pid":4194305,"started":"1","url":"http://127.0.0.1:1","token":"t"}"#,
        )
        .unwrap();
        let me = std::process::id();
        let reused = dir.join(format!("{me}.json"));
        std::fs::write(
            &reused,
            format!(r#"{{"pid":{me},"started":"0","url":"http://127.0.0.1:1","token":"t"}}"#),
        )
        .unwrap();
        let other = dir.join("notes.txt");
        std::fs::write(&other, "kept").unwrap();
        assert!(live_servers(&dir).is_empty());
        assert!(!dead.exists());
        assert!(!reused.exists());
        assert!(other.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
