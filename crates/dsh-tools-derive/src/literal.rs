//! The value of `#[tool(default = ...)]` and `#[tool(enum = [...])]`.
//!
//! A default is a string, integer, float or boolean literal, a negated number
//! literal, or an array of those (nested arrays too). It is checked here and
//! re-emitted in a canonical, fully typed form (`5u64`, `-3i64`, `1.5f64`) so
//! the generated `json!` call can neither overflow an `i32` nor fail at run
//! time: integers must fit `i64`/`u64` and floats must be finite.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{Expr, Lit, LitFloat, LitInt, LitStr, UnOp};

const DEFAULT_EXPECTED: &str =
    "`#[tool(default = ...)]` must be a literal: a string, a number, `true`/`false`, \
     or an array of them, e.g. `#[tool(default = 10)]` or `#[tool(default = [\"a\", \"b\"])]`";

/// Checks a default expression; the tokens to put inside `json!(...)`, or every problem found.
pub fn default_tokens(expr: &Expr) -> Result<TokenStream, Vec<syn::Error>> {
    let mut errors = Vec::new();
    let tokens = lower(expr, &mut errors);
    match tokens {
        Some(tokens) if errors.is_empty() => Ok(tokens),
        _ => Err(errors),
    }
}

fn strip_groups(mut expr: &Expr) -> &Expr {
    // `Expr::Group` is an invisible group from a `macro_rules!` substitution.
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

fn lower(expr: &Expr, errors: &mut Vec<syn::Error>) -> Option<TokenStream> {
    match strip_groups(expr) {
        Expr::Lit(lit) if lit.attrs.is_empty() => lower_lit(&lit.lit, false, errors),
        Expr::Unary(unary) if unary.attrs.is_empty() && matches!(unary.op, UnOp::Neg(_)) => {
            match strip_groups(&unary.expr) {
                Expr::Lit(lit)
                    if lit.attrs.is_empty() && matches!(lit.lit, Lit::Int(_) | Lit::Float(_)) =>
                {
                    lower_lit(&lit.lit, true, errors)
                }
                _ => {
                    errors.push(syn::Error::new_spanned(expr, DEFAULT_EXPECTED));
                    None
                }
            }
        }
        Expr::Array(array) if array.attrs.is_empty() => {
            let mut elements = Vec::with_capacity(array.elems.len());
            let mut ok = true;
            for element in &array.elems {
                match lower(element, errors) {
                    Some(tokens) => elements.push(tokens),
                    None => ok = false,
                }
            }
            ok.then(|| quote!([#(#elements),*]))
        }
        _ => {
            errors.push(syn::Error::new_spanned(expr, DEFAULT_EXPECTED));
            None
        }
    }
}

fn lower_lit(lit: &Lit, negative: bool, errors: &mut Vec<syn::Error>) -> Option<TokenStream> {
    let span = lit.span();
    let result = match lit {
        Lit::Str(s) if s.suffix().is_empty() => {
            Ok(LitStr::new(&s.value(), span).into_token_stream())
        }
        Lit::Bool(b) => Ok(b.into_token_stream()),
        Lit::Int(int) => lower_int(int, negative),
        Lit::Float(float) => lower_float(float, negative),
        _ => Err(syn::Error::new(span, DEFAULT_EXPECTED)),
    };
    result.map_err(|err| errors.push(err)).ok()
}

fn lower_int(int: &LitInt, negative: bool) -> syn::Result<TokenStream> {
    let span = int.span();
    let too_big = || {
        syn::Error::new(
            span,
            "this default does not fit in a 64-bit integer (`i64` or `u64`)",
        )
    };
    let magnitude: u64 = int.base10_parse().map_err(|_| too_big())?;
    if !negative {
        return Ok(LitInt::new(&format!("{magnitude}u64"), span).into_token_stream());
    }
    if magnitude > i64::MIN.unsigned_abs() {
        return Err(too_big());
    }
    if magnitude == 0 {
        return Ok(LitInt::new("0i64", span).into_token_stream());
    }
    // `-9223372036854775808i64` is accepted by rustc as a negated literal.
    let lit = LitInt::new(&format!("{magnitude}i64"), span);
    Ok(quote!(-#lit))
}

fn lower_float(float: &LitFloat, negative: bool) -> syn::Result<TokenStream> {
    let span = float.span();
    let value: f64 = float
        .base10_parse()
        .map_err(|err| syn::Error::new(span, format!("invalid float default: {err}")))?;
    if !value.is_finite() {
        return Err(syn::Error::new(span, "a float default must be finite"));
    }
    // `{:?}` always writes a fraction or an exponent (`1.0`, `1e300`), so the
    // `f64` suffix makes a valid float literal.
    let lit = LitFloat::new(&format!("{value:?}f64"), span);
    Ok(if negative {
        quote!(-#lit)
    } else {
        lit.into_token_stream()
    })
}

/// Checks `enum = ["a", "b"]`: a non-empty array of string literals.
pub fn enum_values(expr: &Expr) -> Result<Vec<LitStr>, Vec<syn::Error>> {
    const EXPECTED: &str = "`#[tool(enum = ...)]` must be an array of string literals, e.g. `#[tool(enum = [\"a\", \"b\"])]`";
    let Expr::Array(array) = strip_groups(expr) else {
        return Err(vec![syn::Error::new_spanned(expr, EXPECTED)]);
    };
    if array.elems.is_empty() {
        return Err(vec![syn::Error::new_spanned(
            expr,
            "`#[tool(enum = [])]` allows no value at all; list at least one",
        )]);
    }
    let mut values = Vec::with_capacity(array.elems.len());
    let mut errors = Vec::new();
    for element in &array.elems {
        match strip_groups(element) {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s),
                attrs,
            }) if attrs.is_empty() && s.suffix().is_empty() => {
                values.push(LitStr::new(&s.value(), s.span()));
            }
            _ => errors.push(syn::Error::new_spanned(element, EXPECTED)),
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(errors)
    }
}

/// A string literal token for generated code.
pub fn str_lit(value: &str) -> LitStr {
    LitStr::new(value, Span::call_site())
}
