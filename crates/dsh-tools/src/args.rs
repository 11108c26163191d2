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
        }
    )*};
}

arg_type!(string: String, char, std::path::PathBuf);
arg_type!(boolean: bool);
arg_type!(integer: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
arg_type!(number: f32, f64);

impl<T: ArgType> ArgType for Option<T> {
    fn arg_prop() -> SchemaProp {
        T::arg_prop()
    }
    const OPTIONAL: bool = true;
}

impl<T: ArgType> ArgType for Box<T> {
    fn arg_prop() -> SchemaProp {
        T::arg_prop()
    }
    const OPTIONAL: bool = T::OPTIONAL;
}

impl<T: ArgType> ArgType for Vec<T> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::array(T::arg_prop())
    }
}

impl<V> ArgType for std::collections::HashMap<String, V> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::any_object()
    }
}

impl<V> ArgType for std::collections::BTreeMap<String, V> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::any_object()
    }
}

impl ArgType for serde_json::Map<String, Value> {
    fn arg_prop() -> SchemaProp {
        SchemaProp::any_object()
    }
}
