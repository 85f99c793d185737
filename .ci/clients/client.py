"""A Python-SDK (PyPI `mcp`) client for the proxy interop check: connects to the URL given, lists
tools, calls echo and a progress-reporting tool, and prints what it got as one JSON line.

    python client.py http://127.0.0.1:PORT/mcp
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def is_error(result):
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


async def main(url):
    progress = 0

    async def on_progress(*_args, **_kwargs):
        nonlocal progress
        progress += 1

    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            echo = await session.call_tool("echo", {"message": "hi from python"})
            long = await session.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                progress_callback=on_progress,
            )
            print(json.dumps({
                "tools": len(tools.tools),
                "echo": getattr(echo.content[0], "text", None) if echo.content else None,
                "echo_error": is_error(echo),
                "long_error": is_error(long),
                "progress": progress,
            }))


anyio.run(main, sys.argv[1])
