//! The HTTP client of the web tools: every connection pinned to addresses
//! the SSRF policy approved, every redirect re-checked, bodies capped.
//!
//! # Why the check lives in the DNS resolver
//!
//! Checking a URL's host with one DNS lookup and then letting the HTTP
//! client look it up again opens a race: a hostile DNS server answers the
//! first lookup with a public address and the second with `127.0.0.1`
//! (DNS rebinding). Here there is no second lookup. reqwest is given a
//! resolver ([`CheckingResolve`]) that looks the name up once, refuses the
//! whole answer if any address is not allowed, and hands back exactly the
//! addresses it checked; the connector connects to those and nothing else.
//! Hosts written as IP literals never reach a resolver, so
//! [`UrlPolicy::check_url`] judges them before the request is sent.
//! Connections are not pooled, so every request goes through the resolver,
//! and proxies from the environment are ignored (a proxy would resolve the
//! name itself, out of our sight).

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, LOCATION};
use reqwest::{Method, StatusCode, Url};

use super::ssrf::{UrlPolicy, UrlRefusal};

/// Looks host names up. [`SystemResolver`] is the default; tests give their
/// own to control what DNS answers.
#[async_trait]
pub trait Resolver: Send + Sync + 'static {
    /// Every address of `host` (a domain name, without port).
    async fn lookup(&self, host: &str) -> io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver (`getaddrinfo`, via tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn lookup(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        let found = tokio::net::lookup_host((host, 0)).await?;
        Ok(found.map(|addr| addr.ip()).collect())
    }
}

/// reqwest's resolver: look up once, check every address, return exactly
/// the checked ones (see the [module docs](self)).
struct CheckingResolve {
    resolver: Arc<dyn Resolver>,
    policy: Arc<UrlPolicy>,
}

impl reqwest::dns::Resolve for CheckingResolve {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = Arc::clone(&self.resolver);
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // The refusal is boxed once, as the error itself: boxed twice
            // (`Box<UrlRefusal>` inside reqwest's box) it would hide from
            // `refusal_in`, and a refused address would read as a failed
            // connection.
            let boxed = |refusal: UrlRefusal| -> Box<dyn std::error::Error + Send + Sync> {
                Box::new(refusal)
            };
            let addrs = resolver.lookup(&host).await.map_err(|e| {
                boxed(UrlRefusal::Resolve {
                    host: host.clone(),
                    reason: e.to_string(),
                })
            })?;
            policy.check_resolved(&host, &addrs).map_err(boxed)?;
            let addrs: reqwest::dns::Addrs =
                Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// Why a request did not produce a response.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The SSRF policy refused the URL, a redirect target, or an address.
    #[error("refused {url}")]
    Refused {
        /// The URL refused.
        url: String,
        /// Why.
        #[source]
        refusal: UrlRefusal,
    },
    /// More redirects than allowed.
    #[error(
        "stopped after {max} redirects (the next was to {next}); fetch the final URL directly if it is public"
    )]
    TooManyRedirects {
        /// The limit.
        max: usize,
        /// Where the last redirect pointed.
        next: String,
    },
    /// A redirect where none is followed (an API request).
    #[error("{url} answered with a redirect to {location}, which is not followed here")]
    Redirected {
        /// The URL requested.
        url: String,
        /// Where it pointed.
        location: String,
    },
    /// A redirect whose `Location` is not a URL.
    #[error("{url} redirected to `{location}`, which is not a valid URL")]
    BadRedirect {
        /// The URL requested.
        url: String,
        /// The `Location` header.
        location: String,
    },
    /// The request failed (connection, TLS, protocol).
    #[error("the request to {url} failed")]
    Http {
        /// The URL requested.
        url: String,
        /// What failed.
        #[source]
        source: reqwest::Error,
    },
    /// The body is longer than the request allows; nothing is returned.
    #[error("{url} sent more than {max_bytes} bytes")]
    TooLarge {
        /// The URL that answered.
        url: String,
        /// The limit.
        max_bytes: usize,
    },
    /// The whole exchange, redirects and body included, took longer than
    /// its timeout.
    #[error("{url} did not answer within {seconds} s")]
    TimedOut {
        /// The URL asked for.
        url: String,
        /// The limit, in seconds (rounded up).
        seconds: u64,
    },
    /// The request could not be built: a header name or value that HTTP
    /// does not allow, or a body that could not be serialised.
    #[error("the request to {url} is not valid: {reason}")]
    Invalid {
        /// The URL asked for.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// Reading the body failed.
    #[error("reading the response from {url} failed")]
    Body {
        /// The URL requested.
        url: String,
        /// What failed.
        #[source]
        source: reqwest::Error,
    },
}

impl RequestError {
    /// Whether the client gave up waiting (the call's `timeout`).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::TimedOut { .. })
            || matches!(self, Self::Http { source, .. } | Self::Body { source, .. } if source.is_timeout())
    }

    /// Whether no connection could be made (nothing listening, no route).
    pub fn is_connect(&self) -> bool {
        matches!(self, Self::Http { source, .. } if source.is_connect())
    }

    /// Why the request failed, in words and without the URL, for messages
    /// that name the service themselves: "the request timed out", "the
    /// connection failed", or the chain of causes.
    pub fn reason(&self) -> String {
        if self.is_timeout() {
            return "the request timed out".to_owned();
        }
        if self.is_connect() {
            return "the connection failed".to_owned();
        }
        match self {
            Self::Http { source, .. } | Self::Body { source, .. } => {
                match std::error::Error::source(source) {
                    Some(cause) => toolgate_core::error_chain(cause),
                    None => source.to_string(),
                }
            }
            Self::Refused { refusal, .. } => refusal.to_string(),
            other => other.to_string(),
        }
    }
}

/// A response whose body has not been read yet.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) url: Url,
    pub(crate) redirects: usize,
    pub(crate) inner: reqwest::Response,
}

impl Response {
    pub(crate) fn status(&self) -> StatusCode {
        self.inner.status()
    }

    pub(crate) fn remote_addr(&self) -> Option<SocketAddr> {
        self.inner.remote_addr()
    }

    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.inner
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// Reads the body, stopping after `max_bytes`; returns the bytes and
    /// whether the body was longer.
    pub(crate) async fn read_capped(
        mut self,
        max_bytes: usize,
    ) -> Result<(Vec<u8>, bool), RequestError> {
        let mut body = Vec::new();
        loop {
            let chunk = self
                .inner
                .chunk()
                .await
                .map_err(|source| RequestError::Body {
                    url: self.url.to_string(),
                    source,
                })?;
            let Some(chunk) = chunk else {
                return Ok((body, false));
            };
            let room = max_bytes - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
    }
}

/// The checked client shared by `web_fetch` and `web_search`.
#[derive(Clone)]
pub(crate) struct SafeClient {
    http: reqwest::Client,
    policy: Arc<UrlPolicy>,
    max_redirects: usize,
}

impl std::fmt::Debug for SafeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SafeClient")
            .field("policy", &self.policy)
            .field("max_redirects", &self.max_redirects)
            .finish_non_exhaustive()
    }
}

impl SafeClient {
    pub(crate) fn new(
        policy: Arc<UrlPolicy>,
        resolver: Arc<dyn Resolver>,
        user_agent: &str,
        timeout: Duration,
        max_redirects: usize,
    ) -> Result<Self, reqwest::Error> {
        // reqwest is built with rustls but without a default crypto provider
        // (the workspace's choice, see toolgate-agent); its client
        // constructor panics unless one is installed. A second install is a
        // no-op.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckingResolve {
                resolver,
                policy: Arc::clone(&policy),
            }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .pool_max_idle_per_host(0)
            .user_agent(user_agent)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .timeout(timeout)
            .build()?;
        Ok(Self {
            http,
            policy,
            max_redirects,
        })
    }

    /// The policy requests are checked against.
    pub(crate) fn policy(&self) -> &UrlPolicy {
        &self.policy
    }

    /// GETs `url` with `headers`, following up to `max_redirects`
    /// redirects when `follow` is set (each re-checked); with `follow`
    /// off, a redirect is an error, so headers such as an API key never
    /// travel to another URL.
    pub(crate) async fn get(
        &self,
        url: &str,
        headers: HeaderMap,
        follow: bool,
    ) -> Result<Response, RequestError> {
        let outgoing = Outgoing {
            method: Method::GET,
            headers,
            basic_auth: None,
            body: None,
            timeout: None,
        };
        self.send(url, &outgoing, follow).await
    }

    /// Sends `outgoing` to `url`, following up to `max_redirects`
    /// redirects when `follow` is set, each re-checked like the first URL.
    ///
    /// # Rules
    ///
    /// 1. A 303, and a 301 or 302 answering anything but `GET` or `HEAD`,
    ///    turns the next request into a `GET` without a body (as browsers
    ///    do); 307 and 308 repeat the method and the body.
    /// 2. Credentials (basic auth and an `Authorization` header) go only to
    ///    the origin of the first URL: a redirect to another origin drops
    ///    them.
    /// 3. With `follow` off, a redirect is an error
    ///    ([`RequestError::Redirected`]).
    pub(crate) async fn send(
        &self,
        url: &str,
        outgoing: &Outgoing,
        follow: bool,
    ) -> Result<Response, RequestError> {
        let refused = |url: &str, refusal| RequestError::Refused {
            url: url.to_owned(),
            refusal,
        };
        let mut current = self.policy.check_url(url).map_err(|r| refused(url, r))?.url;
        let first_origin = current.origin();
        let mut method = outgoing.method.clone();
        let mut body = outgoing.body.clone();
        let mut headers = outgoing.headers.clone();
        let mut redirects = 0;
        loop {
            let same_origin = current.origin() == first_origin;
            if !same_origin {
                headers.remove(AUTHORIZATION);
            }
            let mut request = self
                .http
                .request(method.clone(), current.clone())
                .headers(headers.clone());
            if let (true, Some((user, password))) = (same_origin, &outgoing.basic_auth) {
                request = request.basic_auth(user, password.as_ref());
            }
            if let Some(body) = &body {
                request = request.body(body.clone());
            }
            if let Some(timeout) = outgoing.timeout {
                request = request.timeout(timeout);
            }
            let response = request
                .send()
                .await
                .map_err(|source| match refusal_in(&source) {
                    Some(refusal) => refused(current.as_str(), refusal),
                    None => RequestError::Http {
                        url: current.to_string(),
                        source,
                    },
                })?;
            let status = response.status();
            let location = response
                .headers()
                .get(LOCATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let location = match location {
                Some(location) if is_followed_redirect(status) => location,
                _ => {
                    return Ok(Response {
                        url: current,
                        redirects,
                        inner: response,
                    });
                }
            };
            let next = current
                .join(&location)
                .map_err(|_| RequestError::BadRedirect {
                    url: current.to_string(),
                    location: location.chars().take(200).collect(),
                })?;
            if !follow {
                return Err(RequestError::Redirected {
                    url: current.to_string(),
                    location: next.to_string(),
                });
            }
            if redirects == self.max_redirects {
                return Err(RequestError::TooManyRedirects {
                    max: self.max_redirects,
                    next: next.to_string(),
                });
            }
            redirects += 1;
            let becomes_get = status == StatusCode::SEE_OTHER
                || (matches!(status.as_u16(), 301 | 302)
                    && method != Method::GET
                    && method != Method::HEAD);
            if becomes_get {
                method = Method::GET;
                body = None;
                headers.remove(CONTENT_TYPE);
            }
            current = self
                .policy
                .check_parsed(next.clone())
                .map_err(|r| refused(next.as_str(), r))?
                .url;
        }
    }
}

/// One request as [`SafeClient::send`] sends it.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub(crate) method: Method,
    pub(crate) headers: HeaderMap,
    /// User name and password, sent to the first URL's origin only.
    pub(crate) basic_auth: Option<(String, Option<String>)>,
    pub(crate) body: Option<Vec<u8>>,
    /// Overrides the client's timeout for each request of the chain.
    pub(crate) timeout: Option<Duration>,
}

/// The statuses whose `Location` is followed.
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// The policy's refusal inside a reqwest error (our resolver's answer).
fn refusal_in(error: &reqwest::Error) -> Option<UrlRefusal> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refusal) = cause.downcast_ref::<UrlRefusal>() {
            return Some(refusal.clone());
        }
        source = cause.source();
    }
    None
}
