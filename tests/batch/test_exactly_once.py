"""Exactly-once as the site sees it: a farm server killed while one of its rows' form POST is on the wire.

A local site serves a one-field form and logs every POST on arrival, with the row's key and the
``srv`` cookie that says which browser sent it (each pool session registers its browser's number on
the site before the batch). The handler thread kills browser server 0 from inside the POST of one of
its rows — after the POST is logged and before it is answered — so that row's effect is on the site
and its browser is gone: the batch must not replay it (``outcome`` ``"unknown"``), and every row its
server's other session had not yet sent goes to server 1. The log must hold every done row exactly
once, no key twice, and agree with the frame's ``browser`` column.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import ocnb
from ocnb.batch.pool import Pool
from ocnb.batch.row import UNKNOWN_OUTCOME, commit_step
from ocnb.browser import find_chromium
from ocnb.browser.remote import PlaywrightServer
from ocnb.contracts import ContractStore
from ocnb.skills.store import SkillStore
from tests.batch import SiteHandler, dask_client, serving
from tests.skills.helpers import art, click, fill, navigate

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FORM = (
    b"<!doctype html><title>form</title><form method=post action=/submit id=f>"
    b"<label>Key <input id=key name=key></label>"
    # the click tells the site first (/clicked), then the form is posted: a row can be lost in between
    b"<button type=button onclick=\"fetch('/clicked?key=' + encodeURIComponent(key.value))"
    b'.then(() => f.submit())">Send</button></form>'
)


class Site(ThreadingHTTPServer):
    """``/register?srv=i`` sets the ``srv`` cookie; ``/form``; ``/clicked?key=`` (the button's beacon);
    ``POST /submit`` logs ``(key, srv)``; ``/lookup?key=`` says whether that key was posted."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.posts: list[tuple[str, str]] = []
        self.clicks: list[tuple[str, str]] = []
        #: ``/hello?key=`` visits as ``(key, ctx)``: each browser context gets a ``ctx`` cookie there, and
        #: ``ctx_srv`` (filled by a test) says which server a context's browser is on.
        self.hellos: list[tuple[str, str]] = []
        self.ctx_srv: dict[str, str] = {}
        self.lock = threading.Lock()
        #: Called under the lock as each POST (``"post"``) or beacon (``"click"``) is logged, before it is
        #: answered, with the kind and the log of that kind.
        self.on_event: Any = None

    def page(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{path}"


class Handler(SiteHandler):
    server: Site

    def _cookies(self) -> dict[str, str]:
        pairs = (c.strip().split("=", 1) for c in (self.headers.get("Cookie") or "").split(";") if "=" in c)
        return dict(pairs)

    def _srv(self) -> str:
        cookies = self._cookies()
        return cookies.get("srv") or self.server.ctx_srv.get(cookies.get("ctx", ""), "?")

    def _log(self, kind: str, key: str) -> None:
        site = self.server
        with site.lock:
            log = site.posts if kind == "post" else site.clicks
            log.append((key, self._srv()))
            if site.on_event is not None:
                site.on_event(kind, log)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/register":
            self._send(f"<!doctype html><title>registered</title><p>{query['srv']}</p>".encode(), cookie=query["srv"])
        elif url.path == "/hello":
            with self.server.lock:
                ctx = self._cookies().get("ctx") or str(len({c for _, c in self.server.hellos}))
                self.server.hellos.append((query["key"], ctx))
            self._send(b"<!doctype html><title>hello</title><p>hello</p>", cookie=ctx, name="ctx")
        elif url.path == "/clicked":
            self._log("click", query["key"])
            self._send(b"ok")
        elif url.path == "/lookup":
            with self.server.lock:
                found = any(k == query["key"] for k, _ in self.server.posts)
            self._send(f"<!doctype html><title>lookup</title><p id=found>{'yes' if found else 'no'}</p>".encode())
        else:
            self._send(FORM)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        key = parse_qs(self.rfile.read(length).decode())["key"][0]
        self._log("post", key)
        self._send(f"<!doctype html><title>done</title><p id=result>Thanks {key}</p>".encode())


@pytest.fixture
def site() -> Iterator[Site]:
    with serving(Site()) as server:
        yield server


def _post_skill(site: Site, home: Any) -> str:
    """Open the form, fill Key with ${key}, press Send; the contract wants the site's "Thanks"."""
    ContractStore(home).define("posted", {"kind": "dom_text", "selector": "#result", "contains": "Thanks"})
    url = site.page("form")
    steps = [
        {"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Key", "#key", "${key}"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, click("button", "Send"))},
    ]
    return SkillStore(home).record("127.0.0.1", "post-key", steps, contract_id="posted")["id"]


def _lookup_skill(site: Site, home: Any) -> str:
    """The check: open /lookup?key=${key}; its contract passes only when the site has the key."""
    ContractStore(home).define("found", {"kind": "dom_text", "selector": "#found", "contains": "yes"})
    url = site.page("lookup?key=${key}")
    steps = [{"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))}]
    return SkillStore(home).record("127.0.0.1", "lookup-key", steps, contract_id="found")["id"]


def test_commit_step_is_the_first_step_that_acts_on_the_site(site: Site, ocnb_home) -> None:
    skill = SkillStore(ocnb_home).get(_post_skill(site, ocnb_home))
    assert commit_step(skill) == 2  # navigate (fixed URL) and fill cannot post the row; the click can
    get = {"id": "g", "steps": [{"replay_artifact": art("u", navigate("u"), navigate("http://x/?k=${key}"))}]}
    assert commit_step(get) == 1  # a navigation that carries the row's values is a GET form


@pytest.mark.parametrize(
    ("kill_on", "verify"),
    [("post", False), ("post", True), ("click", True)],
    ids=["posted-reported-unknown", "posted-verified", "clicked-not-posted-replayed"],
)
def test_server_lost_mid_row_none_lost_none_posted_twice(site: Site, ocnb_home, kill_on: str, verify: bool) -> None:
    """Server 0 is killed from inside the site's handler of one of its rows' requests: its POST
    (logged, not answered) or the button's beacon (the click happened, the POST never left)."""
    exe, _ = find_chromium()
    rows = [{"key": f"k{i:02d}"} for i in range(40)]
    sid = _post_skill(site, ocnb_home)
    check = _lookup_skill(site, ocnb_home) if verify else None
    killed: list[str] = []
    with PlaywrightServer() as zero, PlaywrightServer() as one:
        urls = [zero.ws_url, one.ws_url]
        with Pool(size=4, home=ocnb_home, connect=urls, executable_path=exe) as pool:
            for i, s in enumerate(pool.sessions):  # session i is on browser i % 2: the site learns which
                assert s.call("navigate", url=site.page(f"register?srv={i % 2}")).ok
            site.on_event = _killer(kill_on, zero, killed)
            df = pool.replay(sid, rows, step_timeout_ms=3000, verify=check, progress=False)
    _agree(site, df, rows, urls, kill_on, verify, killed, ocnb_home)


def _killer(kill_on: str, server: PlaywrightServer, killed: list[str]) -> Any:
    """An ``on_event`` that kills ``server`` (server 0) from the 6th event of kind ``kill_on`` on, in the
    first one its browser sends: logged by the site, not answered yet."""

    def kill_in_flight(kind: str, log: list[tuple[str, str]]) -> None:
        if kind == kill_on and not killed and len(log) >= 6 and log[-1][1] == "0":
            killed.append(log[-1][0])
            server.kill()

    return kill_in_flight


def _agree(
    site: Site,
    df: Any,
    rows: list[dict[str, str]],
    urls: list[str],
    kill_on: str,
    verify: bool,
    killed: list[str],
    home: Any = None,
) -> None:
    """The site's log against the frame: none lost, none posted twice, the killed row as its mode says.
    A failed assertion shows the frame and the journal's failed calls (their messages say why)."""
    zero, one = urls
    assert killed, "server 0's browser never got that far"
    victim = killed[0]
    log = Counter(key for key, _ in site.posts)
    srv = dict(site.posts)
    key_of = {i: r["key"] for i, r in enumerate(rows)}
    table = df[["row", "outcome", "failure_code", "retried", "browser"]].to_string()
    if home is not None and not df["ok"].all():
        journal = ocnb.journal_df(home=home)
        table += "\nfailed calls:\n" + "\n".join(journal.loc[journal["ok"].eq(False), "summary"].astype(str))
    by = {o: {key_of[int(r)] for r in df.loc[df["outcome"] == o, "row"]} for o in ("done", "verified", "unknown")}

    assert len(df) == len(rows) and sorted(df["row"]) == list(range(len(rows)))
    assert max(log.values()) == 1, (site.posts, victim, table)  # no row posted twice
    assert by["done"] | by["verified"] | by["unknown"] == set(key_of.values()), table  # none merely failed
    assert by["done"] | by["verified"] <= set(log), table  # every done row reached the site …
    assert set(log) <= by["done"] | by["verified"] | by["unknown"]  # … nothing else did
    assert (~df["ok"]).sum() == len(by["unknown"])
    if verify:
        assert not by["unknown"], table  # every unknown row was settled by the check
    else:
        bad = df[df["outcome"] == "unknown"]
        lost = bad[bad["failure_code"] == UNKNOWN_OUTCOME]  # (a click that timed out under load is unknown too)
        assert 1 <= len(lost) <= 2 and lost["browser"].eq(zero).all(), table  # at most one per session of server 0
        assert bad["failure_code"].isin([UNKNOWN_OUTCOME, "STEP_TIMEOUT"]).all(), table
    if kill_on == "post":  # the row whose POST was on the wire: on the site once, reported or verified
        assert victim in (by["verified"] if verify else by["unknown"]) and srv[victim] == "0", table
    else:  # the row clicked whose POST never left: checked, found absent, replayed on server 1
        assert victim in by["done"] and srv[victim] == "1", table
    # the frame's browser column agrees with the cookie the site saw on each POST
    for _, r in df.iterrows():
        key = key_of[int(r["row"])]
        if key in srv:
            assert r["browser"] == urls[int(srv[key])], (key, srv[key], r["browser"])
    # rows server 0's sessions took after the kill went to server 1 before they acted on the site
    moved = df[df["retried"]]
    assert len(moved) >= 1 and moved["browser"].eq(one).all() and moved["ok"].all(), table
    print(
        f"\n{kill_on}/verify={verify}/{'dask' if 'worker' in df and df['worker'].ne('local').any() else 'pool'}: "
        f"{len(rows)} rows, "
        + ", ".join(f"{len(v)} {k} {sorted(v) if k != 'done' else ''}".strip() for k, v in by.items())
        + f", {len(moved)} moved to server 1, {len(site.posts)} POSTs logged, killed on {victim}"
    )


@pytest.mark.parametrize(
    ("kill_on", "verify", "size"),
    [("post", False, 1), ("click", True, 1), ("post", False, 2)],
    ids=["posted-reported-unknown", "clicked-replayed", "pool-of-2-per-worker"],
)
def test_dask_worker_loses_its_server_mid_row(site: Site, ocnb_home, kill_on: str, verify: bool, size: int) -> None:
    """The same on a 2-worker cluster, each worker's pool (``size`` contexts) bound to its own server
    (bind_workers). A warm-up batch tells the site which worker's context is on which server (``ctx``
    cookie → the frame's ``browser``), so the kill is still aimed at one of server 0's rows."""
    exe, _ = find_chromium()
    rows = [{"key": f"d{i:02d}"} for i in range(30)]
    sid = _post_skill(site, ocnb_home)
    check = _lookup_skill(site, ocnb_home) if verify else None
    url = site.page("hello?key=${key}")
    steps = [{"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))}]
    hello = SkillStore(ocnb_home).record("127.0.0.1", "hello", steps)["id"]
    killed: list[str] = []
    with (
        PlaywrightServer() as zero,
        PlaywrightServer() as one,
        dask_client(2) as client,
    ):
        urls = [zero.ws_url, one.ws_url]
        with Pool(size=size, home=ocnb_home, connect=urls, executable_path=exe) as pool:
            for attempt in range(3):  # until every context of both workers' pools said hello
                warm = pool.replay(hello, [{"key": f"h{attempt}-{i}"} for i in range(8)], client=client, progress=False)
                assert warm["ok"].all(), warm.to_string()
                ctx_of = dict(site.hellos)
                site.ctx_srv = {  # a context keeps its ctx cookie: what earlier attempts learnt holds
                    **site.ctx_srv,
                    **{ctx_of[f"h{attempt}-{int(r.row)}"]: str(urls.index(r.browser)) for r in warm.itertuples()},
                }
                if sorted(site.ctx_srv.values()) == ["0"] * size + ["1"] * size:
                    break
            assert sorted(site.ctx_srv.values()) == ["0"] * size + ["1"] * size, site.ctx_srv
            site.on_event = _killer(kill_on, zero, killed)
            df = pool.replay(sid, rows, client=client, step_timeout_ms=3000, verify=check, progress=False)
    assert len(set(df["worker"])) == 2
    _agree(site, df, rows, urls, kill_on, verify, killed, ocnb_home)
