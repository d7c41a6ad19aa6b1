//! `toolgate config check`: the configuration as loaded (YAML, or JSON with
//! how the workspace file was trusted), the layers it came from, and what
//! the sandbox enforces here.

use anyhow::{Context, anyhow};

use super::{Setup, json_text, show};
use crate::render;
use crate::render::{CliError, Exit};

pub(super) fn config_check(setup: &Setup) -> Result<Exit, CliError> {
    let host = &setup.host;
    let config = host.config();
    let text = if setup.json {
        // The configuration's own keys, plus `trust`: how the workspace file
        // was applied (null without one). Not a configuration key.
        let mut value =
            serde_json::to_value(config).map_err(|e| CliError::new(Exit::Failure, anyhow!(e)))?;
        if let Some(object) = value.as_object_mut() {
            let trust = host.loaded().project.as_ref().map(|p| {
                serde_json::json!({
                    "file": p.file,
                    "sha256": p.sha256,
                    "state": p.trust,
                    "trust_only_keys": p.trust_only_keys,
                    "ignored": p.ignored(),
                })
            });
            object.insert("trust".to_owned(), trust.into());
        }
        json_text(&value)?
    } else {
        serde_yaml_ng::to_string(config)
            .context("could not print the configuration")
            .map_err(|e| CliError::new(Exit::Failure, e))?
    };
    let project = host.loaded().project.as_ref();
    let sources: Vec<String> = host
        .loaded()
        .sources
        .iter()
        .enumerate()
        .map(|(i, source)| match project {
            // The workspace file is the first file layer when there is one.
            Some(p) if i == 0 && !p.ignored().is_empty() => {
                format!("{source} (not trusted: {} ignored)", p.ignored().join(", "))
            }
            _ => source.to_string(),
        })
        .collect();
    render::note(&format!(
        "configuration is valid (workspace {}; layers: defaults{}{})",
        host.workspace().display(),
        if sources.is_empty() { "" } else { ", " },
        sources.join(", ")
    ));
    // What the kernel enforces here, for every process toolgate starts.
    let sandbox = host.sandbox()?;
    render::note(&format!("sandbox: {}", sandbox.status()));
    render::note(&format!("limits: {}", sandbox.status().limits_line()));
    // Where commands may connect (`commands.network`).
    render::note(&format!("network: {}", sandbox.network_status()));
    show(&text)
}
