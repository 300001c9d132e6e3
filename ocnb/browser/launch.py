"""Finding Chromium, the flags it runs with, and the one way a browser is launched or connected.

Discovery order (DESIGN §2): an explicit path (argument or ``OCNB_CHROMIUM``) → Playwright's own
installed Chromium → a system Chromium/Chrome on PATH. Failing all,
:class:`~ocnb.errors.BrowserUnavailable` says what was tried. :func:`open_browser` is the one path
that launches or connects; a session's own browser (:class:`~ocnb.browser.state.BrowserState`) and a
shared one (:class:`~ocnb.browser.shared.SharedBrowser`) both take it.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BrowserUnavailable
from ..settings import Settings

__all__ = [
    "INSTALL_HINT",
    "Opened",
    "find_chromium",
    "launch_args",
    "open_browser",
    "playwright_headless_shell",
]

SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Chromium's old headless mode as its own small binary: what Playwright itself runs for headless
#: launches. Same engine, no browser UI machinery: about 30% less CPU per page (bench_pool).
SYSTEM_HEADLESS_SHELLS = ("chromium-headless-shell", "chrome-headless-shell")
INSTALL_HINT = (
    "install one with `python -m playwright install chromium`, or on Debian/Ubuntu as root "
    "`apt-get install -y chromium`, or point OCNB_CHROMIUM at a Chromium/Chrome executable"
)


def playwright_headless_shell(playwright_path: str | None) -> str | None:
    """Playwright's own headless shell of the same revision as its Chromium at ``playwright_path``.

    ``playwright install chromium`` puts ``chromium-REV/…/chrome`` and
    ``chromium_headless_shell-REV/…/(chrome-)headless(_|-)shell`` side by side.
    """
    if not playwright_path:
        return None
    for parent in Path(playwright_path).parents:
        if parent.name.startswith("chromium-"):
            rev = parent.name.split("-", 1)[1]
            hits = sorted((parent.parent / f"chromium_headless_shell-{rev}").glob("*/*headless*shell"))
            return str(hits[0]) if hits else None
    return None


def find_chromium(
    explicit: str | os.PathLike[str] | None = None,
    playwright_path: str | None = None,
    *,
    headless: bool = True,
    configured: str | None = None,
) -> tuple[str | None, list[str]]:
    """Return ``(path, tried)``: the first usable browser executable and what was looked at.

    Order: the argument, ``configured`` (``Settings.chromium``: ``OCNB_CHROMIUM``), Playwright's own
    build, then the system's. Headless
    sessions prefer a headless shell at each level (Playwright's default for headless, too).
    """
    tried: list[str] = []
    candidates: list[tuple[str, str | None]] = []
    if explicit:
        candidates.append(("argument", str(explicit)))
    if configured:
        candidates.append(("OCNB_CHROMIUM", configured))
    if headless:
        candidates.append(("playwright-headless-shell", playwright_headless_shell(playwright_path)))
    candidates.append(("playwright", playwright_path))
    for name in (SYSTEM_HEADLESS_SHELLS if headless else ()) + SYSTEM_BROWSERS:
        candidates.append((f"PATH:{name}", shutil.which(name)))
    for label, path in candidates:
        if not path:
            tried.append(f"{label} (not found)")
            continue
        if Path(path).is_file() and os.access(path, os.X_OK):
            return path, tried
        tried.append(f"{label}={path} (missing)")
        if label in {"argument", "OCNB_CHROMIUM"}:
            return None, tried  # an explicit choice that fails is an error, not a silent fallback
    return None, tried


def launch_args() -> list[str]:
    """Chromium flags for a closed network; ``--no-sandbox`` only when running as root."""
    args = [
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--no-first-run",
        "--disable-dev-shm-usage",
        # No --disable-features here: Chromium keeps only the last one, and Playwright passes its
        # own list (MediaRouter, OptimizationHints, PaintHolding, ...), which ours would replace.
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


@dataclass
class Opened:
    """What :func:`open_browser` opened: the browser, and a context when one came with it."""

    browser: Any
    #: A persistent profile's context, or an attached (CDP) browser's own context; else None.
    context: Any = None
    executable: str | None = None
    remote: str | None = None
    #: False when ``context`` is an attached browser's own context (closing the session leaves it).
    own_context: bool = True


async def open_browser(
    pw: Any,
    config: Settings,
    *,
    executable_path: str | None = None,
    connect: str | None = None,
    cdp: str | None = None,
    profile: str | None = None,
    initial: dict[str, Any] | None = None,
    attach: bool = False,
    proxy: dict[str, str] | None = None,
) -> Opened:
    """Launch Chromium with Playwright ``pw``, or connect to a Playwright server (``connect``) or a
    CDP endpoint (``cdp``). ``profile`` launches a persistent context (``initial`` is its saved login);
    ``attach`` takes an endpoint's own first context when there is one (and no saved login to load).
    ``proxy``: a persistent profile's (Playwright's ``proxy`` setting; :mod:`ocnb.browser.proxy_guard`).
    A browser that cannot be found, reached or started is ``BROWSER_UNAVAILABLE``."""
    chromium = pw.chromium
    timeout = config.default_timeout_ms
    if connect or cdp:
        remote = connect or cdp
        try:
            if connect:
                # The server launches the browser; it honours executablePath/args only in --unsafe mode.
                options: dict[str, Any] = {"headless": config.headless, "args": launch_args()}
                if executable_path:
                    options["executablePath"] = str(executable_path)
                headers = {"x-playwright-launch-options": json.dumps(options)}
                browser = await chromium.connect(connect, timeout=timeout, headers=headers)
            else:
                browser = await chromium.connect_over_cdp(cdp, timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - a server that is gone or cannot launch: one clear code
            raise BrowserUnavailable(
                f"cannot reach the browser at {remote}: {str(exc).splitlines()[0]}", details={"remote": remote}
            ) from exc
        opened = Opened(browser, remote=remote)
        if cdp and attach and browser.contexts and initial is None:  # attach: the browser's own tabs and logins
            opened.context, opened.own_context = browser.contexts[0], False
        return opened
    own = None
    try:
        own = chromium.executable_path
    except Exception:  # noqa: BLE001 - Playwright raises when no build is registered
        own = None
    path, tried = find_chromium(executable_path, own, headless=config.headless, configured=config.chromium)
    if path is None:
        raise BrowserUnavailable(
            "no Chromium found (tried: " + "; ".join(tried) + "); " + INSTALL_HINT, details={"tried": tried}
        )
    try:
        if profile is not None:  # a persistent profile: the context is the browser
            width, height = config.viewport
            context = await chromium.launch_persistent_context(
                profile,
                executable_path=path,
                headless=config.headless,
                args=launch_args(),
                viewport={"width": width, "height": height},
                accept_downloads=True,
                # their requests cannot be routed: none while an origin policy holds (ocnb/browser/policy.py)
                service_workers="block" if config.origin_policy() else "allow",
                **({"proxy": proxy} if proxy is not None else {}),
            )
            if initial is not None:
                await context.set_storage_state(initial)
            return Opened(context.browser, context=context, executable=path)
        browser = await chromium.launch(executable_path=path, headless=config.headless, args=launch_args())
    except Exception as exc:  # noqa: BLE001
        raise BrowserUnavailable(f"launching {path} failed: {str(exc).splitlines()[0]}; {INSTALL_HINT}") from exc
    return Opened(browser, executable=path)
