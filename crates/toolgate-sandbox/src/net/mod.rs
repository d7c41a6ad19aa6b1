//! Network policy by destination: a sandboxed command reaches only a proxy
//! toolgate runs, which connects where the [`NetworkPolicy`] allows.
//!
//! Without a policy the network of [`Profile::Standard`](crate::Profile)
//! processes is all or nothing ([`SandboxBuilder::network`]). With one
//! ([`SandboxBuilder::network_policy`]):
//!
//! - the sandbox makes **one** network namespace for all its processes,
//!   with only a loopback interface and the proxy's two listening sockets
//!   in it (how, and why that is safe: the `linux::netns` module);
//! - every standard-profile process joins it instead of keeping the host's
//!   network, and finds `HTTP_PROXY`/`HTTPS_PROXY` (`http://127.0.0.1:…`)
//!   and `ALL_PROXY` (`socks5h://127.0.0.1:…`) in its environment (rule 7
//!   of the [environment](crate::EnvPolicy)); a program that ignores them
//!   reaches nothing;
//! - toolgate serves both listeners (HTTP `CONNECT` and absolute-form
//!   requests; SOCKS5 `CONNECT`), judges each connection by the policy's
//!   [rules](NetworkPolicy), asks a person about unlisted names through a
//!   [`NetworkConsent`], connects out from the host's network, and reports
//!   every connection, allowed or refused, to a [`NetworkObserver`] and to
//!   `tracing` (target `toolgate::network`).
//!
//! Read-only processes keep no network at all, as before.
//!
//! Loopback inside the namespace is the namespace's own: `NO_PROXY` covers
//! `localhost`, `127.0.0.1` and `::1`, so a server a command starts is
//! reached directly, and the host's loopback services only by a client told
//! to use the proxy for them (`curl --noproxy ''`), when the policy lists
//! them by address.
//!
//! A connection cannot be traced to the process that made it (TCP carries
//! no credentials to the listener), so the proxy asks and tells the newest
//! [`NetworkAttachment`] alive.
//!
//! The proxy itself — its parsers, the policy, consent and the records —
//! is the `toolgate-netproxy` crate (its types are re-exported here); this
//! module makes the namespace, binds the listeners in it, starts the proxy
//! on them and says what each process gets.
//!
//! [`SandboxBuilder::network`]: crate::SandboxBuilder::network
//! [`SandboxBuilder::network_policy`]: crate::SandboxBuilder::network_policy

use std::fmt;
use std::sync::Arc;

use toolgate_netproxy::{Attachments, Proxy};
pub use toolgate_netproxy::{
    ConnectionRecord, ConsentAnswer, ConsentRequest, Decision, NetworkAttachment, NetworkConsent,
    NetworkObserver, NetworkPolicy, NetworkPolicyBuilder, PatternError, Protocol, Resolve,
    SystemResolver,
};

/// How standard-profile processes reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetworkMode {
    /// The host's network, every destination (`commands.network: allow`).
    Host,
    /// None (`commands.network: deny`, or a domain policy that could not
    /// be put in force).
    None,
    /// Only through toolgate's proxy, judged by the [`NetworkPolicy`].
    Proxied,
}

/// Which network mode is in force, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkStatus {
    pub(crate) mode: NetworkMode,
    pub(crate) configured: Option<String>,
    pub(crate) proxy: Option<(u16, u16)>,
    pub(crate) problem: Option<String>,
}

impl NetworkStatus {
    /// The mode standard-profile processes are in.
    pub fn mode(&self) -> NetworkMode {
        self.mode
    }

    /// Why a configured domain policy is not in force (then
    /// [`mode`](Self::mode) is [`NetworkMode::None`]: fail closed).
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// The proxy's ports inside the namespace (HTTP, SOCKS5), when it runs.
    pub fn proxy_ports(&self) -> Option<(u16, u16)> {
        self.proxy
    }
}

impl fmt::Display for NetworkStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.mode, &self.configured, &self.problem) {
            (NetworkMode::Host, Some(lists), Some(problem)) => write!(
                f,
                "the host's network, every destination: the domain policy ({lists}) is not in \
                 force ({problem})"
            )?,
            (NetworkMode::Host, _, _) => f.write_str("the host's network, every destination")?,
            (NetworkMode::Proxied, Some(lists), _) => {
                write!(f, "only through toolgate's proxy ({lists})")?;
                if let Some((http, socks)) = self.proxy {
                    write!(
                        f,
                        "; namespace ready, HTTP proxy 127.0.0.1:{http}, SOCKS5 127.0.0.1:{socks}"
                    )?;
                }
            }
            (_, Some(lists), Some(problem)) => write!(
                f,
                "none: the domain policy ({lists}) is not in force ({problem}), so commands get \
                 no network instead"
            )?,
            _ => f.write_str("none")?,
        }
        Ok(())
    }
}

/// The network part of a sandbox: the policy, the proxy (started on first
/// use), and who is asked and told.
/// The proxy and the namespace it serves: the descriptors processes join
/// (`setns`). The namespace goes when the last process in it exits.
#[derive(Debug)]
pub(crate) struct NsProxy {
    pub(crate) user: std::os::fd::OwnedFd,
    pub(crate) net: std::os::fd::OwnedFd,
    pub(crate) proxy: Proxy,
}

#[derive(Debug)]
pub(crate) struct SandboxNet {
    network: bool,
    policy: Option<NetworkPolicy>,
    proxy: std::sync::OnceLock<Result<Arc<NsProxy>, String>>,
    attachments: Arc<Attachments>,
    uid: u32,
    gid: u32,
}

/// What one process gets.
#[derive(Debug, Default)]
pub(crate) struct ForProcess {
    /// Whether it keeps a network (the host's, or the namespace it joins).
    pub(crate) network: bool,
    /// The namespace to join: (user, net) descriptors.
    pub(crate) join: Option<(libc::c_int, libc::c_int)>,
    /// The proxy variables.
    pub(crate) env: Vec<(String, String)>,
    /// Keeps the descriptors open until the process has joined.
    pub(crate) keep: Option<Arc<NsProxy>>,
}

impl SandboxNet {
    /// `network: false` wins over a policy: no network at all.
    pub(crate) fn new(network: bool, policy: Option<NetworkPolicy>, uid: u32, gid: u32) -> Self {
        Self {
            network,
            policy: policy.filter(|_| network),
            proxy: std::sync::OnceLock::new(),
            attachments: Arc::default(),
            uid,
            gid,
        }
    }

    /// Whether standard processes may reach the network at all (directly,
    /// or through the proxy).
    pub(crate) fn any(&self) -> bool {
        self.network
    }

    pub(crate) fn attach(
        &self,
        consent: Option<Arc<dyn NetworkConsent>>,
        observer: Option<Arc<dyn NetworkObserver>>,
    ) -> NetworkAttachment {
        self.attachments.attach(consent, observer)
    }

    /// The proxy, started on first use; `None` without a policy.
    /// `new_user`: whether processes get user namespaces (see
    /// `linux::netns::create`).
    fn proxy(&self, new_user: bool) -> Option<&Result<Arc<NsProxy>, String>> {
        let policy = self.policy.as_ref()?;
        Some(self.proxy.get_or_init(|| {
            let started = crate::linux::netns::create(self.uid, self.gid, new_user)
                .map_err(|e| toolgate_core::error_chain(&e))
                .and_then(|ns| {
                    Proxy::start(
                        ns.http,
                        ns.socks,
                        policy.clone(),
                        Arc::clone(&self.attachments),
                    )
                    .map(|proxy| NsProxy {
                        user: ns.user,
                        net: ns.net,
                        proxy,
                    })
                    .map_err(|e| format!("the proxy could not start: {e}"))
                });
            match &started {
                Ok(proxy) => tracing::debug!(
                    http = proxy.proxy.http_port(),
                    socks = proxy.proxy.socks_port(),
                    "sandbox network namespace and proxy ready"
                ),
                // Said once per sandbox; processes get no network (fail closed).
                Err(error) => tracing::warn!(
                    "sandbox: the network policy is not in force ({error}); commands get no network"
                ),
            }
            started.map(Arc::new)
        }))
    }

    /// What a process of `standard` profile (or not) gets at `level`.
    pub(crate) fn for_process(
        &self,
        level: crate::Level,
        standard: bool,
        new_user: bool,
    ) -> ForProcess {
        if !standard {
            return ForProcess::default();
        }
        if self.policy.is_none() {
            return ForProcess {
                network: self.network,
                ..ForProcess::default()
            };
        }
        if level != crate::Level::Full {
            // No namespaces: the policy cannot be enforced; take the network
            // away as far as the kernel can (Landlock's TCP rules).
            return ForProcess::default();
        }
        match self.proxy(new_user) {
            Some(Ok(proxy)) => ForProcess {
                network: true,
                join: Some((
                    if new_user {
                        std::os::fd::AsRawFd::as_raw_fd(&proxy.user)
                    } else {
                        -1
                    },
                    std::os::fd::AsRawFd::as_raw_fd(&proxy.net),
                )),
                env: crate::env::proxy_variables(proxy.proxy.http_port(), proxy.proxy.socks_port()),
                keep: Some(Arc::clone(proxy)),
            },
            _ => ForProcess::default(),
        }
    }

    /// The status for `status` (the sandbox's): starts the proxy when a
    /// policy is configured and the full sandbox is available.
    pub(crate) fn status(&self, status: &crate::SandboxStatus, new_user: bool) -> NetworkStatus {
        let Some(policy) = &self.policy else {
            return NetworkStatus {
                mode: if self.network || status.level() == crate::Level::Off {
                    NetworkMode::Host
                } else {
                    NetworkMode::None
                },
                configured: None,
                proxy: None,
                problem: None,
            };
        };
        let allow: Vec<&str> = policy.allowed().collect();
        let deny: Vec<&str> = policy.denied().collect();
        let lists = format!(
            "allow: {}; deny: {}",
            if allow.is_empty() {
                "nothing".to_owned()
            } else {
                allow.join(", ")
            },
            if deny.is_empty() {
                "nothing".to_owned()
            } else {
                deny.join(", ")
            },
        );
        let unenforced = |mode, problem: String| NetworkStatus {
            mode,
            configured: Some(lists.clone()),
            proxy: None,
            problem: Some(problem),
        };
        match status.level() {
            crate::Level::Off => unenforced(
                NetworkMode::Host,
                "the sandbox is off, so nothing is enforced".to_owned(),
            ),
            crate::Level::LandlockOnly if status.landlock_abi() < 4 => unenforced(
                NetworkMode::Host,
                "it needs network namespaces, and this kernel's Landlock (ABI < 4) cannot take \
                 TCP away either"
                    .to_owned(),
            ),
            crate::Level::LandlockOnly => unenforced(
                NetworkMode::None,
                "it needs network namespaces, which are not usable here".to_owned(),
            ),
            crate::Level::Full => match self.proxy(new_user) {
                Some(Ok(proxy)) => NetworkStatus {
                    mode: NetworkMode::Proxied,
                    configured: Some(lists),
                    proxy: Some((proxy.proxy.http_port(), proxy.proxy.socks_port())),
                    problem: None,
                },
                Some(Err(error)) => unenforced(
                    NetworkMode::None,
                    format!("the network namespace could not be made: {error}"),
                ),
                None => unenforced(NetworkMode::None, "no policy".to_owned()),
            },
        }
    }
}
