"""A browser farm: Pool(connect=[...]) over Playwright servers started as separate processes on
loopback, and a server lost mid-batch — its rows go to the other server, none lost, none done twice
(counted in the site's own request log, written as each request arrives)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from ocnb.batch.pool import Pool
from ocnb.browser import find_chromium
from ocnb.browser.remote import PlaywrightServer
from ocnb.skills.store import SkillStore
from tests.batch import SiteHandler, dask_client, serving
from tests.skills.helpers import art, navigate

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class Site(ThreadingHTTPServer):
    """``/slow`` answers after 400 ms, ``/echo?row=…`` at once: every request logged on arrival."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.log: list[str] = []
        self.waiting = 0  # /slow requests not answered yet: rows before their side effect
        self.lock = threading.Lock()

    def page(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{path}"


class Handler(SiteHandler):
    server: Site

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        site = self.server
        slow = self.path.startswith("/slow")
        with site.lock:
            site.log.append(self.path)
            site.waiting += slow
        if slow:
            time.sleep(0.4)
        self._send(b"<!doctype html><title>ok</title><p>ok</p>")
        if slow:
            with site.lock:
                site.waiting -= 1


@pytest.fixture
def site() -> Iterator[Site]:
    with serving(Site()) as server:
        yield server


def _echo_skill(site: Site, home) -> str:
    """Two navigations: a slow page (where a row spends most of its time), then /echo?row=${who}."""
    slow, echo = site.page("slow"), site.page("echo?row=${who}")
    steps = [{"tool": "navigate", "args": {"url": u}, "replay_artifact": art(u, navigate(u))} for u in (slow, echo)]
    return SkillStore(home).record(slow.split("/")[2], "farm-echo", steps)["id"]


def _workers_done_a_row(home: Path) -> int:
    """How many Dask workers (their homes under ``home/workers/``) have journaled a finished replay."""
    folders = sorted((home / "workers").glob("*/journal")) if (home / "workers").is_dir() else []
    return sum(any('"oc_skill_replay"' in f.read_text() for f in d.glob("*.jsonl")) for d in folders)


def _kill_mid_batch(site: Site, n: int, server: PlaywrightServer, home: Path | None = None) -> None:
    """Kill ``server`` once ``n`` rows reached /echo and both rows in flight wait on /slow, that is
    before their side effect (tests/batch/test_exactly_once.py kills after it). With ``home`` (Dask),
    also not before both workers have finished a row: a worker still starting its browser while the
    other did ``n`` rows would otherwise lose its first row and appear nowhere in the frame."""
    deadline = time.time() + 30
    both = home is None
    while time.time() < deadline:
        both = both or _workers_done_a_row(home) >= 2
        with site.lock:
            if both and sum(p.startswith("/echo") for p in site.log) >= n and site.waiting == 2:
                server.kill()  # under the lock: no request can arrive or be answered meanwhile
                return
        time.sleep(0.002)
    server.kill()


def _echoed(site: Site) -> list[str]:
    return sorted(m for p in site.log for m in re.findall(r"^/echo\?row=(\w+)", p))


def test_pool_over_two_servers_survives_losing_one(site: Site, ocnb_home) -> None:
    exe, _ = find_chromium()
    rows = [{"who": f"r{i}"} for i in range(12)]
    sid = _echo_skill(site, ocnb_home)
    with PlaywrightServer() as one, PlaywrightServer() as two:
        with Pool(size=2, home=ocnb_home, connect=[one.ws_url, two.ws_url], executable_path=exe) as pool:
            assert [b.remote for b in pool.browsers] == [one.ws_url, two.ws_url]
            for s in pool.sessions:
                s.start()
            killer = threading.Thread(target=_kill_mid_batch, args=(site, 3, one))
            killer.start()
            df = pool.replay(sid, rows, progress=False)
            killer.join()
    assert df["ok"].all(), df[["row", "failure_code", "browser"]].to_string()
    assert df["retried"].any()  # the lost server's row in flight went to the other one
    assert set(df["browser"]) <= {one.ws_url, two.ws_url} and two.ws_url in set(df["browser"])
    assert df.loc[df["retried"], "browser"].eq(two.ws_url).all()
    assert _echoed(site) == sorted(r["who"] for r in rows)  # every row reached the site once


def test_dask_workers_each_behind_a_server_and_one_server_lost(site: Site, ocnb_home) -> None:
    exe, _ = find_chromium()
    rows = [{"who": f"d{i}"} for i in range(10)]
    sid = _echo_skill(site, ocnb_home)
    with (
        PlaywrightServer() as one,
        PlaywrightServer() as two,
        dask_client(2) as client,
    ):
        with Pool(size=1, home=ocnb_home, connect=[one.ws_url, two.ws_url], executable_path=exe) as pool:
            killer = threading.Thread(target=_kill_mid_batch, args=(site, 3, one, Path(ocnb_home)))
            killer.start()
            df = pool.replay(sid, rows, client=client, progress=False)
            killer.join()
    assert df["ok"].all(), df[["row", "failure_code", "worker", "browser"]].to_string()
    assert len(set(df["worker"])) == 2 and set(df["browser"]) == {one.ws_url, two.ws_url}
    assert df.loc[df["retried"], "browser"].eq(two.ws_url).all()
    assert _echoed(site) == sorted(r["who"] for r in rows)  # none lost, none done twice
