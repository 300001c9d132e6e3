"""Fixtures for the widget tests: a session with the audit layer's journal, and a call spy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import ocnb


@pytest.fixture
def journaled(session: ocnb.Session) -> ocnb.Session:
    """The module's session with a journal (installed here until ``features.install`` does it)."""
    if not hasattr(session, "journal"):
        from ocnb.audit.hooks import install

        install(session)
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
