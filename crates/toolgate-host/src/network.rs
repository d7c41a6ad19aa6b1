//! `commands.network`: where the commands toolgate runs may connect — the
//! host's whole network, none, or only the hosts a list allows, through the
//! sandbox's proxy — and how the proxy's questions and connections reach
//! the gate's approver and audit.
//!
//! # Forms
//!
//! ```yaml
//! commands:
//!   network: allow            # the default: the host's network, every destination
//! ---
//! commands:
//!   network: deny             # no network at all
//! ---
//! commands:
//!   network:                  # only through toolgate's proxy
//!     allow:
//!       - github.com          # that name, any port
//!       - "*.npmjs.org"       # every name below npmjs.org (quoted: YAML)
//!       - example.com:8443    # that name, that port
//!       - 10.0.0.0/8          # addresses (private ones only when listed)
//!     deny:
//!       - gist.github.com     # deny wins over allow
//! ```
//!
//! What an entry matches, and the order of the rules (deny wins, addresses
//! only when listed, no private address through a wildcard), is on
//! [`NetworkPolicy`](toolgate_sandbox::NetworkPolicy). Read-only commands
//! never have a network, whatever the form.
//!
//! # Consent
//!
//! A name neither list matches is *unlisted*. What happens to a connection
//! to it depends on the gate that runs the command:
//!
//! | confirmation mode | unlisted host |
//! |---|---|
//! | `confirm-sensitive` (the default), `confirm-all`, `accept-edits` | the person is asked, as for a tool call: the terminal prompt, the web UI card or MCP elicitation shows a `network` call that "reaches host:port". *Allow* lets this connection through; *allow for the session* lets the host (any port) through until toolgate exits; *deny* refuses it, and the host is not asked about again |
//! | `yolo`, `dont-ask` | refused at once: these modes never ask, and the list is the user's statement of where commands may go |
//! | any, with nobody to ask (no terminal, `toolgate call` in a script) | refused at once |
//!
//! A refused command sees why: HTTP `403 Forbidden` with a body naming the
//! host and this key, or SOCKS5 reply 2 ("connection not allowed by
//! ruleset").
//!
//! # Audit
//!
//! Every connection, allowed or refused, is one audit record of the
//! pseudo-tool `network` (call id `net-N`): the host and port as its
//! effect, the decision (`allowed`, `approved`, `denied`, `refused`), the
//! duration, the bytes each way (`transfer`) and, for a refusal, why.
//!
//! # Trust
//!
//! In a workspace's `toolgate.yaml`, `commands.network.deny` applies
//! without trust (it only refuses more: a domain policy with nothing
//! allowed is stricter than the default); `allow`, `deny` as a whole and
//! `commands.network.allow` need it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde_json::json;
use toolgate_core::{Effect, Effects, Sensitivity};
use toolgate_engine::{
    Approval, ApprovalRequest, ApprovalView, Approver, AuditRecord, AuditSink, Transfer,
};
use toolgate_sandbox::{
    ConnectionRecord, ConsentAnswer, ConsentRequest, NetworkConsent, NetworkObserver,
};

pub use crate::config::network::{DomainLists, NetworkSetting};

/// The name audit records and approval questions give a connection.
pub const NETWORK_TOOL: &str = "network";

/// Asks the gate's approver about unlisted hosts: the question is a
/// `network` pseudo-call whose one effect "reaches host:port", so every
/// front end shows it as it shows a tool call.
pub(crate) struct ApproverConsent {
    approver: Arc<dyn Approver>,
    /// The runtime the approver lives on (the proxy has its own).
    handle: tokio::runtime::Handle,
    asked: AtomicU64,
}

impl ApproverConsent {
    pub(crate) fn new(approver: Arc<dyn Approver>, handle: tokio::runtime::Handle) -> Self {
        Self {
            approver,
            handle,
            asked: AtomicU64::new(0),
        }
    }
}

/// The question about `host:port`, as every front end shows it.
pub(crate) fn consent_view(
    call_id: &str,
    host: &str,
    port: u16,
    protocol: &str,
) -> (ApprovalView, serde_json::Value, Effects) {
    let url = format!("{host}:{port}");
    let args = json!({"host": host, "port": port, "protocol": protocol});
    let effects = Effects::known([Effect::Network { url: url.clone() }]);
    let mut view = ApprovalView::new(
        NETWORK_TOOL,
        call_id,
        &args,
        &effects,
        Sensitivity::Sensitive,
    );
    view.reason = format!(
        "a command connects to {url}, which commands.network.allow does not list; allowing it \
         for the session allows {host} on every port until toolgate exits"
    );
    (view, args, effects)
}

#[async_trait]
impl NetworkConsent for ApproverConsent {
    async fn ask(&self, request: &ConsentRequest) -> ConsentAnswer {
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let approver = Arc::clone(&self.approver);
        let (host, port, protocol) = (
            request.host.clone(),
            request.port,
            request.protocol.as_str(),
        );
        let question = async move {
            let (view, args, effects) =
                consent_view(&format!("net-ask-{n}"), &host, port, protocol);
            let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
            approver.approve(&request).await
        };
        match self.handle.spawn(question).await {
            Ok(Approval::Allow) => ConsentAnswer::AllowOnce,
            Ok(Approval::AllowForSession) => ConsentAnswer::AllowForSession,
            // Deny, abort (a connection cannot stop the run), nobody to
            // ask, or the question was lost.
            _ => ConsentAnswer::Deny,
        }
    }
}

/// Turns the proxy's connections into the gate's audit records.
#[derive(Debug)]
pub(crate) struct AuditObserver {
    sinks: Vec<Arc<dyn AuditSink>>,
    session_id: Option<String>,
}

impl AuditObserver {
    pub(crate) fn new(sinks: Vec<Arc<dyn AuditSink>>, session_id: Option<String>) -> Self {
        Self { sinks, session_id }
    }
}

impl NetworkObserver for AuditObserver {
    fn connection(&self, record: &ConnectionRecord) {
        let args = json!({
            "host": record.host,
            "port": record.port,
            "protocol": record.protocol.as_str(),
        });
        let digest = crate::config::trust::sha256_hex(args.to_string().as_bytes());
        let call_id = format!("net-{}", record.id);
        let effects = Effects::known([Effect::Network {
            url: format!("{}:{}", record.host, record.port),
        }]);
        let audit = AuditRecord {
            files_changed: Vec::new(),
            ts: jiff::Timestamp::now().to_string(),
            call_id: &call_id,
            session_id: self.session_id.as_deref(),
            client: None,
            tool: NETWORK_TOOL,
            args_sha256: digest,
            decision: record.decision.as_str(),
            success: record.decision.allowed() && record.error.is_none(),
            duration_us: u64::try_from(record.duration.as_micros()).unwrap_or(u64::MAX),
            error: record.error.as_deref(),
            effects,
            rule: None,
            transfer: Some(Transfer {
                sent: record.sent,
                received: record.received,
            }),
        };
        for sink in &self.sinks {
            sink.record(&audit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The terminal shows the same words as the web UI card: the host and
    /// port, and what "for the session" means.
    #[test]
    fn the_question_reads_like_a_call() {
        let (view, _, _) = consent_view("net-ask-1", "registry.example", 443, "http-connect");
        let lines: Vec<String> = view.lines().into_iter().map(|l| l.text).collect();
        assert_eq!(
            lines,
            [
                "allow `network`? a command connects to registry.example:443, which \
                 commands.network.allow does not list; allowing it for the session allows \
                 registry.example on every port until toolgate exits",
                "reaches registry.example:443",
            ]
        );
    }
}
