//! One text file from a URL, for toolgate itself rather than for a model:
//! a skill's SKILL.md, say. Same client, same checks as `web_fetch`.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};

use super::client::{RequestError, Resolver, SafeClient, SystemResolver};
use super::ssrf::UrlPolicy;
use super::{WebConfig, WebError, validate};

/// What a download asks servers for: text, Markdown first.
const ACCEPT_TEXT: &str = "text/markdown,text/plain;q=0.9,*/*;q=0.1";

/// Why [`download_text`] produced no text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DownloadError {
    /// The `web:` configuration cannot be used.
    #[error("the web configuration cannot be used")]
    Config(#[source] WebError),
    /// The URL, a redirect or an address was refused, or the request
    /// failed (the error names the URL).
    #[error(transparent)]
    Request(RequestError),
    /// The server answered with something other than success.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL that answered (after redirects).
        url: String,
        /// The status code.
        status: u16,
    },
    /// The body is longer than the limit; nothing is returned.
    #[error("{url} sent more than {max_bytes} bytes")]
    TooLarge {
        /// The URL that answered.
        url: String,
        /// The limit.
        max_bytes: usize,
    },
    /// The body is not UTF-8 text (or holds NUL bytes).
    #[error("{url} did not send UTF-8 text")]
    NotText {
        /// The URL that answered.
        url: String,
    },
    /// The whole download, redirects included, took longer than
    /// `web.timeout`.
    #[error("downloading {url} took longer than {seconds} s (web.timeout)")]
    TimedOut {
        /// The URL asked for.
        url: String,
        /// The limit.
        seconds: u64,
    },
}

/// GETs `url` and returns its body as text, through the web tools' checked
/// client with the system's resolver (see [`download_text_with`]).
pub async fn download_text(
    config: &WebConfig,
    url: &str,
    max_bytes: usize,
) -> Result<String, DownloadError> {
    download_text_with(config, Arc::new(SystemResolver), url, max_bytes).await
}

/// GETs `url` and returns its body as text, looking host names up with
/// `resolver`.
///
/// # Rules
///
/// 1. The request goes through the client `web_fetch` uses, built from
///    `config`: the URL, each redirect (at most `max_redirects`) and every
///    address a name resolves to pass the SSRF rules
///    ([`UrlPolicy`](super::ssrf::UrlPolicy)), with `allow_hosts` as the
///    only exemption; `user_agent` is sent; proxies from the environment
///    are ignored.
/// 2. The whole download takes at most `timeout` seconds.
/// 3. Only a 2xx answer is read; a body over `max_bytes` is refused, not
///    cut (a cut file is a different file); the text must be UTF-8
///    without NUL bytes.
/// 4. `enabled` is not consulted: it says whether a *model* is offered the
///    web tools, and a download is asked for by the user or the host.
///
/// ```no_run
/// use toolgate_web::{WebConfig, download_text};
///
/// # async fn example() -> Result<(), toolgate_web::DownloadError> {
/// let text = download_text(&WebConfig::default(), "https://example.com/SKILL.md", 256 * 1024).await?;
/// # Ok(())
/// # }
/// ```
pub async fn download_text_with(
    config: &WebConfig,
    resolver: Arc<dyn Resolver>,
    url: &str,
    max_bytes: usize,
) -> Result<String, DownloadError> {
    validate(config).map_err(DownloadError::Config)?;
    let policy = UrlPolicy::new(&config.allow_hosts)
        .map_err(|e| DownloadError::Config(WebError::AllowHosts(e)))?;
    let client = SafeClient::new(
        Arc::new(policy),
        resolver,
        &config.user_agent,
        Duration::from_secs(config.timeout),
        config.max_redirects,
    )
    .map_err(|e| DownloadError::Config(WebError::Client(e)))?;
    let timed_out = || DownloadError::TimedOut {
        url: url.to_owned(),
        seconds: config.timeout,
    };
    let limit = Duration::from_secs(config.timeout);
    match tokio::time::timeout(limit, get_text(&client, url, max_bytes)).await {
        Err(_) => Err(timed_out()),
        Ok(Err(DownloadError::Request(e))) if e.is_timeout() => Err(timed_out()),
        Ok(result) => result,
    }
}

async fn get_text(
    client: &SafeClient,
    url: &str,
    max_bytes: usize,
) -> Result<String, DownloadError> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_TEXT));
    let response = client
        .get(url, headers, true)
        .await
        .map_err(DownloadError::Request)?;
    let final_url = response.url.to_string();
    let status = response.status();
    if !status.is_success() {
        return Err(DownloadError::Status {
            url: final_url,
            status: status.as_u16(),
        });
    }
    let (body, cut) = response
        .read_capped(max_bytes)
        .await
        .map_err(DownloadError::Request)?;
    if cut {
        return Err(DownloadError::TooLarge {
            url: final_url,
            max_bytes,
        });
    }
    match String::from_utf8(body) {
        Ok(text) if !text.contains('\0') => Ok(text),
        _ => Err(DownloadError::NotText { url: final_url }),
    }
}
