//! Property tests for `SchemaSpec::from_json_schema` against the `jsonschema`
//! crate on random schemas: an import never refuses arguments the schema
//! accepts, and a lossless import accepts exactly them.
//!
//! Values hold no `null` and no whole number written as a float: there
//! dsh-tools reads JSON its own way on purpose (see `ImportedSchema::lossless`).

use dsh_tools::{Dialect, SchemaSpec};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..5).prop_map(Value::from),
        (-5.0f64..5.0)
            .prop_filter("a fraction", |f| f.fract() != 0.0)
            .prop_map(Value::from),
    ]
}

fn small_string() -> impl Strategy<Value = Value> {
    "[aé]{0,4}".prop_map(Value::from)
}

fn leaf_value() -> BoxedStrategy<Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        number(),
        small_string(),
    ]
    .boxed()
}

/// Inserts each present `(key, value)`.
fn with(mut map: Map<String, Value>, extra: Vec<(&str, Option<Value>)>) -> Value {
    for (key, value) in extra {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

fn typed_leaf() -> impl Strategy<Value = Value> {
    let count = || prop::option::of((0u64..4).prop_map(Value::from));
    let numeric = |ty: &'static str| {
        (
            prop::option::of(number()),
            prop::option::of(number()),
            prop::option::weighted(0.2, number()),
            prop::option::weighted(0.2, number()),
            prop::option::weighted(0.1, Just(json!(2))),
        )
            .prop_map(move |(min, max, xmin, xmax, multiple)| {
                let mut map = Map::new();
                map.insert("type".into(), json!(ty));
                with(
                    map,
                    vec![
                        ("minimum", min),
                        ("maximum", max),
                        ("exclusiveMinimum", xmin),
                        ("exclusiveMaximum", xmax),
                        ("multipleOf", multiple),
                    ],
                )
            })
    };
    prop_oneof![
        numeric("integer"),
        numeric("number"),
        (
            count(),
            count(),
            prop::option::weighted(0.1, Just(json!("^a"))),
            prop::option::weighted(0.1, Just(json!("email"))),
        )
            .prop_map(|(min, max, pattern, format)| {
                let mut map = Map::new();
                map.insert("type".into(), json!("string"));
                with(
                    map,
                    vec![
                        ("minLength", min),
                        ("maxLength", max),
                        ("pattern", pattern),
                        ("format", format),
                    ],
                )
            }),
        Just(json!({"type": "boolean"})),
    ]
}

/// Keywords any schema may carry: enum, const, default, annotations.
fn decorate(schema: Value) -> impl Strategy<Value = Value> {
    (
        prop::option::weighted(0.2, prop::collection::vec(leaf_value(), 0..4)),
        prop::option::weighted(0.1, leaf_value()),
        prop::option::weighted(0.2, leaf_value()),
        prop::option::weighted(0.2, Just(json!("Said to the model"))),
        prop::option::weighted(0.2, Just(json!("Title"))),
    )
        .prop_map(move |(values, constant, default, description, title)| {
            let Value::Object(map) = schema.clone() else {
                return schema.clone();
            };
            with(
                map,
                vec![
                    ("enum", values.map(Value::Array)),
                    ("const", constant),
                    ("default", default),
                    ("description", description),
                    ("title", title),
                ],
            )
        })
}

/// Makes a typed schema nullable the two ways schemas say it, or leaves it.
fn maybe_nullable(schema: Value) -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => Just(schema.clone()),
        1 => Just({
            let mut s = schema.clone();
            if let Some(ty) = s.get("type").cloned() {
                s["type"] = json!([ty, "null"]);
            }
            s
        }),
        1 => Just(json!({"anyOf": [schema, {"type": "null"}]})),
    ]
}

fn any_schema() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        8 => typed_leaf().prop_flat_map(decorate).prop_flat_map(maybe_nullable),
        1 => Just(json!({})),
        1 => prop::collection::vec(leaf_value(), 1..4).prop_map(|v| json!({"enum": v})),
        1 => (typed_leaf(), typed_leaf()).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        let count = || prop::option::of((0u64..4).prop_map(Value::from));
        prop_oneof![
            object_schema(inner.clone()),
            (
                inner,
                count(),
                count(),
                prop::option::weighted(0.1, Just(json!(true)))
            )
                .prop_map(|(items, min, max, unique)| {
                    let mut map = Map::new();
                    map.insert("type".into(), json!("array"));
                    map.insert("items".into(), items);
                    with(
                        map,
                        vec![
                            ("minItems", min),
                            ("maxItems", max),
                            ("uniqueItems", unique),
                        ],
                    )
                }),
        ]
    })
    .boxed()
}

fn object_schema(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(prop::option::of(inner), NAMES.len()),
        prop::sample::subsequence(NAMES.to_vec(), 0..=NAMES.len()),
        prop_oneof![
            Just(None),
            Just(Some(json!(false))),
            Just(Some(json!(true)))
        ],
    )
        .prop_map(|(props, required, additional)| {
            let properties: Map<String, Value> = NAMES
                .iter()
                .zip(props)
                .filter_map(|(name, schema)| Some(((*name).to_owned(), schema?)))
                .collect();
            let mut map = Map::new();
            map.insert("type".into(), json!("object"));
            map.insert("properties".into(), Value::Object(properties));
            if !required.is_empty() {
                map.insert("required".into(), json!(required));
            }
            with(map, vec![("additionalProperties", additional)])
        })
}

/// A value shaped like `schema` most of the time.
fn near(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(constant) = schema.get("const") {
        return prop_oneof![3 => Just(constant.clone()), 1 => leaf_value()].boxed();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if !values.is_empty() {
            return prop_oneof![3 => prop::sample::select(values.clone()), 1 => leaf_value()]
                .boxed();
        }
    }
    let ty = match schema.get("type") {
        Some(Value::Array(types)) => types.first().and_then(Value::as_str),
        Some(ty) => ty.as_str(),
        None => None,
    };
    let shaped: BoxedStrategy<Value> = match ty {
        Some("integer") => (-6i64..6).prop_map(Value::from).boxed(),
        Some("number") => number().boxed(),
        Some("string") => small_string().boxed(),
        Some("array") => match schema.get("items") {
            Some(items) => prop::collection::vec(near(items), 0..4)
                .prop_map(Value::Array)
                .boxed(),
            None => prop::collection::vec(leaf_value(), 0..4)
                .prop_map(Value::Array)
                .boxed(),
        },
        Some("object") => near_object(schema),
        _ => leaf_value(),
    };
    prop_oneof![16 => shaped, 1 => leaf_value()].boxed()
}

fn near_object(schema: &Value) -> BoxedStrategy<Value> {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = NAMES
        .iter()
        .map(|name| {
            let name = (*name).to_owned();
            let value = match properties.get(&name) {
                Some(schema) => near(schema),
                None => leaf_value(),
            };
            let weight = if properties.contains_key(&name) { 6 } else { 1 };
            prop_oneof![
                2 => Just(None),
                weight => value.prop_map(move |v| Some((name.clone(), v))),
            ]
            .boxed()
        })
        .collect();
    fields
        .prop_map(|kv| Value::Object(kv.into_iter().flatten().collect()))
        .boxed()
}

/// No `null` anywhere (dsh-tools reads it as absent).
fn has_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(map) => map.values().any(has_null),
        _ => false,
    }
}

fn schema_and_values() -> impl Strategy<Value = (Value, Vec<Value>)> {
    object_schema(any_schema()).prop_flat_map(|schema| {
        let values = prop::collection::vec(near_object(&schema), 8);
        (Just(schema), values)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn imports_accept_what_the_schema_accepts((schema, values) in schema_and_values()) {
        let imported = SchemaSpec::from_json_schema(&schema).unwrap();
        prop_assert_eq!(imported.spec.check(), Ok(()), "{}", schema);
        let original = jsonschema::validator_for(&schema).unwrap();
        let emitted = imported.spec.to_json_schema(Dialect::Mcp);
        let reemitted = jsonschema::validator_for(&emitted).unwrap();
        for value in values.iter().filter(|v| !has_null(v)) {
            let theirs = original.is_valid(value);
            let ours = imported.spec.validate(value);
            if theirs {
                prop_assert!(
                    ours.is_empty(),
                    "refused what the schema accepts: schema {} value {} {:?}",
                    schema, value, ours
                );
            }
            if imported.lossless {
                prop_assert_eq!(
                    ours.is_empty(), theirs,
                    "lossless but different: schema {} value {} {:?}", schema, value, ours
                );
                prop_assert_eq!(
                    reemitted.is_valid(value), theirs,
                    "lossless but the re-emitted schema differs: {} vs {} on {}",
                    schema, emitted, value
                );
            }
        }
    }

    #[test]
    fn import_never_panics(schema in any_schema()) {
        // Any schema in a property position, and as the root.
        let root = json!({"type": "object", "properties": {"p": schema.clone()}});
        let imported = SchemaSpec::from_json_schema(&root).unwrap();
        prop_assert_eq!(imported.spec.check(), Ok(()));
        let _ = SchemaSpec::from_json_schema(&schema);
    }
}
