//! A process that outlives the executor's host: when the host dies without
//! cleaning up (`SIGKILL`, an abort), it kills what the executor started and
//! removes its spill files.
//!
//! The watchdog is a small `sh` script in its own process group, reading a
//! pipe whose only write end the host holds (close-on-exec, so no command
//! inherits it). A clean shutdown writes `done` and closes the pipe: the
//! script exits at once. End-of-file without `done` means the host is gone:
//! the script writes `cgroup.kill` of the executor's cgroup and removes it,
//! then freezes and kills every process that carries the executor's marker
//! variable (process-tree containment), and removes the spill directory.
//!
//! # Caveats
//! Under process-tree containment, a process that cleared its environment
//! and left the call's session and process group before the host died is
//! not found (the executor itself finds it through parent links while it
//! lives). Under cgroup containment nothing escapes.

use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

/// Runs with `$1` the cgroup directory (or empty), `$2` the marker
/// variable's name, `$3` the spill directory (or empty: kept).
const SCRIPT: &str = r#"
IFS= read -r line
[ "$line" = done ] && exit 0
cg=$1 marker=$2 spill=$3
if [ -n "$cg" ] && [ -e "$cg/cgroup.kill" ]; then
    echo 1 > "$cg/cgroup.kill" 2>/dev/null
    i=0
    while [ "$i" -lt 100 ]; do
        busy=
        for f in "$cg"/cgroup.procs "$cg"/*/cgroup.procs; do
            [ -n "$(cat "$f" 2>/dev/null)" ] && busy=1
        done
        [ -z "$busy" ] && break
        sleep 0.02
        i=$((i + 1))
    done
    for d in "$cg"/*/; do rmdir "$d" 2>/dev/null; done
    rmdir "$cg" 2>/dev/null
fi
pass=0
while [ "$pass" -lt 5 ]; do
    found=
    for f in $(grep -lsz "^$marker=" /proc/[0-9]*/environ); do
        pid=${f#/proc/}
        pid=${pid%/environ}
        [ "$pid" = "$$" ] && continue
        kill -STOP "$pid" 2>/dev/null && found="$found $pid"
    done
    [ -z "$found" ] && break
    kill -KILL $found 2>/dev/null
    pass=$((pass + 1))
done
[ -n "$spill" ] && rm -rf "$spill"
"#;

/// The running watchdog of one executor.
#[derive(Debug)]
pub(crate) struct Watchdog {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts the watchdog for an executor whose cgroup (if any) is
    /// `cgroup_dir`, whose marker variable is `marker`, and whose spill
    /// files, if the watchdog is to remove them, are in `spill_dir`.
    pub(crate) fn start(
        cgroup_dir: Option<&Path>,
        marker: &str,
        spill_dir: Option<&Path>,
    ) -> io::Result<Watchdog> {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("dsh-watchdog")
            .arg(cgroup_dir.map(Path::as_os_str).unwrap_or_default())
            .arg(marker)
            .arg(spill_dir.map(Path::as_os_str).unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group: a Ctrl-C meant for the host does not
            // take the watchdog with it before the host has cleaned up.
            .process_group(0)
            .spawn()?;
        let pipe = child.stdin.take();
        Ok(Watchdog { child, pipe })
    }

    /// The watchdog's PID.
    #[cfg(test)]
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Watchdog {
    /// A clean shutdown: the executor cleaned up itself, the watchdog has
    /// nothing to do.
    fn drop(&mut self) {
        if let Some(mut pipe) = self.pipe.take() {
            let _ = pipe.write_all(b"done\n");
        }
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::Watchdog;
    use std::process::Command;
    use std::time::{Duration, Instant};

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
    }

    fn spill_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dsh-watchdog-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("call-1-stdout.log"), "spilled").unwrap();
        dir
    }

    #[test]
    fn when_the_host_vanishes_the_marked_processes_and_spill_files_go() {
        let marker = format!("DSH_BASH_CALL_watchdog_test_{}", std::process::id());
        let dir = spill_dir("vanish");
        let mut sleeper = Command::new("sleep")
            .arg("30")
            .env(&marker, "1")
            .spawn()
            .unwrap();
        let mut watchdog = Watchdog::start(None, &marker, Some(&dir)).unwrap();
        // The host "dies": its end of the pipe closes without `done`.
        drop(watchdog.pipe.take());
        watchdog.child.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while sleeper.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the marked sleep survived");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!dir.exists(), "the spill directory was left behind");
    }

    #[test]
    fn a_clean_shutdown_leaves_everything_to_the_executor() {
        let marker = format!("DSH_BASH_CALL_watchdog_clean_{}", std::process::id());
        let dir = spill_dir("clean");
        let mut sleeper = Command::new("sleep")
            .arg("30")
            .env(&marker, "1")
            .spawn()
            .unwrap();
        let watchdog = Watchdog::start(None, &marker, Some(&dir)).unwrap();
        let pid = watchdog.id();
        drop(watchdog);
        assert!(!alive(pid), "the watchdog outlived a clean shutdown");
        assert!(
            sleeper.try_wait().unwrap().is_none(),
            "a clean shutdown killed"
        );
        assert!(dir.exists());
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
