"""``python -m ocnb.browser.setup --check``: say which Chromium ocnb would use (exit 1 if none)."""

from __future__ import annotations

import argparse
import sys

from ..settings import Settings
from .launch import INSTALL_HINT, find_chromium

__all__ = ["main", "playwright_chromium"]


def playwright_chromium() -> str | None:
    """Path of Playwright's own installed Chromium, if one is registered (no browser launched)."""
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            return p.chromium.executable_path
    except Exception:  # noqa: BLE001 - no driver, or no browser registered
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ocnb.browser.setup", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only report; exit 1 when none is found")
    parser.parse_args(argv)
    path, tried = find_chromium(None, playwright_chromium(), configured=Settings.from_env().chromium)
    if path:
        print(f"ocnb: using Chromium at {path}")
        return 0
    print("ocnb: no Chromium found (tried: " + "; ".join(tried) + ")", file=sys.stderr)
    print("ocnb: " + INSTALL_HINT, file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
