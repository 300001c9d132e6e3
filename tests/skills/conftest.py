"""Fixtures of the skill tests: the drift fixture site."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ocnb.commands.demosite import DemoSite, serve
from tests.skills.helpers import DRIFT


@pytest.fixture(scope="session")
def drift() -> Iterator[DemoSite]:
    """tests/fixtures/sites/drift on loopback (two origins, like the demo site)."""
    with serve(root=DRIFT) as s:
        yield s
