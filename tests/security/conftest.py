"""Fixtures of the security tests: the two-origin loopback site."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .origin_site import OriginSite, serve_origin_site


@pytest.fixture(scope="module")
def origin_site() -> Iterator[OriginSite]:
    site = serve_origin_site()
    yield site
    site.server.shutdown()
    site.server.server_close()
