//! The values of `#[tool(default = ...)]`, `#[tool(enum = [...])]` and the
//! bounds (`minimum`, `min_length`, …).
//!
//! A default is a string, integer, float or boolean literal, a negated number
//! literal, or an array of those (nested arrays too). It is checked here and
//! re-emitted in a canonical, fully typed form (`5u64`, `-3i64`, `1.5f64`) so
//! the generated `json!` call can neither overflow an `i32` nor fail at run
//! time: integers must fit `i64`/`u64` and floats must be finite. A
//! `minimum`/`maximum` is a number literal of the same kind; a length or an
//! item count is a non-negative integer literal.

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
        Lit::Int(int) => lower_int(int, negative, "default"),
        Lit::Float(float) => lower_float(float, negative, "default"),
        _ => Err(syn::Error::new(span, DEFAULT_EXPECTED)),
    };
    result.map_err(|err| errors.push(err)).ok()
}

fn lower_int(int: &LitInt, negative: bool, what: &str) -> syn::Result<TokenStream> {
    let span = int.span();
    let too_big = || {
        syn::Error::new(
            span,
            format!("this {what} does not fit in a 64-bit integer (`i64` or `u64`)"),
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

fn lower_float(float: &LitFloat, negative: bool, what: &str) -> syn::Result<TokenStream> {
    let span = float.span();
    let value: f64 = float
        .base10_parse()
        .map_err(|err| syn::Error::new(span, format!("invalid float {what}: {err}")))?;
    if !value.is_finite() {
        return Err(syn::Error::new(
            span,
            format!("a float {what} must be finite"),
        ));
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

/// A checked `#[tool(minimum = ...)]` or `#[tool(maximum = ...)]` value.
pub struct NumberBound {
    /// The value as a typed literal for generated code (`5u64`, `-3i64`, `1.5f64`).
    pub tokens: TokenStream,
    /// The value, for comparing a minimum with a maximum.
    pub value: BoundValue,
    /// Whether it has a fraction (so it fits only a float field).
    pub fractional: bool,
}

/// The value of a numeric bound.
#[derive(Clone, Copy)]
pub enum BoundValue {
    /// An integer literal, possibly negated.
    Int(i128),
    /// A float literal, possibly negated.
    Float(f64),
}

impl BoundValue {
    /// Whether `self` is greater than `other`.
    pub fn greater_than(self, other: BoundValue) -> bool {
        match (self, other) {
            (BoundValue::Int(a), BoundValue::Int(b)) => a > b,
            (a, b) => a.as_f64() > b.as_f64(),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            BoundValue::Int(i) => i as f64,
            BoundValue::Float(f) => f,
        }
    }
}

impl std::fmt::Display for BoundValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoundValue::Int(i) => write!(f, "{i}"),
            BoundValue::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// Checks `minimum = ...` / `maximum = ...`: an integer or float literal,
/// possibly negated, that fits `i64`/`u64` or is a finite `f64`.
pub fn number_bound(key: &str, expr: &Expr) -> syn::Result<NumberBound> {
    let expected = || {
        syn::Error::new_spanned(
            expr,
            format!(
                "`#[tool({key} = ...)]` must be a number literal, e.g. `#[tool({key} = 0)]` or `#[tool({key} = -1.5)]`"
            ),
        )
    };
    let (lit, negative) = match strip_groups(expr) {
        Expr::Lit(lit) if lit.attrs.is_empty() => (&lit.lit, false),
        Expr::Unary(unary) if unary.attrs.is_empty() && matches!(unary.op, UnOp::Neg(_)) => {
            match strip_groups(&unary.expr) {
                Expr::Lit(lit) if lit.attrs.is_empty() => (&lit.lit, true),
                _ => return Err(expected()),
            }
        }
        _ => return Err(expected()),
    };
    match lit {
        Lit::Int(int) => {
            let tokens = lower_int(int, negative, "bound")?;
            let magnitude: u64 = int.base10_parse()?;
            let value = if negative {
                -i128::from(magnitude)
            } else {
                i128::from(magnitude)
            };
            Ok(NumberBound {
                tokens,
                value: BoundValue::Int(value),
                fractional: false,
            })
        }
        Lit::Float(float) => {
            let tokens = lower_float(float, negative, "bound")?;
            let magnitude: f64 = float.base10_parse()?;
            let value = if negative { -magnitude } else { magnitude };
            Ok(NumberBound {
                tokens,
                value: BoundValue::Float(value),
                fractional: value.fract() != 0.0,
            })
        }
        _ => Err(expected()),
    }
}

/// Checks `min_length = ...` and the other counts: a non-negative integer literal.
pub fn count(key: &str, expr: &Expr) -> syn::Result<u64> {
    let expected = || {
        syn::Error::new_spanned(
            expr,
            format!("`#[tool({key} = ...)]` must be a non-negative integer literal, e.g. `#[tool({key} = 1)]`"),
        )
    };
    match strip_groups(expr) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(int),
            attrs,
        }) if attrs.is_empty() => int.base10_parse().map_err(|_| expected()),
        _ => Err(expected()),
    }
}

/// A string literal token for generated code.
pub fn str_lit(value: &str) -> LitStr {
    LitStr::new(value, Span::call_site())
}
