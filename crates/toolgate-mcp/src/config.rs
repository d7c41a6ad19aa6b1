//! The `mcp:` configuration section.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `mcp:` — the MCP servers whose tools are used as local tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// The servers, by name. The name becomes part of each tool's name
    /// (`mcp_{server}_{tool}`).
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Whether the `mcp_add_server` tool is registered. Default: false.
    pub add_server_tool: bool,
    /// How `toolgate mcp serve --http` serves its own clients.
    pub http: McpHttpConfig,
}

/// `mcp.http:` — the clients of `toolgate mcp serve --http`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpHttpConfig {
    /// The clients, each with its own bearer token. When there are any,
    /// every request must carry one of their tokens, and the token says
    /// which client is calling. Default: none (one anonymous client, or
    /// the token of `--token-env`).
    pub clients: Vec<McpHttpClientConfig>,
}

/// `mcp.http.clients[]:` — one client of the HTTP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpHttpClientConfig {
    /// The client's name: the audit names it, and logs and approvals too.
    pub name: String,
    /// The environment variable holding the client's bearer token.
    pub token_env: String,
    /// The agent whose tools the client may use. Default: every tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Only these of the agent's tools. Default: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// The confirmation mode of the client's calls. Default: the agent's
    /// mode, else the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Requests per minute (a token bucket holding one minute's worth).
    /// Default: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_minute: Option<u32>,
    /// Requests of this client in flight at once on one worker. Default:
    /// no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u32>,
}

/// `mcp.servers.<name>:` — one server, reached either by running `command`
/// (stdio) or at `url` (streamable HTTP).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    /// The program to run (stdio transport).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables for it, on top of the sandbox's built
    /// environment (which holds none of toolgate's credentials).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Paths the server may read although the sandbox hides them (its
    /// installation under the home directory, say): absolute, or `~/…`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub readable: Vec<String>,
    /// Paths outside the workspace the server may write (a cache): absolute,
    /// or `~/…`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
    /// The endpoint (streamable HTTP transport), `https://` or `http://`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding a bearer token for `url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// A PEM file of certificate authorities to trust for an `https://`
    /// `url`, besides the system's (a private or self-signed CA). A relative
    /// path is taken from the directory toolgate runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<String>,
    /// Only these remote tools (remote names). Default: all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    /// Never these remote tools (remote names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    /// Whether the server's tools are read-only for confirmation purposes.
    /// Default: false (every remote call is sensitive).
    pub trusted: bool,
    /// Whether the server is started at all. Default: true.
    pub enabled: bool,
    /// Seconds to connect and list tools before the server is skipped.
    /// Default: 30.
    pub startup_timeout: u64,
    /// Seconds one remote call may take. Default: 60.
    pub call_timeout: u64,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            readable: Vec::new(),
            writable: Vec::new(),
            url: None,
            token_env: None,
            ca_cert: None,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            trusted: false,
            enabled: true,
            startup_timeout: 30,
            call_timeout: 60,
        }
    }
}

impl McpServerConfig {
    /// A stdio server running `command` with `args`.
    pub fn stdio(command: impl Into<String>, args: impl IntoIterator<Item = String>) -> Self {
        Self {
            command: Some(command.into()),
            args: args.into_iter().collect(),
            ..Self::default()
        }
    }

    /// A streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        Self {
            url: Some(url.into()),
            ..Self::default()
        }
    }

    /// The startup timeout as a duration (at least one second).
    pub fn startup_timeout(&self) -> Duration {
        Duration::from_secs(self.startup_timeout.max(1))
    }

    /// The per-call timeout as a duration (at least one second).
    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout.max(1))
    }

    /// Whether a remote tool passes `enabled_tools` / `disabled_tools`.
    pub fn tool_enabled(&self, remote: &str) -> bool {
        let listed = self
            .enabled_tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == remote));
        listed && !self.disabled_tools.iter().any(|n| n == remote)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_filters() {
        let mut server = McpServerConfig::stdio("x", []);
        assert!(server.tool_enabled("echo"));
        server.disabled_tools = vec!["echo".into()];
        assert!(!server.tool_enabled("echo"));
        server.enabled_tools = Some(vec!["add".into()]);
        assert!(server.tool_enabled("add"));
        assert!(!server.tool_enabled("time"));
    }

    #[test]
    fn http_clients_parse_and_unknown_keys_are_refused() {
        let config: McpConfig = serde_json::from_value(serde_json::json!({
            "http": {"clients": [
                {"name": "ci", "token_env": "CI_TOKEN", "mode": "yolo", "rate_per_minute": 60},
                {"name": "bot", "token_env": "BOT_TOKEN", "tools": ["read_file"]}
            ]}
        }))
        .unwrap();
        let clients = &config.http.clients;
        assert_eq!(clients.len(), 2);
        assert_eq!(clients[0].mode.as_deref(), Some("yolo"));
        assert_eq!(clients[0].rate_per_minute, Some(60));
        assert_eq!(clients[1].max_concurrent, None);
        assert_eq!(
            clients[1].tools.as_deref(),
            Some(&["read_file".to_owned()][..])
        );
        let error = serde_json::from_value::<McpHttpClientConfig>(
            serde_json::json!({"name": "x", "token_env": "T", "rate": 1}),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("unknown field `rate`"),
            "{error}"
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        let error = serde_json::from_value::<McpServerConfig>(serde_json::json!({"comand": "x"}))
            .unwrap_err();
        assert!(
            error.to_string().contains("unknown field `comand`"),
            "{error}"
        );
    }
}
