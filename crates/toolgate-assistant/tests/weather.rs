//! `get_weather` against a fake Open-Meteo on 127.0.0.1 that checks the
//! method, path and query of both requests (and that no credentials are
//! sent: Open-Meteo needs none).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_assistant::weather::{self, TemperatureUnit, WeatherConfig};
use toolgate_core::{Effect, Registry, ToolCall};
use toolgate_engine::{Decision, Execution, ExecutionEngine};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const CURRENT: &str = "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,wind_speed_10m";
const DAILY: &str = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max";

fn config(server: &MockServer) -> WeatherConfig {
    WeatherConfig {
        enabled: true,
        // Both APIs on one fake, under different prefixes, so that a request
        // sent to the wrong base URL does not match.
        geocoding_url: format!("{}/geo", server.uri()),
        forecast_url: format!("{}/api/", server.uri()),
        ..WeatherConfig::default()
    }
}

/// A gate that never asks, and the default one (confirm-sensitive, nobody
/// to ask).
fn gates(config: &WeatherConfig) -> (ExecutionEngine, ExecutionEngine) {
    let registry = Registry::new();
    for tool in weather::tools(config).unwrap() {
        registry.register_arc(tool).unwrap();
    }
    let registry = Arc::new(registry);
    (
        ExecutionEngine::builder(Arc::clone(&registry))
            .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
            .build(),
        ExecutionEngine::builder(registry).build(),
    )
}

async fn weather(gate: &ExecutionEngine, args: Value) -> Execution {
    gate.execute(ToolCall::new("w", "get_weather", args)).await
}

/// Open-Meteo sends no credentials and needs none: a request that carries
/// any would leak them.
fn no_credentials(request: &Request) -> bool {
    !request.headers.contains_key("authorization")
        && !request.url.query_pairs().any(|(k, _)| k == "apikey")
}

fn place(name: &str, lat: f64, lon: f64, admin1: &str, country: &str, code: &str) -> Value {
    json!({"id": 1, "name": name, "latitude": lat, "longitude": lon, "elevation": 40.0,
           "feature_code": "PPLC", "country_code": code, "timezone": "Europe/Paris",
           "admin1": admin1, "country": country})
}

fn forecast(days: usize) -> Value {
    let dates: Vec<String> = (1..=days).map(|d| format!("2026-03-{d:02}")).collect();
    let codes = &[3, 61, 0][..days];
    let highs = &[12.5, 10.1, 14.0][..days];
    let lows = &[5.2, 6.0, 3.3][..days];
    let rain = &[0.0, 4.2, 0.0][..days];
    let chance = &[10, 85, 0][..days];
    json!({
        "latitude": 48.86, "longitude": 2.35, "generationtime_ms": 0.1,
        "utc_offset_seconds": 3600, "timezone": "Europe/Paris", "timezone_abbreviation": "CET",
        "elevation": 43.0,
        "current_units": {"time": "iso8601", "interval": "seconds", "temperature_2m": "°C",
            "apparent_temperature": "°C", "relative_humidity_2m": "%", "precipitation": "mm",
            "weather_code": "wmo code", "wind_speed_10m": "km/h"},
        "current": {"time": "2026-03-01T14:00", "interval": 900, "temperature_2m": 11.4,
            "apparent_temperature": 9.0, "relative_humidity_2m": 71, "precipitation": 0.0,
            "weather_code": 3, "wind_speed_10m": 14.2},
        "daily_units": {"time": "iso8601", "weather_code": "wmo code",
            "temperature_2m_max": "°C", "temperature_2m_min": "°C", "precipitation_sum": "mm",
            "precipitation_probability_max": "%"},
        "daily": {"time": dates,
            "weather_code": codes, "temperature_2m_max": highs, "temperature_2m_min": lows,
            "precipitation_sum": rain, "precipitation_probability_max": chance}
    })
}

#[tokio::test]
async fn geocodes_then_forecasts_with_the_documented_queries() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/geo/v1/search"))
        .and(query_param("name", "Paris"))
        .and(query_param("count", "10"))
        .and(query_param("language", "en"))
        .and(query_param("format", "json"))
        .and(no_credentials)
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "results": [
                place("Paris", 33.66094, -95.55551, "Texas", "United States", "US"),
                place("Paris", 48.85341, 2.3488, "Île-de-France", "France", "FR"),
            ],
            "generationtime_ms": 0.5
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/forecast"))
        .and(query_param("latitude", "48.85341"))
        .and(query_param("longitude", "2.3488"))
        .and(query_param("current", CURRENT))
        .and(query_param("daily", DAILY))
        .and(query_param("timezone", "auto"))
        .and(query_param("forecast_days", "2"))
        .and(query_param("temperature_unit", "celsius"))
        .and(query_param("wind_speed_unit", "kmh"))
        .and(query_param("precipitation_unit", "mm"))
        .and(no_credentials)
        .respond_with(ResponseTemplate::new(200).set_body_json(forecast(2)))
        .expect(1)
        .mount(&server)
        .await;

    let config = config(&server);
    let (yolo, asking) = gates(&config);
    let args = json!({"location": "Paris, France", "days": 2});

    // It reaches a third party: under confirm-sensitive it asks, and with
    // nobody to ask nothing is sent (the mocks' `expect(1)` counts).
    let refused = weather(&asking, args.clone()).await;
    assert_eq!(refused.decision, Decision::NoApprover);

    let out = weather(&yolo, args).await;
    assert!(out.result.success, "{:?}", out.result.error);
    assert_eq!(
        out.result.output,
        "Weather for Paris, Île-de-France, France (48.85, 2.35), local time zone Europe/Paris\n\
         Now (2026-03-01T14:00): overcast, 11.4 °C (feels like 9 °C), humidity 71 %, wind 14.2 km/h, precipitation 0 mm\n\
         Forecast:\n\
         - 2026-03-01: overcast, 5.2 °C to 12.5 °C, precipitation 0 mm (10 % chance)\n\
         - 2026-03-02: slight rain, 6 °C to 10.1 °C, precipitation 4.2 mm (85 % chance)"
    );
    assert_eq!(out.result.metadata["place"]["latitude"], 48.85341);
    assert_eq!(out.result.metadata["daily"]["time"][1], "2026-03-02");

    // The declared effects name both requests, on the configured bases.
    let effects: Vec<String> = out
        .effects
        .list()
        .iter()
        .map(|e| match e {
            Effect::Network { url } => url.clone(),
            other => panic!("not a network effect: {other:?}"),
        })
        .collect();
    let base = server.uri();
    assert_eq!(
        effects,
        [
            format!("{base}/geo/v1/search?name=Paris&count=10&language=en&format=json"),
            format!("{base}/api/v1/forecast"),
        ]
    );
}

#[tokio::test]
async fn coordinates_skip_the_geocoder_and_units_follow_the_config() {
    let server = MockServer::start().await;
    Mock::given(path("/geo/v1/search"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/forecast"))
        .and(query_param("latitude", "40.42"))
        .and(query_param("longitude", "-3.7"))
        .and(query_param("forecast_days", "3"))
        .and(query_param("temperature_unit", "fahrenheit"))
        .respond_with(ResponseTemplate::new(200).set_body_json(forecast(3)))
        .expect(1)
        .mount(&server)
        .await;
    let config = WeatherConfig {
        temperature_unit: TemperatureUnit::Fahrenheit,
        ..config(&server)
    };
    let (yolo, _) = gates(&config);
    let out = weather(&yolo, json!({"location": "40.42, -3.70"})).await;
    assert!(out.result.success, "{:?}", out.result.error);
    assert!(
        out.result
            .output
            .starts_with("Weather for 40.42, -3.7 (40.42, -3.70)"),
        "{}",
        out.result.output
    );
    assert_eq!(out.result.output.matches("\n- 2026-03-").count(), 3);
    assert_eq!(out.effects.list().len(), 1);
}

#[tokio::test]
async fn failures_say_what_went_wrong() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/geo/v1/search"))
        .and(query_param("name", "Atlantisx"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"generationtime_ms": 0.3})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/geo/v1/search"))
        .and(query_param("name", "Springfield"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
            place("Springfield", 39.8, -89.64, "Illinois", "United States", "US"),
            place("Springfield", 37.21, -93.3, "Missouri", "United States", "US"),
        ]})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/forecast"))
        .and(query_param("latitude", "39.8"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": true, "reason": "Cannot initialize WeatherVariable from invalid String value"}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/forecast"))
        .and(query_param("latitude", "37.21"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>maintenance</html>"))
        .mount(&server)
        .await;
    let (yolo, _) = gates(&config(&server));

    let cases: &[(Value, &str)] = &[
        (
            json!({"location": "Atlantisx"}),
            "no place called `Atlantisx` was found",
        ),
        (
            json!({"location": "Springfield"}),
            "the forecast service answered HTTP 400: Cannot initialize WeatherVariable",
        ),
        (
            json!({"location": "Springfield, Missouri"}),
            "the forecast service did not answer with JSON",
        ),
        (json!({"location": " , France"}), "`location` is empty"),
        (
            json!({"location": "Paris", "days": 9}),
            "`days` must be 1 to 7; got 9",
        ),
    ];
    for (args, message) in cases {
        let out = weather(&yolo, args.clone()).await;
        assert!(!out.result.success, "{args}: {}", out.result.output);
        let error = out.result.error.unwrap();
        assert!(error.contains(message), "{args}: {error}");
    }

    // Qualifiers that match no place: the first place, said so.
    Mock::given(method("GET"))
        .and(path("/api/v1/forecast"))
        .and(query_param("latitude", "39.8"))
        .and(query_param("forecast_days", "1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(forecast(1)))
        .named("one day")
        .with_priority(1)
        .mount(&server)
        .await;
    let out = weather(&yolo, json!({"location": "Springfield, Narnia", "days": 1})).await;
    assert!(out.result.success, "{:?}", out.result.error);
    assert!(
        out.result.output.starts_with(
            "No `Springfield` matched `Narnia`; showing the first place of that name.\nWeather for Springfield, Illinois, United States"
        ),
        "{}",
        out.result.output
    );
}

#[tokio::test]
async fn an_unreachable_service_is_a_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let config = WeatherConfig {
        enabled: true,
        geocoding_url: base.clone(),
        forecast_url: base.clone(),
        ..WeatherConfig::default()
    };
    let (yolo, _) = gates(&config);
    let out = weather(&yolo, json!({"location": "Lima"})).await;
    let error = out.result.error.unwrap();
    assert!(
        error.starts_with(&format!("could not reach the geocoding service at {base}")),
        "{error}"
    );
}

/// The configured host is the only exempt one: a redirect from it to
/// another local host (here `localhost`, which reaches the same fake) is
/// refused by toolgate-web's SSRF rules and never requested.
#[tokio::test]
async fn a_redirect_away_from_the_configured_host_is_refused() {
    let server = MockServer::start().await;
    let port = server.address().port();
    Mock::given(method("GET"))
        .and(path("/geo/v1/search"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("http://localhost:{port}/elsewhere").as_str(),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/elsewhere"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": []})))
        .expect(0)
        .mount(&server)
        .await;
    let (yolo, _) = gates(&config(&server));
    let out = weather(&yolo, json!({"location": "Lima"})).await;
    let error = out.result.error.unwrap();
    assert!(
        error.starts_with("could not reach the geocoding service at ")
            && error.contains("`localhost`"),
        "{error}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[test]
fn configuration_is_checked() {
    let bad: &[(WeatherConfig, &str)] = &[
        (
            WeatherConfig {
                enabled: true,
                forecast_url: "file:///etc".into(),
                ..WeatherConfig::default()
            },
            "`tools.weather.forecast_url` is not a usable base URL",
        ),
        (
            WeatherConfig {
                enabled: true,
                max_days: 17,
                ..WeatherConfig::default()
            },
            "`tools.weather.max_days` must be 1 to 16",
        ),
        (
            WeatherConfig {
                enabled: true,
                default_days: 8,
                ..WeatherConfig::default()
            },
            "(got 7 and 8)",
        ),
    ];
    for (config, message) in bad {
        let error = weather::tools(config).err().unwrap().to_string();
        assert!(error.contains(message), "{error}");
    }
    assert!(
        weather::tools(&WeatherConfig::default())
            .unwrap()
            .is_empty()
    );
}
