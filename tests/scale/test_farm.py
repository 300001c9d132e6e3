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
    deadline = time.time() + 20
    while sum("/echo" in line for line in lines) < n and time.time() < deadline:
        time.sleep(0.02)
    server.kill()
