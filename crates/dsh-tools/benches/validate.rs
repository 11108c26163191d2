//! `cargo bench -p dsh-tools --bench validate`: our validator against the
//! `jsonschema` crate on the equivalent compiled schema. Valid arguments are
//! timed against both `is_valid` (jsonschema's yes/no answer) and
//! `iter_errors(..).collect()` (its every-error path, the one that gives what
//! we return); invalid arguments against the every-error path.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use dsh_tools::Dialect;
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::Duration;

fn valid_args() -> Value {
    json!({
        "service": "api",
        "version": "v1.4.2",
        "strategy": "canary",
        "replicas": 3,
        "priority": 2,
        "dry_run": false,
        "max_cpu": 1.5,
        "resources": {"memory_mb": 512, "disk_gb": 10},
        "servers": [{"host": "a.example", "port": 8080}, {"host": "b.example", "role": "replica"}],
        "tags": ["blue", "eu"]
    })
}

fn invalid_args() -> Value {
    json!({
        "service": 7,
        "strategy": "blue-green",
        "replicas": "3",
        "priority": 9,
        "max_cpu": "lots",
        "resources": {"disk_gb": "big", "gpu": 1},
        "servers": [{"host": "a.example", "port": "80"}, {"role": "leader"}],
        "tags": ["blue", 3]
    })
}

/// Five violations: a wrong type, a value outside an enum, a missing
/// required property, one nested wrong type, one undeclared key.
fn invalid5_args() -> Value {
    json!({
        "service": 7,
        "version": "v1.4.2",
        "strategy": "blue-green",
        "resources": {"memory_mb": "512", "gpu": 1},
        "tags": ["blue", "eu"]
    })
}

fn validators() -> (dsh_tools::SchemaSpec, jsonschema::Validator) {
    let spec = common::deploy_spec();
    let schema = spec.to_json_schema(Dialect::Mcp);
    let compiled = jsonschema::validator_for(&schema).expect("the emitted schema compiles");
    (spec, compiled)
}

fn bench(c: &mut Criterion) {
    let (spec, compiled) = validators();
    for (label, args) in [
        ("valid", valid_args()),
        ("invalid5", invalid5_args()),
        ("invalid", invalid_args()),
    ] {
        let mut group = c.benchmark_group(format!("validate/{label}"));
        group.bench_function("dsh-tools", |b| b.iter(|| spec.validate(black_box(&args))));
        group.bench_function("jsonschema", |b| {
            b.iter(|| compiled.iter_errors(black_box(&args)).collect::<Vec<_>>())
        });
        if label == "valid" {
            group.bench_function("jsonschema is_valid", |b| {
                b.iter(|| compiled.is_valid(black_box(&args)))
            });
        }
        group.finish();
    }
}

fn ratios() {
    let (spec, compiled) = validators();
    let valid = valid_args();
    assert!(compiled.is_valid(&valid) && spec.validate(&valid).is_empty());
    let times = ratio::compare(
        || {
            ratio::keep(spec.validate(black_box(&valid)));
        },
        || {
            ratio::keep(compiled.is_valid(black_box(&valid)));
        },
        21,
        Duration::from_millis(40),
    );
    ratio::report(
        "validate/valid vs is_valid",
        "dsh-tools",
        "jsonschema",
        times,
    );
    for (label, args) in [
        ("valid", valid_args()),
        ("invalid5", invalid5_args()),
        ("invalid", invalid_args()),
    ] {
        let ours = spec.validate(&args).len();
        let theirs = compiled.iter_errors(&args).count();
        println!("{label}: dsh-tools finds {ours} violations, jsonschema {theirs}");
        let times = ratio::compare(
            || {
                ratio::keep(spec.validate(black_box(&args)));
            },
            || {
                ratio::keep(compiled.iter_errors(black_box(&args)).collect::<Vec<_>>());
            },
            21,
            Duration::from_millis(40),
        );
        ratio::report(
            &format!("validate/{label} vs iter_errors"),
            "dsh-tools",
            "jsonschema",
            times,
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    ratios();
    Criterion::default().configure_from_args().final_summary();
}
