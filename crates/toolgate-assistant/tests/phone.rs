//! `phone_call` against a local fake of Twilio's REST API, and its contact
//! book in a real file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::HashMap;
use std::io::{Read as _, Seek as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_assistant::phone::{self, AuthToken, ContactBook, PhoneCall, PhoneConfig};
use toolgate_core::{Effect, Registry, SchemaFormat, Sensitivity, ToolCall, ToolResult};
use toolgate_engine::ExecutionEngine;
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use wiremock::matchers::{basic_auth, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SID: &str = "AC0123456789abcdef0123456789abcdef";
const TOKEN: &str = "tw1l10-s3cret";
const CALLS: &str = "/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Calls.json";

fn config(base_url: &str) -> PhoneConfig {
    PhoneConfig {
        enabled: true,
        base_url: base_url.to_owned(),
        account_sid: SID.to_owned(),
        from_number: "+1 555 010 0000".to_owned(),
        language: "es-AR".to_owned(),
        voice: "Polly.Lupe".to_owned(),
        ..PhoneConfig::default()
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    engine: ExecutionEngine,
}

fn fixture(config: PhoneConfig, token: Option<&str>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new();
    for tool in phone::tools(&config, &dir.path().join("data"), token.map(AuthToken::new)) {
        registry.register_arc(tool).unwrap();
    }
    let engine = ExecutionEngine::builder(Arc::new(registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build();
    Fixture { dir, engine }
}

impl Fixture {
    async fn call(&self, args: Value) -> ToolResult {
        self.engine
            .execute(ToolCall::new("c", "phone_call", args))
            .await
            .result
    }

    async fn ok(&self, args: Value) -> ToolResult {
        let result = self.call(args.clone()).await;
        assert!(result.success, "{args}: {result:?}");
        result
    }

    async fn error(&self, args: Value) -> String {
        let result = self.call(args.clone()).await;
        assert!(!result.success, "{args} should fail: {result:?}");
        result.error.unwrap()
    }

    fn contacts(&self) -> std::path::PathBuf {
        self.dir.path().join("data/contacts.json")
    }
}

/// The form fields of a request body.
fn form(body: &[u8]) -> HashMap<String, String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
        .unwrap()
        .into_iter()
        .collect()
}

async fn twilio(status: u16, reply: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(CALLS))
        .and(basic_auth(SID, TOKEN))
        .respond_with(ResponseTemplate::new(status).set_body_json(reply))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_call_to_a_contact_posts_the_escaped_message_to_twilio() {
    let server = twilio(201, json!({"sid": "CA42", "status": "queued"})).await;
    let f = fixture(config(&server.uri()), Some(TOKEN));
    f.ok(json!({"action": "add_contact", "contact": "Mamá", "phone_number": "+54 9 11 1234-5678"}))
        .await;
    let result = f
        .ok(json!({
            "action": "call",
            "contact": "MAMÁ",
            "message": "La cena es a las 8 & no llegues tarde </Say><Dial>+15550199999</Dial>",
            "loop": 2
        }))
        .await;
    assert_eq!(
        result.output,
        "Calling Mamá (+5491112345678): call CA42 is queued."
    );
    assert_eq!(result.metadata["sid"], "CA42");

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method.as_str(), "POST");
    assert_eq!(request.url.path(), CALLS);
    assert_eq!(
        request.headers.get("content-type").unwrap(),
        "application/x-www-form-urlencoded"
    );
    let fields = form(&request.body);
    assert_eq!(fields.len(), 3, "{fields:?}");
    assert_eq!(fields["To"], "+5491112345678");
    assert_eq!(fields["From"], "+15550100000");
    assert_eq!(
        fields["Twiml"],
        "<Response><Say language=\"es-AR\" voice=\"Polly.Lupe\" loop=\"2\">\
         La cena es a las 8 &amp; no llegues tarde &lt;/Say&gt;&lt;Dial&gt;+15550199999&lt;/Dial&gt;\
         </Say></Response>"
    );
}

#[tokio::test]
async fn direct_numbers_and_the_default_number() {
    let server = twilio(201, json!({"sid": "CA1", "status": "queued"})).await;
    let mut settings = config(&server.uri());
    settings.default_number = Some("+34 600 111 222".to_owned());
    settings.loop_count = 3;
    let f = fixture(settings, Some(TOKEN));
    f.ok(json!({"action": "call", "phone_number": "0044 20 7946 0000", "message": "hi"}))
        .await;
    f.ok(json!({"action": "call", "contact": "+15550123456", "message": "hi"}))
        .await;
    let default = f.ok(json!({"action": "call", "message": "hi"})).await;
    assert!(
        default
            .output
            .starts_with("Calling the default number (+34600111222)")
    );
    let sent: Vec<(String, String)> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let fields = form(&r.body);
            (fields["To"].clone(), fields["Twiml"].clone())
        })
        .collect();
    let to: Vec<&str> = sent.iter().map(|(to, _)| to.as_str()).collect();
    assert_eq!(to, ["+442079460000", "+15550123456", "+34600111222"]);
    assert!(sent.iter().all(|(_, twiml)| twiml.contains("loop=\"3\"")));
}

#[tokio::test]
async fn calls_that_cannot_go_out_say_why_and_send_nothing() {
    let server = twilio(201, json!({"sid": "CA1"})).await;
    let locked = PhoneConfig {
        allow_direct_numbers: false,
        ..config(&server.uri())
    };
    let f = fixture(locked, Some(TOKEN));
    f.ok(json!({"action": "add_contact", "contact": "Ana", "phone_number": "+34600111222"}))
        .await;
    let cases: &[(Value, &str)] = &[
        (
            json!({"action": "call", "contact": "Bob", "message": "hi"}),
            "no contact is named \"Bob\" (saved contacts: Ana); ask the user for the number",
        ),
        (
            json!({"action": "call", "phone_number": "+34600999999", "message": "hi"}),
            "+34600999999 is not a saved contact, and calls only go to saved contacts here",
        ),
        (
            json!({"action": "call", "phone_number": "600111222", "message": "hi"}),
            "has no country code",
        ),
        (
            json!({"action": "call", "contact": "Ana", "message": "  "}),
            "call needs `message`",
        ),
        (
            json!({"action": "call", "contact": "Ana", "message": "x".repeat(1001)}),
            "`message` is 1001 characters; the limit is 1000",
        ),
        (
            json!({"action": "call", "message": "hi"}),
            "call needs `contact` (a saved name) or `phone_number`",
        ),
    ];
    for (args, expected) in cases {
        let error = f.error(args.clone()).await;
        assert!(error.contains(expected), "{args}: {error}");
    }
    // A saved contact's number is allowed, given directly too.
    f.ok(json!({"action": "call", "phone_number": "+34 600 111 222", "message": "hi"}))
        .await;
    assert_eq!(server.received_requests().await.unwrap().len(), 1);

    // Not set up: no token, no SID.
    let no_token = fixture(config(&server.uri()), None);
    let error = no_token
        .error(json!({"action": "call", "phone_number": "+34600111222", "message": "hi"}))
        .await;
    assert!(
        error.contains(
            "the environment variable `TWILIO_AUTH_TOKEN` (the Twilio auth token) is not set"
        ),
        "{error}"
    );
    let no_sid = fixture(
        PhoneConfig {
            account_sid: String::new(),
            ..config(&server.uri())
        },
        Some(TOKEN),
    );
    let error = no_sid
        .error(json!({"action": "call", "phone_number": "+34600111222", "message": "hi"}))
        .await;
    assert!(
        error.contains("`tools.phone.account_sid` is empty"),
        "{error}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn twilio_errors_are_reported_and_the_token_never_shows() {
    let server = twilio(
        400,
        json!({"code": 21211, "message": "The 'To' number +34600111222 is not a valid phone number.", "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}),
    )
    .await;
    let f = fixture(config(&server.uri()), Some(TOKEN));
    let error = f
        .error(json!({"action": "call", "phone_number": "+34600111222", "message": "hi"}))
        .await;
    assert_eq!(
        error,
        "Twilio refused the call to +34600111222 (HTTP 400, code 21211: The 'To' number +34600111222 is not a valid phone number.)"
    );

    // Wrong credentials: the fake answers 401 to anything but SID:TOKEN.
    let strict = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"code": 20003, "message": "Authenticate", "status": 401})),
        )
        .mount(&strict)
        .await;
    let f = fixture(config(&strict.uri()), Some("wrong-token"));
    let error = f
        .error(json!({"action": "call", "phone_number": "+34600111222", "message": "hi"}))
        .await;
    assert!(
        error.contains("(HTTP 401, code 20003: Authenticate); check `tools.phone.account_sid` and the token in `TWILIO_AUTH_TOKEN`"),
        "{error}"
    );
    assert!(!error.contains("wrong-token"));

    // Nobody listening.
    let gone = {
        // A port that was just free: nothing listens there.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let f = fixture(config(&gone), Some(TOKEN));
    let error = f
        .error(json!({"action": "call", "phone_number": "+34600111222", "message": "hi"}))
        .await;
    assert!(
        error.starts_with(&format!("cannot reach Twilio at {gone}")),
        "{error}"
    );
    assert!(!error.contains(TOKEN));
    let tool = PhoneCall::new(config(&gone), f.dir.path(), Some(AuthToken::new(TOKEN)));
    let debug = format!("{tool:?}");
    assert!(
        debug.contains("AuthToken(****)") && !debug.contains(TOKEN),
        "{debug}"
    );
}

/// A redirect from the configured Twilio host is not followed: the
/// credentials would travel with it.
#[tokio::test]
async fn a_redirect_is_not_followed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(CALLS))
        .respond_with(
            ResponseTemplate::new(307)
                .insert_header("location", format!("{}/elsewhere", server.uri()).as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    let f = fixture(config(&server.uri()), Some(TOKEN));
    let error = f
        .error(json!({"action": "call", "phone_number": "+34600111222", "message": "hi"}))
        .await;
    assert!(
        error.contains("answered with a redirect to") && error.contains("/elsewhere"),
        "{error}"
    );
    assert!(!error.contains(TOKEN));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

fn read_book(path: &Path) -> ContactBook {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn contacts_round_trip_through_an_atomically_replaced_file() {
    let f = fixture(config("http://127.0.0.1:9"), None);
    let empty = f.ok(json!({"action": "list_contacts"})).await;
    assert!(empty.output.starts_with("No saved contacts."));
    assert!(!f.contacts().exists(), "listing does not create the file");

    let saved = f
        .ok(json!({"action": "add_contact", "contact": " Zoe ", "phone_number": "+34 600 111 222"}))
        .await;
    assert_eq!(saved.output, "Saved Zoe: +34600111222.");
    f.ok(json!({"action": "add_contact", "contact": "ana", "phone_number": "+15550100001"}))
        .await;
    let mode = std::fs::metadata(f.contacts())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "phone numbers are private");

    // A reader that opened the file before a change keeps the whole old
    // book: the new one replaced it by rename, not by rewriting in place.
    let mut before = std::fs::File::open(f.contacts()).unwrap();
    let changed = f
        .ok(json!({"action": "add_contact", "contact": "ZOE", "phone_number": "+34600333444"}))
        .await;
    assert_eq!(
        changed.output,
        "Changed ZOE's number from +34600111222 to +34600333444."
    );
    let mut old = String::new();
    before.rewind().unwrap();
    before.read_to_string(&mut old).unwrap();
    let old: ContactBook = serde_json::from_str(&old).unwrap();
    assert_eq!(old.find("zoe").unwrap().number, "+34600111222");

    let book = read_book(&f.contacts());
    let names: Vec<(&str, &str)> = book
        .contacts
        .iter()
        .map(|c| (c.name.as_str(), c.number.as_str()))
        .collect();
    assert_eq!(names, [("ana", "+15550100001"), ("Zoe", "+34600333444")]);
    let listed = f.ok(json!({"action": "list_contacts"})).await;
    assert_eq!(
        listed.output,
        "2 contact(s):\n- ana: +15550100001\n- Zoe: +34600333444"
    );

    let removed = f
        .ok(json!({"action": "remove_contact", "contact": "ANA"}))
        .await;
    assert_eq!(removed.output, "Removed ana (+15550100001).");
    assert_eq!(read_book(&f.contacts()).contacts.len(), 1);
    let error = f
        .error(json!({"action": "remove_contact", "contact": "ana"}))
        .await;
    assert!(
        error.contains("no contact is named \"ana\"; saved contacts: Zoe"),
        "{error}"
    );
    // No temporary file is left beside it.
    let entries: Vec<_> = std::fs::read_dir(f.contacts().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(entries, ["contacts.json"]);
}

#[tokio::test]
async fn bad_contacts_and_a_damaged_file_are_refused_without_writing() {
    let f = fixture(config("http://127.0.0.1:9"), None);
    let cases: &[(Value, &str)] = &[
        (
            json!({"action": "add_contact", "contact": "Ana", "phone_number": "600111222"}),
            "has no country code",
        ),
        (
            json!({"action": "add_contact", "contact": "Ana"}),
            "add_contact needs `phone_number`",
        ),
        (
            json!({"action": "add_contact", "contact": " ", "phone_number": "+34600111222"}),
            "add_contact needs `contact`",
        ),
        (
            json!({"action": "add_contact", "contact": "a\nb", "phone_number": "+34600111222"}),
            "one line",
        ),
        (
            json!({"action": "remove_contact"}),
            "remove_contact needs `contact`",
        ),
    ];
    for (args, expected) in cases {
        let error = f.error(args.clone()).await;
        assert!(error.contains(expected), "{args}: {error}");
    }
    assert!(!f.contacts().exists());

    std::fs::create_dir_all(f.contacts().parent().unwrap()).unwrap();
    std::fs::write(f.contacts(), "{not json").unwrap();
    let error = f
        .error(json!({"action": "add_contact", "contact": "Ana", "phone_number": "+34600111222"}))
        .await;
    assert!(error.contains("is not valid"), "{error}");
    assert!(error.contains("fix or remove it"), "{error}");
    assert_eq!(std::fs::read_to_string(f.contacts()).unwrap(), "{not json");
}

#[test]
fn the_tool_declares_its_effects_and_sensitivity() {
    let f = fixture(config("http://127.0.0.1:9/"), None);
    let entry = f.engine.registry().get("phone_call").unwrap();
    let spec = entry.spec();
    assert!(jsonschema::meta::is_valid(&spec.parameters));
    assert_eq!(spec.parameters["additionalProperties"], false);
    let actions: Vec<&str> = spec.parameters["properties"]["action"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variant| variant.as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["call", "add_contact", "list_contacts", "remove_contact"]
    );
    assert_eq!(
        spec.export(SchemaFormat::Mcp)["annotations"]["openWorldHint"],
        true
    );
    assert!(toolgate_assistant::phone::INSTRUCTIONS.contains("list_contacts"));
    let file = f.contacts().display().to_string();
    let url = format!("http://127.0.0.1:9{CALLS}");

    let tool = entry.tool();
    let effects = |args: Value| tool.effects(&args).unwrap().list().to_vec();
    assert_eq!(
        effects(json!({"action": "call", "phone_number": "+34600111222", "message": "hi"})),
        [Effect::Network { url: url.clone() }]
    );
    assert_eq!(
        effects(json!({"action": "call", "contact": "Ana", "message": "hi"})),
        [Effect::read(file.clone()), Effect::Network { url }]
    );
    assert_eq!(
        effects(json!({"action": "list_contacts"})),
        [Effect::read(file.clone())]
    );
    let add =
        effects(json!({"action": "add_contact", "contact": "Ana", "phone_number": "+34600111222"}));
    let [Effect::Write { path, change }] = add.as_slice() else {
        panic!("{add:?}");
    };
    assert_eq!(path, &file);
    assert!(change.creates);
    let content: ContactBook = serde_json::from_str(change.content.as_deref().unwrap()).unwrap();
    assert_eq!(content.find("ana").unwrap().number, "+34600111222");
    // A change that cannot happen is refused before it runs.
    let refused = tool
        .effects(&json!({"action": "remove_contact", "contact": "Nobody"}))
        .unwrap_err();
    assert!(refused.message().contains("no contact is named"));

    let cases: &[(&str, Sensitivity)] = &[
        ("list_contacts", Sensitivity::ReadOnly),
        ("call", Sensitivity::Sensitive),
        ("add_contact", Sensitivity::Sensitive),
        ("remove_contact", Sensitivity::Sensitive),
    ];
    for (action, expected) in cases {
        assert_eq!(
            tool.sensitivity(&json!({"action": action})),
            *expected,
            "{action}"
        );
    }
}
