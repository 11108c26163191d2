//! Typed tool arguments: the [`ToolArgs`] and [`ArgType`] traits behind
//! `#[derive(ToolArgs)]`.

use crate::error::ToolError;
use crate::schema::{SchemaProp, SchemaSpec};
use crate::validate::{Violation, ViolationKind};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A Rust type that can stand for one tool argument property.
///
/// Implemented for strings, booleans, integers, floats, `Vec<T>`, `Option<T>`,
/// `Box<T>`, string-keyed maps (`HashMap`/`BTreeMap`/`serde_json::Map`), and by
/// `#[derive(ToolArgs)]` for structs (objects) and fieldless enums (string enums).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument",
    label = "unsupported tool argument type",
    note = "supported: String, bool, integers, f32/f64, Vec<T>, Option<T>, Box<T>, string-keyed maps, and types deriving ToolArgs"
)]
pub trait ArgType {
    /// The schema of a value of this type (its `required` flag is set by the field).
    fn arg_prop() -> SchemaProp;

    /// `true` for `Option<T>`: the property may be absent or `null`.
    const OPTIONAL: bool = false;

    /// `true` when serde, reading this type from JSON, accepts exactly the
    /// values [`ArgType::arg_prop`] allows or fewer: so a value serde read
    /// is valid without a schema check. `false` (the safe default) for a type
    /// whose schema adds rules serde does not enforce.
    const SERDE_EXACT: bool = false;
}

/// A struct that is a tool's whole argument object. Derive it:
///
/// ```
/// use dsh_tools::{ToolArgs, Dialect};
/// use serde::Deserialize;
///
/// #[derive(ToolArgs, Deserialize)]
/// struct ReadArgs {
///     /// File to read.
///     path: String,
///     /// First line to return.
///     offset: Option<u64>,
/// }
///
/// let schema = ReadArgs::schema().to_json_schema(Dialect::Mcp);
/// assert_eq!(schema["required"], serde_json::json!(["path"]));
/// let args = ReadArgs::from_value(serde_json::json!({"path": "a.txt"})).unwrap();
/// assert_eq!(args.path, "a.txt");
/// ```
pub trait ToolArgs: DeserializeOwned {
    /// The argument schema: one property per field, named as serde reads it.
    fn schema() -> SchemaSpec;

    /// `true` when serde, reading `Self` from a JSON object, accepts only
    /// arguments the schema accepts: every field's type is checked by serde
    /// exactly, and no field adds a rule serde does not enforce (a schema
    /// default, an enum on a plain string, a bound beyond the type's range,
    /// an `alias`). Then a typed tool reads its arguments straight from the
    /// model's text, and validates (for every violation, with paths) only
    /// when serde refuses them. The derive works it out; a hand-written
    /// impl keeps the safe default `false`.
    const SERDE_EXACT: bool = false;

    /// Validates `value` against [`ToolArgs::schema`] and turns it into `Self`.
    ///
    /// Builds the schema on every call; hold one with [`decode_args`] on hot paths.
    ///
    /// # Errors
    /// `INVALID_ARGS` with every violation, or with the one value serde could not
    /// read (e.g. `300` for a `u8`).
    fn from_value(value: Value) -> Result<Self, ToolError> {
        decode_args(&Self::schema(), value)
    }
}

/// Validates `value` against `spec`, fills in defaults, and deserialises it.
///
/// Before deserialising, `null` for an optional property is removed (so a
/// `#[serde(default)]` field gets its default) and an absent property with a
/// schema `default` gets that value.
///
/// # Errors
/// `INVALID_ARGS`: every schema violation, or else the first value serde could not read.
pub fn decode_args<T: DeserializeOwned>(
    spec: &SchemaSpec,
    mut value: Value,
) -> Result<T, ToolError> {
    let (violations, fill) = spec.validate_for_decode(&value);
    if !violations.is_empty() {
        return Err(ToolError::invalid_args(violations));
    }
    if fill {
        spec.normalize(&mut value);
    }
    // Fast path without path tracking; on failure, deserialise again to find where.
    if let Ok(args) = T::deserialize(&value) {
        return Ok(args);
    }
    serde_path_to_error::deserialize::<_, T>(&value).map_err(|err| {
        let path = err.path().to_string();
        let path = if path == "." {
            "arguments".to_owned()
        } else {
            path
        };
        let tail = format!("could not be read: {}", err.inner());
        ToolError::invalid_args(vec![Violation::new(
            ViolationKind::Unreadable,
            &path,
            &tail,
        )])
    })
}

macro_rules! arg_type {
    ($ctor:ident: $($t:ty),*) => {$(
        impl ArgType for $t {
            fn arg_prop() -> SchemaProp {
                SchemaProp::$ctor()
            }
            const SERDE_EXACT: bool = true;
        }
    )*};
}

arg_type!(string: String, std::path::PathBuf);
arg_type!(boolean: bool);
arg_type!(integer: i64, isize);

/// serde reads integers beyond `u64` into an `i128`/`u128` that the schema's
/// `integer` (what JSON parsers keep exact) does not cover, so these are
/// checked against the schema first.
impl ArgType for i128 {
    fn arg_prop() -> SchemaProp {
        SchemaProp::integer()
    }
}
arg_type!(number: f32, f64);

/// Integers whose whole range is worth telling the model: a value outside it
/// is then a schema violation (`"n" must be at most 255`) before serde runs.
macro_rules! arg_type_ranged {
    ($($t:ty),*) => {$(
        impl ArgType for $t {
            fn arg_prop() -> SchemaProp {
                SchemaProp::integer().minimum(<$t>::MIN).maximum(<$t>::MAX)
            }
            // serde enforces exactly the type's range.
            const SERDE_EXACT: bool = true;
        }
    )*};
}

arg_type_ranged!(i8, i16, i32, u8, u16, u32);

/// Wide unsigned integers: only the sign needs saying (`"n" must be at least 0`);
/// every other JSON integer a model writes fits.
macro_rules! arg_type_unsigned {
    ($($t:ty),*) => {$(
        impl ArgType for $t {
            fn arg_prop() -> SchemaProp {
                SchemaProp::integer().minimum(0u64)
            }
            const SERDE_EXACT: bool = true;
        }
    )*};
}

arg_type_unsigned!(u64, usize);

impl ArgType for u128 {
    fn arg_prop() -> SchemaProp {
        SchemaProp::integer().minimum(0u64)
    }
}

impl ArgType for char {
    /// A string of exactly one character.
    fn arg_prop() -> SchemaProp {
        SchemaProp::string().min_length(1).max_length(1)
    }
    const SERDE_EXACT: bool = true;
}

/// Compile-time checks behind the bound attributes of `#[derive(ToolArgs)]`:
/// a bound on a field whose type it cannot apply to is a type error that
/// names the field type, not a schema refused at registration.
///
/// The traits are public but unnameable outside the crate (sealed).
mod bound_fields {
    /// Field types `minimum` and `maximum` apply to.
    #[diagnostic::on_unimplemented(
        message = "`#[tool(minimum/maximum)]` needs a number field, but `{Self}` is not a number",
        label = "not an integer or float, nor an `Option`, `Box` or `Vec` of one",
        note = "`minimum` and `maximum` apply to integers and floats; on a `Vec` they apply to its elements"
    )]
    pub trait NumberField {}

    /// Field types a `minimum` or `maximum` with a fraction applies to.
    #[diagnostic::on_unimplemented(
        message = "a `#[tool(minimum/maximum)]` with a fraction needs a float field, but `{Self}` is not a float",
        label = "not `f32` or `f64`, nor an `Option`, `Box` or `Vec` of one",
        note = "an integer field takes whole-number bounds, e.g. `#[tool(minimum = 1)]`"
    )]
    pub trait FloatField {}

    /// Field types `min_length` and `max_length` apply to.
    #[diagnostic::on_unimplemented(
        message = "`#[tool(min_length/max_length)]` needs a string field, but `{Self}` is not a string",
        label = "not a `String`, `char` or `PathBuf`, nor an `Option`, `Box` or `Vec` of one",
        note = "`min_length` and `max_length` count characters; on a `Vec` they apply to its elements, use `min_items`/`max_items` for the array"
    )]
    pub trait StringField {}

    /// Field types `min_items` and `max_items` apply to.
    #[diagnostic::on_unimplemented(
        message = "`#[tool(min_items/max_items)]` needs a `Vec` field, but `{Self}` is not one",
        label = "not a `Vec`, nor an `Option` or `Box` of one",
        note = "`min_items` and `max_items` bound the number of elements of an array"
    )]
    pub trait ArrayField {}

    macro_rules! fields {
        ($trait:ident: $($t:ty),*) => {$(
            impl $trait for $t {}
        )*};
    }

    fields!(NumberField: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);
    fields!(FloatField: f32, f64);
    fields!(StringField: String, char, std::path::PathBuf);

    macro_rules! through_wrappers {
        ($($trait:ident),*) => {$(
            impl<T: $trait> $trait for Option<T> {}
            impl<T: $trait + ?Sized> $trait for Box<T> {}
            impl<T: $trait> $trait for Vec<T> {}
        )*};
    }

    through_wrappers!(NumberField, FloatField, StringField);

    impl<T> ArrayField for Vec<T> {}
    impl<T: ArrayField> ArrayField for Option<T> {}
    impl<T: ArrayField + ?Sized> ArrayField for Box<T> {}
}

/// Type assertions for code generated by `#[derive(ToolArgs)]`: each returns
/// the property unchanged and compiles only for field types the bound fits.
/// Not a public API.
#[doc(hidden)]
impl SchemaProp {
    pub fn __number_field<T: bound_fields::NumberField + ?Sized>(self) -> Self {
        self
    }

    pub fn __float_field<T: bound_fields::FloatField + ?Sized>(self) -> Self {
        self
    }

    pub fn __string_field<T: bound_fields::StringField + ?Sized>(self) -> Self {
        self
    }

    pub fn __array_field<T: bound_fields::ArrayField + ?Sized>(self) -> Self {
        self
    }
}

impl<T: ArgType> ArgType for Option<T> {
    fn arg_prop() -> SchemaProp {
        T::arg_prop()
    }
    const OPTIONAL: bool = true;
    // `null` and absence mean `None` to serde and "absent" to the schema.
    const SERDE_EXACT: bool = T::SERDE_EXACT;
}

impl<T: ArgType> ArgType for Box<T> {
    fn arg_prop() -> SchemaProp {
        T::arg_prop()
    }
    const OPTIONAL: bool = T::OPTIONAL;
    const SERDE_EXACT: bool = T::SERDE_EXACT;
}

impl<T: ArgType> ArgType for Vec<T> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::array(T::arg_prop())
    }
    const SERDE_EXACT: bool = T::SERDE_EXACT;
}

impl<V> ArgType for std::collections::HashMap<String, V> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::any_object()
    }
    // Any object fits the schema; serde also checks the values.
    const SERDE_EXACT: bool = true;
}

impl<V> ArgType for std::collections::BTreeMap<String, V> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::any_object()
    }
    // Any object fits the schema; serde also checks the values.
    const SERDE_EXACT: bool = true;
}

impl ArgType for serde_json::Map<String, Value> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::any_object()
    }
    // Any object fits the schema; serde also checks the values.
    const SERDE_EXACT: bool = true;
}
