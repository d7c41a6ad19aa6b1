//! Time tools (seed 002 `get_datetime`).

/// The system-prompt block of the `datetime` group.
pub const INSTRUCTIONS: &str = "## Date and time
Never guess today's date or the time: call get_datetime.";

use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate_core::{
    Effects, EffectsError, Group, GroupContext, GroupError, Sensitivity, Tool, ToolAnnotations,
    ToolContext, ToolGroup, ToolResult, TypedTool,
};

/// `tools.datetime:`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DateTimeSection {
    /// Whether `get_datetime` is registered. Default: true.
    pub enabled: bool,
    /// IANA zone used when a call names none. Default: the system zone.
    pub timezone: Option<String>,
}

impl Default for DateTimeSection {
    fn default() -> Self {
        Self {
            enabled: true,
            timezone: None,
        }
    }
}

/// The `datetime` group: `get_datetime`, switched and given its default
/// zone by `tools.datetime`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DateTimeGroup;

impl Group for DateTimeGroup {
    fn name(&self) -> &'static str {
        "datetime"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("datetime")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &["enabled", "timezone"]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["get_datetime"]
    }

    fn build(&self, ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError> {
        let section = ctx.section::<DateTimeSection>()?;
        let tools: Vec<Arc<dyn Tool>> = if section.enabled {
            vec![Arc::new(GetDateTime::new(section.timezone.clone()))]
        } else {
            Vec::new()
        };
        Ok(ToolGroup::new(self.name(), INSTRUCTIONS, tools))
    }
}

/// Arguments of `get_datetime`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetDateTimeArgs {
    /// IANA zone, e.g. `Europe/Madrid` (default: the configured one).
    #[serde(default)]
    pub timezone: Option<String>,
}

/// `get_datetime`: the current date, time, weekday and zone.
///
/// Models should call this instead of guessing the date (seed 002).
#[derive(Debug, Clone, Default)]
pub struct GetDateTime {
    default_zone: Option<String>,
}

impl GetDateTime {
    /// A tool that reports in `default_zone` when a call names none (by
    /// default, the system zone).
    pub fn new(default_zone: Option<String>) -> Self {
        Self { default_zone }
    }

    fn zone(&self, asked: Option<&str>) -> Result<(String, TimeZone), String> {
        let Some(name) = asked.or(self.default_zone.as_deref()) else {
            let zone = local_zone().unwrap_or_else(TimeZone::system);
            let name = zone.iana_name().unwrap_or("UTC").to_owned();
            return Ok((name, zone));
        };
        TimeZone::get(name).map(|zone| (name.to_owned(), zone)).map_err(|_| {
            format!(
                "unknown time zone `{name}`; use an IANA name such as `UTC`, `Europe/Madrid` or `America/New_York`"
            )
        })
    }
}

/// The system zone read the way jiff reads it when neither `TZ` nor
/// `TZDIR` is set (`/etc/localtime`, named by its symlink into a
/// `zoneinfo/` directory), without jiff's time-zone database: opening that
/// database lists every file under `/usr/share/zoneinfo` first, a fifth of
/// a one-off `toolgate call get_datetime`. `None` whenever anything differs
/// from that plain case (jiff's own lookup then decides).
fn local_zone() -> Option<TimeZone> {
    if std::env::var_os("TZ").is_some() || std::env::var_os("TZDIR").is_some() {
        return None;
    }
    let path = std::path::Path::new("/etc/localtime");
    let target = std::fs::read_link(path).ok()?;
    let target = target.to_str()?;
    let name = &target[target.rfind("zoneinfo/")? + "zoneinfo/".len()..];
    let data = std::fs::read(path).ok()?;
    TimeZone::tzif(name, &data).ok()
}

#[async_trait]
impl TypedTool for GetDateTime {
    type Args = GetDateTimeArgs;
    const NAME: &'static str = "get_datetime";
    const DESCRIPTION: &'static str =
        "Get the current date, time, weekday and time zone. Call it instead of guessing the date.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            // The answer changes with every call.
            idempotent_hint: Some(false),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    /// None: it reads the clock and the time-zone database only.
    fn effects(&self, _args: &GetDateTimeArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: GetDateTimeArgs, _ctx: &ToolContext) -> ToolResult {
        let (name, zone) = match self.zone(args.timezone.as_deref()) {
            Ok(found) => found,
            Err(message) => return ToolResult::failure(message),
        };
        let now = Timestamp::now().to_zoned(zone);
        let iso = now.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string();
        let output = format!(
            "{weekday}, {date} {time} {abbrev} ({name}, UTC{offset})\nISO 8601: {iso}",
            weekday = now.strftime("%A"),
            date = now.strftime("%Y-%m-%d"),
            time = now.strftime("%H:%M:%S"),
            abbrev = now.strftime("%Z"),
            offset = now.strftime("%:z"),
        );
        ToolResult::success(output)
            .with_metadata("iso8601", iso)
            .with_metadata("timezone", name)
            .with_metadata("unix", json!(now.timestamp().as_second()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(tool: &GetDateTime, zone: Option<&str>) -> ToolResult {
        let args = GetDateTimeArgs {
            timezone: zone.map(str::to_owned),
        };
        tool.run(args, &ToolContext::new("t")).await
    }

    #[tokio::test]
    async fn reports_in_the_asked_zone() {
        let tool = GetDateTime::default();
        let utc = run(&tool, Some("UTC")).await;
        assert!(utc.success, "{utc:?}");
        assert!(
            utc.metadata["iso8601"]
                .as_str()
                .unwrap()
                .ends_with("+00:00")
        );
        let kolkata = run(&tool, Some("Asia/Kolkata")).await;
        assert!(
            kolkata.metadata["iso8601"]
                .as_str()
                .unwrap()
                .ends_with("+05:30")
        );
        assert!(
            kolkata.output.contains("(Asia/Kolkata, UTC+05:30)"),
            "{}",
            kolkata.output
        );
        // The same instant, whichever zone it is shown in.
        let delta =
            kolkata.metadata["unix"].as_i64().unwrap() - utc.metadata["unix"].as_i64().unwrap();
        assert!((0..5).contains(&delta));
    }

    /// The shortcut gives jiff's answer: the same zone name and the same
    /// offsets, and it is taken whenever the plain case holds here.
    #[test]
    fn local_zone_is_the_system_zone() {
        let plain = std::env::var_os("TZ").is_none()
            && std::env::var_os("TZDIR").is_none()
            && std::fs::read_link("/etc/localtime")
                .is_ok_and(|t| t.to_string_lossy().contains("zoneinfo/"));
        let system = TimeZone::system();
        match local_zone() {
            Some(zone) => {
                assert_eq!(zone.iana_name(), system.iana_name());
                for second in [0, 1_700_000_000, 1_720_000_000, 2_000_000_000] {
                    let at = Timestamp::from_second(second).unwrap();
                    assert_eq!(zone.to_offset(at), system.to_offset(at), "at {at}");
                }
            }
            None => assert!(!plain, "/etc/localtime names a zone, yet it was not read"),
        }
    }

    #[tokio::test]
    async fn default_zone_and_unknown_zone() {
        let tool = GetDateTime::new(Some("America/Argentina/Buenos_Aires".into()));
        let result = run(&tool, None).await;
        assert_eq!(
            result.metadata["timezone"],
            "America/Argentina/Buenos_Aires"
        );
        let bad = run(&tool, Some("Mars/Olympus")).await;
        assert!(!bad.success);
        assert!(
            bad.error
                .unwrap()
                .contains("unknown time zone `Mars/Olympus`")
        );
    }
}
