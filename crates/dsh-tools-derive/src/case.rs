//! serde's `rename_all` rules, with serde's exact conversions.
//!
//! serde assumes field names are written in `snake_case` and variant names in
//! `PascalCase`, and converts from there; the two conversions differ (for
//! example `lowercase` leaves a field name untouched). Property names must be
//! what serde reads, so these follow `serde_derive`'s behaviour, quirks included,
//! except that they never panic (serde's slices the first byte).

/// One `rename_all` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    /// No rule: names are used as written.
    None,
    /// `"lowercase"`
    LowerCase,
    /// `"UPPERCASE"`
    UpperCase,
    /// `"PascalCase"`
    PascalCase,
    /// `"camelCase"`
    CamelCase,
    /// `"snake_case"`
    SnakeCase,
    /// `"SCREAMING_SNAKE_CASE"`
    ScreamingSnakeCase,
    /// `"kebab-case"`
    KebabCase,
    /// `"SCREAMING-KEBAB-CASE"`
    ScreamingKebabCase,
}

/// Every rule with its spelling in `rename_all = "..."`.
pub const RULES: &[(&str, RenameRule)] = &[
    ("lowercase", RenameRule::LowerCase),
    ("UPPERCASE", RenameRule::UpperCase),
    ("PascalCase", RenameRule::PascalCase),
    ("camelCase", RenameRule::CamelCase),
    ("snake_case", RenameRule::SnakeCase),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnakeCase),
    ("kebab-case", RenameRule::KebabCase),
    ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebabCase),
];

impl RenameRule {
    /// The rule spelled `name`, if serde knows it.
    pub fn from_name(name: &str) -> Option<Self> {
        RULES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, rule)| *rule)
    }

    /// The list of valid spellings, for error messages.
    pub fn expected() -> String {
        let names: Vec<String> = RULES.iter().map(|(n, _)| format!("{n:?}")).collect();
        names.join(", ")
    }

    /// Converts a field name (assumed `snake_case`) as serde does.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::None | RenameRule::LowerCase | RenameRule::SnakeCase => field.to_owned(),
            RenameRule::UpperCase | RenameRule::ScreamingSnakeCase => field.to_ascii_uppercase(),
            RenameRule::PascalCase => {
                let mut pascal = String::with_capacity(field.len());
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            RenameRule::CamelCase => lower_first(&RenameRule::PascalCase.apply_to_field(field)),
            RenameRule::KebabCase => field.replace('_', "-"),
            RenameRule::ScreamingKebabCase => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// Converts a variant name (assumed `PascalCase`) as serde does.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::None | RenameRule::PascalCase => variant.to_owned(),
            RenameRule::LowerCase => variant.to_ascii_lowercase(),
            RenameRule::UpperCase => variant.to_ascii_uppercase(),
            RenameRule::CamelCase => lower_first(variant),
            RenameRule::SnakeCase => {
                let mut snake = String::with_capacity(variant.len() + 4);
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnakeCase => RenameRule::SnakeCase
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::KebabCase => RenameRule::SnakeCase
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebabCase => RenameRule::ScreamingSnakeCase
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

/// The first character ASCII-lowercased, the rest unchanged.
fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out = String::with_capacity(s.len());
            out.push(first.to_ascii_lowercase());
            out.push_str(chars.as_str());
            out
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule::{self, *};

    const ALL: [RenameRule; 8] = [
        LowerCase,
        UpperCase,
        PascalCase,
        CamelCase,
        SnakeCase,
        ScreamingSnakeCase,
        KebabCase,
        ScreamingKebabCase,
    ];

    fn check(apply: fn(RenameRule, &str) -> String, original: &str, expected: [&str; 8]) {
        assert_eq!(apply(None, original), original);
        for (rule, want) in ALL.into_iter().zip(expected) {
            assert_eq!(apply(rule, original), want, "{rule:?} of {original:?}");
        }
    }

    #[test]
    fn variants() {
        let apply = RenameRule::apply_to_variant;
        check(
            apply,
            "Outcome",
            [
                "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome",
                "OUTCOME",
            ],
        );
        check(
            apply,
            "VeryTasty",
            [
                "verytasty",
                "VERYTASTY",
                "VeryTasty",
                "veryTasty",
                "very_tasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ],
        );
        check(apply, "A", ["a", "A", "A", "a", "a", "A", "a", "A"]);
        check(
            apply,
            "Z42",
            ["z42", "Z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"],
        );
        check(
            apply,
            "HTTPServer",
            [
                "httpserver",
                "HTTPSERVER",
                "HTTPServer",
                "hTTPServer",
                "h_t_t_p_server",
                "H_T_T_P_SERVER",
                "h-t-t-p-server",
                "H-T-T-P-SERVER",
            ],
        );
    }

    #[test]
    fn fields() {
        let apply = RenameRule::apply_to_field;
        check(
            apply,
            "outcome",
            [
                "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome",
                "OUTCOME",
            ],
        );
        check(
            apply,
            "very_tasty",
            [
                "very_tasty",
                "VERY_TASTY",
                "VeryTasty",
                "veryTasty",
                "very_tasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ],
        );
        check(apply, "a", ["a", "A", "A", "a", "a", "A", "a", "A"]);
        check(
            apply,
            "z42",
            ["z42", "Z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"],
        );
        // serde leaves a field's case alone under `lowercase`.
        check(
            apply,
            "Mixed_Case",
            [
                "Mixed_Case",
                "MIXED_CASE",
                "MixedCase",
                "mixedCase",
                "Mixed_Case",
                "MIXED_CASE",
                "Mixed-Case",
                "MIXED-CASE",
            ],
        );
    }

    #[test]
    fn never_panics_on_odd_names() {
        for rule in ALL {
            let _ = rule.apply_to_field("__");
            let _ = rule.apply_to_field("é_x");
            let _ = rule.apply_to_variant("Éa");
            let _ = rule.apply_to_variant("");
        }
        assert_eq!(CamelCase.apply_to_field("__"), "");
    }

    #[test]
    fn names_round_trip() {
        for (name, rule) in super::RULES {
            assert_eq!(RenameRule::from_name(name), Some(*rule));
        }
        assert_eq!(RenameRule::from_name("Snake_Case"), Option::None);
    }
}
