//! A process that holds secrets hides its memory from the commands it runs:
//! after `hide_own_memory`, a child of the same user cannot read the
//! parent's `/proc/PID/environ`. Root reads every process's, so run as root
//! the test runs itself again as `nobody` (uid 65534), which does the checks.

use std::os::unix::process::CommandExt;
use std::process::Command;

const NOBODY: u32 = 65534;
const CHILD: &str = "DSH_HIDDEN_MEMORY_CHILD";

/// Whether a child of this process (the same user) can read our environment.
fn child_reads_our_environ() -> bool {
    let environ = format!("/proc/{}/environ", std::process::id());
    let read = Command::new("cat")
        .arg(&environ)
        .output()
        .expect("cat runs");
    read.status.success() && String::from_utf8_lossy(&read.stdout).contains(CHILD)
}

fn checks() {
    assert!(
        child_reads_our_environ(),
        "before hiding, a child of the same user reads the parent's environment"
    );
    dsh_sandbox::hide_own_memory().expect("PR_SET_DUMPABLE");
    assert!(
        !child_reads_our_environ(),
        "a child read the environment of a process that hid its memory"
    );
}

#[test]
fn a_child_cannot_read_the_environment_of_a_process_that_hid_its_memory() {
    if std::env::var_os(CHILD).is_some() {
        checks();
        return;
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if uid != 0 {
        // Alone in this test binary: hiding this process hides nothing else.
        checks();
        return;
    }
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_child_cannot_read_the_environment_of_a_process_that_hid_its_memory",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .uid(NOBODY)
        .gid(NOBODY)
        .status()
        .unwrap();
    assert!(status.success(), "the checks as nobody failed");
}
