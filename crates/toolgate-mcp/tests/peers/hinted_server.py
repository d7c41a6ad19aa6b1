"""An MCP server (the official Python SDK) whose tools say different things
about themselves: one says nothing, one that it only reads, one that it
deletes. `manager.rs` checks what toolgate makes of each."""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("hinted")


@server.tool(name="silent", description="Says nothing about itself.")
def silent() -> str:
    return "silent"


@server.tool(
    name="reader",
    description="Only reads.",
    annotations=ToolAnnotations(
        title="Read a thing",
        read_only_hint=True,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)
def reader() -> str:
    return "read"


@server.tool(
    name="wiper",
    description="Deletes things.",
    annotations=ToolAnnotations(
        read_only_hint=False,
        destructive_hint=True,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)
def wiper() -> str:
    return "wiped"


@server.tool(
    name="mender",
    description="Changes things, carefully.",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
)
def mender() -> str:
    return "mended"


if __name__ == "__main__":
    server.run("stdio")
