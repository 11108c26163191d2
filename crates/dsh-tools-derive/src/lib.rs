//! `#[derive(ToolArgs)]` for [dsh-tools](https://docs.rs/dsh-tools): an argument
//! struct's fields become a tool's typed argument schema.
//!
//! Use it through `dsh_tools::ToolArgs`, next to serde's `Deserialize`. The
//! derive reads serde's attributes so the schema always describes exactly what
//! serde reads: property names follow `rename` / `rename_all`, skipped fields
//! are left out, `default` makes a property optional, `deny_unknown_fields`
//! closes the object, and attributes whose input shape a schema could not
//! describe (`flatten`, `with`, `tag`, `untagged`, …) are compile errors.
//!
//! - On a struct with named fields it implements `ToolArgs` (the schema: one
//!   property per field, in declaration order) and `ArgType` (the struct as a
//!   nested object).
//! - On a fieldless enum it implements `ArgType`: a string restricted to the
//!   variant names as serde reads them.
//!
//! Doc comments become descriptions. `#[tool(...)]` adds what serde cannot say:
//!
//! | key | where | effect |
//! |-----|-------|--------|
//! | `description = "..."` | field, enum | replaces the doc comment |
//! | `default = LIT` | field | advertised `default`, filled in when absent; makes the field optional |
//! | `enum = ["a", "b"]` | field | restricts the value to these strings |
//! | `minimum = N`, `maximum = N` | number field | inclusive range (`"p" must be at least 0`) |
//! | `min_length = N`, `max_length = N` | string field | length in characters |
//! | `min_items = N`, `max_items = N` | `Vec` field | number of elements |
//!
//! `LIT` is a string, number or boolean literal, a negative number, or an
//! array of those. A `minimum`/`maximum` is a number literal (a fraction
//! only on a float field); a length or count is a non-negative integer literal.
//!
//! A bound on `Option<T>` or `Box<T>` applies to `T`. On a `Vec<T>`,
//! `min_items`/`max_items` bound the array and the other bounds apply to
//! its elements. A bound on a field type it cannot apply to (`min_length` on a
//! `u32`) is a type error at the field. Integer fields already carry the
//! range of their Rust type (`u8`: 0 to 255, `u64`: at least 0), so a
//! model's `-5` for a `u64` is a schema violation, not a serde error.
//!
//! All problems in one input are reported together, each at its own span.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod attr;
mod case;
mod ctxt;
mod expand;
mod literal;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `dsh_tools::ToolArgs` and `dsh_tools::ArgType` for a struct with
/// named fields, or `dsh_tools::ArgType` for a fieldless enum. See the crate
/// documentation for the attributes it reads.
#[proc_macro_derive(ToolArgs, attributes(tool))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
