"""The origin policy is a boundary (issue 30 §1): read from the attacker's side, the server's log.

One server answers as two origins, ``127.0.0.1:P`` (allowed) and ``localhost:P`` (refused). Each
page below tries one way around the policy: it first touches ``/ok/<name>`` on the allowed origin
(proof that the page ran), then aims at ``/hit/<name>`` on the refused one. With
``allowed_origins=["http://127.0.0.1:*"]`` no request may reach ``localhost``; without a policy the
same pages do reach it (``test_without_policy_every_vector_reaches``), so each test can fail.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ocnb

from .conftest import GUARDS, expect_guard, policy_of
from .origin_site import OriginSite

#: Every test but the last drives a Chromium (a session of its own, or a pool).
pytestmark = pytest.mark.browser

HTML = "text/html"
JS = "text/javascript"
PING = "<img src='{A}/ok/%s'>"
#: A WebSocket to the refused origin that works in any worker (a blob: or data: worker has no port).
WS = "new WebSocket('ws'+'{B}'.slice(4)+'/hit/%s')"

#: name -> (path of the page to open, the pages it needs, whether the ping comes from the page)
VECTORS: dict[str, dict[str, tuple[str, str]]] = {
    "location": {
        "/v/location": (HTML, PING % "location" + "<script>setTimeout(()=>location='{B}/hit/location',300)</script>")
    },
    "redirect302": {
        "/v/redirect302": (
            HTML,
            PING % "redirect302" + "<script>setTimeout(()=>location='{A}/r302?to={B}/hit/redirect302',300)</script>",
        )
    },
    "img302": {"/v/img302": (HTML, PING % "img302" + "<img src='{A}/r302?to={B}/hit/img302'>")},
    "meta": {"/v/meta": (HTML, "<meta http-equiv='refresh' content='1;url={B}/hit/meta'>" + PING % "meta")},
    "form": {
        "/v/form": (
            HTML,
            PING % "form" + "<form id=f method=post action='{B}/hit/form'><input name=p value=secret></form>"
            "<script>setTimeout(()=>f.submit(),300)</script>",
        )
    },
    "window_open": {
        "/v/window_open": (HTML, PING % "window_open" + "<script>window.open('{B}/hit/window_open')</script>")
    },
    "popup302": {
        "/v/popup302": (HTML, PING % "popup302" + "<script>window.open('{A}/r302?to={B}/hit/popup302')</script>")
    },
    "target_blank": {
        "/v/target_blank": (
            HTML,
            PING % "target_blank" + "<a id=l target=_blank href='{B}/hit/target_blank'>x</a><script>l.click()</script>",
        )
    },
    # a popup's first document is the empty one its opener scripts at once, before any DevTools client
    # can attach to the popup's target: a per-target block (Network.setBlockedURLs) misses these
    "blank_popup": {
        "/v/blank_popup": (
            HTML,
            PING % "blank_popup" + "<script>const w=window.open();"
            "w.document.write(`<img src='{B}/hit/blank_popup'>`);w.document.close()</script>",
        )
    },
    "blank_popup_fetch": {
        "/v/blank_popup_fetch": (
            HTML,
            PING % "blank_popup_fetch"
            + "<script>window.open().fetch('{B}/hit/blank_popup_fetch').catch(()=>0)</script>",
        )
    },
    "blank_popup_ws": {
        "/v/blank_popup_ws": (
            HTML,
            PING % "blank_popup_ws" + "<script>const w=window.open();try{new w.WebSocket('ws'+'{B}'.slice(4)"
            "+'/hit/blank_popup_ws')}catch(e){}</script>",
        )
    },
    "blank_iframe_ws": {
        "/v/blank_iframe_ws": (
            HTML,
            PING % "blank_iframe_ws" + "<script>const f=document.createElement('iframe');"
            "document.body.appendChild(f);try{new f.contentWindow.WebSocket('ws'+'{B}'.slice(4)"
            "+'/hit/blank_iframe_ws')}catch(e){}</script>",
        )
    },
    "iframe": {"/v/iframe": (HTML, PING % "iframe" + "<iframe src='{B}/hit/iframe'></iframe>")},
    "img": {"/v/img": (HTML, PING % "img" + "<img src='{B}/hit/img'>")},
    "script": {"/v/script": (HTML, PING % "script" + "<script src='{B}/hit/script'></script>")},
    "stylesheet": {"/v/stylesheet": (HTML, PING % "stylesheet" + "<link rel=stylesheet href='{B}/hit/stylesheet'>")},
    "fetch": {"/v/fetch": (HTML, PING % "fetch" + "<script>fetch('{B}/hit/fetch').catch(()=>0)</script>")},
    "xhr": {
        "/v/xhr": (
            HTML,
            PING % "xhr" + "<script>const x=new XMLHttpRequest();x.open('GET','{B}/hit/xhr');x.send()</script>",
        )
    },
    "beacon": {"/v/beacon": (HTML, PING % "beacon" + "<script>navigator.sendBeacon('{B}/hit/beacon','x')</script>")},
    "prefetch": {"/v/prefetch": (HTML, PING % "prefetch" + "<link rel=prefetch href='{B}/hit/prefetch'>")},
    "websocket": {
        "/v/websocket": (
            HTML,
            "<script>new WebSocket('ws://127.0.0.1:'+location.port+'/ok/websocket');"
            "new WebSocket('ws://localhost:'+location.port+'/hit/websocket')</script>",
        )
    },
    "data_iframe": {
        "/v/data_iframe": (
            HTML,
            PING % "data_iframe"
            + "<iframe src=\"data:text/html,<img src='{B}/hit/data_iframe'><script>fetch('{B}/hit/data_iframe2')</script>\"></iframe>",
        )
    },
    "blob_iframe": {
        "/v/blob_iframe": (
            HTML,
            PING % "blob_iframe" + "<script>const b=new Blob([\"<img src='{B}/hit/blob_iframe'>\"],{type:'text/html'});"
            "const f=document.createElement('iframe');f.src=URL.createObjectURL(b);document.body.appendChild(f)</script>",
        )
    },
    "worker": {
        "/v/worker": (HTML, "<script>new Worker('/w/worker.js')</script>"),
        "/w/worker.js": (JS, "fetch('{A}/ok/worker');fetch('{B}/hit/worker').catch(()=>0)"),
    },
    "worker_ws": {
        "/v/worker_ws": (HTML, "<script>new Worker('/w/worker_ws.js')</script>"),
        "/w/worker_ws.js": (
            JS,
            "fetch('{A}/ok/worker_ws');new WebSocket('ws://localhost:'+location.port+'/hit/worker_ws')",
        ),
    },
    # WebSockets from workers of every kind: a handshake is no request to route or Fetch (ws_guard)
    "blob_worker_ws": {
        "/v/blob_worker_ws": (
            HTML,
            "<script>new Worker(URL.createObjectURL(new Blob([\"fetch('{A}/ok/blob_worker_ws');"
            + WS % "blob_worker_ws"
            + '"])))</script>',
        )
    },
    "data_worker_ws": {
        "/v/data_worker_ws": (
            HTML,
            "<script>new Worker('data:text/javascript,'+encodeURIComponent(\"fetch('{A}/ok/data_worker_ws');"
            + WS % "data_worker_ws"
            + '"))</script>',
        )
    },
    "nested_worker_ws": {
        "/v/nested_worker_ws": (HTML, "<script>new Worker('/w/outer_ws.js')</script>"),
        "/w/outer_ws.js": (JS, "new Worker('/w/nested_worker_ws.js')"),
        "/w/nested_worker_ws.js": (JS, "fetch('{A}/ok/nested_worker_ws');" + WS % "nested_worker_ws"),
    },
    "module_worker_ws": {
        "/v/module_worker_ws": (HTML, "<script>new Worker('/w/module_worker_ws.js',{type:'module'})</script>"),
        "/w/module_worker_ws.js": (JS, "fetch('{A}/ok/module_worker_ws');" + WS % "module_worker_ws"),
    },
    "late_worker_ws": {
        "/v/late_worker_ws": (
            HTML,
            "<script>addEventListener('load',()=>setTimeout(()=>new Worker('/w/late_worker_ws.js'),400))</script>",
        ),
        "/w/late_worker_ws.js": (JS, "fetch('{A}/ok/late_worker_ws');" + WS % "late_worker_ws"),
    },
    "iframe_worker_ws": {  # a sandboxed iframe: another (opaque) origin, in a process of its own
        "/v/iframe_worker_ws": (HTML, "<iframe sandbox=allow-scripts src='{A}/p/iframe_worker_ws'></iframe>"),
        "/p/iframe_worker_ws": (
            HTML,
            "<script>new Worker(URL.createObjectURL(new Blob([\"fetch('{A}/ok/iframe_worker_ws');"
            + WS % "iframe_worker_ws"
            + '"])))</script>',
        ),
    },
    "popup_worker_ws": {
        "/v/popup_worker_ws": (HTML, "<script>window.open('{A}/p/popup_worker_ws')</script>"),
        "/p/popup_worker_ws": (HTML, "<script>new Worker('/w/popup_worker_ws.js')</script>"),
        "/w/popup_worker_ws.js": (JS, "fetch('{A}/ok/popup_worker_ws');" + WS % "popup_worker_ws"),
    },
    "shared_worker_ws": {
        "/v/shared_worker_ws": (HTML, "<script>new SharedWorker('/w/shared_worker_ws.js')</script>"),
        "/w/shared_worker_ws.js": (JS, "fetch('{A}/ok/shared_worker_ws');" + WS % "shared_worker_ws"),
    },
    "shared_worker": {
        "/v/shared_worker": (HTML, "<script>new SharedWorker('/w/shared_worker.js')</script>"),
        "/w/shared_worker.js": (JS, "fetch('{A}/ok/shared_worker');fetch('{B}/hit/shared_worker').catch(()=>0)"),
    },
    "worker302": {
        "/v/worker302": (HTML, "<script>new Worker('/w/worker302.js')</script>"),
        "/w/worker302.js": (JS, "fetch('{A}/ok/worker302');fetch('{A}/r302?to={B}/hit/worker302').catch(()=>0)"),
    },
    "shared_worker302": {
        "/v/shared_worker302": (HTML, "<script>new SharedWorker('/w/shared_worker302.js')</script>"),
        "/w/shared_worker302.js": (
            JS,
            "fetch('{A}/ok/shared_worker302');fetch('{A}/r302?to={B}/hit/shared_worker302').catch(()=>0)",
        ),
    },
    "blob_worker": {
        "/v/blob_worker": (
            HTML,
            "<script>new Worker(URL.createObjectURL(new Blob([\"fetch('{A}/ok/blob_worker');"
            "fetch('{B}/hit/blob_worker').catch(()=>0)\"])))</script>",
        )
    },
    "iframe302": {"/v/iframe302": (HTML, PING % "iframe302" + "<iframe src='{A}/r302?to={B}/hit/iframe302'></iframe>")},
    "popup_prefetch": {
        "/v/popup_prefetch": (HTML, PING % "popup_prefetch" + "<script>window.open('{A}/p/popup_prefetch')</script>"),
        "/p/popup_prefetch": (HTML, "<link rel=prefetch href='{B}/hit/popup_prefetch'>"),
    },
    "pagehide_beacon": {
        "/v/pagehide_beacon": (
            HTML,
            PING % "pagehide_beacon" + "<script>addEventListener('pagehide',"
            "()=>navigator.sendBeacon('{B}/hit/pagehide_beacon','x'));setTimeout(()=>location='{A}/p/next',300)</script>",
        )
    },
    # a content security policy's violation report, sent by the renderer to the policy's report-uri
    "report_uri": {"/v/report_uri": (HTML, PING % "report_uri" + "<img src='{A}/img/report_uri.png'>")},
    "download": {
        # the click waits for the ping: a cross-origin <a download> is a navigation, which could cancel it
        "/v/download": (
            HTML,
            "<a id=l download href='{B}/hit/dl'>x</a>"
            "<img src='{A}/ok/download' onload='l.click()' onerror='l.click()'>",
        )
    },
}
#: Response headers of the vectors' pages, by path.
HEADERS = {"/v/report_uri": {"Content-Security-Policy": "img-src {A}/ok/; report-uri {B}/hit/report_uri"}}


def serve_vectors(site: OriginSite) -> None:
    """Have ``site`` answer every vector's pages."""
    for vector in VECTORS.values():
        site.pages.update(vector)
    site.headers.update(HEADERS)


#: The marker a vector's refused request carries in its path (a download's is ``/hit/dl``).
MARKER = {"download": "/hit/dl"}


def marker(name: str) -> str:
    return MARKER.get(name, f"/hit/{name}")


@pytest.fixture(scope="module", params=GUARDS)
def policy_session(
    origin_site: OriginSite, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ocnb.Session]:
    """A session allowing ``127.0.0.1``, once per guard: every test of it runs against both."""
    serve_vectors(origin_site)
    s = ocnb.Session(
        headless=True,
        home=tmp_path_factory.mktemp("policy-home"),
        caps=["network"],
        **policy_of(request.param, ["http://127.0.0.1:*"]),
    )
    yield expect_guard(s, request.param)
    s.close()


@pytest.fixture
def policy(policy_session: ocnb.Session) -> ocnb.Session:
    for t in policy_session.call("tabs_context").data["tabs"][1:]:
        policy_session.call("tabs_close", tab_id=t["tab_id"])
    policy_session.call("navigate", url="about:blank")
    return policy_session


def run_vector(s: ocnb.Session, site: OriginSite, name: str) -> ocnb.ToolResult:
    """Open the vector's page until it has run (once more if it did not), then give it its window:
    1.5 s, or :data:`GRACE` s after the guard logged its refusal of the vector's request if that comes
    first (the page made its attempt; what it sends after that still has the grace to arrive).

    A page that did not run proves nothing, so it is opened again once: Chromium sometimes never starts
    a popup's dedicated worker when pages load at once (its script fetched, no DevTools client holding
    it; seen with raw Playwright too, 2 in 60 batches of 8 tabs, and once in CI with one page at a
    time). Whatever either attempt sent stays in the site's log, which the tests read whole.

    The call that opens it is ``ok`` under either guard: what the page sends after it loaded is the
    guard's to refuse, not a reason for the agent's call to fail."""

    def refused() -> int:  # the guard's logged refusals of the vector's request so far
        guard = s.state.origin_guard if s.state is not None else None
        return sum(marker(name) in b.url for b in list(guard.log if guard is not None else []))

    seen = refused()
    for attempt in range(2):
        result = s.call("navigate", url=f"{site.allowed}/v/{name}")
        # the vector's page loads: a refusal of what it then sends must not hold the call (an <a download>
        # clicked to a refused origin once held it until its 30 s timeout, under the DevTools guard)
        assert result.ok, f"{name}: {result.error}"
        if site.wait_for("127.0.0.1:", f"/ok/{name}", timeout=15):
            break
        assert attempt == 0, f"the page of {name} did not run, twice"
        for t in s.call("tabs_context").data["tabs"][1:]:  # its popup, stalled: a fresh start
            s.call("tabs_close", tab_id=t["tab_id"])
    end = time.monotonic() + 1.5  # the page's timers, popups and workers have their chance
    while time.monotonic() < end:
        if refused() > seen:
            end = min(end, time.monotonic() + GRACE)
            break
        time.sleep(0.05)
    time.sleep(max(0.0, end - time.monotonic()))
    return result


#: Seconds a vector's page is still watched after the guard refused its request.
GRACE = 0.5


#: Ways around the policy it does not close yet (docs/security.md says so); strict: a fix shows up here.
KNOWN_GAPS: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_GAPS[n], strict=True)) if n in KNOWN_GAPS else n
        for n in sorted(VECTORS)
    ],
)
def test_no_request_reaches_the_refused_origin(policy: ocnb.Session, origin_site: OriginSite, name: str) -> None:
    run_vector(policy, origin_site, name)
    assert origin_site.refused_hits(marker(name)) == []


#: In a browser shared by several contexts (a ``Pool``'s), what its one browser-level guard does not
#: cover yet (docs/security.md says so); strict: a fix shows up here.
SHARED_BROWSER_GAPS: dict[str, str] = {}
GAPS_IN_A_SHARED_BROWSER = {**KNOWN_GAPS, **SHARED_BROWSER_GAPS}


@pytest.fixture(scope="module", params=GUARDS)
def pooled(
    origin_site: OriginSite, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ocnb.Session]:
    serve_vectors(origin_site)
    pool = ocnb.Pool(
        size=1, home=tmp_path_factory.mktemp("pool-home"), **policy_of(request.param, ["http://127.0.0.1:*"])
    )
    yield expect_guard(pool.sessions[0], request.param)  # the pool's shared browser: its own guard per context
    pool.close()


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=GAPS_IN_A_SHARED_BROWSER[n], strict=True))
        if n in GAPS_IN_A_SHARED_BROWSER
        else n
        for n in sorted(VECTORS)
    ],
)
def test_in_a_shared_browser_no_request_reaches_the_refused_origin(
    pooled: ocnb.Session, origin_site: OriginSite, name: str
) -> None:
    """A pool's browser is shared by its sessions' contexts: its one browser-level guard judges each
    paused request by the policy of the context it came from — popups' first hops and shared workers
    included."""
    for t in pooled.call("tabs_context").data["tabs"][1:]:
        pooled.call("tabs_close", tab_id=t["tab_id"])
    seen = len(origin_site.log)  # what the same page did in this module's other tests is not this one's
    run_vector(pooled, origin_site, name)
    assert [h for h in origin_site.log[seen:] if h.host.startswith("localhost:") and marker(name) in h.path] == []


def two_way_pages(name: str, own: str, other: str) -> dict[str, tuple[str, str]]:
    """A page on ``own`` whose every request the browser-level guard must attribute to its context: its
    own origin reached through redirects (must pass: the other session's policy refuses it) from the
    page, a same-origin frame, a dedicated and a shared worker and a popup; and the ``other`` origin
    through redirects from each of them (must not)."""

    def via(to: str, marker: str) -> str:
        return f"{own}/r302?to={to}/{marker}/{name}"

    fetches = "".join(f"fetch('{via(o, m)}-{{w}}').catch(()=>0);" for o, m in ((own, "ok"), (other, "hit")))
    # a shared worker's WebSockets: gated by its own context's policy (a refused one throws)
    sockets = "".join(
        f"try{{new WebSocket('ws'+'{o}'.slice(4)+'/{m}/{name}-shared_ws')}}catch(e){{}}"
        for o, m in ((own, "ok"), (other, "hit"))
    )
    return {
        f"/two/{name}": (
            HTML,
            f"<img src='{via(own, 'ok')}-img'><img src='{via(other, 'hit')}-img'>"
            f"<iframe src='{own}/two/{name}/frame'></iframe>"
            f"<script>new Worker('/two/{name}/w.js');new SharedWorker('/two/{name}/shared.js');"
            f"window.open('{via(own, 'ok')}-popup');window.open('{via(other, 'hit')}-popup')</script>",
        ),
        f"/two/{name}/frame": (HTML, f"<img src='{via(own, 'ok')}-frame'><img src='{via(other, 'hit')}-frame'>"),
        f"/two/{name}/w.js": (JS, fetches.replace("{w}", "worker")),
        f"/two/{name}/shared.js": (JS, fetches.replace("{w}", "shared_worker") + sockets),
        f"/ok/{name}-popup": (HTML, "popup"),
    }


@pytest.mark.parametrize("guard", GUARDS)
def test_contexts_of_one_browser_each_keep_their_own_policy(
    origin_site: OriginSite, tmp_path: Path, guard: str
) -> None:
    """Three sessions in one browser ocnb launched: one allows only ``127.0.0.1``, one only
    ``localhost`` (each refuses the other's origin), one has no policy. Each context's guard — its own
    proxy, or the one browser-level DevTools guard — refuses that context's redirect hops, popups',
    frames' and workers' requests to the origin *its* policy refuses, lets through what its policy
    allows though another's refuses it, and judges nothing of the context without a policy — read
    from the server's log, per host."""
    from ocnb.browser.runtime import Runtime
    from ocnb.browser.shared import SharedBrowser
    from ocnb.settings import Settings

    ports = "127.0.0.1:", "localhost:"
    sites = {"a": (origin_site.allowed, origin_site.refused), "b": (origin_site.refused, origin_site.allowed)}
    for name, (own, other) in sites.items():
        origin_site.pages.update(two_way_pages(name, own, other))
    origin_site.pages.update(two_way_pages("none", origin_site.allowed, origin_site.refused))
    runtime = Runtime(name="ocnb-two-policies")
    shared = SharedBrowser(runtime, Settings.from_env().with_changes(home=tmp_path))
    sessions = {
        "a": ocnb.Session(home=tmp_path, shared_browser=shared, **policy_of(guard, ["http://127.0.0.1:*"])),
        "b": ocnb.Session(home=tmp_path, shared_browser=shared, **policy_of(guard, ["http://localhost:*"])),
        "none": ocnb.Session(home=tmp_path, shared_browser=shared),
    }
    try:
        for s in sessions.values():
            s.call("navigate", url="about:blank")  # every context is open before any page runs
        assert len({id(s.browser_state().browser) for s in sessions.values()}) == 1
        sources = ("img", "frame", "popup", "worker", "shared_worker", "shared_ws")
        for name, s in sessions.items():
            own, other = sites.get(name, (origin_site.allowed, origin_site.refused))
            own_host, other_host = ports if own == origin_site.allowed else ports[::-1]
            s.call("navigate", url=f"{own}/two/{name}")
            for source in sources:  # its own origin, reached through a redirect the other policy refuses
                assert origin_site.wait_for(own_host, f"/ok/{name}-{source}"), (name, source)
            if name == "none":  # no policy: every redirect reaches the other origin
                for source in sources:
                    assert origin_site.wait_for(other_host, f"/hit/{name}-{source}"), (name, source)
            else:
                time.sleep(1.0)
                assert origin_site.hits(other_host, f"/hit/{name}-") == [], name
    finally:
        for s in sessions.values():
            s.close()
        if not runtime.stopped:
            runtime.run(shared.close(), timeout=30)
        runtime.stop()


def test_typed_navigate_is_blocked_url_and_sends_nothing(policy: ocnb.Session, origin_site: OriginSite) -> None:
    result = policy.call("navigate", url=f"{origin_site.refused}/hit/typed")
    assert not result.ok and result.error is not None
    assert result.error.code == "BLOCKED_URL"
    assert result.error.details["rule"] == "not in allowed_origins"
    result = policy.call("tabs_create", url=f"{origin_site.refused}/hit/typed_tab")
    assert result.error is not None and result.error.code == "BLOCKED_URL"
    time.sleep(0.3)
    assert origin_site.refused_hits("/hit/typed") == []
    assert len(policy.call("tabs_context").data["tabs"]) == 1  # no tab was opened


def test_a_redirect_to_a_refused_origin_is_blocked_url_naming_it(policy: ocnb.Session, origin_site: OriginSite) -> None:
    target = f"{origin_site.refused}/hit/nav302"
    result = policy.call("navigate", url=f"{origin_site.allowed}/r302?to={target}")
    assert result.error is not None and result.error.code == "BLOCKED_URL", result
    assert result.error.details["url"] == target
    assert result.error.details["rule"] == "not in allowed_origins"
    assert origin_site.hits("127.0.0.1:", "/r302?to=") and origin_site.refused_hits("/hit/nav302") == []


def test_the_call_that_caused_it_reports_blocked_and_the_journal_names_it(
    policy: ocnb.Session, origin_site: OriginSite
) -> None:
    result = run_vector(policy, origin_site, "img")
    assert result.ok, result
    assert "blocked" in result.data, (result.data, policy.state.origin_guard and list(policy.state.origin_guard.log))
    blocked = result.data["blocked"]
    assert {"url": f"{origin_site.refused}/hit/img", "rule": "not in allowed_origins", "type": "image"} in [
        {k: b[k] for k in ("url", "rule", "type")} for b in blocked
    ]
    line = policy.journal_df().iloc[-1]  # the navigate call's journal line
    assert line["tool"] == "navigate"
    entry = [e for e in policy.journal.entries if e["seq"] == int(line["seq"])][0]
    assert {"url": f"{origin_site.refused}/hit/img", "rule": "not in allowed_origins"} in entry["blocked"]
    listed = policy.call("network_requests", url="*hit/img*").data["requests"]
    assert listed and listed[-1]["blocked"] == "not in allowed_origins"
    tab = policy.call("tabs_context").data["active"]  # the browser-level guard names the tab that asked
    assert [b.get("tab_id") for b in blocked if b["url"].endswith("/hit/img")] == [tab]


def test_a_call_with_nothing_refused_carries_no_blocked(policy: ocnb.Session, origin_site: OriginSite) -> None:
    result = policy.call("navigate", url=f"{origin_site.allowed}/ok/plain")
    assert result.ok and "blocked" not in result.data


@pytest.mark.parametrize("how", ["page", "fresh_iframe"])
def test_service_workers_are_blocked_while_a_policy_is_set(
    policy: ocnb.Session, origin_site: OriginSite, how: str
) -> None:
    """Playwright cannot route a service worker's requests: none is registered (not even through a new
    iframe's own ``navigator``), its script is never fetched, and so it sends nothing."""
    origin_site.pages["/sw.js"] = (JS, "fetch('{B}/hit/sw')")
    register = (
        "navigator"
        if how == "page"
        else "(()=>{const f=document.createElement('iframe');document.body.appendChild(f);return f.contentWindow.navigator})()"
    )
    origin_site.pages[f"/v/sw_{how}"] = (
        HTML,
        f"<body>{PING % ('sw_' + how)}<script>{register}.serviceWorker.register('/sw.js')"
        ".then(r=>document.title='registration:'+(r?r.scope:'none'),e=>document.title='refused: '+e.name)</script>",
    )
    policy.call("navigate", url=f"{origin_site.allowed}/v/sw_{how}")
    assert origin_site.wait_for("127.0.0.1:", f"/ok/sw_{how}")
    time.sleep(1.0)
    title = policy.call("javascript_tool", expression="document.title").data["result"]
    assert title in ("registration:none",) or title.startswith("refused"), title
    regs = policy.call("javascript_tool", expression="navigator.serviceWorker.getRegistrations().then(r=>r.length)")
    assert regs.data["result"] == 0
    assert origin_site.hits("127.0.0.1:", "/sw.js") == [] and origin_site.refused_hits("/hit/sw") == []


def test_without_policy_every_vector_reaches(origin_site: OriginSite, tmp_path: Path) -> None:
    """The control: the same pages with no policy do reach the other origin (so the tests above can fail)."""
    serve_vectors(origin_site)
    origin_site.log.clear()
    s = ocnb.Session(headless=True, home=tmp_path)
    try:
        missing = []
        for name in sorted(VECTORS):
            s.call("navigate", url=f"{origin_site.allowed}/v/{name}")
            if not origin_site.wait_for("localhost:", marker(name), timeout=10):  # a popup's worker, on a busy machine
                missing.append(name)
            for t in s.call("tabs_context").data["tabs"][1:]:
                s.call("tabs_close", tab_id=t["tab_id"])
        assert missing == []
    finally:
        s.close()
        origin_site.log.clear()  # what reached localhost here was allowed: the tests above start clean


def test_one_route_asks_the_policy_first_then_mocks_then_block_resources(
    origin_site: OriginSite, tmp_path: Path
) -> None:
    """The origin policy, ``network_route`` and ``block_resources`` are rules of the context's one route:
    a mock cannot answer for a refused URL, a mock still answers for an allowed one, and an image that
    ``block_resources`` refuses is not fetched — read from the server's log."""
    from ocnb.batch.row import block_resources

    origin_site.pages["/v/routes"] = (
        HTML,
        PING % "routes" + "<img src='{A}/img/routes.png'><script>window.got=Promise.all(["
        "fetch('{A}/api/routes').then(r=>r.text()),"
        "fetch('{B}/hit/routes').then(r=>r.text(),()=>'refused')])</script>",
    )
    s = ocnb.Session(headless=True, home=tmp_path, allowed_origins=["http://127.0.0.1:*"], caps=["network"])
    try:
        block_resources(s, ("image",))
        for url in ("*/api/routes", "*/hit/routes"):
            assert s.call("network_route", url=url, action="mock", body="mocked").ok
        s.call("navigate", url=f"{origin_site.allowed}/v/routes")
        assert origin_site.wait_for("127.0.0.1:", "/ok/routes")
        got = s.call("javascript_tool", expression="window.got").data["result"]
        assert got == ["mocked", "refused"]
        hits = {r["url"]: r["hits"] for r in s.call("network_route").data["routes"]}
        assert hits == {"*/api/routes": 1, "*/hit/routes": 0}
        assert origin_site.hits("127.0.0.1:", "/img/routes.png") == []
        assert origin_site.hits("127.0.0.1:", "/api/routes") == [] and origin_site.refused_hits("/hit/routes") == []
        assert s.call("network_route", url="*/api/routes", action="remove").ok  # gone: the server answers
        s.call("javascript_tool", expression="fetch('/api/routes').then(r=>r.status)")
        assert origin_site.wait_for("127.0.0.1:", "/api/routes")
    finally:
        s.close()


def test_a_block_list_alone_pauses_only_what_names_a_blocked_host(origin_site: OriginSite, tmp_path: Path) -> None:
    """With only ``blocked_origins`` the browser pauses just the URLs that name a blocked host (no
    round trip for the rest), and the hops that need the browser-wide guard are still refused."""
    serve_vectors(origin_site)
    s = ocnb.Session(headless=True, home=tmp_path, blocked_origins=["http://localhost:*"])
    try:
        for name in ("img302", "popup302", "shared_worker302", "worker302"):
            run_vector(s, origin_site, name)
            assert origin_site.refused_hits(marker(name)) == [], name
            for t in s.call("tabs_context").data["tabs"][1:]:
                s.call("tabs_close", tab_id=t["tab_id"])
    finally:
        s.close()


@pytest.mark.parametrize("guard", GUARDS)
def test_a_policy_leaves_the_browser_cache_on(origin_site: OriginSite, tmp_path: Path, guard: str) -> None:
    """Either guard judges every request without routing the context for the policy's own sake
    (Playwright turns the HTTP cache off while it routes): two pages sharing a cacheable image fetch
    it once. A ``network_route`` rule routes the context, and the cache goes off — the control that
    shows the server's log can tell."""
    for i in (1, 2):
        origin_site.pages[f"/v/cached{i}"] = (HTML, PING % f"cached{i}" + "<img src='{A}/cached/logo.png'>")
    for routed in (False, True):
        origin_site.log.clear()
        s = ocnb.Session(headless=True, home=tmp_path, caps=["network"], **policy_of(guard, ["http://127.0.0.1:*"]))
        try:
            if routed:
                assert s.call("network_route", url="*/api/never", action="mock", body="x").ok
            for i in (1, 2):
                s.call("navigate", url=f"{origin_site.allowed}/v/cached{i}")
                assert origin_site.wait_for("127.0.0.1:", f"/ok/cached{i}")
            time.sleep(0.3)
            assert len(origin_site.hits("127.0.0.1:", "/cached/logo.png")) == (2 if routed else 1)
        finally:
            s.close()
    origin_site.log.clear()


def test_the_browser_level_guard_remembers_the_policy_per_origin_without_changing_it() -> None:
    """The guard's per-origin memory of decisions answers exactly as the policy does, for URLs as the
    browser writes them and for odd ones (which skip the memory)."""
    from ocnb.browser.policy import OriginGuard
    from ocnb.origins import OriginPolicy

    policy = OriginPolicy(allowed=["http://127.0.0.1:*", "https://*.example.com"], blocked=["https://bad.example.com"])
    guard = OriginGuard(policy)
    urls = [
        "http://127.0.0.1:8080/a?b#c",
        "http://127.0.0.1:8080",
        "http://localhost:8080/x",
        "https://www.example.com/",
        "https://bad.example.com/x",
        "https://example.com/",
        "wss://a.example.com/socket",
        "http://evil.com@127.0.0.1/",
        "http://127.0.0.1@evil.com/",
        "http:///evil.com/",
        "blob:http://evil.com/uuid",
        "data:text/html,x",
        "HTTP://LOCALHOST/",
    ]
    for _ in range(2):  # the second time from memory
        assert [guard.decide(u) for u in urls] == [policy.check(u) for u in urls]
    assert guard.decisions and set(guard.decisions) <= {
        "http://127.0.0.1:8080",
        "http://localhost:8080",
        "https://www.example.com",
        "https://bad.example.com",
        "https://example.com",
        "wss://a.example.com",
    }
