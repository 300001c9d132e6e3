"""Exactly-once when a Dask *worker process* dies mid-task: Dask reruns the task, the ledger decides.

The site of :mod:`tests.batch.test_exactly_once` (every POST logged with the row's key) runs a batch
on a 2-worker LocalCluster, two rows per task, each worker launching its own Chromium. From inside
the site's handler, the worker process that sent a chosen request is SIGKILLed (found by the
request's TCP connection: the Chromium process holding it descends from one worker's pid) — after
the request is logged, before it is answered. The nanny restarts the worker and Dask reruns the
task; the rerun reads the batch's ledger (:mod:`ocnb.batch.ledger`). The site's log must hold every key
exactly once.

- ``post``: killed in the POST of the second row of its task. The task's first row is returned from
  the ledger (not posted again); the killed row comes back ``"unknown"`` (``UNKNOWN_OUTCOME``, the
  dead worker), or, with ``verify=``, a check on a live worker finds it on the site: ``"verified"``.
- ``form``: killed while the next row of the task loads its form (before its commit step): that row
  is replayed by the rerun and done once; the row before it, again, from the ledger.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psutil
import pytest

from ocnb.batch.pool import Pool
from ocnb.batch.row import UNKNOWN_OUTCOME
from ocnb.browser import find_chromium
from tests.batch import dask_client, serving
from tests.batch.test_exactly_once import Handler, Site, _lookup_skill, _post_skill

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class KillingSite(Site):
    """The exactly-once site, whose handler SIGKILLs the worker process behind a chosen request."""

    def __init__(self) -> None:
        super().__init__()
        self.RequestHandlerClass = KillingHandler
        #: worker address → pid (``client.run(os.getpid)``), filled by the test.
        self.workers: dict[str, int] = {}
        self.mode = ""  # "post": kill in the victim's POST; "form": in the next form load after it
        self.victim = ""
        self.armed: str | None = None  # ("form" mode) the worker whose next form load is killed
        #: ``(address, key, what)`` of the one kill.
        self.killed: list[tuple[str, str, str]] = []

    def worker_of(self, peer_port: int) -> str | None:
        """The address of the worker whose process tree holds the connection from ``peer_port``."""
        for address, pid in self.workers.items():
            try:
                procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
            except psutil.NoSuchProcess:
                continue
            for proc in procs:
                try:
                    conns = proc.net_connections(kind="tcp")
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                if any(c.laddr and c.laddr.port == peer_port and c.raddr and c.raddr.port == self.port for c in conns):
                    return address
        return None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def kill(self, address: str, key: str, what: str) -> None:
        self.killed.append((address, key, what))
        os.kill(self.workers[address], signal.SIGKILL)


class KillingHandler(Handler):
    server: KillingSite

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        site = self.server
        if urlsplit(self.path).path == "/form" and site.armed and not site.killed:
            address = site.worker_of(self.client_address[1])
            if address == site.armed:
                site.kill(address, "", "form")  # the next row's form: before its commit step
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802
        site = self.server
        length = int(self.headers.get("Content-Length") or 0)
        key = parse_qs(self.rfile.read(length).decode())["key"][0]
        self._log("post", key)
        if key == site.victim and not site.killed and not site.armed:
            address = site.worker_of(self.client_address[1])
            assert address is not None, "no worker holds the POST's connection"
            if site.mode == "post":
                site.kill(address, key, "post")  # logged, not answered
            else:
                site.armed = address
        self._send(f"<!doctype html><title>done</title><p id=result>Thanks {key}</p>".encode())


@pytest.mark.parametrize(
    ("mode", "verify"),
    [("post", False), ("post", True), ("form", False)],
    ids=["posted-reported-unknown", "posted-verified", "before-commit-replayed"],
)
def test_dask_worker_process_killed_mid_task_none_lost_none_twice(ocnb_home, mode: str, verify: bool) -> None:
    exe, _ = find_chromium()
    rows = [{"key": f"w{i:02d}"} for i in range(20)]
    # tasks hold rows (0, 1), (2, 3) …: "post" kills in row 7's POST (row 6 finished in the same task);
    # "form" arms at row 6's POST and kills in row 7's form load
    site = KillingSite()
    site.mode, site.victim = mode, ("w07" if mode == "post" else "w06")
    t0 = time.perf_counter()
    with serving(site), dask_client(2) as client:
        sid = _post_skill(site, ocnb_home)
        check = _lookup_skill(site, ocnb_home) if verify else None
        site.workers = client.run(os.getpid)
        with Pool(size=1, home=ocnb_home, executable_path=exe) as pool:
            df = pool.replay(
                sid, rows, client=client, rows_per_task=2, step_timeout_ms=5000, verify=check, progress=False
            )
        after = client.run(os.getpid)
    elapsed = time.perf_counter() - t0

    assert len(site.killed) == 1, site.killed
    dead, _, what = site.killed[0]
    assert what == mode and dead not in after  # that worker process is gone (the nanny started another)
    log = Counter(key for key, _ in site.posts)
    key_of = {i: r["key"] for i, r in enumerate(rows)}
    table = df[["row", "outcome", "failure_code", "retried", "worker"]].to_string()
    outcome = {key_of[int(r.row)]: r.outcome for r in df.itertuples()}
    worker = {key_of[int(r.row)]: r.worker for r in df.itertuples()}

    assert len(df) == len(rows) and sorted(df["row"]) == list(range(len(rows))), table
    assert max(log.values()) == 1, (sorted(log.items()), table)  # no key posted twice
    assert set(log) == set(key_of.values()), table  # none lost: every key reached the site once
    assert log["w06"] == 1 and worker["w06"] == dead, table  # finished before the kill: from the ledger
    if mode == "post" and not verify:
        assert outcome["w07"] == "unknown", table
        row = df[df["row"] == 7].iloc[0]
        assert row["failure_code"] == UNKNOWN_OUTCOME and row["worker"] == dead, table
        assert (df["outcome"] == "done").sum() == len(rows) - 1, table
    elif mode == "post":
        assert outcome["w07"] == "verified" and worker["w07"] == dead, table
        assert (df["outcome"] == "done").sum() == len(rows) - 1 and df["ok"].all(), table
    else:
        assert outcome["w07"] == "done" and worker["w07"] != dead, table  # replayed by the rerun
        assert (df["outcome"] == "done").all(), table
    print(
        f"\nworker killed ({mode}{', verify' if verify else ''}): {len(rows)} rows in {elapsed:.1f} s, "
        f"{len(site.posts)} POSTs for {len(log)} keys, "
        + ", ".join(f"{n} {o}" for o, n in df["outcome"].value_counts().items())
        + f"; w07 {outcome['w07']}"
    )


def test_a_first_run_reads_no_ledger(ocnb_home, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks that are not reruns never read the batch's ledger (in-process workers, to count calls)."""
    import ocnb.batch.dask
    import ocnb.batch.ledger

    reads: list[str] = []
    real = ocnb.batch.ledger.read
    lock = threading.Lock()

    def counting(directory: Any, task: str) -> Any:
        with lock:
            reads.append(task)
        return real(directory, task)

    monkeypatch.setattr(ocnb.batch.ledger, "read", counting)
    written: dict[Any, list[str]] = {}  # each ledger file's lines, as the last task to write it closes it
    close = ocnb.batch.dask.Ledger.close

    def keep(self: Any) -> None:
        if self.path.exists():
            written[self.path] = self.path.read_text().splitlines()
        close(self)

    monkeypatch.setattr(ocnb.batch.dask.Ledger, "close", keep)
    exe, _ = find_chromium()
    site = Site()
    with serving(site), dask_client(1, processes=False) as client:
        sid = _post_skill(site, ocnb_home)
        with Pool(size=1, home=ocnb_home, executable_path=exe) as pool:
            df = pool.replay(sid, [{"key": f"r{i}"} for i in range(4)], client=client, rows_per_task=2, progress=False)
    assert df["ok"].all() and not reads
    assert [len(lines) for lines in written.values()] == [8]  # commit + done, per row, in the one worker's file
    assert not list((ocnb_home / "ledger").iterdir())  # the batch's ledger is removed once its rows are back


CALLER = """
import sys
from ocnb.batch.pool import Pool
home, sid, exe, folder = sys.argv[1:5]
with Pool(size=1, home=home, executable_path=exe) as pool:
    pool.replay(sid, [{"key": f"p{i:02d}"} for i in range(10)], ledger=folder, progress=False)
"""


def test_a_local_pool_resumes_from_its_ledger_after_its_process_died(ocnb_home, tmp_path) -> None:
    """``Pool.replay(..., ledger=folder)`` in a process SIGKILLed in row 4's POST; the same call made
    again resumes: rows 0–3 from the ledger, row 4 unknown, rows 5–9 replayed; every key posted once."""
    exe, _ = find_chromium()
    rows = [{"key": f"p{i:02d}"} for i in range(10)]
    folder = tmp_path / "ledger"
    site = KillingSite()
    site.mode, site.victim = "post", "p04"
    repo = Path(__file__).resolve().parents[2]
    with serving(site):
        sid = _post_skill(site, ocnb_home)
        env = {**os.environ, "PYTHONPATH": str(repo)}
        caller = subprocess.Popen(
            [sys.executable, "-c", CALLER, str(ocnb_home), sid, exe, str(folder)], cwd=repo, env=env
        )
        site.workers = {"caller": caller.pid}
        assert caller.wait(timeout=120) == -signal.SIGKILL
        first = Counter(key for key, _ in site.posts)
        assert sorted(first) == [f"p{i:02d}" for i in range(5)], first  # died in row 4's POST
        t0 = time.perf_counter()
        with Pool(size=1, home=ocnb_home, executable_path=exe) as pool:
            df = pool.replay(sid, rows, ledger=folder, progress=False)
        elapsed = time.perf_counter() - t0
    log = Counter(key for key, _ in site.posts)
    table = df[["row", "outcome", "failure_code", "elapsed_ms"]].to_string()
    assert max(log.values()) == 1 and set(log) == {r["key"] for r in rows}, (log, table)
    assert df.loc[df["row"] == 4, "outcome"].item() == "unknown", table
    assert df.loc[df["row"] == 4, "failure_code"].item() == UNKNOWN_OUTCOME, table
    assert (df.loc[df["row"] != 4, "outcome"] == "done").all(), table
    assert not folder.exists()  # the batch ended: its ledger is gone
    print(f"\nlocal resume: 4 rows from the ledger, row 4 unknown, 5 replayed in {elapsed:.1f} s; {dict(log)}")
