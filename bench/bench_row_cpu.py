"""Where one row's CPU goes: ``Pool(size=2)`` against raw Playwright (1 process × 2 contexts), per process kind.

Each arrangement runs in a process of its own (spawned, so its process tree is only its own: Python,
the Node driver and the Chromium it launched), alternately and ``--repeats`` times, on the demo site's
four-step sign-up form. For every run: CPU ms per row (user + sys) of each process kind — Python,
driver, browser main, renderer, GPU, utility (network service) — and what crossed the Playwright
protocol per row (messages and bytes each way, the commonest methods and events).
``--profile FILE`` also cProfiles the pool's browser thread (the Python side of every session) into FILE.

    python -m bench.bench_row_cpu [--rows 60] [--repeats 3] [--profile /tmp/pool.prof]

On a shared machine read the per-kind differences between the two arrangements of the same repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import multiprocessing
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

import psutil

# no ocnb import at module level: a variant's child imports ocnb from its own folder (--variants)

KINDS = ("python", "driver", "browser", "renderer", "gpu", "utility", "other")


def _kind(p: psutil.Process, me: int) -> str:
    if p.pid == me:
        return "python"
    try:
        cmd = " ".join(p.cmdline())
    except psutil.Error:
        return "other"
    if "node" in p.name() or "cli.js" in cmd or "run-driver" in cmd:
        return "driver"
    for flag, kind in (("--type=renderer", "renderer"), ("--type=gpu", "gpu"), ("--type=utility", "utility")):
        if flag in cmd:
            return kind
    if "--type=" not in cmd and ("chrom" in cmd or "headless" in cmd):
        return "browser"
    return "other"


def _cpu_by_kind() -> dict[int, tuple[str, float]]:
    me = psutil.Process()
    out: dict[int, tuple[str, float]] = {}
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            out[p.pid] = (_kind(p, me.pid), t.user + t.system)
        except psutil.Error:
            pass
    return out


def _delta(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    got = dict.fromkeys(KINDS, 0.0)
    for pid, (kind, cpu) in after.items():
        got[kind] += cpu - before.get(pid, (kind, 0.0))[1]
    return got


class _Wire:
    """Counts what crosses the Playwright pipe (Python ↔ driver): messages, bytes, methods."""

    def __init__(self) -> None:
        self.sent = self.received = self.sent_bytes = self.received_bytes = 0
        self.methods: collections.Counter[str] = collections.Counter()

    def install(self) -> None:
        from playwright._impl import transport

        cls = transport.PipeTransport
        serialize, deserialize = cls.serialize_message, cls.deserialize_message
        wire = self

        def ser(self_: Any, message: dict[str, Any]) -> bytes:
            data: bytes = serialize(self_, message)
            wire.sent += 1
            wire.sent_bytes += len(data)
            wire.methods[f"> {message.get('method')}"] += 1
            return data

        def de(self_: Any, data: bytes) -> Any:
            obj = deserialize(self_, data)
            wire.received += 1
            wire.received_bytes += len(data)
            if obj.get("method"):
                what = obj["method"]
                if what == "__create__":
                    what += " " + str(obj.get("params", {}).get("type"))
                wire.methods[f"< {what}"] += 1
            return obj

        cls.serialize_message = ser  # type: ignore[method-assign]
        cls.deserialize_message = de  # type: ignore[method-assign]

    def snapshot(self) -> tuple[int, int, int, int, collections.Counter[str]]:
        return self.sent, self.received, self.sent_bytes, self.received_bytes, collections.Counter(self.methods)


def _wire_delta(a: Any, b: Any, rows: int) -> dict[str, Any]:
    methods = {k: round(v / rows, 2) for k, v in (b[4] - a[4]).most_common(25)}
    return {
        "sent_per_row": (b[0] - a[0]) / rows,
        "received_per_row": (b[1] - a[1]) / rows,
        "sent_kb_per_row": (b[2] - a[2]) / rows / 1024,
        "received_kb_per_row": (b[3] - a[3]) / rows / 1024,
        "methods_per_row": methods,
    }


def _raw_child(url: str, rows: int, out: Any) -> None:
    from playwright.async_api import async_playwright

    from bench.common import raw_signup_row
    from ocnb.browser import find_chromium, launch_args

    wire = _Wire()
    wire.install()

    async def run() -> dict[str, Any]:
        exe, _ = find_chromium()
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=exe, args=launch_args())
            pages = [
                await (await browser.new_context(viewport={"width": 1280, "height": 800})).new_page() for _ in range(2)
            ]

            async def worker(page: Any, names: list[str]) -> None:
                for who in names:
                    await raw_signup_row(page, url, who)

            names = [f"user{i}" for i in range(rows)]
            await asyncio.gather(*(worker(p, ["warm0", "warm1", "warm2"]) for p in pages))
            _mark("start")
            c0, w0 = _cpu_by_kind(), wire.snapshot()
            await asyncio.gather(*(worker(p, names[i::2]) for i, p in enumerate(pages)))
            c1, w1 = _cpu_by_kind(), wire.snapshot()
            _mark("end")
            await browser.close()
        return {"cpu": _delta(c0, c1), "wire": _wire_delta(w0, w1, rows)}

    out.put(asyncio.run(run()))


def _threads() -> dict[str, float]:
    """CPU seconds of this process's threads, by name (numbers stripped: ``ocnb-pool_0`` → ``ocnb-pool_``)."""
    import threading

    names = {t.native_id: t.name.rstrip("0123456789") for t in threading.enumerate()}
    out: dict[str, float] = collections.defaultdict(float)
    for t in psutil.Process().threads():
        out[names.get(t.id, "other")] += t.user_time + t.system_time
    return out


def _pool_child(sid: str, home: str, rows: int, profile: str | None, root: str | None, out: Any) -> None:
    import sys

    if root:  # another copy of ocnb (a baseline) for an A/B in one run
        sys.path.insert(0, root)
    from ocnb.batch.pool import Pool

    where = str(sys.modules["ocnb"].__file__)
    assert not root or where.startswith(root), where

    wire = _Wire()
    wire.install()
    data = [{"who": f"user{i}"} for i in range(rows)]
    with Pool(size=2, home=home) as pool:
        for s in pool.sessions:
            s.start()
        pool.replay(sid, [{"who": f"warm{i}"} for i in range(6)], progress=False)
        prof = None
        if profile:
            import cProfile

            prof = cProfile.Profile()

            async def switch(on: bool) -> None:
                assert prof is not None
                prof.enable() if on else prof.disable()

            pool.runtime.run(switch(True))
        _mark("start")
        c0, w0, t0 = _cpu_by_kind(), wire.snapshot(), _threads()
        df = pool.replay(sid, data, progress=False)
        c1, w1, t1 = _cpu_by_kind(), wire.snapshot(), _threads()
        _mark("end")
        if prof is not None:
            pool.runtime.run(switch(False))
            assert profile is not None
            prof.dump_stats(profile)
    assert df["ok"].all(), df[~df["ok"]]
    threads = {k: round((v - t0.get(k, 0.0)) / rows * 1000, 2) for k, v in t1.items() if v - t0.get(k, 0.0) > 0}
    out.put({"cpu": _delta(c0, c1), "wire": _wire_delta(w0, w1, rows), "threads_ms_per_row": threads})


def _mark(what: str) -> None:
    """A line in the driver's protocol log (``--cdp-log``) around the measured rows."""
    if os.environ.get("DEBUG") == "pw:protocol":
        os.write(2, f"\nOCNB-BENCH-MARK {what}\n".encode())


def _child(log: str | None, target: Any, *args: Any) -> None:
    if log:  # the driver (our child) logs every CDP message to its stderr: this process's, sent to the file
        os.environ["DEBUG"] = "pw:protocol"
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        os.dup2(fd, 2)
    target(*args)


def _cdp_counts(log: str, rows: int) -> dict[str, Any]:
    """CDP messages per row between the marks of a ``--cdp-log`` file: sent, received, the commonest methods."""
    import re

    text = Path(log).read_text(errors="replace")
    part = text.split("OCNB-BENCH-MARK start", 1)[-1].split("OCNB-BENCH-MARK end", 1)[0]
    sends = re.findall(r"SEND ► (\{.*)", part)
    recvs = re.findall(r"◀ RECV (\{.*)", part)
    methods: collections.Counter[str] = collections.Counter()
    for line in sends:
        m = re.search(r'"method":"([^"]+)"', line)
        methods[f"> {m.group(1) if m else '?'}"] += 1
    for line in recvs:
        m = re.search(r'"method":"([^"]+)"', line)
        if m:
            methods[f"< {m.group(1)}"] += 1
    return {
        "cdp_sent_per_row": len(sends) / rows,
        "cdp_received_per_row": len(recvs) / rows,
        "cdp_methods_per_row": {k: round(v / rows, 2) for k, v in methods.most_common(30)},
    }


def _run(target: Any, *args: Any, log: str | None = None) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(log, target, *args, q))
    p.start()
    got: dict[str, Any] = q.get(timeout=900)
    p.join(60)
    return got


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", default=None, help="cProfile the pool's browser thread into this file")
    parser.add_argument(
        "--cdp-log",
        default=None,
        help="folder: log the driver's CDP traffic (DEBUG=pw:protocol) and count it per row (costs CPU: not for timing)",
    )
    parser.add_argument("--only", default=None, help="run only this arrangement (raw, pool or a variant's name)")
    parser.add_argument(
        "--variants",
        default="",
        help="NAME=DIR,…: also run the pool with the ocnb package found in DIR (e.g. a baseline checkout), alternately",
    )
    ns = parser.parse_args(argv)
    home = tempfile.mkdtemp(prefix="ocnb-bench-rowcpu-")
    os.environ["OCNB_HOME"] = home
    roots: dict[str, str | None] = {"pool": None}
    for item in filter(None, ns.variants.split(",")):
        name, _, folder = item.partition("=")
        roots[name] = str(Path(folder).resolve())
    order = ["raw", *roots]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in order}
    from ocnb.commands.demosite import serve
    from tests.skills.helpers import form_skill

    with serve() as site:
        sid = form_skill(site, Path(home), "bench-signup")
        url = site.page("form.html")
        for r in range(ns.repeats):
            for name in order[r % len(order) :] + order[: r % len(order)]:
                if ns.only and name != ns.only:
                    continue
                log = str(Path(ns.cdp_log) / f"{name}-{r}.log") if ns.cdp_log else None
                if name == "raw":
                    got = _run(_raw_child, url, ns.rows, log=log)
                else:
                    profile = f"{ns.profile}.{name}" if ns.profile and r == 0 else None
                    got = _run(_pool_child, sid, home, ns.rows, profile, roots[name], log=log)
                if log:
                    got["wire"].update(_cdp_counts(log, ns.rows))
                runs[name].append(got)
                cpu = {k: round(v / ns.rows * 1000, 1) for k, v in got["cpu"].items()}
                total = round(sum(cpu.values()), 1)
                print(f"repeat {r} {name:6s} total {total:6.1f} ms/row  {cpu}", flush=True)
                if "threads_ms_per_row" in got:
                    print(f"    python threads ms/row: {got['threads_ms_per_row']}", flush=True)
    summary: dict[str, Any] = {}
    for name, tries in runs.items():
        if not tries:
            continue
        per_kind = {k: statistics.median(t["cpu"][k] for t in tries) / ns.rows * 1000 for k in KINDS}
        summary[name] = {"cpu_ms_per_row_median": per_kind, "total": sum(per_kind.values()), "wire": tries[-1]["wire"]}
        print(f"\n{name}: median CPU ms/row by kind " + ", ".join(f"{k} {v:.1f}" for k, v in per_kind.items()))
        print(f"  total {sum(per_kind.values()):.1f}; wire per row: " + str(tries[-1]["wire"]))
    return summary


if __name__ == "__main__":
    main()
