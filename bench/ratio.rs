//! Side-by-side timing for benches: both sides run interleaved in one process,
//! and the ratio of their median per-call times is printed.
//!
//! Criterion gives the detailed, statistically careful figures; this gives the
//! one number an issue asks for, measured in the same run under the same noise.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Median time per call of `f`, over `rounds` batches sized to take about `batch` each.
fn per_call_samples(mut f: impl FnMut(), iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed() / iters as u32
}

fn calibrate(f: &mut impl FnMut(), batch: Duration) -> u64 {
    let mut iters = 1u64;
    loop {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        if start.elapsed() >= batch / 4 || iters >= 1 << 30 {
            let per = start.elapsed().as_nanos().max(1) as u64 / iters;
            return (batch.as_nanos() as u64 / per.max(1)).clamp(1, u64::from(u32::MAX));
        }
        iters *= 2;
    }
}

/// Times `ours` and `theirs` interleaved and returns `(ours, theirs)` median per-call times.
pub fn compare(
    mut ours: impl FnMut(),
    mut theirs: impl FnMut(),
    rounds: usize,
    batch: Duration,
) -> (Duration, Duration) {
    let n_ours = calibrate(&mut ours, batch);
    let n_theirs = calibrate(&mut theirs, batch);
    let mut a = Vec::with_capacity(rounds);
    let mut b = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        a.push(per_call_samples(&mut ours, n_ours));
        b.push(per_call_samples(&mut theirs, n_theirs));
    }
    a.sort();
    b.sort();
    (a[rounds / 2], b[rounds / 2])
}

/// Prints one comparison line: `label: ours X, theirs Y, theirs/ours = R×`, and returns R.
pub fn report(
    label: &str,
    ours_name: &str,
    theirs_name: &str,
    (ours, theirs): (Duration, Duration),
) -> f64 {
    let ratio = theirs.as_secs_f64() / ours.as_secs_f64().max(1e-12);
    println!(
        "RATIO {label}: {ours_name} {:?}/call, {theirs_name} {:?}/call, {theirs_name}/{ours_name} = {ratio:.2}x",
        ours, theirs
    );
    ratio
}

/// Keeps a value alive for the optimiser.
pub fn keep<T>(value: T) -> T {
    black_box(value)
}
