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

/// A spec with every kind of bound, on top-level, nested and element properties.
fn bounded_spec() -> SchemaSpec {
    SchemaSpec::new()
        .prop(
            "name",
            SchemaProp::string()
                .required()
                .description("Who")
                .min_length(1)
                .max_length(64),
        )
        .prop("code", SchemaProp::string().min_length(3).max_length(3))
        .prop(
            "limit",
            SchemaProp::integer()
                .description("How many.")
                .default_value(10)
                .minimum(1)
                .maximum(100),
        )
        .prop("ratio", SchemaProp::number().minimum(-0.5).maximum(0.5))
        .prop("big", SchemaProp::integer().minimum(0).maximum(u64::MAX))
        .prop(
            "tags",
            SchemaProp::array(SchemaProp::string().max_length(16))
                .min_items(1)
                .max_items(10),
        )
        .prop(
            "target",
            SchemaProp::object(
                SchemaSpec::new().prop("port", SchemaProp::integer().minimum(1).maximum(65535)),
            ),
        )
}

#[test]
fn bounded_mcp_snapshot() {
    insta::assert_json_snapshot!(bounded_spec().to_json_schema(Dialect::Mcp));
}

#[test]
fn bounded_openai_strict_snapshot() {
    insta::assert_json_snapshot!(bounded_spec().to_json_schema(Dialect::OpenAiStrict));
}

#[test]
fn bounded_gemini_snapshot() {
    insta::assert_json_snapshot!(bounded_spec().to_json_schema(Dialect::Gemini));
}

#[test]
fn bounds_in_every_dialect() {
    let spec = bounded_spec();
    assert!(spec.check().is_ok());
    assert!(spec.supports_strict());
    for dialect in [
        Dialect::Mcp,
        Dialect::Anthropic,
        Dialect::OpenAi,
        Dialect::Gemini,
    ] {
        let schema = spec.to_json_schema(dialect);
        let p = &schema["properties"];
        assert_eq!(p["name"]["minLength"], 1, "{dialect}");
        assert_eq!(p["name"]["maxLength"], 64, "{dialect}");
        assert_eq!(p["limit"]["minimum"], 1, "{dialect}");
        assert_eq!(p["limit"]["maximum"], 100, "{dialect}");
        assert_eq!(p["big"]["maximum"], u64::MAX, "{dialect}");
        assert_eq!(p["tags"]["minItems"], 1, "{dialect}");
        assert_eq!(p["tags"]["maxItems"], 10, "{dialect}");
        assert_eq!(p["tags"]["items"]["maxLength"], 16, "{dialect}");
        assert_eq!(
            p["target"]["properties"]["port"]["maximum"], 65535,
            "{dialect}"
        );
    }
    // Key order: type, description, enum, default, the bounds, then nested keys.
    let mcp = spec.to_json_schema(Dialect::Mcp);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&mcp["properties"]["limit"]),
        ["type", "description", "default", "minimum", "maximum"]
    );
    assert_eq!(
        keys(&mcp["properties"]["tags"]),
        ["type", "minItems", "maxItems", "items"]
    );
}

#[test]
fn strict_mode_says_string_lengths_in_the_description() {
    let strict = bounded_spec().to_json_schema(Dialect::OpenAiStrict);
    let p = &strict["properties"];
    assert_eq!(
        p["name"],
        json!({"type": "string", "description": "Who. At least 1 character. At most 64 characters."})
    );
    assert_eq!(
        p["code"],
        json!({"type": ["string", "null"], "description": "Exactly 3 characters."})
    );
    assert_eq!(
        p["limit"],
        json!({
            "type": ["integer", "null"],
            "description": "How many. Default: 10.",
            "minimum": 1,
            "maximum": 100
        })
    );
    assert_eq!(
        p["tags"]["items"],
        json!({"type": "string", "description": "At most 16 characters."})
    );
    assert_eq!(p["tags"]["minItems"], 1);
    let mut keys = Vec::new();
    all_keys(&strict, &mut keys);
    assert!(!keys.iter().any(|k| k == "minLength" || k == "maxLength"));
    let one = SchemaSpec::new().prop("c", SchemaProp::string().required().min_length(1));
    assert_eq!(
        one.to_json_schema(Dialect::OpenAiStrict)["properties"]["c"]["description"],
        "At least 1 character."
    );
}

#[test]
fn unbounded_specs_emit_no_bounds() {
    let mut keys = Vec::new();
    for dialect in Dialect::ALL {
        all_keys(&common::deploy_spec().to_json_schema(dialect), &mut keys);
    }
    for bound in [
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
    ] {
        assert!(!keys.iter().any(|k| k == bound), "{bound}");
    }
}

#[test]
fn any_is_an_empty_schema_with_its_description() {
    let spec = SchemaSpec::new()
        .prop(
            "value",
            SchemaProp::any().required().description("Anything."),
        )
        .prop("bare", SchemaProp::any())
        .prop(
            "choice",
            SchemaProp::any().enum_values([json!("a"), json!(1)]),
        );
    assert_eq!(
        spec.to_json_schema(Dialect::Mcp),
        json!({
            "type": "object",
            "properties": {
                "value": {"description": "Anything."},
                "bare": {},
                "choice": {"enum": ["a", 1]}
            },
            "required": ["value"]
        })
    );
    // Strict mode cannot express it; what is emitted still never gets a `type`.
    assert!(!spec.supports_strict());
    let strict = spec.to_json_schema(Dialect::OpenAiStrict);
    assert_eq!(strict["properties"]["bare"], json!({}));
    assert_eq!(
        strict["properties"]["choice"],
        json!({"enum": ["a", 1, null]})
    );
    assert_eq!(
        spec.to_json_schema(Dialect::Gemini)["properties"]["choice"],
        json!({"description": "One of: [\"a\",1]."})
    );
    let nested = SchemaSpec::new().prop("xs", SchemaProp::array(SchemaProp::any()));
    assert!(!nested.supports_strict());
    assert_eq!(
        nested.to_json_schema(Dialect::Mcp)["properties"]["xs"],
        json!({"type": "array", "items": {}})
    );
}
