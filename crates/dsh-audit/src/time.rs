//! Times as the log writes and `dsh audit --since` reads them: RFC 3339 in
//! UTC with milliseconds, computed by hand (no time crate needed for a
//! calendar this simple: the proleptic Gregorian one, no leap seconds).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 before it).
pub fn epoch_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `2026-03-01T12:34:56.789Z` for milliseconds since the epoch.
pub fn format_rfc3339_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rest = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// Milliseconds since the epoch of an RFC 3339 time (`2026-03-01T12:34:56Z`,
/// fractions and offsets allowed, `t` or a space for `T`), or of a date
/// (`2026-03-01`, midnight UTC).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.trim().as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().all(u8::is_ascii_digit).then_some(())?;
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&mo) {
        return None;
    }
    if !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    if b.len() == 10 {
        return Some(days * 86_400_000);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut at = 19;
    let mut ms = 0;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
        let digits = &text.trim()[start..at.min(start + 3)];
        ms = digits.parse::<i64>().ok()? * 10_i64.pow(3 - digits.len() as u32);
    }
    let offset = match b.get(at) {
        Some(b'Z' | b'z') if b.len() == at + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == at + 6 && b.get(at + 3) == Some(&b':') => {
            let minutes = num(at + 1, 2)? * 60 + num(at + 4, 2)?;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    Some(days * 86_400_000 + ((h * 60 + mi - offset) * 60 + s) * 1000 + ms)
}

/// A duration as `--since` takes it: a number and a unit, `ms`, `s`, `m`,
/// `h`, `d` or `w` (`90s`, `15m`, `2h`, `7d`); several add up (`1h30m`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total: u64 = 0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let ms = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 7 * 86_400_000,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(ms)?)?;
        rest = &rest[unit_len..];
    }
    Some(Duration::from_millis(total))
}

/// Howard Hinnant's `civil_from_days`: (year, month, day) of a day number.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The inverse: the day number of (year, month, day).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_known_instants() {
        assert_eq!(format_rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T23:59:59.123Z, a leap day.
        let leap = 1_709_251_199_123;
        assert_eq!(format_rfc3339_ms(leap), "2024-02-29T23:59:59.123Z");
        assert_eq!(parse_rfc3339("2024-02-29T23:59:59.123Z"), Some(leap));
        assert_eq!(parse_rfc3339("2024-03-01T01:59:59.123+02:00"), Some(leap));
        assert_eq!(parse_rfc3339("2024-02-29"), Some(leap - leap % 86_400_000));
        assert_eq!(parse_rfc3339("2024-02-29T23:59"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
        for ms in [1, 951_782_400_000, 4_102_444_800_000, 1_234_567_890_987] {
            assert_eq!(parse_rfc3339(&format_rfc3339_ms(ms)), Some(ms));
        }
    }

    #[test]
    fn durations_add_up() {
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2d"), Some(Duration::from_secs(172_800)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration("h"), None);
        assert_eq!(parse_duration("3y"), None);
    }
}
