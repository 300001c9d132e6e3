"""Fixtures for the widget tests: a journaled session, and a call spy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import ocnb


@pytest.fixture
def journaled(session: ocnb.Session) -> ocnb.Session:
    """The module's session (every session has a journal: its audit layer)."""
    return session


@pytest.fixture
def spy(session: ocnb.Session) -> Iterator[list[dict[str, Any]]]:
    """Every call the pipeline finishes, as ``{tool, args, source, record, ok}``, in order."""
    seen: list[dict[str, Any]] = []

    def hook(call: Any, result: Any) -> None:
        seen.append(
            {"tool": call.name, "args": dict(call.args), "source": call.source, "record": call.record, "ok": result.ok}
        )

    session.pipeline.after.append(hook)
    yield seen
    session.pipeline.after.remove(hook)
