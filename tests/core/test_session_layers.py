"""Session as the composition root: its layers own their state, their hooks run in one declared order,
and nothing outside the session adds attributes to it or keeps per-session state of its own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.calls import Extensions

PACKAGE = Path(__file__).resolve().parents[2] / "ocnb"


@pytest.fixture
def session(ocnb_home: Path) -> Iterator[ocnb.Session]:
    s = ocnb.Session(home=ocnb_home)
    yield s
    s.close()


def _names(hooks: list[Any]) -> list[str]:
    return [getattr(h, "__qualname__", repr(h)) for h in hooks]


def test_the_hooks_run_in_the_declared_order(session: ocnb.Session) -> None:
    assert _names(session.pipeline.before) == [
        "AuditLayer.trace_call",
        "Approvals.gate",  # a paused agent's call ends here (issue 42)
        "AuditLayer.secrets_in",
        "TaskGuard.before",
        "Approvals.before",  # confirm=acting: tools without an element (the others ask once it is resolved)
        "OriginReport.before",  # last: a refused call is never marked
    ]
    assert _names(session.pipeline.after) == [
        "CrashWatch.after",  # first: every later hook sees the one crash code
        "Handoffs.after",  # NEEDS_HUMAN, before masking and journaling
        "OriginReport.after",  # what the origin policy refused, before masking and journaling
        "AuditLayer.secrets_out",
        "AuditLayer.record",
        "DiscoveryLearner.after",  # after masking: learns only what the journal shows
        "TaskGuard.after",
        "capture_hook",
        "RecentResults.after",
    ]


def test_public_names_read_the_layers_state(session: ocnb.Session) -> None:
    assert session.journal is session.audit.journal and session.trace is session.audit.trace
    assert session.secrets is session.audit.secrets
    assert session.task is None and session.crashes == [] and len(session.recent_results) == 0
    assert session.state is None and not session.started


def test_a_call_leaves_its_result_with_the_recent_results_layer(session: ocnb.Session) -> None:
    result = session.call("no_such_tool")
    assert not result.ok
    [recent] = session.recent_results
    assert recent["tool"] == "no_such_tool" and recent["ok"] is False and recent["seq"] == 1


def test_faces_keep_their_per_session_objects_in_its_extensions(session: ocnb.Session) -> None:
    from ocnb.widgets import watcher_for
    from ocnb.widgets.watch import SessionWatcher

    before = set(vars(session))
    watcher = watcher_for(session)
    assert watcher_for(session) is watcher and session.extensions.get(SessionWatcher) is watcher
    # a face's hooks run outside every layer's, whatever the order they were added in
    assert session.pipeline.before_hooks()[0] == watcher._before
    assert session.pipeline.after_hooks()[-1] == watcher._after
    assert set(vars(session)) == before  # nothing set on the session from outside
    watcher.stop()
    assert session.extensions.get(SessionWatcher) is None
    assert watcher._before not in session.pipeline.before_hooks()


def test_on_close_runs_each_callback_once_unless_cancelled(ocnb_home: Path) -> None:
    s = ocnb.Session(home=ocnb_home)
    seen: list[str] = []
    s.on_close(lambda: seen.append("kept"))
    cancel = s.on_close(lambda: seen.append("cancelled"))
    cancel()
    s.close()
    s.close()
    assert seen == ["kept"]


def test_extensions_hold_one_object_per_class() -> None:
    ext = Extensions()
    first = ext.setdefault(list, lambda: ["a"])
    assert ext.setdefault(list, lambda: ["b"]) is first and ext.get(dict) is None
    ext.discard(["other"])
    assert ext.get(list) is first
    ext.discard(first)
    assert ext.get(list) is None


def test_no_module_reaches_into_a_session_by_name() -> None:
    """Layers use what the session declares: no getattr(session, ...) and no attribute set with type: ignore."""
    reach = re.compile(r"getattr\((?:\w+\.)?session\b")
    ignored = re.compile(r"^\s*[\w.]+\.\w+\s*=.*# type: ignore\[(?:attr-defined|assignment)\]")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if reach.search(line) or (ignored.search(line) and "session" in line):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
