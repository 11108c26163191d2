//! Validation: every violation, reference messages and paths, no coercion, raw strings.

mod common;

use dsh_tools::{parse_arguments, ErrorCode, SchemaProp, SchemaSpec, ToolError, ViolationKind};
use serde_json::{json, Value};

fn messages(spec: &SchemaSpec, args: Value) -> Vec<String> {
    spec.validate(&args)
        .into_iter()
        .map(|v| v.into_message())
        .collect()
}

fn valid_deploy() -> Value {
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

#[test]
fn valid_arguments_have_no_violations() {
    assert!(common::deploy_spec().validate(&valid_deploy()).is_empty());
}

#[test]
fn every_violation_in_declaration_order_depth_first() {
    let args = json!({
        "tags": ["ok", 7],
        "servers": [{"host": "a"}, {"host": 5, "port": "80", "role": "leader"}],
        "resources": {"disk_gb": "big", "gpu": 1},
        "max_cpu": "2",
        "priority": 4,
        "replicas": 1.5,
        "strategy": "blue-green",
        "version": null,
        "extra": true
    });
    assert_eq!(
        messages(&common::deploy_spec(), args),
        [
            r#"missing required property "service""#,
            r#"missing required property "version""#,
            r#""strategy" must be one of ["rolling","recreate","canary"]"#,
            r#""replicas" must be an integer"#,
            r#""priority" must be one of [1,2,3]"#,
            r#""max_cpu" must be a number"#,
            r#"missing required property "resources.memory_mb""#,
            r#""resources.disk_gb" must be a number"#,
            r#""resources.gpu" is not a declared property"#,
            r#""servers[1].host" must be a string"#,
            r#""servers[1].port" must be an integer"#,
            r#""servers[1].role" must be one of ["primary","replica"]"#,
            r#""tags[1]" must be a string"#,
        ]
    );
}

#[test]
fn each_type_has_its_message() {
    let spec = SchemaSpec::new()
        .prop("s", SchemaProp::string())
        .prop("n", SchemaProp::number())
        .prop("i", SchemaProp::integer())
        .prop("b", SchemaProp::boolean())
        .prop("o", SchemaProp::any_object())
        .prop("a", SchemaProp::any_array());
    let args = json!({"s": 1, "n": "1", "i": "1", "b": "true", "o": [], "a": {}});
    assert_eq!(
        messages(&spec, args),
        [
            r#""s" must be a string"#,
            r#""n" must be a number"#,
            r#""i" must be an integer"#,
            r#""b" must be a boolean"#,
            r#""o" must be an object"#,
            r#""a" must be an array"#,
        ]
    );
}

#[test]
fn non_object_arguments() {
    let spec = common::deploy_spec();
    for args in [json!([]), json!(null), json!("x"), json!(3)] {
        assert_eq!(messages(&spec, args), [r#""arguments" must be an object"#]);
    }
}

#[test]
fn no_coercion() {
    let spec = SchemaSpec::new()
        .prop("n", SchemaProp::number())
        .prop("i", SchemaProp::integer())
        .prop("b", SchemaProp::boolean())
        .prop("s", SchemaProp::string());
    let args = json!({"n": "5", "i": "5", "b": 1, "s": 5});
    assert_eq!(spec.validate(&args).len(), 4);
    // An integer is a number; a whole number written with a fraction is not an integer.
    assert!(spec.validate(&json!({"n": 5})).is_empty());
    assert_eq!(
        messages(&spec, json!({"i": 5.0})),
        [r#""i" must be an integer"#]
    );
    assert!(spec.validate(&json!({"i": u64::MAX})).is_empty());
    assert!(spec.validate(&json!({"i": i64::MIN})).is_empty());
}

#[test]
fn null_is_absent_for_optional_and_missing_for_required() {
    let spec = SchemaSpec::new()
        .prop("req", SchemaProp::string().required())
        .prop("opt", SchemaProp::string());
    assert!(spec.validate(&json!({"req": "x", "opt": null})).is_empty());
    assert_eq!(
        messages(&spec, json!({"req": null})),
        [r#"missing required property "req""#]
    );
}

#[test]
fn enum_is_checked_on_every_type() {
    let spec = SchemaSpec::new()
        .prop("b", SchemaProp::boolean().enum_values([true.into()]))
        .prop("o", SchemaProp::any_object().enum_values([json!({"k": 1})]))
        .prop("a", SchemaProp::any_array().enum_values([json!([1, 2])]));
    assert!(spec
        .validate(&json!({"b": true, "o": {"k": 1}, "a": [1, 2]}))
        .is_empty());
    assert_eq!(
        messages(&spec, json!({"b": false, "o": {"k": 2}, "a": [2, 1]})),
        [
            r#""b" must be one of [true]"#,
            r#""o" must be one of [{"k":1}]"#,
            r#""a" must be one of [[1,2]]"#,
        ]
    );
}

#[test]
fn enum_numbers_compare_by_value() {
    let spec = SchemaSpec::new()
        .prop(
            "n",
            SchemaProp::number().enum_values([json!(1), json!(2.5)]),
        )
        .prop(
            "pair",
            SchemaProp::any_array().enum_values([json!([1, {"k": 2}])]),
        );
    assert!(spec
        .validate(&json!({"n": 1.0, "pair": [1.0, {"k": 2.0}]}))
        .is_empty());
    assert_eq!(
        messages(&spec, json!({"n": 2, "pair": [1, {"k": 3}]})),
        [
            r#""n" must be one of [1,2.5]"#,
            r#""pair" must be one of [[1,{"k":2}]]"#
        ]
    );
}

#[test]
fn extra_keys_allowed_unless_closed() {
    let open = SchemaSpec::new().prop("a", SchemaProp::string());
    assert!(open.validate(&json!({"a": "x", "b": 1})).is_empty());
    let closed = open.clone().closed();
    let violations = closed.validate(&json!({"a": "x", "b": 1}));
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].kind(), ViolationKind::Undeclared);
    assert_eq!(violations[0].path(), "b");
    assert_eq!(violations[0].message(), r#""b" is not a declared property"#);
}

#[test]
fn error_carries_code_list_and_joined_message() {
    let violations = common::deploy_spec().validate(&json!({"service": 1}));
    let err = ToolError::invalid_args(violations.clone());
    assert_eq!(err.code(), ErrorCode::InvalidArgs);
    assert_eq!(err.code().as_str(), "INVALID_ARGS");
    assert_eq!(err.violations(), violations.as_slice());
    assert_eq!(
        err.message(),
        r#"invalid arguments: "service" must be a string; missing required property "version"; missing required property "servers""#
    );
    assert_eq!(err.to_string(), err.message());
}

#[test]
fn malformed_raw_string_is_one_violation_with_position() {
    let err = parse_arguments("{\"service\": \"api\",\n \"version\": }").unwrap_err();
    assert_eq!(err.kind(), ViolationKind::Malformed);
    assert_eq!(err.path(), "arguments");
    assert_eq!(
        err.message(),
        r#""arguments" is not valid JSON: expected value at line 2 column 13"#
    );
    let errs = common::deploy_spec().validate_str("{").unwrap_err();
    assert_eq!(errs.len(), 1);
    assert!(errs[0]
        .message()
        .contains("EOF while parsing an object at line 1 column 1"));
}

#[test]
fn raw_string_forms_models_send() {
    assert_eq!(parse_arguments("").unwrap(), json!({}));
    assert_eq!(parse_arguments("  \n").unwrap(), json!({}));
    assert_eq!(parse_arguments(r#""{\"a\":1}""#).unwrap(), json!({"a": 1}));
    // A plain JSON string stays a string and is then not an object.
    assert_eq!(parse_arguments(r#""hello""#).unwrap(), json!("hello"));
    let spec = SchemaSpec::new().prop("a", SchemaProp::integer());
    assert_eq!(spec.validate_str(r#"{"a": 2}"#).unwrap(), json!({"a": 2}));
    let errs = spec.validate_str("[1]").unwrap_err();
    assert_eq!(errs[0].message(), r#""arguments" must be an object"#);
}

#[test]
fn deeply_nested_raw_input_is_an_error_not_a_stack_overflow() {
    let depth = 100_000;
    let raw = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let err = parse_arguments(&raw).unwrap_err();
    assert!(
        err.message().contains("recursion limit exceeded"),
        "{}",
        err.message()
    );
    let raw = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    assert!(parse_arguments(&raw).is_err());
}

#[test]
fn huge_flat_input_is_fine() {
    let spec = SchemaSpec::new().prop("tags", SchemaProp::array(SchemaProp::string()));
    let tags: Vec<Value> = (0..200_000).map(|i| json!(format!("t{i}"))).collect();
    let raw = json!({"tags": tags}).to_string();
    assert!(spec.validate_str(&raw).is_ok());
}

#[test]
fn normalize_fills_defaults_and_drops_optional_nulls() {
    let spec = common::deploy_spec();
    let mut args =
        json!({"service": "api", "version": "1", "servers": [], "tags": null, "replicas": null});
    spec.normalize(&mut args);
    assert_eq!(
        args,
        json!({"service": "api", "version": "1", "servers": [], "replicas": 1, "strategy": "rolling"})
    );
}

#[test]
fn check_rejects_defaults_and_enums_that_do_not_fit() {
    assert!(common::deploy_spec().check().is_ok());
    let bad_default = SchemaSpec::new().prop("n", SchemaProp::integer().default_value("x"));
    assert_eq!(
        bad_default.check().unwrap_err().message(),
        r#""n" must be an integer"#
    );
    let bad_enum = SchemaSpec::new().prop(
        "o",
        SchemaProp::object(
            SchemaSpec::new().prop("s", SchemaProp::string().enum_values([json!(1)])),
        ),
    );
    assert_eq!(
        bad_enum.check().unwrap_err().message(),
        r#""o.s" has enum value 1 that is not a string"#
    );
}

fn bounded_spec() -> SchemaSpec {
    SchemaSpec::new()
        .prop("timeout_ms", SchemaProp::integer().minimum(0))
        .prop("percent", SchemaProp::number().minimum(0).maximum(100))
        .prop("ratio", SchemaProp::number().minimum(-0.5).maximum(0.5))
        .prop("name", SchemaProp::string().min_length(1).max_length(5))
        .prop("code", SchemaProp::string().min_length(3))
        .prop("tags", SchemaProp::array(SchemaProp::string()).min_items(1))
        .prop("pair", SchemaProp::any_array().min_items(2).max_items(2))
        .prop("few", SchemaProp::any_array().max_items(1))
}

#[test]
fn bound_messages() {
    let spec = bounded_spec();
    assert!(spec.check().is_ok());
    let args = json!({
        "timeout_ms": -5,
        "percent": 100.5,
        "ratio": -1,
        "name": "",
        "code": "ab",
        "tags": [],
        "pair": [1, 2, 3],
        "few": [1, 2]
    });
    assert_eq!(
        messages(&spec, args),
        [
            r#""timeout_ms" must be at least 0"#,
            r#""percent" must be at most 100"#,
            r#""ratio" must be at least -0.5"#,
            r#""name" must be at least 1 character long"#,
            r#""code" must be at least 3 characters long"#,
            r#""tags" must have at least 1 item"#,
            r#""pair" must have at most 2 items"#,
            r#""few" must have at most 1 item"#,
        ]
    );
    assert_eq!(
        messages(&spec, json!({"name": "abcdef", "pair": [1], "ratio": 0.75})),
        [
            r#""ratio" must be at most 0.5"#,
            r#""name" must be at most 5 characters long"#,
            r#""pair" must have at least 2 items"#,
        ]
    );
    let violations = spec.validate(&json!({"timeout_ms": -1}));
    assert_eq!(violations[0].kind(), ViolationKind::OutOfRange);
    assert_eq!(violations[0].path(), "timeout_ms");
    // The bounds themselves are valid.
    assert!(spec
        .validate(&json!({
            "timeout_ms": 0, "percent": 100, "ratio": 0.5, "name": "abcde", "code": "abc",
            "tags": ["x"], "pair": [1, 2], "few": []
        }))
        .is_empty());
}

#[test]
fn lengths_count_characters_not_bytes() {
    let spec = SchemaSpec::new().prop("s", SchemaProp::string().min_length(2).max_length(3));
    // "é" is two bytes, "🦀" four: lengths count Unicode scalar values.
    for ok in ["ab", "éé", "🦀🦀🦀", "aé🦀"] {
        assert!(spec.validate(&json!({ "s": ok })).is_empty(), "{ok}");
    }
    assert_eq!(
        messages(&spec, json!({"s": "🦀"})),
        [r#""s" must be at least 2 characters long"#]
    );
    assert_eq!(
        messages(&spec, json!({"s": "éééé"})),
        [r#""s" must be at most 3 characters long"#]
    );
}

#[test]
fn bounds_inside_arrays_and_objects_have_paths() {
    let spec = SchemaSpec::new()
        .prop(
            "servers",
            SchemaProp::array(SchemaProp::object(
                SchemaSpec::new()
                    .prop("host", SchemaProp::string().min_length(1))
                    .prop("port", SchemaProp::integer().minimum(1).maximum(65535)),
            ))
            .max_items(2),
        )
        .prop(
            "limits",
            SchemaProp::object(SchemaSpec::new().prop("cpu", SchemaProp::number().maximum(8))),
        )
        // On an array with items, a minimum reaches the elements.
        .prop("ids", SchemaProp::array(SchemaProp::integer()).minimum(1))
        .prop(
            "grid",
            SchemaProp::array(SchemaProp::array(SchemaProp::string()))
                .max_length(1)
                .min_items(1),
        );
    assert!(spec.check().is_ok());
    let args = json!({
        "servers": [{"host": "a", "port": 0}, {"host": "", "port": 70000}, {"host": "c"}],
        "limits": {"cpu": 16},
        "ids": [1, 0, 2, -3],
        "grid": [["a", "bc"], []]
    });
    assert_eq!(
        messages(&spec, args),
        [
            r#""servers" must have at most 2 items"#,
            r#""servers[0].port" must be at least 1"#,
            r#""servers[1].host" must be at least 1 character long"#,
            r#""servers[1].port" must be at most 65535"#,
            r#""limits.cpu" must be at most 8"#,
            r#""ids[1]" must be at least 1"#,
            r#""ids[3]" must be at least 1"#,
            r#""grid[0][1]" must be at most 1 character long"#,
        ]
    );
    assert_eq!(
        messages(&spec, json!({"grid": []})),
        [r#""grid" must have at least 1 item"#]
    );
}

#[test]
fn integer_bounds_are_exact() {
    let spec = SchemaSpec::new()
        .prop("u", SchemaProp::integer().maximum(u64::MAX - 1))
        .prop("i", SchemaProp::integer().minimum(i64::MIN + 1))
        .prop(
            "big",
            SchemaProp::number().maximum(9_007_199_254_740_992u64),
        );
    assert!(spec
        .validate(&json!({"u": u64::MAX - 1, "i": i64::MIN + 1, "big": 9_007_199_254_740_992u64}))
        .is_empty());
    assert_eq!(
        messages(
            &spec,
            json!({"u": u64::MAX, "i": i64::MIN, "big": 9_007_199_254_740_993u64})
        ),
        [
            r#""u" must be at most 18446744073709551614"#,
            r#""i" must be at least -9223372036854775807"#,
            r#""big" must be at most 9007199254740992"#,
        ]
    );
    // An integer against a float bound compares by true value, too.
    let spec = SchemaSpec::new().prop("n", SchemaProp::number().maximum(9_007_199_254_740_992.0));
    assert_eq!(
        messages(&spec, json!({"n": 9_007_199_254_740_993u64})),
        [r#""n" must be at most 9007199254740992.0"#]
    );
    assert_eq!(
        SchemaProp::integer().maximum(u64::MAX).get_maximum(),
        Some(&serde_json::Number::from(u64::MAX))
    );
}

#[test]
fn unbounded_properties_have_no_bounds() {
    let prop = SchemaProp::string();
    assert_eq!(prop.get_min_length(), None);
    assert_eq!(prop.get_minimum(), None);
    let prop = SchemaProp::array(SchemaProp::string().min_length(1)).max_items(3);
    assert_eq!(prop.get_max_items(), Some(3));
    assert_eq!(prop.get_min_length(), None);
    assert_eq!(prop.get_items().unwrap().get_min_length(), Some(1));
}

#[test]
fn check_rejects_bounds_that_do_not_fit() {
    let cases = [
        (
            SchemaProp::string().minimum(0),
            r#""p" is a string and cannot have a minimum"#,
        ),
        (
            SchemaProp::integer().max_length(3),
            r#""p" is an integer and cannot have a max_length"#,
        ),
        (
            SchemaProp::any_object().min_items(1),
            r#""p" is an object and cannot have a min_items"#,
        ),
        (
            SchemaProp::any_array().minimum(1),
            r#""p" is an array and cannot have a minimum"#,
        ),
        (
            SchemaProp::any().maximum(1),
            r#""p" accepts any value and cannot have a maximum"#,
        ),
        (
            SchemaProp::integer().minimum(0.5),
            r#""p" is an integer and cannot have minimum 0.5"#,
        ),
        (
            SchemaProp::number().minimum(f64::NAN),
            r#""p" has a minimum that is not a finite number"#,
        ),
        (
            SchemaProp::number().maximum(f64::INFINITY),
            r#""p" has a maximum that is not a finite number"#,
        ),
        (
            SchemaProp::integer().minimum(10).maximum(5),
            r#""p" has minimum 10 greater than maximum 5"#,
        ),
        (
            SchemaProp::string().min_length(3).max_length(2),
            r#""p" has min_length 3 greater than max_length 2"#,
        ),
        (
            SchemaProp::any_array().min_items(2).max_items(1),
            r#""p" has min_items 2 greater than max_items 1"#,
        ),
        (
            SchemaProp::integer().minimum(1).default_value(0),
            r#""p" must be at least 1"#,
        ),
    ];
    for (prop, message) in cases {
        let spec = SchemaSpec::new().prop("p", prop);
        assert_eq!(spec.check().unwrap_err().message(), message);
    }
    // Nested, and fine cases.
    let nested = SchemaSpec::new().prop(
        "o",
        SchemaProp::object(SchemaSpec::new().prop("s", SchemaProp::boolean().min_length(1))),
    );
    assert_eq!(
        nested.check().unwrap_err().message(),
        r#""o.s" is a boolean and cannot have a min_length"#
    );
    for prop in [
        SchemaProp::integer().minimum(2.0).maximum(2),
        SchemaProp::number().minimum(0.5).maximum(0.5),
        SchemaProp::string().min_length(2).max_length(2),
        SchemaProp::number().minimum(f64::NAN).minimum(1),
    ] {
        assert!(SchemaSpec::new().prop("p", prop).check().is_ok());
    }
}

#[test]
fn any_accepts_every_value_but_null_is_still_absent() {
    let spec = SchemaSpec::new()
        .prop("req", SchemaProp::any().required())
        .prop("opt", SchemaProp::any())
        .prop(
            "choice",
            SchemaProp::any().enum_values([json!("a"), json!(1)]),
        );
    for value in [
        json!(1),
        json!("x"),
        json!([1]),
        json!({"a": null}),
        json!(false),
    ] {
        assert!(spec.validate(&json!({ "req": value })).is_empty());
    }
    assert_eq!(
        messages(&spec, json!({"req": null, "opt": null})),
        [r#"missing required property "req""#]
    );
    assert_eq!(
        messages(&spec, json!({"req": 1, "choice": true})),
        [r#""choice" must be one of ["a",1]"#]
    );
    assert!(spec.check().is_ok());
}
