"""Three MCP clients (the official Python SDK) on one `toolgate mcp serve --http`.

Usage: three_clients.py URL

- A answers its first question "allow for the session", but only after B and
  C have done everything below: its question stays open meanwhile.
- B declines every question; its reads must return while A's question is open.
- C declares no elicitation, so it cannot be asked at all.

Prints one JSON object for the Rust test to check. A phase that does not
finish (a client stalled behind another's open question) is reported as
stalled after a generous time, never waited on forever.
"""

import asyncio
import json
import sys

from mcp import Client, types


def result_json(result):
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return {"is_error": bool(result.is_error), "text": text}


async def main(url):
    out = {"a_asked": [], "b_asked": []}
    a_open = asyncio.Event()
    release = asyncio.Event()

    async def a_elicit(context, params):
        out["a_asked"].append(params.message)
        a_open.set()
        await release.wait()
        return types.ElicitResult(action="accept", content={"allow_for_session": True})

    async def b_elicit(context, params):
        out["b_asked"].append(params.message)
        return types.ElicitResult(action="decline")

    async with Client(url, elicitation_callback=a_elicit) as a, Client(
        url, elicitation_callback=b_elicit
    ) as b, Client(url) as c:
        a_first = asyncio.create_task(
            a.call_tool("write_file", {"path": "a1.txt", "content": "from A\n"})
        )
        await asyncio.wait_for(a_open.wait(), 30)

        async def while_a_waits():
            reads = [
                result_json(await b.call_tool("read_file", {"path": "hello.txt"}))
                for _ in range(5)
            ]
            out["b_reads"] = reads
            out["b_write"] = result_json(
                await b.call_tool("write_file", {"path": "b.txt", "content": "from B\n"})
            )
            out["c_read"] = result_json(await c.call_tool("read_file", {"path": "hello.txt"}))
            out["c_write"] = result_json(
                await c.call_tool("write_file", {"path": "c.txt", "content": "from C\n"})
            )
            out["a_still_open"] = not release.is_set() and not a_first.done()

        try:
            await asyncio.wait_for(while_a_waits(), 60)
            out["stalled"] = False
        except asyncio.TimeoutError:
            out["stalled"] = True
        release.set()
        out["a_first"] = result_json(await a_first)
        # A's "allow for the session" covers A's next write, and nobody else's.
        out["a_second"] = result_json(
            await a.call_tool("write_file", {"path": "a2.txt", "content": "again\n"})
        )
        out["b_second"] = result_json(
            await b.call_tool("write_file", {"path": "b2.txt", "content": "from B\n"})
        )
        out["c_second"] = result_json(
            await c.call_tool("write_file", {"path": "c2.txt", "content": "from C\n"})
        )
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
