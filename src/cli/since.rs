//! `--since WHEN` as people type it (issue 29, item 11): spans in words (`2minutes`, `1 hour`),
//! and a date and time without a zone, read as local time, besides what `record::clock` reads
//! (`30m`, an RFC 3339 date or time).
//!
//! The one thing here that is not argv: a zone-less time is turned into an instant by `date`
//! (coreutils), which knows the local time zone and its daylight saving rules; agentsh carries
//! no time zone database.

use crate::record::clock::{self, Since};

/// Parses `--since` (clap's value parser for `agentsh log` and `agentsh stats`).
pub fn parse(text: &str) -> Result<Since, String> {
    let t = text.trim();
    if let Ok(since) = clock::parse_since(t) {
        return Ok(since);
    }
    if let Some(span) = span_in_words(t) {
        return clock::parse_since(&span);
    }
    if let Some(local) = zoneless(t) {
        return local_instant(&local).map(|ms| Since::At { ms }).ok_or_else(|| {
            format!("cannot read {t} as local time (`date` could not convert it); add a zone: {t}Z or {t}+02:00")
        });
    }
    Err(format!("{}; a time without a zone is local time (2025-06-01T09:00)", clock::SINCE_HELP))
}

/// `2minutes`, `2 minutes`, `1hour`, `3 days` as the short form `record::clock` reads.
fn span_in_words(t: &str) -> Option<String> {
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = t.split_at(split);
    let unit = match unit.trim_start().to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "m" | "min" | "mins" | "minute" | "minutes" => "m",
        "h" | "hr" | "hrs" | "hour" | "hours" => "h",
        "d" | "day" | "days" => "d",
        "w" | "wk" | "week" | "weeks" => "w",
        _ => return None,
    };
    (!n.is_empty()).then(|| format!("{n}{unit}"))
}

/// `2025-06-01T09:00`, `2025-06-01 09:00:30`: a date and a time with no zone, as `date -d`
/// reads it (`2025-06-01 09:00:30`). Only digits in their places pass: nothing else reaches
/// `date`.
fn zoneless(t: &str) -> Option<String> {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let date = b.len() >= 16
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't' | b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16);
    let seconds = match b.len() {
        16 => true,
        19 => b[16] == b':' && digits(17..19),
        _ => false,
    };
    // The fields must make a real date: checked as UTC, so `date` never guesses.
    let full = if b.len() == 16 { format!("{}:00", &t[..16]) } else { t.to_string() };
    (date && seconds && clock::parse_rfc3339(&format!("{}Z", full.replacen(['t', ' '], "T", 1))).is_some())
        .then(|| format!("{} {}", &full[..10], &full[11..]))
}

/// The instant (ms since the epoch) of a local date and time, from `date`.
fn local_instant(local: &str) -> Option<i64> {
    instant_in(local, None)
}

/// [`local_instant`] in the time zone `tz` (a `TZ` value) when given, else the process's.
fn instant_in(local: &str, tz: Option<&str>) -> Option<i64> {
    let mut date = std::process::Command::new("date");
    if let Some(tz) = tz {
        date.env("TZ", tz);
    }
    let out = date
        .args(["-d", local, "+%s"])
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let secs: i64 = String::from_utf8(out.stdout).ok()?.trim().parse().ok()?;
    out.status.success().then_some(secs * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_in_words_and_local_times() {
        assert_eq!(parse("2minutes"), Ok(Since::Ago { ms: 120_000 }));
        assert_eq!(parse("2 minutes"), Ok(Since::Ago { ms: 120_000 }));
        assert_eq!(parse("1hour"), Ok(Since::Ago { ms: 3_600_000 }));
        assert_eq!(parse("3 Days"), Ok(Since::Ago { ms: 3 * 86_400_000 }));
        assert_eq!(parse("30m"), Ok(Since::Ago { ms: 1_800_000 }));
        assert_eq!(parse("2024-06-01T09:30:05Z"), Ok(Since::At { ms: 1_717_234_205_000 }));
        // Local time, whatever the zone: `date` agrees with itself.
        let want = local_instant("2024-06-01 09:30:00").expect("date works here");
        assert_eq!(parse("2024-06-01T09:30"), Ok(Since::At { ms: want }));
        assert_eq!(parse("2024-06-01 09:30:00"), Ok(Since::At { ms: want }));
        for bad in ["2minute s", "1y", "soon", "2024-06-01T25:00", "2024-02-30T09:00", "2024-06-01T09:30:00;rm", "-1h"]
        {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse("soon").unwrap_err().contains("local time"));
        // The zone is the local one: five and a half hours east of UTC, 09:30 is 04:00 UTC.
        let utc = clock::parse_rfc3339("2024-06-01T04:00:00Z").unwrap();
        assert_eq!(instant_in(&zoneless("2024-06-01T09:30").unwrap(), Some("IST-5:30")), Some(utc));
    }
}
