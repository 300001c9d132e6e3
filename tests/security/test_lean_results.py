"""Acceptance (issue 46): an act's or a read's result, as an MCP client gets it, says what a model needs
in one text block — and every string the page controls in it still sits inside the session's fence.

A loopback site plants a canary in every place a page controls text an act may report: the title, the
URL, link and button names, a role attribute, attribute values, a dialog's message, a form's answer, a
new tab's URL, the candidates of an ambiguous target. The official MCP client acts on it; in every
text it receives, no canary lies outside a ``[page TOKEN]`` … ``[/page TOKEN]`` span carrying the
session's token.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

import ocnb
from ocnb.audit.fence import unfence
from ocnb.mcp import serve
from tests.mcp.mcp_shim_helpers import http_client

pytestmark = [pytest.mark.browser, pytest.mark.anyio]

CANARY = "QZXlean"
PAGE = f"""<!doctype html><html><head><title>{CANARY} title</title></head><body>
<h1>{CANARY} heading</h1>
<button id="noop">{CANARY} still</button>
<button role="{CANARY}role" aria-label="{CANARY} odd" onclick="this.textContent='{CANARY} pressed'">{CANARY} odd</button>
<button onclick="alert('{CANARY} dialog says')">{CANARY} alerter</button>
<form onsubmit="event.preventDefault(); document.getElementById('out').textContent = '{CANARY} thanks ' +
  this.elements.who.value">
  <label>{CANARY} who <input name="who" value="{CANARY} value" placeholder="{CANARY} hint" title="{CANARY} tip"></label>
  <button>{CANARY} send</button>
</form>
<div id="out" role="status"></div>
<button>{CANARY} twin</button><button>{CANARY} twin</button>
<a id="away" href="/{CANARY}/next.html">{CANARY} away</a>
<a href="/{CANARY}/tab.html" target="_blank">{CANARY} tab</a>
</body></html>"""


class _Site(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = PAGE.encode() if "index" in self.path else f"<title>{CANARY} next</title><p>{CANARY}</p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def shared_session(module_home: Path) -> Iterator[ocnb.Session]:
    """The module's session, its agent unasked: these tests read the shape of results, and the page's
    "send" button is risky (an agent's risky click waits for approval: tests/security/test_approval_mcp.py)."""
    with ocnb.Session(headless=True, home=module_home, agent_confirm="never") as s:
        yield s


@pytest.fixture(scope="module")
def lean_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def outside_fence(text: str, token: str) -> str:
    """``text`` with every fenced span (opener to the closer of ``token``) cut out."""
    return re.sub(rf"\[page {token}\]\n.*?\n\[/page {token}\]", "", text, flags=re.S)


def ref_of(outline: str, name: str) -> str:
    found = re.search(rf'"{re.escape(name)}"[^\n]*?\[(ax_\d+)\]', outline)
    assert found, outline
    return found.group(1)


async def test_acts_answer_in_one_lean_block_and_page_strings_stay_fenced(
    session: ocnb.Session, lean_site: str
) -> None:
    token = session.fence.token
    start = f"{lean_site}/{CANARY}/index.html"
    received: dict[str, str] = {}
    handle = serve(session, quiet=True)
    try:
        async with http_client(handle) as client:

            async def call(label: str, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
                result = await client.call_tool(name, args)
                blocks = texts(result)
                assert len(blocks) == 1, blocks  # one content part
                received[label] = blocks[0]
                return blocks[0], unfence(blocks, token)

            text, nav = await call("navigate", "navigate", {"url": start})
            assert text.split("\n")[0] == "ok"  # loaded where asked: the URL is not said back, the title is
            assert nav["data"] == {"title": f"{CANARY} title"}
            _, page = await call("read_page", "read_page", {})
            outline = page["data"]["content"]

            # a click that changed nothing: the ref, nothing else (no changes, no fence)
            text, still = await call("noop", "interact", {"ref": ref_of(outline, f"{CANARY} still")})
            assert text == f"ok {still['data']['element']['ref']}"
            assert still["data"]["changes"] == {}

            # found by a query: the element is named (role and name, fenced); the page changed
            text, odd = await call("odd", "interact", {"query": f"{CANARY} odd"})
            assert (
                odd["data"]["element"]["role"] == "button"
            )  # a role attribute that is no ARIA role counts for nothing
            assert odd["data"]["element"]["name"] == f"{CANARY} odd" and "changed" in text.split("\n")[0]

            # a dialog: its message, fenced
            _, alerted = await call("dialog", "interact", {"query": f"{CANARY} alerter"})
            (dialog,) = alerted["data"]["changes"]["dialogs"]
            assert dialog["message"] == f"{CANARY} dialog says" and dialog["type"] == "alert"

            # typing, then the form's answer
            who = ref_of(outline, f"{CANARY} who")
            text, typed = await call("form_input", "form_input", {"ref": who, "value": "Ada"})
            assert text == f"ok {who}"
            _, sent = await call("send", "interact", {"query": f"{CANARY} send"})
            assert sent["data"]["changes"]["message"] == f"{CANARY} thanks Ada"

            # a failure keeps its code, message and candidates
            _, twin = await call("ambiguous", "interact", {"query": f"{CANARY} twin"})
            assert twin["ok"] is False and twin["error"]["code"] == "AMBIGUOUS_TARGET"
            assert twin["error"]["message"] and len(twin["error"]["details"]["candidates"]) == 2
            _, bad = await call("invalid", "form_input", {"ref": "ax_99999", "value": "x"})
            assert bad["error"]["code"] == "UNKNOWN_REF" and bad["error"]["message"]

            # a navigation says where it went
            text, away = await call("away", "interact", {"ref": ref_of(outline, f"{CANARY} away")})
            assert away["data"]["changes"]["navigated"] is True and "next=read_page" in text
            assert away["data"]["changes"]["url"] == f"{lean_site}/{CANARY}/next.html"
            _, back = await call("back", "navigate", {"url": "back"})
            assert back["data"]["url"] == start  # not the URL asked ("back"): said, fenced

            # a new tab (opened last: it becomes the active one): its id, and what to do next
            text, tab = await call("tab", "interact", {"query": f"{CANARY} tab"})
            assert tab["data"]["changes"]["new_tab"] and "next=read_page" in text
    finally:
        handle.stop()

    leaked = {label: outside_fence(text, token) for label, text in received.items()}
    leaked = {label: text for label, text in leaked.items() if CANARY.lower() in text.lower()}
    assert not leaked, f"page text outside the fence: {leaked}"
    # the test can fail: these results did carry the page's strings, inside the fence
    carried = {label for label, text in received.items() if CANARY in text}
    assert {"navigate", "read_page", "odd", "dialog", "send", "ambiguous", "away", "back"} <= carried
    for text in received.values():  # a fence, when there is one, carries this session's token
        markers = re.findall(r"\[/?page (\S+)\]", text)
        assert all(m == token for m in markers[:1] + markers[-1:])


async def test_the_python_api_keeps_every_field(session: ocnb.Session, lean_site: str) -> None:
    session.call("navigate", url=f"{lean_site}/{CANARY}/index.html")
    clicked = session.call("interact", query=f"{CANARY} still")
    assert clicked.ok and set(clicked.data) >= {"element", "action", "via", "changes", "frame_ordinal", "tab_id"}
    assert clicked.data["changes"]["navigated"] is False and clicked.data["changes"]["dialogs"] == []
    # the same result, for a model: one line, the element named (found by a query), nothing that did not happen
    lean = session.fenced(clicked)
    assert lean.startswith(f"ok {clicked.data['element']['ref']}\n[page {session.fence.token}]\n")
    assert "navigated" not in lean and "dialogs" not in lean and "frame_ordinal" not in lean


async def test_each_session_fences_with_its_own_random_token(tmp_path: Path, lean_site: str) -> None:
    seen = []
    for name in ("a", "b"):
        with ocnb.Session(headless=True, home=tmp_path / name) as s:
            handle = serve(s, quiet=True)
            try:
                async with http_client(handle) as client:
                    (text,) = texts(await client.call_tool("navigate", {"url": f"{lean_site}/{CANARY}/index.html"}))
            finally:
                handle.stop()
            found = re.search(r"\n\[page ([0-9]{39})\]\n", text)
            assert found and found.group(1) == s.fence.token and text.endswith(f"[/page {s.fence.token}]")
            seen.append(found.group(1))
    assert seen[0] != seen[1]
