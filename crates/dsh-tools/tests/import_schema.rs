//! `SchemaSpec::from_json_schema`: real MCP `inputSchema`s, what is kept and
//! what is lossy, the errors, and hostile schemas.

use dsh_tools::{
    Dialect, ImportedSchema, SchemaImportErrorKind, SchemaProp, SchemaSpec, SchemaType,
    ViolationKind,
};
use serde_json::{json, Value};

fn import(schema: Value) -> ImportedSchema {
    import_ref(&schema)
}

fn import_ref(schema: &Value) -> ImportedSchema {
    let imported = SchemaSpec::from_json_schema(schema).unwrap();
    assert_eq!(imported.spec.check(), Ok(()));
    imported
}

fn messages(spec: &SchemaSpec, args: Value) -> Vec<String> {
    spec.validate(&args)
        .into_iter()
        .map(|v| v.into_message())
        .collect()
}

fn error(schema: Value) -> (SchemaImportErrorKind, String) {
    let err = SchemaSpec::from_json_schema(&schema).unwrap_err();
    (err.kind(), err.to_string())
}

/// The official filesystem server's `read_text_file` (zod-to-json-schema output).
fn read_text_file() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "tail": {"type": "number", "description": "If provided, returns only the last N lines of the file"},
            "head": {"type": "number", "description": "If provided, returns only the first N lines of the file"}
        },
        "required": ["path"],
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"
    })
}

#[test]
fn filesystem_read_file() {
    let imported = import(read_text_file());
    assert!(imported.lossless);
    let spec = &imported.spec;
    assert!(spec.is_closed());
    assert_eq!(
        spec.get("path").map(SchemaProp::ty),
        Some(SchemaType::String)
    );
    assert!(spec
        .validate(&json!({"path": "/etc/hosts", "head": 3}))
        .is_empty());
    assert_eq!(
        messages(spec, json!({})),
        [r#"missing required property "path""#]
    );
    assert_eq!(
        messages(spec, json!({"path": 1, "head": "3", "lines": 2})),
        [
            r#""path" must be a string"#,
            r#""head" must be a number"#,
            r#""lines" is not a declared property"#,
        ]
    );
    // Re-emitted, it is the input without the annotation.
    let mut expected = read_text_file();
    expected.as_object_mut().unwrap().remove("$schema");
    assert_eq!(spec.to_json_schema(Dialect::Mcp), expected);
}

/// The GitHub server's `create_issue` and `list_issues`, with arrays of
/// strings, enums and bounded numbers.
#[test]
fn github_create_and_list_issues() {
    let create_issue = json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "Repository owner"},
            "repo": {"type": "string", "description": "Repository name"},
            "title": {"type": "string", "description": "Issue title"},
            "body": {"type": "string", "description": "Issue body content"},
            "assignees": {"type": "array", "items": {"type": "string"}, "description": "Usernames to assign to this issue"},
            "labels": {"type": "array", "items": {"type": "string"}, "description": "Labels to apply to this issue"},
            "milestone": {"type": "number", "description": "Milestone number"},
            "type": {"type": "string", "enum": ["bug", "feature", "task"], "description": "Type of this issue"}
        },
        "required": ["owner", "repo", "title"],
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"
    });
    let imported = import(create_issue);
    assert!(imported.lossless);
    let spec = &imported.spec;
    assert!(spec
        .validate(
            &json!({"owner": "o", "repo": "r", "title": "t", "labels": ["bug"], "type": "bug"})
        )
        .is_empty());
    assert_eq!(
        messages(
            spec,
            json!({"owner": "o", "repo": 5, "assignees": ["a", 3], "labels": "bug", "type": "epic"})
        ),
        [
            r#""repo" must be a string"#,
            r#"missing required property "title""#,
            r#""assignees[1]" must be a string"#,
            r#""labels" must be an array"#,
            r#""type" must be one of ["bug","feature","task"]"#,
        ]
    );

    let list_issues = json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string"},
            "repo": {"type": "string"},
            "state": {"type": "string", "enum": ["open", "closed", "all"]},
            "labels": {"type": "array", "items": {"type": "string"}},
            "sort": {"type": "string", "enum": ["created", "updated", "comments"]},
            "direction": {"type": "string", "enum": ["asc", "desc"]},
            "since": {"type": "string"},
            "page": {"type": "number", "minimum": 1},
            "perPage": {"type": "number", "minimum": 1, "maximum": 100}
        },
        "required": ["owner", "repo"],
        "additionalProperties": false
    });
    let imported = import(list_issues.clone());
    assert!(imported.lossless);
    assert_eq!(imported.spec.to_json_schema(Dialect::Mcp), list_issues);
    assert_eq!(
        messages(
            &imported.spec,
            json!({"owner": "o", "repo": "r", "page": 0, "perPage": 250, "state": "merged"})
        ),
        [
            r#""state" must be one of ["open","closed","all"]"#,
            r#""page" must be at least 1"#,
            r#""perPage" must be at most 100"#,
        ]
    );
    let violations = imported
        .spec
        .validate(&json!({"owner": "o", "repo": "r", "page": 0}));
    assert_eq!(violations[0].kind(), ViolationKind::OutOfRange);
}

/// What FastMCP (pydantic) emits: titles on everything, `anyOf` with null for
/// `Optional[T]`, `default: null`.
#[test]
fn pydantic_optional_fields_are_lossless() {
    let imported = import(json!({
        "properties": {
            "query": {"title": "Query", "type": "string", "minLength": 1},
            "limit": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": null,
                "title": "Limit",
                "description": "At most this many"
            },
            "tags": {
                "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
                "default": null,
                "title": "Tags"
            },
            "mode": {"default": "fast", "enum": ["fast", "slow"], "title": "Mode", "type": "string"}
        },
        "required": ["query"],
        "title": "searchArguments",
        "type": "object"
    }));
    assert!(imported.lossless);
    let spec = &imported.spec;
    let limit = spec.get("limit").unwrap();
    assert_eq!(limit.ty(), SchemaType::Integer);
    assert!(!limit.is_required());
    assert_eq!(limit.get_description(), Some("At most this many"));
    assert_eq!(limit.get_default(), None);
    assert_eq!(
        spec.get("mode").unwrap().get_default(),
        Some(&json!("fast"))
    );
    assert!(spec
        .validate(&json!({"query": "x", "limit": null, "tags": null}))
        .is_empty());
    assert_eq!(
        messages(
            spec,
            json!({"query": "", "limit": "5", "tags": [1], "mode": "slower"})
        ),
        [
            r#""query" must be at least 1 character long"#,
            r#""limit" must be an integer"#,
            r#""tags[0]" must be a string"#,
            r#""mode" must be one of ["fast","slow"]"#,
        ]
    );
    assert_eq!(
        messages(spec, json!({"query": "q", "limit": 0})),
        [r#""limit" must be at least 1"#]
    );
}

#[test]
fn keywords_beside_a_nullable_branch_add_to_it() {
    let imported = import(json!({
        "type": "object",
        "properties": {
            "name": {
                "anyOf": [{"type": "string", "minLength": 1, "enum": ["a", "bb", "ccc"]}, {"type": "null"}],
                "maxLength": 2,
                "enum": ["bb", "ccc", "dd"]
            },
            "n": {"oneOf": [{"type": "null"}, {"type": "integer", "maximum": 9}], "minimum": 3}
        }
    }));
    assert!(imported.lossless);
    let name = imported.spec.get("name").unwrap();
    assert_eq!(
        (name.get_min_length(), name.get_max_length()),
        (Some(1), Some(2))
    );
    assert_eq!(name.get_enum(), Some(&[json!("bb"), json!("ccc")][..]));
    let n = imported.spec.get("n").unwrap();
    assert_eq!(n.ty(), SchemaType::Integer);
    assert_eq!(
        (n.get_minimum(), n.get_maximum()),
        (Some(&3.into()), Some(&9.into()))
    );
    assert_eq!(
        messages(&imported.spec, json!({"name": "ccc", "n": 2})),
        [
            r#""name" must be at most 2 characters long"#,
            r#""n" must be at least 3"#
        ]
    );
}

#[test]
fn refs_and_any_of_become_any_and_lossy() {
    let imported = import(json!({
        "type": "object",
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {
            "target": {"$ref": "#/$defs/Point", "description": "Where to go"},
            "value": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
            "when": {"type": "string", "format": "date-time"},
            "either": {"type": ["string", "integer"]}
        },
        "required": ["target", "value", "name"]
    }));
    assert!(!imported.lossless);
    let spec = &imported.spec;
    let target = spec.get("target").unwrap();
    assert_eq!(target.ty(), SchemaType::Any);
    assert!(target.is_required());
    assert_eq!(target.get_description(), Some("Where to go"));
    assert_eq!(spec.get("value").unwrap().ty(), SchemaType::Any);
    assert_eq!(spec.get("either").unwrap().ty(), SchemaType::Any);
    // The pattern is gone; the type and the length are kept.
    let name = spec.get("name").unwrap();
    assert_eq!(name.ty(), SchemaType::String);
    assert_eq!(name.get_max_length(), Some(8));
    assert_eq!(spec.get("when").unwrap().ty(), SchemaType::String);
    assert!(!spec.supports_strict());
    assert_eq!(
        messages(spec, json!({})),
        [
            r#"missing required property "target""#,
            r#"missing required property "value""#,
            r#"missing required property "name""#,
        ]
    );
    assert_eq!(
        messages(
            spec,
            json!({"target": 1, "value": true, "name": 5, "either": [], "when": "now"})
        ),
        [r#""name" must be a string"#]
    );
    assert_eq!(
        spec.to_json_schema(Dialect::Mcp)["properties"]["target"],
        json!({"description": "Where to go"})
    );
}

#[test]
fn what_is_rewritten_without_loss() {
    let imported = import(json!({
        "type": "object",
        "$comment": "generated",
        "$id": "urn:example:args",
        "properties": {
            "count": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10.5},
            "rounded": {"type": "integer", "minimum": 0.5, "maximum": 9.9},
            "old_style": {"type": "integer", "minimum": 1, "exclusiveMinimum": true},
            "ratio": {"type": ["integer", "number"], "maximum": 1},
            "fixed": {"const": "v1"},
            "kind": {"type": "string", "enum": ["a", 1, "b", null]},
            "level": {"type": "integer", "enum": [1, 2.0, 2.5]},
            "none": {"type": "array", "items": false},
            "anything": {"description": "Any value at all"},
            "free": {"type": "object", "additionalProperties": {}},
            "bad_default": {"type": "integer", "default": "ten"},
            "noop": {"type": "string", "minimum": 3, "items": {"type": "number"}},
            "note": {"type": "string", "title": "Note", "readOnly": true}
        },
        "required": ["count", "ghost"]
    }));
    assert!(imported.lossless, "{:?}", imported.spec);
    let spec = &imported.spec;
    let count = spec.get("count").unwrap();
    assert_eq!(count.get_minimum(), Some(&1.into()));
    assert_eq!(count.get_maximum(), Some(&10.into()));
    let rounded = spec.get("rounded").unwrap();
    assert_eq!(rounded.get_minimum(), Some(&1.into()));
    assert_eq!(rounded.get_maximum(), Some(&9.into()));
    assert_eq!(
        spec.get("old_style").unwrap().get_minimum(),
        Some(&2.into())
    );
    assert_eq!(spec.get("ratio").unwrap().ty(), SchemaType::Number);
    assert_eq!(
        spec.get("fixed").unwrap().get_enum(),
        Some(&[json!("v1")][..])
    );
    assert_eq!(spec.get("fixed").unwrap().ty(), SchemaType::Any);
    assert_eq!(
        spec.get("kind").unwrap().get_enum(),
        Some(&[json!("a"), json!("b")][..])
    );
    assert_eq!(
        spec.get("level").unwrap().get_enum(),
        Some(&[json!(1), json!(2)][..])
    );
    assert_eq!(spec.get("none").unwrap().get_max_items(), Some(0));
    assert_eq!(spec.get("anything").unwrap().ty(), SchemaType::Any);
    assert!(!spec
        .get("free")
        .unwrap()
        .get_properties()
        .is_some_and(SchemaSpec::is_closed));
    assert_eq!(spec.get("bad_default").unwrap().get_default(), None);
    assert_eq!(spec.get("noop").unwrap().get_minimum(), None);
    // A required name without a property is a required property of any type.
    let ghost = spec.get("ghost").unwrap();
    assert_eq!(ghost.ty(), SchemaType::Any);
    assert!(ghost.is_required());

    assert_eq!(
        messages(
            spec,
            json!({"count": 0, "rounded": 10, "old_style": 1, "level": 3, "none": [1], "fixed": "v2"})
        ),
        [
            r#""count" must be at least 1"#,
            r#""rounded" must be at most 9"#,
            r#""old_style" must be at least 2"#,
            r#""fixed" must be one of ["v1"]"#,
            r#""level" must be one of [1,2]"#,
            r#""none" must have at most 0 items"#,
            r#"missing required property "ghost""#,
        ]
    );
    // JSON Schema compares enum numbers by value, and so does validation.
    assert!(spec
        .validate(&json!({"count": 1, "ghost": 0, "ratio": 0.5, "anything": [null]}))
        .is_empty());
}

#[test]
fn what_makes_an_import_lossy() {
    let lossy = [
        json!({"type": "string", "pattern": "^a"}),
        json!({"type": "string", "format": "uri"}),
        json!({"type": "number", "exclusiveMinimum": 0}),
        json!({"type": "number", "multipleOf": 2}),
        json!({"type": "array", "items": [{"type": "string"}]}),
        json!({"type": "array", "prefixItems": [{"type": "string"}]}),
        json!({"type": "array", "uniqueItems": true}),
        json!({"type": "array", "items": {"type": ["string", "null"]}}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        json!({"type": "object", "patternProperties": {"^x": {}}}),
        json!({"type": "string", "examples": ["a"]}),
        json!({"type": "string", "deprecated": true}),
        json!({"type": "string", "x-vendor": 1}),
        json!({"type": "string", "minLength": -1}),
        json!({"type": "string", "minLength": 3, "maxLength": 2}),
        json!({"type": "integer", "minimum": 3, "maximum": 2}),
        json!({"type": "string", "allOf": [{"minLength": 1}]}),
        json!({"not": {"type": "string"}}),
        json!({"minLength": 1}),
        json!({"type": "null"}),
        json!({"type": []}),
        json!(false),
        json!(5),
    ];
    for schema in lossy {
        let imported = import(json!({"type": "object", "properties": {"p": schema}}));
        assert!(!imported.lossless, "{schema}");
    }
    // A property that may be null and is required becomes optional.
    let imported = import(json!({
        "type": "object",
        "properties": {"p": {"type": ["string", "null"]}},
        "required": ["p"]
    }));
    assert!(!imported.lossless);
    assert!(!imported.spec.get("p").unwrap().is_required());
    // At the root: a description, an unknown keyword, `$defs`.
    for root in [
        json!({"type": "object", "description": "Args"}),
        json!({"type": "object", "$defs": {}}),
        json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        json!({"type": ["object", "null"]}),
    ] {
        assert!(!import(root.clone()).lossless, "{root}");
    }
    // And what does not.
    for schema in [
        json!({"type": "string", "title": "P", "$comment": "c"}),
        json!({"type": "array", "uniqueItems": false, "items": true}),
        json!({"type": "object", "additionalProperties": true}),
        json!({"enum": ["a", 1]}),
        json!(true),
        json!({}),
    ] {
        let imported = import(json!({"type": "object", "properties": {"p": schema}}));
        assert!(imported.lossless, "{schema}");
    }
}

#[test]
fn errors_name_the_json_path() {
    let cases = [
        (
            json!({"type": "object", "properties": {"x": {"type": "strin"}}}),
            SchemaImportErrorKind::UnknownType,
            r#"inputSchema.properties.x.type: unknown type "strin""#,
        ),
        (
            json!({"type": "object", "properties": {"a b": {"type": ["string", "nul"]}}}),
            SchemaImportErrorKind::UnknownType,
            r#"inputSchema.properties["a b"].type[1]: unknown type "nul""#,
        ),
        (
            json!({"type": "object", "properties": {"t": {"type": "array", "items": {"type": 5}}}}),
            SchemaImportErrorKind::UnknownType,
            "inputSchema.properties.t.items.type: must be a type name or an array of type names, not 5",
        ),
        (
            json!({"type": "object", "properties": ["x"]}),
            SchemaImportErrorKind::PropertiesNotAnObject,
            r#"inputSchema.properties: must be an object mapping property names to schemas, not ["x"]"#,
        ),
        (
            json!({"type": "object", "properties": {"o": {"type": "object", "properties": 1}}}),
            SchemaImportErrorKind::PropertiesNotAnObject,
            "inputSchema.properties.o.properties: must be an object mapping property names to schemas, not 1",
        ),
        (
            json!({"type": "object", "required": "x"}),
            SchemaImportErrorKind::RequiredNotStrings,
            r#"inputSchema.required: must be an array of property names, not "x""#,
        ),
        (
            json!({"type": "object", "required": ["x", 2]}),
            SchemaImportErrorKind::RequiredNotStrings,
            "inputSchema.required[1]: must be a property name (a string), not 2",
        ),
        (
            json!({"type": "string"}),
            SchemaImportErrorKind::NotAnObjectSchema,
            r#"inputSchema.type: must be "object" for a tool's arguments, not "string""#,
        ),
        (
            json!({"type": ["object", "array"]}),
            SchemaImportErrorKind::NotAnObjectSchema,
            r#"inputSchema.type: must be "object" for a tool's arguments, not ["object","array"]"#,
        ),
        (
            json!({"description": "no type"}),
            SchemaImportErrorKind::NotAnObjectSchema,
            r#"inputSchema: must be an object schema, but has neither "type": "object" nor "properties""#,
        ),
        (
            json!([{"type": "object"}]),
            SchemaImportErrorKind::NotAnObjectSchema,
            r#"inputSchema: must be an object schema ("type": "object"), not [{"type":"object"}]"#,
        ),
        (
            json!({"type": "objetc"}),
            SchemaImportErrorKind::UnknownType,
            r#"inputSchema.type: unknown type "objetc""#,
        ),
    ];
    for (schema, kind, message) in cases {
        assert_eq!(error(schema), (kind, message.to_owned()));
    }
    let err =
        SchemaSpec::from_json_schema(&json!({"properties": {"x": {"type": "strin"}}})).unwrap_err();
    assert_eq!(err.path(), "inputSchema.properties.x.type");
    assert_eq!(err.detail(), r#"unknown type "strin""#);
    // A large value is named by its kind, not copied into the message.
    let long: Vec<String> = (0..10_000).map(|i| format!("p{i}")).collect();
    assert_eq!(
        error(json!({"type": "object", "properties": long})).1,
        "inputSchema.properties: must be an object mapping property names to schemas, not an array"
    );
    assert_eq!(
        error(json!({"type": "object", "properties": {"x": {"type": "x".repeat(100)}}})).1,
        format!(
            "inputSchema.properties.x.type: unknown type \"{}…\"",
            "x".repeat(32)
        )
    );
    // Inside what becomes Any, nothing is read, so nothing is an error.
    assert!(SchemaSpec::from_json_schema(&json!({
        "type": "object",
        "properties": {"x": {"anyOf": [{"type": "strin"}]}}
    }))
    .is_ok());
}

/// `{key: inner}` plus `fields`, without copying `inner` (`json!` would
/// serialise it again, recursively).
fn wrap(fields: Value, key: &str, inner: Value) -> Value {
    let Value::Object(mut map) = fields else {
        unreachable!("an object")
    };
    map.insert(key.to_owned(), inner);
    Value::Object(map)
}

/// `{"type":"object","properties":{"a": <depth - 1 more>}}`, built without recursion.
fn nested_objects(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        let properties = wrap(json!({}), "a", schema);
        schema = wrap(
            json!({"type": "object", "required": ["a"]}),
            "properties",
            properties,
        );
    }
    schema
}

#[test]
fn nesting_is_bounded() {
    // 64 levels of properties below the root are read; deeper is Any.
    let imported = import(nested_objects(64));
    assert!(imported.lossless);
    let imported = import(nested_objects(66));
    assert!(!imported.lossless);
    let mut prop = imported.spec.get("a").unwrap();
    let mut levels = 1;
    while let Some(next) = prop.get_properties().and_then(|spec| spec.get("a")) {
        prop = next;
        levels += 1;
    }
    assert_eq!(prop.ty(), SchemaType::Any);
    assert_eq!(levels, 65);
}

#[test]
fn a_hostile_deep_schema_neither_overflows_nor_fails() {
    use std::mem::ManuallyDrop;
    // Dropping a JSON value 100 000 levels deep recurses in serde_json; the
    // test is about the import, so the inputs are never dropped.
    let depth = 100_000;
    let objects = ManuallyDrop::new(nested_objects(depth));
    let mut arrays = json!({"type": "string"});
    for _ in 0..depth {
        arrays = wrap(json!({"type": "array"}), "items", arrays);
    }
    let arrays = ManuallyDrop::new(wrap(
        json!({"type": "object"}),
        "properties",
        wrap(json!({}), "x", arrays),
    ));
    for (schema, invalid) in [
        (&*objects, json!({"a": {"a": 1}})),
        (&*arrays, json!({"x": [[1]]})),
    ] {
        let imported = import_ref(schema);
        assert!(!imported.lossless);
        for dialect in Dialect::ALL {
            let _ = imported.spec.to_json_schema(dialect);
        }
        assert!(!imported.spec.validate(&invalid).is_empty());
    }
}
