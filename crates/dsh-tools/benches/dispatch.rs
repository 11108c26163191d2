//! `cargo bench -p dsh-tools --bench dispatch`: a trivial typed tool called
//! with the model's argument text through the registry (parsing, checking,
//! deserialisation, three pass-through middlewares, result normalisation)
//! against calling its body directly. Prints the per-call overhead of the
//! pipeline and the cost of one pass-through middleware (3 layers against
//! none, interleaved).

#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use dsh_tools::{
    define_tool, ContentBlock, SyncMiddleware, ToolArgs, ToolContext, ToolError, ToolExecution,
    ToolRegistry,
};
use serde::Deserialize;
use std::hint::black_box;
use std::time::Duration;

#[derive(ToolArgs, Deserialize)]
struct AddArgs {
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
}

async fn add(args: AddArgs, _ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
    Ok(vec![ContentBlock::text((args.a + args.b).to_string())])
}

fn registry() -> ToolRegistry {
    registry_with(3)
}

/// A pass-through layer with no future of its own.
struct PassThrough;

impl SyncMiddleware for PassThrough {}

/// The tool behind `layers` pass-through sync middlewares.
fn registry_with_sync(layers: usize) -> ToolRegistry {
    let registry = registry_with(0);
    for _ in 0..layers {
        registry.use_sync_middleware(PassThrough);
    }
    registry
}

/// The tool behind `layers` pass-through middlewares.
fn registry_with(layers: usize) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool("add", "Adds two integers.", add))
        .unwrap();
    for _ in 0..layers {
        registry.use_fn(|exec, next| async move { Ok(next.run(exec).await) });
    }
    registry
}

fn ctx() -> ToolContext {
    ToolContext::new("call-1", "add")
}

/// The model's argument text, the same for every side.
const ARGS: &str = r#"{"a":2,"b":40}"#;

async fn call(registry: &ToolRegistry) -> dsh_tools::ToolExecutionResult {
    registry
        .execute(ToolExecution::new("call-1", "add", black_box(ARGS)))
        .await
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    let bare = registry_with(0);
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("registry+validation+3 middlewares", |b| {
        b.iter(|| rt.block_on(call(&registry)))
    });
    group.bench_function("registry+validation, no middleware", |b| {
        b.iter(|| rt.block_on(call(&bare)))
    });
    group.bench_function("body directly", |b| {
        b.iter(|| rt.block_on(add(black_box(AddArgs { a: 2, b: 40 }), ctx())))
    });
    group.finish();
}

fn overhead() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    let bare = registry_with(0);
    assert_eq!(rt.block_on(call(&registry)).text(), "42");
    assert_eq!(rt.block_on(call(&bare)).text(), "42");
    let (ours, direct) = ratio::compare(
        || {
            ratio::keep(rt.block_on(call(&registry)));
        },
        || {
            let _ = ratio::keep(rt.block_on(add(black_box(AddArgs { a: 2, b: 40 }), ctx())));
        },
        21,
        Duration::from_millis(40),
    );
    println!(
        "RESULT dispatch: registry {ours:?}/call, body directly {direct:?}/call, pipeline overhead {:?}/call",
        ours.saturating_sub(direct)
    );
    let (three, none) = ratio::compare(
        || {
            ratio::keep(rt.block_on(call(&registry)));
        },
        || {
            ratio::keep(rt.block_on(call(&bare)));
        },
        21,
        Duration::from_millis(40),
    );
    println!(
        "RESULT dispatch per pass-through middleware (closure, boxed future): 3 layers {three:?}/call, none {none:?}/call, {:?} per layer (target <= 25ns)",
        three.saturating_sub(none) / 3
    );
    let sync = registry_with_sync(3);
    assert_eq!(rt.block_on(call(&sync)).text(), "42");
    let (three, none) = ratio::compare(
        || {
            ratio::keep(rt.block_on(call(&sync)));
        },
        || {
            ratio::keep(rt.block_on(call(&bare)));
        },
        21,
        Duration::from_millis(40),
    );
    println!(
        "RESULT dispatch per pass-through SyncMiddleware: 3 layers {three:?}/call, none {none:?}/call, {:?} per layer (target <= 25ns)",
        three.saturating_sub(none) / 3
    );
    // A registry with no layer at all skips the state a chain shares, so
    // "3 layers against none" includes that fixed cost; 3 against 1 is the
    // cost of a layer alone.
    for (kind, three, one) in [
        ("closure", registry_with(3), registry_with(1)),
        (
            "SyncMiddleware",
            registry_with_sync(3),
            registry_with_sync(1),
        ),
    ] {
        let (t3, t1) = ratio::compare(
            || {
                ratio::keep(rt.block_on(call(&three)));
            },
            || {
                ratio::keep(rt.block_on(call(&one)));
            },
            21,
            Duration::from_millis(40),
        );
        println!(
            "RESULT dispatch per pass-through {kind} layer beyond the first: 3 layers {t3:?}/call, 1 layer {t1:?}/call, {:?} per layer",
            t3.saturating_sub(t1) / 2
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    overhead();
    Criterion::default().configure_from_args().final_summary();
}
