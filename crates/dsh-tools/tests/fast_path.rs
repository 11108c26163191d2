//! Typed tools whose arguments serde checks exactly read them straight from
//! the model's text: that must never accept what the schema refuses, and
//! must give the same arguments and the same messages as the checked path.

// Several structs exist only for what their derives work out.
#![allow(dead_code)]

use dsh_tools::{
    decode_args, define_tool, parse_arguments, ArgType, ContentBlock, ErrorCode, ToolArgs,
    ToolExecution, ToolRegistry,
};
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Inner {
    /// A flag.
    on: bool,
    /// A small number.
    level: Option<u8>,
}

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
enum Color {
    Red,
    Blue,
}

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
struct Exact {
    /// A name.
    name: String,
    /// A count.
    count: Option<u64>,
    /// Tags.
    tags: Option<Vec<String>>,
    /// A nested object.
    inner: Option<Inner>,
    /// A color.
    color: Option<Color>,
    /// Free-form labels.
    labels: Option<HashMap<String, String>>,
    /// One character.
    initial: Option<char>,
    /// A signed number.
    delta: Option<i32>,
}

#[derive(ToolArgs, Deserialize)]
struct WithToolEnum {
    /// Restricted by the schema only.
    #[tool(enum = ["a", "b"])]
    mode: String,
}

#[derive(ToolArgs, Deserialize)]
struct WithDefault {
    /// Filled in by the schema.
    #[tool(default = 5)]
    n: i64,
}

#[derive(ToolArgs, Deserialize)]
struct WithBound {
    /// Bounded by the schema only.
    #[tool(minimum = 1)]
    n: i64,
}

#[derive(ToolArgs, Deserialize)]
struct WithAlias {
    /// serde also reads `p`.
    #[serde(alias = "p")]
    path: String,
}

#[derive(ToolArgs, Deserialize)]
struct HoldsInexact {
    /// A nested struct with a schema-only rule.
    inner: WithBound,
}

#[derive(ToolArgs, Deserialize)]
enum Aliased {
    #[serde(alias = "crimson")]
    Red,
}

#[derive(ToolArgs, Deserialize)]
struct Wide {
    /// Beyond what JSON parsers keep exact.
    n: i128,
}

#[test]
fn exactness_is_worked_out_from_the_fields() {
    let worked_out = [
        ("Exact", <Exact as ToolArgs>::SERDE_EXACT),
        ("Color", <Color as ArgType>::SERDE_EXACT),
        ("WithToolEnum", <WithToolEnum as ToolArgs>::SERDE_EXACT),
        ("WithDefault", <WithDefault as ToolArgs>::SERDE_EXACT),
        ("WithBound", <WithBound as ToolArgs>::SERDE_EXACT),
        ("WithAlias", <WithAlias as ToolArgs>::SERDE_EXACT),
        ("HoldsInexact", <HoldsInexact as ToolArgs>::SERDE_EXACT),
        ("Aliased", <Aliased as ArgType>::SERDE_EXACT),
        ("Wide", <Wide as ToolArgs>::SERDE_EXACT),
    ];
    assert_eq!(
        worked_out,
        [
            ("Exact", true),
            ("Color", true),
            ("WithToolEnum", false),
            ("WithDefault", false),
            ("WithBound", false),
            ("WithAlias", false),
            ("HoldsInexact", false),
            ("Aliased", false),
            ("Wide", false),
        ]
    );
}

/// Argument texts near the schema of `Exact`: right and wrong types, extra
/// keys, arrays at the top, nulls, out-of-range numbers, duplicates.
fn texts() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("-5".to_owned()),
        Just("7".to_owned()),
        Just("300".to_owned()),
        Just("18446744073709551616".to_owned()),
        Just("2.5".to_owned()),
        Just("\"x\"".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"ab\"".to_owned()),
        Just("\"Red\"".to_owned()),
        Just("\"Green\"".to_owned()),
        Just("[\"a\", 1]".to_owned()),
        Just("[\"a\"]".to_owned()),
        Just("{\"on\": true}".to_owned()),
        Just("{\"on\": true, \"level\": 9, \"x\": 1}".to_owned()),
        Just("{\"k\": \"v\"}".to_owned()),
        Just("{\"k\": 1}".to_owned()),
    ];
    let key = prop_oneof![
        Just("name"),
        Just("count"),
        Just("tags"),
        Just("inner"),
        Just("color"),
        Just("labels"),
        Just("initial"),
        Just("delta"),
        Just("extra"),
    ];
    let object = prop::collection::vec((key, value.clone()), 0..6).prop_map(|pairs| {
        let body: Vec<String> = pairs
            .into_iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        format!("{{{}}}", body.join(", "))
    });
    prop_oneof![
        8 => object,
        1 => value.prop_map(|v| format!("[{v}]")),
        1 => Just("  {\"name\": \"n\"}  ".to_owned()),
    ]
}

proptest! {
    #[test]
    fn what_serde_reads_the_schema_accepts(text in texts()) {
        let spec = Exact::schema();
        let checked = parse_arguments(&text)
            .map_err(|_| ())
            .and_then(|value| decode_args::<Exact>(&spec, value).map_err(|_| ()));
        if text.trim_start().starts_with('{') {
            if let Ok(direct) = serde_json::from_str::<Exact>(&text) {
                prop_assert_eq!(Ok(direct), checked, "serde read {} but the schema refused it", text);
            }
        }
    }
}

async fn run(registry: &ToolRegistry, text: &str) -> (bool, String) {
    let result = registry
        .execute(ToolExecution::new("c1", "exact", text))
        .await;
    (result.is_error, result.text())
}

#[tokio::test]
async fn text_and_values_give_the_same_results() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool(
            "exact",
            "Echoes.",
            |args: Exact, _| async move { Ok(vec![ContentBlock::text(format!("{args:?}"))]) },
        ))
        .unwrap();
    for text in [
        r#"{"name": "n", "count": 3, "inner": {"on": true}, "color": "Blue"}"#,
        r#"{"name": 1, "count": -5, "tags": ["a", 2], "inner": {"on": 1, "x": 2}}"#,
        r#"{"count": 300, "delta": 3000000000, "initial": "ab"}"#,
        r#"[{"name": "n"}]"#,
        r#"{"name": "n", "name": "m"}"#,
        "",
    ] {
        let from_text = run(&registry, text).await;
        let value = parse_arguments(text).unwrap();
        let from_value = registry
            .execute(ToolExecution::new("c1", "exact", value))
            .await;
        assert_eq!(
            from_text,
            (from_value.is_error, from_value.text()),
            "{text}"
        );
    }
    let (failed, message) = run(&registry, r#"{"count": -5, "color": "Green"}"#).await;
    assert!(failed);
    assert_eq!(
        message,
        r#"Error: invalid arguments: missing required property "name"; "count" must be at least 0; "color" must be one of ["Red","Blue"]"#
    );
    let result = registry
        .execute(ToolExecution::new("c1", "exact", "[1]"))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        result.text(),
        r#"Error: invalid arguments: "arguments" must be an object"#
    );
}

#[tokio::test]
async fn a_middleware_that_reads_the_arguments_parses_them_once() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool(
            "exact",
            "Echoes.",
            |args: Exact, _| async move { Ok(vec![ContentBlock::text(args.name)]) },
        ))
        .unwrap();
    registry.use_fn(|exec, next| async move {
        assert_eq!(exec.arguments.as_value().unwrap()["name"], "seen");
        Ok(next.run(exec).await)
    });
    let (failed, text) = run(&registry, r#"{"name": "seen"}"#).await;
    assert!(!failed);
    assert_eq!(text, "seen");
}
