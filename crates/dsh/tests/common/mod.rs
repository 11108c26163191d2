//! Helpers shared by the tests that run the `dsh` binary.
#![allow(dead_code)]

/// Whether `pid` is a live process (a zombie has exited; only its parent
/// has yet to reap it).
pub fn alive(pid: u32) -> bool {
    // A zombie has exited; only its parent has yet to reap it.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The PIDs of processes whose command line is exactly `argv`.
pub fn pids_running(argv: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted))
        .filter(|pid| alive(*pid))
        .collect()
}

/// Polls until `pid` is gone or `deadline` passes; whether it is gone.
pub fn gone_within(pid: u32, deadline: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !alive(pid)
}
