"""The WebSocket gate of workers (``ocnb/browser/ws_guard.py``): it refuses exactly what the policy
refuses, cannot be undone by the worker's own code, and a refusal is reported by the call it
happened in. ``test_origin_policy.py`` reads the server's log for each kind of worker."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

import ocnb
from ocnb.browser.ws_guard import gate_script
from ocnb.origins import OriginPolicy, parse_origin

from .conftest import policy_of
from .origin_site import OriginSite

ALLOWED = ["http://127.0.0.1:*", "https://*.example.com", "http://example.org:8080"]
BLOCKED = ["http://127.0.0.1:9", "https://bad.example.com"]

#: URLs a page may hand to ``new WebSocket``: allowed, refused, and spellings of both.
URLS = [
    "ws://127.0.0.1:{P}/a",
    "ws://127.0.0.1./a",
    "ws://0x7f.1:{P}/a",
    "ws://2130706433:{P}/a",
    "ws://localhost:{P}/a",
    "ws://LOCALHOST:{P}/a",
    "ws://127.0.0.1@localhost:{P}/a",
    "ws://127.0.0.1:9/a",
    "http://127.0.0.1:{P}/a",
    "http://localhost:{P}/a",
    "wss://a.example.com/a",
    "wss://a.b.example.com:443/a",
    "wss://example.com/a",
    "wss://bad.example.com/a",
    "ws://a.example.com/a",
    "wss://a.example.com:8443/a",
    "ws://example.org:8080/a",
    "ws://example.org/a",
    "wss://xn--bcher-kva.example.com/a",
    "wss://bücher.example.com/a",
]


@pytest.fixture(scope="module")
def session(origin_site: OriginSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ocnb.Session]:
    origin_site.pages["/v/gate"] = ("text/html", "<title>gate</title>")
    s = ocnb.Session(
        headless=True, home=tmp_path_factory.mktemp("ws-gate"), allowed_origins=ALLOWED, blocked_origins=BLOCKED
    )
    s.call("navigate", url=f"{origin_site.allowed}/v/gate")
    yield s
    s.close()


def test_the_policy_regexes_decide_as_check_does(origin_site: OriginSite) -> None:
    import re

    policy = OriginPolicy(ALLOWED, BLOCKED)
    allowed, blocked = policy.origin_regexes()
    assert allowed is not None and blocked is not None
    for template in URLS:
        url = template.replace("{P}", str(origin_site.port))
        origin = parse_origin(url)
        assert origin is not None
        text = f"{origin.scheme}://{origin.host}:{origin.port}"
        refused = bool(re.search(blocked, text)) or not re.search(allowed, text)
        assert refused == (policy.check(url) is not None), url
    assert OriginPolicy(blocked=["http://x.com"]).origin_regexes()[0] is None
    assert OriginPolicy(allowed=["http://x.com"]).origin_regexes()[1] is None


@pytest.mark.browser
def test_the_gate_refuses_exactly_what_the_policy_refuses(session: ocnb.Session, origin_site: OriginSite) -> None:
    """The gate run in a real Chromium global: ``SecurityError`` for each URL the policy refuses, a
    socket (closed at once) for each other — the URL read as the browser reads it."""
    policy = OriginPolicy(ALLOWED, BLOCKED)
    urls = [u.replace("{P}", str(origin_site.port)) for u in URLS]
    script = gate_script(policy)
    probe = (
        f"(() => {{ {script}; return {urls!r}.map(u => {{"
        " try { const w = new WebSocket(u); w.close(); return 'open' } catch (e) { return e.name } }) })()"
    )
    got = session.call("javascript_tool", expression=probe).data["result"]
    want = ["SecurityError" if policy.check(u) is not None else "open" for u in urls]
    assert dict(zip(urls, got, strict=True)) == dict(zip(urls, want, strict=True))
    assert "open" in got and "SecurityError" in got


@pytest.mark.browser
def test_the_workers_code_cannot_undo_the_gate(session: ocnb.Session, origin_site: OriginSite) -> None:
    """What a worker's code could try after the gate: a subclass, the prototype's constructor,
    tampered ``URL`` getters and ``RegExp.prototype.exec``, a URL object whose ``toString`` changes."""
    refused = f"ws://localhost:{origin_site.port}/hit/undo"
    script = gate_script(OriginPolicy(ALLOWED, BLOCKED))
    probe = f"""(() => {{ {script};
      const out = [];
      const attempt = (f) => {{ try {{ f(); out.push('open') }} catch (e) {{ out.push(e.name) }} }};
      attempt(() => new (class extends WebSocket {{}})({refused!r}));
      attempt(() => new WebSocket.prototype.constructor({refused!r}));
      out.push(WebSocket.prototype.constructor === WebSocket && WebSocket.name === 'WebSocket' && WebSocket.OPEN === 1);
      Object.defineProperty(URL.prototype, 'hostname', {{ get() {{ return '127.0.0.1' }} }});
      RegExp.prototype.exec = () => null;
      attempt(() => new WebSocket({refused!r}));
      let n = 0;
      attempt(() => new WebSocket({{ toString() {{ return n++ ? {refused!r} : 'ws://127.0.0.1:1/' }} }}));
      return out }})()"""
    got = session.call("javascript_tool", expression=probe).data["result"]
    assert got == ["SecurityError", "SecurityError", True, "SecurityError", "open"]
    time.sleep(0.3)
    assert origin_site.refused_hits("/hit/undo") == []


@pytest.mark.browser
def test_a_workers_refused_websocket_is_reported_by_the_call(session: ocnb.Session, origin_site: OriginSite) -> None:
    """The refusal reaches the call during which the worker tried: ``blocked`` names the URL, the rule
    and the type ``websocket``, and the journal line of that call names it too."""
    origin_site.pages["/w/report.js"] = (
        "text/javascript",
        # the answer comes 0.2 s after the refusal: the refusal happened during the call, not at its very end
        # (the gate's report and the call's result reach Python by different DevTools sessions, unordered)
        "try { new WebSocket('ws'+'{B}'.slice(4)+'/hit/report') } catch (e) { setTimeout(() => postMessage(e.name), 200) }",
    )
    expression = "new Promise(r => { const w = new Worker('/w/report.js'); w.onmessage = e => r(e.data) })"
    result = session.call("javascript_tool", expression=expression)
    assert result.ok and result.data["result"] == "SecurityError", result
    url = f"ws://localhost:{origin_site.port}/hit/report"
    assert {"url": url, "rule": "not in allowed_origins", "type": "websocket"} in [
        {k: b[k] for k in ("url", "rule", "type")} for b in result.data["blocked"]
    ]
    entry = session.journal.entries[-1]
    assert entry["tool"] == "javascript_tool"
    assert {"url": url, "rule": "not in allowed_origins"} in entry["blocked"]
    assert origin_site.refused_hits("/hit/report") == []


@pytest.mark.browser
@pytest.mark.parametrize("held", [True, False])
def test_a_shared_worker_waits_for_the_gate_however_slow_ocnb_is(
    origin_site: OriginSite, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, held: bool
) -> None:
    """Playwright's driver auto-attaches every shared worker too and lets it go at once; on a loaded
    machine that came before ocnb's breakpoint, and the worker ran ungated. ``driver_guard.js``
    makes the driver wait for ocnb's word. Here ocnb is made slow on purpose (its breakpoint goes in a
    second late): the worker's WebSocket to the refused origin still reaches nothing — and, the control,
    with the driver's hold not asked for (``held=False``), it does reach the server."""
    from ocnb.browser import ws_guard

    admit = ws_guard.PageWatch._admit

    async def slow_admit(self: ws_guard.PageWatch, params: dict) -> None:
        if (params.get("targetInfo") or {}).get("type") == "shared_worker":
            await asyncio.sleep(1.0)
        await admit(self, params)

    monkeypatch.setattr(ws_guard.PageWatch, "_admit", slow_admit)
    if not held:
        monkeypatch.setattr(ws_guard, "HOLD_SHARED_WORKERS", "Ocnb.noSuchCommand")
    name = f"slow_shared_ws_{held}"
    origin_site.pages[f"/v/{name}"] = ("text/html", f"<script>new SharedWorker('/w/{name}.js')</script>")
    origin_site.pages[f"/w/{name}.js"] = (
        "text/javascript",
        f"fetch('{{A}}/ok/{name}');new WebSocket('ws'+'{{B}}'.slice(4)+'/hit/{name}')",
    )
    s = ocnb.Session(headless=True, home=tmp_path_factory.mktemp(name), **policy_of("devtools", ["http://127.0.0.1:*"]))
    try:
        s.call("navigate", url=f"{origin_site.allowed}/v/{name}")
        assert origin_site.wait_for("127.0.0.1:", f"/ok/{name}", timeout=10), "the shared worker did not run"
        time.sleep(1.0)
        reached = origin_site.refused_hits(f"/hit/{name}")
        assert (reached == []) if held else reached, reached
    finally:
        s.close()
