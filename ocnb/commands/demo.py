"""The demo behind ``make demo``: drive Chromium against the bundled demo site and write reports.

Writes ``reports/demo.md`` (what was done, step by step) and ``reports/demo.json``, then executes
the example notebooks headless and writes each as HTML under ``reports/``. The notebooks ship
inside the wheel (``ocnb/_notebooks``), so ``pip install ocnb && ocnb demo`` works as ``make demo``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..session import Session
from .demosite import serve

__all__ = ["main", "run_demo"]


def run_demo(out: Path) -> dict[str, Any]:
    """Run a short scripted tour of the tools against the demo site and write the reports."""
    out.mkdir(parents=True, exist_ok=True)
    steps: list[dict[str, Any]] = []
    with serve() as site, Session(headless=True) as s:
        plan: list[tuple[str, dict[str, Any]]] = [
            ("navigate", {"url": site.page("index.html")}),
            ("oc_connection_health", {}),
            ("navigate", {"url": site.page("form.html")}),
            ("tabs_create", {"url": site.page("search.html") + "?q=ocnb"}),
            ("wait_for", {"text": 'Results for "ocnb"', "timeout_ms": 5000}),
            ("page_screenshot", {}),
            ("tabs_context", {}),
            ("discover_capabilities", {"query": "fill in a sign-up form"}),
            ("navigate", {"url": "file:///etc/passwd"}),
        ]
        for tool, args in plan:
            t0 = time.perf_counter()
            r = s.call(tool, args)
            steps.append(
                {
                    "tool": tool,
                    "args": args,
                    "ok": r.ok,
                    "error_code": r.error.code if r.error else None,
                    "ms": round((time.perf_counter() - t0) * 1000, 1),
                    "data": r.data if r.ok or r.error is None else r.error.to_dict(),
                }
            )
    (out / "demo.json").write_text(json.dumps(steps, indent=2, default=str) + "\n")
    lines = ["# ocnb demo", "", f"Run at {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}.", ""]
    lines += ["| # | tool | ok | error | ms |", "|---|---|---|---|---|"]
    for i, st in enumerate(steps, 1):
        lines.append(f"| {i} | `{st['tool']}` | {st['ok']} | {st['error_code'] or ''} | {st['ms']} |")
    lines += ["", "The last step is refused on purpose: `file:` URLs are blocked by default.", ""]
    found = next((st["data"] for st in steps if st["tool"] == "discover_capabilities" and st["ok"]), None)
    retriever = found.get("retriever") if isinstance(found, dict) else None
    if retriever:
        lines += [f"Discovery ranked with {retriever}.", ""]
    (out / "demo.md").write_text("\n".join(lines))
    return {
        "steps": len(steps),
        "ok": sum(st["ok"] for st in steps),
        "report": str(out / "demo.md"),
        "retriever": retriever,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ocnb demo", description=__doc__)
    parser.add_argument("--out", default="reports", help="folder for the reports (default: reports)")
    parser.add_argument("--no-notebooks", action="store_true", help="skip executing the notebooks")
    parser.add_argument(
        "--notebook",
        action="append",
        metavar="NAME",
        help="execute only this notebook (repeatable; default: quickstart, skill_authoring, token_cost_report)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="notebooks executed at once, each in its own kernel (default: one per core, at most 3)",
    )
    ns = parser.parse_args(argv)
    if ns.jobs is not None and ns.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {ns.jobs}")
    out = Path(ns.out)
    os.environ.setdefault("OCNB_HOME", tempfile.mkdtemp(prefix="ocnb-demo-"))
    summary = run_demo(out)
    print(f"demo: {summary['ok']}/{summary['steps']} tool calls ok (one refused on purpose) → {summary['report']}")
    if summary["retriever"]:
        print(f"demo: discovery ranks with {summary['retriever']}")
    if not ns.no_notebooks:
        try:
            from .notebooks import DEMO_NOTEBOOKS, run_demo_notebooks
        except ImportError as exc:
            print(f"demo: notebooks skipped ({exc}); `ocnb demo --no-notebooks` runs the tool tour alone")
            return 0
        failures = run_demo_notebooks(out, tuple(ns.notebook or DEMO_NOTEBOOKS), jobs=ns.jobs)
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
