"""A streamable-HTTP MCP server over TLS, built with the official Python SDK,
for toolgate's https client test.

    python tls_server.py PORT CERT_PEM KEY_PEM
"""

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("tls")


@server.tool()
def shout(text: str) -> str:
    """Upper-cases the text."""
    return text.upper()


port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
uvicorn.run(
    server.streamable_http_app(),
    host="127.0.0.1",
    port=port,
    ssl_certfile=cert,
    ssl_keyfile=key,
    log_level="warning",
)
