//! Reading a raw JSON Schema into the DSL: [`SchemaSpec::from_json_schema`],
//! [`ImportedSchema`], [`SchemaImportError`].
//!
//! A module of its own, after `validate`: reading a schema leans on
//! validation (comparing bounds, checking a default or an enum value against
//! the property it belongs to), and validation is built on the schema types,
//! so the three stack up — schema, validate, import — with no way back.
//!
//! Every function keeps one promise: what it returns accepts at least what
//! the schema accepts. Whatever cannot be said exactly calls
//! [`Import::lossy`].

use crate::schema::{SchemaProp, SchemaSpec, SchemaType};
use crate::validate::{compare_numbers, exact_int, prop_accepts, type_matches};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt::Write as _;

impl SchemaSpec {
    /// Makes a spec from a raw JSON Schema, such as the `inputSchema` of
    /// another MCP server's tool, so that its arguments are validated before
    /// the body runs, with the same messages as a typed tool's.
    ///
    /// # What is read
    ///
    /// The root must be an object schema: `"type": "object"` (or
    /// `["object", "null"]`), or no `type` and a `properties`. Read at every
    /// level: `properties`, `required`, `type` (`string`, `number`, `integer`,
    /// `boolean`, `object`, `array`), `description`, `enum`, `const` (a
    /// one-value enum), `default`, `items` (one schema), `additionalProperties:
    /// false` (a closed object), nested objects, `minimum`, `maximum`,
    /// `minLength`, `maxLength`, `minItems`, `maxItems`, and `null` allowed
    /// through `"type": [T, "null"]` or pydantic's `anyOf: [{T}, {"type":
    /// "null"}]` (an optional `T`).
    ///
    /// Some things are rewritten without loss: on an integer, a fractional
    /// bound is rounded inwards and an exclusive bound becomes an inclusive
    /// one (`exclusiveMinimum: 0` is `minimum: 1`); `"type": ["integer",
    /// "number"]` is a number; `items: false` is `maxItems: 0`; enum values of
    /// another type than the property's (they can never be valid) and a
    /// `default` that could not be valid are dropped; a keyword of another
    /// type than the property's (`minLength` on an integer) is a no-op and
    /// is dropped. A `required` name with no property becomes a required
    /// [`SchemaType::Any`] property.
    ///
    /// # What is lost
    ///
    /// What the DSL cannot express is dropped and makes the result lossy
    /// (`lossless == false`), always keeping what *can* be expressed, so the
    /// spec never refuses arguments the schema accepts:
    ///
    /// - A property whose type cannot be told becomes [`SchemaType::Any`]:
    ///   `$ref` (with or without `$defs`), `anyOf`/`oneOf`/`allOf`/`not`
    ///   without a `type`, a `type` list of several non-null types (or only
    ///   `"null"`), a schema nested deeper than 64 levels, a schema that is
    ///   `false` or not an object. An element that may be `null` is Any too.
    /// - Beside a `type`, a keyword the DSL has no word for is dropped and the
    ///   type kept: `pattern`, `format`, `multipleOf`, exclusive bounds on a
    ///   number, `uniqueItems: true`, tuple `items`/`prefixItems`,
    ///   `additionalProperties: {schema}` (the object stays open),
    ///   `patternProperties`, `anyOf` & co., unknown keywords, a malformed
    ///   bound, a minimum above its maximum.
    /// - A property that may be `null` and is also `required` becomes optional
    ///   (dsh-tools cannot require a key whose value may be `null`).
    /// - `examples`, `deprecated`, `contentEncoding`/`contentMediaType` and a
    ///   root `description` are dropped: they constrain nothing, but they tell
    ///   the model something the re-emitted schema would not.
    ///
    /// Pure annotations are ignored *without* making the result lossy, since
    /// the re-emitted schema still tells the model the same thing: `title`
    /// (generators such as pydantic title every property with its own name),
    /// `$schema`, `$id`, `$anchor`, `$dynamicAnchor`, `$comment`,
    /// `$vocabulary`, `readOnly` and `writeOnly`.
    ///
    /// `lossless == true` means `spec.to_json_schema(Dialect::Mcp)` describes
    /// the same set of valid arguments as the input (see
    /// [`ImportedSchema::lossless`] for how `null` and integers are read).
    ///
    /// # Errors
    ///
    /// A [`SchemaImportError`] naming the JSON path (from `inputSchema`) for a
    /// root that is not an object schema, a `properties` that is not an
    /// object, a `required` that is not an array of strings, and a `type`
    /// that is not a known type name, wherever they are read.
    ///
    /// ```
    /// use dsh_tools::SchemaSpec;
    /// use serde_json::json;
    ///
    /// let imported = SchemaSpec::from_json_schema(&json!({
    ///     "type": "object",
    ///     "properties": {"path": {"type": "string", "description": "File to read"}},
    ///     "required": ["path"]
    /// }))
    /// .unwrap();
    /// assert!(imported.lossless);
    /// let violations = imported.spec.validate(&json!({"path": 3}));
    /// assert_eq!(violations[0].message(), r#""path" must be a string"#);
    ///
    /// let err = SchemaSpec::from_json_schema(&json!({
    ///     "type": "object",
    ///     "properties": {"x": {"type": "strin"}}
    /// }))
    /// .unwrap_err();
    /// assert_eq!(err.to_string(), r#"inputSchema.properties.x.type: unknown type "strin""#);
    /// ```
    pub fn from_json_schema(schema: &Value) -> Result<ImportedSchema, SchemaImportError> {
        root(schema)
    }
}

/// What [`SchemaSpec::from_json_schema`] made of a JSON Schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSchema {
    /// The spec, ready for [`SchemaSpec::validate`]; it passes [`SchemaSpec::check`].
    pub spec: SchemaSpec,
    /// Whether the spec says all the schema says: its JSON Schema describes
    /// the same valid arguments and tells the model the same. When `false`,
    /// the spec still accepts at least what the schema accepts, so show the
    /// model the original schema and let the server have the last word.
    ///
    /// Both hold as dsh-tools reads JSON everywhere: `null` for a property
    /// counts as absent, and an integer is written without a fraction or
    /// exponent and fits 64 bits (`2.0` is not an integer).
    pub lossless: bool,
}

/// Why [`SchemaSpec::from_json_schema`] refused a schema.
///
/// Displays as `PATH: DETAIL`, e.g. `inputSchema.properties.x.type: unknown type "strin"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {detail}")]
pub struct SchemaImportError {
    kind: SchemaImportErrorKind,
    path: String,
    detail: String,
}

impl SchemaImportError {
    /// What was wrong.
    pub fn kind(&self) -> SchemaImportErrorKind {
        self.kind
    }

    /// Where: a JSON path from `inputSchema`, e.g. `inputSchema.properties.x.type`
    /// or `inputSchema.required[1]`; a key that is not a plain name is quoted
    /// (`inputSchema.properties["a b"]`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What, without the path: `unknown type "strin"`.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

/// The kinds of [`SchemaImportError`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaImportErrorKind {
    /// The root is not an object schema (a tool's arguments are an object).
    NotAnObjectSchema,
    /// A `properties` is not a JSON object.
    PropertiesNotAnObject,
    /// A `required` is not an array of strings.
    RequiredNotStrings,
    /// A `type` is not a type name or an array of them.
    UnknownType,
}

/// Schemas nested deeper than this become [`SchemaType::Any`]: a hostile
/// schema cannot make the import, validation or emission recurse without end.
const MAX_DEPTH: usize = 64;

/// Annotations that neither constrain a value nor tell the model anything
/// the re-emitted schema does not: ignored without loss.
const IGNORED: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
    "$vocabulary",
    "title",
    "readOnly",
    "writeOnly",
];

/// Keywords that only constrain numbers.
const NUMBER_KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
/// Keywords that only constrain strings.
const STRING_KEYS: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];
/// Keywords that only constrain arrays.
const ARRAY_KEYS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
];
/// Keywords that only constrain objects.
const OBJECT_KEYS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
];

/// The type whose values a type-specific keyword constrains.
fn keyword_type(key: &str) -> Option<SchemaType> {
    if NUMBER_KEYS.contains(&key) {
        Some(SchemaType::Number)
    } else if STRING_KEYS.contains(&key) {
        Some(SchemaType::String)
    } else if ARRAY_KEYS.contains(&key) {
        Some(SchemaType::Array)
    } else if OBJECT_KEYS.contains(&key) {
        Some(SchemaType::Object)
    } else {
        None
    }
}

/// Where in the schema: a chain on the stack, rendered only for an error.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a str, &'a Path<'a>),
    Index(usize, &'a Path<'a>),
}

impl Path<'_> {
    fn render(&self) -> String {
        let mut out = String::from("inputSchema");
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match *self {
            Path::Root => {}
            Path::Key(key, parent) => {
                parent.write(out);
                let plain = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '-'));
                if plain {
                    out.push('.');
                    out.push_str(key);
                } else {
                    out.push('[');
                    out.push_str(&Value::from(key).to_string());
                    out.push(']');
                }
            }
            Path::Index(index, parent) => {
                parent.write(out);
                // Writing into a `String` cannot fail.
                let _ = write!(out, "[{index}]");
            }
        }
    }
}

/// A value for an error message: itself when short, else its kind, so a
/// hostile schema cannot make a message of megabytes.
fn brief(value: &Value) -> String {
    const LIMIT: usize = 40;
    /// Keeps the first bytes written and fails past the limit, so a
    /// large value is never rendered whole.
    struct Head(Vec<u8>);
    impl std::io::Write for Head {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0.len() + buf.len() > LIMIT {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut head = Head(Vec::new());
    if serde_json::to_writer(&mut head, value).is_ok() {
        if let Ok(text) = String::from_utf8(head.0) {
            return text;
        }
    }
    match value {
        Value::String(text) => {
            Value::from(format!("{}…", text.chars().take(32).collect::<String>())).to_string()
        }
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        _ => "a number".to_owned(),
    }
}

fn error(kind: SchemaImportErrorKind, path: &Path<'_>, detail: String) -> SchemaImportError {
    SchemaImportError {
        kind,
        path: path.render(),
        detail,
    }
}

/// The state of one import.
struct Import {
    lossless: bool,
}

fn root(schema: &Value) -> Result<ImportedSchema, SchemaImportError> {
    let path = Path::Root;
    let Value::Object(map) = schema else {
        return Err(error(
            SchemaImportErrorKind::NotAnObjectSchema,
            &path,
            format!(
                "must be an object schema (\"type\": \"object\"), not {}",
                brief(schema)
            ),
        ));
    };
    let mut import = Import { lossless: true };
    match map.get("type") {
        None if map.contains_key("properties") => {}
        None => {
            return Err(error(
                SchemaImportErrorKind::NotAnObjectSchema,
                &path,
                "must be an object schema, but has neither \"type\": \"object\" nor \"properties\""
                    .to_owned(),
            ))
        }
        Some(ty) => {
            let type_path = Path::Key("type", &path);
            let types = read_type(ty, &type_path)?;
            if types.names != [SchemaType::Object] {
                return Err(error(
                    SchemaImportErrorKind::NotAnObjectSchema,
                    &type_path,
                    format!(
                        "must be \"object\" for a tool's arguments, not {}",
                        brief(ty)
                    ),
                ));
            }
            // Arguments are always an object: `null` for all of them is not a call.
            if types.null {
                import.lossy();
            }
        }
    }
    let spec = import.object_spec(map, &path, 0)?;
    for (key, _) in map {
        let key = key.as_str();
        if IGNORED.contains(&key) || key == "type" || OBJECT_KEYS.contains(&key) {
            continue;
        }
        match keyword_type(key) {
            // A keyword for other types says nothing about an object.
            Some(_) => {}
            // `description`, `enum`, `default`, applicators, unknown keywords.
            None => import.lossy(),
        }
    }
    Ok(ImportedSchema {
        spec,
        lossless: import.lossless,
    })
}

/// A `type` keyword: its non-null types, deduplicated, and whether `null` is one.
struct Types {
    names: Vec<SchemaType>,
    null: bool,
}

fn type_name(name: &str) -> Option<Option<SchemaType>> {
    Some(Some(match name {
        "string" => SchemaType::String,
        "number" => SchemaType::Number,
        "integer" => SchemaType::Integer,
        "boolean" => SchemaType::Boolean,
        "object" => SchemaType::Object,
        "array" => SchemaType::Array,
        "null" => return Some(None),
        _ => return None,
    }))
}

fn read_type(value: &Value, path: &Path<'_>) -> Result<Types, SchemaImportError> {
    let mut types = Types {
        names: Vec::new(),
        null: false,
    };
    let mut add = |name: &Value, path: &Path<'_>| match name.as_str().map(|n| (n, type_name(n))) {
        Some((_, Some(Some(ty)))) => {
            if !types.names.contains(&ty) {
                types.names.push(ty);
            }
            Ok(())
        }
        Some((_, Some(None))) => {
            types.null = true;
            Ok(())
        }
        Some((name, None)) => Err(error(
            SchemaImportErrorKind::UnknownType,
            path,
            format!("unknown type {}", brief(&Value::from(name))),
        )),
        None => Err(error(
            SchemaImportErrorKind::UnknownType,
            path,
            format!("must be a type name, not {}", brief(name)),
        )),
    };
    match value {
        Value::Array(names) => {
            for (index, name) in names.iter().enumerate() {
                add(name, &Path::Index(index, path))?;
            }
        }
        Value::String(_) => add(value, path)?,
        _ => {
            return Err(error(
                SchemaImportErrorKind::UnknownType,
                path,
                format!(
                    "must be a type name or an array of type names, not {}",
                    brief(value)
                ),
            ))
        }
    }
    Ok(types)
}

/// The non-null branch of `anyOf`/`oneOf: [{T}, {"type": "null"}]`, the
/// way pydantic writes an optional `T`, with its key and index.
fn nullable_branch(map: &Map<String, Value>) -> Option<(&'static str, usize, &Value)> {
    let is_null = |schema: &Value| {
        schema.as_object().is_some_and(|m| {
            m.get("type").and_then(Value::as_str) == Some("null")
                && m.keys()
                    .all(|k| k == "type" || k == "description" || IGNORED.contains(&k.as_str()))
        })
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            if let [a, b] = branches.as_slice() {
                // For `oneOf`, the other branch must exclude null itself:
                // it does when it has a `type` without "null".
                let typed = |s: &Value| {
                    s.get("type")
                        .is_some_and(|t| t.is_string() && t.as_str() != Some("null"))
                };
                match (is_null(a), is_null(b)) {
                    (true, false) if key == "anyOf" || typed(b) => return Some((key, 1, b)),
                    (false, true) if key == "anyOf" || typed(a) => return Some((key, 0, a)),
                    _ => {}
                }
            }
        }
    }
    None
}

impl Import {
    /// Something was dropped: the result accepts more than the schema.
    fn lossy(&mut self) {
        self.lossless = false;
    }

    /// A property: the prop, and whether the schema explicitly allows `null`.
    fn prop(
        &mut self,
        schema: &Value,
        path: &Path<'_>,
        depth: usize,
    ) -> Result<(SchemaProp, bool), SchemaImportError> {
        let map = match schema {
            Value::Object(map) => map,
            // `true` accepts anything, as Any does.
            Value::Bool(true) => return Ok((SchemaProp::any(), false)),
            // `false` accepts nothing, which the DSL cannot say; not a schema at all.
            _ => {
                self.lossy();
                return Ok((SchemaProp::any(), false));
            }
        };
        if depth > MAX_DEPTH
            || ["$ref", "$dynamicRef", "$recursiveRef"]
                .iter()
                .any(|k| map.contains_key(*k))
        {
            // A reference may also make sibling keywords void (draft 7),
            // so nothing beside it is kept but what the model is told.
            self.lossy();
            let mut prop = SchemaProp::any();
            prop.description = map
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            return Ok((prop, false));
        }

        let mut nullable = false;
        let mut branch_key = None;
        let mut prop = match map.get("type") {
            Some(ty) => {
                let types = read_type(ty, &Path::Key("type", path))?;
                nullable = types.null;
                match types.names.as_slice() {
                    [ty] => SchemaProp::of_type(*ty),
                    [SchemaType::Integer, SchemaType::Number]
                    | [SchemaType::Number, SchemaType::Integer] => SchemaProp::number(),
                    // Several types, or only null, or none at all.
                    _ => {
                        self.lossy();
                        SchemaProp::any()
                    }
                }
            }
            None => match nullable_branch(map) {
                Some((key, index, branch)) => {
                    branch_key = Some(key);
                    nullable = true;
                    let branch_path = Path::Index(index, &Path::Key(key, path));
                    self.prop(branch, &branch_path, depth + 1)?.0
                }
                None => SchemaProp::any(),
            },
        };
        let ty = prop.ty;

        for (key, value) in map {
            let key = key.as_str();
            if IGNORED.contains(&key) || key == "type" || Some(key) == branch_key {
                continue;
            }
            match key {
                "description" => match value {
                    Value::String(text) => prop.description = Some(text.clone()),
                    _ => self.lossy(),
                },
                "enum" | "const" | "default" => {}
                _ => match keyword_type(key) {
                    // Read below, with the type.
                    Some(kw) if kw == ty || (kw == SchemaType::Number && ty.is_numeric()) => {}
                    // A keyword for another type is a no-op for this one.
                    Some(_) if ty != SchemaType::Any => {}
                    // Type keywords on a value of any type, applicators,
                    // `format`, `examples`, unknown keywords.
                    _ => self.lossy(),
                },
            }
        }

        match ty {
            SchemaType::Number | SchemaType::Integer => self.number_bounds(map, &mut prop),
            SchemaType::String => self.string_bounds(map, &mut prop),
            SchemaType::Array => self.array(map, &mut prop, path, depth)?,
            SchemaType::Object => {
                let keyed = ["properties", "required", "additionalProperties"];
                if prop.properties.is_some() {
                    // Properties from a nullable branch and beside it: keep the branch's.
                    if keyed.iter().any(|k| map.contains_key(*k)) {
                        self.lossy();
                    }
                    self.object_spec(map, path, depth)?;
                } else if keyed.iter().any(|k| map.contains_key(*k)) {
                    prop.properties = Some(self.object_spec(map, path, depth)?);
                } else {
                    // `{"type": "object"}`, plus keywords the DSL cannot say.
                    self.object_spec(map, path, depth)?;
                }
            }
            SchemaType::Boolean | SchemaType::Any => {}
        }

        self.enum_and_default(map, &mut prop);
        Ok((prop, nullable))
    }

    /// `enum`, `const` and `default`, once the type and bounds are known.
    fn enum_and_default(&mut self, map: &Map<String, Value>, prop: &mut SchemaProp) {
        let mut allowed = match map.get("enum") {
            Some(Value::Array(values)) => Some(values.clone()),
            Some(_) => {
                self.lossy();
                None
            }
            None => None,
        };
        if let Some(value) = map.get("const") {
            allowed = Some(match allowed {
                Some(values) => values.into_iter().filter(|v| v == value).collect(),
                None => vec![value.clone()],
            });
        }
        if let Some(values) = allowed {
            let ty = prop.ty;
            // A value of another type can never be valid; `null` is absence.
            let values: Vec<Value> = values
                .into_iter()
                .filter(|v| !v.is_null())
                .map(|v| whole_as_integer(ty, v))
                .filter(|v| type_matches(ty, v))
                .collect();
            // An enum from a nullable branch and one beside it: both apply.
            let values = match prop.enum_values.take() {
                Some(inner) => values.into_iter().filter(|v| inner.contains(v)).collect(),
                None => values,
            };
            prop.enum_values = Some(values);
        }
        if let Some(default) = map.get("default") {
            // A default that could not be valid would mislead the model
            // and fail `check`; a `null` default is no default.
            if !default.is_null() && prop_accepts(prop, default) {
                prop.default = Some(default.clone());
            } else {
                prop.default = None;
            }
        }
    }

    fn number_bounds(&mut self, map: &Map<String, Value>, prop: &mut SchemaProp) {
        let integer = prop.ty == SchemaType::Integer;
        // Bounds from a nullable branch and bounds beside it both apply.
        let mut lower: Option<Number> = prop.get_minimum().cloned();
        let mut upper: Option<Number> = prop.get_maximum().cloned();
        let tighter = |slot: &mut Option<Number>, candidate: Number, keep: Ordering| {
            if slot
                .as_ref()
                .is_none_or(|current| compare_numbers(&candidate, current) == keep)
            {
                *slot = Some(candidate);
            }
        };
        let minimum = self.number(map, "minimum");
        let maximum = self.number(map, "maximum");
        // Draft 4 writes an exclusive bound as `exclusiveMinimum: true` beside `minimum`.
        let flag = |key: &str| map.get(key).and_then(Value::as_bool);
        let (min_exclusive, max_exclusive) = (flag("exclusiveMinimum"), flag("exclusiveMaximum"));
        if let Some(min) = minimum {
            let strict = min_exclusive == Some(true);
            match (integer, strict) {
                (true, false) => tighter(&mut lower, ceil(&min), Ordering::Greater),
                (true, true) => tighter(&mut lower, floor_plus_one(&min), Ordering::Greater),
                (false, strict) => {
                    if strict {
                        self.lossy();
                    }
                    tighter(&mut lower, min, Ordering::Greater);
                }
            }
        }
        if let Some(max) = maximum {
            let strict = max_exclusive == Some(true);
            match (integer, strict) {
                (true, false) => tighter(&mut upper, floor(&max), Ordering::Less),
                (true, true) => tighter(&mut upper, ceil_minus_one(&max), Ordering::Less),
                (false, strict) => {
                    if strict {
                        self.lossy();
                    }
                    tighter(&mut upper, max, Ordering::Less);
                }
            }
        }
        // Draft 6 and later write the exclusive bound as a number.
        if min_exclusive.is_none() {
            if let Some(min) = self.number(map, "exclusiveMinimum") {
                if integer {
                    tighter(&mut lower, floor_plus_one(&min), Ordering::Greater);
                } else {
                    self.lossy();
                    tighter(&mut lower, min, Ordering::Greater);
                }
            }
        }
        if max_exclusive.is_none() {
            if let Some(max) = self.number(map, "exclusiveMaximum") {
                if integer {
                    tighter(&mut upper, ceil_minus_one(&max), Ordering::Less);
                } else {
                    self.lossy();
                    tighter(&mut upper, max, Ordering::Less);
                }
            }
        }
        if map.contains_key("multipleOf") {
            self.lossy();
        }
        if let (Some(min), Some(max)) = (&lower, &upper) {
            if compare_numbers(min, max) == Ordering::Greater {
                // No value of the type fits, which the DSL cannot say.
                self.lossy();
                lower = None;
                upper = None;
            }
        }
        if lower.is_some() || upper.is_some() || prop.bounds.is_some() {
            let bounds = prop.bounds_mut();
            bounds.minimum = lower;
            bounds.maximum = upper;
        }
    }

    /// The number under `key`; anything else there is a malformed bound.
    fn number(&mut self, map: &Map<String, Value>, key: &str) -> Option<Number> {
        match map.get(key)? {
            Value::Number(n) => Some(n.clone()),
            // Draft 4's exclusive flags are read by the caller.
            Value::Bool(_) if key.starts_with("exclusive") => None,
            _ => {
                self.lossy();
                None
            }
        }
    }

    /// The count under `key` (`minLength`, `maxItems`, …): a non-negative whole number.
    fn count(&mut self, map: &Map<String, Value>, key: &str) -> Option<usize> {
        let value = map.get(key)?;
        let count = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < u64::MAX as f64)
                .map(|f| f as u64)
        });
        match count.and_then(|n| usize::try_from(n).ok()) {
            Some(n) => Some(n),
            None => {
                self.lossy();
                None
            }
        }
    }

    /// A pair of counts, the tighter of those under the keys and `existing`
    /// (from a nullable branch); both dropped (lossy) when the minimum
    /// exceeds the maximum.
    fn counts(
        &mut self,
        map: &Map<String, Value>,
        (min_key, max_key): (&str, &str),
        existing: (Option<usize>, Option<usize>),
    ) -> (Option<usize>, Option<usize>) {
        let min = match (self.count(map, min_key), existing.0) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let max = match (self.count(map, max_key), existing.1) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (min, max) {
            (Some(a), Some(b)) if a > b => {
                self.lossy();
                (None, None)
            }
            pair => pair,
        }
    }

    fn string_bounds(&mut self, map: &Map<String, Value>, prop: &mut SchemaProp) {
        let existing = (prop.get_min_length(), prop.get_max_length());
        let (min, max) = self.counts(map, ("minLength", "maxLength"), existing);
        if min.is_some() || max.is_some() || prop.bounds.is_some() {
            let bounds = prop.bounds_mut();
            bounds.min_length = min;
            bounds.max_length = max;
        }
        if [
            "pattern",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
        ]
        .iter()
        .any(|k| map.contains_key(*k))
        {
            self.lossy();
        }
    }

    fn array(
        &mut self,
        map: &Map<String, Value>,
        prop: &mut SchemaProp,
        path: &Path<'_>,
        depth: usize,
    ) -> Result<(), SchemaImportError> {
        let existing = (prop.get_min_items(), prop.get_max_items());
        let (min, mut max) = self.counts(map, ("minItems", "maxItems"), existing);
        match map.get("items") {
            None | Some(Value::Bool(true)) => {}
            // No element is valid: only the empty array.
            Some(Value::Bool(false)) => max = Some(0),
            Some(items @ Value::Object(_)) => {
                let (element, nullable) = self.prop(items, &Path::Key("items", path), depth + 1)?;
                prop.items = Some(Box::new(if nullable {
                    // An element may be null, which only Any accepts.
                    self.lossy();
                    SchemaProp::any()
                } else {
                    element
                }));
            }
            // Tuple `items` (draft 4 to 7), or not a schema.
            Some(_) => self.lossy(),
        }
        if min.is_some() || max.is_some() || prop.bounds.is_some() {
            let bounds = prop.bounds_mut();
            bounds.min_items = min;
            bounds.max_items = max;
        }
        let unique = map.get("uniqueItems");
        if unique.is_some_and(|u| u != &Value::Bool(false))
            || [
                "prefixItems",
                "additionalItems",
                "unevaluatedItems",
                "contains",
                "minContains",
                "maxContains",
            ]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            self.lossy();
        }
        Ok(())
    }

    /// The properties of an object schema.
    fn object_spec(
        &mut self,
        map: &Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
    ) -> Result<SchemaSpec, SchemaImportError> {
        let properties_path = Path::Key("properties", path);
        let properties = match map.get("properties") {
            None => None,
            Some(Value::Object(properties)) => Some(properties),
            Some(other) => {
                return Err(error(
                    SchemaImportErrorKind::PropertiesNotAnObject,
                    &properties_path,
                    format!(
                        "must be an object mapping property names to schemas, not {}",
                        brief(other)
                    ),
                ))
            }
        };
        let required_path = Path::Key("required", path);
        let mut required: Vec<&str> = Vec::new();
        match map.get("required") {
            None => {}
            Some(Value::Array(names)) => {
                for (index, name) in names.iter().enumerate() {
                    match name {
                        Value::String(name) => {
                            if !required.contains(&name.as_str()) {
                                required.push(name);
                            }
                        }
                        other => {
                            return Err(error(
                                SchemaImportErrorKind::RequiredNotStrings,
                                &Path::Index(index, &required_path),
                                format!("must be a property name (a string), not {}", brief(other)),
                            ))
                        }
                    }
                }
            }
            Some(other) => {
                return Err(error(
                    SchemaImportErrorKind::RequiredNotStrings,
                    &required_path,
                    format!("must be an array of property names, not {}", brief(other)),
                ))
            }
        }

        let mut spec = SchemaSpec::new();
        match map.get("additionalProperties") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => spec.closed = true,
            // `{}` (with annotations at most) allows anything, as an open object does.
            Some(Value::Object(extra))
                if extra
                    .keys()
                    .all(|k| k == "description" || IGNORED.contains(&k.as_str())) => {}
            // A schema for the other keys: they are not checked.
            Some(_) => self.lossy(),
        }
        if [
            "patternProperties",
            "propertyNames",
            "unevaluatedProperties",
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
        ]
        .iter()
        .any(|k| map.contains_key(*k))
        {
            self.lossy();
        }

        for (name, schema) in properties.into_iter().flatten() {
            let (mut prop, nullable) =
                self.prop(schema, &Path::Key(name, &properties_path), depth + 1)?;
            if required.contains(&name.as_str()) {
                if nullable {
                    // Required but may be null: dsh-tools reads null as absent.
                    self.lossy();
                } else {
                    prop.required = true;
                }
            }
            spec.props.push((name.clone(), prop));
        }
        for name in required {
            if properties.is_none_or(|p| !p.contains_key(name)) {
                // A closed object that requires an undeclared key accepts
                // nothing; an open one accepts any value for it.
                if spec.closed {
                    self.lossy();
                }
                spec.props
                    .push((name.to_owned(), SchemaProp::any().required()));
            }
        }
        spec.changed();
        Ok(spec)
    }
}

/// On an integer property, `2.0` in an enum is the integer 2 (JSON Schema
/// compares numbers by value).
fn whole_as_integer(ty: SchemaType, value: Value) -> Value {
    match (&value, ty) {
        (Value::Number(n), SchemaType::Integer) if exact_int(n).is_none() => {
            match n.as_f64().filter(|f| f.fract() == 0.0).and_then(whole) {
                Some(n) => Value::Number(n),
                None => value,
            }
        }
        _ => value,
    }
}

/// A whole `f64` as an integer `Number` when it fits 64 bits, else as a float.
fn whole(f: f64) -> Option<Number> {
    if f >= -(2f64.powi(63)) && f < 2f64.powi(63) {
        Some(Number::from(f as i64))
    } else if f >= 0.0 && f < 2f64.powi(64) {
        Some(Number::from(f as u64))
    } else {
        Number::from_f64(f)
    }
}

fn from_i128(i: i128) -> Number {
    if let Ok(i) = i64::try_from(i) {
        Number::from(i)
    } else if let Ok(u) = u64::try_from(i) {
        Number::from(u)
    } else {
        // Beyond 64 bits no JSON integer dsh-tools reads is this large anyway;
        // a whole float keeps the bound's meaning.
        Number::from_f64(i as f64).unwrap_or_else(|| Number::from(0))
    }
}

/// The smallest integer `>= n`.
fn ceil(n: &Number) -> Number {
    match exact_int(n) {
        Some(_) => n.clone(),
        None => whole(n.as_f64().unwrap_or(0.0).ceil()).unwrap_or_else(|| n.clone()),
    }
}

/// The largest integer `<= n`.
fn floor(n: &Number) -> Number {
    match exact_int(n) {
        Some(_) => n.clone(),
        None => whole(n.as_f64().unwrap_or(0.0).floor()).unwrap_or_else(|| n.clone()),
    }
}

/// The smallest integer `> n`.
fn floor_plus_one(n: &Number) -> Number {
    match exact_int(n) {
        Some(i) => from_i128(i + 1),
        None => {
            let f = n.as_f64().unwrap_or(0.0);
            whole(f.floor() + 1.0).unwrap_or_else(|| n.clone())
        }
    }
}

/// The largest integer `< n`.
fn ceil_minus_one(n: &Number) -> Number {
    match exact_int(n) {
        Some(i) => from_i128(i - 1),
        None => {
            let f = n.as_f64().unwrap_or(0.0);
            whole(f.ceil() - 1.0).unwrap_or_else(|| n.clone())
        }
    }
}
