//! Property tests: generated specs and values.

use dsh_tools::{parse_arguments, Dialect, SchemaProp, SchemaSpec, SchemaType};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn leaf_prop() -> impl Strategy<Value = SchemaProp> {
    prop_oneof![
        Just(SchemaProp::string()),
        prop::collection::vec("[a-z]{1,6}", 1..4).prop_map(|v| SchemaProp::string().one_of(v)),
        Just(SchemaProp::number()),
        Just(SchemaProp::integer()),
        prop::collection::vec(-5i64..5, 1..4)
            .prop_map(|v| SchemaProp::integer().enum_values(v.into_iter().map(Value::from))),
        Just(SchemaProp::boolean()),
        Just(SchemaProp::any_object()),
        Just(SchemaProp::any_array()),
    ]
}

fn spec_from(props: Vec<(SchemaProp, bool)>, closed: bool) -> SchemaSpec {
    let mut spec = SchemaSpec::new();
    for (i, (prop, required)) in props.into_iter().enumerate() {
        spec.insert(format!("k{i}"), prop.set_required(required));
    }
    if closed {
        spec = spec.closed();
    }
    spec
}

fn any_prop() -> impl Strategy<Value = SchemaProp> {
    leaf_prop().prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            (
                prop::collection::vec((inner.clone(), any::<bool>()), 0..5),
                any::<bool>()
            )
                .prop_map(|(props, closed)| SchemaProp::object(spec_from(props, closed))),
            inner.prop_map(SchemaProp::array),
        ]
    })
}

fn any_spec() -> impl Strategy<Value = SchemaSpec> {
    (
        prop::collection::vec((any_prop(), any::<bool>()), 0..8),
        any::<bool>(),
    )
        .prop_map(|(props, closed)| spec_from(props, closed))
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z0-9]{0,4}".prop_map(Value::from),
        "k[0-7]".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("k[0-9]", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A strategy for values that fit `prop`.
fn fitting_value(prop: &SchemaProp) -> BoxedStrategy<Value> {
    if let Some(values) = prop.get_enum() {
        return prop::sample::select(values.to_vec()).boxed();
    }
    match prop.ty() {
        SchemaType::String => "[ -~]{0,8}".prop_map(Value::from).boxed(),
        SchemaType::Number => (-1e9f64..1e9).prop_map(Value::from).boxed(),
        SchemaType::Integer => any::<i64>().prop_map(Value::from).boxed(),
        SchemaType::Boolean => any::<bool>().prop_map(Value::from).boxed(),
        SchemaType::Object => match prop.get_properties() {
            Some(spec) => fitting_object(spec),
            None => Just(Value::Object(Map::new())).boxed(),
        },
        SchemaType::Array => match prop.get_items() {
            Some(items) => prop::collection::vec(fitting_value(items), 0..4)
                .prop_map(Value::Array)
                .boxed(),
            None => prop::collection::vec(arb_json(), 0..3)
                .prop_map(Value::Array)
                .boxed(),
        },
        // Any value but null, which counts as absent.
        SchemaType::Any => arb_json().prop_filter("not null", |v| !v.is_null()).boxed(),
    }
}

fn fitting_object(spec: &SchemaSpec) -> BoxedStrategy<Value> {
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = spec
        .iter()
        .map(|(name, prop)| {
            let name = name.to_owned();
            let value = fitting_value(prop);
            if prop.is_required() {
                value.prop_map(move |v| Some((name.clone(), v))).boxed()
            } else {
                // Optional: absent, null, or a fitting value.
                prop_oneof![
                    Just(None),
                    Just(Some((name.clone(), Value::Null))),
                    value.prop_map(move |v| Some((name.clone(), v))),
                ]
                .boxed()
            }
        })
        .collect();
    fields
        .prop_map(|kv| Value::Object(kv.into_iter().flatten().collect()))
        .boxed()
}

fn spec_and_value() -> impl Strategy<Value = (SchemaSpec, Value)> {
    any_spec().prop_flat_map(|spec| {
        let value = fitting_object(&spec);
        (Just(spec), value)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fitting_values_always_validate((spec, value) in spec_and_value()) {
        let violations = spec.validate(&value);
        prop_assert!(violations.is_empty(), "{violations:?} for {value}");
    }

    #[test]
    fn dropping_a_required_key_always_fails(
        (spec, value) in spec_and_value(),
        pick in any::<prop::sample::Index>(),
    ) {
        let required: Vec<&str> = spec.iter().filter(|(_, p)| p.is_required()).map(|(n, _)| n).collect();
        prop_assume!(!required.is_empty());
        let name = required[pick.index(required.len())];
        let mut value = value;
        value.as_object_mut().unwrap().shift_remove(name);
        let messages: Vec<String> = spec.validate(&value).into_iter().map(|v| v.into_message()).collect();
        prop_assert_eq!(messages, vec![format!("missing required property \"{name}\"")]);
    }

    #[test]
    fn validate_and_to_json_schema_never_panic(spec in any_spec(), value in arb_json()) {
        let _ = spec.validate(&value);
        let mut normalized = value.clone();
        spec.normalize(&mut normalized);
        for dialect in Dialect::ALL {
            let schema = spec.to_json_schema(dialect);
            prop_assert_eq!(&schema["type"], "object");
        }
    }

    #[test]
    fn parse_arguments_never_panics(raw in "\\PC{0,64}") {
        let _ = parse_arguments(&raw);
    }
}

// Bounds against an independent validator: for bounded specs, our verdict
// (valid or not) on a value is the `jsonschema` crate's verdict on the schema
// we emit. Values leave out the two places where dsh-tools deliberately reads
// JSON differently: `null` for an optional property (absent for us) and whole
// numbers written with a fraction (`2.0` is not an integer for us).

/// `(min, max)` with `min <= max` when both are set.
fn ordered<T: PartialOrd + Copy>(a: Option<T>, b: Option<T>) -> (Option<T>, Option<T>) {
    match (a, b) {
        (Some(x), Some(y)) if x > y => (Some(y), Some(x)),
        other => other,
    }
}

fn bounded_leaf() -> impl Strategy<Value = SchemaProp> {
    let int = || prop::option::of(-6i64..6);
    let count = || prop::option::of(0usize..4);
    prop_oneof![
        (int(), int()).prop_map(|(a, b)| {
            let (min, max) = ordered(a, b);
            let mut prop = SchemaProp::integer();
            if let Some(min) = min {
                prop = prop.minimum(min);
            }
            if let Some(max) = max {
                prop = prop.maximum(max);
            }
            prop
        }),
        (
            prop::option::of(-6.0f64..6.0),
            prop::option::of(-6.0f64..6.0),
            int()
        )
            .prop_map(|(a, b, whole)| {
                let (min, max) = ordered(a, b);
                let mut prop = SchemaProp::number();
                if let Some(min) = min {
                    prop = prop.minimum(min);
                }
                match (max, whole) {
                    // An integer bound on a number, compared with floats.
                    (_, Some(whole)) if min.is_none_or(|m| m <= whole as f64) => {
                        prop = prop.maximum(whole);
                    }
                    (Some(max), _) => prop = prop.maximum(max),
                    _ => {}
                }
                prop
            }),
        (count(), count()).prop_map(|(a, b)| {
            let (min, max) = ordered(a, b);
            let mut prop = SchemaProp::string();
            if let Some(min) = min {
                prop = prop.min_length(min);
            }
            if let Some(max) = max {
                prop = prop.max_length(max);
            }
            prop
        }),
        Just(SchemaProp::boolean()),
    ]
}

fn bounded_prop() -> impl Strategy<Value = SchemaProp> {
    bounded_leaf().prop_recursive(2, 12, 3, |inner| {
        prop_oneof![
            (
                prop::collection::vec((inner.clone(), any::<bool>()), 0..3),
                any::<bool>()
            )
                .prop_map(|(props, closed)| SchemaProp::object(spec_from(props, closed))),
            (
                inner,
                prop::option::of(0usize..4),
                prop::option::of(0usize..4)
            )
                .prop_map(|(items, a, b)| {
                    let (min, max) = ordered(a, b);
                    let mut prop = SchemaProp::array(items);
                    if let Some(min) = min {
                        prop = prop.min_items(min);
                    }
                    if let Some(max) = max {
                        prop = prop.max_items(max);
                    }
                    prop
                }),
        ]
    })
}

fn bounded_spec() -> impl Strategy<Value = SchemaSpec> {
    (
        prop::collection::vec((bounded_prop(), any::<bool>()), 1..4),
        any::<bool>(),
    )
        .prop_map(|(props, closed)| spec_from(props, closed))
}

/// Any non-null JSON leaf that is not a whole number written as a float.
fn plain_leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        (-8i64..8).prop_map(Value::from),
        (-8.0f64..8.0)
            .prop_filter("a fraction", |f| f.fract() != 0.0)
            .prop_map(Value::from),
        "[aé🦀]{0,5}".prop_map(Value::from),
    ]
    .boxed()
}

/// Values shaped like `prop` most of the time, so that bounds decide the
/// verdict, and sometimes of another type.
fn near_value(prop: &SchemaProp) -> BoxedStrategy<Value> {
    let shaped = match prop.ty() {
        SchemaType::Integer => (-8i64..8).prop_map(Value::from).boxed(),
        SchemaType::Number => prop_oneof![
            (-8i64..8).prop_map(Value::from),
            (-8.0f64..8.0)
                .prop_filter("a fraction", |f| f.fract() != 0.0)
                .prop_map(Value::from),
        ]
        .boxed(),
        SchemaType::String => "[aé🦀]{0,5}".prop_map(Value::from).boxed(),
        SchemaType::Array => match prop.get_items() {
            Some(items) => prop::collection::vec(near_value(items), 0..5)
                .prop_map(Value::Array)
                .boxed(),
            None => prop::collection::vec(plain_leaf(), 0..5)
                .prop_map(Value::Array)
                .boxed(),
        },
        SchemaType::Object => match prop.get_properties() {
            Some(spec) => near_object(spec),
            None => Just(Value::Object(Map::new())).boxed(),
        },
        _ => plain_leaf(),
    };
    prop_oneof![12 => shaped, 1 => plain_leaf()].boxed()
}

fn near_object(spec: &SchemaSpec) -> BoxedStrategy<Value> {
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = spec
        .iter()
        .map(|(name, prop)| {
            let name = name.to_owned();
            prop_oneof![
                1 => Just(None),
                8 => near_value(prop).prop_map(move |v| Some((name.clone(), v))),
            ]
            .boxed()
        })
        .collect();
    let extra = prop_oneof![3 => Just(None), 1 => plain_leaf().prop_map(Some)];
    (fields, extra)
        .prop_map(|(kv, extra)| {
            let mut map: Map<String, Value> = kv.into_iter().flatten().collect();
            if let Some(extra) = extra {
                map.insert("extra".into(), extra);
            }
            Value::Object(map)
        })
        .boxed()
}

fn bounded_spec_and_value() -> impl Strategy<Value = (SchemaSpec, Value)> {
    bounded_spec().prop_flat_map(|spec| {
        let value = near_object(&spec);
        (Just(spec), value)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn bounded_verdicts_match_jsonschema((spec, value) in bounded_spec_and_value()) {
        prop_assert!(spec.check().is_ok());
        let schema = spec.to_json_schema(Dialect::Mcp);
        let compiled = jsonschema::validator_for(&schema).expect("the emitted schema compiles");
        let ours = spec.validate(&value);
        prop_assert_eq!(
            ours.is_empty(),
            compiled.is_valid(&value),
            "schema {} value {} ours {:?}",
            schema,
            value,
            ours
        );
    }

    #[test]
    fn one_bounded_property_matches_jsonschema(
        (spec, value) in (bounded_prop(), any::<bool>()).prop_flat_map(|(prop, required)| {
            let spec = SchemaSpec::new().prop("p", prop.set_required(required));
            let value = near_object(&spec);
            (Just(spec), value)
        })
    ) {
        let schema = spec.to_json_schema(Dialect::Mcp);
        let compiled = jsonschema::validator_for(&schema).expect("the emitted schema compiles");
        prop_assert_eq!(
            spec.validate(&value).is_empty(),
            compiled.is_valid(&value),
            "schema {} value {}",
            schema,
            value
        );
    }
}
