"""Batch replay throughput, all in one run: raw Playwright's best arrangements beside ``Pool``.

- raw Playwright (the peer, written by hand): 1 process × 1 context; 1 process × 2 contexts of one
  browser (async API, two rows at a time); 2 processes, each its own browser.
- ``Pool`` at sizes 1, 2 and 4 with K = 1 and K = 2 browsers (``Pool(size, browsers=K)``).
- CPU per row (Chromium + Playwright driver + Python, every process) with and without
  ``block_resources`` on a form page that also loads four images and a web font.
- memory: the browser and driver processes' USS per browser and per extra context.
- Dask on a ``LocalCluster`` (``--dask-workers 0`` skips it): 2 worker processes, each worker's
  ``Pool(size=1)`` connected to its own ``playwright run-server``; and 1 worker whose ``Pool(size=2)``
  holds 2 contexts of one browser behind one run-server (the relay and the worker paid once for two
  contexts); 1 worker whose ``Pool(size=2)`` launches its own Chromium in the worker process (no
  ``connect``, no run-server: beside the previous one, what the run-server relay costs); and the
  overhead of one no-op task. ``--only-dask TEXT`` runs only the Dask arrangements whose name holds
  TEXT, e.g. ``--only-dask "own Chromium" --rows 20`` (no raw, pool or heavy-page runs).

Targets: Pool at size 2 ≥ 1.0× the best raw arrangement's rows/s; Dask ≥ 0.9× the pool.   python -m bench.bench_pool [--rows 120]

On a shared machine the absolute figures are upper bounds of nothing in particular: read the ratios,
which are measured in one run against the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import shutil
import struct
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import psutil

from ocnb.batch.pool import Pool
from ocnb.commands.demosite import serve, site_root
from ocnb.skills.store import SkillStore

from .common import raw_signup_row, save


def _tree() -> list[psutil.Process]:
    me = psutil.Process()
    return [me, *me.children(recursive=True)]


def _cpu_seconds() -> float:
    """CPU time of this process and all its children (browsers, drivers) so far."""
    total = 0.0
    for p in _tree():
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def _memory_mb() -> dict[str, float]:
    """USS (memory only these processes hold) of the browser processes and of the Node drivers."""
    out = {"browser": 0.0, "driver": 0.0}
    for p in _tree()[1:]:
        try:
            name = " ".join(p.cmdline()[:2])
            uss = p.memory_full_info().uss / 2**20
        except psutil.Error:
            continue
        if "node" in name or "cli.js" in name:
            out["driver"] += uss
        elif "chrom" in name or "headless" in name:
            out["browser"] += uss
    return out


def _png(width: int, height: int, seed: int) -> bytes:
    """An incompressible RGB PNG (noise), so the browser has real bytes to fetch and decode."""
    raw = b"".join(b"\0" + os.urandom(width * 3) for _ in range(height)) if seed else b""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


def _heavy_site(folder: Path) -> Path:
    """The demo site with form.html also showing four 400×300 images and a web font (a typical page)."""
    root = folder / "heavy"
    shutil.copytree(site_root(), root)
    extra = "".join(f'<img src="img{i}.png" width="200" alt="">' for i in range(4))
    font = next(Path("/usr/share/fonts").rglob("*.ttf"), None) if Path("/usr/share/fonts").is_dir() else None
    style = ""
    if font is not None:
        shutil.copy(font, root / "body.ttf")
        style = "<style>@font-face{font-family:B;src:url(body.ttf)}body{font-family:B}</style>"
    for i in range(4):
        (root / f"img{i}.png").write_bytes(_png(400, 300, i + 1))
    form = root / "form.html"
    html = form.read_text().replace("<head>", "<head>" + style, 1).replace("</form>", "</form>" + extra, 1)
    form.write_text(html)
    return root


def _skill(site: Any, home: str, name: str) -> str:
    from tests.skills.helpers import form_skill

    return form_skill(site, Path(home), name)


# -- raw Playwright, by hand ------------------------------------------------------------------------
async def _raw_async(url: str, names: list[str], contexts: int) -> tuple[float, float]:
    """One process, one browser, ``contexts`` contexts each replaying its share; (seconds, CPU s)."""
    from playwright.async_api import async_playwright

    from ocnb.browser import find_chromium, launch_args

    exe, _ = find_chromium()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=exe, args=launch_args())
        pages = [
            await (await browser.new_context(viewport={"width": 1280, "height": 800})).new_page()
            for _ in range(contexts)
        ]

        async def worker(page: Any, share: list[str]) -> None:
            for who in share:
                await raw_signup_row(page, url, who)

        await asyncio.gather(*(worker(p, ["warm0", "warm1"]) for p in pages))
        c0, t0 = _cpu_seconds(), time.perf_counter()
        await asyncio.gather(*(worker(p, names[i::contexts]) for i, p in enumerate(pages)))
        dt, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
        await browser.close()
    return dt, cpu


def _raw_process(url: str, names: list[str], contexts: int, start: Any, out: Any) -> None:
    async def run() -> tuple[float, float]:
        return await _raw_async(url, names, contexts)

    start.wait()  # launch together; each times its own rows after its own warm-up
    out.put(asyncio.run(run()))


def _raw(url: str, rows: list[dict[str, str]], procs: int, contexts: int) -> dict[str, float]:
    """``procs`` raw Playwright processes × ``contexts`` contexts sharing the rows: rows/s and CPU/row."""
    ctx = multiprocessing.get_context("spawn")
    names = [r["who"] for r in rows]
    with ctx.Manager() as manager:
        start, q = manager.Barrier(procs), manager.Queue()
        workers = [
            ctx.Process(target=_raw_process, args=(url, names[i::procs], contexts, start, q)) for i in range(procs)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(600)
        got = [q.get(timeout=5) for _ in workers]
    longest = max(dt for dt, _ in got)
    cpu = sum(c for _, c in got)
    return {"rows_per_s": len(rows) / longest, "cpu_ms_per_row": cpu / len(rows) * 1000}


# -- the pool ----------------------------------------------------------------------------------------
def _pool(sid: str, home: str, rows: list[dict[str, str]], size: int, k: int, **replay: Any) -> dict[str, float]:
    with Pool(size=size, browsers=k, home=home) as pool:
        for s in pool.sessions:
            s.start()
        pool.replay(sid, rows[: size * 2], progress=False, **replay)  # warm-up (and the routes)
        mem = _memory_mb()
        c0, t0 = _cpu_seconds(), time.perf_counter()
        df = pool.replay(sid, rows, progress=False, **replay)
        dt, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    assert df["ok"].all(), df[~df["ok"]]
    return {
        "rows_per_s": len(rows) / dt,
        "cpu_ms_per_row": cpu / len(rows) * 1000,
        "cores_busy": cpu / dt,
        "browser_mb": mem["browser"],
        "driver_mb": mem["driver"],
    }


def _dask(
    sid: str,
    home: str,
    rows: list[dict[str, str]],
    workers: int,
    size: int = 1,
    *,
    run_server: bool = True,
    rows_per_task: int | None = None,
) -> dict[str, float]:
    """The same rows as Dask tasks on a local cluster; each worker's ``Pool(size)`` behind its own
    ``playwright run-server`` (a task's rows, ``size`` of them by default, on the pool's contexts), or,
    with ``run_server=False``, launching its own Chromium in the worker process (no relay)."""
    try:
        import distributed
    except ImportError:
        print("dask: distributed is not installed; skipped")
        return {}
    from ocnb.batch.dask import replay_on_cluster
    from ocnb.browser import find_chromium
    from ocnb.browser.remote import PlaywrightServer

    skill = SkillStore(home).get(sid)
    servers = [PlaywrightServer() for _ in range(workers)] if run_server else []
    try:
        with (
            distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            c0 = time.perf_counter()
            noop = client.gather(client.map(_noop, range(200), pure=False))
            per_task_ms = (time.perf_counter() - c0) / len(noop) * 1000 * workers
            # a loopback server launches the browser the client names (--unsafe): this machine's Chromium
            kwargs: dict[str, Any] = {"home": home, "executable_path": find_chromium()[0]}
            if servers:
                kwargs["connect"] = [s.ws_url for s in servers]
            opts: dict[str, Any] = {
                "progress": False,
                "session_kwargs": kwargs,
                "pool_size": size,
                "rows_per_task": rows_per_task,
            }
            replay_on_cluster(client, skill, rows[: workers * size * 2], {}, **opts)
            c1, t0 = _cpu_seconds(), time.perf_counter()
            out = replay_on_cluster(client, skill, rows, {}, **opts)
            dt, cpu = time.perf_counter() - t0, _cpu_seconds() - c1
    finally:
        for s in servers:
            s.close()
    assert all(r["ok"] for r in out), [r for r in out if not r["ok"]]
    # CPU of every process of the run: the workers (children of their nannies), the run-servers and the
    # browsers they launched are all children of this process; so is the scheduler's thread (this one)
    return {
        "rows_per_s": len(rows) / dt,
        "task_overhead_ms": per_task_ms,
        "cpu_ms_per_row": cpu / len(rows) * 1000,
        "cores_busy": cpu / dt,
    }


def _noop(i: int) -> int:
    return i


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=120)  # 40 rows took ~4 s a run: too noisy
    parser.add_argument("--sizes", default="1,2,4")
    parser.add_argument("--browsers", default="1,2")
    parser.add_argument("--dask-workers", type=int, default=2, help="0 skips the Dask run")
    parser.add_argument(
        "--only-dask",
        default=None,
        metavar="TEXT",
        help="run only the Dask arrangements whose name holds TEXT (e.g. 'own Chromium'): no raw, pool or heavy-page "
        "runs; figures go to results/pool-dask-only.json",
    )
    ns = parser.parse_args(argv)
    home = tempfile.mkdtemp(prefix="ocnb-bench-pool-")
    os.environ["OCNB_HOME"] = home
    figures: dict[str, Any] = {"rows": ns.rows}
    rows = [{"who": f"user{i}"} for i in range(ns.rows)]
    table: list[tuple[str, dict[str, float]]] = []
    with serve() as site, serve(root=_heavy_site(Path(home))) as heavy:
        sid = _skill(site, home, "bench-signup")
        url = site.page("form.html")
        for name, procs, contexts in (
            ("raw 1×1", 1, 1),
            ("raw 1 process × 2 contexts", 1, 2),
            ("raw 2 processes", 2, 1),
        ):
            if not ns.only_dask:
                table.append((name, _raw(url, rows, procs, contexts)))
        for size in [] if ns.only_dask else [int(x) for x in ns.sizes.split(",")]:
            for k in sorted({min(int(x), size) for x in ns.browsers.split(",")}):
                table.append((f"Pool size {size}, K={k}", _pool(sid, home, rows, size, k)))
        if ns.dask_workers:
            for name, workers, size, relay in (
                (f"Dask {ns.dask_workers} workers × Pool(size=1), run-server each", ns.dask_workers, 1, True),
                ("Dask 1 worker × Pool(size=2), one run-server", 1, 2, True),
                ("Dask 1 worker × Pool(size=2), its own Chromium (no run-server)", 1, 2, False),
            ):
                if ns.only_dask and ns.only_dask not in name:
                    continue
                got = _dask(sid, home, rows, workers, size, run_server=relay)
                if got:
                    table.append((name, got))
        hid = _skill(heavy, home, "bench-heavy")
        runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
        # interleaved, the lower CPU of two: the machine's load drifts between runs
        for _ in range(0 if ns.only_dask else 2):
            for block in (False, True):
                runs[block].append(_pool(hid, home, rows, 2, 1, block_resources=block))
        for block, tries in runs.items():
            if not tries:
                continue
            table.append(
                (
                    f"heavy page, Pool size 2 K=1, block_resources={block}",
                    min(tries, key=lambda f: f["cpu_ms_per_row"]),
                )
            )
    for name, f in table:
        figures[name] = f
        extras = ", ".join(f"{k} {v:.1f}" for k, v in f.items() if k != "rows_per_s")
        print(f"{name:58s} {f['rows_per_s']:6.2f} rows/s   {extras}")
    raw = {n: f for n, f in table if n.startswith("raw")}
    if not raw:  # --only-dask: its figures alone
        save("pool-dask-only", figures)
        return figures
    best_name = max(raw, key=lambda n: raw[n]["rows_per_s"])
    best = raw[best_name]["rows_per_s"]
    print(f"best raw arrangement: {best_name} ({best:.2f} rows/s)")
    for name, f in table:
        if name.startswith(("Pool", "Dask")):
            figures[f"{name} vs best raw"] = f["rows_per_s"] / best
            print(f"{name:58s} {f['rows_per_s'] / best:5.2f}× best raw")
    pool2 = max((f["rows_per_s"] for n, f in table if n.startswith("Pool size 2")), default=0.0)
    heavy_cpu = [f["cpu_ms_per_row"] for n, f in table if n.startswith("heavy")]
    if len(heavy_cpu) == 2:
        figures["block_resources_cpu_ratio"] = heavy_cpu[1] / heavy_cpu[0]
        print(f"block_resources: {heavy_cpu[0]:.0f} → {heavy_cpu[1]:.0f} ms CPU per row on the heavy page")
    size1 = {n: f for n, f in table if n.startswith("Pool size 1")}
    size4 = {n: f for n, f in table if n == "Pool size 4, K=1"}
    if size1 and size4:
        one = next(iter(size1.values()))
        figures["browser_mb_per_extra_context"] = (size4["Pool size 4, K=1"]["browser_mb"] - one["browser_mb"]) / 3
        figures["browser_mb_first"] = one["browser_mb"]
        figures["driver_mb"] = one["driver_mb"]
        print(
            f"memory: first browser {one['browser_mb']:.0f} MB, each extra context "
            f"{figures['browser_mb_per_extra_context']:.0f} MB (USS), driver {one['driver_mb']:.0f} MB"
        )
    print(f"target: Pool size 2 ≥ 1.0× best raw → {pool2 / best:.2f}×")
    if pool2:
        pool2_cpu = min(f["cpu_ms_per_row"] for n, f in table if n.startswith("Pool size 2"))
        for name, dask in ((n, f) for n, f in table if n.startswith("Dask")):
            ratio = dask["rows_per_s"] / pool2
            figures[f"{name} vs pool2"] = ratio
            if name.startswith("Dask 1 worker"):
                figures["dask_pool_in_worker_vs_pool2"] = ratio
            else:
                figures["dask_vs_pool2"] = ratio
            print(
                f"target: Dask ≥ 0.9× the pool (size 2): {name} → {ratio:.2f}× "
                f"(CPU per row: Dask {dask['cpu_ms_per_row']:.0f} ms, pool {pool2_cpu:.0f} ms)"
            )
    save("pool", figures)
    return figures


if __name__ == "__main__":
    main()
