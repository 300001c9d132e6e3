"""Strict JSON at the edges with a real browser and a real stdio server (issue 16: 1, 2).

A page whose title holds a lone surrogate, JavaScript returning NaN, and NaN/Infinity sent over the
MCP wire: every call returns a result, keeps its one journal line, and nothing written is non-strict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ocnb

pytestmark = pytest.mark.browser

SURROGATE_PAGE = (
    "data:text/html,<script>document.title = 'a' + String.fromCharCode(0xD800) + 'b';"
    "console.log('c' + String.fromCharCode(0xDC00)); document.body.append(String.fromCharCode(0xD801))</script>"
)


def strict_lines(data: bytes) -> list[Any]:
    return [
        json.loads(line.decode("utf-8"), parse_constant=lambda c: pytest.fail(f"non-strict {c}"))
        for line in data.splitlines()
    ]


def test_lone_surrogate_title_and_nan_results(fresh_session: ocnb.Session) -> None:
    s = fresh_session
    calls = [
        ("navigate", {"url": SURROGATE_PAGE}),
        ("read_page", {}),
        ("read_page", {"mode": "text"}),
        ("javascript_tool", {"expression": "() => [document.title, NaN, Infinity, {x: -Infinity}]"}),
        ("tabs_context", {}),
        ("oc_evidence_bundle", {"reason": "a page with lone surrogates"}),
        ("oc_assert", {"assertion": {"kind": "title", "equals": "nope"}}),  # fails: writes evidence too
    ]
    results = [s.call(tool, args) for tool, args in calls]
    for (tool, _), r in zip(calls, results, strict=True):
        assert r.ok, (tool, r)
        json.loads(json.dumps(r.to_dict(), allow_nan=False, ensure_ascii=False).encode("utf-8"))
    assert results[0].data["title"] == "a\ufffdb"
    assert results[1].data["title"] == "a\ufffdb"
    assert results[3].data["result"] == ["a\ufffdb", "NaN", "Infinity", {"x": "-Infinity"}]
    assert results[4].data["tabs"][0]["title"] == "a\ufffdb"
    assert results[6].data["verdict"] == "fail"
    for bundle in (s.home / "evidence").iterdir():
        for name in ("bundle.json", "dom.html"):
            (bundle / name).read_bytes().decode("utf-8")  # valid UTF-8: no surrogate reached the disk
        json.loads((bundle / "bundle.json").read_text(encoding="utf-8"))
    lines = strict_lines(b"".join(p.read_bytes() for p in (s.home / "journal").glob("*.jsonl")))
    assert [e["tool"] for e in lines] == [tool for tool, _ in calls]  # one line each, none lost
    strict_lines(b"".join(p.read_bytes() for p in (s.home / "traces").rglob("events-*.jsonl")))


class RawStdio:
    """``python -m ocnb.mcp.cli`` driven line by line (to send what no SDK client would)."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "OCNB_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ocnb.mcp.cli"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        assert self.request(0, "initialize", init)["result"]["serverInfo"]["name"] == "ocnb"
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send_line(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the server closed its output"
        return strict_lines(line)[0]

    def request(self, id: int, method: str, params: Any) -> Any:
        self.send_line(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        return self.receive()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def test_stdio_refuses_nan_and_infinity_as_parse_errors(tmp_path: Path) -> None:
    server = RawStdio(tmp_path)
    try:
        for i, number in enumerate(["NaN", "Infinity", "-Infinity", "1e400"], start=1):
            line = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait_for","arguments":{"time_ms":%s}}}'
            server.send_line(line % (i, number))
            reply = server.receive()
            assert reply["id"] == i and reply["error"]["code"] == -32700, reply
        server.send_line(
            '{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"navigate","arguments":{"url":"\\ud800"}}}'
        )
        reply = server.receive()  # the SDK's parser refuses a lone surrogate escape: answered, not dropped
        assert reply["id"] == "s1" and reply["error"]["code"] == -32700, reply
        ok = server.request(9, "tools/call", {"name": "tabs_context", "arguments": {}})  # still serving
        assert ok["result"]["isError"] is False
        bad = server.request(10, "tools/call", {"name": "navigate", "arguments": {"url": [[[[[[1]]]]]]}})
        assert bad["result"]["isError"] is True and "INVALID_ARGUMENT" in bad["result"]["content"][0]["text"]
    finally:
        server.close()
    lines = strict_lines(b"".join(p.read_bytes() for p in (tmp_path / "journal").glob("*.jsonl")))
    assert [e["tool"] for e in lines] == ["tabs_context", "navigate"]  # refused messages never ran
