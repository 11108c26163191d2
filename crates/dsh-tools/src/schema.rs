//! The runtime schema DSL: [`SchemaSpec`], [`SchemaProp`], [`SchemaType`].
//!
//! A spec is an ordered list of named properties. Declaration order is kept
//! everywhere: in the emitted JSON Schema (`properties` and `required`), and
//! in the order validation reports violations.
//!
//! ```
//! use dsh_tools::{SchemaProp, SchemaSpec, Dialect};
//!
//! let spec = SchemaSpec::new()
//!     .prop("path", SchemaProp::string().required().description("File to read"))
//!     .prop("mode", SchemaProp::string().one_of(["text", "bytes"]).default_value("text"));
//! let schema = spec.to_json_schema(Dialect::Mcp);
//! assert_eq!(schema["required"], serde_json::json!(["path"]));
//! ```
//!
//! Numbers, strings and arrays can be bounded ([`SchemaProp::minimum`],
//! [`SchemaProp::max_length`], [`SchemaProp::min_items`], …), and a spec can be
//! made from a raw JSON Schema ([`SchemaSpec::from_json_schema`]), e.g. the
//! `inputSchema` of another MCP server's tool.

use serde_json::{json, Map, Number, Value};
use std::fmt;
use std::sync::OnceLock;

/// The JSON type of one property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaType {
    /// A JSON string.
    String,
    /// Any finite JSON number.
    Number,
    /// A JSON number written without fraction or exponent that fits `i64` or `u64`.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A JSON object, optionally with declared `properties`.
    Object,
    /// A JSON array, optionally with an `items` schema.
    Array,
    /// Any JSON value: what a property becomes when its type cannot be told or
    /// expressed (see [`SchemaSpec::from_json_schema`]). It is emitted as `{}`
    /// (plus its description, enum and default), takes no bounds, and OpenAI
    /// strict mode cannot express it. As for every type, `null` for an
    /// optional property counts as absent, and a required one must not be `null`.
    Any,
}

impl SchemaType {
    /// The JSON Schema name of the type (`"string"`, `"integer"`, …), or
    /// `"any"` for [`SchemaType::Any`], which JSON Schema writes as no `type` at all.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaType::String => "string",
            SchemaType::Number => "number",
            SchemaType::Integer => "integer",
            SchemaType::Boolean => "boolean",
            SchemaType::Object => "object",
            SchemaType::Array => "array",
            SchemaType::Any => "any",
        }
    }

    /// The tail of a type violation: `must be a string`, `must be an integer`.
    pub fn must_be(self) -> &'static str {
        match self {
            SchemaType::String => "must be a string",
            SchemaType::Number => "must be a number",
            SchemaType::Integer => "must be an integer",
            SchemaType::Boolean => "must be a boolean",
            SchemaType::Object => "must be an object",
            SchemaType::Array => "must be an array",
            SchemaType::Any => "may be any value",
        }
    }

    /// The article + name used in messages: `"p" must be a string`, `… an integer`.
    pub(crate) fn with_article(self) -> &'static str {
        match self {
            SchemaType::String => "a string",
            SchemaType::Number => "a number",
            SchemaType::Integer => "an integer",
            SchemaType::Boolean => "a boolean",
            SchemaType::Object => "an object",
            SchemaType::Array => "an array",
            SchemaType::Any => "any value",
        }
    }

    /// Whether `minimum` and `maximum` apply to values of this type.
    pub(crate) fn is_numeric(self) -> bool {
        matches!(self, SchemaType::Number | SchemaType::Integer)
    }
}

impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One property: its type, whether it is required, and what the model is told about it.
///
/// Build one with the constructors ([`SchemaProp::string`], [`SchemaProp::object`], …)
/// and the chained setters.
#[derive(Debug, Clone)]
pub struct SchemaProp {
    pub(crate) ty: SchemaType,
    pub(crate) required: bool,
    pub(crate) description: Option<String>,
    pub(crate) enum_values: Option<Vec<Value>>,
    /// `must be one of [...]`, rendered on the first violation and kept.
    pub(crate) enum_message: OnceLock<String>,
    pub(crate) default: Option<Value>,
    pub(crate) properties: Option<SchemaSpec>,
    pub(crate) items: Option<Box<SchemaProp>>,
    /// Boxed so that a property without bounds stays small and the valid path
    /// of validation tests one pointer.
    pub(crate) bounds: Option<Box<Bounds>>,
}

/// The bounds of a property. Each applies to one kind of value: `minimum` and
/// `maximum` to numbers, the lengths to strings (in Unicode scalar values),
/// the item counts to arrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Bounds {
    pub(crate) minimum: Option<Number>,
    pub(crate) maximum: Option<Number>,
    pub(crate) min_length: Option<usize>,
    pub(crate) max_length: Option<usize>,
    pub(crate) min_items: Option<usize>,
    pub(crate) max_items: Option<usize>,
    /// `"minimum"` or `"maximum"` when it was given a float that is not
    /// finite: kept so that [`SchemaSpec::check`] can refuse it.
    pub(crate) non_finite: Option<&'static str>,
}

/// A number that [`SchemaProp::minimum`] and [`SchemaProp::maximum`] accept:
/// a Rust integer of up to 64 bits, `f32`, `f64`, or a [`serde_json::Number`].
///
/// Integers are kept exactly: a `u64` or `i64` bound is never rounded through `f64`.
pub trait NumberBound {
    /// The bound as a JSON number, or `None` for a float that is not finite
    /// (which [`SchemaSpec::check`] then refuses).
    fn into_number(self) -> Option<Number>;
}

macro_rules! number_bound_int {
    ($($t:ty),*) => {$(
        impl NumberBound for $t {
            fn into_number(self) -> Option<Number> {
                Some(Number::from(self))
            }
        }
    )*};
}

number_bound_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl NumberBound for f64 {
    fn into_number(self) -> Option<Number> {
        Number::from_f64(self)
    }
}

impl NumberBound for f32 {
    fn into_number(self) -> Option<Number> {
        Number::from_f64(f64::from(self))
    }
}

impl NumberBound for Number {
    fn into_number(self) -> Option<Number> {
        Some(self)
    }
}

impl PartialEq for SchemaProp {
    fn eq(&self, other: &Self) -> bool {
        // `enum_message` is a cache, not part of the value.
        self.ty == other.ty
            && self.required == other.required
            && self.description == other.description
            && self.enum_values == other.enum_values
            && self.default == other.default
            && self.properties == other.properties
            && self.items == other.items
            && self.bounds == other.bounds
    }
}

impl SchemaProp {
    /// A property of the given type, optional, with nothing else set.
    pub fn of_type(ty: SchemaType) -> Self {
        SchemaProp {
            ty,
            required: false,
            description: None,
            enum_values: None,
            enum_message: OnceLock::new(),
            default: None,
            properties: None,
            items: None,
            bounds: None,
        }
    }

    /// A property that accepts any JSON value ([`SchemaType::Any`]), emitted as `{}`.
    pub fn any() -> Self {
        Self::of_type(SchemaType::Any)
    }

    /// A string property.
    pub fn string() -> Self {
        Self::of_type(SchemaType::String)
    }

    /// A number property (any finite JSON number).
    pub fn number() -> Self {
        Self::of_type(SchemaType::Number)
    }

    /// An integer property.
    pub fn integer() -> Self {
        Self::of_type(SchemaType::Integer)
    }

    /// A boolean property.
    pub fn boolean() -> Self {
        Self::of_type(SchemaType::Boolean)
    }

    /// An object property with declared nested properties. Extra keys are allowed
    /// unless the object is [closed](SchemaProp::closed).
    pub fn object(properties: SchemaSpec) -> Self {
        SchemaProp {
            properties: Some(properties),
            ..Self::of_type(SchemaType::Object)
        }
    }

    /// An object property with no declared properties: any JSON object.
    pub fn any_object() -> Self {
        Self::of_type(SchemaType::Object)
    }

    /// An array property whose elements all follow `items`.
    pub fn array(items: SchemaProp) -> Self {
        SchemaProp {
            items: Some(Box::new(items)),
            ..Self::of_type(SchemaType::Array)
        }
    }

    /// An array property whose elements are not described.
    pub fn any_array() -> Self {
        Self::of_type(SchemaType::Array)
    }

    /// Marks the property required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Sets whether the property is required.
    pub fn set_required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Sets the description shown to the model. An empty description is not emitted.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Restricts the property to these string values.
    ///
    /// On an array with an `items` schema, the restriction applies to its elements
    /// (so `#[tool(enum = [...])]` works on a `Vec<String>` field).
    pub fn one_of<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if self.ty == SchemaType::Array {
            if let Some(items) = self.items.take() {
                self.items = Some(Box::new(items.one_of(values)));
                return self;
            }
        }
        self.enum_values = Some(
            values
                .into_iter()
                .map(|v| Value::String(v.into()))
                .collect(),
        );
        self.enum_message = OnceLock::new();
        self
    }

    /// Restricts the property to these JSON values (checked for every type).
    pub fn enum_values(mut self, values: impl IntoIterator<Item = Value>) -> Self {
        self.enum_values = Some(values.into_iter().collect());
        self.enum_message = OnceLock::new();
        self
    }

    /// Sets the default value advertised to the model. Typed tools fill it in
    /// when the property is absent (see [`crate::ToolArgs`]).
    pub fn default_value(mut self, value: impl Into<Value>) -> Self {
        self.default = Some(value.into());
        self
    }

    /// Closes an object: keys that are not declared are violations, and the
    /// emitted schema says `additionalProperties: false`.
    ///
    /// Has no effect on other types.
    pub fn closed(mut self) -> Self {
        if self.ty == SchemaType::Object {
            self.properties.get_or_insert_with(SchemaSpec::new).closed = true;
        }
        self
    }

    /// The smallest value a number or integer may take (inclusive).
    ///
    /// Validation says `"p" must be at least 0`. On an array with an `items`
    /// schema the bound applies to its elements (like [`SchemaProp::one_of`]), so
    /// `#[tool(minimum = 1)]` works on a `Vec<u32>` field. On any other type
    /// [`SchemaSpec::check`] refuses it, as it refuses a fractional bound on an
    /// integer, a float that is not finite, and a minimum above the maximum.
    pub fn minimum(self, value: impl NumberBound) -> Self {
        let value = value.into_number();
        self.on_elements(|bounds| bounds.set_number("minimum", value, |b| &mut b.minimum))
    }

    /// The largest value a number or integer may take (inclusive):
    /// `"p" must be at most 10`. Like [`SchemaProp::minimum`] otherwise.
    pub fn maximum(self, value: impl NumberBound) -> Self {
        let value = value.into_number();
        self.on_elements(|bounds| bounds.set_number("maximum", value, |b| &mut b.maximum))
    }

    /// The fewest characters (Unicode scalar values, not bytes) a string may have:
    /// `"p" must be at least 3 characters long`. On an array with an `items`
    /// schema it applies to the elements.
    pub fn min_length(self, chars: usize) -> Self {
        self.on_elements(|bounds| bounds.min_length = Some(chars))
    }

    /// The most characters (Unicode scalar values) a string may have:
    /// `"p" must be at most 5 characters long`. On an array with an `items`
    /// schema it applies to the elements.
    pub fn max_length(self, chars: usize) -> Self {
        self.on_elements(|bounds| bounds.max_length = Some(chars))
    }

    /// The fewest elements an array may have: `"p" must have at least 1 item`.
    /// Always applies to the array itself, never to its elements.
    pub fn min_items(mut self, items: usize) -> Self {
        self.bounds_mut().min_items = Some(items);
        self
    }

    /// The most elements an array may have: `"p" must have at most 10 items`.
    pub fn max_items(mut self, items: usize) -> Self {
        self.bounds_mut().max_items = Some(items);
        self
    }

    pub(crate) fn bounds_mut(&mut self) -> &mut Bounds {
        self.bounds.get_or_insert_with(Box::default)
    }

    /// Applies `set` to the innermost element schema of nested arrays, or to
    /// the property itself.
    fn on_elements(mut self, set: impl FnOnce(&mut Bounds)) -> Self {
        if self.ty == SchemaType::Array {
            if let Some(items) = self.items.take() {
                self.items = Some(Box::new(items.on_elements(set)));
                return self;
            }
        }
        set(self.bounds_mut());
        self
    }

    /// The property's type.
    pub fn ty(&self) -> SchemaType {
        self.ty
    }

    /// Whether the property is required.
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// The description, if any.
    pub fn get_description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The allowed values, if restricted.
    pub fn get_enum(&self) -> Option<&[Value]> {
        self.enum_values.as_deref()
    }

    /// The default value, if any.
    pub fn get_default(&self) -> Option<&Value> {
        self.default.as_ref()
    }

    /// The nested properties of an object.
    pub fn get_properties(&self) -> Option<&SchemaSpec> {
        self.properties.as_ref()
    }

    /// The element schema of an array.
    pub fn get_items(&self) -> Option<&SchemaProp> {
        self.items.as_deref()
    }

    /// The inclusive lower bound of a number, if any.
    pub fn get_minimum(&self) -> Option<&Number> {
        self.bounds.as_ref()?.minimum.as_ref()
    }

    /// The inclusive upper bound of a number, if any.
    pub fn get_maximum(&self) -> Option<&Number> {
        self.bounds.as_ref()?.maximum.as_ref()
    }

    /// The fewest characters of a string, if bounded.
    pub fn get_min_length(&self) -> Option<usize> {
        self.bounds.as_ref()?.min_length
    }

    /// The most characters of a string, if bounded.
    pub fn get_max_length(&self) -> Option<usize> {
        self.bounds.as_ref()?.max_length
    }

    /// The fewest elements of an array, if bounded.
    pub fn get_min_items(&self) -> Option<usize> {
        self.bounds.as_ref()?.min_items
    }

    /// The most elements of an array, if bounded.
    pub fn get_max_items(&self) -> Option<usize> {
        self.bounds.as_ref()?.max_items
    }
}

impl Bounds {
    fn set_number(
        &mut self,
        name: &'static str,
        value: Option<Number>,
        slot: impl FnOnce(&mut Bounds) -> &mut Option<Number>,
    ) {
        match value {
            Some(number) => {
                if self.non_finite == Some(name) {
                    self.non_finite = None;
                }
                *slot(self) = Some(number);
            }
            None => {
                *slot(self) = None;
                self.non_finite = Some(name);
            }
        }
    }
}

/// An ordered set of named properties: the parameters of a tool, or the
/// properties of a nested object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchemaSpec {
    pub(crate) props: Vec<(String, SchemaProp)>,
    pub(crate) closed: bool,
}

impl SchemaSpec {
    /// An empty, open spec.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a property at the end. A property of the same name is replaced in place,
    /// keeping its position.
    pub fn prop(mut self, name: impl Into<String>, prop: SchemaProp) -> Self {
        self.insert(name, prop);
        self
    }

    /// Adds a property at the end, or replaces one of the same name in place.
    pub fn insert(&mut self, name: impl Into<String>, prop: SchemaProp) {
        let name = name.into();
        match self.props.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = prop,
            None => self.props.push((name, prop)),
        }
    }

    /// Closes the spec: undeclared keys become violations.
    pub fn closed(mut self) -> Self {
        self.closed = true;
        self
    }

    /// Whether undeclared keys are violations.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The property of that name.
    pub fn get(&self, name: &str) -> Option<&SchemaProp> {
        self.props.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }

    /// The properties in declaration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &SchemaProp)> {
        self.props.iter().map(|(n, p)| (n.as_str(), p))
    }

    /// The number of properties.
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// Whether there are no properties.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// Whether OpenAI strict mode can express the spec: it cannot express a
    /// free-form object ([`SchemaProp::any_object`]), an array without `items`,
    /// or a property of any type ([`SchemaProp::any`]).
    pub fn supports_strict(&self) -> bool {
        fn prop_ok(prop: &SchemaProp) -> bool {
            match prop.ty {
                SchemaType::Object => prop
                    .properties
                    .as_ref()
                    .is_some_and(SchemaSpec::supports_strict),
                SchemaType::Array => prop.items.as_deref().is_some_and(prop_ok),
                SchemaType::Any => false,
                _ => true,
            }
        }
        self.props.iter().all(|(_, p)| prop_ok(p))
    }

    /// The spec as JSON Schema for the given provider dialect.
    ///
    /// The output is compact: root `{"type":"object","properties":…}`,
    /// `required` only when non-empty and in declaration order, `description`
    /// only when non-empty, and none of `$schema`, `$ref`, `$defs`, `title`, `format`.
    pub fn to_json_schema(&self, dialect: Dialect) -> Value {
        object_schema(self, dialect)
    }

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
        import::root(schema)
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

/// Which provider's flavour of JSON Schema to emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// Plain, compact JSON Schema, as MCP carries it. The default.
    #[default]
    Mcp,
    /// Anthropic's `input_schema`: the same as [`Dialect::Mcp`].
    Anthropic,
    /// OpenAI function `parameters` without strict mode: the same as [`Dialect::Mcp`].
    OpenAi,
    /// OpenAI strict mode: every object closed, every property in `required`,
    /// optional properties typed `[T, "null"]`, no `default`, `minLength` or
    /// `maxLength` (they move into the description: `Default: 3.`, `At least 1 character.`).
    OpenAiStrict,
    /// The subset Gemini accepts: no `additionalProperties`, `enum` only on strings
    /// (other enums move into the description), optional via absence from `required`.
    Gemini,
}

impl Dialect {
    /// Every dialect, in a stable order.
    pub const ALL: [Dialect; 5] = [
        Dialect::Mcp,
        Dialect::Anthropic,
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::Gemini,
    ];

    /// The dialect's name as the command line spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Mcp => "mcp",
            Dialect::Anthropic => "anthropic",
            Dialect::OpenAi => "openai",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown dialect name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown schema dialect \"{0}\" (expected one of mcp, openai, openai-strict, anthropic, gemini)")]
pub struct UnknownDialect(pub String);

impl std::str::FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

fn object_schema(spec: &SchemaSpec, dialect: Dialect) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, prop) in &spec.props {
        let optional = !prop.required;
        properties.insert(name.clone(), prop_schema(prop, dialect, optional));
        if prop.required || dialect == Dialect::OpenAiStrict {
            required.push(Value::String(name.clone()));
        }
    }
    // Gemini rejects an empty `properties` on an object.
    if !(properties.is_empty() && dialect == Dialect::Gemini) {
        out.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    let closed = match dialect {
        Dialect::OpenAiStrict => true,
        Dialect::Gemini => false,
        _ => spec.closed,
    };
    if closed {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

fn prop_schema(prop: &SchemaProp, dialect: Dialect, optional: bool) -> Value {
    let mut out = match (prop.ty, &prop.properties) {
        (SchemaType::Object, Some(spec)) => object_schema(spec, dialect),
        (SchemaType::Object, None) if dialect == Dialect::OpenAiStrict => {
            object_schema(&SchemaSpec::new(), dialect)
        }
        // JSON Schema says "any value" by saying nothing.
        (SchemaType::Any, _) => Value::Object(Map::new()),
        _ => {
            let mut m = Map::new();
            m.insert("type".into(), json!(prop.ty.as_str()));
            Value::Object(m)
        }
    };
    let Value::Object(map) = &mut out else {
        unreachable!("schemas are built as objects")
    };
    let strict = dialect == Dialect::OpenAiStrict;
    let nullable = strict && optional;
    if nullable && prop.ty != SchemaType::Any {
        map.insert("type".into(), json!([prop.ty.as_str(), "null"]));
    }

    let mut description = prop.description.clone().unwrap_or_default();
    let mut note = |extra: String| {
        if !description.is_empty() {
            if !description.ends_with(['.', '!', '?']) {
                description.push('.');
            }
            description.push(' ');
        }
        description.push_str(&extra);
    };
    let mut enum_out = None;
    if let Some(values) = &prop.enum_values {
        let all_strings = values.iter().all(Value::is_string);
        if dialect == Dialect::Gemini && !(prop.ty == SchemaType::String && all_strings) {
            note(format!("One of: {}.", Value::Array(values.clone())));
        } else {
            let mut values = values.clone();
            if nullable && !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
            enum_out = Some(Value::Array(values));
        }
    }
    let mut default_out = None;
    if let Some(default) = &prop.default {
        if strict {
            note(format!("Default: {default}."));
        } else {
            default_out = Some(default.clone());
        }
    }
    let bounds = prop.bounds.as_deref();
    if let (true, Some(bounds)) = (strict, bounds) {
        // Strict mode refuses `minLength` and `maxLength`; the model still
        // needs to know, so they are said in words.
        match (bounds.min_length, bounds.max_length) {
            (Some(min), Some(max)) if min == max => {
                note(format!("Exactly {}.", characters(min)));
            }
            (min, max) => {
                if let Some(min) = min {
                    note(format!("At least {}.", characters(min)));
                }
                if let Some(max) = max {
                    note(format!("At most {}.", characters(max)));
                }
            }
        }
    }
    // Key order: type, description, enum, default, the bounds, then nested keys.
    let mut ordered = Map::new();
    if let Some(ty) = map.shift_remove("type") {
        ordered.insert("type".into(), ty);
    }
    if !description.is_empty() {
        ordered.insert("description".into(), Value::String(description));
    }
    if let Some(values) = enum_out {
        ordered.insert("enum".into(), values);
    }
    if let Some(default) = default_out {
        ordered.insert("default".into(), default);
    }
    if let Some(bounds) = bounds {
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                ordered.insert(key.into(), value);
            }
        };
        put("minimum", bounds.minimum.clone().map(Value::Number));
        put("maximum", bounds.maximum.clone().map(Value::Number));
        if !strict {
            put("minLength", bounds.min_length.map(Value::from));
            put("maxLength", bounds.max_length.map(Value::from));
        }
        put("minItems", bounds.min_items.map(Value::from));
        put("maxItems", bounds.max_items.map(Value::from));
    }
    ordered.extend(std::mem::take(map));
    if let Some(items) = &prop.items {
        // An element is never absent, so it is not nullable.
        ordered.insert("items".into(), prop_schema(items, dialect, false));
    }
    Value::Object(ordered)
}

/// `1 character`, `5 characters`.
fn characters(n: usize) -> String {
    if n == 1 {
        "1 character".to_owned()
    } else {
        format!("{n} characters")
    }
}

/// [`SchemaSpec::from_json_schema`]: a raw JSON Schema read into the DSL.
///
/// Every function keeps one promise: what it returns accepts at least what
/// the schema accepts. Whatever cannot be said exactly calls
/// [`Import::lossy`].
mod import {
    use super::{
        ImportedSchema, SchemaImportError, SchemaImportErrorKind, SchemaProp, SchemaSpec,
        SchemaType,
    };
    use crate::validate::{compare_numbers, exact_int, prop_accepts, type_matches};
    use serde_json::{Map, Number, Value};
    use std::cmp::Ordering;
    use std::fmt::Write as _;

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

    pub(super) fn root(schema: &Value) -> Result<ImportedSchema, SchemaImportError> {
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
            None => return Err(error(
                SchemaImportErrorKind::NotAnObjectSchema,
                &path,
                "must be an object schema, but has neither \"type\": \"object\" nor \"properties\""
                    .to_owned(),
            )),
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
        let mut add = |name: &Value, path: &Path<'_>| match name.as_str().map(|n| (n, type_name(n)))
        {
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
            let (min_exclusive, max_exclusive) =
                (flag("exclusiveMinimum"), flag("exclusiveMaximum"));
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
                    let (element, nullable) =
                        self.prop(items, &Path::Key("items", path), depth + 1)?;
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
                                    format!(
                                        "must be a property name (a string), not {}",
                                        brief(other)
                                    ),
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
}
