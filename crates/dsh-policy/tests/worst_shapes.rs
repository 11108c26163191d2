//! Memory of a decision: every worst shape at the 1 MiB input limit is
//! decided as its rules say, within a bound on the peak allocation over the
//! call. Memory is deterministic, so this guards against the quadratic
//! shapes coming back (a chain of `nohup` took over 5 GB before).
//!
//! The target is 64 MiB; it is not met yet: brush-parser's syntax tree of
//! a 1 MiB command line takes 80–320 MiB, and nested substitutions keep one
//! tree per level alive (about 680 MiB at 60 levels). Until the analysis
//! bounds what it hands the parser, the guard is 1 GiB.

use dsh_policy::{Mode, PermissionPolicy};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod shapes;

/// Counts bytes in use and the peak since the last reset.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One measurement at a time: the counters are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

const BOUND: usize = 1 << 30;

#[test]
fn every_worst_shape_is_decided_within_the_memory_guard() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let policy = PermissionPolicy::new(shapes::rules(), Mode::Default, "/work/proj");
    let mut failures = Vec::new();
    for (name, command, expect) in shapes::shapes() {
        assert!(command.len() <= shapes::LIMIT, "{name} is over the limit");
        let args = json!({ "command": command });
        drop(command);
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let started = std::time::Instant::now();
        let e = policy.check("bash", &args);
        let took = started.elapsed();
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
        // Informational: speed is for the bench, not for a test to assert.
        eprintln!("{name}: {took:?}, peak {} MiB", peak >> 20);
        if peak > BOUND {
            failures.push(format!("{name}: peak {} MiB", peak >> 20));
        }
        if e.decision != expect {
            let reason: String = e.reason.chars().take(200).collect();
            failures.push(format!(
                "{name}: {} instead of {expect} ({reason})",
                e.decision
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
