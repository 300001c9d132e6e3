"""Helpers shared by the benchmarks: timing, medians, results files, the Playwright MCP peer."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

#: The peer every MCP comparison runs against: ``@playwright/mcp`` at this version, installed by npm into
#: ``bench/.node`` (gitignored) when missing, driving the same Chromium as ocnb.
PW_MCP_VERSION = "0.0.83"
NODE_DIR = Path(__file__).resolve().parent / ".node"
PW_MCP_BIN = NODE_DIR / "node_modules" / ".bin" / "playwright-mcp"
CHROMIUM = os.environ.get("OCNB_CHROMIUM", "/usr/bin/chromium")


def ensure_playwright_mcp() -> None:
    """Install ``@playwright/mcp`` at :data:`PW_MCP_VERSION` into ``bench/.node`` unless it is there."""
    if PW_MCP_BIN.exists():
        return
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", f"@playwright/mcp@{PW_MCP_VERSION}"],
        check=True,
    )


def playwright_mcp_params(*extra: str, cwd: str | None = None) -> Any:
    """How to start Playwright MCP over stdio: headless, isolated, on :data:`CHROMIUM`, plus ``extra`` flags."""
    from mcp.client.stdio import StdioServerParameters

    ensure_playwright_mcp()
    return StdioServerParameters(
        command=str(PW_MCP_BIN),
        args=["--executable-path", CHROMIUM, "--headless", "--no-sandbox", "--isolated", *extra],
        cwd=cwd,
    )


def median_ms(
    fn: Callable[[], Any], n: int = 30, warmup: int = 3, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Median time of ``fn()`` in milliseconds over ``n`` runs after ``warmup`` runs, read on ``clock``
    (wall time by default)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(n):
        t0 = clock()
        fn()
        times.append((clock() - t0) * 1000)
    return statistics.median(times)


def median_cpu_ms(fn: Callable[[], Any], n: int = 30, warmup: int = 3) -> float:
    """:func:`median_ms` on this process's CPU clock (all its threads): what a call costs here,
    whatever else the machine runs (the browser and Playwright's driver are processes of their own
    and are not counted)."""
    return median_ms(fn, n, warmup, clock=time.process_time)


def machine() -> dict[str, Any]:
    import os

    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}


def save(name: str, figures: dict[str, Any]) -> Path:
    """Write ``bench/results/<name>.json`` (figures + date + machine) and return its path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {
        "benchmark": name,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        **figures,
    }
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path


async def raw_signup_row(page: Any, url: str, who: str) -> None:
    """The peer's row, written by hand with Playwright: the demo sign-up form opened, filled, sent."""
    await page.goto(url)
    await page.get_by_role("textbox", name="Full name", exact=True).fill(who)
    await page.get_by_role("textbox", name="Email", exact=True).fill(f"{who}@example.com")
    await page.get_by_role("button", name="Sign up", exact=True).click()
