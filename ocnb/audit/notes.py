"""What the audit layer keeps about one call besides the call itself: its journal line's extras.

The audit layer owns a call's journal line. Other layers have something to say in it — the crash
watch that the browser was relaunched, the approvals who decided, the origin policy what it refused —
and say it through these functions; the state is a slot of the call (:meth:`ocnb.calls.CallContext.slot`)
that only ``ocnb.audit`` touches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ocnb.calls import CallContext

__all__ = ["JournalLine", "add_entry", "add_note", "line_of", "note"]


@dataclass
class JournalLine:
    """The audit layer's state of one call."""

    #: The ``tool_call`` trace event is written (a call refused before the before-hooks ran, e.g. by
    #: ``ToolDef.check``, has none yet: the ``record`` hook writes it then).
    traced: bool = False
    #: A line added to the journal's summary of the call (approval, hand-off, crash relaunch, drag target).
    note: str | None = None
    #: Keys added to the call's journal line by other layers (the origin policy's ``blocked``), in order.
    entries: dict[str, Any] = field(default_factory=dict)


def line_of(call: CallContext) -> JournalLine | None:
    """The call's journal-line extras, if any layer added some (for the audit layer's own hooks)."""
    return call.peek(JournalLine)


def note(call: CallContext, text: str) -> None:
    """Make ``text`` the note of the call's journal summary (replacing an earlier note)."""
    call.slot(JournalLine).note = text


def add_note(call: CallContext, text: str) -> None:
    """Add ``text`` to the note of the call's journal summary (after ``; `` when it has one)."""
    line = call.slot(JournalLine)
    line.note = f"{line.note}; {text}" if line.note else text


def add_entry(call: CallContext, key: str, value: Any) -> None:
    """Write ``key: value`` into the call's journal line (after ``intent``, before ``client``)."""
    call.slot(JournalLine).entries[key] = value


def mark_traced(call: CallContext) -> None:
    """The call's ``tool_call`` trace event is written."""
    call.slot(JournalLine).traced = True
