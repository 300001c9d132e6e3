"""Property-based fuzzing of every registered tool, through ``Session.call`` and the MCP server on stdio.

For every generated call: nothing raises; a failure has a specific code (never ``INTERNAL``: every
input here is one a caller chose); a call refused before its handler leaves the page and
``OCNB_HOME`` (beyond the audit trail) as they were; every recorded call has exactly one journal
line, and every line of the journal and the trace is strict JSON (RFC 8259: no NaN, valid UTF-8,
no lone surrogates).

CI runs ``OCNB_FUZZ_API`` (4,000) + ``OCNB_FUZZ_MCP`` (1,000) calls with a fixed seed (derandomized);
``make fuzz`` runs many more, new ones each time (``OCNB_FUZZ_RANDOM=1``); a failure prints the
``@reproduce_failure`` blob to replay it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from fuzz_strategies import calls, wire_safe
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

import ocnb
from ocnb.audit.fence import unfence
from ocnb.errors import ERROR_CODES
from ocnb.jsonsafe import fix_text
from ocnb.results import ToolResult

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:Generating overly large repr"),
]

API_CALLS = int(os.environ.get("OCNB_FUZZ_API", "4000"))
MCP_CALLS = int(os.environ.get("OCNB_FUZZ_MCP", "1000"))
#: Codes of calls refused before anything ran.
REFUSED = {"INVALID_ARGUMENT", "INVALID_INTENT", "UNKNOWN_TOOL"}
AUDIT_DIRS = {"journal", "traces"}
#: Calls per generated example (generating a batch costs less per call than one example each).
BATCH = 10

FUZZ_SETTINGS = dict(
    # OCNB_FUZZ_SHRINK=0: report the first failing batch as found (faster when exploring)
    phases=[Phase.explicit, Phase.generate]
    + ([Phase.shrink] if os.environ.get("OCNB_FUZZ_SHRINK", "1") != "0" else []),
    deadline=None,
    database=None,
    derandomize=os.environ.get("OCNB_FUZZ_RANDOM") != "1",  # CI: the same calls every run
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-strict JSON constant {name}")


def strict_lines(data: bytes) -> list[dict[str, Any]]:
    """Every line parsed as strict JSON (UTF-8, no NaN/Infinity, no lone surrogates)."""
    out = []
    for line in data.splitlines():
        text = line.decode("utf-8")  # strict: invalid UTF-8 raises
        obj = json.loads(text, parse_constant=_reject_constant)
        again = json.dumps(obj, ensure_ascii=False, allow_nan=False)
        assert fix_text(again) == again, f"lone surrogate in {text[:200]}"
        out.append(obj)
    return out


def home_snapshot(home: Path) -> dict[str, tuple[int, int]]:
    """Files under OCNB_HOME other than the audit trail: path → (size, mtime)."""
    out = {}
    for root, dirs, files in os.walk(home):
        if Path(root) == home:
            dirs[:] = [d for d in dirs if d not in AUDIT_DIRS]
        for f in files:
            p = Path(root) / f
            try:
                st = p.stat()
            except FileNotFoundError:
                continue
            out[str(p.relative_to(home))] = (st.st_size, st.st_mtime_ns)
    return out


def check_result(result: Any, tool: Any, args: Any) -> None:
    assert isinstance(result, ToolResult), (tool, args)
    json.loads(json.dumps(result.to_dict(), allow_nan=False, default=str))  # the result is strict JSON too
    if not result.ok:
        assert result.error is not None
        code = result.error.code
        assert code in ERROR_CODES or code == "SESSION_CLOSED", (code, tool, args)
        assert code != "INTERNAL", (result.error.message, tool, repr(args)[:500])


# --------------------------------------------------------------------------------------------
# Through Session.call


class Recorder:
    """Pipeline hooks that note which calls reached their handler and which were recorded."""

    def __init__(self) -> None:
        self.reached: set[int] = set()
        self.finished: list[tuple[int, bool, str]] = []

    def before(self, call: Any) -> None:
        self.reached.add(call.seq)

    def after(self, call: Any, result: ToolResult) -> None:
        self.finished.append((call.seq, call.record, call.name))


@pytest.fixture
def fuzz_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ocnb.Session, Recorder]]:
    home = tmp_path_factory.mktemp("fuzz-home")
    s = ocnb.Session(headless=True, home=home)
    rec = Recorder()
    s.pipeline.before.append(rec.before)  # last: only a call about to run its handler gets here
    s.pipeline.after.append(rec.after)
    s.start()
    yield s, rec
    s.close()


def page_state(s: ocnb.Session) -> Any:
    """The tabs, their URLs and the active tab (read without a round trip to the browser)."""
    state = s._state
    if state is None:
        return None
    return state.active_id, [(tab_id, tab.page.url) for tab_id, tab in list(state.tabs.items())]


class JournalTail:
    """Reads the journal's new bytes since the last look (the file only grows)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.offsets: dict[Path, int] = {}
        self.seqs: Counter[tuple[str, int]] = Counter()
        self.lines = 0

    def read_new(self) -> None:
        for path in sorted((self.home / "journal").glob("journal-*.jsonl")):
            start = self.offsets.get(path, 0)
            with path.open("rb") as f:
                f.seek(start)
                data = f.read()
            end = data.rfind(b"\n") + 1
            self.offsets[path] = start + end
            for entry in strict_lines(data[:end]):
                self.seqs[(entry["session_id"], entry["seq"])] += 1
                self.lines += 1


def test_fuzz_session_call(fuzz_session: tuple[ocnb.Session, Recorder], site: Any) -> None:
    s, rec = fuzz_session
    urls = ["about:blank", site.page("dynamic.html"), site.page("form.html"), "http://127.0.0.1:1/", "back", "x"]
    urls += ["data:text/html,<title>a%ED%A0%80b</title>", "javascript:alert(1)", "file:///etc/passwd", "\ud800"]
    tail = JournalTail(s.home)
    stats: Counter[str] = Counter()
    slow: list[tuple[float, Any, str]] = []
    spent: Counter[str] = Counter()
    last_home = [home_snapshot(s.home)]
    started = time.monotonic()

    @settings(max_examples=max(1, API_CALLS // BATCH), **FUZZ_SETTINGS)  # type: ignore[arg-type]
    @given(batch=st.lists(calls(list(s.registry), urls), min_size=BATCH, max_size=BATCH))
    def some_calls(batch: list[tuple[Any, Any]]) -> None:
        for tool, args in batch:
            one_call(tool, args)

    def one_call(tool: Any, args: Any) -> None:
        t_check = time.monotonic()
        before_page = page_state(s)
        before_home = last_home[0]  # only a call that ran can have changed it (checked below)
        n_finished = len(rec.finished)
        t0 = time.monotonic()
        result = s.call(tool, args)
        took = time.monotonic() - t0
        spent["call"] += took
        spent["check"] += t0 - t_check
        if took > 1:
            slow.append((round(took, 1), tool, repr(args)[:120]))
        check_result(result, tool, args)
        stats["ok" if result.ok else result.error.code] += 1  # type: ignore[union-attr]
        mine = rec.finished[n_finished:]
        assert mine, "the call went through no after-hook"
        top_seq = mine[-1][0]
        if top_seq not in rec.reached:  # refused before its handler: nothing changed
            assert not result.ok and result.error is not None
            assert page_state(s) == before_page, (tool, repr(args)[:300])
            assert home_snapshot(s.home) == before_home, (tool, repr(args)[:300])
        else:
            last_home[0] = home_snapshot(s.home)
        tail.read_new()
        for seq, recorded, _name in mine:
            assert tail.seqs[(s.id, seq)] == (1 if recorded else 0), (seq, tool, repr(args)[:300])
        spent["check"] += time.monotonic() - t0 - took

    some_calls()
    elapsed = time.monotonic() - started
    assert sum(stats.values()) >= API_CALLS * 0.9, stats
    assert stats["INVALID_ARGUMENT"] > API_CALLS // 3, stats  # most inputs are refused at validation
    traces = b"".join(p.read_bytes() for p in sorted((s.home / "traces").rglob("events-*.jsonl")))
    strict_lines(traces)
    print(f"\n{sum(stats.values())} calls via Session.call in {elapsed:.1f} s: {dict(stats.most_common())}")
    print("slowest:", sorted(slow, reverse=True)[:10], "seconds in calls / checks:", dict(spent))


# --------------------------------------------------------------------------------------------
# Through the MCP server over stdio (the SDK's own client)


class StdioClient:
    """The SDK's stdio client on a loop of its own thread, so a synchronous hypothesis test can call."""

    def __init__(self, home: Path) -> None:
        from mcp.client import Client
        from mcp.client.stdio import StdioServerParameters

        env = {"OCNB_HOME": str(home), "PATH": os.environ.get("PATH", "")}
        if os.environ.get("OCNB_CHROMIUM"):
            env["OCNB_CHROMIUM"] = os.environ["OCNB_CHROMIUM"]
        self.params = StdioServerParameters(command=sys.executable, args=["-m", "ocnb.mcp.cli", "--all-tools"], env=env)
        self._client_cls = Client
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fuzz-mcp-client", daemon=True)
        self.thread.start()
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.main = asyncio.run_coroutine_threadsafe(self._main(), self.loop)
        self.ready.result(120)

    async def _main(self) -> None:
        self.stop_event = asyncio.Event()
        try:
            async with self._client_cls(self.params, mode="legacy") as client:
                self.client = client
                self.tools = (await client.list_tools()).tools
                self.ready.set_result(None)
                await self.stop_event.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(self.client.call_tool(name, arguments), self.loop).result(120)

    def call_many(self, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        async def run() -> list[Any]:
            # a JSON-RPC error (an unknown tool is -32602) comes back as its MCPError, in its place
            return list(await asyncio.gather(*(self.client.call_tool(n, a) for n, a in calls), return_exceptions=True))

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(300)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop_event.set)
        try:
            self.main.result(60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture
def mcp_stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StdioClient, Path]]:
    home = tmp_path_factory.mktemp("fuzz-mcp-home")
    client = StdioClient(home)
    yield client, home
    client.close()


def test_fuzz_mcp_stdio(mcp_stdio: tuple[StdioClient, Path], site: Any) -> None:
    client, home = mcp_stdio
    registry = list(ocnb.Registry())
    known = {t.name for t in registry}
    assert [t.name for t in client.tools] == [t.name for t in registry]
    urls = ["about:blank", site.page("dynamic.html"), "http://127.0.0.1:1/", "back", "x", "file:///etc/passwd"]
    stats: Counter[str] = Counter()
    expected_lines = 0
    started = time.monotonic()

    def tabs_seen() -> Any:
        """The server's tabs and their URLs, asked over MCP (one more journaled call)."""
        nonlocal expected_lines
        expected_lines += 1
        data = unfence([c.text for c in client.call("tabs_context", {}).content])["data"]
        return data["active"], [(t["tab_id"], t["url"]) for t in data["tabs"]]

    @settings(max_examples=max(1, MCP_CALLS // BATCH), **FUZZ_SETTINGS)  # type: ignore[arg-type]
    @given(batch=st.lists(calls(registry, urls), min_size=BATCH, max_size=BATCH))
    def some_calls(batch: list[tuple[Any, Any]]) -> None:
        nonlocal expected_lines
        sent = []
        for tool, args in batch:
            name = wire_safe(tool) if isinstance(tool, str) else "not_a_name"
            arguments = wire_safe(args) if isinstance(args, dict) else {"value": wire_safe(args)}
            sent.append((name, arguments))
        before_home = home_snapshot(home)
        before_page = tabs_seen()
        results = client.call_many(sent)  # pipelined
        codes = []
        for (name, arguments), result in zip(sent, results, strict=True):
            if isinstance(result, BaseException):  # only an unknown tool may be a protocol error
                assert isinstance(result, MCPError) and result.code == -32602, (name, repr(result)[:300])
                assert name not in known and result.message.startswith("Unknown tool"), (name, result.message)
                stats["UNKNOWN_TOOL"] += 1
                codes.append("UNKNOWN_TOOL")
                expected_lines += name != ""  # journaled like any call, unless it names nothing
                continue
            blocks = [c.text for c in result.content if isinstance(c, types.TextContent)]
            if blocks[0].startswith("{"):  # the envelope: strict JSON
                json.loads(blocks[0], parse_constant=_reject_constant)
            payload = unfence(blocks)  # the lean one-block form of acts and reads too
            assert payload["ok"] is (not result.is_error), payload
            code = payload["error"]["code"] if result.is_error else "ok"
            assert code != "INTERNAL", (payload, name, repr(arguments)[:300])
            assert code in ERROR_CODES or code == "ok", code
            stats[code] += 1
            codes.append(code)
            if code != "INVALID_INTENT" and name != "":
                expected_lines += 1
        if all(code in REFUSED for code in codes):  # a batch refused whole changed nothing
            assert home_snapshot(home) == before_home, sent
            assert tabs_seen() == before_page, sent

    some_calls()
    elapsed = time.monotonic() - started
    entries = [e for p in sorted((home / "journal").glob("journal-*.jsonl")) for e in strict_lines(p.read_bytes())]
    by_source = Counter(e["source"] for e in entries)
    assert by_source["mcp"] == expected_lines, (by_source, expected_lines)
    assert len({(e["session_id"], e["seq"]) for e in entries}) == len(entries)  # one line per call
    strict_lines(b"".join(p.read_bytes() for p in sorted((home / "traces").rglob("events-*.jsonl"))))
    assert sum(stats.values()) >= MCP_CALLS * 0.9, stats
    print(f"\n{sum(stats.values())} calls over MCP stdio in {elapsed:.1f} s: {dict(stats.most_common())}")
