"""Benchmark the audit trail's storage: trace_df over 1,000,000 events, and journal append cost.

Usage: ``python bench/bench_trace_df.py [--events N] [--appends N]``

1. Writes N synthetic trace events (default 1,000,000) with :class:`TraceWriter` to a temporary
   ``OCNB_HOME``, then builds ``trace_df`` in a fresh child process and reports its wall time and
   the child's peak RSS (``ru_maxrss``), next to the RSS of a child that only imports pandas.
   Targets (issue 4): ≤ 5 s and ≤ 2 GB. CPU time is printed too: on a shared machine it is the
   steadier figure.
2. Appends N journal entries (default 5,000) and reports the median and p95 cost of one
   ``Journal.append`` in µs (target: median ≤ 1 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ocnb.audit.journal import Journal  # noqa: E402
from ocnb.audit.secrets import SecretStore  # noqa: E402
from ocnb.audit.trace import TraceWriter  # noqa: E402

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import pandas
from ocnb.audit.telemetry import trace_df
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
df = trace_df({session!r}, home={home!r})
secs, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": secs, "cpu": cpu, "rows": len(df), "peak_kib": peak, "base_kib": base,
                  "frame_bytes": int(df.memory_usage(deep=False).sum())}}))
"""

KINDS = ["tool_call", "tool_result", "navigation", "console"]
TOOLS = ["navigate", "interact", "read_page", "form_input", None]


def write_events(home: Path, session: str, n: int) -> float:
    """Write ``n`` synthetic events; return seconds taken."""
    writer = TraceWriter(home, session, max_total_bytes=4 * 1024**3)
    t0 = time.perf_counter()
    for i in range(n):
        kind = KINDS[i % 4]
        intent = "submit the login form" if i % 10 == 0 else None
        body = {"url": f"http://127.0.0.1:8000/page/{i % 97}", "ref": f"ax_{i % 50}", "ms": i % 1000 / 7}
        writer.emit(kind, tool=TOOLS[i % 5], body=body, intent=intent)
    writer.close()
    return time.perf_counter() - t0


def bench_trace_df(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        session = "bench-session"
        write_s = write_events(home, session, n)
        size = sum(p.stat().st_size for p in (home / "traces" / session).glob("events-*.jsonl"))
        child = CHILD.format(root=str(ROOT), session=session, home=str(home))
        out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        res.update(write_s=write_s, disk_bytes=size)
        return res


def bench_journal(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        secrets = SecretStore({"PASSWORD": "hunter2-very-secret", "TOKEN": "tok_abcdef123456"})
        journal = Journal(tmp, session_id="bench", secrets=secrets)
        costs = []
        for i in range(n):
            entry = {
                "tool": "form_input",
                "args": {"target": f"ax_{i % 40}", "value": "hunter2-very-secret", "password": "x"},
                "ok": i % 13 != 0,
                "error_code": None if i % 13 else "ELEMENT_NOT_FOUND",
                "duration_ms": 12.5,
                "summary": "filled the field",
                "source": "api",
                "intent": "log in" if i % 2 else None,
            }
            t0 = time.perf_counter_ns()
            journal.append(entry)
            costs.append((time.perf_counter_ns() - t0) / 1000.0)
        journal.close()
        costs.sort()
        return {"median_us": statistics.median(costs), "p95_us": costs[int(len(costs) * 0.95)]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--appends", type=int, default=5_000)
    opts = parser.parse_args(argv)
    try:
        import msgspec

        reader = f"msgspec {msgspec.__version__}"
    except ImportError:
        reader = "json (install msgspec for the fast path)"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}, reader: {reader}")

    t = bench_trace_df(opts.events)
    peak_mib = t["peak_kib"] / 1024
    base_mib = t["base_kib"] / 1024
    print(f"trace_df: {t['rows']:,} events ({t['disk_bytes'] / 1e6:.0f} MB on disk, written in {t['write_s']:.1f} s)")
    print(
        f"  build time        {t['seconds']:.2f} s wall, {t['cpu']:.2f} s CPU (target ≤ 5 s: {t['seconds'] / 5:.2f} of budget)"
    )
    print(f"  peak RSS          {peak_mib:.0f} MiB (pandas imported: {base_mib:.0f} MiB; target ≤ 2048 MiB)")
    print(f"  frame (shallow)   {t['frame_bytes'] / 2**20:.0f} MiB")

    j = bench_journal(opts.appends)
    print(f"journal append: {opts.appends} calls, median {j['median_us']:.1f} µs, p95 {j['p95_us']:.1f} µs")
    print(f"  (target median ≤ 1000 µs: {j['median_us'] / 1000:.3f} of budget)")
    if load > (os.cpu_count() or 1):
        print(f"note: the machine was busy (load {load:.1f} on {os.cpu_count()} CPUs); wall times are inflated")
    from bench.common import save

    save(
        "trace_df",
        {
            "events": t["rows"],
            "seconds": round(t["seconds"], 3),
            "cpu_seconds": round(t["cpu"], 3),
            "peak_mib": round(peak_mib, 1),
            "journal_append_median_us": round(j["median_us"], 2),
            "journal_append_p95_us": round(j["p95_us"], 2),
            "load_average": round(load, 2),
        },
    )


if __name__ == "__main__":
    main()
