"""The notebook face's shared fixture: IPython's test shell with ``%load_ext ocnb`` done."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.notebooks import magics_shell


@pytest.fixture(scope="module")
def ip(module_home: Path) -> Iterator[Any]:
    """IPython's test shell with the extension loaded; the shared session lives under module_home."""
    with magics_shell(module_home) as shell:
        yield shell
