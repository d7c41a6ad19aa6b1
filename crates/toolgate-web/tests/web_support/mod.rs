//! What the web tool tests share: a DNS the test controls, and the gate.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    clippy::must_use_candidate,
    reason = "test support: each test file uses part of it; a failed unwrap is a failed test"
)]

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use toolgate_core::{Registry, Tool, ToolCall};
use toolgate_engine::{Execution, ExecutionEngine};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_web::{Resolver, WebConfig, WebToolsBuilder};

/// A resolver whose answers the test sets, name by name. A name with
/// several answers gives them in turn (the last one again when they run
/// out); an unknown name does not exist. Every lookup is recorded.
#[derive(Default)]
pub struct FakeDns {
    answers: Mutex<HashMap<String, VecDeque<Vec<IpAddr>>>>,
    lookups: Mutex<Vec<String>>,
}

impl FakeDns {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// `name` answers `addrs` (after any answers already set).
    pub fn answer(&self, name: &str, addrs: &[&str]) {
        let addrs = addrs.iter().map(|a| a.parse().unwrap()).collect();
        self.answers
            .lock()
            .unwrap()
            .entry(name.to_owned())
            .or_default()
            .push_back(addrs);
    }

    /// The names looked up so far, in order.
    pub fn lookups(&self) -> Vec<String> {
        self.lookups.lock().unwrap().clone()
    }
}

#[async_trait]
impl Resolver for FakeDns {
    async fn lookup(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        self.lookups.lock().unwrap().push(host.to_owned());
        let mut answers = self.answers.lock().unwrap();
        let queue = answers
            .get_mut(host)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such host (fake DNS)"))?;
        if queue.len() > 1 {
            Ok(queue.pop_front().unwrap())
        } else {
            Ok(queue.front().cloned().unwrap_or_default())
        }
    }
}

/// The gate over the web tools, in `mode`.
pub struct Gate {
    pub engine: ExecutionEngine,
    pub registry: Arc<Registry>,
}

impl Gate {
    pub fn new(config: WebConfig, dns: Arc<FakeDns>, mode: ConfirmationMode) -> Self {
        let registry = Arc::new(Registry::new());
        for tool in WebToolsBuilder::new(config).resolver(dns).build().unwrap() {
            registry.register_arc(tool).unwrap();
        }
        let engine = ExecutionEngine::builder(Arc::clone(&registry))
            .policy(ConfirmationPolicy::new(mode))
            .build();
        Self { engine, registry }
    }

    /// The gate in `yolo` mode: calls run without asking.
    pub fn yolo(config: WebConfig, dns: Arc<FakeDns>) -> Self {
        Self::new(config, dns, ConfirmationMode::Yolo)
    }

    pub async fn call(&self, tool: &str, args: Value) -> Execution {
        self.engine.execute(ToolCall::new("t1", tool, args)).await
    }

    pub fn tool(&self, name: &str) -> Arc<dyn Tool> {
        self.registry.get(name).unwrap().tool().clone()
    }
}

/// A configuration with `allow_hosts` and the cache off.
pub fn config(allow_hosts: &[&str]) -> WebConfig {
    let mut config = WebConfig::default();
    config.allow_hosts = allow_hosts.iter().map(|h| (*h).to_owned()).collect();
    config.cache_ttl = 0;
    config
}

/// The text a call gave the model: its output, or its error.
pub fn text(run: &Execution) -> String {
    if run.result.success {
        run.result.output.clone()
    } else {
        run.result.error.clone().unwrap_or_default()
    }
}
