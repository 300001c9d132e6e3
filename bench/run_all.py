"""Run every benchmark and write one report: ``bench/results/latest.json`` and ``latest.md``.

Each benchmark runs in its own process (``python -m bench.<name>``) and saves its figures to
``bench/results/<name>.json``; this script then puts each figure beside its target and the peer
figure measured in the same run (raw Playwright, Playwright MCP).

    python -m bench.run_all [--only call_overhead,pool] [--skip read_page]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import RESULTS, machine

ROOT = Path(__file__).resolve().parents[1]

#: Benchmarks in the order they run (module under bench/, results name, timeout in s).
BENCHMARKS: list[tuple[str, str, int]] = [
    ("bench_call_overhead", "call_overhead", 600),
    ("bench_read_page", "read_page", 1800),
    ("bench_skill_replay", "skill_replay", 1800),
    ("bench_discovery", "discovery", 900),
    ("bench_mcp", "mcp", 1200),
    ("bench_trace_df", "trace_df", 900),
    ("bench_pool", "pool", 900),
    ("bench_secret_origins", "secret_origins", 900),
    ("bench_results", "results_tokens", 600),
]

Row = tuple[str, str, str, str, Callable[[float], bool], str | None]
#: (results name, figure label, dotted key, target text, check, dotted key of the peer figure).
TARGETS: list[Row] = [
    *(
        (
            "results_tokens",
            f"{kind.replace('_', ' ')} result tokens ÷ Playwright MCP's (median)",
            f"summary.ocnb_ratio.{kind}",
            "≤ 0.6",
            (lambda v: v <= 0.6),
            None,
        )
        for kind in ("interact_click", "form_input", "navigate")
    ),
    (
        "call_overhead",
        "navigate: ocnb ÷ raw Playwright",
        "navigate_ratio",
        "≤ 1.3×",
        lambda v: v <= 1.3,
        "raw_navigate_ms",
    ),
    ("call_overhead", "javascript_tool: ocnb ÷ raw Playwright", "js_ratio", "≤ 1.3×", lambda v: v <= 1.3, "raw_js_ms"),
    (
        "read_page",
        "read_page tokens ÷ Playwright MCP snapshot",
        "total.token_ratio",
        "≤ 0.6",
        lambda v: v <= 0.6,
        "total.playwright_mcp_tokens",
    ),
    ("read_page", "interactive coverage", "total.interactive_coverage", "≥ 0.99", lambda v: v >= 0.99, None),
    ("read_page", "text coverage", "total.text_coverage", "≥ 0.95", lambda v: v >= 0.95, None),
    (
        "read_page",
        "real-pages-2: read_page tokens ÷ Playwright MCP",
        "corpora.real-pages-2.total.token_ratio",
        "≤ 0.5",
        lambda v: v <= 0.5,
        "corpora.real-pages-2.total.playwright_mcp_tokens",
    ),
    (
        "read_page",
        "real-pages-2: article recall",
        "corpora.real-pages-2.total.article_recall",
        "≥ 0.98",
        lambda v: v >= 0.98,
        "corpora.real-pages-2.total.playwright_mcp_article_recall",
    ),
    (
        "read_page",
        "real-pages-2: lowest page text coverage",
        "corpora.real-pages-2.total.min_page_text_coverage",
        "≥ 0.95",
        lambda v: v >= 0.95,
        None,
    ),
    (
        "read_page",
        "read_page median time ÷ Playwright MCP",
        "total.time_ratio",
        "≤ 1.2",
        lambda v: v <= 1.2,
        "total.playwright_mcp_median_ms",
    ),
    ("skill_replay", "replay ÷ raw Playwright script", "replay_vs_raw", "≤ 1.3×", lambda v: v <= 1.3, "raw_median_ms"),
    (
        "skill_replay",
        "replay ÷ raw, median of five runs' paired means",
        "replay_vs_raw_paired_mean_median_of_runs",
        "≤ 1.15×",
        lambda v: v <= 1.15,
        None,
    ),
    (
        "skill_replay",
        "ocnb's CPU per replay over the same Playwright calls (ms)",
        "replay_cpu_gap_ms",
        "≤ 4",
        lambda v: v <= 4,
        None,
    ),
    ("skill_replay", "page-reading tokens during replay", "replay_tokens", "0", lambda v: v == 0, "agent_tokens"),
    ("discovery", "top-1 accuracy (MetaTool dev)", "top1", "≥ 0.60", lambda v: v >= 0.60, None),
    ("discovery", "recall@5", "recall5", "≥ 0.85", lambda v: v >= 0.85, None),
    ("discovery", "index build, empty embedding cache (s)", "build_cold_s", "≤ 3", lambda v: v <= 3, None),
    ("discovery", "index build from the embedding cache (s)", "build_s", "(reported)", lambda v: True, None),
    ("discovery", "warm discover() median (ms)", "warm_ms", "≤ 5", lambda v: v <= 5, None),
    (
        "discovery",
        "per-turn context, max (tokens)",
        "context_max_tokens",
        "≤ 1450",
        lambda v: v <= 1450,
        "static_dump_tokens",
    ),
    ("mcp", "tools/call added over HTTP (ms, median)", "latency_ms.raw_http.added_ms", "≤ 5", lambda v: v <= 5, None),
    ("mcp", "tools/call added over stdio (ms, median)", "latency_ms.raw_stdio.added_ms", "≤ 5", lambda v: v <= 5, None),
    (
        "mcp",
        "tools/call added, SDK Python client over HTTP (ms)",
        "latency_ms.sdk_http_2026.added_ms",
        "(reported)",
        lambda v: True,
        None,
    ),
    (
        "mcp",
        "tools/list tokens ÷ Playwright MCP",
        "tools_list.ratio",
        "≤ 1.0",
        lambda v: v <= 1.0,
        "tools_list.playwright_mcp_tokens",
    ),
    ("capmap", "capability map bytes", "bytes", "≤ 4096 (hard 6144)", lambda v: v <= 6144, None),
    ("capmap", "capability map tokens", "tokens", "≤ 1500", lambda v: v <= 1500, None),
    ("trace_df", "trace_df over 1M events (s)", "seconds", "≤ 5", lambda v: v <= 5, None),
    ("trace_df", "trace_df peak memory (MiB)", "peak_mib", "≤ 2048", lambda v: v <= 2048, None),
    ("trace_df", "journal append median (µs)", "journal_append_median_us", "≤ 1000", lambda v: v <= 1000, None),
    (
        "pool",
        "pool.replay speedup at size 2 (peer: 2 raw Playwright processes)",
        "size2_speedup",
        "≥ 1.6×",
        lambda v: v >= 1.6,
        "raw2_speedup",
    ),
    ("pool", "pool.replay rows/s at size 1", "size1_rows_per_s", "(reported)", lambda v: True, "raw1_rows_per_s"),
    ("pool", "pool.replay speedup at size 4", "size4_speedup", "(reported)", lambda v: True, None),
    ("pool", "Dask (2 worker processes) speedup over pool size 1", "dask2_speedup", "(reported)", lambda v: True, None),
    ("pool", "CPU per row, all processes (ms)", "size1_cpu_ms_per_row", "(reported)", lambda v: True, None),
    (
        "secret_origins",
        "a click with a secret bound to origins ÷ none",
        "click_ratio",
        "≤ 1.10×",
        lambda v: v <= 1.10,
        "click_free_ms",
    ),
]


def _get(d: dict[str, Any], dotted: str | None) -> Any:
    if dotted is None:
        return None
    cur: Any = d
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _capmap() -> dict[str, Any]:
    from ocnb.tokens import count_text

    text = (ROOT / "docs" / "agent" / "capability-map.md").read_text(encoding="utf-8")
    return {"bytes": len(text.encode()), "tokens": count_text(text)}


def run(only: set[str] | None = None, skip: set[str] | None = None) -> dict[str, Any]:
    statuses: dict[str, str] = {}
    for module, name, timeout in BENCHMARKS:
        if (only and name not in only) or (skip and name in skip):
            continue
        if not (ROOT / "bench" / f"{module}.py").is_file():
            statuses[name] = "missing"
            continue
        print(f"== {name} ==", flush=True)
        t0 = time.time()
        try:
            proc = subprocess.run([sys.executable, "-m", f"bench.{module}"], cwd=ROOT, timeout=timeout)
            statuses[name] = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            statuses[name] = f"timeout after {timeout} s"
        print(f"   {name}: {statuses[name]} in {time.time() - t0:.0f} s", flush=True)
    results: dict[str, Any] = {"capmap": _capmap()}
    for _, name, _ in BENCHMARKS:
        path = RESULTS / f"{name}.json"
        if path.is_file():
            results[name] = json.loads(path.read_text())
    rows = []
    for bench, label, key, target, check, peer in TARGETS:
        value = _get(results.get(bench, {}), key)
        rows.append(
            {
                "benchmark": bench,
                "figure": label,
                "value": value,
                "target": target,
                "met": None if value is None else bool(check(float(value))),
                "peer": _get(results.get(bench, {}), peer),
                "measured": _get(results.get(bench, {}), "date"),
            }
        )
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "statuses": statuses,
        "rows": rows,
        "results": results,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(report, indent=2, sort_keys=True, default=str) + "\n")
    (RESULTS / "latest.md").write_text(markdown(report))
    print(markdown(report))
    return report


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# ocnb benchmark report",
        "",
        f"Run {report['date']} on {m['cpus']} CPUs, Python {m['python']} ({m['platform']}). "
        "Each figure comes from `make bench`; peers were measured in the same run.",
        "",
        "| benchmark | figure | value | target | met | peer figure | measured |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        lines.append(
            f"| {r['benchmark']} | {r['figure']} | {_fmt(r['value'])} | {r['target']} | {met} | {_fmt(r['peer'])} | {r['measured'] or '—'} |"
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated result names to run")
    parser.add_argument("--skip", help="comma-separated result names to skip")
    parser.add_argument("--report-only", action="store_true", help="only rebuild the report from saved results")
    ns = parser.parse_args(argv)
    only = set(ns.only.split(",")) if ns.only else None
    skip = set(ns.skip.split(",")) if ns.skip else None
    if ns.report_only:
        only = {"__none__"}
    run(only, skip)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
