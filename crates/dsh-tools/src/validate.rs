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
        let mut fill = false;
        // Most calls are valid: a lean pass answers them without a path, a
        // violation list or a message. Anything else (a violation, or a case
        // the lean pass leaves to the full one) is walked again by the full
        // pass, which alone decides what is reported and in what order.
        if let Value::Object(map) = args {
            if object_ok(self, map, &mut fill) {
                return (Vec::new(), fill);
            }
            fill = false;
        }
        // Room for a few violations at once, rather than growing 4, 8, 16.
        let mut out = Vec::with_capacity(8);
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
    let mut declared = 0;
    let mut hint = 0;
    let plan = spec.plan();
    let find = |key: &str, hint: usize| match plan {
        Some(plan) => find_slot(spec, &plan.slots, key, hint),
        None => find_prop(spec, key, hint),
    };
    for (key, value) in map {
        if let Some(index) = find(key, hint) {
            slots[index] = Some(value);
            hint = index + 1;
            declared += 1;
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
    if spec.closed && declared < map.len() {
        // The undeclared keys, in the object's order: found again rather
        // than kept in a list the common case would pay for.
        for key in map.keys() {
            if find(key, 0).is_none() {
                out.push(undeclared_violation(spec, key, path));
            }
        }
    }
}

/// The kind of a JSON value as one bit, so that a type check is one `and`
/// with the mask of the kinds a property accepts ([`accepts`]).
mod kind {
    pub const NULL: u8 = 1;
    pub const BOOL: u8 = 2;
    pub const INTEGER: u8 = 4;
    pub const FLOAT: u8 = 8;
    pub const STRING: u8 = 16;
    pub const ARRAY: u8 = 32;
    pub const OBJECT: u8 = 64;
    /// A float that is not finite: only [`SchemaType::Any`](super::SchemaType::Any) takes it.
    pub const NON_FINITE: u8 = 128;
}

#[inline(always)]
fn kind_of(value: &Value) -> u8 {
    match value {
        Value::Null => kind::NULL,
        Value::Bool(_) => kind::BOOL,
        Value::Number(n) if n.is_i64() || n.is_u64() => kind::INTEGER,
        Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => kind::FLOAT,
        Value::Number(_) => kind::NON_FINITE,
        Value::String(_) => kind::STRING,
        Value::Array(_) => kind::ARRAY,
        Value::Object(_) => kind::OBJECT,
    }
}

/// The kinds [`type_matches`] accepts for `ty`.
fn accepts(ty: SchemaType) -> u8 {
    match ty {
        SchemaType::String => kind::STRING,
        SchemaType::Number => kind::INTEGER | kind::FLOAT,
        SchemaType::Integer => kind::INTEGER,
        SchemaType::Boolean => kind::BOOL,
        SchemaType::Object => kind::OBJECT,
        SchemaType::Array => kind::ARRAY,
        SchemaType::Any => u8::MAX,
    }
}

/// A spec compiled for the valid path ([`object_ok`]): one small slot per
/// property, so that matching a key and checking a plain value read neither
/// the property's name nor the property. Built on first use, kept by the
/// spec, dropped when the spec changes.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    slots: Box<[Slot]>,
    /// The string enums' values: length and fingerprint.
    strings: Box<[(usize, (u64, u64))]>,
    /// The integer enums' values.
    integers: Box<[i64]>,
    /// Bit `i`: property `i` is required.
    required: u64,
    /// Bit `i`: property `i` is optional and has a default.
    defaults: u64,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The name: its length and [`fingerprint`].
    len: usize,
    words: (u64, u64),
    /// The kinds of value the property takes.
    accepts: u8,
    /// What else there is to check once the kind fits.
    then: Then,
    required: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// Nothing: the kind is all.
    Nothing,
    /// An array whose elements need only be of these kinds.
    Elements(u8),
    /// A string that must be one of `strings[a..b]` (none longer than 16 bytes).
    OneOfStrings(u32, u32),
    /// An integer that must be one of `integers[a..b]`.
    OneOfIntegers(u32, u32),
    /// An object with declared properties.
    Object,
    /// An array of objects with declared properties.
    Objects,
    /// The property itself: an enum, bounds, declared properties, or items
    /// with more than a kind to check.
    Prop,
}

impl Plan {
    /// `None` above 64 properties (the masks' width): such a spec always
    /// takes the full walk.
    fn build(spec: &SchemaSpec) -> Option<Plan> {
        if spec.props.len() > 64 {
            return None;
        }
        let mut required = 0;
        let mut defaults = 0;
        let mut strings = Vec::new();
        let mut integers = Vec::new();
        let slots = spec
            .props
            .iter()
            .enumerate()
            .map(|(index, (name, prop))| {
                if prop.required {
                    required |= 1 << index;
                } else if prop.default.is_some() {
                    defaults |= 1 << index;
                }
                Slot {
                    len: name.len(),
                    words: fingerprint(name.as_bytes()),
                    accepts: accepts(prop.ty),
                    then: then_of(prop, &mut strings, &mut integers),
                    required: prop.required,
                }
            })
            .collect();
        Some(Plan {
            slots,
            strings: strings.into(),
            integers: integers.into(),
            required,
            defaults,
        })
    }
}

fn then_of(
    prop: &SchemaProp,
    strings: &mut Vec<(usize, (u64, u64))>,
    integers: &mut Vec<i64>,
) -> Then {
    let plain = |p: &SchemaProp| p.enum_values.is_none() && p.bounds.is_none();
    if prop.bounds.is_some() {
        return Then::Prop;
    }
    if let Some(values) = &prop.enum_values {
        let range = |a: usize, b: usize| (u32::try_from(a).ok(), u32::try_from(b).ok());
        if prop.ty == SchemaType::String
            && values
                .iter()
                .all(|v| v.as_str().is_some_and(|s| s.len() <= 16))
        {
            let start = strings.len();
            strings.extend(values.iter().filter_map(Value::as_str).map(|s| {
                let s = s.as_bytes();
                (s.len(), fingerprint(s))
            }));
            if let (Some(a), Some(b)) = range(start, strings.len()) {
                return Then::OneOfStrings(a, b);
            }
        } else if prop.ty == SchemaType::Integer && values.iter().all(Value::is_i64) {
            let start = integers.len();
            integers.extend(values.iter().filter_map(Value::as_i64));
            if let (Some(a), Some(b)) = range(start, integers.len()) {
                return Then::OneOfIntegers(a, b);
            }
        }
        return Then::Prop;
    }
    match prop.ty {
        SchemaType::Object if prop.properties.is_some() => Then::Object,
        SchemaType::Array => match prop.items.as_deref() {
            None => Then::Nothing,
            Some(items) if !plain(items) => Then::Prop,
            Some(items) => match items.ty {
                SchemaType::Object if items.properties.is_some() => Then::Objects,
                SchemaType::Object | SchemaType::Array => Then::Prop,
                ty => Then::Elements(accepts(ty)),
            },
        },
        _ => Then::Nothing,
    }
}

/// Two words that, with the length, tell names of up to 16 bytes apart
/// exactly: the first and last 8 bytes (overlapping below 16), the first
/// and last 4 below 8, the bytes themselves below 4.
#[inline(always)]
fn fingerprint(b: &[u8]) -> (u64, u64) {
    let n = b.len();
    let word8 = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
    let word4 = |at: usize| {
        u64::from(u32::from_le_bytes(
            b[at..at + 4].try_into().unwrap_or([0; 4]),
        ))
    };
    if n >= 8 {
        (word8(0), word8(n - 8))
    } else if n >= 4 {
        (word4(0), word4(n - 4))
    } else {
        let mut word = 0u64;
        for (i, &byte) in b.iter().enumerate() {
            word |= u64::from(byte) << (8 * i);
        }
        (word, 0)
    }
}

impl SchemaSpec {
    fn plan(&self) -> Option<&Plan> {
        self.plan.get_or_init(|| Plan::build(self)).as_ref()
    }
}

/// The index of the property named `key` (of length `len` and fingerprint
/// `words`), trying `hint` first: keys sent in declaration order match there.
#[inline(always)]
fn find_slot(spec: &SchemaSpec, slots: &[Slot], key: &str, hint: usize) -> Option<usize> {
    let len = key.len();
    let words = fingerprint(key.as_bytes());
    let is = |index: usize, slot: &Slot| {
        slot.len == len && slot.words == words && (len <= 16 || spec.props[index].0 == key)
    };
    if let Some(slot) = slots.get(hint) {
        if is(hint, slot) {
            return Some(hint);
        }
    }
    slots
        .iter()
        .enumerate()
        .position(|(index, slot)| is(index, slot))
}

/// The valid path of [`check_object`]: `true` when `map` has no violation,
/// setting `fill` exactly as `check_object` would. `false` means "walk it
/// again with [`check_object`]": there is a violation, or the object is one
/// this pass does not decide (over 64 properties, an enum value equal only
/// by numeric value). Values are checked in the order the object holds them,
/// as nothing is reported here.
fn object_ok(spec: &SchemaSpec, map: &Map<String, Value>, fill: &mut bool) -> bool {
    let Some(plan) = spec.plan() else {
        return false;
    };
    let slots = &*plan.slots;
    let mut seen: u64 = 0;
    let mut hint = 0;
    for (key, value) in map {
        let Some(index) = find_slot(spec, slots, key, hint) else {
            if spec.closed {
                return false;
            }
            continue;
        };
        hint = index + 1;
        seen |= 1 << index;
        let slot = &slots[index];
        let kind = kind_of(value);
        if kind == kind::NULL {
            if slot.required {
                return false;
            }
            *fill = true;
            continue;
        }
        if kind & slot.accepts == 0 {
            return false;
        }
        match slot.then {
            Then::Nothing => {}
            Then::Elements(accepts) => {
                if let Value::Array(elements) = value {
                    if !elements.iter().all(|e| kind_of(e) & accepts != 0) {
                        return false;
                    }
                }
            }
            Then::OneOfStrings(a, b) => {
                let Value::String(s) = value else {
                    return false;
                };
                let s = s.as_bytes();
                let (len, words) = (s.len(), fingerprint(s));
                let values = &plan.strings[a as usize..b as usize];
                if !values.iter().any(|&(l, w)| l == len && w == words) {
                    return false;
                }
            }
            Then::OneOfIntegers(a, b) => {
                let Some(n) = value.as_i64() else {
                    return false;
                };
                if !plan.integers[a as usize..b as usize].contains(&n) {
                    return false;
                }
            }
            Then::Object => {
                let (Value::Object(map), Some(nested)) = (value, &spec.props[index].1.properties)
                else {
                    return false;
                };
                if !object_ok(nested, map, fill) {
                    return false;
                }
            }
            Then::Objects => {
                let (Value::Array(elements), Some(items)) = (value, &spec.props[index].1.items)
                else {
                    return false;
                };
                let Some(nested) = &items.properties else {
                    return false;
                };
                for element in elements {
                    let Value::Object(map) = element else {
                        return false;
                    };
                    if !object_ok(nested, map, fill) {
                        return false;
                    }
                }
            }
            Then::Prop => {
                if !value_ok(&spec.props[index].1, value, fill) {
                    return false;
                }
            }
        }
    }
    if seen & plan.required != plan.required {
        return false;
    }
    if plan.defaults & !seen != 0 {
        *fill = true;
    }
    true
}

/// The valid path of [`check_value`], as [`object_ok`] is of [`check_object`].
fn value_ok(prop: &SchemaProp, value: &Value, fill: &mut bool) -> bool {
    if !type_matches(prop.ty, value) {
        return false;
    }
    if let Some(values) = &prop.enum_values {
        if !enum_contains(values, value) {
            return false;
        }
    }
    if let Some(bounds) = &prop.bounds {
        if !bounds_ok(bounds, value) {
            return false;
        }
    }
    match value {
        Value::Object(map) => match &prop.properties {
            Some(spec) => object_ok(spec, map, fill),
            None => true,
        },
        Value::Array(elements) => match &prop.items {
            Some(items) => elements
                .iter()
                .all(|element| value_ok(items, element, fill)),
            None => true,
        },
        _ => true,
    }
}

/// Whether [`check_bounds`] finds nothing: the same code, so the two cannot
/// disagree. A value within bounds allocates nothing.
#[inline(never)]
fn bounds_ok(bounds: &Bounds, value: &Value) -> bool {
    let mut problems = Vec::new();
    check_bounds(bounds, value, &Path::Root, &mut problems);
    problems.is_empty()
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
    let ascii_key = key.is_ascii();
    for (name, _) in &spec.props {
        let ascii = ascii_key && name.is_ascii() && name.len() < ASCII_ROW;
        if ascii && key.len().abs_diff(name.len()) > 2 && !contains_either(key, name) {
            // At least that many edits: neither near nor containing.
            continue;
        }
        let (distance, longer) = if ascii {
            (
                edit_distance_ascii(key.as_bytes(), name.as_bytes()),
                key.len().max(name.len()),
            )
        } else {
            (
                edit_distance(key, name, &mut row),
                key.chars().count().max(name.chars().count()),
            )
        };
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
    let short = short.as_bytes();
    short.len() >= 3
        && long
            .as_bytes()
            .windows(short.len())
            .any(|w| w[0].eq_ignore_ascii_case(&short[0]) && w.eq_ignore_ascii_case(short))
}

/// Names shorter than this are compared by [`edit_distance_ascii`].
const ASCII_ROW: usize = 64;

/// [`edit_distance`] for ASCII text, `b` shorter than [`ASCII_ROW`]: over
/// bytes, with the row on the stack.
fn edit_distance_ascii(a: &[u8], b: &[u8]) -> usize {
    let mut row = [0usize; ASCII_ROW];
    for (j, cell) in row.iter_mut().enumerate().take(b.len() + 1) {
        *cell = j;
    }
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            let cost = usize::from(!ca.eq_ignore_ascii_case(cb));
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + cost);
            diagonal = above;
        }
    }
    row[b.len()]
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
    let key = key.as_bytes();
    head.iter()
        .position(|(name, _)| same_bytes(name.as_bytes(), key))
        .map(|i| i + start)
        .or_else(|| {
            tail.iter()
                .position(|(name, _)| same_bytes(name.as_bytes(), key))
        })
}

/// `a == b`, inline for the short strings that property names and enum
/// values are: lengths first, then at most two overlapping word loads up to
/// 16 bytes, where a call to `memcmp` would cost more than the comparison.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        if n > 16 {
            return a == b;
        }
        let word =
            |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
        word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8)
    } else if n >= 4 {
        let word =
            |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
        word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4)
    } else {
        a.iter().zip(b).all(|(x, y)| x == y)
    }
}

/// Whether `value` is one of `values` by exact JSON equality (what
/// `values.contains(value)` answers), with strings compared inline.
fn enum_contains(values: &[Value], value: &Value) -> bool {
    match value {
        Value::String(s) => {
            let s = s.as_bytes();
            values
                .iter()
                .any(|v| matches!(v, Value::String(v) if same_bytes(v.as_bytes(), s)))
        }
        Value::Number(n) => values
            .iter()
            .any(|v| matches!(v, Value::Number(v) if v == n)),
        Value::Bool(b) => values.iter().any(|v| matches!(v, Value::Bool(v) if v == b)),
        _ => values.contains(value),
    }
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
        if !enum_contains(values, value) && !by_value() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The full walk's answer: its violations and `fill`.
    fn full(spec: &SchemaSpec, args: &Value) -> (usize, bool) {
        let mut out = Vec::new();
        let mut fill = false;
        if let Value::Object(map) = args {
            check_object(spec, map, &Path::Root, &mut out, &mut fill);
        }
        (out.len(), fill)
    }

    fn spec() -> SchemaSpec {
        SchemaSpec::new()
            .prop("s", SchemaProp::string().required())
            .prop(
                "e",
                SchemaProp::string()
                    .one_of(["a", "bb", "a-very-long-value-here"])
                    .default_value("a"),
            )
            .prop(
                "i",
                SchemaProp::integer().enum_values([1.into(), (-2).into(), u64::MAX.into()]),
            )
            .prop("n", SchemaProp::number().minimum(0).maximum(10))
            .prop("b", SchemaProp::boolean().default_value(true))
            .prop("any", SchemaProp::any())
            .prop("a-property-name-longer-than-16", SchemaProp::string())
            .prop("len", SchemaProp::string().min_length(2))
            .prop(
                "o",
                SchemaProp::object(
                    SchemaSpec::new()
                        .prop("x", SchemaProp::integer().required())
                        .prop("y", SchemaProp::number().default_value(1)),
                )
                .closed(),
            )
            .prop("free", SchemaProp::any_object())
            .prop("tags", SchemaProp::array(SchemaProp::string()))
            .prop("nums", SchemaProp::array(SchemaProp::number()).max_items(2))
            .prop("anys", SchemaProp::array(SchemaProp::any()))
            .prop(
                "objs",
                SchemaProp::array(SchemaProp::object(
                    SchemaSpec::new().prop("h", SchemaProp::string().required()),
                )),
            )
            .prop(
                "nested",
                SchemaProp::array(SchemaProp::array(SchemaProp::integer())),
            )
            .prop(
                "ne",
                SchemaProp::number().enum_values([1.into(), json!(2.5)]),
            )
    }

    fn samples() -> Vec<Value> {
        vec![
            Value::Null,
            json!(true),
            json!(0),
            json!(1),
            json!(-2),
            json!(u64::MAX),
            json!(1.0),
            json!(2.5),
            json!(11),
            json!(""),
            json!("a"),
            json!("bb"),
            json!("ab"),
            json!("a-very-long-value-here"),
            json!("a-very-long-value-hers"),
            json!([]),
            json!(["a", "b"]),
            json!(["a", 1]),
            json!([1, 2, 3]),
            json!([1.5]),
            json!([null]),
            json!([[1], [2]]),
            json!([[1], ["x"]]),
            json!([{"h": "x"}]),
            json!([{"h": 1}]),
            json!([{}]),
            json!([1]),
            json!({}),
            json!({"x": 1}),
            json!({"x": 1, "y": null}),
            json!({"x": 1, "z": 2}),
            json!({"x": null}),
            json!({"y": 2}),
        ]
    }

    #[test]
    fn the_lean_pass_agrees_with_the_full_walk() {
        let spec = spec();
        let base = json!({
            "s": "x", "e": "bb", "i": -2, "n": 5, "b": false, "any": null,
            "a-property-name-longer-than-16": "x", "len": "xy",
            "o": {"x": 1}, "free": {"k": 1}, "tags": ["a"], "nums": [1, 2.5],
            "anys": [null, 1], "objs": [{"h": "x"}], "nested": [[1]], "ne": 2.5
        });
        let keys: Vec<String> = base.as_object().unwrap().keys().cloned().collect();
        let mut cases = vec![base.clone(), json!({"s": "x"}), json!({})];
        for key in &keys {
            let mut without = base.clone();
            without.as_object_mut().unwrap().shift_remove(key);
            cases.push(without);
            for sample in samples() {
                let mut changed = base.clone();
                changed[key.as_str()] = sample;
                cases.push(changed);
            }
        }
        let mut extra = base.clone();
        extra["undeclared"] = json!(1);
        cases.push(extra);
        let mut reordered: Map<String, Value> = Map::new();
        for key in keys.iter().rev() {
            reordered.insert(key.clone(), base[key.as_str()].clone());
        }
        cases.push(Value::Object(reordered));
        let (mut valid, mut invalid) = (0, 0);
        for args in &cases {
            let map = args.as_object().unwrap();
            let mut fill = false;
            let lean = object_ok(&spec, map, &mut fill);
            let (violations, full_fill) = full(&spec, args);
            if lean {
                valid += 1;
                assert_eq!(violations, 0, "the lean pass passed {args}");
                assert_eq!(fill, full_fill, "fill differs for {args}");
            } else {
                invalid += 1;
            }
            let (out, decode_fill) = spec.validate_for_decode(args);
            assert_eq!((out.len(), decode_fill), full(&spec, args), "{args}");
        }
        assert!(
            valid > 50 && invalid > 50,
            "{valid} valid, {invalid} invalid"
        );
    }

    #[test]
    fn a_changed_spec_is_planned_again() {
        let spec = SchemaSpec::new().prop("a", SchemaProp::string());
        assert!(spec.validate(&json!({"b": 1})).is_empty());
        let spec = spec.closed();
        assert_eq!(spec.validate(&json!({"b": 1})).len(), 1);
        let mut spec = spec;
        spec.insert("b", SchemaProp::integer());
        assert!(spec.validate(&json!({"b": 1})).is_empty());
        spec.insert("b", SchemaProp::string());
        assert_eq!(spec.validate(&json!({"b": 1})).len(), 1);
        let clone = spec.clone();
        assert_eq!(clone, spec);
        assert_eq!(clone.validate(&json!({"b": 1})).len(), 1);
    }
}
