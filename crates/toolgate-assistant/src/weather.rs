//! The `weather` group: `get_weather(location, days?)` (seed 003's
//! `weather_tools`) on Open-Meteo, which needs no key.
//!
//! A call makes two requests: the geocoding API turns the place name into
//! coordinates (`GET {geocoding_url}/v1/search?name=…`), then the forecast
//! API gives the current weather and a daily forecast there (`GET
//! {forecast_url}/v1/forecast?latitude=…&longitude=…&current=…&daily=…
//! &timezone=auto`). Both base URLs come from the configuration, so tests
//! (and mirrors) point them elsewhere. See <https://open-meteo.com/en/docs>
//! and <https://open-meteo.com/en/docs/geocoding-api>.
//!
//! # Sensitivity and effects
//!
//! `get_weather` declares both requests as [`Effect::Network`] (the
//! forecast's coordinates are not known before the call, so its URL is
//! declared without a query) and is `Sensitive`: it sends the place the
//! model names to a third party, so under `confirm-sensitive` the user
//! sees the request before it leaves — the same rule as the web tools.
//!
//! # Rules
//!
//! 1. `location` is a place name (`Madrid`), a name with qualifiers after
//!    commas (`Paris, Texas`, `Córdoba, Argentina`), or coordinates
//!    (`40.42, -3.70`, which skip the geocoding request). Only the part
//!    before the first comma is sent to the geocoder (it matches names
//!    only); of the places it returns, the first whose country, country
//!    code or region contains every qualifier is used, else the first one.
//!    The output always names the place used, so a wrong guess is seen.
//! 2. A name the geocoder does not know is a failure that says so.
//! 3. `days` is 1 to `max_days` (default `default_days`); the forecast
//!    starts today, in the place's own time zone.
//! 4. Units are the configured ones, and are printed with every value
//!    (as Open-Meteo reports them).
//! 5. A response is read up to 1 MiB and within `timeout_secs`; an HTTP
//!    error is a failure carrying Open-Meteo's `reason` when it gives one.
//! 6. Requests go through toolgate-web's SSRF-checked client
//!    ([`toolgate_web::http`]); the hosts of the two configured base URLs
//!    are exempt from its private-address rule (the user chose them), any
//!    other host — a redirect's target — is checked.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate_core::{
    Effect, Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolResult,
    TypedTool,
};
use toolgate_web::RequestError;
use toolgate_web::http::{ClientError, HttpClient};
use url::Url;

/// The system-prompt block for the `weather` group.
pub const INSTRUCTIONS: &str = "## Weather
- For current weather or a forecast, call `get_weather` with the place, e.g. `Madrid` or `Paris, France`; add `days` (1-7) for a longer forecast.
- Never guess the weather: report what the tool returned, with its units, and say which place it was for.
- If the place is not found, ask the user to spell it out or name the country.
";

/// The most bytes read from one response (rule 5).
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// How many places the geocoder is asked for, to pick by qualifiers.
const GEOCODE_CANDIDATES: u32 = 10;

/// The current conditions asked for.
const CURRENT_FIELDS: &str = "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,wind_speed_10m";

/// The daily values asked for.
const DAILY_FIELDS: &str = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max";

/// Open-Meteo's temperature units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TemperatureUnit {
    /// °C.
    #[default]
    Celsius,
    /// °F.
    Fahrenheit,
}

/// Open-Meteo's wind speed units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindSpeedUnit {
    /// km/h.
    #[default]
    Kmh,
    /// m/s.
    Ms,
    /// mph.
    Mph,
    /// Knots.
    Kn,
}

/// Open-Meteo's precipitation units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrecipitationUnit {
    /// Millimetres.
    #[default]
    Mm,
    /// Inches.
    Inch,
}

impl TemperatureUnit {
    /// The name Open-Meteo's query takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Celsius => "celsius",
            Self::Fahrenheit => "fahrenheit",
        }
    }
}

impl WindSpeedUnit {
    /// The name Open-Meteo's query takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kmh => "kmh",
            Self::Ms => "ms",
            Self::Mph => "mph",
            Self::Kn => "kn",
        }
    }
}

impl PrecipitationUnit {
    /// The name Open-Meteo's query takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mm => "mm",
            Self::Inch => "inch",
        }
    }
}

/// The `tools.weather` section of `toolgate.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WeatherConfig {
    /// Whether `get_weather` is registered. Default: false (it sends the
    /// places asked about to Open-Meteo).
    pub enabled: bool,
    /// The geocoding API's base URL. Default:
    /// `https://geocoding-api.open-meteo.com`.
    pub geocoding_url: String,
    /// The forecast API's base URL. Default: `https://api.open-meteo.com`.
    pub forecast_url: String,
    /// Seconds one request may take. Default: 10.
    pub timeout_secs: u64,
    /// The language of place names (ISO 639-1). Default: `en`.
    pub language: String,
    /// `celsius` or `fahrenheit`. Default: `celsius`.
    pub temperature_unit: TemperatureUnit,
    /// `kmh`, `ms`, `mph` or `kn`. Default: `kmh`.
    pub wind_speed_unit: WindSpeedUnit,
    /// `mm` or `inch`. Default: `mm`.
    pub precipitation_unit: PrecipitationUnit,
    /// Days of forecast when the call does not say. Default: 3.
    pub default_days: u8,
    /// The most days a call may ask for (Open-Meteo gives up to 16).
    /// Default: 7.
    pub max_days: u8,
}

impl Default for WeatherConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            geocoding_url: "https://geocoding-api.open-meteo.com".into(),
            forecast_url: "https://api.open-meteo.com".into(),
            timeout_secs: 10,
            language: "en".into(),
            temperature_unit: TemperatureUnit::default(),
            wind_speed_unit: WindSpeedUnit::default(),
            precipitation_unit: PrecipitationUnit::default(),
            default_days: 3,
            max_days: 7,
        }
    }
}

/// A configuration `get_weather` cannot work with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WeatherError {
    /// A base URL that is not an `http` or `https` URL without a query.
    #[error("`tools.weather.{field}` is not a usable base URL (`{url}`): {reason}")]
    BadUrl {
        /// The configuration key.
        field: &'static str,
        /// Its value.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `max_days` or `default_days` out of range.
    #[error(
        "`tools.weather.max_days` must be 1 to 16 and `default_days` 1 to `max_days` (got {max_days} and {default_days})"
    )]
    Days {
        /// `max_days`.
        max_days: u8,
        /// `default_days`.
        default_days: u8,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client for get_weather")]
    Client(#[source] ClientError),
}

/// The tools of the `weather` group: `get_weather`. Empty when the group
/// is disabled.
pub fn tools(config: &WeatherConfig) -> Result<Vec<Arc<dyn Tool>>, WeatherError> {
    if !config.enabled {
        return Ok(Vec::new());
    }
    Ok(vec![Arc::new(GetWeather::new(config)?)])
}

/// Arguments of `get_weather`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetWeatherArgs {
    /// The place: a city name like `Madrid`, with the country after a comma
    /// when it is ambiguous (`Paris, France`), or coordinates `40.42, -3.70`.
    pub location: String,
    /// Days of forecast, starting today (default 3).
    #[schemars(range(min = 1, max = 16))]
    pub days: Option<u8>,
}

/// `get_weather`: current weather and a daily forecast (see the [module
/// rules](self)).
#[derive(Debug, Clone)]
pub struct GetWeather {
    config: WeatherConfig,
    geocoding: Url,
    forecast: Url,
    client: HttpClient,
}

impl GetWeather {
    /// A `get_weather` configured by `config` (its `enabled` is not read).
    pub fn new(config: &WeatherConfig) -> Result<Self, WeatherError> {
        if !(1..=16).contains(&config.max_days)
            || !(1..=config.max_days).contains(&config.default_days)
        {
            return Err(WeatherError::Days {
                max_days: config.max_days,
                default_days: config.default_days,
            });
        }
        let geocoding = endpoint("geocoding_url", &config.geocoding_url, "v1/search")?;
        let forecast = endpoint("forecast_url", &config.forecast_url, "v1/forecast")?;
        // The client is the SSRF-checked one of toolgate-web. The hosts of
        // the two configured endpoints are exempt from its private-address
        // rule: the user chose them (a self-hosted Open-Meteo, or a fake
        // on 127.0.0.1 in tests), and the model cannot change them. Every
        // other host — a redirect's target — is checked.
        let client = HttpClient::builder()
            .allow_hosts(
                [&geocoding, &forecast]
                    .into_iter()
                    .filter_map(Url::host_str),
            )
            .timeout(Duration::from_secs(config.timeout_secs.max(1)))
            .build()
            .map_err(WeatherError::Client)?;
        Ok(Self {
            config: config.clone(),
            geocoding,
            forecast,
            client,
        })
    }

    /// The geocoding request for a place name (rule 1).
    fn geocoding_url(&self, name: &str) -> Url {
        let mut url = self.geocoding.clone();
        url.query_pairs_mut()
            .append_pair("name", name)
            .append_pair("count", &GEOCODE_CANDIDATES.to_string())
            .append_pair("language", &self.config.language)
            .append_pair("format", "json");
        url
    }

    /// The forecast request for a place.
    fn forecast_url(&self, latitude: f64, longitude: f64, days: u8) -> Url {
        let mut url = self.forecast.clone();
        url.query_pairs_mut()
            .append_pair("latitude", &latitude.to_string())
            .append_pair("longitude", &longitude.to_string())
            .append_pair("current", CURRENT_FIELDS)
            .append_pair("daily", DAILY_FIELDS)
            .append_pair("timezone", "auto")
            .append_pair("forecast_days", &days.to_string())
            .append_pair("temperature_unit", self.config.temperature_unit.as_str())
            .append_pair("wind_speed_unit", self.config.wind_speed_unit.as_str())
            .append_pair(
                "precipitation_unit",
                self.config.precipitation_unit.as_str(),
            );
        url
    }

    fn days(&self, asked: Option<u8>) -> Result<u8, String> {
        let days = asked.unwrap_or(self.config.default_days);
        if (1..=self.config.max_days).contains(&days) {
            Ok(days)
        } else {
            Err(format!(
                "`days` must be 1 to {}; got {days}",
                self.config.max_days
            ))
        }
    }

    /// GETs `url` and decodes its JSON body (rule 5).
    async fn get_json(&self, url: &Url, what: &str) -> Result<Value, String> {
        let response = self
            .client
            .get(url.as_str())
            .max_body_bytes(MAX_RESPONSE_BYTES)
            .send()
            .await
            .map_err(|e| match e {
                RequestError::TooLarge { .. } => {
                    format!("the {what} service sent more than {MAX_RESPONSE_BYTES} bytes")
                }
                RequestError::Body { .. } => {
                    format!("the {what} service's answer was cut off: {}", e.reason())
                }
                _ => format!(
                    "could not reach the {what} service at {}: {}",
                    origin(url),
                    e.reason()
                ),
            })?;
        let status = response.status();
        let body = response.body();
        let json: Option<Value> = serde_json::from_slice(body).ok();
        if !response.is_success() {
            let reason = json
                .as_ref()
                .and_then(|j| j.get("reason"))
                .and_then(Value::as_str)
                .map_or_else(String::new, |r| format!(": {r}"));
            return Err(format!("the {what} service answered HTTP {status}{reason}"));
        }
        json.ok_or_else(|| format!("the {what} service did not answer with JSON"))
    }

    /// Finds the place (rule 1, 2).
    async fn place(&self, location: &str) -> Result<Place, String> {
        if let Some((latitude, longitude)) = coordinates(location) {
            return Ok(Place {
                label: format!("{latitude}, {longitude}"),
                latitude,
                longitude,
                note: None,
            });
        }
        let (name, qualifiers) = split_location(location);
        if name.is_empty() {
            return Err("`location` is empty; give a city name such as `Madrid`".into());
        }
        let answer = self
            .get_json(&self.geocoding_url(name), "geocoding")
            .await?;
        let results: Vec<GeoResult> = answer
            .get("results")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| format!("the geocoding service answered in an unknown shape: {e}"))?
            .unwrap_or_default();
        pick_place(location, name, &qualifiers, &results)
    }
}

#[async_trait]
impl TypedTool for GetWeather {
    type Args = GetWeatherArgs;
    const NAME: &'static str = "get_weather";
    const DESCRIPTION: &'static str = "Get the current weather and a daily forecast for a place \
        (Open-Meteo). `location`: a city, e.g. `Madrid` or `Paris, France`, or coordinates \
        `40.42, -3.70`. Optional `days` of forecast (default 3). Values come with their units.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only_hint: Some(false),
            destructive_hint: Some(false),
            idempotent_hint: Some(false),
            open_world_hint: Some(true),
            ..ToolAnnotations::default()
        }
    }

    /// The geocoding request (with its query) unless the location is
    /// coordinates, and the forecast request (with its query when the
    /// coordinates are known, else without).
    fn effects(&self, args: &GetWeatherArgs) -> Result<Effects, EffectsError> {
        let days = self.days(args.days).map_err(EffectsError::new)?;
        if let Some((latitude, longitude)) = coordinates(&args.location) {
            return Ok(Effects::known([Effect::Network {
                url: self.forecast_url(latitude, longitude, days).to_string(),
            }]));
        }
        let (name, _) = split_location(&args.location);
        Ok(Effects::known([
            Effect::Network {
                url: self.geocoding_url(name).to_string(),
            },
            Effect::Network {
                url: self.forecast.to_string(),
            },
        ]))
    }

    async fn run(&self, args: GetWeatherArgs, _ctx: &ToolContext) -> ToolResult {
        let days = match self.days(args.days) {
            Ok(days) => days,
            Err(message) => return ToolResult::failure(message),
        };
        let place = match self.place(&args.location).await {
            Ok(place) => place,
            Err(message) => return ToolResult::failure(message),
        };
        let url = self.forecast_url(place.latitude, place.longitude, days);
        let forecast = match self.get_json(&url, "forecast").await {
            Ok(forecast) => forecast,
            Err(message) => return ToolResult::failure(message),
        };
        let text = match summary(&place, &forecast) {
            Ok(text) => text,
            Err(message) => return ToolResult::failure(message),
        };
        ToolResult::success(text)
            .with_metadata(
                "place",
                json!({"name": place.label, "latitude": place.latitude, "longitude": place.longitude}),
            )
            .with_metadata("current", forecast.get("current").cloned().unwrap_or(Value::Null))
            .with_metadata("daily", forecast.get("daily").cloned().unwrap_or(Value::Null))
    }
}

/// A place the forecast is for.
#[derive(Debug, Clone, PartialEq)]
struct Place {
    /// How the output names it: `Paris, Île-de-France, France`.
    label: String,
    latitude: f64,
    longitude: f64,
    /// Said before the weather, when the qualifiers matched no place.
    note: Option<String>,
}

/// One place of the geocoder's answer (the fields used).
#[derive(Debug, Clone, Deserialize)]
struct GeoResult {
    name: String,
    latitude: f64,
    longitude: f64,
    #[serde(default)]
    country: Option<String>,
    #[serde(default)]
    country_code: Option<String>,
    #[serde(default)]
    admin1: Option<String>,
    #[serde(default)]
    admin2: Option<String>,
}

impl GeoResult {
    fn label(&self) -> String {
        let mut parts = vec![self.name.as_str()];
        for part in [&self.admin1, &self.country].into_iter().flatten() {
            if !parts.contains(&part.as_str()) {
                parts.push(part);
            }
        }
        parts.join(", ")
    }

    /// Whether `qualifier` names this place's country or region.
    fn matches(&self, qualifier: &str) -> bool {
        let q = qualifier.to_lowercase();
        [&self.country, &self.admin1, &self.admin2]
            .into_iter()
            .flatten()
            .any(|field| field.to_lowercase().contains(&q))
            || self
                .country_code
                .as_deref()
                .is_some_and(|code| code.eq_ignore_ascii_case(qualifier))
    }
}

/// Rule 1: the first place whose fields match every qualifier, else the
/// first place.
fn pick_place(
    location: &str,
    name: &str,
    qualifiers: &[&str],
    results: &[GeoResult],
) -> Result<Place, String> {
    let Some(first) = results.first() else {
        return Err(format!(
            "no place called `{name}` was found; check the spelling, or give a larger city nearby"
        ));
    };
    let chosen = results
        .iter()
        .find(|r| qualifiers.iter().all(|q| r.matches(q)));
    let (chosen, note) = match chosen {
        Some(chosen) => (chosen, None),
        None => (
            first,
            Some(format!(
                "No `{name}` matched `{}`; showing the first place of that name.",
                location.split_once(',').map_or("", |(_, rest)| rest).trim()
            )),
        ),
    };
    Ok(Place {
        label: chosen.label(),
        latitude: chosen.latitude,
        longitude: chosen.longitude,
        note,
    })
}

/// The name before the first comma, and the qualifiers after it.
fn split_location(location: &str) -> (&str, Vec<&str>) {
    let mut parts = location.split(',').map(str::trim);
    let name = parts.next().unwrap_or("");
    (name, parts.filter(|p| !p.is_empty()).collect())
}

/// `location` as coordinates, when it is two numbers in range.
fn coordinates(location: &str) -> Option<(f64, f64)> {
    let (lat, lon) = location.split_once(',')?;
    let latitude: f64 = lat.trim().parse().ok()?;
    let longitude: f64 = lon.trim().parse().ok()?;
    ((-90.0..=90.0).contains(&latitude) && (-180.0..=180.0).contains(&longitude))
        .then_some((latitude, longitude))
}

/// A base URL plus the API path: `http(s)`, no query or fragment.
fn endpoint(field: &'static str, base: &str, path: &str) -> Result<Url, WeatherError> {
    let bad = |reason: &str| WeatherError::BadUrl {
        field,
        url: base.to_owned(),
        reason: reason.to_owned(),
    };
    let mut url = Url::parse(base).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("only http and https are supported"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("give the base URL without a query or fragment"));
    }
    let joined = format!("{}/{path}", url.path().trim_end_matches('/'));
    url.set_path(&joined);
    Ok(url)
}

/// Where a URL points, for messages (no path or query).
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// What a WMO weather code means (Open-Meteo's table).
fn describe_code(code: i64) -> &'static str {
    match code {
        0 => "clear sky",
        1 => "mainly clear",
        2 => "partly cloudy",
        3 => "overcast",
        45 => "fog",
        48 => "depositing rime fog",
        51 => "light drizzle",
        53 => "moderate drizzle",
        55 => "dense drizzle",
        56 | 57 => "freezing drizzle",
        61 => "slight rain",
        63 => "moderate rain",
        65 => "heavy rain",
        66 | 67 => "freezing rain",
        71 => "slight snow",
        73 => "moderate snow",
        75 => "heavy snow",
        77 => "snow grains",
        80 => "slight rain showers",
        81 => "moderate rain showers",
        82 => "violent rain showers",
        85 => "slight snow showers",
        86 => "heavy snow showers",
        95 => "thunderstorm",
        96 | 99 => "thunderstorm with hail",
        _ => "unknown conditions",
    }
}

/// The readable summary of a forecast answer (rule 4).
fn summary(place: &Place, forecast: &Value) -> Result<String, String> {
    let shape = || "the forecast service answered in an unknown shape".to_owned();
    let current = forecast.get("current").ok_or_else(shape)?;
    let current_units = forecast.get("current_units").unwrap_or(&Value::Null);
    let daily = forecast.get("daily").ok_or_else(shape)?;
    let daily_units = forecast.get("daily_units").unwrap_or(&Value::Null);

    let mut out = String::new();
    if let Some(note) = &place.note {
        out.push_str(note);
        out.push('\n');
    }
    let _ = write!(
        out,
        "Weather for {} ({:.2}, {:.2})",
        place.label, place.latitude, place.longitude
    );
    if let Some(zone) = forecast.get("timezone").and_then(Value::as_str) {
        let _ = write!(out, ", local time zone {zone}");
    }
    let value = |obj: &Value, units: &Value, key: &str| -> Option<String> {
        let number = obj.get(key)?.as_f64()?;
        let unit = units.get(key).and_then(Value::as_str).unwrap_or("");
        Some(with_unit(number, unit))
    };
    let time = current.get("time").and_then(Value::as_str).unwrap_or("now");
    let code = current.get("weather_code").and_then(Value::as_i64);
    let _ = write!(
        out,
        "\nNow ({time}): {}",
        code.map_or("conditions unknown", describe_code)
    );
    if let Some(t) = value(current, current_units, "temperature_2m") {
        let _ = write!(out, ", {t}");
        if let Some(feels) = value(current, current_units, "apparent_temperature") {
            let _ = write!(out, " (feels like {feels})");
        }
    }
    for (key, label) in [
        ("relative_humidity_2m", "humidity"),
        ("wind_speed_10m", "wind"),
        ("precipitation", "precipitation"),
    ] {
        if let Some(v) = value(current, current_units, key) {
            let _ = write!(out, ", {label} {v}");
        }
    }

    let dates = daily
        .get("time")
        .and_then(Value::as_array)
        .ok_or_else(shape)?;
    let column = |key: &str, i: usize| -> Option<String> {
        let number = daily.get(key)?.get(i)?.as_f64()?;
        let unit = daily_units.get(key).and_then(Value::as_str).unwrap_or("");
        Some(with_unit(number, unit))
    };
    out.push_str("\nForecast:");
    for (i, date) in dates.iter().enumerate() {
        let date = date.as_str().unwrap_or("?");
        let code = daily
            .get("weather_code")
            .and_then(|c| c.get(i))
            .and_then(Value::as_i64);
        let _ = write!(
            out,
            "\n- {date}: {}",
            code.map_or("conditions unknown", describe_code)
        );
        if let (Some(low), Some(high)) = (
            column("temperature_2m_min", i),
            column("temperature_2m_max", i),
        ) {
            let _ = write!(out, ", {low} to {high}");
        }
        if let Some(rain) = column("precipitation_sum", i) {
            let _ = write!(out, ", precipitation {rain}");
            if let Some(chance) = column("precipitation_probability_max", i) {
                let _ = write!(out, " ({chance} chance)");
            }
        }
    }
    Ok(out)
}

/// A value and its unit as Open-Meteo names it: `5.2 °C`, `80 %`.
fn with_unit(number: f64, unit: &str) -> String {
    let number = crate::calc::format_number(number);
    if unit.is_empty() {
        number
    } else {
        format!("{number} {unit}")
    }
}

/// The `weather` group, `tools.weather` (off by default; where requests go needs trust).
#[derive(Debug, Clone, Copy, Default)]
pub struct WeatherGroup;

impl toolgate_core::Group for WeatherGroup {
    fn name(&self) -> &'static str {
        "weather"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("weather")
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["get_weather"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<WeatherConfig>()?;
        let tools = tools(section).map_err(|e| toolgate_core::GroupError::Config(Box::new(e)))?;
        Ok(toolgate_core::ToolGroup::new(
            "weather",
            INSTRUCTIONS,
            tools,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_split_into_name_qualifiers_or_coordinates() {
        type Case<'a> = (&'a str, Option<(f64, f64)>, &'a str, &'a [&'a str]);
        let cases: &[Case<'_>] = &[
            ("Madrid", None, "Madrid", &[]),
            ("Paris, France", None, "Paris", &["France"]),
            ("  Córdoba , Argentina, ", None, "Córdoba", &["Argentina"]),
            ("40.42, -3.70", Some((40.42, -3.70)), "40.42", &["-3.70"]),
            ("-33.9,151.2", Some((-33.9, 151.2)), "-33.9", &["151.2"]),
            // Out of range: a name, not coordinates.
            ("91, 10", None, "91", &["10"]),
            ("", None, "", &[]),
        ];
        for (location, coords, name, qualifiers) in cases {
            assert_eq!(coordinates(location), *coords, "{location:?}");
            assert_eq!(
                split_location(location),
                (*name, qualifiers.to_vec()),
                "{location:?}"
            );
        }
    }

    #[test]
    fn endpoints_join_the_api_path_and_refuse_odd_bases() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "https://api.open-meteo.com",
                Some("https://api.open-meteo.com/v1/forecast"),
            ),
            (
                "http://127.0.0.1:8080/",
                Some("http://127.0.0.1:8080/v1/forecast"),
            ),
            (
                "http://mirror.local/meteo",
                Some("http://mirror.local/meteo/v1/forecast"),
            ),
            ("ftp://api.open-meteo.com", None),
            ("https://api.open-meteo.com/?apikey=x", None),
            ("not a url", None),
        ];
        for (base, expected) in cases {
            let got = endpoint("forecast_url", base, "v1/forecast").map(|u| u.to_string());
            assert_eq!(got.as_deref().ok(), *expected, "{base}");
        }
    }

    #[test]
    fn weather_codes_have_words() {
        let cases: &[(i64, &str)] = &[
            (0, "clear sky"),
            (3, "overcast"),
            (61, "slight rain"),
            (96, "thunderstorm with hail"),
            (1234, "unknown conditions"),
        ];
        for (code, words) in cases {
            assert_eq!(describe_code(*code), *words);
        }
    }
}
