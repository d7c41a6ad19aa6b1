//! MCP for toolgate, both ways: remote MCP tools used as local tools, and the
//! registry served to MCP clients through the gate.
//!
//! Nothing is implemented here yet; the crate exists so the layering of the
//! workspace (core → policy → engine → tools/mcp → agent → cli) holds from
//! the start. The MCP issue fills it in over the official `rmcp` crate.
