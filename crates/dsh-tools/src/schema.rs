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
            let spec = self.properties.get_or_insert_with(SchemaSpec::new);
            spec.changed();
            spec.closed = true;
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
#[derive(Clone, Default)]
pub struct SchemaSpec {
    pub(crate) props: Vec<(String, SchemaProp)>,
    pub(crate) closed: bool,
    /// What validation's valid path reads instead of `props`, built on first
    /// use from `props` and `closed`: every change to either resets it
    /// ([`SchemaSpec::changed`]).
    pub(crate) plan: OnceLock<Option<crate::validate::Plan>>,
}

impl PartialEq for SchemaSpec {
    fn eq(&self, other: &Self) -> bool {
        // `plan` is a cache, not part of the value.
        self.props == other.props && self.closed == other.closed
    }
}

impl fmt::Debug for SchemaSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaSpec")
            .field("props", &self.props)
            .field("closed", &self.closed)
            .finish()
    }
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
        self.changed();
        let name = name.into();
        match self.props.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = prop,
            None => self.props.push((name, prop)),
        }
    }

    /// Closes the spec: undeclared keys become violations.
    pub fn closed(mut self) -> Self {
        self.changed();
        self.closed = true;
        self
    }

    /// Drops the validation plan: `props` or `closed` is about to change.
    pub(crate) fn changed(&mut self) {
        self.plan = OnceLock::new();
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
