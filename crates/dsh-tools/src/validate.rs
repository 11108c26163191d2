//! Validation of model-sent arguments against a [`SchemaSpec`].
//!
//! Every violation is reported, not the first: depth first, in declaration
//! order, with paths `a.b`, `tags[1]`, `servers[1].host`. Nothing is coerced
//! (`"5"` is not a number). `null` for an optional property counts as absent.

use crate::schema::{Bounds, SchemaProp, SchemaSpec, SchemaType};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt::{self, Write as _};

/// What kind of rule a value broke.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViolationKind {
    /// A required property is absent or `null`.
    Missing,
    /// The value has the wrong JSON type (or is a non-finite number).
    WrongType(SchemaType),
    /// The value is not one of the allowed values.
    NotOneOf,
    /// A key that a closed object does not declare.
    Undeclared,
    /// The raw argument string is not JSON.
    Malformed,
    /// The value fits the schema but not the Rust type (e.g. `300` for a `u8`).
    Unreadable,
    /// A number, the length of a string or the number of elements of an array
    /// is outside the property's bounds (`"p" must be at least 0`).
    OutOfRange,
    /// Any other JSON Schema keyword (`pattern`, `oneOf`, `format` …) of a
    /// schema the tool brought itself, such as a proxied MCP tool's.
    Schema,
}

/// One broken rule: where, what kind, and the message the model sees.
///
/// The path is kept as a range of the message, so a violation costs one allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    kind: ViolationKind,
    message: String,
    path: std::ops::Range<usize>,
}

impl Violation {
    /// A violation at `path` whose message is `"path" tail`
    /// (or `missing required property "path"` for [`ViolationKind::Missing`]).
    pub fn new(kind: ViolationKind, path: &str, tail: &str) -> Self {
        Self::build(kind, tail, path.len(), |message| message.push_str(path))
    }

    /// Builds the message in one allocation, writing the path with `write_path`.
    fn build(
        kind: ViolationKind,
        tail: &str,
        path_hint: usize,
        write_path: impl FnOnce(&mut String),
    ) -> Self {
        Self::build_with(kind, path_hint + tail.len(), write_path, |message| {
            message.push_str(tail)
        })
    }

    /// Builds the message in one allocation of about `hint + 32` bytes,
    /// writing the path with `write_path` and the tail with `write_tail`.
    fn build_with(
        kind: ViolationKind,
        hint: usize,
        write_path: impl FnOnce(&mut String),
        write_tail: impl FnOnce(&mut String),
    ) -> Self {
        // Built by hand rather than with `format!`: invalid arguments are a hot
        // path for a model that is correcting itself.
        let mut message = String::with_capacity(hint + 32);
        let start = match kind {
            ViolationKind::Missing => {
                message.push_str("missing required property \"");
                message.len()
            }
            _ => {
                message.push('"');
                1
            }
        };
        write_path(&mut message);
        if message.len() == start {
            message.push_str("arguments");
        }
        let end = message.len();
        message.push('"');
        if kind != ViolationKind::Missing {
            message.push(' ');
            write_tail(&mut message);
        }
        Violation {
            kind,
            message,
            path: start..end,
        }
    }

    /// Where: `arguments` for the whole object, else `a.b`, `tags[1]`, `servers[1].host`.
    pub fn path(&self) -> &str {
        &self.message[self.path.clone()]
    }

    /// What kind of rule.
    pub fn kind(&self) -> ViolationKind {
        self.kind
    }

    /// The message, e.g. `"servers[1].host" must be a string`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message, owned.
    pub fn into_message(self) -> String {
        self.message
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The path of the value being checked, as a chain on the stack: it is only
/// rendered to a string when a violation is found.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a str, &'a Path<'a>),
    Index(usize, &'a Path<'a>),
}

impl Path<'_> {
    /// Appends the path to `out`; `start` is where the path begins in `out`.
    fn write(&self, out: &mut String, start: usize) {
        match *self {
            Path::Root => {}
            Path::Key(key, parent) => {
                parent.write(out, start);
                if out.len() > start {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Index(index, parent) => {
                parent.write(out, start);
                out.push('[');
                push_decimal(out, index);
                out.push(']');
            }
        }
    }
}

fn push_decimal(out: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

fn violation(path: &Path<'_>, kind: ViolationKind, tail: &str) -> Violation {
    Violation::build(kind, tail, 24, |message| {
        let start = message.len();
        path.write(message, start);
    })
}

impl SchemaSpec {
    /// Checks `args` against the spec and returns every violation (empty when valid).
    ///
    /// A non-object gives the single violation `"arguments" must be an object`.
    pub fn validate(&self, args: &Value) -> Vec<Violation> {
        self.validate_for_decode(args).0
    }

    /// [`SchemaSpec::validate`], plus whether [`SchemaSpec::normalize`] has
    /// anything to do (a `null` to drop or a default to fill).
    pub(crate) fn validate_for_decode(&self, args: &Value) -> (Vec<Violation>, bool) {
        let mut out = Vec::new();
        let mut fill = false;
        match args {
            Value::Object(map) => check_object(self, map, &Path::Root, &mut out, &mut fill),
            _ => out.push(violation(
                &Path::Root,
                ViolationKind::WrongType(SchemaType::Object),
                "must be an object",
            )),
        }
        (out, fill)
    }

    /// Parses the model's raw argument string and validates it.
    ///
    /// See [`parse_arguments`] for what is accepted.
    pub fn validate_str(&self, raw: &str) -> Result<Value, Vec<Violation>> {
        let value = parse_arguments(raw).map_err(|v| vec![v])?;
        let violations = self.validate(&value);
        if violations.is_empty() {
            Ok(value)
        } else {
            Err(violations)
        }
    }

    /// Prepares validated arguments for deserialisation: removes `null` for
    /// optional properties and fills absent properties that declare a `default`.
    pub fn normalize(&self, args: &mut Value) {
        if let Value::Object(map) = args {
            normalize_object(self, map);
        }
    }

    /// Checks that the spec is consistent: every `default` and every `enum`
    /// value fits its property. Registries call this at registration.
    pub fn check(&self) -> Result<(), Violation> {
        check_spec(self, &Path::Root)
    }
}

/// Parses a model's raw argument string.
///
/// A blank string counts as `{}` (some models send it for tools without
/// arguments), and a JSON string that itself holds a JSON object is unwrapped
/// once (some models double-encode). Malformed JSON gives one violation naming
/// the parse error and its position. Nesting deeper than 128 levels is an
/// error, never a stack overflow.
pub fn parse_arguments(raw: &str) -> Result<Value, Violation> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::String(inner)) if inner.trim_start().starts_with('{') => {
            Ok(serde_json::from_str::<Value>(&inner).unwrap_or(Value::String(inner)))
        }
        Ok(value) => Ok(value),
        Err(err) => Err(violation(
            &Path::Root,
            ViolationKind::Malformed,
            &format!("is not valid JSON: {err}"),
        )),
    }
}

/// Up to this many properties, the values of an object are matched to the spec
/// in a slot array on the stack.
const INLINE_PROPS: usize = 16;

fn check_object(
    spec: &SchemaSpec,
    map: &Map<String, Value>,
    path: &Path<'_>,
    out: &mut Vec<Violation>,
    fill: &mut bool,
) {
    // One pass over the object puts each value in its property's slot: no
    // hashing, and keys sent in declaration order match at the first compare.
    let n = spec.props.len();
    let mut inline: [Option<&Value>; INLINE_PROPS] = [None; INLINE_PROPS];
    let mut heap = Vec::new();
    let slots: &mut [Option<&Value>] = if n <= INLINE_PROPS {
        &mut inline[..n]
    } else {
        heap.resize(n, None);
        &mut heap
    };
    let mut undeclared: Vec<&str> = Vec::new();
    let mut hint = 0;
    for (key, value) in map {
        match find_prop(spec, key, hint) {
            Some(index) => {
                slots[index] = Some(value);
                hint = index + 1;
            }
            None if spec.closed => undeclared.push(key),
            None => {}
        }
    }
    for ((name, prop), slot) in spec.props.iter().zip(slots.iter()) {
        match slot {
            None | Some(Value::Null) if prop.required => {
                out.push(violation(
                    &Path::Key(name, path),
                    ViolationKind::Missing,
                    "",
                ));
            }
            Some(Value::Null) => *fill = true,
            None => *fill |= prop.default.is_some(),
            Some(value) => check_value(prop, value, &Path::Key(name, path), out, fill),
        }
    }
    for key in undeclared {
        out.push(undeclared_violation(spec, key, path));
    }
}

/// `"k" is not a declared property`, and `(did you mean "p"?)` when a
/// declared property is close to `key`: a model that used another harness's
/// name (`timeout` for `timeout_ms`) or made a typo corrects itself in one turn.
fn undeclared_violation(spec: &SchemaSpec, key: &str, path: &Path<'_>) -> Violation {
    const TAIL: &str = "is not a declared property";
    let at = Path::Key(key, path);
    let Some(meant) = closest_property(spec, key) else {
        return violation(&at, ViolationKind::Undeclared, TAIL);
    };
    Violation::build_with(
        ViolationKind::Undeclared,
        24 + TAIL.len() + meant.len() + 20,
        |message| {
            let start = message.len();
            at.write(message, start);
        },
        |message| {
            message.push_str(TAIL);
            message.push_str(" (did you mean \"");
            message.push_str(meant);
            message.push_str("\"?)");
        },
    )
}

/// The declared property most likely meant by the undeclared `key`: the
/// fewest edits (ASCII case ignored) when that is at most 2 and under half the
/// longer name, or a name that contains `key` or is contained in it (3
/// characters at least); the fewest edits wins, then declaration order.
/// `None` when nothing is that close: a far-fetched guess misleads.
fn closest_property<'s>(spec: &'s SchemaSpec, key: &str) -> Option<&'s str> {
    let mut row = Vec::new();
    let mut best: Option<(usize, &str)> = None;
    for (name, _) in &spec.props {
        let distance = edit_distance(key, name, &mut row);
        let longer = key.chars().count().max(name.chars().count());
        let near = distance <= 2 && 2 * distance < longer;
        if (near || contains_either(key, name)) && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, name));
        }
    }
    best.map(|(_, name)| name)
}

/// Whether one name contains the other (ASCII case ignored), the shorter
/// being at least 3 bytes long.
fn contains_either(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short.len() >= 3
        && long
            .as_bytes()
            .windows(short.len())
            .any(|w| w.eq_ignore_ascii_case(short.as_bytes()))
}

/// Levenshtein distance over characters, ASCII case ignored; `row` is scratch.
fn edit_distance(a: &str, b: &str, row: &mut Vec<usize>) -> usize {
    row.clear();
    row.extend(0..=b.chars().count());
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.chars().enumerate() {
            let above = row[j + 1];
            let cost = usize::from(!ca.eq_ignore_ascii_case(&cb));
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + cost);
            diagonal = above;
        }
    }
    row.last().copied().unwrap_or(0)
}

/// The index of the property named `key`, searching from `hint` and wrapping.
fn find_prop(spec: &SchemaSpec, key: &str, hint: usize) -> Option<usize> {
    let props = &spec.props;
    let start = hint.min(props.len());
    let (tail, head) = props.split_at(start);
    head.iter()
        .position(|(name, _)| name == key)
        .map(|i| i + start)
        .or_else(|| tail.iter().position(|(name, _)| name == key))
}

pub(crate) fn type_matches(ty: SchemaType, value: &Value) -> bool {
    match ty {
        SchemaType::String => value.is_string(),
        SchemaType::Number => value.as_f64().is_some_and(f64::is_finite),
        SchemaType::Integer => value.is_i64() || value.is_u64(),
        SchemaType::Boolean => value.is_boolean(),
        SchemaType::Object => value.is_object(),
        SchemaType::Array => value.is_array(),
        SchemaType::Any => true,
    }
}

fn check_value(
    prop: &SchemaProp,
    value: &Value,
    path: &Path<'_>,
    out: &mut Vec<Violation>,
    fill: &mut bool,
) {
    if !type_matches(prop.ty, value) {
        out.push(violation(
            path,
            ViolationKind::WrongType(prop.ty),
            prop.ty.must_be(),
        ));
        return;
    }
    if let Some(values) = &prop.enum_values {
        // Exact equality first; numbers compare by value only when it fails
        // (`1.0` is one of `[1]`, as in JSON Schema).
        let by_value = || {
            matches!(value, Value::Number(_) | Value::Array(_) | Value::Object(_))
                && values.iter().any(|v| same_json(v, value))
        };
        if !values.contains(value) && !by_value() {
            let tail = prop
                .enum_message
                .get_or_init(|| format!("must be one of {}", EnumList(values)));
            out.push(violation(path, ViolationKind::NotOneOf, tail));
            return;
        }
    }
    if let Some(bounds) = &prop.bounds {
        check_bounds(bounds, value, path, out);
    }
    match value {
        Value::Object(map) => {
            if let Some(spec) = &prop.properties {
                check_object(spec, map, path, out, fill);
            }
        }
        Value::Array(elements) => {
            if let Some(items) = &prop.items {
                for (index, element) in elements.iter().enumerate() {
                    check_value(items, element, &Path::Index(index, path), out, fill);
                }
            }
        }
        _ => {}
    }
}

/// JSON equality with numbers compared by value: `1` and `1.0` are the same.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same_json(x, y)))
        }
        _ => a == b,
    }
}

/// Checks the bounds that apply to `value`'s kind (the type already matched).
fn check_bounds(bounds: &Bounds, value: &Value, path: &Path<'_>, out: &mut Vec<Violation>) {
    match value {
        Value::Number(n) => {
            if let Some(min) = &bounds.minimum {
                if compare_numbers(n, min) == Ordering::Less {
                    out.push(out_of_range(path, "must be at least ", Limit::Number(min)));
                    return;
                }
            }
            if let Some(max) = &bounds.maximum {
                if compare_numbers(n, max) == Ordering::Greater {
                    out.push(out_of_range(path, "must be at most ", Limit::Number(max)));
                }
            }
        }
        Value::String(s) => {
            // A character takes one to four bytes, so the byte length settles
            // most checks without counting.
            let bytes = s.len();
            let mut counted = None;
            let mut chars = || *counted.get_or_insert_with(|| s.chars().count());
            if let Some(min) = bounds.min_length {
                if bytes < min || (bytes / 4 < min && chars() < min) {
                    out.push(out_of_range(
                        path,
                        "must be at least ",
                        Limit::Count(min, "character", " long"),
                    ));
                    return;
                }
            }
            if let Some(max) = bounds.max_length {
                if bytes > max && chars() > max {
                    out.push(out_of_range(
                        path,
                        "must be at most ",
                        Limit::Count(max, "character", " long"),
                    ));
                }
            }
        }
        Value::Array(elements) => {
            if let Some(min) = bounds.min_items {
                if elements.len() < min {
                    out.push(out_of_range(
                        path,
                        "must have at least ",
                        Limit::Count(min, "item", ""),
                    ));
                    return;
                }
            }
            if let Some(max) = bounds.max_items {
                if elements.len() > max {
                    out.push(out_of_range(
                        path,
                        "must have at most ",
                        Limit::Count(max, "item", ""),
                    ));
                }
            }
        }
        _ => {}
    }
}

/// The end of a bound violation: a number, or a count with its unit.
enum Limit<'a> {
    /// `0`, `-3`, `1.5`.
    Number(&'a Number),
    /// `1 character long`, `2 items`: the count, the unit (made plural
    /// unless the count is 1) and what follows it.
    Count(usize, &'static str, &'static str),
}

fn out_of_range(path: &Path<'_>, head: &'static str, limit: Limit<'_>) -> Violation {
    // 24 for the path, as `violation` guesses; the rest fits the longest tail.
    Violation::build_with(
        ViolationKind::OutOfRange,
        24 + head.len() + 24,
        |message| {
            let start = message.len();
            path.write(message, start);
        },
        |message| {
            message.push_str(head);
            match limit {
                Limit::Number(n) => {
                    // Writing into a `String` cannot fail.
                    let _ = write!(message, "{n}");
                }
                Limit::Count(n, unit, after) => {
                    push_decimal(message, n);
                    message.push(' ');
                    message.push_str(unit);
                    if n != 1 {
                        message.push('s');
                    }
                    message.push_str(after);
                }
            }
        },
    )
}

/// Orders two finite JSON numbers exactly: integers are never rounded
/// through `f64`, and an integer and a float compare by their true values.
pub(crate) fn compare_numbers(a: &Number, b: &Number) -> Ordering {
    match (exact_int(a), exact_int(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => compare_int_float(x, b.as_f64().unwrap_or(f64::NAN)),
        (None, Some(y)) => compare_int_float(y, a.as_f64().unwrap_or(f64::NAN)).reverse(),
        (None, None) => {
            let (x, y) = (a.as_f64(), b.as_f64());
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// The number as an integer, if it is held as one.
pub(crate) fn exact_int(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn compare_int_float(i: i128, f: f64) -> Ordering {
    // Rounding to the nearest `f64` keeps order, so a strict difference after
    // rounding is a difference before. When they round equal, `f` is a whole
    // number within ±2^64 and converts to `i128` exactly.
    match (i as f64).partial_cmp(&f) {
        Some(Ordering::Less) => Ordering::Less,
        Some(Ordering::Greater) => Ordering::Greater,
        _ => i.cmp(&(f as i128)),
    }
}

/// Whether `value` is a valid value for `prop` (its type, enum, bounds and
/// nested properties), with `null` counting as a value, not as absent.
pub(crate) fn prop_accepts(prop: &SchemaProp, value: &Value) -> bool {
    let mut problems = Vec::new();
    check_value(prop, value, &Path::Root, &mut problems, &mut false);
    problems.is_empty()
}

/// `"p" is a string`, `"p" accepts any value`: the start of a check message.
fn is_phrase(ty: SchemaType) -> String {
    match ty {
        SchemaType::Any => "accepts any value".to_owned(),
        _ => format!("is {}", ty.with_article()),
    }
}

/// Checks that every bound applies to the property's type, that an
/// integer's bounds are whole numbers, and that no minimum exceeds its maximum.
fn check_bounds_fit(ty: SchemaType, bounds: &Bounds, path: &Path<'_>) -> Result<(), Violation> {
    let fail = |kind, tail: String| Err(violation(path, kind, &tail));
    if let Some(name) = bounds.non_finite {
        return fail(
            ViolationKind::OutOfRange,
            format!("has a {name} that is not a finite number"),
        );
    }
    let applies = [
        ("minimum", bounds.minimum.is_some(), ty.is_numeric()),
        ("maximum", bounds.maximum.is_some(), ty.is_numeric()),
        (
            "min_length",
            bounds.min_length.is_some(),
            ty == SchemaType::String,
        ),
        (
            "max_length",
            bounds.max_length.is_some(),
            ty == SchemaType::String,
        ),
        (
            "min_items",
            bounds.min_items.is_some(),
            ty == SchemaType::Array,
        ),
        (
            "max_items",
            bounds.max_items.is_some(),
            ty == SchemaType::Array,
        ),
    ];
    for (name, set, fits) in applies {
        if set && !fits {
            return fail(
                ViolationKind::WrongType(ty),
                format!("{} and cannot have a {name}", is_phrase(ty)),
            );
        }
    }
    if ty == SchemaType::Integer {
        for (name, bound) in [("minimum", &bounds.minimum), ("maximum", &bounds.maximum)] {
            if let Some(n) = bound {
                if exact_int(n).is_none() && n.as_f64().is_some_and(|f| f.fract() != 0.0) {
                    return fail(
                        ViolationKind::WrongType(ty),
                        format!("is an integer and cannot have {name} {n}"),
                    );
                }
            }
        }
    }
    if let (Some(min), Some(max)) = (&bounds.minimum, &bounds.maximum) {
        if compare_numbers(min, max) == Ordering::Greater {
            return fail(
                ViolationKind::OutOfRange,
                format!("has minimum {min} greater than maximum {max}"),
            );
        }
    }
    for (names, min, max) in [
        (
            ("min_length", "max_length"),
            bounds.min_length,
            bounds.max_length,
        ),
        (
            ("min_items", "max_items"),
            bounds.min_items,
            bounds.max_items,
        ),
    ] {
        if let (Some(min), Some(max)) = (min, max) {
            if min > max {
                return fail(
                    ViolationKind::OutOfRange,
                    format!("has {} {min} greater than {} {max}", names.0, names.1),
                );
            }
        }
    }
    Ok(())
}

/// Renders `["a","b"]` compactly.
struct EnumList<'a>(&'a [Value]);

impl fmt::Display for EnumList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{v}")?;
        }
        f.write_str("]")
    }
}

fn normalize_object(spec: &SchemaSpec, map: &mut Map<String, Value>) {
    for (name, prop) in &spec.props {
        match map.get_mut(name) {
            Some(Value::Null) if !prop.required => {
                map.shift_remove(name);
                if let Some(default) = &prop.default {
                    map.insert(name.clone(), default.clone());
                }
            }
            Some(value) => normalize_value(prop, value),
            None => {
                if let Some(default) = &prop.default {
                    map.insert(name.clone(), default.clone());
                }
            }
        }
    }
}

fn normalize_value(prop: &SchemaProp, value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(spec) = &prop.properties {
                normalize_object(spec, map);
            }
        }
        Value::Array(elements) => {
            if let Some(items) = &prop.items {
                for element in elements {
                    normalize_value(items, element);
                }
            }
        }
        _ => {}
    }
}

fn check_spec(spec: &SchemaSpec, path: &Path<'_>) -> Result<(), Violation> {
    for (name, prop) in &spec.props {
        check_prop(prop, &Path::Key(name, path))?;
    }
    Ok(())
}

fn check_prop(prop: &SchemaProp, path: &Path<'_>) -> Result<(), Violation> {
    if let Some(bounds) = &prop.bounds {
        check_bounds_fit(prop.ty, bounds, path)?;
    }
    let mut problems = Vec::new();
    if let Some(default) = &prop.default {
        check_value(prop, default, path, &mut problems, &mut false);
    }
    for value in prop.enum_values.iter().flatten() {
        if !type_matches(prop.ty, value) {
            problems.push(violation(
                path,
                ViolationKind::WrongType(prop.ty),
                &format!(
                    "has enum value {value} that is not {}",
                    prop.ty.with_article()
                ),
            ));
        }
    }
    if let Some(first) = problems.into_iter().next() {
        return Err(first);
    }
    if let Some(spec) = &prop.properties {
        check_spec(spec, path)?;
    }
    if let Some(items) = &prop.items {
        check_prop(items, &Path::Index(0, path))?;
    }
    Ok(())
}
