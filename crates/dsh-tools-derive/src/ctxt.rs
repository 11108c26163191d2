//! Error collection: every problem in the input is recorded with its span, and
//! code is generated only when there were none (`serde_derive`'s `Ctxt` style).

use std::cell::RefCell;
use std::fmt::Display;

/// Collects errors while the input is parsed.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error spanning `tokens`.
    pub fn error_spanned_by<T: quote::ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error.
    pub fn push(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// `Ok` when nothing was recorded, else every error combined into one.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
