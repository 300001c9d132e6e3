"""The browser: finding and launching Chromium (or connecting to one), its tabs and what happens on them.

- :mod:`~ocnb.browser.runtime` — the browser thread and its loop (one way to wait on it);
- :mod:`~ocnb.browser.launch` — finding Chromium, its flags, the one launch-or-connect path;
- :mod:`~ocnb.browser.state` — :class:`BrowserState`: one context, its tabs, and its parts
  :mod:`~ocnb.browser.network`, :mod:`~ocnb.browser.dialogs`, :mod:`~ocnb.browser.crashes`
  (with the session's :class:`~ocnb.browser.crashes.CrashWatch`) and
  :mod:`~ocnb.browser.download_store`;
- :mod:`~ocnb.browser.tabs` — what ocnb keeps about a tab;
- :mod:`~ocnb.browser.shared` — one browser several sessions share; :mod:`~ocnb.browser.remote` —
  Playwright servers for them; :mod:`~ocnb.browser.saved_logins` — saved logins;
  :mod:`~ocnb.browser.setup` — ``python -m ocnb.browser.setup --check``.
"""

from __future__ import annotations

from .launch import INSTALL_HINT, find_chromium, launch_args, playwright_headless_shell
from .network import NetworkControls
from .shared import SharedBrowser
from .state import BrowserState
from .tabs import RequestRecord, Ring, Tab

__all__ = [
    "INSTALL_HINT",
    "BrowserState",
    "NetworkControls",
    "RequestRecord",
    "Ring",
    "SharedBrowser",
    "Tab",
    "find_chromium",
    "launch_args",
    "playwright_headless_shell",
]
