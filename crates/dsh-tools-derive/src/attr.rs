//! Reading `#[serde(...)]`, `#[tool(...)]` and doc attributes.
//!
//! Only the serde attributes that change what serde *reads* matter here:
//! names (`rename`, `rename_all`), presence (`skip`, `skip_deserializing`,
//! `default`), `deny_unknown_fields`, and the attributes whose input shape a
//! schema could not describe (`flatten`, `with`, `tag`, …), which are errors.
//! Every other serde attribute is skipped without being interpreted.

use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use crate::literal::{self, NumberBound};
use proc_macro2::{TokenStream, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, Lit, LitStr, Path, Token};

/// Why an attribute is refused: the schema would not match what serde reads.
const MISMATCH: &str =
    "is not supported by `#[derive(ToolArgs)]`: the schema could not match what serde reads";

/// Container (struct or enum) attributes.
pub struct Container {
    /// No serde attribute but those whose effect the schema states
    /// (`rename_all`, `default`, `deny_unknown_fields`): serde then reads
    /// exactly what the schema allows, before the tool-only rules.
    pub serde_exact: bool,
    /// The `rename_all` rule serde applies when deserialising.
    pub rename_all: RenameRule,
    /// `#[serde(default)]` on the struct: every field may be absent.
    pub default: bool,
    /// `#[serde(deny_unknown_fields)]`.
    pub deny_unknown_fields: bool,
    /// The description: `#[tool(description)]` (enums only), else the doc comment.
    pub description: Option<String>,
}

/// Whether a container is a struct or an enum (they take different `#[tool]` keys).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ContainerKind {
    /// A struct with named fields.
    Struct,
    /// A fieldless enum.
    Enum,
}

/// Field attributes.
pub struct Field {
    /// No serde attribute but `rename`, `skip` and `default` (see
    /// [`Container::serde_exact`]).
    pub serde_exact: bool,
    /// `#[serde(rename)]` (the deserialize name).
    pub rename: Option<String>,
    /// `#[serde(skip)]` / `#[serde(skip_deserializing)]`: serde never reads it.
    pub skip: bool,
    /// `#[serde(default)]` / `#[serde(default = "path")]`.
    pub serde_default: bool,
    /// `#[tool(description)]`, else the doc comment.
    pub description: Option<String>,
    /// `#[tool(default = ...)]`, as tokens for `json!`.
    pub default: Option<TokenStream>,
    /// `#[tool(enum = [...])]`.
    pub enum_values: Option<Vec<LitStr>>,
    /// `#[tool(minimum = ...)]`, with the expression it was read from.
    pub minimum: Option<(Expr, NumberBound)>,
    /// `#[tool(maximum = ...)]`.
    pub maximum: Option<(Expr, NumberBound)>,
    /// `#[tool(min_length = ...)]`.
    pub min_length: Option<(Expr, u64)>,
    /// `#[tool(max_length = ...)]`.
    pub max_length: Option<(Expr, u64)>,
    /// `#[tool(min_items = ...)]`.
    pub min_items: Option<(Expr, u64)>,
    /// `#[tool(max_items = ...)]`.
    pub max_items: Option<(Expr, u64)>,
}

/// Enum variant attributes.
pub struct Variant {
    /// No serde attribute but `rename` and `skip` (an `alias` would let
    /// serde read a string the schema does not list).
    pub serde_exact: bool,
    /// `#[serde(rename)]` (the deserialize name).
    pub rename: Option<String>,
    /// `#[serde(skip)]` / `#[serde(skip_deserializing)]`.
    pub skip: bool,
}

/// Reads the attributes of a struct or enum.
pub fn container(cx: &Ctxt, attrs: &[Attribute], kind: ContainerKind) -> Container {
    let mut rename_all = RenameRule::None;
    let mut default = false;
    let mut deny_unknown_fields = false;
    let mut other_serde = false;
    each_meta(cx, attrs, "serde", |meta| {
        let path = &meta.path;
        if path.is_ident("rename_all") {
            if let Some(lit) = deserialize_value(&meta)? {
                match RenameRule::from_name(&lit.value()) {
                    Some(rule) => rename_all = rule,
                    None => cx.error_spanned_by(
                        &lit,
                        format!(
                            "unknown rename rule `rename_all = {:?}`, expected one of {}",
                            lit.value(),
                            RenameRule::expected()
                        ),
                    ),
                }
            }
        } else if path.is_ident("default") {
            default = true;
            skip_value(&meta)?;
        } else if path.is_ident("deny_unknown_fields") {
            deny_unknown_fields = true;
        } else if [
            "tag",
            "content",
            "untagged",
            "transparent",
            "from",
            "try_from",
            "remote",
        ]
        .iter()
        .any(|name| path.is_ident(name))
        {
            cx.error_spanned_by(path, format!("`#[serde({})]` {MISMATCH}", ident_name(path)));
            skip_value(&meta)?;
        } else {
            other_serde = true;
            skip_value(&meta)?;
        }
        Ok(())
    });

    let mut description = None;
    each_meta(cx, attrs, "tool", |meta| {
        if kind == ContainerKind::Enum && meta.path.is_ident("description") {
            set_once(cx, &meta.path, &mut description, description_value(&meta)?);
        } else {
            let expected = match kind {
                ContainerKind::Enum => "expected `description`",
                ContainerKind::Struct => {
                    "a struct takes no `#[tool(...)]` keys; put `description`, `default`, `enum` or bounds on its fields"
                }
            };
            cx.error_spanned_by(
                &meta.path,
                format!(
                    "unknown tool attribute `{}`: {expected}",
                    ident_name(&meta.path)
                ),
            );
            skip_value(&meta)?;
        }
        Ok(())
    });

    Container {
        rename_all,
        default,
        deny_unknown_fields,
        serde_exact: !other_serde,
        description: description.or_else(|| doc_description(attrs)),
    }
}

/// Reads the attributes of a named field.
pub fn field(cx: &Ctxt, attrs: &[Attribute]) -> Field {
    let mut rename = None;
    let mut skip = false;
    let mut serde_default = false;
    let mut other_serde = false;
    let mut refused: Vec<Path> = Vec::new();
    each_meta(cx, attrs, "serde", |meta| {
        let path = &meta.path;
        if path.is_ident("rename") {
            if let Some(lit) = deserialize_value(&meta)? {
                rename = Some(lit.value());
            }
        } else if path.is_ident("skip") || path.is_ident("skip_deserializing") {
            skip = true;
        } else if path.is_ident("default") {
            serde_default = true;
            skip_value(&meta)?;
        } else if ["flatten", "deserialize_with", "with"]
            .iter()
            .any(|name| path.is_ident(name))
        {
            refused.push(path.clone());
            skip_value(&meta)?;
        } else {
            // `alias` and the like: serde may read what the schema does not say.
            other_serde = true;
            skip_value(&meta)?;
        }
        Ok(())
    });
    // A field serde never reads cannot make the schema wrong.
    if !skip {
        for path in refused {
            cx.error_spanned_by(
                &path,
                format!("`#[serde({})]` {MISMATCH}", ident_name(&path)),
            );
        }
    }

    let mut description = None;
    let mut default = None;
    let mut enum_values = None;
    let mut minimum = None;
    let mut maximum = None;
    let mut min_length = None;
    let mut max_length = None;
    let mut min_items = None;
    let mut max_items = None;
    each_meta(cx, attrs, "tool", |meta| {
        let path = &meta.path;
        if path.is_ident("description") {
            set_once(cx, path, &mut description, description_value(&meta)?);
        } else if path.is_ident("default") {
            let expr: Expr = meta.value()?.parse()?;
            match literal::default_tokens(&expr) {
                Ok(tokens) => set_once(cx, path, &mut default, tokens),
                Err(errors) => errors.into_iter().for_each(|e| cx.push(e)),
            }
        } else if path.is_ident("enum") {
            let expr: Expr = meta.value()?.parse()?;
            match literal::enum_values(&expr) {
                Ok(values) => set_once(cx, path, &mut enum_values, values),
                Err(errors) => errors.into_iter().for_each(|e| cx.push(e)),
            }
        } else if path.is_ident("minimum") || path.is_ident("maximum") {
            let key = ident_name(path);
            let expr: Expr = meta.value()?.parse()?;
            let slot = if key == "minimum" {
                &mut minimum
            } else {
                &mut maximum
            };
            match literal::number_bound(&key, &expr) {
                Ok(bound) => set_once(cx, path, slot, (expr, bound)),
                Err(err) => cx.push(err),
            }
        } else if let Some(slot) = match ident_name(path).as_str() {
            "min_length" => Some(&mut min_length),
            "max_length" => Some(&mut max_length),
            "min_items" => Some(&mut min_items),
            "max_items" => Some(&mut max_items),
            _ => None,
        } {
            let expr: Expr = meta.value()?.parse()?;
            match literal::count(&ident_name(path), &expr) {
                Ok(count) => set_once(cx, path, slot, (expr, count)),
                Err(err) => cx.push(err),
            }
        } else {
            cx.error_spanned_by(
                path,
                format!(
                    "unknown tool attribute `{}`: expected `description`, `default`, `enum`, \
                     `minimum`, `maximum`, `min_length`, `max_length`, `min_items` or `max_items`",
                    ident_name(path)
                ),
            );
            skip_value(&meta)?;
        }
        Ok(())
    });

    let field = Field {
        serde_exact: !other_serde,
        rename,
        skip,
        serde_default,
        description: description.or_else(|| doc_description(attrs)),
        default,
        enum_values,
        minimum,
        maximum,
        min_length,
        max_length,
        min_items,
        max_items,
    };
    check_bound_order(cx, &field);
    field
}

/// Rule: a minimum is not above its maximum (`minimum`/`maximum`,
/// `min_length`/`max_length`, `min_items`/`max_items`), since then no
/// value could be valid. Reported at the maximum.
fn check_bound_order(cx: &Ctxt, field: &Field) {
    if let (Some((_, min)), Some((expr, max))) = (&field.minimum, &field.maximum) {
        if min.value.greater_than(max.value) {
            cx.error_spanned_by(
                expr,
                format!(
                    "`maximum = {}` is below `minimum = {}`: no value could be valid",
                    max.value, min.value
                ),
            );
        }
    }
    for (min_key, max_key, min, max) in [
        (
            "min_length",
            "max_length",
            &field.min_length,
            &field.max_length,
        ),
        ("min_items", "max_items", &field.min_items, &field.max_items),
    ] {
        if let (Some((_, min)), Some((expr, max))) = (min, max) {
            if min > max {
                cx.error_spanned_by(
                    expr,
                    format!(
                        "`{max_key} = {max}` is below `{min_key} = {min}`: no value could be valid"
                    ),
                );
            }
        }
    }
}

/// Reads the attributes of an enum variant.
pub fn variant(cx: &Ctxt, attrs: &[Attribute]) -> Variant {
    let mut rename = None;
    let mut skip = false;
    let mut other_serde = false;
    let mut refused: Vec<Path> = Vec::new();
    each_meta(cx, attrs, "serde", |meta| {
        let path = &meta.path;
        if path.is_ident("rename") {
            if let Some(lit) = deserialize_value(&meta)? {
                rename = Some(lit.value());
            }
        } else if path.is_ident("skip") || path.is_ident("skip_deserializing") {
            skip = true;
        } else if ["other", "untagged", "deserialize_with", "with"]
            .iter()
            .any(|name| path.is_ident(name))
        {
            refused.push(path.clone());
            skip_value(&meta)?;
        } else {
            other_serde = true;
            skip_value(&meta)?;
        }
        Ok(())
    });
    if !skip {
        for path in refused {
            cx.error_spanned_by(
                &path,
                format!("`#[serde({})]` {MISMATCH}", ident_name(&path)),
            );
        }
    }

    each_meta(cx, attrs, "tool", |meta| {
        cx.error_spanned_by(
            &meta.path,
            format!(
                "unknown tool attribute `{}`: a variant takes no `#[tool(...)]` keys",
                ident_name(&meta.path)
            ),
        );
        skip_value(&meta)
    });

    Variant {
        serde_exact: !other_serde,
        rename,
        skip,
    }
}

/// Runs `f` on every item of every `#[name(...)]` attribute, recording parse errors.
fn each_meta(
    cx: &Ctxt,
    attrs: &[Attribute],
    name: &str,
    mut f: impl FnMut(ParseNestedMeta) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident(name)) {
        if let Err(err) = attr.parse_nested_meta(&mut f) {
            cx.push(err);
        }
    }
}

/// Stores `value` unless the key was already given.
fn set_once<T>(cx: &Ctxt, path: &Path, slot: &mut Option<T>, value: T) {
    if slot.is_some() {
        cx.error_spanned_by(
            path,
            format!("duplicate tool attribute `{}`", ident_name(path)),
        );
    } else {
        *slot = Some(value);
    }
}

/// The last segment of a path, for messages.
fn ident_name(path: &Path) -> String {
    path.segments
        .last()
        .map(|segment| segment.ident.to_string())
        .unwrap_or_default()
}

/// Skips whatever follows a key we do not interpret: `= tokens` or `(...)`.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    let input = meta.input;
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        while !input.is_empty() && !input.peek(Token![,]) {
            input.parse::<TokenTree>()?;
        }
    } else if input.peek(syn::token::Paren) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// The deserialize side of `key = "x"` or `key(serialize = "a", deserialize = "b")`.
fn deserialize_value(meta: &ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        return lit_str(meta.value()?).map(Some);
    }
    let mut out = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            out = Some(lit_str(inner.value()?)?);
            Ok(())
        } else if inner.path.is_ident("serialize") {
            lit_str(inner.value()?).map(drop)
        } else {
            Err(inner.error("expected `serialize` or `deserialize`"))
        }
    })?;
    Ok(out)
}

/// `description = "..."`.
fn description_value(meta: &ParseNestedMeta) -> syn::Result<String> {
    Ok(lit_str(meta.value()?)?.value().trim().to_owned())
}

/// A string literal, possibly wrapped in an invisible `macro_rules!` group.
fn lit_str(input: ParseStream) -> syn::Result<LitStr> {
    let expr: Expr = input.parse()?;
    let mut value = &expr;
    while let Expr::Group(group) = value {
        value = &group.expr;
    }
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        _ => Err(syn::Error::new_spanned(expr, "expected a string literal")),
    }
}

/// The description made from doc comments: each line trimmed, the lines of a
/// paragraph joined with a space, paragraphs separated by a blank line.
/// `None` when there is no text.
pub fn doc_description(attrs: &[Attribute]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("doc")) {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            // `#[doc = include_str!(..)]` and the like cannot be read here.
            continue;
        };
        for line in block_doc_lines(&s.value()) {
            let line = line.trim();
            if line.is_empty() {
                flush(&mut current, &mut paragraphs);
            } else {
                current.push(line.to_owned());
            }
        }
    }
    flush(&mut current, &mut paragraphs);
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}

fn flush(current: &mut Vec<String>, paragraphs: &mut Vec<String>) {
    if !current.is_empty() {
        paragraphs.push(current.join(" "));
        current.clear();
    }
}

/// The lines of one doc attribute. A `/** ... */` block whose lines all start
/// with `*` has those leading stars removed, as rustdoc does.
fn block_doc_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.split('\n').collect();
    let starred = lines.len() > 1
        && lines
            .iter()
            .map(|line| line.trim_start())
            .filter(|line| !line.is_empty())
            .all(|line| line.starts_with('*'));
    if starred {
        lines
            .into_iter()
            .map(|line| line.trim_start().strip_prefix('*').unwrap_or(line))
            .collect()
    } else {
        lines
    }
}
