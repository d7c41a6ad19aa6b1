//! Why a probe check failed or was not made, in words a person can act on.

use std::time::Duration;

/// Why a check failed or was not made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// The base URL does not parse.
    #[error("{url} is not a valid URL")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Nothing listens there.
    #[error("connection refused at {url}")]
    Refused {
        /// The server's origin (`http://host:port`).
        url: String,
    },
    /// No answer in time.
    #[error("no answer from {url} within {} ms", after.as_millis())]
    Timeout {
        /// The URL asked.
        url: String,
        /// The timeout.
        after: Duration,
    },
    /// Another failure to connect (name resolution, TLS, reset).
    #[error("cannot connect to {url}")]
    Connect {
        /// The server's origin, or the URL asked.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The server refused the credentials (401/403).
    #[error("{url} refused the credentials (HTTP {status}); check the API key")]
    Auth {
        /// The URL asked.
        url: String,
        /// HTTP status.
        status: u16,
    },
    /// Another HTTP error status.
    #[error("{url} answered HTTP {status}{}", detail(body))]
    Status {
        /// The URL asked.
        url: String,
        /// HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The answer is not what the endpoint returns.
    #[error("{url} answered with something other than {expected}")]
    Malformed {
        /// The URL asked.
        url: String,
        /// What was expected (`a model list`, …).
        expected: &'static str,
    },
    /// The configured model is not among the served ones.
    #[error("model {model} is not served here; {}", served(available))]
    ModelNotServed {
        /// The configured model.
        model: String,
        /// The served models.
        available: Vec<String>,
    },
    /// The tool check got text and no tool call.
    #[error("answers in text only (tool calls may be written as text)")]
    TextOnly {
        /// The start of the text.
        text: String,
    },
    /// The tool check's answer hit its token limit before any tool call.
    #[error("no tool call within {max_tokens} tokens (the answer was cut at the limit)")]
    Truncated {
        /// The limit asked for.
        max_tokens: u32,
    },
    /// Nothing tells the context window.
    #[error("the server does not tell its context window")]
    ContextUnknown,
    /// The check was not made.
    #[error("not checked: {reason}")]
    NotChecked {
        /// Why.
        reason: &'static str,
    },
    /// No HTTP client could be built.
    #[error("cannot build an HTTP client")]
    Client {
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
}

fn detail(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    }
}

fn served(models: &[String]) -> String {
    if models.is_empty() {
        "it serves none".to_owned()
    } else {
        format!("it serves {}", models.join(", "))
    }
}
