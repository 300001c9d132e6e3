"""The MCP shim's cost: tools/call latency over HTTP and stdio vs ``Session.call``, and tools/list tokens.

Measured in one run:

- median wall time of ``tabs_context`` (a cheap tool: no page work) called N times
  1. through ``Session.call`` in this process (the baseline),
  2. over streamable HTTP with the SDK client against ``ocnb.mcp.serve`` in this process
     (handshake era 2025-11-25 and the 2026-07-28 era),
  3. over stdio with the SDK client against ``python -m ocnb.mcp.cli`` (a subprocess; the baseline
     for it is the same ``Session.call`` figure, measured here),
  and the median added by each transport (target: ≤ 5 ms);
- cl100k tokens of ``tools/list`` as a client receives it (every tool entry, annotations included,
  and the ``{name, description, inputSchema}`` core only) for ocnb's default listing (the essentials,
  see ``ocnb/mcp/listing.py``) and for Playwright MCP
  (``@playwright/mcp``, pinned, installed into ``bench/.node`` when missing, run over stdio on the
  same Chromium).

Run: ``.venv/bin/python bench/bench_mcp.py [--n 300]``. Writes ``bench/results/mcp.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import httpx  # noqa: E402
from common import PW_MCP_VERSION, playwright_mcp_params, save  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

import ocnb  # noqa: E402
from ocnb.mcp import serve  # noqa: E402
from ocnb.registry import capability_groups  # noqa: E402
from ocnb.tokens import count_tools  # noqa: E402

TOOL = "tabs_context"


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples), 3)


def timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


async def atimed(coro: Any) -> float:
    t0 = time.perf_counter()
    await coro
    return (time.perf_counter() - t0) * 1000


def direct_call(session: ocnb.Session) -> None:
    session.call(TOOL).raise_for_error()


async def sdk_pairs(client: Client, session: ocnb.Session, n: int, warmup: int = 20) -> tuple[list[float], list[float]]:
    """(Session.call, SDK client tools/call) times, interleaved so both see the same machine load."""
    for _ in range(warmup):
        result = await client.call_tool(TOOL, {})
        assert not result.is_error, result
        direct_call(session)
    base, over = [], []
    for _ in range(n):
        base.append(timed(lambda: direct_call(session)))
        over.append(await atimed(client.call_tool(TOOL, {})))
    return base, over


def tool_dicts(tools: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(full tools/list entries as sent on the wire, the name/description/inputSchema core)."""
    full = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools]
    core = [{k: t[k] for k in ("name", "description", "inputSchema") if k in t} for t in full]
    return full, core


INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": TOOL, "arguments": {}}}


def worker_pairs(session: ocnb.Session, url: str, token: str, kind: str, n: int) -> tuple[list[float], list[float]]:
    """(Session.call here, tools/call timed by a client in another process), interleaved one by one.

    The agent is another process in real use (Claude Code, Cursor …), so the client runs in a child
    process (``--worker``) and this process hosts the session and the HTTP server, as a kernel does.
    """
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", kind, url, token],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        for _ in range(20):
            direct_call(session)
        base, over = [], []
        for _ in range(n):
            base.append(timed(lambda: direct_call(session)))
            proc.stdin.write("call\n")
            proc.stdin.flush()
            over.append(float(proc.stdout.readline()))
        return base, over
    finally:
        proc.stdin.write("quit\n")
        proc.stdin.close()
        proc.wait(30)


def run_worker(kind: str, url: str, token: str) -> int:
    """The client side of :func:`worker_pairs`: one timed tools/call per ``call`` line on stdin."""
    if kind == "raw":
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        headers["Authorization"] = f"Bearer {token}"
        with httpx.Client(timeout=30) as http:
            r = http.post(url, json=INIT, headers=headers)
            headers["mcp-session-id"] = r.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = "2025-11-25"
            http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)

            def call() -> None:
                reply = http.post(url, json=CALL, headers=headers)
                assert '"isError":false' in reply.text, reply.text

            for _ in range(20):
                call()
            print("ready", flush=True)
            for line in sys.stdin:
                if line.strip() != "call":
                    break
                print(timed(call), flush=True)
        return 0

    async def sdk() -> None:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=kind) as client:
                for _ in range(20):
                    await client.call_tool(TOOL, {})
                print("ready", flush=True)
                while (await asyncio.to_thread(sys.stdin.readline)).strip() == "call":
                    print(await atimed(client.call_tool(TOOL, {})), flush=True)

    asyncio.run(sdk())
    return 0


def raw_stdio_pairs(session: ocnb.Session, n: int, home: str, warmup: int = 20) -> tuple[list[float], list[float]]:
    """tools/call as JSON lines over the stdio server's pipes (no SDK client)."""
    env = {**os.environ, "OCNB_HOME": home}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ocnb.mcp.cli"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(msg: dict[str, Any]) -> None:
        stdin.write(json.dumps(msg) + "\n")
        stdin.flush()

    def call() -> None:
        send(CALL)
        line = stdout.readline()
        assert '"isError":false' in line, line

    try:
        send(INIT)
        stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for _ in range(warmup):
            call()
            direct_call(session)
        base, over = [], []
        for _ in range(n):
            base.append(timed(lambda: direct_call(session)))
            over.append(timed(call))
        return base, over
    finally:
        stdin.close()
        proc.wait(30)


def http_figures(session: ocnb.Session, n: int) -> dict[str, Any]:
    handle = serve(session, quiet=True)
    try:
        out: dict[str, Any] = {}
        for label, kind in (("raw_http", "raw"), ("sdk_http_2025", "legacy"), ("sdk_http_2026", "auto")):
            out[label] = worker_pairs(session, handle.url, handle.token or "", kind, n)
        out["tools"] = asyncio.run(list_tools(handle))
        return out
    finally:
        handle.stop()


async def list_tools(handle: Any) -> list[Any]:
    async with create_mcp_http_client(headers=handle.headers) as http:
        async with Client(streamable_http_client(handle.url, http_client=http), mode="legacy") as client:
            return (await client.list_tools()).tools


async def sdk_stdio_pairs(session: ocnb.Session, n: int, home: str) -> tuple[list[float], list[float]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ocnb.mcp.cli"], env={"OCNB_HOME": home})
    async with Client(params, mode="legacy") as client:
        return await sdk_pairs(client, session, n)


#: Every opt-in capability Playwright MCP offers (``--caps``), for the all-tools comparison.
PW_MCP_ALL_CAPS = "vision,pdf,devtools"


async def playwright_mcp_tools(caps: str | None = None) -> list[Any]:
    params = playwright_mcp_params(*(["--caps", caps] if caps else []))
    async with Client(params, mode="legacy") as client:
        return (await client.list_tools()).tools


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="timed calls per transport (default 300)")
    parser.add_argument("--worker", nargs=3, metavar=("KIND", "URL", "TOKEN"), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.worker:
        return run_worker(*opts.worker)
    n = opts.n

    pairs: dict[str, tuple[list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory() as home:
        os.environ["OCNB_HOME"] = home
        session = ocnb.Session(home=home)
        try:
            session.start()
            http = http_figures(session, n)
            pairs["raw_http"] = http["raw_http"]
            pairs["raw_stdio"] = raw_stdio_pairs(session, n, home)
            pairs["sdk_http_2025"] = http["sdk_http_2025"]
            pairs["sdk_http_2026"] = http["sdk_http_2026"]
            pairs["sdk_stdio"] = asyncio.run(sdk_stdio_pairs(session, n, home))
            session.configure(caps=capability_groups())  # every opt-in group: the whole toolbox
            handle = serve(session, quiet=True, all_tools=True)  # every tool listed, not the essentials
            try:
                all_tools = asyncio.run(list_tools(handle))
            finally:
                handle.stop()
        finally:
            session.close()
    pw_tools = asyncio.run(playwright_mcp_tools())
    pw_all_tools = asyncio.run(playwright_mcp_tools(PW_MCP_ALL_CAPS))

    latency: dict[str, Any] = {}
    for label, (base, over) in pairs.items():
        latency[label] = {
            "session_call_ms": median_ms(base),
            "mcp_ms": median_ms(over),
            "added_ms": round(median_ms(over) - median_ms(base), 3),
        }

    ours_full, ours_core = tool_dicts(http["tools"])
    pw_full, pw_core = tool_dicts(pw_tools)
    tokens = {
        "ocnb_tools": len(ours_full),
        "ocnb_tokens": count_tools(ours_full),
        "ocnb_tokens_core": count_tools(ours_core),
        "playwright_mcp_version": PW_MCP_VERSION,
        "playwright_mcp_tools": len(pw_full),
        "playwright_mcp_tokens": count_tools(pw_full),
        "playwright_mcp_tokens_core": count_tools(pw_core),
    }
    ours_all, _ = tool_dicts(all_tools)
    pw_all, _ = tool_dicts(pw_all_tools)
    tokens["ocnb_tools_all_groups"] = len(ours_all)
    tokens["ocnb_tokens_all_groups"] = count_tools(ours_all)
    tokens["playwright_mcp_tools_all_caps"] = len(pw_all)
    tokens["playwright_mcp_tokens_all_caps"] = count_tools(pw_all)
    tokens["ratio"] = round(tokens["ocnb_tokens"] / tokens["playwright_mcp_tokens"], 3)
    tokens["ratio_core"] = round(tokens["ocnb_tokens_core"] / tokens["playwright_mcp_tokens_core"], 3)

    print(f"tools/call {TOOL}: median ms over {n} calls, each interleaved with a Session.call (target: ≤ 5 ms added)")
    print(f"  {'client / transport':<34} {'Session.call':>12} {'via MCP':>9} {'added':>9}")
    names = {
        "raw_http": "raw JSON-RPC, HTTP (2025-11-25)",
        "raw_stdio": "raw JSON-RPC, stdio",
        "sdk_http_2025": "SDK client, HTTP 2025-11-25",
        "sdk_http_2026": "SDK client, HTTP 2026-07-28",
        "sdk_stdio": "SDK client, stdio 2025-11-25",
    }
    for label, fig in latency.items():
        verdict = "ok" if fig["added_ms"] <= 5 else "OVER"
        print(
            f"  {names[label]:<34} {fig['session_call_ms']:12.3f} {fig['mcp_ms']:9.3f} {fig['added_ms']:+9.3f}  {verdict}"
        )
    print(f"  machine load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("tools/list tokens (cl100k, compact JSON of the tool entries)")
    print(
        f"  ocnb            {tokens['ocnb_tools']:3d} tools  {tokens['ocnb_tokens']:6d} tokens "
        f"({tokens['ocnb_tokens_core']} without annotations)"
    )
    print(
        f"  Playwright MCP  {tokens['playwright_mcp_tools']:3d} tools  {tokens['playwright_mcp_tokens']:6d} tokens "
        f"({tokens['playwright_mcp_tokens_core']} without annotations)  @playwright/mcp {PW_MCP_VERSION}"
    )
    print(f"  ratio ocnb / Playwright MCP: {tokens['ratio']} ({tokens['ratio_core']} without annotations)")
    print(
        f"  with everything on: ocnb, every capability group: {tokens['ocnb_tools_all_groups']} tools "
        f"{tokens['ocnb_tokens_all_groups']} tokens (target: default listing ≤ 1,950); Playwright MCP --caps "
        f"{PW_MCP_ALL_CAPS}: {tokens['playwright_mcp_tools_all_caps']} tools {tokens['playwright_mcp_tokens_all_caps']} tokens"
    )
    load = round(os.getloadavg()[0], 1)
    path = save("mcp", {"n": n, "tool": TOOL, "latency_ms": latency, "tools_list": tokens, "load_average": load})
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
