//! Wall-clock time as the audit trail writes and reads it: RFC 3339 in UTC, and `--since` values
//! (`30m`, `2d`, an RFC 3339 date or time). Pure arithmetic on milliseconds since the Unix epoch;
//! only [`now_ms`] reads the clock. No time zone database: everything is shown in UTC.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (negative before 1970).
pub fn now_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// `2025-06-01T09:30:05.123Z`.
pub fn format_rfc3339(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// Parses an RFC 3339 date-time (`2025-06-01T09:30:05Z`, `2025-06-01 09:30:05.5+02:00`) or a
/// full date (`2025-06-01`, meaning its midnight UTC). Returns milliseconds since the epoch.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m as u32) as i64 {
        return None;
    }
    let day_ms = days_from_civil(y, m as u32, d as u32) * 86_400_000;
    if b.len() == 10 {
        return Some(day_ms);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 20 || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, min, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    // 60 allows a leap second, as RFC 3339 does.
    if h > 23 || min > 59 || s > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ms = 0;
    if b.get(i) == Some(&b'.') {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let first3: String = text[i + 1..i + 1 + digits.min(3)].to_string();
        frac_ms = format!("{first3:0<3}").parse::<i64>().ok()?;
        i += 1 + digits;
    }
    let offset_min = match &text[i..] {
        "Z" | "z" => 0,
        tz if tz.len() == 6 && matches!(&tz[..1], "+" | "-") && &tz[3..4] == ":" => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let sign = if &tz[..1] == "-" { -1 } else { 1 };
            sign * (oh * 60 + om)
        }
        _ => return None,
    };
    Some(day_ms + ((h * 60 + min - offset_min) * 60 + s) * 1000 + frac_ms)
}

/// A `--since` value: a span before now, or a point in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Since {
    Ago { ms: i64 },
    At { ms: i64 },
}

impl Since {
    /// The earliest time (ms since the epoch) that is shown.
    pub fn cutoff(self, now_ms: i64) -> i64 {
        match self {
            Since::Ago { ms } => now_ms.saturating_sub(ms),
            Since::At { ms } => ms,
        }
    }
}

pub const SINCE_HELP: &str = "expected a span before now such as 90s, 30m, 1h, 2d or 1w, or an RFC 3339 date or time such as \
     2025-06-01 or 2025-06-01T09:00:00Z";

/// Parses a `--since` value (clap's value parser for `agentsh log` and `agentsh stats`).
pub fn parse_since(text: &str) -> Result<Since, String> {
    let t = text.trim();
    if let Some(ms) = parse_rfc3339(t) {
        return Ok(Since::At { ms });
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let unit_ms: i64 = match unit {
        "s" | "sec" | "secs" => 1000,
        "m" | "min" | "mins" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        "w" | "week" | "weeks" => 7 * 86_400_000,
        _ => return Err(SINCE_HELP.to_string()),
    };
    match n.parse::<i64>().ok().and_then(|n| n.checked_mul(unit_ms)) {
        Some(ms) if ms > 0 => Ok(Since::Ago { ms }),
        _ => Err(SINCE_HELP.to_string()),
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        // `date -u -d @1717234205 +%FT%T` = 2024-06-01T09:30:05
        assert_eq!(format_rfc3339(1_717_234_205_123), "2024-06-01T09:30:05.123Z");
        assert_eq!(format_rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z"); // leap day
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for ms in [0, 1_717_234_205_123, 951_782_400_000, 4_102_444_800_000, -86_400_000] {
            assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Some(ms), "{ms}");
        }
        assert_eq!(parse_rfc3339("2024-06-01T11:30:05+02:00"), Some(1_717_234_205_000));
        assert_eq!(parse_rfc3339("2024-06-01 09:30:05.1z"), Some(1_717_234_205_100));
        assert_eq!(parse_rfc3339("2024-06-01"), Some(1_717_200_000_000));
        for bad in ["", "2024-13-01", "2023-02-29", "2024-06-01T25:00:00Z", "2024-06-01T09:30:05", "yesterday"] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn since_takes_spans_and_times() {
        assert_eq!(parse_since("30m"), Ok(Since::Ago { ms: 1_800_000 }));
        assert_eq!(parse_since("1h"), Ok(Since::Ago { ms: 3_600_000 }));
        assert_eq!(parse_since("2d"), Ok(Since::Ago { ms: 172_800_000 }));
        assert_eq!(parse_since("2024-06-01"), Ok(Since::At { ms: 1_717_200_000_000 }));
        assert_eq!(Since::Ago { ms: 10 }.cutoff(100), 90);
        for bad in ["", "h", "0h", "-1h", "1y", "1.5h", "soon", "99999999999999999d"] {
            assert!(parse_since(bad).is_err(), "{bad}");
        }
    }
}
