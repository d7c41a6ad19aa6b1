//! The `convert_time` group: `convert_time(time, to, from?)`, the same
//! instant shown in another IANA zone, beside `get_datetime` (on the same
//! zone database, `jiff`'s).
//!
//! Off by default (`tools.convert_time.enabled`), so that a prompt carries
//! it only where it is wanted; harmless, so a workspace's file may switch
//! it on before the user trusts it.
//!
//! # Rules
//!
//! 1. `time` with an offset or `Z` (`2026-03-29T01:30:00Z`,
//!    `2026-03-29T03:30:00+02:00`) or with a bracketed zone
//!    (`2026-03-29T03:30:00[Europe/Madrid]`) names an instant by itself;
//!    `from`, when given, must agree with a bracketed zone.
//! 2. A civil time (`2026-03-29 09:15`, `2026-03-29T09:15:00`) is read in
//!    `from`, which it then needs. A civil time a clock skips (spring
//!    forward) or shows twice (fall back) is taken as `jiff` takes it by
//!    default: the later offset for a gap, the earlier for a fold.
//! 3. Zones are IANA names; an unknown one is refused with examples.

use std::sync::Arc;

use async_trait::async_trait;
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned, civil};
use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::{
    Effects, EffectsError, Group, GroupContext, GroupError, OptInSection, Sensitivity, Tool,
    ToolAnnotations, ToolContext, ToolGroup, ToolResult, TypedTool,
};

/// The system-prompt block of the `convert_time` group.
pub const INSTRUCTIONS: &str = "## Time zones
To say what time it is or was somewhere else, call `convert_time`; never work out offsets or daylight saving time yourself.";

/// The `convert_time` group, switched by `tools.convert_time.enabled`
/// (off by default).
#[derive(Debug, Clone, Copy, Default)]
pub struct ConvertTimeGroup;

impl Group for ConvertTimeGroup {
    fn name(&self) -> &'static str {
        "convert_time"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("convert_time")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[""]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["convert_time"]
    }

    fn build(&self, ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError> {
        let section = ctx.section::<OptInSection>()?;
        let tools: Vec<Arc<dyn Tool>> = if section.enabled {
            vec![Arc::new(ConvertTime)]
        } else {
            Vec::new()
        };
        Ok(ToolGroup::new(self.name(), INSTRUCTIONS, tools))
    }
}

/// Arguments of `convert_time`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConvertTimeArgs {
    /// The time: `2026-03-29 09:15` (read in `from`), or with an offset
    /// (`2026-03-29T09:15:00+02:00`, `…Z`) or a zone
    /// (`2026-03-29T09:15:00[Europe/Madrid]`).
    pub time: String,
    /// The IANA zone to show it in, e.g. `America/New_York`.
    pub to: String,
    /// The IANA zone a time without offset is in, e.g. `Europe/Madrid`.
    #[serde(default)]
    pub from: Option<String>,
}

/// `convert_time`: one instant, shown in another zone.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConvertTime;

fn zone(name: &str) -> Result<TimeZone, String> {
    TimeZone::get(name).map_err(|_| {
        format!(
            "unknown time zone `{name}`; use an IANA name such as `UTC`, `Europe/Madrid` or `America/New_York`"
        )
    })
}

/// The instant `time` names (rules 1 and 2).
fn instant(time: &str, from: Option<&str>) -> Result<Zoned, String> {
    let time = time.trim();
    if let Ok(zoned) = time.parse::<Zoned>() {
        if let Some(from) = from {
            let asked = zone(from)?;
            if zoned.time_zone().iana_name() != asked.iana_name() {
                return Err(format!(
                    "`{time}` names its own zone, which is not `{from}`: drop `from` or the zone"
                ));
            }
        }
        return Ok(zoned);
    }
    if let Ok(stamp) = time.parse::<Timestamp>() {
        return Ok(stamp.to_zoned(TimeZone::UTC));
    }
    let civil = time.parse::<civil::DateTime>().map_err(|_| {
        format!(
            "`{time}` is not a time toolgate reads: write `2026-03-29 09:15`, `2026-03-29T09:15:00+02:00` or `2026-03-29T09:15:00Z`"
        )
    })?;
    let Some(from) = from else {
        return Err(format!(
            "`{time}` has no offset: say which zone it is in with `from`, e.g. `Europe/Madrid`"
        ));
    };
    civil
        .to_zoned(zone(from)?)
        .map_err(|e| format!("`{time}` in `{from}`: {e}"))
}

/// `zoned` for people: date, time, abbreviation, zone and offset.
fn show(zoned: &Zoned) -> String {
    format!(
        "{} {} ({}, UTC{})",
        zoned.strftime("%A %Y-%m-%d %H:%M:%S"),
        zoned.strftime("%Z"),
        zoned.time_zone().iana_name().unwrap_or("UTC"),
        zoned.strftime("%:z"),
    )
}

#[async_trait]
impl TypedTool for ConvertTime {
    type Args = ConvertTimeArgs;
    const NAME: &'static str = "convert_time";
    const DESCRIPTION: &'static str = "Convert a date and time to another time zone (IANA names), \
        daylight saving time included. Example: {\"time\": \"2026-03-29 09:15\", \"from\": \
        \"Europe/Madrid\", \"to\": \"America/New_York\"}";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
    }

    /// None: it reads the time-zone database only.
    fn effects(&self, _args: &ConvertTimeArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: ConvertTimeArgs, _ctx: &ToolContext) -> ToolResult {
        let converted = instant(&args.time, args.from.as_deref())
            .and_then(|at| Ok((zone(&args.to)?, at)))
            .map(|(to, at)| (at.with_time_zone(to), at));
        let (there, at) = match converted {
            Ok(found) => found,
            Err(message) => return ToolResult::failure(message),
        };
        let iso = |z: &Zoned| z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string();
        ToolResult::success(format!("{}\n= {}", show(&at), show(&there)))
            .with_metadata("from", iso(&at))
            .with_metadata("to", iso(&there))
            .with_metadata("timezone", args.to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(time: &str, from: Option<&str>, to: &str) -> ToolResult {
        let args = ConvertTimeArgs {
            time: time.to_owned(),
            to: to.to_owned(),
            from: from.map(str::to_owned),
        };
        ConvertTime.run(args, &ToolContext::new("t")).await
    }

    #[tokio::test]
    async fn conversions() {
        // (time, from, to, the converted time with its offset)
        let cases: &[(&str, Option<&str>, &str, &str)] = &[
            // Winter: Madrid +01:00, New York -05:00.
            (
                "2026-01-15 09:15",
                Some("Europe/Madrid"),
                "America/New_York",
                "2026-01-15T03:15:00-05:00",
            ),
            // The week the US has moved to summer time and Europe not yet.
            (
                "2026-03-20T09:15:00",
                Some("Europe/Madrid"),
                "America/New_York",
                "2026-03-20T04:15:00-04:00",
            ),
            (
                "2026-06-01T12:00:00Z",
                None,
                "Asia/Kolkata",
                "2026-06-01T17:30:00+05:30",
            ),
            (
                "2026-06-01T12:00:00+02:00",
                Some("UTC"),
                "UTC",
                "2026-06-01T10:00:00+00:00",
            ),
            (
                "2026-06-01T12:00:00[Australia/Sydney]",
                None,
                "UTC",
                "2026-06-01T02:00:00+00:00",
            ),
            // 02:30 does not exist in Madrid that night: the later offset.
            (
                "2026-03-29 02:30",
                Some("Europe/Madrid"),
                "UTC",
                "2026-03-29T01:30:00+00:00",
            ),
        ];
        for (time, from, to, expected) in cases {
            let result = run(time, *from, to).await;
            assert!(result.success, "{time}: {:?}", result.error);
            assert_eq!(result.metadata["to"], *expected, "{time} {from:?} → {to}");
        }
    }

    #[tokio::test]
    async fn refusals() {
        let cases: &[(&str, Option<&str>, &str, &str)] = &[
            ("2026-01-15 09:15", None, "UTC", "has no offset"),
            ("09:15 tomorrow", Some("UTC"), "UTC", "is not a time"),
            (
                "2026-01-15 09:15",
                Some("Mars/Olympus"),
                "UTC",
                "unknown time zone `Mars/Olympus`",
            ),
            (
                "2026-01-15T09:15:00Z",
                None,
                "Nowhere",
                "unknown time zone `Nowhere`",
            ),
            (
                "2026-01-15T09:15:00[Europe/Madrid]",
                Some("Asia/Tokyo"),
                "UTC",
                "names its own zone",
            ),
        ];
        for (time, from, to, message) in cases {
            let result = run(time, *from, to).await;
            assert!(!result.success, "{time}: {}", result.output);
            let error = result.error.unwrap_or_default();
            assert!(error.contains(message), "{time}: {error}");
        }
    }
}
