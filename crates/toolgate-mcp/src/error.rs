//! Errors of the MCP client and server.

/// What can go wrong connecting to or serving MCP.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server's configuration cannot work.
    #[error("server `{server}`: {reason}")]
    Config {
        /// The server's name.
        server: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// The server process could not be started.
    #[error("server `{server}`: could not run `{command}`")]
    Spawn {
        /// The server's name.
        server: String,
        /// The program.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The MCP handshake or the tool listing failed.
    #[error("server `{server}`: {stage} failed")]
    Protocol {
        /// The server's name.
        server: String,
        /// `initialize` or `tools/list`.
        stage: &'static str,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The server did not answer within its startup timeout.
    #[error("server `{server}` did not start within {seconds} s (raise `startup_timeout`)")]
    StartupTimeout {
        /// The server's name.
        server: String,
        /// The timeout.
        seconds: u64,
    },
    /// [`McpServer::serve_http`](crate::McpServer::serve_http) was given an
    /// empty or blank bearer token, which would let in any request that
    /// sends `Authorization: Bearer `.
    #[error("MCP server: the bearer token is empty; use a long random token")]
    EmptyToken,
    /// A client of `mcp.http.clients` cannot be served as configured.
    #[error("MCP client `{client}`: {reason}")]
    Client {
        /// The client's name.
        client: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// Serving MCP failed.
    #[error("MCP server: {what}")]
    Serve {
        /// What was being done.
        what: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
