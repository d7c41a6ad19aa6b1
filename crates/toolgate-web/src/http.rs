//! A small request API over the checked client, for tools that call one
//! HTTP service of their own (weather, phone) rather than any page a model
//! names.
//!
//! [`HttpClient`] is the client `web_fetch` uses (see [the crate's
//! safety notes](crate#safety)): every address checked in the resolver, every
//! redirect re-checked, proxies from the environment ignored. A request
//! ([`HttpRequest`]) chooses its method, headers, basic auth, a JSON or
//! form body, whether redirects are followed, its timeout and the most
//! bytes of body it accepts; the answer ([`HttpResponse`]) is read whole.
//!
//! # Rules
//!
//! 1. The SSRF rules apply to every URL, redirect and address
//!    ([`UrlPolicy`]); the only exemptions are the hosts given to
//!    [`HttpClientBuilder::allow_hosts`]. A tool whose service URL comes
//!    from the user's configuration lists that URL's host there, so a
//!    service on `127.0.0.1` works when configured (tests, self-hosted
//!    instances) and a redirect elsewhere is still checked.
//! 2. The whole exchange — redirects and body — takes at most the
//!    request's timeout (the client's by default); then
//!    [`RequestError::TimedOut`].
//! 3. A body longer than [`HttpRequest::max_body_bytes`] is an error
//!    ([`RequestError::TooLarge`]), never cut: a cut JSON document is not
//!    JSON.
//! 4. Redirects are followed (at most the client's `max_redirects`) unless
//!    the request says not to. A 303 (and a 301 or 302 answering a
//!    `POST`) turns the next request into a `GET` without a body; 307 and
//!    308 repeat it. Credentials — basic auth and an `Authorization`
//!    header — go only to the first URL's origin.
//!
//! ```no_run
//! use toolgate_web::http::HttpClient;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = HttpClient::builder().build()?;
//! let answer = client
//!     .post("https://api.example.com/v1/things")
//!     .basic_auth("user", Some("secret"))
//!     .form(&[("name", "thing")])
//!     .follow_redirects(false)
//!     .send()
//!     .await?;
//! println!("{} {}", answer.status(), answer.text());
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;

use crate::MAX_REDIRECTS;
use crate::client::{Outgoing, RequestError, Resolver, SafeClient, SystemResolver};
use crate::ssrf::{AllowEntryError, UrlPolicy};

/// Default of [`HttpClientBuilder::timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Default of [`HttpRequest::max_body_bytes`]: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`.
    Head,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl Method {
    fn as_reqwest(self) -> reqwest::Method {
        match self {
            Self::Get => reqwest::Method::GET,
            Self::Head => reqwest::Method::HEAD,
            Self::Post => reqwest::Method::POST,
            Self::Put => reqwest::Method::PUT,
            Self::Patch => reqwest::Method::PATCH,
            Self::Delete => reqwest::Method::DELETE,
        }
    }
}

/// Why an [`HttpClient`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// An entry of [`HttpClientBuilder::allow_hosts`] is not a host.
    #[error("cannot exempt a host from the address checks")]
    AllowHosts(#[source] AllowEntryError),
    /// The underlying client could not be built (TLS set-up).
    #[error("cannot build the HTTP client")]
    Build(#[source] reqwest::Error),
}

/// Builds an [`HttpClient`].
pub struct HttpClientBuilder {
    allow_hosts: Vec<String>,
    resolver: Arc<dyn Resolver>,
    user_agent: String,
    timeout: Duration,
    max_redirects: usize,
}

impl std::fmt::Debug for HttpClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientBuilder")
            .field("allow_hosts", &self.allow_hosts)
            .field("user_agent", &self.user_agent)
            .field("timeout", &self.timeout)
            .field("max_redirects", &self.max_redirects)
            .finish_non_exhaustive()
    }
}

impl HttpClientBuilder {
    /// Hosts exempt from the local-name and private-address rules (rule 5
    /// of [`UrlPolicy`]): names or addresses, as in `web.allow_hosts`.
    /// Default: none.
    #[must_use]
    pub fn allow_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// How host names are looked up. Default: [`SystemResolver`].
    #[must_use]
    pub fn resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// The `User-Agent` header. Default: `toolgate/VERSION`.
    #[must_use]
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// How long one exchange may take, redirects and body included
    /// (a zero duration counts as one second). Default: 30 s.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_secs(1));
        self
    }

    /// The most redirects a request follows, at most [`MAX_REDIRECTS`].
    /// Default: [`MAX_REDIRECTS`].
    #[must_use]
    pub fn max_redirects(mut self, max: usize) -> Self {
        self.max_redirects = max.min(MAX_REDIRECTS);
        self
    }

    /// The client.
    pub fn build(self) -> Result<HttpClient, ClientError> {
        let policy = UrlPolicy::new(&self.allow_hosts).map_err(ClientError::AllowHosts)?;
        let inner = SafeClient::new(
            Arc::new(policy),
            self.resolver,
            &self.user_agent,
            self.timeout,
            self.max_redirects,
        )
        .map_err(ClientError::Build)?;
        Ok(HttpClient {
            inner,
            timeout: self.timeout,
        })
    }
}

/// The SSRF-checked client for a tool's own service (see the [module
/// rules](self)). Cheap to clone.
#[derive(Debug, Clone)]
pub struct HttpClient {
    inner: SafeClient,
    timeout: Duration,
}

impl HttpClient {
    /// A builder with the defaults.
    pub fn builder() -> HttpClientBuilder {
        HttpClientBuilder {
            allow_hosts: Vec::new(),
            resolver: Arc::new(SystemResolver),
            user_agent: concat!("toolgate/", env!("CARGO_PKG_VERSION")).to_owned(),
            timeout: DEFAULT_TIMEOUT,
            max_redirects: MAX_REDIRECTS,
        }
    }

    /// A request with `method` to `url`.
    pub fn request(&self, method: Method, url: impl Into<String>) -> HttpRequest<'_> {
        HttpRequest {
            client: self,
            url: url.into(),
            outgoing: Outgoing {
                method: method.as_reqwest(),
                headers: HeaderMap::new(),
                basic_auth: None,
                body: None,
                timeout: None,
            },
            follow: true,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            timeout: self.timeout,
            invalid: None,
        }
    }

    /// A `GET` of `url`.
    pub fn get(&self, url: impl Into<String>) -> HttpRequest<'_> {
        self.request(Method::Get, url)
    }

    /// A `POST` to `url`.
    pub fn post(&self, url: impl Into<String>) -> HttpRequest<'_> {
        self.request(Method::Post, url)
    }
}

/// One request, built step by step and sent with [`send`](Self::send).
#[derive(Debug)]
#[must_use = "a request does nothing until it is sent"]
pub struct HttpRequest<'a> {
    client: &'a HttpClient,
    url: String,
    outgoing: Outgoing,
    follow: bool,
    max_body_bytes: usize,
    timeout: Duration,
    /// The first thing found wrong while building; reported by `send`.
    invalid: Option<String>,
}

impl HttpRequest<'_> {
    /// Adds a header (replacing one of the same name).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            HeaderName::try_from(name),
            HeaderValue::try_from(value).map(|mut v| {
                v.set_sensitive(true);
                v
            }),
        ) {
            (Ok(name), Ok(value)) => {
                self.outgoing.headers.insert(name, value);
            }
            _ => self.fail(format!(
                "the header `{name}` or its value is not allowed in HTTP"
            )),
        }
        self
    }

    /// Basic authentication, sent to the first URL's origin only.
    pub fn basic_auth(mut self, user: &str, password: Option<&str>) -> Self {
        self.outgoing.basic_auth = Some((user.to_owned(), password.map(str::to_owned)));
        self
    }

    /// A JSON body (`Content-Type: application/json`).
    pub fn json<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => self.body(body, "application/json"),
            Err(e) => {
                self.fail(format!("the JSON body cannot be written: {e}"));
                self
            }
        }
    }

    /// A form body (`application/x-www-form-urlencoded`) of `pairs`, in
    /// order.
    pub fn form<K: AsRef<str>, V: AsRef<str>>(self, pairs: &[(K, V)]) -> Self {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        for (key, value) in pairs {
            form.append_pair(key.as_ref(), value.as_ref());
        }
        let body = form.finish().into_bytes();
        self.body(body, "application/x-www-form-urlencoded")
    }

    /// A body of `bytes` with `content_type`.
    pub fn body(mut self, bytes: Vec<u8>, content_type: &'static str) -> Self {
        self.outgoing
            .headers
            .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        self.outgoing.body = Some(bytes);
        self
    }

    /// Whether redirects are followed (default true). Off, a redirect is
    /// [`RequestError::Redirected`]: use it when the request carries
    /// credentials for one service.
    pub fn follow_redirects(mut self, follow: bool) -> Self {
        self.follow = follow;
        self
    }

    /// The most bytes of body accepted (default
    /// [`DEFAULT_MAX_BODY_BYTES`]); a longer body is
    /// [`RequestError::TooLarge`].
    pub fn max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// How long the whole exchange may take (default: the client's).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self.outgoing.timeout = Some(self.timeout);
        self
    }

    fn fail(&mut self, reason: String) {
        self.invalid.get_or_insert(reason);
    }

    /// Sends the request and reads the whole answer (see the [module
    /// rules](self)). An answer with any status is `Ok`; look at
    /// [`HttpResponse::status`].
    pub async fn send(self) -> Result<HttpResponse, RequestError> {
        if let Some(reason) = self.invalid {
            return Err(RequestError::Invalid {
                url: self.url,
                reason,
            });
        }
        let exchange = async {
            let response = self
                .client
                .inner
                .send(&self.url, &self.outgoing, self.follow)
                .await?;
            let url = response.url.to_string();
            let status = response.status().as_u16();
            let headers = response.inner.headers().clone();
            let (body, cut) = response.read_capped(self.max_body_bytes).await?;
            if cut {
                return Err(RequestError::TooLarge {
                    url,
                    max_bytes: self.max_body_bytes,
                });
            }
            Ok(HttpResponse {
                url,
                status,
                headers,
                body,
            })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(RequestError::TimedOut {
                url: self.url.clone(),
                seconds: self.timeout.as_secs() + u64::from(self.timeout.subsec_nanos() > 0),
            }),
        }
    }
}

/// A whole answer.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    url: String,
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl HttpResponse {
    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The URL that answered (after redirects).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The first value of header `name`, when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }

    /// The body parsed as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}
