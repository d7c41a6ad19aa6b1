//! `mcp_add_server`: connect an MCP server at run time (seed 003).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_yaml_ng::{Mapping, Value as Yaml};
use toolgate_core::{Sensitivity, ToolContext, ToolResult, TypedTool};

use crate::client::{McpManager, ServerState};
use crate::config::McpServerConfig;

/// The arguments of `mcp_add_server`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddServerArgs {
    /// The server's name: letters, digits, `_` and `-`. Its tools are named
    /// `mcp_{name}_{tool}`.
    pub name: String,
    /// The program to run (stdio). Give this or `url`.
    pub command: Option<String>,
    /// The program's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// An `http://` streamable HTTP endpoint. Give this or `command`.
    pub url: Option<String>,
    /// The environment variable holding a bearer token for `url`.
    pub token_env: Option<String>,
}

/// Connects an MCP server without a restart and saves it in the
/// configuration file, so it is there next time too.
///
/// Sensitive: it runs a program of the model's choosing. Registered only
/// when `mcp.add_server_tool: true`.
pub struct AddServerTool {
    manager: Arc<McpManager>,
    config_path: PathBuf,
}

impl std::fmt::Debug for AddServerTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddServerTool")
            .field("config_path", &self.config_path)
            .finish_non_exhaustive()
    }
}

impl AddServerTool {
    /// A tool that connects through `manager` and saves to `config_path`
    /// (a YAML file; created if missing).
    pub fn new(manager: Arc<McpManager>, config_path: impl Into<PathBuf>) -> Self {
        Self {
            manager,
            config_path: config_path.into(),
        }
    }

    /// Adds `mcp.servers.NAME` to the YAML file, keeping the rest, and
    /// replaces the file atomically (write a sibling, then rename).
    fn persist(&self, name: &str, server: &McpServerConfig) -> Result<(), String> {
        let text = match std::fs::read_to_string(&self.config_path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(format!(
                    "could not read {}: {e}",
                    self.config_path.display()
                ));
            }
        };
        let mut root: Yaml = if text.trim().is_empty() {
            Yaml::Mapping(Mapping::new())
        } else {
            serde_yaml_ng::from_str(&text)
                .map_err(|e| format!("could not parse {}: {e}", self.config_path.display()))?
        };
        let entry = serde_yaml_ng::to_value(server).map_err(|e| e.to_string())?;
        let Yaml::Mapping(map) = &mut root else {
            return Err(format!(
                "{} is not a YAML mapping",
                self.config_path.display()
            ));
        };
        let mcp = map
            .entry(Yaml::String("mcp".into()))
            .or_insert_with(|| Yaml::Mapping(Mapping::new()));
        let Yaml::Mapping(mcp) = mcp else {
            return Err("`mcp` in the configuration is not a mapping".to_owned());
        };
        let servers = mcp
            .entry(Yaml::String("servers".into()))
            .or_insert_with(|| Yaml::Mapping(Mapping::new()));
        let Yaml::Mapping(servers) = servers else {
            return Err("`mcp.servers` in the configuration is not a mapping".to_owned());
        };
        servers.insert(Yaml::String(name.to_owned()), entry);
        let out = serde_yaml_ng::to_string(&root).map_err(|e| e.to_string())?;
        let tmp = self.config_path.with_extension("yaml.tmp");
        std::fs::write(&tmp, out)
            .and_then(|()| std::fs::rename(&tmp, &self.config_path))
            .map_err(|e| format!("could not write {}: {e}", self.config_path.display()))
    }
}

#[async_trait]
impl TypedTool for AddServerTool {
    type Args = AddServerArgs;
    const NAME: &'static str = "mcp_add_server";
    const DESCRIPTION: &'static str = "Connects an MCP server now (a stdio `command` or an \
        `http://` `url`), registers its tools as `mcp_{name}_{tool}` and saves it in the \
        configuration file.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    async fn run(&self, args: AddServerArgs, _ctx: &ToolContext) -> ToolResult {
        if args.name.is_empty()
            || !args
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return ToolResult::failure(
                "the server name must be letters, digits, `_` or `-`, such as `time`",
            );
        }
        if self.manager.has_server(&args.name) {
            return ToolResult::failure(format!(
                "an MCP server called `{}` is already connected; pick another name",
                args.name
            ));
        }
        let mut server = match (args.command, args.url) {
            (Some(command), None) => McpServerConfig::stdio(command, args.args),
            (None, Some(url)) => McpServerConfig::http(url),
            _ => {
                return ToolResult::failure(
                    "give exactly one of `command` (stdio) or `url` (http)",
                );
            }
        };
        server.token_env = args.token_env;
        let status = self.manager.add(&args.name, server.clone()).await;
        if let ServerState::Failed(reason) = &status.state {
            return ToolResult::failure(format!("could not connect: {reason}"));
        }
        if let Err(reason) = self.persist(&args.name, &server) {
            return ToolResult::failure(format!(
                "connected, but the configuration was not saved: {reason}"
            ));
        }
        let names: Vec<&str> = status.tools.iter().map(|(l, _)| l.as_str()).collect();
        ToolResult::success(format!(
            "connected `{}` with {} tools: {}; saved in {}",
            args.name,
            names.len(),
            names.join(", "),
            self.config_path.display()
        ))
    }
}
