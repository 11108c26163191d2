//! `#[derive(ToolArgs)]`: the schema it generates, and that the schema always
//! names properties exactly as serde reads them.

#![allow(non_snake_case)] // one test field is deliberately `Mixed_case`

use dsh_tools::{ArgType, Dialect, ErrorCode, ToolArgs, ViolationKind};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

fn mcp<T: ToolArgs>() -> Value {
    T::schema().to_json_schema(Dialect::Mcp)
}

fn names<T: ToolArgs>() -> Vec<String> {
    T::schema()
        .iter()
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// Searches files.
#[derive(ToolArgs, Deserialize, Debug)]
#[allow(dead_code)]
struct Search {
    /// Regular expression
    ///   to look for.
    ///
    /// Second paragraph.
    pattern: String,
    /** Directories to search. */
    paths: Option<Vec<String>>,
    /// Ignored: the attribute wins.
    #[tool(description = "Maximum number of matches.")]
    limit: Option<u32>,
    case_sensitive: bool,
    ratio: f64,
    /// Where and how.
    target: Target,
    level: Level,
    /// The level, said by the field.
    other_level: Option<Level>,
    boxed: Box<Target>,
    labels: HashMap<String, String>,
}

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
#[allow(dead_code)]
struct Target {
    /// Host name.
    host: String,
    port: Option<u16>,
}

/// How loud.
#[derive(ToolArgs, Deserialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Level {
    Quiet,
    VeryLoud,
    #[serde(rename = "max")]
    Maximum,
    #[serde(skip)]
    #[allow(dead_code)]
    Internal,
    #[serde(skip_deserializing)]
    #[allow(dead_code)]
    WriteOnly(u8),
}

#[test]
fn schema_of_a_struct() {
    let target = json!({
        "type": "object",
        "properties": {
            "host": {"type": "string", "description": "Host name."},
            "port": {"type": "integer", "minimum": 0, "maximum": 65535}
        },
        "required": ["host"]
    });
    assert_eq!(
        mcp::<Search>(),
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Regular expression to look for.\n\nSecond paragraph."
                },
                "paths": {
                    "type": "array",
                    "description": "Directories to search.",
                    "items": {"type": "string"}
                },
                "limit": {
                    "type": "integer",
                    "description": "Maximum number of matches.",
                    "minimum": 0,
                    "maximum": u32::MAX
                },
                "case_sensitive": {"type": "boolean"},
                "ratio": {"type": "number"},
                "target": {
                    "type": "object",
                    "description": "Where and how.",
                    "properties": target["properties"],
                    "required": ["host"]
                },
                "level": {"type": "string", "description": "How loud.", "enum": ["quiet", "very_loud", "max"]},
                "other_level": {
                    "type": "string",
                    "description": "The level, said by the field.",
                    "enum": ["quiet", "very_loud", "max"]
                },
                "boxed": target,
                "labels": {"type": "object"}
            },
            "required": ["pattern", "case_sensitive", "ratio", "target", "level", "boxed", "labels"]
        })
    );
}

#[test]
fn enum_and_struct_are_arg_types() {
    assert_eq!(
        Level::arg_prop().get_enum(),
        Some(&[json!("quiet"), json!("very_loud"), json!("max")][..])
    );
    assert_eq!(Level::arg_prop().get_description(), Some("How loud."));
    let nested = Target::arg_prop();
    assert_eq!(nested.get_properties(), Some(&Target::schema()));
    const { assert!(!<Target as ArgType>::OPTIONAL) };
    // The enum really is what serde reads.
    for (name, level) in [
        ("quiet", Level::Quiet),
        ("very_loud", Level::VeryLoud),
        ("max", Level::Maximum),
    ] {
        assert_eq!(serde_json::from_value::<Level>(json!(name)).unwrap(), level);
    }
}

#[test]
fn decodes_a_valid_call() {
    let args = Search::from_value(json!({
        "pattern": "fn main",
        "case_sensitive": true,
        "ratio": 0.5,
        "target": {"host": "h"},
        "level": "very_loud",
        "other_level": null,
        "boxed": {"host": "b", "port": 8080},
        "labels": {"a": "b"}
    }))
    .unwrap();
    assert_eq!(args.pattern, "fn main");
    assert_eq!(args.level, Level::VeryLoud);
    assert_eq!(args.other_level, None);
    assert_eq!(
        *args.boxed,
        Target {
            host: "b".into(),
            port: Some(8080)
        }
    );

    let err = Search::from_value(json!({
        "pattern": "x",
        "case_sensitive": true,
        "ratio": 1,
        "target": {"port": 1},
        "level": "Quiet",
        "boxed": {"host": "b"},
        "labels": {}
    }))
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgs);
    assert_eq!(
        err.message(),
        r#"invalid arguments: missing required property "target.host"; "level" must be one of ["quiet","very_loud","max"]"#
    );
}

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
struct WithDefaults {
    #[tool(default = 10)]
    limit: u32,
    #[tool(default = "text", enum = ["text", "bytes"])]
    mode: String,
    #[tool(default = -3)]
    offset: i64,
    #[tool(default = -9223372036854775808)]
    min: i64,
    #[tool(default = 18446744073709551615)]
    max: u64,
    #[tool(default = 1.5)]
    ratio: f64,
    #[tool(default = -2.)]
    shift: f32,
    #[tool(default = true)]
    follow: bool,
    #[tool(default = ["a", "b"])]
    tags: Vec<String>,
    #[tool(default = [[1, -1], []])]
    grid: Vec<Vec<i8>>,
    #[tool(default = 7)]
    maybe: Option<u8>,
    #[tool(enum = ["x", "y"])]
    choice: String,
}

#[test]
fn tool_defaults_and_enums() {
    assert_eq!(
        mcp::<WithDefaults>(),
        json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "default": 10, "minimum": 0, "maximum": u32::MAX},
                "mode": {"type": "string", "enum": ["text", "bytes"], "default": "text"},
                "offset": {"type": "integer", "default": -3},
                "min": {"type": "integer", "default": i64::MIN},
                "max": {"type": "integer", "default": u64::MAX, "minimum": 0},
                "ratio": {"type": "number", "default": 1.5},
                "shift": {"type": "number", "default": -2.0},
                "follow": {"type": "boolean", "default": true},
                "tags": {"type": "array", "default": ["a", "b"], "items": {"type": "string"}},
                "grid": {
                    "type": "array",
                    "default": [[1, -1], []],
                    "items": {"type": "array", "items": {"type": "integer", "minimum": -128, "maximum": 127}}
                },
                "maybe": {"type": "integer", "default": 7, "minimum": 0, "maximum": 255},
                "choice": {"type": "string", "enum": ["x", "y"]}
            },
            "required": ["choice"]
        })
    );
    assert_eq!(WithDefaults::schema().check(), Ok(()));

    // Absent properties get their defaults; present ones are kept.
    let args = WithDefaults::from_value(json!({"choice": "y", "limit": 3, "maybe": null})).unwrap();
    assert_eq!(
        args,
        WithDefaults {
            limit: 3,
            mode: "text".into(),
            offset: -3,
            min: i64::MIN,
            max: u64::MAX,
            ratio: 1.5,
            shift: -2.0,
            follow: true,
            tags: vec!["a".into(), "b".into()],
            grid: vec![vec![1, -1], vec![]],
            maybe: Some(7),
            choice: "y".into(),
        }
    );
    let err = WithDefaults::from_value(json!({"choice": "z", "mode": "lines"})).unwrap_err();
    assert_eq!(
        err.message(),
        r#"invalid arguments: "mode" must be one of ["text","bytes"]; "choice" must be one of ["x","y"]"#
    );
}

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Closed {
    path: String,
    #[serde(skip)]
    cache: Vec<u8>,
    #[serde(skip_deserializing)]
    computed: Option<String>,
    #[serde(default)]
    verbose: bool,
}

#[test]
fn deny_unknown_fields_closes_and_skipped_fields_are_absent() {
    assert_eq!(
        mcp::<Closed>(),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "verbose": {"type": "boolean"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    );
    assert!(Closed::schema().is_closed());
    let err = Closed::from_value(json!({"path": "a", "x": 1})).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgs);
    assert_eq!(err.violations().len(), 1);
    assert_eq!(err.violations()[0].kind(), ViolationKind::Undeclared);
    assert_eq!(
        err.violations()[0].message(),
        r#""x" is not a declared property"#
    );
    // A skipped field is not a property, so the schema refuses it as serde does.
    let err = Closed::from_value(json!({"path": "a", "cache": []})).unwrap_err();
    assert_eq!(
        err.message(),
        r#"invalid arguments: "cache" is not a declared property"#
    );
    assert_eq!(
        Closed::from_value(json!({"path": "a"})).unwrap(),
        Closed {
            path: "a".into(),
            cache: vec![],
            computed: None,
            verbose: false
        }
    );
}

#[derive(ToolArgs, Deserialize, Debug, Default, PartialEq)]
#[serde(default)]
struct AllDefault {
    name: String,
    count: u32,
}

#[test]
fn container_default_makes_every_field_optional() {
    assert_eq!(
        mcp::<AllDefault>(),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"type": "integer", "minimum": 0, "maximum": u32::MAX}
            }
        })
    );
    assert_eq!(
        AllDefault::from_value(json!({})).unwrap(),
        AllDefault::default()
    );
}

#[derive(ToolArgs, Deserialize, Debug)]
#[allow(dead_code)]
struct Small {
    n: u8,
    counts: Option<HashMap<String, u8>>,
}

#[test]
fn out_of_range_integer_is_a_schema_violation() {
    let err = Small::from_value(json!({"n": 300})).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgs);
    assert_eq!(err.violations()[0].kind(), ViolationKind::OutOfRange);
    assert_eq!(
        err.message(),
        r#"invalid arguments: "n" must be at most 255"#
    );
    let err = Small::from_value(json!({"n": -1})).unwrap_err();
    assert_eq!(
        err.message(),
        r#"invalid arguments: "n" must be at least 0"#
    );
}

#[test]
fn a_value_the_schema_does_not_describe_is_unreadable_not_a_panic() {
    // A map's values are not described, so serde is the one to refuse 300.
    let err = Small::from_value(json!({"n": 1, "counts": {"a": 300}})).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgs);
    assert_eq!(err.violations()[0].kind(), ViolationKind::Unreadable);
    assert_eq!(err.violations()[0].path(), "counts.a");
}

#[derive(ToolArgs, Deserialize)]
struct Empty {}

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
enum NoVariants {}

/// Overridden.
#[derive(ToolArgs, Deserialize)]
#[tool(description = "Said by the attribute.")]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum Described {
    /// Variant docs are not part of the schema.
    FirstOne,
    r#Second,
}

#[test]
fn enum_tool_description_and_raw_variant() {
    assert_eq!(
        Described::arg_prop(),
        dsh_tools::SchemaProp::string()
            .one_of(["first-one", "second"])
            .description("Said by the attribute.")
    );
}

#[test]
fn empty_struct_and_enum() {
    assert_eq!(mcp::<Empty>(), json!({"type": "object", "properties": {}}));
    assert!(Empty::from_value(json!({"anything": 1})).is_ok());
    assert_eq!(NoVariants::arg_prop().get_enum(), Some(&[][..]));
}

/// `rename(deserialize = ..)` and `rename_all(deserialize = ..)`: only the
/// deserialize side names properties.
#[derive(ToolArgs, Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all(serialize = "SCREAMING_SNAKE_CASE", deserialize = "camelCase"))]
struct SplitNames {
    first_name: String,
    #[serde(rename(serialize = "SER", deserialize = "de_name"))]
    renamed: u8,
    #[serde(rename(serialize = "only_ser"))]
    ser_only: u8,
    #[serde(alias = "aka")]
    with_alias: u8,
}

#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
#[serde(rename_all(serialize = "UPPERCASE"))]
enum SerializeOnlyRule {
    OneThing,
    #[serde(rename(deserialize = "two"))]
    Two,
}

#[test]
fn deserialize_side_of_split_renames() {
    assert_eq!(
        names::<SplitNames>(),
        ["firstName", "de_name", "serOnly", "withAlias"]
    );
    let args = SplitNames::from_value(
        json!({"firstName": "a", "de_name": 1, "serOnly": 2, "withAlias": 3}),
    )
    .unwrap();
    assert_eq!(
        args,
        SplitNames {
            first_name: "a".into(),
            renamed: 1,
            ser_only: 2,
            with_alias: 3
        }
    );
    assert_eq!(
        SerializeOnlyRule::arg_prop().get_enum(),
        Some(&[json!("OneThing"), json!("two")][..])
    );
    assert_eq!(
        serde_json::from_value::<SerializeOnlyRule>(json!("two")).unwrap(),
        SerializeOnlyRule::Two
    );
}

/// For one `rename_all` rule: the schema's property names are the keys serde
/// writes (in order) and reads, for fields and for enum variants.
macro_rules! rename_rule_test {
    ($test:ident, $rule:literal) => {
        #[test]
        fn $test() {
            #[derive(ToolArgs, Serialize, Deserialize, Debug, PartialEq, Clone, Copy)]
            #[serde(rename_all = $rule)]
            enum Kind {
                Outcome,
                VeryTasty,
                HTTPServer,
                Z42,
                #[serde(rename = "explicit Name")]
                Renamed,
            }

            #[derive(ToolArgs, Serialize, Deserialize, Debug, PartialEq)]
            #[serde(rename_all = $rule)]
            struct Args {
                plain: u32,
                two_words: String,
                r#type: bool,
                three_word_name: Option<u8>,
                #[serde(rename = "Explicit-name")]
                renamed: u8,
                a1_b2: u8,
                _leading: u8,
                #[allow(non_snake_case)]
                Mixed_case: u8,
                kind: Kind,
                kinds: Vec<Kind>,
            }

            let value = Args {
                plain: 1,
                two_words: "two".into(),
                r#type: true,
                three_word_name: Some(3),
                renamed: 4,
                a1_b2: 5,
                _leading: 6,
                Mixed_case: 7,
                kind: Kind::VeryTasty,
                kinds: vec![Kind::Outcome, Kind::HTTPServer, Kind::Z42, Kind::Renamed],
            };
            let serialized = serde_json::to_value(&value).unwrap();
            let Value::Object(serialized) = serialized else {
                panic!("not an object")
            };
            let keys: Vec<&String> = serialized.keys().collect();
            let schema_names = names::<Args>();
            assert_eq!(
                keys,
                schema_names.iter().collect::<Vec<_>>(),
                "rule {}",
                $rule
            );

            // A JSON object built from the schema's names is what serde reads.
            let mut built = Map::new();
            for (name, field_value) in schema_names.iter().zip(serialized.values()) {
                built.insert(name.clone(), field_value.clone());
            }
            assert_eq!(
                Args::from_value(Value::Object(built)).unwrap(),
                value,
                "rule {}",
                $rule
            );

            // Variants: the enum's allowed strings are what serde writes and reads.
            let variants = [
                Kind::Outcome,
                Kind::VeryTasty,
                Kind::HTTPServer,
                Kind::Z42,
                Kind::Renamed,
            ];
            let written: Vec<Value> = variants
                .iter()
                .map(|k| serde_json::to_value(k).unwrap())
                .collect();
            assert_eq!(
                Kind::arg_prop().get_enum(),
                Some(&written[..]),
                "rule {}",
                $rule
            );
            for (name, kind) in written.iter().zip(variants) {
                assert_eq!(serde_json::from_value::<Kind>(name.clone()).unwrap(), kind);
            }
            // `kind` is the ninth field, whatever the rule calls it.
            let kind_prop = Args::schema()
                .get(&schema_names[8])
                .map(|p| p.get_enum().map(<[Value]>::to_vec));
            assert_eq!(kind_prop, Some(Some(written)));
        }
    };
}

rename_rule_test!(rename_all_lowercase, "lowercase");
rename_rule_test!(rename_all_uppercase, "UPPERCASE");
rename_rule_test!(rename_all_pascal_case, "PascalCase");
rename_rule_test!(rename_all_camel_case, "camelCase");
rename_rule_test!(rename_all_snake_case, "snake_case");
rename_rule_test!(rename_all_screaming_snake_case, "SCREAMING_SNAKE_CASE");
rename_rule_test!(rename_all_kebab_case, "kebab-case");
rename_rule_test!(rename_all_screaming_kebab_case, "SCREAMING-KEBAB-CASE");

#[test]
fn names_under_each_rule_are_what_we_expect() {
    // Pin a few conversions so a rule that silently became the identity fails too.
    #[derive(ToolArgs, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Camel {
        two_words: u8,
        r#type: u8,
    }
    #[derive(ToolArgs, Deserialize)]
    #[serde(rename_all = "SCREAMING-KEBAB-CASE")]
    #[allow(dead_code)]
    enum Screaming {
        VeryTasty,
    }
    assert_eq!(names::<Camel>(), ["twoWords", "type"]);
    assert_eq!(
        Screaming::arg_prop().get_enum(),
        Some(&[json!("VERY-TASTY")][..])
    );
}

/// Generated code compiles under strict user-crate lints.
mod strict {
    #![deny(missing_docs, warnings, clippy::all, clippy::pedantic)]
    #![allow(dead_code)] // a test crate never reads the fields
    use dsh_tools::ToolArgs;
    use serde::Deserialize;

    /// Documented arguments.
    #[derive(ToolArgs, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Strict {
        /// A field.
        #[tool(default = 1)]
        pub field: u8,
        /// Another.
        pub other: Option<Vec<String>>,
        /// A kind.
        pub kind: Kind,
        /// Bounded.
        #[tool(minimum = -1, maximum = 1.5, min_items = 1, max_items = 2)]
        pub bounded: Vec<f32>,
        /// Bounded too.
        #[tool(min_length = 1, max_length = 2)]
        pub text: Option<String>,
    }

    /// Documented enum.
    #[derive(ToolArgs, Deserialize)]
    pub enum Kind {
        /// A.
        A,
    }
}

#[test]
fn strict_lints() {
    assert_eq!(
        names::<strict::Strict>(),
        ["field", "other", "kind", "bounded", "text"]
    );
}

/// Bound attributes, and the ranges integer types carry on their own.
#[derive(ToolArgs, Deserialize, Debug, PartialEq)]
#[allow(dead_code)]
struct Bounded {
    /// Deadline.
    timeout_ms: Option<u64>,
    #[tool(minimum = 1, maximum = 100, default = 10)]
    limit: u32,
    #[tool(minimum = -1.5, maximum = 0.5)]
    ratio: f64,
    #[tool(min_length = 1, max_length = 64)]
    name: String,
    #[tool(min_items = 1, max_items = 3, max_length = 8)]
    tags: Vec<String>,
    #[tool(minimum = 1, min_items = 1)]
    ports: Option<Vec<u16>>,
    #[tool(maximum = -1)]
    negative: Box<i64>,
    letter: char,
    small: i8,
}

fn valid_bounded() -> Value {
    json!({
        "timeout_ms": 0, "ratio": 0.5, "name": "n", "tags": ["a"], "negative": -1,
        "letter": "x", "small": -128
    })
}

#[test]
fn bound_attributes_and_integer_ranges_in_the_schema() {
    assert_eq!(
        mcp::<Bounded>(),
        json!({
            "type": "object",
            "properties": {
                "timeout_ms": {"type": "integer", "description": "Deadline.", "minimum": 0},
                "limit": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100},
                "ratio": {"type": "number", "minimum": -1.5, "maximum": 0.5},
                "name": {"type": "string", "minLength": 1, "maxLength": 64},
                "tags": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "maxLength": 8}
                },
                "ports": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "integer", "minimum": 1, "maximum": 65535}
                },
                "negative": {"type": "integer", "maximum": -1},
                "letter": {"type": "string", "minLength": 1, "maxLength": 1},
                "small": {"type": "integer", "minimum": -128, "maximum": 127}
            },
            "required": ["ratio", "name", "tags", "negative", "letter", "small"]
        })
    );
    assert_eq!(Bounded::schema().check(), Ok(()));
    let args = Bounded::from_value(valid_bounded()).unwrap();
    assert_eq!(args.limit, 10);
    assert_eq!(args.letter, 'x');
}

#[test]
fn out_of_bounds_arguments_get_schema_messages_not_serde_messages() {
    let mut args = valid_bounded();
    args["timeout_ms"] = json!(-5);
    let err = Bounded::from_value(args).unwrap_err();
    assert_eq!(
        err.message(),
        r#"invalid arguments: "timeout_ms" must be at least 0"#
    );
    assert_eq!(err.violations()[0].kind(), ViolationKind::OutOfRange);

    let err = Bounded::from_value(json!({
        "timeout_ms": 1,
        "limit": 0,
        "ratio": -2,
        "name": "",
        "tags": ["ok", "much too long"],
        "ports": [0, 80, 65536],
        "negative": 0,
        "letter": "xy",
        "small": 128
    }))
    .unwrap_err();
    assert_eq!(
        err.violations()
            .iter()
            .map(|v| v.message())
            .collect::<Vec<_>>(),
        [
            r#""limit" must be at least 1"#,
            r#""ratio" must be at least -1.5"#,
            r#""name" must be at least 1 character long"#,
            r#""tags[1]" must be at most 8 characters long"#,
            r#""ports[0]" must be at least 1"#,
            r#""ports[2]" must be at most 65535"#,
            r#""negative" must be at most -1"#,
            r#""letter" must be at most 1 character long"#,
            r#""small" must be at most 127"#,
        ]
    );
    let mut args = valid_bounded();
    args["tags"] = json!([]);
    args["ports"] = json!([]);
    assert_eq!(
        Bounded::from_value(args).unwrap_err().message(),
        r#"invalid arguments: "tags" must have at least 1 item; "ports" must have at least 1 item"#
    );
}

#[test]
fn every_integer_type_carries_its_range() {
    fn range<T: ArgType>() -> (Option<Value>, Option<Value>) {
        let prop = T::arg_prop();
        (
            prop.get_minimum().cloned().map(Value::Number),
            prop.get_maximum().cloned().map(Value::Number),
        )
    }
    let some = |v: Value| Some(v);
    assert_eq!(range::<u8>(), (some(json!(0)), some(json!(255))));
    assert_eq!(range::<u16>(), (some(json!(0)), some(json!(65535))));
    assert_eq!(range::<u32>(), (some(json!(0)), some(json!(u32::MAX))));
    assert_eq!(range::<i8>(), (some(json!(-128)), some(json!(127))));
    assert_eq!(
        range::<i16>(),
        (some(json!(i16::MIN)), some(json!(i16::MAX)))
    );
    assert_eq!(
        range::<i32>(),
        (some(json!(i32::MIN)), some(json!(i32::MAX)))
    );
    for unsigned in [range::<u64>(), range::<usize>(), range::<u128>()] {
        assert_eq!(unsigned, (some(json!(0)), None));
    }
    for signed in [range::<i64>(), range::<isize>(), range::<i128>()] {
        assert_eq!(signed, (None, None));
    }
    assert_eq!(range::<f64>(), (None, None));
    assert_eq!(
        range::<Option<Box<u8>>>(),
        (some(json!(0)), some(json!(255)))
    );
}

fn always_one() -> u8 {
    1
}

/// serde attributes that do not change what is read are accepted and ignored.
#[derive(ToolArgs, Serialize, Deserialize, Debug, PartialEq)]
#[serde(bound(deserialize = ""), expecting = "tool arguments", crate = "serde")]
struct IgnoredSerdeAttrs {
    #[serde(skip_serializing_if = "Option::is_none", alias = "n", alias = "nm")]
    name: Option<String>,
    #[serde(default = "always_one", serialize_with = "serde::Serialize::serialize")]
    one: u8,
    #[serde(skip_deserializing, with = "not_read")]
    not_read: u8,
}

mod not_read {
    pub fn serialize<S: serde::Serializer>(v: &u8, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(*v)
    }
    #[allow(dead_code)]
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
        <u8 as serde::Deserialize>::deserialize(d)
    }
}

#[test]
fn ignored_serde_attributes() {
    assert_eq!(
        mcp::<IgnoredSerdeAttrs>(),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "one": {"type": "integer", "minimum": 0, "maximum": 255}
            }
        })
    );
    assert_eq!(
        IgnoredSerdeAttrs::from_value(json!({})).unwrap(),
        IgnoredSerdeAttrs {
            name: None,
            one: 1,
            not_read: 0
        }
    );
}
