//! Code generation for `#[derive(ToolArgs)]`.

use crate::attr::{self, ContainerKind};
use crate::ctxt::Ctxt;
use crate::literal::str_lit;
use proc_macro2::{Spacing, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::HashSet;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DataEnum, DataStruct, DeriveInput, Fields, Ident, LitInt};

/// Expands the derive, or returns every error found in the input.
pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`#[derive(ToolArgs)]` does not support generic types: a tool's argument schema must be one fixed shape",
        );
    } else if let Some(where_clause) = &input.generics.where_clause {
        cx.error_spanned_by(
            where_clause,
            "`#[derive(ToolArgs)]` does not support `where` clauses",
        );
    }
    let tokens = match &input.data {
        Data::Struct(data) => expand_struct(&cx, input, data),
        Data::Enum(data) => Some(expand_enum(&cx, input, data)),
        Data::Union(data) => {
            cx.error_spanned_by(
                data.union_token,
                "`#[derive(ToolArgs)]` does not support unions: use a struct with named fields or a fieldless enum",
            );
            None
        }
    };
    cx.check()?;
    Ok(tokens.unwrap_or_default())
}

/// A struct with named fields: `ToolArgs` (its spec) and `ArgType` (a nested object).
fn expand_struct(cx: &Ctxt, input: &DeriveInput, data: &DataStruct) -> Option<TokenStream> {
    let container = attr::container(cx, &input.attrs, ContainerKind::Struct);
    let fields = match &data.fields {
        Fields::Named(fields) => fields,
        Fields::Unnamed(fields) => {
            cx.error_spanned_by(
                fields,
                "`#[derive(ToolArgs)]` does not support tuple structs: serde reads them from an array, \
                 not an object; use named fields",
            );
            return None;
        }
        Fields::Unit => {
            cx.error_spanned_by(
                &input.ident,
                "`#[derive(ToolArgs)]` does not support unit structs: use a struct with named fields, e.g. `struct Args {}`",
            );
            return None;
        }
    };

    let ident = &input.ident;
    let mut names = HashSet::new();
    let mut props = Vec::with_capacity(fields.named.len());
    let mut exact: Vec<TokenStream> = Vec::with_capacity(fields.named.len());
    for field in &fields.named {
        let attrs = attr::field(cx, &field.attrs);
        if attrs.skip {
            continue;
        }
        let bound_calls = bounds(&attrs, &field.ty);
        let Some(field_ident) = &field.ident else {
            continue;
        };
        let name = attrs.rename.unwrap_or_else(|| {
            container
                .rename_all
                .apply_to_field(&field_ident.unraw().to_string())
        });
        if !names.insert(name.clone()) {
            cx.error_spanned_by(
                field_ident,
                format!("two fields are read from the same property `{name}`; rename one"),
            );
        }
        let ty = &field.ty;
        if mentions_self(ty.to_token_stream(), ident) {
            cx.error_spanned_by(
                ty,
                "`#[derive(ToolArgs)]` does not support recursive types: the schema would be infinite",
            );
        }

        let span = ty.span();
        let arg_type = quote_spanned!(span=> <#ty as ::dsh_tools::ArgType>);
        let required = if attrs.default.is_some() || attrs.serde_default || container.default {
            quote!(false)
        } else {
            quote_spanned!(span=> !#arg_type::OPTIONAL)
        };
        // serde checks this field exactly when it adds no tool-only rule
        // (a default to fill in, an enum on a plain string, a bound) and its
        // type is checked exactly in turn.
        let tool_only_rules = attrs.default.is_some()
            || attrs.enum_values.is_some()
            || attrs.minimum.is_some()
            || attrs.maximum.is_some()
            || attrs.min_length.is_some()
            || attrs.max_length.is_some()
            || attrs.min_items.is_some()
            || attrs.max_items.is_some();
        if tool_only_rules || !attrs.serde_exact {
            exact.push(quote!(false));
        } else {
            exact.push(quote_spanned!(span=> #arg_type::SERDE_EXACT));
        }
        let mut prop = quote_spanned!(span=> #arg_type::arg_prop());
        prop = quote!(#prop.set_required(#required));
        prop = quote!(#prop #bound_calls);
        if let Some(description) = attrs.description.filter(|d| !d.is_empty()) {
            let description = str_lit(&description);
            prop = quote!(#prop.description(#description));
        }
        if let Some(values) = attrs.enum_values {
            prop = quote!(#prop.one_of([#(#values),*]));
        }
        if let Some(default) = attrs.default {
            prop = quote!(#prop.default_value(::dsh_tools::__private::serde_json::json!(#default)));
        }
        let name = str_lit(&name);
        props.push(quote!(.prop(#name, #prop)));
    }
    let closed = container.deny_unknown_fields.then(|| quote!(.closed()));
    let container_exact = container.serde_exact;

    Some(quote! {
        #[automatically_derived]
        impl ::dsh_tools::ToolArgs for #ident {
            fn schema() -> ::dsh_tools::SchemaSpec {
                ::dsh_tools::SchemaSpec::new() #(#props)* #closed
            }

            const SERDE_EXACT: bool = #container_exact #(&& #exact)*;
        }

        #[automatically_derived]
        impl ::dsh_tools::ArgType for #ident {
            fn arg_prop() -> ::dsh_tools::SchemaProp {
                ::dsh_tools::SchemaProp::object(<#ident as ::dsh_tools::ToolArgs>::schema())
            }

            const SERDE_EXACT: bool = <#ident as ::dsh_tools::ToolArgs>::SERDE_EXACT;
        }
    })
}

/// The method calls that add a field's bound attributes to its property.
///
/// Each kind of bound first passes the property through a type assertion
/// (`__number_field::<T>()`, …) that compiles only for field types the bound
/// applies to, so a bound on the wrong field is an error at the field's type.
/// `Option`, `Box` and `Vec` pass through to the element type, as the
/// `SchemaProp` setters do at run time, except for the item counts, which
/// apply to the array itself.
fn bounds(attrs: &attr::Field, ty: &syn::Type) -> TokenStream {
    let span = ty.span();
    let mut prop = TokenStream::new();
    let numbers = [&attrs.minimum, &attrs.maximum];
    if numbers.iter().any(|bound| bound.is_some()) {
        prop = quote_spanned!(span=> #prop.__number_field::<#ty>());
        if numbers
            .iter()
            .flat_map(|b| b.iter())
            .any(|(_, b)| b.fractional)
        {
            prop = quote_spanned!(span=> #prop.__float_field::<#ty>());
        }
    }
    if attrs.min_length.is_some() || attrs.max_length.is_some() {
        prop = quote_spanned!(span=> #prop.__string_field::<#ty>());
    }
    if attrs.min_items.is_some() || attrs.max_items.is_some() {
        prop = quote_spanned!(span=> #prop.__array_field::<#ty>());
    }
    for (setter, bound) in [("minimum", &attrs.minimum), ("maximum", &attrs.maximum)] {
        if let Some((_, bound)) = bound {
            let setter = Ident::new(setter, Span::call_site());
            let value = &bound.tokens;
            prop = quote!(#prop.#setter(#value));
        }
    }
    for (setter, count) in [
        ("min_length", &attrs.min_length),
        ("max_length", &attrs.max_length),
        ("min_items", &attrs.min_items),
        ("max_items", &attrs.max_items),
    ] {
        if let Some((expr, count)) = count {
            let setter = Ident::new(setter, Span::call_site());
            let value = LitInt::new(&format!("{count}usize"), expr.span());
            prop = quote!(#prop.#setter(#value));
        }
    }
    prop
}

/// A fieldless enum: `ArgType` as a string restricted to the variant names.
fn expand_enum(cx: &Ctxt, input: &DeriveInput, data: &DataEnum) -> TokenStream {
    let container = attr::container(cx, &input.attrs, ContainerKind::Enum);
    let mut names = HashSet::new();
    let mut values = Vec::with_capacity(data.variants.len());
    let mut exact = container.serde_exact;
    for variant in &data.variants {
        let attrs = attr::variant(cx, &variant.attrs);
        exact &= attrs.serde_exact;
        if attrs.skip {
            // serde never reads a skipped variant, whatever its fields.
            continue;
        }
        if !matches!(variant.fields, Fields::Unit) {
            cx.error_spanned_by(
                &variant.fields,
                format!(
                    "`#[derive(ToolArgs)]` supports only fieldless enums (a string enum), \
                     but variant `{}` has fields",
                    variant.ident
                ),
            );
            continue;
        }
        let name = attrs.rename.unwrap_or_else(|| {
            container
                .rename_all
                .apply_to_variant(&variant.ident.unraw().to_string())
        });
        if !names.insert(name.clone()) {
            cx.error_spanned_by(
                &variant.ident,
                format!("two variants are read from the same string `{name}`; rename one"),
            );
        }
        values.push(str_lit(&name));
    }

    let ident = &input.ident;
    let count = values.len();
    let description = container.description.filter(|d| !d.is_empty()).map(|d| {
        let d = str_lit(&d);
        quote!(.description(#d))
    });
    quote! {
        #[automatically_derived]
        impl ::dsh_tools::ArgType for #ident {
            fn arg_prop() -> ::dsh_tools::SchemaProp {
                ::dsh_tools::SchemaProp::string()
                    .one_of::<[&'static str; #count], &'static str>([#(#values),*])
                    #description
            }

            // serde accepts exactly the variant names the enum lists.
            const SERDE_EXACT: bool = #exact;
        }
    }
}

/// Whether a field type names its own struct (`Self`, or the struct's name
/// used as a bare path segment), which would make the schema recurse forever.
fn mentions_self(tokens: TokenStream, ident: &Ident) -> bool {
    let mut after_path_sep = false;
    let mut colons = 0;
    for tree in tokens {
        match tree {
            TokenTree::Ident(found) => {
                if !after_path_sep && (found == "Self" || found == *ident) {
                    return true;
                }
                after_path_sep = false;
                colons = 0;
            }
            TokenTree::Punct(punct) => {
                if punct.as_char() == ':' {
                    colons += 1;
                    after_path_sep = colons == 2 && punct.spacing() == Spacing::Alone;
                    if punct.spacing() == Spacing::Alone {
                        colons = 0;
                    }
                } else {
                    after_path_sep = false;
                    colons = 0;
                }
            }
            TokenTree::Group(group) => {
                after_path_sep = false;
                colons = 0;
                if mentions_self(group.stream(), ident) {
                    return true;
                }
            }
            TokenTree::Literal(_) => {
                after_path_sep = false;
                colons = 0;
            }
        }
    }
    false
}
