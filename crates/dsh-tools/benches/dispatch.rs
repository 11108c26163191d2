//! `cargo bench -p dsh-tools --bench dispatch`: a trivial typed tool through
//! the registry (raw-JSON validation, deserialisation, three pass-through
//! middlewares, result normalisation) against calling its body directly.
//! Prints the per-call overhead of the pipeline.

#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use dsh_tools::{
    define_tool, ContentBlock, ToolArgs, ToolContext, ToolError, ToolExecution, ToolRegistry,
};
use serde::Deserialize;
use serde_json::json;
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
    let registry = ToolRegistry::new();
    registry
        .register(define_tool("add", "Adds two integers.", add))
        .unwrap();
    for _ in 0..3 {
        registry.use_fn(|exec, next| async move { Ok(next.run(exec).await) });
    }
    registry
}

fn ctx() -> ToolContext {
    ToolContext {
        call_id: "call-1".into(),
        name: "add".into(),
        agent: None,
        cancel: Default::default(),
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    let args = json!({"a": 2, "b": 40});
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("registry+validation+3 middlewares", |b| {
        b.iter(|| {
            rt.block_on(registry.execute(ToolExecution::new(
                "call-1",
                "add",
                black_box(args.clone()),
            )))
        })
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
    let args = json!({"a": 2, "b": 40});
    let check = rt.block_on(registry.execute(ToolExecution::new("c", "add", args.clone())));
    assert_eq!(check.text(), "42");
    let (ours, direct) = ratio::compare(
        || {
            ratio::keep(rt.block_on(registry.execute(ToolExecution::new(
                "call-1",
                "add",
                black_box(args.clone()),
            ))));
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
}

criterion_group!(benches, bench);

fn main() {
    benches();
    overhead();
    Criterion::default().configure_from_args().final_summary();
}
