//! Schedules: when a job runs, parsed from what a model writes, and the
//! next run after a given instant.

use std::fmt::Write as _;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{Timestamp, Zoned};
use serde::{Deserialize, Serialize};

/// How far in the past an `at` time may be and still be accepted (as "run
/// now"): a model that asks for "now" or "in a moment" writes a time that
/// has passed by the time the call runs.
pub const AT_PAST_TOLERANCE_MS: i64 = 60_000;

/// The longest `every` interval: a year. Longer ones are cron or `at` jobs.
pub const MAX_EVERY_MS: u64 = 366 * 24 * 3_600_000;

/// When a job runs, as stored.
///
/// # Wire format
///
/// JSON with a `kind` tag, times in milliseconds since the Unix epoch:
/// `{"kind": "at", "at_ms": 1767258000000}`,
/// `{"kind": "every", "every_ms": 300000, "anchor_ms": 1767258000000}`,
/// `{"kind": "cron", "expr": "0 9 * * 1-5", "tz": "Europe/Madrid"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Schedule {
    /// Once, at this instant.
    At {
        /// The instant, in milliseconds since the Unix epoch.
        at_ms: i64,
    },
    /// Every `every_ms` milliseconds, at `anchor_ms + k × every_ms` for
    /// k = 1, 2, …
    Every {
        /// The interval.
        every_ms: u64,
        /// The start the interval counts from (the job's creation).
        anchor_ms: i64,
    },
    /// At the times a 5-field cron expression names, on the wall clock of
    /// an IANA time zone.
    Cron {
        /// The expression: minute hour day-of-month month day-of-week.
        expr: String,
        /// The IANA time zone the expression is read in.
        tz: String,
    },
}

/// Why a schedule cannot be used. The messages are written for the model
/// that asked for it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// A cron expression without exactly five fields.
    #[error(
        "cron expression `{expr}` has {found} fields; use 5: minute hour day-of-month month day-of-week (e.g. `0 9 * * 1-5` for 09:00 on weekdays)"
    )]
    FieldCount {
        /// The expression.
        expr: String,
        /// How many fields it has.
        found: usize,
    },
    /// A cron expression the parser refuses.
    #[error(
        "invalid cron expression `{expr}`; the fields are minute (0-59) hour (0-23) day-of-month (1-31) month (1-12) day-of-week (0-7, 0 and 7 = Sunday)"
    )]
    InvalidCron {
        /// The expression.
        expr: String,
        /// The parser's reason.
        #[source]
        source: croner::errors::CronError,
    },
    /// A cron expression that matches no time (`0 0 30 2 *`).
    #[error("cron expression `{expr}` never matches a real date and time")]
    NeverMatches {
        /// The expression.
        expr: String,
    },
    /// A time-zone name the time-zone database does not know.
    #[error(
        "unknown time zone `{zone}`; use an IANA name such as `UTC`, `Europe/Madrid` or `America/New_York`"
    )]
    UnknownZone {
        /// The name.
        zone: String,
    },
    /// An `at` time that is not ISO 8601.
    #[error(
        "`at` must be an ISO 8601 date and time, e.g. `2026-05-01T09:00:00+02:00` (or without the offset for the local time zone); got `{text}`"
    )]
    InvalidAt {
        /// What was given.
        text: String,
    },
    /// An `at` date without a time of day.
    #[error("`at` `{text}` has no time of day; give one, e.g. `{text}T09:00`")]
    AtNeedsTime {
        /// What was given.
        text: String,
    },
    /// A local `at` time the clocks skip (spring forward).
    #[error(
        "{local} does not exist in {zone}: the clocks jump from {before} to {after} there; pick a time outside the skipped hour"
    )]
    AtInGap {
        /// The local time asked for.
        local: String,
        /// The zone.
        zone: String,
        /// The UTC offset before the jump.
        before: String,
        /// The UTC offset after the jump.
        after: String,
    },
    /// An `at` time that has passed.
    #[error("`at` {at} is in the past (it is now {now}); call get_datetime and give a future time")]
    AtInPast {
        /// The time asked for.
        at: String,
        /// The current time.
        now: String,
    },
    /// An instant outside the range the clock library supports.
    #[error("the time {ms} ms since 1970 is out of range")]
    OutOfRange {
        /// The instant.
        ms: i64,
    },
    /// An interval under the configured minimum.
    #[error("`everyMs` {every_ms} is too short: the minimum is {min_ms} ms ({})", human_ms(*min_ms))]
    EveryTooShort {
        /// The interval asked for.
        every_ms: u64,
        /// The minimum.
        min_ms: u64,
    },
    /// An interval over [`MAX_EVERY_MS`].
    #[error(
        "`everyMs` {every_ms} is too long: the maximum is {MAX_EVERY_MS} ms (366 days); use a cron or `at` schedule"
    )]
    EveryTooLong {
        /// The interval asked for.
        every_ms: u64,
    },
}

/// The time zone named `name`.
pub(crate) fn zone(name: &str) -> Result<TimeZone, ScheduleError> {
    TimeZone::get(name).map_err(|_| ScheduleError::UnknownZone {
        zone: name.to_owned(),
    })
}

/// A timestamp from milliseconds since the Unix epoch.
pub(crate) fn timestamp(ms: i64) -> Result<Timestamp, ScheduleError> {
    Timestamp::from_millisecond(ms).map_err(|_| ScheduleError::OutOfRange { ms })
}

/// Parses a cron expression: exactly five fields (minute hour day-of-month
/// month day-of-week), or a nickname (`@hourly`, `@daily`, `@weekly`,
/// `@monthly`, `@yearly`).
///
/// # Rules
///
/// 1. Fields are separated by white space; names (`MON`, `JAN`) and the
///    usual operators (`*`, `,`, `-`, `/`, and croner's `L`, `W`, `#`)
///    are accepted; seconds and years are not (they are refused with the
///    field count).
/// 2. As in Vixie cron, when both day-of-month and day-of-week are
///    restricted, a day matching either runs.
/// 3. An expression that parses but never matches (`0 0 30 2 *`) is
///    refused when its next run is computed ([`ScheduleError::NeverMatches`]).
pub fn parse_cron(expr: &str) -> Result<Cron, ScheduleError> {
    let trimmed = expr.trim();
    let found = trimmed.split_whitespace().count();
    if !trimmed.starts_with('@') && found != 5 {
        return Err(ScheduleError::FieldCount {
            expr: trimmed.to_owned(),
            found,
        });
    }
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(trimmed)
        .map_err(|source| ScheduleError::InvalidCron {
            expr: trimmed.to_owned(),
            source,
        })
}

/// Parses an `at` time: ISO 8601 with an offset (`2026-05-01T09:00:00+02:00`,
/// `…Z`, optionally with a `[Zone/Name]` annotation), or a local date and
/// time without one, read in `local`.
///
/// # Rules
///
/// 1. With an offset, the instant is exact; `local` is not used.
/// 2. Without one, the wall-clock time is read in `local`. A time the
///    clocks skip there (the spring-forward hour) is refused
///    ([`ScheduleError::AtInGap`]): it never shows on a clock, so the
///    model is asked to choose. A time the clocks show twice (the
///    fall-back hour) is its first occurrence, the earlier instant.
/// 3. A date alone is refused ([`ScheduleError::AtNeedsTime`]): a
///    reminder "on Friday" has no time yet.
pub fn parse_at(text: &str, local: &TimeZone) -> Result<Timestamp, ScheduleError> {
    let text = text.trim();
    let invalid = || ScheduleError::InvalidAt {
        text: text.to_owned(),
    };
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Ok(ts);
    }
    if let Ok(zoned) = text.parse::<Zoned>() {
        return Ok(zoned.timestamp());
    }
    if !text.contains(':') {
        return Err(if text.parse::<jiff::civil::Date>().is_ok() {
            ScheduleError::AtNeedsTime {
                text: text.to_owned(),
            }
        } else {
            invalid()
        });
    }
    let civil: DateTime = text.parse().map_err(|_| invalid())?;
    let ambiguous = local.to_ambiguous_zoned(civil);
    match ambiguous.offset() {
        AmbiguousOffset::Gap { before, after } => Err(ScheduleError::AtInGap {
            local: civil.strftime("%Y-%m-%d %H:%M").to_string(),
            zone: local
                .iana_name()
                .unwrap_or("the local time zone")
                .to_owned(),
            before: format!("UTC{before}"),
            after: format!("UTC{after}"),
        }),
        AmbiguousOffset::Unambiguous { .. } | AmbiguousOffset::Fold { .. } => ambiguous
            .earlier()
            .map(|z| z.timestamp())
            .map_err(|_| invalid()),
    }
}

/// The first run of `schedule` strictly after `after`, or `None` when it
/// will not run again.
///
/// # Rules
///
/// 1. `at`: its instant if that is after `after`, else none.
/// 2. `every`: the first `anchor + k × every` (k ≥ 1) after `after`; runs
///    keep their phase, however late the scheduler was.
/// 3. `cron`: the first wall-clock time the expression matches in its zone
///    after `after`, with Vixie cron's rules at daylight-saving changes
///    (croner's). A *fixed-time* job, whose minute and hour fields each
///    name one value (`30 2 * * *`), runs once a matching day: at the
///    first instant after the jump when the clocks skip its time (03:00
///    that day), at the first of the two when they repeat it. Any other
///    job (a wildcard, step, list or range in the minute or hour field:
///    `30 * * * *`, `*/15 * * * *`) runs at every real instant it matches:
///    in both passes of a repeated hour, and not at all in a skipped one.
pub fn next_run(schedule: &Schedule, after: Timestamp) -> Result<Option<Timestamp>, ScheduleError> {
    match schedule {
        Schedule::At { at_ms } => {
            let at = timestamp(*at_ms)?;
            Ok((at > after).then_some(at))
        }
        Schedule::Every {
            every_ms,
            anchor_ms,
        } => {
            let every = i128::from((*every_ms).max(1));
            let anchor = i128::from(*anchor_ms);
            let after_ms = i128::from(after.as_millisecond());
            let k = if after_ms < anchor {
                1
            } else {
                (after_ms - anchor) / every + 1
            };
            let next = anchor + k * every;
            let next =
                i64::try_from(next).map_err(|_| ScheduleError::OutOfRange { ms: i64::MAX })?;
            timestamp(next).map(Some)
        }
        Schedule::Cron { expr, tz } => {
            let cron = parse_cron(expr)?;
            let start = after.to_zoned(zone(tz)?);
            match cron.find_next_occurrence(&start, false) {
                Ok(next) => Ok(Some(next.timestamp())),
                Err(
                    croner::errors::CronError::TimeSearchLimitExceeded
                    | croner::errors::CronError::InvalidDate
                    | croner::errors::CronError::InvalidTime,
                ) => Err(ScheduleError::NeverMatches { expr: expr.clone() }),
                Err(source) => Err(ScheduleError::InvalidCron {
                    expr: expr.clone(),
                    source,
                }),
            }
        }
    }
}

/// Checks an `every` interval against the minimum and [`MAX_EVERY_MS`].
pub(crate) fn check_every(every_ms: u64, min_ms: u64) -> Result<(), ScheduleError> {
    if every_ms < min_ms {
        return Err(ScheduleError::EveryTooShort { every_ms, min_ms });
    }
    if every_ms > MAX_EVERY_MS {
        return Err(ScheduleError::EveryTooLong { every_ms });
    }
    Ok(())
}

/// A schedule in words, for people and models: `at 2026-05-01 09:00 CEST
/// (+02:00)`, `every 5m`, ``cron `0 9 * * 1-5` in Europe/Madrid``.
pub fn describe(schedule: &Schedule, display: &TimeZone) -> String {
    match schedule {
        Schedule::At { at_ms } => match timestamp(*at_ms) {
            Ok(at) => format!("at {}", show_time(at, display)),
            Err(_) => format!("at {at_ms} ms"),
        },
        Schedule::Every { every_ms, .. } => format!("every {}", human_ms(*every_ms)),
        Schedule::Cron { expr, tz } => format!("cron `{expr}` in {tz}"),
    }
}

/// An instant on `zone`'s clock: `Fri 2026-05-01 09:00 CEST (+02:00)`.
pub fn show_time(ts: Timestamp, zone: &TimeZone) -> String {
    ts.to_zoned(zone.clone())
        .strftime("%a %Y-%m-%d %H:%M %Z (%:z)")
        .to_string()
}

/// A duration in milliseconds as `1d 2h 3m 4s` (and `250ms` under a
/// second).
pub fn human_ms(ms: u64) -> String {
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    let mut secs = ms / 1_000;
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] {
        if secs >= size {
            if !out.is_empty() {
                out.push(' ');
            }
            let _ = write!(out, "{}{unit}", secs / size);
            secs %= size;
        }
    }
    out
}

/// Parses an interval a model wrote: milliseconds as a number or numeric
/// string (`300000`), or a duration with units (`5m`, `1h30m`, `90s`,
/// `2d`, `500ms`). `None` when it is neither.
pub fn parse_interval(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    if let Ok(ms) = text.parse::<u64>() {
        return Some(ms);
    }
    let mut total: u64 = 0;
    let mut rest = text.as_str();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        rest = rest.trim_start();
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let value: u64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000,
            "d" | "day" | "days" => 86_400_000,
            _ => return None,
        };
        total = total.checked_add(value.checked_mul(factor)?)?;
        rest = &rest[unit_len..];
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn cron(expr: &str, tz: &str) -> Schedule {
        Schedule::Cron {
            expr: expr.to_owned(),
            tz: tz.to_owned(),
        }
    }

    /// (expression, zone, after, next run), across the 2026 daylight-saving
    /// changes of New York (spring forward 2026-03-08 02:00 EST → 03:00
    /// EDT; fall back 2026-11-01 02:00 EDT → 01:00 EST) and of Madrid
    /// (2026-03-29 02:00 → 03:00; 2026-10-25 03:00 → 02:00).
    const NEXT_RUNS: &[(&str, &str, &str, &str)] = &[
        // Plain days.
        (
            "0 9 * * *",
            "UTC",
            "2026-01-05T08:00:00Z",
            "2026-01-05T09:00:00Z",
        ),
        (
            "0 9 * * *",
            "UTC",
            "2026-01-05T09:00:00Z",
            "2026-01-06T09:00:00Z",
        ),
        (
            "0 9 * * 1-5",
            "Europe/Madrid",
            "2026-01-09T09:00:00Z",
            "2026-01-12T08:00:00Z",
        ),
        (
            "*/15 * * * *",
            "UTC",
            "2026-01-05T08:07:30Z",
            "2026-01-05T08:15:00Z",
        ),
        (
            "@daily",
            "UTC",
            "2026-01-05T08:00:00Z",
            "2026-01-06T00:00:00Z",
        ),
        (
            "0 0 1 * *",
            "UTC",
            "2026-01-31T12:00:00Z",
            "2026-02-01T00:00:00Z",
        ),
        (
            "0 12 29 2 *",
            "UTC",
            "2026-03-01T00:00:00Z",
            "2028-02-29T12:00:00Z",
        ),
        // Spring forward, New York: 02:30 does not exist on 2026-03-08; the
        // fixed-time job runs at the first instant after the jump, 03:00 EDT.
        (
            "30 2 * * *",
            "America/New_York",
            "2026-03-08T06:00:00Z",
            "2026-03-08T07:00:00Z",
        ),
        // ... and the next day at 02:30 EDT again.
        (
            "30 2 * * *",
            "America/New_York",
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:30:00Z",
        ),
        // A job at 09:00 local keeps 09:00 across the change: 14:00Z before, 13:00Z after.
        (
            "0 9 * * *",
            "America/New_York",
            "2026-03-07T15:00:00Z",
            "2026-03-08T13:00:00Z",
        ),
        // An hourly-wildcard job skips the missing hour: 01:30 EST, then 03:30 EDT.
        (
            "30 * * * *",
            "America/New_York",
            "2026-03-08T06:30:00Z",
            "2026-03-08T07:30:00Z",
        ),
        // Fall back, New York: 01:30 happens twice on 2026-11-01. The
        // fixed-time job runs once, at the first (EDT, 05:30Z) ...
        (
            "30 1 * * *",
            "America/New_York",
            "2026-11-01T05:00:00Z",
            "2026-11-01T05:30:00Z",
        ),
        // ... and not at the second (EST, 06:30Z): the next is the next day.
        (
            "30 1 * * *",
            "America/New_York",
            "2026-11-01T05:30:00Z",
            "2026-11-02T06:30:00Z",
        ),
        // The wildcard-hour job runs in both passes of the repeated hour.
        (
            "30 * * * *",
            "America/New_York",
            "2026-11-01T05:30:00Z",
            "2026-11-01T06:30:00Z",
        ),
        // Madrid: 02:30 skipped on 2026-03-29 → 03:00 CEST (01:00Z).
        (
            "30 2 * * *",
            "Europe/Madrid",
            "2026-03-28T12:00:00Z",
            "2026-03-29T01:00:00Z",
        ),
        // Madrid: 02:30 repeated on 2026-10-25 → the first, CEST (00:30Z).
        (
            "30 2 * * *",
            "Europe/Madrid",
            "2026-10-24T12:00:00Z",
            "2026-10-25T00:30:00Z",
        ),
        (
            "30 2 * * *",
            "Europe/Madrid",
            "2026-10-25T00:30:00Z",
            "2026-10-26T01:30:00Z",
        ),
    ];

    #[test]
    fn cron_next_runs_across_daylight_saving_changes() {
        for (expr, tz, after, expected) in NEXT_RUNS {
            let next = next_run(&cron(expr, tz), ts(after)).unwrap();
            assert_eq!(next, Some(ts(expected)), "`{expr}` in {tz} after {after}");
        }
    }

    #[test]
    fn invalid_cron_expressions_are_refused_with_the_reason() {
        let cases: &[(&str, &str)] = &[
            ("", "has 0 fields; use 5"),
            ("* * * *", "has 4 fields; use 5"),
            ("0 0 9 * * *", "has 6 fields; use 5"),
            ("0 0 9 * * * 2026", "has 7 fields"),
            ("61 * * * *", "invalid cron expression `61 * * * *`"),
            ("* 24 * * *", "invalid cron expression"),
            ("* * 32 * *", "invalid cron expression"),
            ("* * * 13 *", "invalid cron expression"),
            ("* * * * 8", "invalid cron expression"),
            ("a b c d e", "invalid cron expression"),
            ("*/0 * * * *", "invalid cron expression"),
            ("@reboot", "invalid cron expression"),
        ];
        for (expr, expected) in cases {
            let error = parse_cron(expr).map(drop).unwrap_err().to_string();
            assert!(error.contains(expected), "`{expr}`: {error}");
        }
        let never = next_run(&cron("0 0 30 2 *", "UTC"), ts("2026-01-01T00:00:00Z"));
        assert!(
            matches!(never, Err(ScheduleError::NeverMatches { .. })),
            "{never:?}"
        );
        let zone = next_run(
            &cron("0 9 * * *", "Mars/Olympus"),
            ts("2026-01-01T00:00:00Z"),
        );
        assert!(
            zone.unwrap_err()
                .to_string()
                .contains("unknown time zone `Mars/Olympus`")
        );
    }

    #[test]
    fn at_times_with_and_without_offsets() {
        let ny = zone("America/New_York").unwrap();
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("2026-05-01T09:00:00+02:00", Ok("2026-05-01T07:00:00Z")),
            ("2026-05-01T07:00:00Z", Ok("2026-05-01T07:00:00Z")),
            (
                "2026-05-01T09:00:00+02:00[Europe/Madrid]",
                Ok("2026-05-01T07:00:00Z"),
            ),
            (" 2026-05-01T07:00Z ", Ok("2026-05-01T07:00:00Z")),
            // Local time in the configured zone (EDT, -04:00).
            ("2026-05-01T09:00", Ok("2026-05-01T13:00:00Z")),
            ("2026-05-01 09:00:00", Ok("2026-05-01T13:00:00Z")),
            // Winter: EST, -05:00.
            ("2026-01-15T09:00", Ok("2026-01-15T14:00:00Z")),
            // Fall back: 01:30 happens twice; the first (EDT) is taken.
            ("2026-11-01T01:30", Ok("2026-11-01T05:30:00Z")),
            // Spring forward: 02:30 never shows on a New York clock.
            (
                "2026-03-08T02:30",
                Err(
                    "2026-03-08 02:30 does not exist in America/New_York: the clocks jump from UTC-05 to UTC-04",
                ),
            ),
            ("2026-05-01", Err("has no time of day")),
            ("tomorrow at 9", Err("must be an ISO 8601 date and time")),
            ("2026-13-01T09:00", Err("must be an ISO 8601")),
            ("", Err("must be an ISO 8601")),
        ];
        for (text, expected) in cases {
            let got = parse_at(text, &ny).map_err(|e| e.to_string());
            match (expected, got) {
                (Ok(want), Ok(ts)) => assert_eq!(ts, self::ts(want), "{text}"),
                (Err(want), Err(error)) => assert!(error.contains(want), "{text}: {error}"),
                (want, got) => panic!("{text}: expected {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn at_and_every_next_runs() {
        let at = Schedule::At {
            at_ms: ts("2026-05-01T07:00:00Z").as_millisecond(),
        };
        assert_eq!(
            next_run(&at, ts("2026-05-01T06:59:59Z")).unwrap(),
            Some(ts("2026-05-01T07:00:00Z"))
        );
        // At or after its instant, a one-shot job has no next run.
        assert_eq!(next_run(&at, ts("2026-05-01T07:00:00Z")).unwrap(), None);
        assert_eq!(next_run(&at, ts("2027-01-01T00:00:00Z")).unwrap(), None);

        let anchor = ts("2026-01-01T00:00:00Z");
        let every = Schedule::Every {
            every_ms: 5 * 60_000,
            anchor_ms: anchor.as_millisecond(),
        };
        let cases: &[(&str, &str)] = &[
            // Before the anchor, and at it: the first run is one interval on.
            ("2025-12-31T00:00:00Z", "2026-01-01T00:05:00Z"),
            ("2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z"),
            ("2026-01-01T00:04:59Z", "2026-01-01T00:05:00Z"),
            ("2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z"),
            // Three days late: the phase is kept, with no catch-up runs.
            ("2026-01-04T10:02:00Z", "2026-01-04T10:05:00Z"),
        ];
        for (after, expected) in cases {
            assert_eq!(
                next_run(&every, ts(after)).unwrap(),
                Some(ts(expected)),
                "{after}"
            );
        }
    }

    #[test]
    fn intervals_and_their_limits() {
        let cases: &[(&str, Option<u64>)] = &[
            ("300000", Some(300_000)),
            (" 60000 ", Some(60_000)),
            ("5m", Some(300_000)),
            ("5 min", Some(300_000)),
            ("1h30m", Some(5_400_000)),
            ("1h 30m", Some(5_400_000)),
            ("90s", Some(90_000)),
            ("2d", Some(172_800_000)),
            ("2 hours", Some(7_200_000)),
            ("500ms", Some(500)),
            ("5M", Some(300_000)),
            ("", None),
            ("five minutes", None),
            ("5x", None),
            ("-5m", None),
            ("m5", None),
            ("99999999999999999999d", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_interval(text), *expected, "{text:?}");
        }
        assert!(check_every(60_000, 60_000).is_ok());
        let short = check_every(1_000, 60_000).unwrap_err().to_string();
        assert!(short.contains("minimum is 60000 ms (1m)"), "{short}");
        assert!(check_every(MAX_EVERY_MS + 1, 60_000).is_err());
        assert_eq!(human_ms(5_400_000), "1h 30m");
        assert_eq!(human_ms(90_061_000), "1d 1h 1m 1s");
        assert_eq!(human_ms(250), "250ms");
    }

    #[test]
    fn schedules_in_words_and_as_stored() {
        let madrid = zone("Europe/Madrid").unwrap();
        let at = Schedule::At {
            at_ms: ts("2026-05-01T07:00:00Z").as_millisecond(),
        };
        assert_eq!(
            describe(&at, &madrid),
            "at Fri 2026-05-01 09:00 CEST (+02:00)"
        );
        assert_eq!(
            describe(&cron("0 9 * * 1-5", "Europe/Madrid"), &madrid),
            "cron `0 9 * * 1-5` in Europe/Madrid"
        );
        let every = Schedule::Every {
            every_ms: 300_000,
            anchor_ms: 5,
        };
        assert_eq!(describe(&every, &madrid), "every 5m");
        assert_eq!(
            serde_json::to_value(&every).unwrap(),
            serde_json::json!({"kind": "every", "every_ms": 300_000, "anchor_ms": 5})
        );
        assert_eq!(
            serde_json::from_value::<Schedule>(
                serde_json::json!({"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"})
            )
            .unwrap(),
            cron("0 9 * * *", "UTC")
        );
    }
}
