"""The wheelhouse the fresh-venv tests install from offline (filled from the package index once)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOUSE = Path(os.environ.get("OCNB_TEST_WHEELHOUSE", Path.home() / ".cache" / "ocnb" / "test-wheelhouse"))


@contextmanager
def filling(house: Path) -> Iterator[None]:
    """Hold ``house`` while one test fills it: under ``pytest -n`` two tests can find it empty at once,
    and one must not install from a wheel the other is still writing."""
    house.mkdir(parents=True, exist_ok=True)
    with open(house / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
