//! Snapshot tests: the JSON Schema each dialect emits for a realistic nested spec.

mod common;

use dsh_tools::{Dialect, SchemaProp, SchemaSpec};
use serde_json::{json, Value};

fn all_keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                all_keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| all_keys(v, out)),
        _ => {}
    }
}

#[test]
fn mcp_snapshot() {
    insta::assert_json_snapshot!(common::deploy_spec().to_json_schema(Dialect::Mcp));
}

#[test]
fn openai_strict_snapshot() {
    insta::assert_json_snapshot!(common::deploy_spec().to_json_schema(Dialect::OpenAiStrict));
}

#[test]
fn gemini_snapshot() {
    insta::assert_json_snapshot!(common::deploy_spec().to_json_schema(Dialect::Gemini));
}

#[test]
fn anthropic_and_openai_equal_mcp() {
    let spec = common::deploy_spec();
    let mcp = spec.to_json_schema(Dialect::Mcp);
    assert_eq!(spec.to_json_schema(Dialect::Anthropic), mcp);
    assert_eq!(spec.to_json_schema(Dialect::OpenAi), mcp);
}

#[test]
fn no_noise_keys_in_any_dialect() {
    for dialect in Dialect::ALL {
        let mut keys = Vec::new();
        all_keys(&common::deploy_spec().to_json_schema(dialect), &mut keys);
        for noise in ["$schema", "$ref", "$defs", "title", "format"] {
            assert!(!keys.iter().any(|k| k == noise), "{dialect}: {noise}");
        }
    }
}

#[test]
fn declaration_order_is_kept() {
    let spec = SchemaSpec::new()
        .prop("zeta", SchemaProp::string().required())
        .prop("alpha", SchemaProp::string())
        .prop("mid", SchemaProp::string().required());
    let schema = spec.to_json_schema(Dialect::Mcp);
    let names: Vec<_> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    assert_eq!(schema["required"], json!(["zeta", "mid"]));
}

#[test]
fn required_and_description_only_when_non_empty() {
    let spec = SchemaSpec::new().prop("a", SchemaProp::string().description(""));
    assert_eq!(
        spec.to_json_schema(Dialect::Mcp),
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    );
    assert_eq!(
        SchemaSpec::new().to_json_schema(Dialect::Mcp),
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn strict_makes_optional_nullable_and_everything_required() {
    let spec = SchemaSpec::new()
        .prop("q", SchemaProp::string().required())
        .prop("mode", SchemaProp::string().one_of(["a", "b"]))
        .prop("free", SchemaProp::any_object());
    assert_eq!(
        spec.to_json_schema(Dialect::OpenAiStrict),
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "free": {"type": ["object", "null"], "properties": {}, "additionalProperties": false}
            },
            "required": ["q", "mode", "free"],
            "additionalProperties": false
        })
    );
}

#[test]
fn dialect_names_round_trip() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.as_str().parse::<Dialect>().unwrap(), dialect);
    }
    let err = "json".parse::<Dialect>().unwrap_err();
    assert!(err.to_string().contains("unknown schema dialect \"json\""));
}

#[test]
fn gemini_leaves_out_empty_properties() {
    let spec = SchemaSpec::new().prop("opts", SchemaProp::any_object());
    assert_eq!(
        spec.to_json_schema(Dialect::Gemini),
        json!({"type": "object", "properties": {"opts": {"type": "object"}}})
    );
    assert_eq!(
        SchemaSpec::new().to_json_schema(Dialect::Gemini),
        json!({"type": "object"})
    );
}

#[test]
fn one_of_on_an_array_restricts_its_elements() {
    let prop = SchemaProp::array(SchemaProp::string()).one_of(["a", "b"]);
    let spec = SchemaSpec::new().prop("tags", prop);
    assert!(spec.check().is_ok());
    assert_eq!(
        spec.to_json_schema(Dialect::Mcp)["properties"]["tags"],
        json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}})
    );
    assert!(spec.validate(&json!({"tags": ["a", "b", "a"]})).is_empty());
    assert_eq!(spec.validate(&json!({"tags": ["c"]})).len(), 1);
    assert!(!SchemaSpec::new()
        .prop("m", SchemaProp::any_object())
        .supports_strict());
    assert!(common::deploy_spec().supports_strict());
}
