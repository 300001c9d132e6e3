"""Throughput of ``Pool.replay`` over 40 rows at pool sizes 1, 2 and 4 (rows/s, speedup over size 1),
and of the same replay on a 2-worker Dask ``LocalCluster`` (separate processes, one session each).
The peer: the same four steps as a raw Playwright script, one process alone and N processes side by
side (each its own browser), so the report shows the speedup the machine itself allows.

Target: ≥ 1.6× at size 2 on a 2-core machine.   python -m bench.bench_pool [--rows 40]

Also prints the CPU seconds each row costs across every process (Chromium, the Playwright driver,
Python) and the cores one session keeps busy: on N cores, size 2 cannot beat N ÷ that figure.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from typing import Any

import psutil

from ocnb.demosite import serve
from ocnb.pool import Pool
from ocnb.skills.store import SkillStore

from .common import save


def _cpu_seconds() -> float:
    """CPU time of this process and all its children (browsers, drivers) so far."""
    total = 0.0
    me = psutil.Process()
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def _skill(site, home) -> str:
    from tests.skills.helpers import form_skill

    return form_skill(site, home, "bench-signup")


def _raw_rows(url: str, names: list[str], start: Any, out: Any) -> None:
    """Raw Playwright (sync API, own browser): the skill's four steps once per name; puts seconds."""
    from playwright.sync_api import sync_playwright

    from ocnb.browser import find_chromium, launch_args

    exe, _ = find_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=launch_args())
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()

        def row(who: str) -> None:
            page.goto(url)
            page.get_by_role("textbox", name="Full name", exact=True).fill(who)
            page.get_by_role("textbox", name="Email", exact=True).fill(f"{who}@example.com")
            page.get_by_role("button", name="Sign up", exact=True).click()

        for who in names[:2]:  # warm-up
            row(who)
        start.wait()  # every process has its browser warm: start together
        t0 = time.perf_counter()
        for who in names:
            row(who)
        out.put(time.perf_counter() - t0)
        browser.close()


def _raw(url: str, rows: list[dict[str, str]], procs: int) -> float:
    """Rows per second of ``procs`` raw Playwright processes sharing the rows."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        start, q = manager.Barrier(procs), manager.Queue()
        names = [r["who"] for r in rows]
        workers = [ctx.Process(target=_raw_rows, args=(url, names[i::procs], start, q)) for i in range(procs)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(600)
        longest = max(q.get(timeout=5) for _ in workers)
    return len(rows) / longest


def _dask(sid: str, rows: list[dict[str, str]], workers: int) -> dict[str, float]:
    """The same rows as Dask tasks on a local cluster of ``workers`` processes."""
    try:
        import distributed
    except ImportError:
        print("dask: distributed is not installed; skipped")
        return {}
    with (
        distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
        Pool(size=1) as pool,
    ):
        pool.replay(sid, rows[: workers * 2], client=client, progress=False)  # each worker starts its browser
        t0 = time.perf_counter()
        df = pool.replay(sid, rows, client=client, progress=False)
        dt = time.perf_counter() - t0
    assert df["ok"].all(), df[~df["ok"]]
    print(f"dask, {workers} worker processes: {len(rows)} rows in {dt:.2f} s → {len(rows) / dt:.2f} rows/s")
    return {f"dask{workers}_rows_per_s": len(rows) / dt}


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--sizes", default="1,2,4")
    parser.add_argument("--dask-workers", type=int, default=2, help="0 skips the Dask run")
    ns = parser.parse_args(argv)
    home = tempfile.mkdtemp(prefix="ocnb-bench-pool-")
    os.environ["OCNB_HOME"] = home
    figures: dict[str, float] = {}
    rows = [{"who": f"user{i}"} for i in range(ns.rows)]
    with serve() as site:
        sid = _skill(site, home)
        assert SkillStore(home).get(sid)
        for size in [int(x) for x in ns.sizes.split(",")]:
            with Pool(size=size, home=home) as pool:
                for s in pool.sessions:
                    s.start()
                pool.replay(sid, rows[: size * 2], progress=False)  # warm-up
                browser = pool.sessions[0].browser_state().executable
                c0, t0 = _cpu_seconds(), time.perf_counter()
                df = pool.replay(sid, rows, progress=False)
                dt = time.perf_counter() - t0
                cpu = _cpu_seconds() - c0
            assert df["ok"].all(), df[~df["ok"]]
            figures[f"size{size}_rows_per_s"] = ns.rows / dt
            figures[f"size{size}_cpu_ms_per_row"] = cpu / ns.rows * 1000
            print(
                f"pool size {size}: {ns.rows} rows in {dt:.2f} s → {ns.rows / dt:.2f} rows/s; "
                f"{cpu / ns.rows * 1000:.0f} ms CPU per row, {cpu / dt:.2f} cores busy ({browser})"
            )
        if ns.dask_workers:
            figures.update(_dask(sid, rows, ns.dask_workers))
        url = site.page("form.html")
        raw1 = _raw(url, rows, 1)
        raw2 = _raw(url, rows, 2)
        figures.update({"raw1_rows_per_s": raw1, "raw2_rows_per_s": raw2, "raw2_speedup": raw2 / raw1})
        print(
            f"raw Playwright: 1 process {raw1:.2f} rows/s, 2 processes {raw2:.2f} rows/s "
            f"→ {raw2 / raw1:.2f}× (what this machine allows two browsers)"
        )
    base = figures["size1_rows_per_s"]
    for key in list(figures):
        if key.endswith("_rows_per_s") and key != "size1_rows_per_s" and not key.startswith("raw"):
            figures[key.replace("_rows_per_s", "_speedup")] = figures[key] / base
            print(f"{key.split('_')[0]} speedup over size 1: {figures[key] / base:.2f}×")
    print("target: ≥ 1.6× at size 2")
    save("pool", {"rows": ns.rows, **figures})
    return figures


if __name__ == "__main__":
    main()
