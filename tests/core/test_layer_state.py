"""Each layer its own state: a call carries what every layer needs, and a layer's per-call (or per-tab)
state is a slot of a class of its own, touched only inside its own package (docs/architecture.md,
"Who owns which state")."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.browser.tabs import Tab
from ocnb.calls import CallContext
from ocnb.results import ToolResult

PACKAGE = Path(__file__).resolve().parents[2] / "ocnb"

#: What every layer needs of a call. A layer's own state goes in a slot (``call.slot(MyLayerState)``).
COMMON_FIELDS = {
    "session",
    "name",
    "args",
    "source",
    "seq",
    "started",
    "tooldef",
    "exec_args",
    "intent",
    "tab_id",
    "duration_ms",
    "record",
    "extra",  # public: for hooks of a user's own
    "progress_fn",
    "ask_fn",
    "parent",
    "deadline",
    "lock",
    "client",
    "_slots",
}


#: What a tab is: its page and what was observed on it. A layer's state of a tab is a slot too
#: (the dialog layer's waiting dialog, the skills layer's capture buffer).
TAB_FIELDS = {
    "id",
    "page",
    "console",
    "network",
    "dialogs",
    "opener",
    "created",
    "closing",
    "title",
    "crashed",
    "emulation",
    "open_requests",
    "_slots",
}


@pytest.mark.parametrize(
    ("cls", "expected", "how"),
    [
        (
            CallContext,
            COMMON_FIELDS,
            "(call.slot(MyLayerState), see CallContext.slot and docs/architecture.md), "
            "not in a field every call carries",
        ),
        (Tab, TAB_FIELDS, "(tab.slot(MyLayerState), see ocnb.calls.Slots and docs/architecture.md)"),
    ],
    ids=["a call carries only what every layer needs", "a tab holds its page and what was observed on it"],
)
def test_no_layer_state_in_loose_fields(cls: type, expected: set[str], how: str) -> None:
    fields = {f.name for f in dataclasses.fields(cls)}
    added = sorted(fields - expected)
    assert not added, f"{cls.__name__} got {added}: state of one layer goes in a slot of a class of that layer {how}"
    assert fields == expected


def test_a_slot_is_one_object_per_class_and_per_call() -> None:
    @dataclasses.dataclass
    class Mine:
        n: int = 0

    call = CallContext(session=None, name="t", args={}, source="api", seq=1)  # type: ignore[arg-type]
    other = CallContext(session=None, name="t", args={}, source="api", seq=2)  # type: ignore[arg-type]
    assert call.peek(Mine) is None  # peeking makes nothing
    call.slot(Mine).n += 1
    call.slot(Mine).n += 1
    assert call.peek(Mine) == Mine(2) and other.peek(Mine) is None


# ---- no layer touches another layer's slot --------------------------------------------------------


def _room(path: Path, package: Path) -> str:
    """The package directly under ``ocnb/`` a module belongs to (a top-level module is its own room)."""
    rel = path.relative_to(package)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def slot_misuses(package: Path) -> list[str]:
    """Every ``x.slot(K)`` / ``x.peek(K)`` in a module of another room than the one defining class ``K``."""
    modules = sorted(package.rglob("*.py"))
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in modules}
    defined: dict[str, set[str]] = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, set()).add(_room(path, package))
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in ("slot", "peek") or len(node.args) != 1:
                continue
            arg = node.args[0]
            name = arg.id if isinstance(arg, ast.Name) else arg.attr if isinstance(arg, ast.Attribute) else None
            if name is None or name not in defined:
                continue
            room = _room(path, package)
            if room not in defined[name]:
                found.append(
                    f"{path.relative_to(package.parent)}:{node.lineno}: .{node.func.attr}({name}) — {name} belongs to "
                    f"{', '.join(sorted(defined[name]))}; call a function of that layer instead"
                )
    return found


def test_no_layer_touches_another_layers_slot() -> None:
    misuses = slot_misuses(PACKAGE)
    assert not misuses, "\n".join(misuses)


def test_the_slot_check_sees_a_foreign_slot(tmp_path: Path) -> None:
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "notes.py").write_text("class JournalLine:\n    note = None\n")
    (tmp_path / "browser").mkdir()
    (tmp_path / "browser" / "crashes.py").write_text("def after(call):\n    call.slot(JournalLine).note = 'x'\n")
    (tmp_path / "audit" / "hooks.py").write_text("def record(call):\n    return call.peek(JournalLine)\n")
    [misuse] = slot_misuses(tmp_path)
    assert misuse.startswith(f"{tmp_path.name}/browser/crashes.py:2: .slot(JournalLine)")


# ---- the replay's failure envelope is the replay tool's, not every session's -----------------------


@pytest.fixture
def session(ocnb_home: Path) -> Iterator[ocnb.Session]:
    s = ocnb.Session(home=ocnb_home)
    yield s
    s.close()


ENVELOPE = {"envelope_hook", "failure_envelope"}


def _hook_names(session: ocnb.Session) -> set[str]:
    hooks: list[Any] = [*session.pipeline.before_hooks(), *session.pipeline.after_hooks()]
    return {getattr(h, "__name__", repr(h)) for h in hooks}


def test_no_pipeline_holds_the_replay_envelope_yet_a_refused_replay_carries_it(session: ocnb.Session) -> None:
    during: list[set[str]] = []

    def watch(call: CallContext, result: ToolResult) -> None:
        if call.name == "oc_skill_replay":
            during.append(_hook_names(session))

    assert not ENVELOPE & _hook_names(session)
    session.pipeline.outer_after.append(watch)
    # refused by the schema, before any handler, hook or browser: still the replay's {ok, failure}
    r = session.oc_skill_replay(skill_id="sk_0123456789abcdef", step_timeout_ms=1)
    assert r.error.code == "INVALID_ARGUMENT" and not session.started
    assert r.data == {
        "ok": False,
        "failure": {"code": "INVALID_ARGUMENT", "step_index": None, "detail": r.error.message},
        "steps_executed": 0,
        "step_results": [],
        "skill_id": "sk_0123456789abcdef",
    }
    assert len(during) == 1 and "watch" in during[0] and not ENVELOPE & during[0]
    # another tool's failure gets no such data
    other = session.call("navigate", url=5)
    assert not other.ok and other.data is None
