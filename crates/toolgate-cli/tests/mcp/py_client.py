"""Drives `toolgate mcp serve` with the official Python SDK (`pip install mcp`).

Usage: py_client.py stdio TOOLGATE_BIN WORKSPACE [--elicit accept|decline]
       py_client.py http URL [--token TOKEN] [--elicit accept|decline]

Uses the high-level `mcp.Client` in its default "auto" mode, which probes
`server/discover` first and falls back to `initialize`. Prints one JSON
object: the negotiated version, the tool names and annotations, and the
results of a few calls, for the Rust test to check.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters, types


def result_json(result):
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return {"is_error": bool(result.is_error), "text": text}


async def main(argv):
    kind = argv[1]
    elicit = None
    token = None
    if "--elicit" in argv:
        elicit = argv[argv.index("--elicit") + 1]
    if "--token" in argv:
        token = argv[argv.index("--token") + 1]
    if kind == "stdio":
        server = StdioServerParameters(
            command=argv[2], args=["--workspace", argv[3], "mcp", "serve"]
        )
    else:
        url = argv[2]
        if token is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            server = streamable_http_client(url, http_client=http)
        else:
            server = url

    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        if elicit == "accept":
            return types.ElicitResult(action="accept", content={"allow_for_session": False})
        return types.ElicitResult(action="decline")

    kwargs = {}
    if elicit is not None:
        kwargs["elicitation_callback"] = on_elicit
    out = {}
    async with Client(server, **kwargs) as client:
        out["protocol_version"] = client.protocol_version
        tools = await client.list_tools()
        out["tools"] = {
            t.name: {
                "read_only": t.annotations.read_only_hint if t.annotations else None,
                "destructive": t.annotations.destructive_hint if t.annotations else None,
                "idempotent": t.annotations.idempotent_hint if t.annotations else None,
                "open_world": t.annotations.open_world_hint if t.annotations else None,
            }
            for t in tools.tools
        }
        out["read"] = result_json(await client.call_tool("read_file", {"path": "hello.txt"}))
        out["refused"] = result_json(await client.call_tool("read_file", {"path": "../outside.txt"}))
        out["unknown"] = result_json(await client.call_tool("no_such_tool", {}))
        out["write"] = result_json(
            await client.call_tool("write_file", {"path": "new.txt", "content": "written\n"})
        )
    out["elicitations"] = asked
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
