//! Phone calls (seed 002 `phone_call`): a spoken message over Twilio's
//! REST API, and a contact book in a JSON file.
//!
//! - [`PhoneCall`]: the `phone_call` tool, with actions `call`,
//!   `add_contact`, `list_contacts`, `remove_contact`.
//! - [`PhoneConfig`]: the `tools.phone` section of `toolgate.yaml`;
//!   [`tools`] builds the group; [`INSTRUCTIONS`] is its
//!   system-prompt block.
//!
//! A call is `POST {base_url}/2010-04-01/Accounts/{account_sid}/Calls.json`
//! with HTTP basic auth (account SID and auth token) and the form fields
//! `To`, `From` and `Twiml`: `<Response><Say language voice loop>MESSAGE</Say></Response>`,
//! the message XML-escaped so that it is only ever spoken.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::ToolContext;
//! use toolgate_assistant::phone::{self, PhoneConfig};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let tools = phone::tools(&PhoneConfig::default(), dir.path(), None);
//! let ctx = ToolContext::new("c1");
//! let added = tools[0]
//!     .execute(
//!         json!({"action": "add_contact", "contact": "Mom", "phone_number": "+54 9 11 1234-5678"}),
//!         &ctx,
//!     )
//!     .await;
//! assert!(added.success, "{added:?}");
//! let listed = tools[0].execute(json!({"action": "list_contacts"}), &ctx).await;
//! assert_eq!(listed.output, "1 contact(s):\n- Mom: +5491112345678");
//! # Ok(())
//! # }
//! ```

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate_core::{
    Change, Effect, Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext,
    ToolResult, TypedTool,
};
use toolgate_web::RequestError;
use toolgate_web::http::HttpClient;

pub use contacts::{Contact, ContactBook, normalize_number};
use contacts::{read_book, write_book};

mod contacts;

/// The system-prompt block for the `phone` group (seed 002's
/// `phoneCallInstructions`).
pub const INSTRUCTIONS: &str = "\
## Phone calls (phone_call tool)
- Call only when the user asks you to. The call speaks `message` aloud: write it as plain sentences, short and clear.
- To call someone by name, use action list_contacts first. If the name is not there, ask the user for the number, then save it with add_contact (contact = name, phone_number with the country code, e.g. +34600111222).
- call: give contact (a saved name) or phone_number, and message.
- Tell the user whom you called and what the tool answered.";

/// The most times a message may be repeated in one call.
pub const MAX_LOOP: u32 = 10;

/// The `tools.phone` section of `toolgate.yaml`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PhoneConfig {
    /// Whether `phone_call` is registered. Default: false.
    pub enabled: bool,
    /// Twilio's API. Default: `https://api.twilio.com` (tests point it at
    /// a local server).
    pub base_url: String,
    /// The Twilio account SID (`AC` and 32 hex digits). Default: empty
    /// (calls fail until it is set; contacts work).
    pub account_sid: String,
    /// The environment variable holding the auth token (never the token
    /// itself). Default: `TWILIO_AUTH_TOKEN`.
    pub auth_token_env: String,
    /// The caller id, a Twilio number in E.164 form (`+15550100000`).
    /// Default: empty (calls fail until it is set).
    pub from_number: String,
    /// The number called when a call names no contact or number. Default:
    /// none.
    pub default_number: Option<String>,
    /// The language the message is spoken in (`<Say language>`). Default:
    /// `en-US`.
    pub language: String,
    /// The voice (`<Say voice>`: `alice`, `Polly.Lupe`, …). Default:
    /// `alice`.
    pub voice: String,
    /// How many times the message is spoken when a call does not say
    /// (1–10). Default: 1.
    #[serde(rename = "loop")]
    pub loop_count: u32,
    /// The contact book, a JSON file; relative paths are relative to the
    /// directory given to [`tools`] (toolgate's data directory).
    /// Default: `contacts.json`.
    pub contacts_file: PathBuf,
    /// Whether a call may go to a number that is not a saved contact (nor
    /// the default number). Default: true (seed 002).
    pub allow_direct_numbers: bool,
    /// Seconds a request to Twilio may take. Default: 30.
    pub timeout_secs: u64,
    /// The longest message, in characters. Default: 1000.
    pub max_message_chars: usize,
}

impl Default for PhoneConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            base_url: "https://api.twilio.com".to_owned(),
            account_sid: String::new(),
            auth_token_env: "TWILIO_AUTH_TOKEN".to_owned(),
            from_number: String::new(),
            default_number: None,
            language: "en-US".to_owned(),
            voice: "alice".to_owned(),
            loop_count: 1,
            contacts_file: PathBuf::from("contacts.json"),
            allow_direct_numbers: true,
            timeout_secs: 30,
            max_message_chars: 1_000,
        }
    }
}

impl fmt::Debug for PhoneConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhoneConfig")
            .field("enabled", &self.enabled)
            .field("base_url", &self.base_url)
            .field("account_sid", &self.account_sid)
            .field("auth_token_env", &self.auth_token_env)
            .field("from_number", &self.from_number)
            .field("language", &self.language)
            .field("voice", &self.voice)
            .field("contacts_file", &self.contacts_file)
            .finish_non_exhaustive()
    }
}

impl PhoneConfig {
    /// The auth token, read from the variable
    /// [`auth_token_env`](Self::auth_token_env) names through `lookup` (the
    /// host's environment). `None` when it is unset or empty.
    pub fn auth_token_from(&self, lookup: impl Fn(&str) -> Option<String>) -> Option<AuthToken> {
        lookup(&self.auth_token_env)
            .filter(|t| !t.trim().is_empty())
            .map(AuthToken)
    }

    /// Checks what a call needs that can be checked before one: the
    /// account SID and the caller number.
    pub fn check_call_settings(&self) -> Result<(), String> {
        let sid = &self.account_sid;
        if sid.is_empty() {
            return Err(
                "phone calls are not set up: `tools.phone.account_sid` is empty".to_owned(),
            );
        }
        if !(sid.len() == 34
            && sid.starts_with("AC")
            && sid[2..].bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(format!(
                "`tools.phone.account_sid` `{sid}` is not a Twilio account SID (AC followed by 32 hex digits)"
            ));
        }
        normalize_number(&self.from_number)
            .map_err(|e| format!("`tools.phone.from_number` is not usable: {e}"))?;
        Ok(())
    }
}

/// A Twilio auth token. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthToken(String);

impl AuthToken {
    /// A token.
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }
}

impl fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuthToken(****)")
    }
}

/// The `phone` group: `phone_call`, with its contact book under `dir` and
/// the auth token the host read (see [`PhoneConfig::auth_token_from`]).
pub fn tools(config: &PhoneConfig, dir: &Path, token: Option<AuthToken>) -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(PhoneCall::new(config.clone(), dir, token))]
}

/// Escapes text for XML content and attribute values.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 does not allow at all are dropped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// The `TwiML` of a call that speaks `message`.
pub fn twiml(message: &str, language: &str, voice: &str, loop_count: u32) -> String {
    format!(
        "<Response><Say language=\"{}\" voice=\"{}\" loop=\"{loop_count}\">{}</Say></Response>",
        xml_escape(language),
        xml_escape(voice),
        xml_escape(message)
    )
}

/// The book after an `add_contact` / `remove_contact`, with a message.
fn changed_book(args: &PhoneCallArgs, book: &mut ContactBook) -> Result<String, String> {
    let name = args.contact.as_deref().map(str::trim).unwrap_or_default();
    match args.action {
        PhoneAction::AddContact => {
            let number = args
                .phone_number
                .as_deref()
                .ok_or("add_contact needs `phone_number`, with the country code: +34600111222")?;
            let number = normalize_number(number)?;
            match book.upsert(name, number.clone())? {
                Some(old) if old == number => Ok(format!("{name} is already saved with {number}.")),
                Some(old) => Ok(format!("Changed {name}'s number from {old} to {number}.")),
                None => Ok(format!("Saved {name}: {number}.")),
            }
        }
        PhoneAction::RemoveContact => {
            if name.is_empty() {
                return Err("remove_contact needs `contact`: the name to remove".to_owned());
            }
            let removed = book.remove(name)?;
            Ok(format!("Removed {} ({}).", removed.name, removed.number))
        }
        PhoneAction::Call | PhoneAction::ListContacts => Ok(String::new()),
    }
}

// ---------------------------------------------------------------- the tool

/// What `phone_call` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhoneAction {
    /// Call a contact or a number and speak the message.
    Call,
    /// Save a contact (or change a saved one's number).
    AddContact,
    /// Show the saved contacts.
    ListContacts,
    /// Delete a saved contact.
    RemoveContact,
}

/// Arguments of `phone_call`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhoneCallArgs {
    /// `call`, `add_contact`, `list_contacts` or `remove_contact`.
    pub action: PhoneAction,
    /// call: a saved contact's name. `add_contact` / `remove_contact`: the
    /// contact's name.
    #[serde(default)]
    pub contact: Option<String>,
    /// call: what the call says aloud.
    #[serde(default)]
    pub message: Option<String>,
    /// call: the number to call instead of a contact. `add_contact`: the
    /// contact's number. With the country code: +34600111222.
    #[serde(default)]
    pub phone_number: Option<String>,
    /// call: how many times the message is spoken (1-10).
    #[serde(default, rename = "loop")]
    #[schemars(range(min = 1, max = 10))]
    pub loop_count: Option<u32>,
}

/// `phone_call`: calls over Twilio and the contact book.
///
/// # Rules
///
/// 1. `list_contacts` only reads (a read-only call); `call` reaches the
///    network (its effect is the Twilio URL) and `add_contact` /
///    `remove_contact` write the contacts file (their effect is the write,
///    with the file's new content): they are sensitive.
/// 2. A call goes to, in order: `phone_number`; `contact` when it is a
///    number (starts with `+` or `00`); the saved contact named `contact`
///    (case-insensitive); the configured default number. With
///    `allow_direct_numbers: false`, a number must be a saved contact's or
///    the default.
/// 3. Numbers are normalized and checked ([`normalize_number`]); the
///    message must be non-empty and at most `max_message_chars`; it is
///    XML-escaped into the `TwiML`, so it can never add `TwiML` verbs.
/// 4. Contact names are unique case-insensitively: adding an existing
///    name changes its number. The file is written atomically
///    (temporary file + rename) and a file that cannot be parsed is never
///    overwritten.
/// 5. The auth token comes from the environment variable the
///    configuration names, and is never shown: not in results, errors,
///    nor `Debug`.
/// 6. Calls go through toolgate-web's SSRF-checked client
///    ([`toolgate_web::http`]); the host of `base_url` is exempt from its
///    private-address rule (the user chose it), a redirect is never
///    followed (the credentials would travel with it), and Twilio's answer
///    is read up to 1 MiB.
pub struct PhoneCall {
    config: PhoneConfig,
    contacts: PathBuf,
    token: Option<AuthToken>,
    client: Result<HttpClient, String>,
    /// Serialises read-modify-write of the contacts file in this process.
    book_lock: tokio::sync::Mutex<()>,
}

impl fmt::Debug for PhoneCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhoneCall")
            .field("config", &self.config)
            .field("contacts", &self.contacts)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl PhoneCall {
    /// A `phone_call` tool; the contacts file is `config.contacts_file`
    /// under `dir`.
    pub fn new(config: PhoneConfig, dir: &Path, token: Option<AuthToken>) -> Self {
        // toolgate-web's SSRF-checked client. The host of the configured
        // `base_url` is exempt from its private-address rule: the user
        // chose it (a Twilio-compatible gateway, or a fake on 127.0.0.1 in
        // tests) and the model cannot change it. Redirects are not
        // followed at all (rule 6).
        let base_host = url::Url::parse(&config.base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned));
        let client = HttpClient::builder()
            .allow_hosts(base_host)
            .timeout(Duration::from_secs(config.timeout_secs.max(1)))
            .build()
            .map_err(|e| {
                format!(
                    "cannot set up the HTTP client: {}",
                    toolgate_core::error_chain(&e)
                )
            });
        Self {
            contacts: dir.join(&config.contacts_file),
            config,
            token,
            client,
            book_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// The contacts file.
    pub fn contacts_path(&self) -> &Path {
        &self.contacts
    }

    /// The URL calls are created at.
    pub fn calls_url(&self) -> String {
        format!(
            "{}/2010-04-01/Accounts/{}/Calls.json",
            self.config.base_url.trim_end_matches('/'),
            self.config.account_sid
        )
    }

    fn contacts_display(&self) -> String {
        self.contacts.display().to_string()
    }

    async fn change_contacts(&self, args: &PhoneCallArgs) -> ToolResult {
        let _guard = self.book_lock.lock().await;
        let path = self.contacts.clone();
        let (mut book, _) = match read_book(&path) {
            Ok(found) => found,
            Err(message) => return ToolResult::failure(message),
        };
        let message = match changed_book(args, &mut book) {
            Ok(message) => message,
            Err(message) => return ToolResult::failure(message),
        };
        let written = tokio::task::spawn_blocking(move || write_book(&path, &book))
            .await
            .unwrap_or_else(|e| Err(format!("internal error: the write did not finish ({e})")));
        match written {
            Ok(()) => ToolResult::success(message),
            Err(message) => ToolResult::failure(message),
        }
    }

    fn list(&self) -> ToolResult {
        let book = match read_book(&self.contacts) {
            Ok((book, _)) => book,
            Err(message) => return ToolResult::failure(message),
        };
        if book.contacts.is_empty() {
            return ToolResult::success(
                "No saved contacts. Ask the user for a name and number, then use add_contact.",
            );
        }
        let mut out = format!("{} contact(s):", book.contacts.len());
        for contact in &book.contacts {
            let _ = write!(out, "\n- {}: {}", contact.name, contact.number);
        }
        ToolResult::success(out).with_metadata("contacts", json!(book.contacts))
    }

    /// Rule 2: whom a call goes to, as (label, number).
    fn callee(&self, args: &PhoneCallArgs) -> Result<(String, String), String> {
        let looks_like_number = |t: &str| {
            let t = t.trim();
            t.starts_with('+') || t.starts_with("00")
        };
        let direct = args
            .phone_number
            .as_deref()
            .or(args.contact.as_deref().filter(|c| looks_like_number(c)));
        let book = || read_book(&self.contacts).map(|(book, _)| book);
        if let Some(number) = direct {
            let number = normalize_number(number)?;
            if !self.config.allow_direct_numbers {
                let default = self
                    .config
                    .default_number
                    .as_deref()
                    .and_then(|d| normalize_number(d).ok());
                let saved = book()?.contacts.into_iter().find(|c| c.number == number);
                return match (saved, default) {
                    (Some(contact), _) => Ok((contact.name, number)),
                    (None, Some(default)) if default == number => Ok((number.clone(), number)),
                    _ => Err(format!(
                        "{number} is not a saved contact, and calls only go to saved contacts here (`tools.phone.allow_direct_numbers` is false); ask the user to save it with add_contact first"
                    )),
                };
            }
            return Ok((number.clone(), number));
        }
        if let Some(name) = args
            .contact
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            let book = book()?;
            return book
                .find(name)
                .map(|c| (c.name.clone(), c.number.clone()))
                .ok_or_else(|| {
                    format!(
                        "no contact is named \"{name}\" (saved contacts: {}); ask the user for the number and save it with add_contact",
                        book.names()
                    )
                });
        }
        match &self.config.default_number {
            Some(number) => normalize_number(number)
                .map(|n| ("the default number".to_owned(), n))
                .map_err(|e| format!("`tools.phone.default_number` is not usable: {e}")),
            None => Err("call needs `contact` (a saved name) or `phone_number`".to_owned()),
        }
    }

    async fn call(&self, args: &PhoneCallArgs) -> ToolResult {
        let message = args.message.as_deref().map(str::trim).unwrap_or_default();
        if message.is_empty() {
            return ToolResult::failure("call needs `message`: what the call should say");
        }
        let chars = message.chars().count();
        if chars > self.config.max_message_chars {
            return ToolResult::failure(format!(
                "`message` is {chars} characters; the limit is {}: shorten it",
                self.config.max_message_chars
            ));
        }
        let loop_count = args.loop_count.unwrap_or(self.config.loop_count);
        if !(1..=MAX_LOOP).contains(&loop_count) {
            return ToolResult::failure(format!("`loop` must be between 1 and {MAX_LOOP}"));
        }
        let (label, to) = match self.callee(args) {
            Ok(found) => found,
            Err(message) => return ToolResult::failure(message),
        };
        if let Err(message) = self.config.check_call_settings() {
            return ToolResult::failure(message);
        }
        let Some(token) = &self.token else {
            return ToolResult::failure(format!(
                "phone calls are not set up: the environment variable `{}` (the Twilio auth token) is not set",
                self.config.auth_token_env
            ));
        };
        let client = match &self.client {
            Ok(client) => client,
            Err(message) => return ToolResult::failure(message.clone()),
        };
        let from = normalize_number(&self.config.from_number).unwrap_or_default();
        let body = twiml(
            message,
            &self.config.language,
            &self.config.voice,
            loop_count,
        );
        let url = self.calls_url();
        let response = client
            .post(url.as_str())
            .basic_auth(&self.config.account_sid, Some(&token.0))
            .form(&[
                ("To", to.as_str()),
                ("From", from.as_str()),
                ("Twiml", body.as_str()),
            ])
            // Twilio answers directly; never resend the credentials elsewhere.
            .follow_redirects(false)
            .send()
            .await;
        let response = match response {
            Ok(response) => response,
            Err(RequestError::Redirected { location, .. }) => {
                return ToolResult::failure(format!(
                    "Twilio at {} answered with a redirect to {location}, which is not followed (the credentials stay with the configured host); check `tools.phone.base_url`",
                    self.config.base_url
                ));
            }
            Err(error) => {
                return ToolResult::failure(format!(
                    "cannot reach Twilio at {}: {}",
                    self.config.base_url,
                    error.reason()
                ));
            }
        };
        let status = response.status();
        let text = response.text();
        let reply: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if response.is_success() {
            let sid = reply["sid"].as_str().unwrap_or("(no sid)");
            let call_status = reply["status"].as_str().unwrap_or("queued");
            return ToolResult::success(format!(
                "Calling {label} ({to}): call {sid} is {call_status}."
            ))
            .with_metadata("sid", sid)
            .with_metadata("status", call_status)
            .with_metadata("to", to);
        }
        let detail = match (reply["code"].as_i64(), reply["message"].as_str()) {
            (Some(code), Some(message)) => format!("code {code}: {message}"),
            (None, Some(message)) => message.to_owned(),
            _ if text.trim().is_empty() => "no details".to_owned(),
            _ => text.chars().take(200).collect(),
        };
        let hint = if status == 401 {
            format!(
                "; check `tools.phone.account_sid` and the token in `{}`",
                self.config.auth_token_env
            )
        } else {
            String::new()
        };
        ToolResult::failure(format!(
            "Twilio refused the call to {to} (HTTP {status}, {detail}){hint}"
        ))
    }
}

#[async_trait]
impl TypedTool for PhoneCall {
    type Args = PhoneCallArgs;
    const NAME: &'static str = "phone_call";
    const DESCRIPTION: &'static str = "Make a phone call that speaks a message, and manage the contact book. \
        Actions: call (contact or phone_number, and message), add_contact (contact = name, phone_number), \
        list_contacts, remove_contact (contact). Numbers need the country code, e.g. +34600111222. \
        Example: {\"action\": \"call\", \"contact\": \"Mom\", \"message\": \"Dinner is at eight.\"}";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn sensitivity(&self, args: &Value) -> Sensitivity {
        if args.get("action").and_then(Value::as_str) == Some("list_contacts") {
            Sensitivity::ReadOnly
        } else {
            Sensitivity::Sensitive
        }
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only_hint: Some(false),
            destructive_hint: Some(true),
            idempotent_hint: Some(false),
            open_world_hint: Some(true),
            ..ToolAnnotations::default()
        }
    }

    /// `call`: the Twilio URL (and a read of the contacts file when a
    /// contact is looked up); `add_contact` / `remove_contact`: the write
    /// of the contacts file with its new content; `list_contacts`: a read
    /// of it. The contacts file is named as configured under the group's
    /// directory.
    fn effects(&self, args: &PhoneCallArgs) -> Result<Effects, EffectsError> {
        let file = self.contacts_display();
        match args.action {
            PhoneAction::ListContacts => Ok(Effects::known([Effect::read(file)])),
            PhoneAction::Call => {
                let mut effects = vec![Effect::Network {
                    url: self.calls_url(),
                }];
                let by_name = args.phone_number.is_none()
                    && args
                        .contact
                        .as_deref()
                        .is_some_and(|c| !c.trim().starts_with('+') && !c.trim().starts_with("00"));
                if by_name {
                    effects.insert(0, Effect::read(file));
                }
                Ok(Effects::known(effects))
            }
            PhoneAction::AddContact | PhoneAction::RemoveContact => {
                let (mut book, before) = read_book(&self.contacts).map_err(EffectsError::new)?;
                changed_book(args, &mut book).map_err(EffectsError::new)?;
                Ok(Effects::known([Effect::write(
                    file,
                    Change::from_texts(before.as_deref(), book.to_text()),
                )]))
            }
        }
    }

    async fn run(&self, args: PhoneCallArgs, _ctx: &ToolContext) -> ToolResult {
        match args.action {
            PhoneAction::Call => self.call(&args).await,
            PhoneAction::ListContacts => self.list(),
            PhoneAction::AddContact | PhoneAction::RemoveContact => {
                self.change_contacts(&args).await
            }
        }
    }
}

/// The `phone` group, `tools.phone` (off by default; needs trust). Parts: [`DataHome`](toolgate_core::DataHome) (the contact book) and [`HostEnv`](toolgate_core::HostEnv) (the auth token).
#[derive(Debug, Clone, Copy, Default)]
pub struct PhoneGroup;

impl toolgate_core::Group for PhoneGroup {
    fn name(&self) -> &'static str {
        "phone"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("phone")
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["phone_call"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<PhoneConfig>()?;
        if !section.enabled {
            return Ok(toolgate_core::ToolGroup::new(
                "phone",
                INSTRUCTIONS,
                Vec::new(),
            ));
        }
        let home = ctx.part::<toolgate_core::DataHome>()?;
        let env = ctx.part::<toolgate_core::HostEnv>()?;
        let token = section.auth_token_from(|name| (env.0)(name));
        Ok(toolgate_core::ToolGroup::new(
            "phone",
            INSTRUCTIONS,
            tools(section, &home.0, token),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_escaped_into_the_twiml() {
        let cases: &[(&str, &str)] = &[
            ("Dinner at eight.", "Dinner at eight."),
            ("a < b & c > d", "a &lt; b &amp; c &gt; d"),
            (
                "\"quoted\" and 'single'",
                "&quot;quoted&quot; and &apos;single&apos;",
            ),
            (
                "</Say><Dial>+15550100000</Dial><Say>",
                "&lt;/Say&gt;&lt;Dial&gt;+15550100000&lt;/Dial&gt;&lt;Say&gt;",
            ),
            ("bell\u{7}tab\tend", "belltab\tend"),
            ("¿Qué tal? ñandú", "¿Qué tal? ñandú"),
        ];
        for (message, escaped) in cases {
            assert_eq!(
                twiml(message, "es-AR", "Polly.Lupe", 2),
                format!(
                    "<Response><Say language=\"es-AR\" voice=\"Polly.Lupe\" loop=\"2\">{escaped}</Say></Response>"
                ),
                "{message:?}"
            );
        }
        assert!(
            twiml("x", "en\"><Play>", "alice", 1).contains("language=\"en&quot;&gt;&lt;Play&gt;\"")
        );
    }

    #[test]
    fn the_config_section_has_defaults_and_refuses_unknown_keys() {
        let empty: PhoneConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, PhoneConfig::default());
        let set: PhoneConfig = serde_json::from_value(json!({
            "enabled": true, "account_sid": "AC0123456789abcdef0123456789abcdef",
            "from_number": "+15550100000", "loop": 3, "voice": "Polly.Lupe"
        }))
        .unwrap();
        assert_eq!((set.loop_count, set.voice.as_str()), (3, "Polly.Lupe"));
        assert_eq!(set.auth_token_env, "TWILIO_AUTH_TOKEN");
        let text = serde_json::to_value(&set).unwrap();
        assert_eq!(text["loop"], 3);
        // The token itself has no key: it lives in the environment.
        let error = serde_json::from_value::<PhoneConfig>(json!({"auth_token": "x"})).unwrap_err();
        assert!(
            error.to_string().contains("unknown field `auth_token`"),
            "{error}"
        );
    }

    #[test]
    fn call_settings_are_checked() {
        let good = PhoneConfig {
            account_sid: format!("AC{}", "0123456789abcdef".repeat(2)),
            from_number: "+15550100000".into(),
            ..PhoneConfig::default()
        };
        assert_eq!(good.check_call_settings(), Ok(()));
        let cases: &[(PhoneConfig, &str)] = &[
            (PhoneConfig::default(), "`tools.phone.account_sid` is empty"),
            (
                PhoneConfig {
                    account_sid: "AC123/../../x".into(),
                    ..good.clone()
                },
                "is not a Twilio account SID",
            ),
            (
                PhoneConfig {
                    from_number: "555".into(),
                    ..good.clone()
                },
                "`tools.phone.from_number` is not usable",
            ),
        ];
        for (config, expected) in cases {
            let error = config.check_call_settings().unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
        let token = PhoneConfig::default()
            .auth_token_from(|name| (name == "TWILIO_AUTH_TOKEN").then(|| "s3cret".to_owned()))
            .unwrap();
        assert_eq!(format!("{token:?}"), "AuthToken(****)");
        assert!(
            PhoneConfig::default()
                .auth_token_from(|_| Some("  ".into()))
                .is_none()
        );
    }
}
