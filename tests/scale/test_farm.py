"""A browser farm: Pool(connect=[...]) over Playwright servers started as separate processes on
loopback, and a server lost mid-batch — its rows go to the other server, none lost, none done twice
(counted in the demo site's own request log)."""

from __future__ import annotations

import io
import re
import sys
import threading
import time

import pytest

from ocnb.browser import find_chromium
from ocnb.demosite import serve
from ocnb.pool import Pool
from ocnb.remote import PlaywrightServer
from ocnb.skills.store import SkillStore
from tests.skills.helpers import art, navigate

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _echo_skill(site, home) -> str:
    """Two navigations: a slow page (where a row spends most of its time), then /echo?row=${who}."""
    slow, echo = site.page("slow?ms=300"), site.page("echo?row=${who}")
    steps = [{"tool": "navigate", "args": {"url": u}, "replay_artifact": art(u, navigate(u))} for u in (slow, echo)]
    return SkillStore(home).record(slow.split("/")[2], "farm-echo", steps)["id"]


def test_pool_over_two_servers_survives_losing_one(ocnb_home, monkeypatch) -> None:
    exe, _ = find_chromium()
    log = RequestLog()
    monkeypatch.setattr(sys, "stderr", log)  # the site's request log (http.server writes it to stderr)
    rows = [{"who": f"r{i}"} for i in range(12)]
    with serve(log_requests=True) as site, PlaywrightServer() as one, PlaywrightServer() as two:
        sid = _echo_skill(site, ocnb_home)
        site_log = log.lines
        with Pool(size=2, home=ocnb_home, connect=[one.ws_url, two.ws_url], executable_path=exe) as pool:
            assert [b.remote for b in pool.browsers] == [one.ws_url, two.ws_url]
            for s in pool.sessions:
                s.start()
            killer = threading.Thread(target=_kill_after, args=(site_log, 3, one))  # mid-batch
            killer.start()
            df = pool.replay(sid, rows, progress=False)
            killer.join()
    assert df["ok"].all(), df[["row", "failure_code", "browser"]].to_string()
    assert df["retried"].any()  # the lost server's row in flight went to the other one
    assert set(df["browser"]) <= {one.ws_url, two.ws_url} and two.ws_url in set(df["browser"])
    assert df.loc[df["retried"], "browser"].eq(two.ws_url).all()
    seen = [m for line in site_log for m in re.findall(r"GET /echo\?row=(r\d+)", line)]
    assert sorted(seen) == sorted(r["who"] for r in rows)  # every row reached the site once: none lost or twice


class RequestLog(io.StringIO):
    """Stands in for stderr while the site logs: keeps every request line the site writes."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines.append(text)
        return len(text)


def _kill_after(lines: list[str], n: int, server: PlaywrightServer) -> None:
    """Kill ``server`` once ``n`` rows reached /echo, 100 ms later: rows in flight then sit on the slow
    page, before their side effect. (A browser lost between a row's /echo and the row's end would have
    that row retried and done twice: a batch is at-least-once for such a row, as any retry is.)"""
    deadline = time.time() + 20
    while sum("/echo" in line for line in lines) < n and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    server.kill()


def test_dask_workers_each_behind_a_server_and_one_server_lost(ocnb_home, monkeypatch) -> None:
    distributed = pytest.importorskip("distributed")
    exe, _ = find_chromium()
    log = RequestLog()
    monkeypatch.setattr(sys, "stderr", log)
    rows = [{"who": f"d{i}"} for i in range(10)]
    with (
        serve(log_requests=True) as site,
        PlaywrightServer() as one,
        PlaywrightServer() as two,
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        sid = _echo_skill(site, ocnb_home)
        with Pool(size=1, home=ocnb_home, connect=[one.ws_url, two.ws_url], executable_path=exe) as pool:
            killer = threading.Thread(target=_kill_after, args=(log.lines, 3, one))
            killer.start()
            df = pool.replay(sid, rows, client=client, progress=False)
            killer.join()
    assert df["ok"].all(), df[["row", "failure_code", "worker", "browser"]].to_string()
    assert len(set(df["worker"])) == 2 and set(df["browser"]) == {one.ws_url, two.ws_url}
    assert df.loc[df["retried"], "browser"].eq(two.ws_url).all()
    seen = [m for line in log.lines for m in re.findall(r"GET /echo\?row=(d\d+)", line)]
    assert sorted(seen) == sorted(r["who"] for r in rows)  # none lost, none done twice
