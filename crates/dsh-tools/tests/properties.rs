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
