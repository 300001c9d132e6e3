"""Steady memory: one session, many calls, Python and browser memory at intervals.

A notebook kernel lives for days. One session repeats navigate / read_page / form_input / interact
on the demo site's form (a quarter of the calls each) for ``--calls`` calls (20,000 by default) and
records, every ``--every`` calls: the Python process's resident memory, the browser's (the sum over
the processes under Playwright's driver), the objects Python tracks, and the mean time per call over
the interval. Target: Python grows ≤ 10 MB between call 5,000 and the last call, and the time per
call stays flat (last interval ÷ the interval ending at 5,000 ≤ 1.3).

    python -m bench.bench_memory [--calls 20000] [--every 1000]

Each row also counts the objects Playwright's own client holds for the driver, by type: that is where
the growth was, one ``Request`` and ``Response`` per navigation, until ocnb bounded them at
``REQUESTS_KEPT`` (docs/memory.md, "What Playwright keeps"). Writes ``bench/results/NAME.json`` (``--name``,
``memory`` by default) after every interval, ``partial`` until the last call, so a run stopped early
keeps its figures; ``--types`` also prints which object types grew the most.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
from collections import Counter
from typing import Any

import psutil

import ocnb
from ocnb.commands.demosite import serve

from .common import save

MB = 1024 * 1024


def _browser_rss(me: psutil.Process) -> float:
    """Resident memory of every process under this one (the driver and Chromium), in MB."""
    total = 0
    for child in me.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            continue
    return total / MB


def _playwright_objects(s: ocnb.Session) -> dict[str, int]:
    """The objects Playwright's Python client holds for the driver (its connection's ``_objects``), by type.

    Private to Playwright, read here only to say who holds the memory: the client keeps one object per
    remote object until the driver disposes it (Request and Response: past 10,000 of each, or with the
    context).
    """
    state = s.state
    conn = getattr(getattr(getattr(state, "context", None), "_impl_obj", None), "_connection", None)
    objects = getattr(conn, "_objects", {})
    return dict(Counter(type(o).__name__ for o in list(objects.values())).most_common(6))


def _types() -> Counter[str]:
    return Counter(type(o).__name__ for o in gc.get_objects())


def figures_of(rows: list[dict[str, Any]], baseline: int, calls: int) -> dict[str, Any]:
    """The growth from the interval ending at ``baseline`` (else the first) to the last one, per call too;
    ``partial`` while the run has not reached ``calls``."""
    at = {r["calls"]: r for r in rows}
    base, last = at.get(baseline, rows[0]), rows[-1]
    span = max(last["calls"] - base["calls"], 1)
    figures: dict[str, Any] = {
        "calls": calls,
        "partial": last["calls"] < calls,
        "intervals": rows,
        "from_call": base["calls"],
        "to_call": last["calls"],
        "python_growth_mb": round(last["python_mb"] - base["python_mb"], 1),
        "python_kb_per_call": round((last["python_mb"] - base["python_mb"]) * 1024 / span, 2),
        "browser_growth_mb": round(last["browser_mb"] - base["browser_mb"], 1),
        "objects_growth": last["objects"] - base["objects"],
        "objects_per_call": round((last["objects"] - base["objects"]) / span, 2),
        "time_ratio": round(last["ms_per_call"] / base["ms_per_call"], 2),
    }
    print(
        f"from call {base['calls']} to {last['calls']}: Python {figures['python_growth_mb']:+.1f} MB "
        f"({figures['python_kb_per_call']:+.2f} KB a call; target ≤ 10 MB to call {calls}), browser "
        f"{figures['browser_growth_mb']:+.1f} MB, {figures['objects_growth']:+d} objects, time per call "
        f"×{figures['time_ratio']} (target ≤ 1.3)",
        flush=True,
    )
    return figures


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--baseline", type=int, default=5000, help="the call the growth is measured from")
    parser.add_argument("--types", action="store_true", help="print the object types that grew most")
    parser.add_argument("--name", default="memory", help="the results file's name (bench/results/NAME.json)")
    opts = parser.parse_args(argv)
    os.environ.setdefault("OCNB_HOME", tempfile.mkdtemp(prefix="ocnb-bench-"))
    me = psutil.Process()
    rows: list[dict[str, Any]] = []
    types_at: dict[int, Counter[str]] = {}
    with serve() as site, ocnb.Session(headless=True) as s:
        url = site.page("form.html")
        s.start()
        steps = [
            lambda: s.navigate(url=url),
            lambda: s.read_page(),
            lambda i: s.form_input(query="Full name", value=f"Ada {i}"),
            lambda i: s.interact(action="fill", query="Email", value=f"ada{i}@example.com"),
        ]
        t_interval = time.perf_counter()
        failures = 0
        for i in range(1, opts.calls + 1):
            step = steps[(i - 1) % 4]  # navigate first: the form is there for the calls after it
            result = step(i) if step.__code__.co_argcount else step()
            failures += not result.ok
            if i % opts.every == 0:
                now = time.perf_counter()
                gc.collect()
                row = {
                    "calls": i,
                    "python_mb": round(me.memory_info().rss / MB, 1),
                    "browser_mb": round(_browser_rss(me), 1),
                    "objects": len(gc.get_objects()),
                    "ms_per_call": round((now - t_interval) * 1000 / opts.every, 2),
                    "failures": failures,
                    "playwright_objects": _playwright_objects(s),
                }
                rows.append(row)
                print(row, flush=True)
                save(opts.name, figures_of(rows, opts.baseline, opts.calls))  # a run stopped early keeps its figures
                if opts.types and i in (opts.baseline, opts.calls):
                    types_at[i] = _types()
                t_interval = time.perf_counter()
    figures = figures_of(rows, opts.baseline, opts.calls)
    if len(types_at) == 2:
        grew = types_at[opts.calls] - types_at[opts.baseline]
        print("grew most:", grew.most_common(15))
        figures[f"grew_most_{opts.baseline}_to_{opts.calls}"] = str(grew.most_common(15))
    save(opts.name, figures)
    return figures


if __name__ == "__main__":
    main()
