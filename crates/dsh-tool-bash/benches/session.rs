//! Round trip of one `bash_write` that echoes a line, through the executor:
//! write `line<Enter>` to a `cat` in a pseudo-terminal, return once the
//! echo and `cat`'s copy came and output paused for the quiet period.
//!
//! Target: the round trip minus the quiet period ≤ 5 ms. There is no peer
//! to run beside it: the figure is absolute.
//! `cargo bench -p dsh-tool-bash --bench session` prints `RESULT` lines.

use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use dsh_tool_bash::{Executor, ExecutorConfig, SessionRequest, SessionStart, TaskId};
use tokio_util::sync::CancellationToken;

const QUIET: Duration = Duration::from_millis(20);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

async fn session(executor: &Executor) -> TaskId {
    let mut request = SessionRequest::new("exec cat");
    request.yield_time = Some(Duration::from_millis(100));
    match executor.start_session(request, None).await.expect("start") {
        SessionStart::Running { id, .. } => id,
        SessionStart::Finished { output } => panic!("cat ended: {output}"),
    }
}

async fn round_trip(executor: &Executor, id: &str, cancel: &CancellationToken) -> Duration {
    let started = Instant::now();
    let out = executor
        .write_session(
            id,
            None,
            "hello<Enter>",
            Some(Duration::from_secs(5)),
            cancel,
        )
        .await
        .expect("write");
    let took = started.elapsed();
    assert!(out.starts_with("hello\nhello\n"), "{out}");
    took
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let executor = Executor::new(ExecutorConfig {
        session_quiet: QUIET,
        ..ExecutorConfig::default()
    })
    .expect("executor");
    let id = rt.block_on(session(&executor)).to_string();
    let cancel = CancellationToken::new();
    let mut group = c.benchmark_group("bash_write echo");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("write_session (quiet 20 ms)", |b| {
        b.iter(|| rt.block_on(round_trip(&executor, &id, &cancel)))
    });
    group.finish();

    let mut times: Vec<Duration> = (0..50)
        .map(|_| rt.block_on(round_trip(&executor, &id, &cancel)))
        .collect();
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "RESULT bash_write round trip: median {:?}, minus the {:?} quiet period {:?} (target <= 5 ms); fastest {:?}",
        median,
        QUIET,
        median.saturating_sub(QUIET),
        times[0]
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
