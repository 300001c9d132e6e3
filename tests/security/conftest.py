"""Fixtures of the security tests: the two-origin loopback site."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .origin_site import OriginSite, serve_origin_site


@pytest.fixture(scope="module")
def origin_site() -> Iterator[OriginSite]:
    site = serve_origin_site()
    yield site
    site.server.shutdown()
    site.server.server_close()


#: The two guards an origin policy can have (``ocnb/browser/proxy_guard.py``, ``ocnb/browser/policy.py``).
GUARDS = ("network", "devtools")


def policy_of(guard: str, allowed: list[str]) -> dict[str, list[str]]:
    """Session settings allowing ``allowed`` and enforced by ``guard``: ``network``, the allow-list alone
    (the network guard's proxy enforces it); ``devtools``, the same plus an allowed pattern with a
    blocked origin inside it (``https://bad.example.test`` in ``https://*.example.test``), which the
    proxy's bypass rules cannot carve out, so the DevTools guard enforces the whole policy. Both refuse
    the same origins of the loopback site."""
    if guard == "network":
        return {"allowed_origins": allowed}
    return {"allowed_origins": [*allowed, "https://*.example.test"], "blocked_origins": ["https://bad.example.test"]}


def expect_guard(session: Any, guard: str) -> Any:
    """``session`` started, enforced by ``guard`` (so a test cannot pass under the other one)."""
    session.start()
    assert session.browser_state().origin_guard.network == (guard == "network"), guard
    return session
