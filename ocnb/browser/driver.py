"""Playwright's driver in a session of its own: an interrupt meant for the kernel stops the call, not the browser.

Jupyter interrupts a kernel by sending SIGINT to the kernel's whole process group, and a terminal's
Ctrl-C goes to the whole foreground group. Playwright starts its Node.js driver (which launches and
owns Chromium) as a plain child of Python, inside that group, so every interrupt killed the driver and
the browser with it: the page, the typed values and the tabs were gone.

:func:`detach_driver` makes Playwright start the driver through this file run as a script
(:func:`main`): it calls ``os.setsid()`` and then execs Node.js with the same arguments, pipes and
environment. The interrupt reaches only Python, where :meth:`ocnb.runtime.Runtime.run` cancels the
call in progress.

The driver still ends with Python, however Python ends (``close()``, ``atexit``, a kernel killed with
SIGKILL): Playwright's ``run-driver`` exits when its stdin pipe closes, closing its browsers and
removing their temporary profile folders (``playwright_chromiumdev_profile-*``).
``tests/browser/test_interrupt.py`` and ``tests/notebooks/test_interrupt.py`` notice if either stops being true.

It also bounds what the driver keeps of a tab's network: Node.js starts with ``--require
driver_requests.js``, which makes the driver dispose its ``Request`` and ``Response`` objects past the
newest :data:`REQUESTS_KEPT` (Playwright's own limit is 10,000 of each per connection, about 14 KB of
Python memory apiece, and an open tab kept them all). The disposal is Playwright's own (reason ``gc``,
which its client handles); only where it starts changes. ``tests/browser/test_driver_requests.py``
notices if Playwright's driver drops the names that file relies on, or if a tab's requests stop being
bounded. And with ``--require driver_guard.js``, the origin policy's two hands in the driver: it
continues a paused request every policy allows without asking Python
(:meth:`ocnb.browser.fetch_guard.BrowserGuard.continue_allowed`; ``tests/security/test_driver_fetch.py``),
and lets a shared worker it auto-attached run only once ocnb's WebSocket gate is ready for it
(:mod:`ocnb.browser.ws_guard`; ``tests/security/test_ws_guard.py``).

This is the one place ocnb touches ``playwright._impl.transport`` (a private module): its
``compute_driver_executable`` name, which ``PipeTransport.connect`` calls for the program to start.
Run as a script, this file imports only the standard library and Playwright.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["REQUESTS_KEPT", "REQUESTS_KEPT_VAR", "detach_driver", "detached", "start_playwright"]

_MARK = "_ocnb_detached"

#: The requests (and, apart, the responses) Playwright's driver keeps per connection before it disposes
#: the oldest tenth: twice a tab's ``network_buffer`` (500), so a busy tab's whole log stays readable.
REQUESTS_KEPT = 1000
#: The driver's environment variable that carries it (``driver_requests.js`` reads it; a test may lower it).
REQUESTS_KEPT_VAR = "OCNB_DRIVER_REQUESTS_KEPT"
#: Loaded by Node.js before Playwright's driver: the bound on its requests, the origin policy's allowed
#: requests continued without a round trip to Python and shared workers let go only once ocnb's worker
#: gate is ready (``driver_guard.js``).
_PRELOADS = tuple(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), name) for name in ("driver_requests.js", "driver_guard.js")
)


def detach_driver() -> None:
    """From now on, start Playwright's driver in its own session (POSIX only; idempotent).

    On Windows an interrupt is not a signal to a process group, and a frozen application has no
    Python to run this file with: both keep Playwright's own start.
    """
    if sys.platform == "win32" or getattr(sys, "frozen", False):  # pragma: no cover - not on our CI
        return
    import playwright._impl.transport as transport  # private: see the module docstring

    original = transport.compute_driver_executable
    if getattr(original, _MARK, False):
        return

    def compute_driver_executable() -> tuple[str, str]:
        original()  # Playwright's own error (no Node.js) is raised here, in the caller
        return sys.executable, os.path.abspath(__file__)

    setattr(compute_driver_executable, _MARK, True)
    transport.compute_driver_executable = compute_driver_executable


async def start_playwright() -> Any:
    """Start Playwright (``async_playwright().start()``) with its driver in a session of its own."""
    from playwright.async_api import async_playwright

    detach_driver()
    return await async_playwright().start()


def detached() -> bool:
    """True once :func:`detach_driver` is in place."""
    import playwright._impl.transport as transport

    return bool(getattr(transport.compute_driver_executable, _MARK, False))


def main(argv: list[str]) -> Any:
    """Become a session leader, then exec the Node.js driver with ``argv`` (``run-driver``), its
    requests bounded by ``driver_requests.js``."""
    from playwright._impl._driver import compute_driver_executable

    node, cli = compute_driver_executable()
    try:
        os.setsid()
    except OSError:  # already a session leader: nothing to leave
        pass
    os.environ.setdefault(REQUESTS_KEPT_VAR, str(REQUESTS_KEPT))  # this process's own environment: the driver's
    # a repackaged ocnb without them still starts
    preload = [arg for path in _PRELOADS if os.path.isfile(path) for arg in ("--require", path)]
    os.execv(node, [node, *preload, cli, *argv])


if __name__ == "__main__":
    del sys.path[0]  # this file's folder (ocnb/) must not shadow anything Playwright imports
    main(sys.argv[1:])
