"""Two rules of exactly-once, on real Chromium against a local site that logs what reaches it.

1. A step that times out at or after the row's commit step leaves the row ``unknown`` (the site may
   have taken it) and it is not replayed; one that times out before the commit step is a plain failure
   (the site never saw the row).
2. ``commit_step=`` overrides the judgement by step kinds: a page that saves a field while it is being
   filled (an autosave) acts on the site from the fill step on, and a browser lost there leaves the
   row ``unknown`` instead of replaying it (which would autosave it twice).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from ocnb.batch.pool import Pool
from ocnb.batch.row import UNKNOWN_OUTCOME, commit_step
from ocnb.browser import find_chromium
from ocnb.browser.remote import PlaywrightServer
from ocnb.contracts import ContractStore
from ocnb.skills.store import SkillStore
from tests.batch import SiteHandler, serving
from tests.skills.helpers import art, click, fill, navigate

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STEP_TIMEOUT_MS = 1500
#: How long the site sleeps in a slow request: well past the step timeout.
SLOW_S = STEP_TIMEOUT_MS / 1000 + 2.0

FORM = (
    b"<!doctype html><title>form</title><form method=post action=/submit>"
    b"<label>Key <input id=key name=key></label><button>Send</button></form>"
)
# Each keystroke is saved at once by a synchronous request: the fill step is still running while the
# site has the value (as an autosave on input does, without the race of an asynchronous one).
AUTOSAVE = (
    b"<!doctype html><title>autosave</title><form method=post action=/submit>"
    b"<label>Key <input id=key name=key oninput=\"var x = new XMLHttpRequest(); x.open('POST', '/autosave', false);"
    b' x.send(this.value)"></label><button>Send</button></form>'
)


class Site(ThreadingHTTPServer):
    """``/form`` and ``/autosave-form``; ``POST /submit`` and ``POST /autosave`` log ``(key, srv)``.

    ``slow_forms``: which GETs of a form (1 = the first) sleep :data:`SLOW_S` before answering;
    ``slow_keys``: keys whose ``/submit`` sleeps so (logged first: the site has the row).
    ``on_autosave``: called under the lock with the autosave log as each autosave is logged.
    """

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.posts: list[tuple[str, str]] = []
        self.autosaves: list[tuple[str, str]] = []
        self.form_gets = 0
        self.slow_forms: set[int] = set()
        self.slow_keys: set[str] = set()
        self.on_autosave: Any = None
        self.lock = threading.Lock()

    def page(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{path}"


class Handler(SiteHandler):
    server: Site

    def _srv(self) -> str:
        pairs = (c.strip().split("=", 1) for c in (self.headers.get("Cookie") or "").split(";") if "=" in c)
        return dict(pairs).get("srv", "?")

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlsplit(self.path)
        if url.path == "/register":
            srv = parse_qs(url.query)["srv"][0]
            self._send(f"<!doctype html><title>registered</title><p>{srv}</p>".encode(), cookie=srv)
        elif url.path == "/autosave-form":
            self._send(AUTOSAVE)
        else:
            with self.server.lock:
                self.server.form_gets += 1
                slow = self.server.form_gets in self.server.slow_forms
            if slow:
                time.sleep(SLOW_S)
            self._send(FORM)

    def do_POST(self) -> None:  # noqa: N802
        site = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        if self.path == "/autosave":
            with site.lock:
                site.autosaves.append((body, self._srv()))
                if site.on_autosave is not None:
                    site.on_autosave(site.autosaves)
            self._send(b"saved")
            return
        key = parse_qs(body)["key"][0]
        with site.lock:
            site.posts.append((key, self._srv()))
        if key in site.slow_keys:
            time.sleep(SLOW_S)
        self._send(f"<!doctype html><title>done</title><p id=result>Thanks {key}</p>".encode())


@pytest.fixture
def site() -> Iterator[Site]:
    with serving(Site()) as server:
        yield server


def _skill(site: Site, home: Any, page: str = "form") -> dict[str, Any]:
    """Open the page, fill Key with ${key}, press Send; the contract wants the site's "Thanks"."""
    ContractStore(home).define("thanks", {"kind": "dom_text", "selector": "#result", "contains": "Thanks"})
    url = site.page(page)
    steps = [
        {"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Key", "#key", "${key}"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, click("button", "Send"))},
    ]
    store = SkillStore(home)
    return store.get(store.record("127.0.0.1", f"send-{page}", steps, contract_id="thanks")["id"])


def test_a_timeout_after_the_commit_step_is_unknown_and_one_before_it_is_a_failure(site: Site, ocnb_home) -> None:
    """Row k1's form page never loads in time (step 0, before the commit step: nothing was sent); row
    k3's POST is logged and then answered too late (the click, step 2, sent it)."""
    skill = _skill(site, ocnb_home)
    assert commit_step(skill) == 2
    rows = [{"key": f"k{i}"} for i in range(5)]
    site.slow_forms = {2}  # the 2nd form load: row k1's (a pool of one runs the rows in order)
    site.slow_keys = {"k3"}
    exe, _ = find_chromium()
    t0 = time.perf_counter()
    with Pool(size=1, home=ocnb_home, executable_path=exe) as pool:
        df = pool.replay(skill["id"], rows, step_timeout_ms=STEP_TIMEOUT_MS, progress=False)
    elapsed = time.perf_counter() - t0
    table = df[["row", "ok", "outcome", "failure_code", "step_reached", "acted", "retried"]].to_string()
    by_key = {rows[int(r.row)]["key"]: r for r in df.itertuples()}
    log = Counter(key for key, _ in site.posts)
    assert by_key["k1"].outcome == "failed" and by_key["k1"].failure_code == "STEP_TIMEOUT", table
    assert by_key["k1"].step_reached == 0 and not by_key["k1"].retried and "k1" not in log, table
    assert by_key["k3"].outcome == "unknown" and not by_key["k3"].ok, table
    assert by_key["k3"].failure_code in ("STEP_TIMEOUT", UNKNOWN_OUTCOME), table
    assert not by_key["k3"].retried and log["k3"] == 1, (table, site.posts)  # on the site once, not replayed
    assert all(by_key[k].outcome == "done" for k in ("k0", "k2", "k4")), table
    # ``acted``: whether the row's commit step began (the site may have it) — what a rerun of the failed
    # rows must go by: k1 never clicked, k3 did
    assert not by_key["k1"].acted and by_key["k3"].acted and all(by_key[k].acted for k in ("k0", "k2", "k4")), table
    assert log == Counter({"k0": 1, "k2": 1, "k3": 1, "k4": 1}), site.posts
    print(f"\n{table}\n{elapsed:.1f} s")


@pytest.mark.parametrize("override", [True, False], ids=["commit-at-fill-unknown", "kind-judged-autosaved-twice"])
def test_an_autosave_acts_from_the_fill_step_when_told(site: Site, ocnb_home, override: bool) -> None:
    """Server 0 is killed from inside the site's handler of an autosave one of its sessions sent (the
    3rd autosave on): with ``commit_step=1`` (the fill) that row is unknown and autosaved once;
    judged by step kinds (the click is the commit step) it is replayed on server 1 and autosaved twice."""
    skill = _skill(site, ocnb_home, "autosave-form")
    assert commit_step(skill) == 2  # a fill is not seen as acting
    rows = [{"key": f"a{i}"} for i in range(10)]
    exe, _ = find_chromium()
    killed: list[str] = []
    with PlaywrightServer() as zero, PlaywrightServer() as one:
        urls = [zero.ws_url, one.ws_url]

        def kill_in_flight(log: list[tuple[str, str]]) -> None:
            if not killed and len(log) >= 3 and log[-1][1] == "0":
                killed.append(log[-1][0])
                zero.kill()

        with Pool(size=2, home=ocnb_home, connect=urls, executable_path=exe) as pool:
            for i, s in enumerate(pool.sessions):  # session i is on server i: the site learns which
                assert s.call("navigate", url=site.page(f"register?srv={i}")).ok
            site.on_autosave = kill_in_flight
            extra = {"commit_step": 1} if override else {}
            df = pool.replay(skill["id"], rows, step_timeout_ms=3000, progress=False, **extra)
    table = df[["row", "ok", "outcome", "failure_code", "step_reached", "retried", "browser"]].to_string()
    assert killed, "server 0's browser never autosaved"
    victim = killed[0]
    saves = Counter(key for key, _ in site.autosaves)
    posts = Counter(key for key, _ in site.posts)
    outcome = {rows[int(r.row)]["key"]: r.outcome for r in df.itertuples()}
    assert max(posts.values()) == 1, site.posts  # nothing was ever submitted twice
    if override:
        assert outcome[victim] == "unknown", table
        assert df.loc[df["outcome"] == "unknown", "failure_code"].eq(UNKNOWN_OUTCOME).all(), table
        assert saves[victim] == 1 and victim not in posts, (site.autosaves, table)  # not replayed
        assert {k for k, o in outcome.items() if o != "done"} == {victim}, table
    else:  # lost before the click, so replayed: the site has its autosave twice
        assert outcome[victim] == "done" and saves[victim] == 2 and posts[victim] == 1, (site.autosaves, table)
        assert set(outcome.values()) == {"done"}, table
    assert all(saves[k] == 1 for k in outcome if k != victim), site.autosaves
    print(f"\ncommit_step={'1' if override else 'by kinds'}: victim {victim}, autosaves {dict(saves)}\n{table}")
