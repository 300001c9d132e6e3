"""The audit layer: a session's secrets, journal and trace, and the pipeline hooks that use them.

:class:`AuditLayer` owns the three; the session lists its hooks in its one pipeline declaration::

    before: trace_call (tool_call event) → secrets_in (${SECRET:NAME} → value, or MISSING_SECRET; a secret
            bound to origins refused where it could not be kept to them: SECRET_NOT_ALLOWED)
    after:  secrets_out (values → placeholders in the result) → record (journal entry + tool_result event)

The handler alone ever sees a secret value. Calls refused for a bad intent (``call.record`` false)
leave neither a journal entry nor a trace event.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ocnb.audit.journal import Journal
from ocnb.audit.jsonl import Clock
from ocnb.audit.notes import line_of, mark_traced
from ocnb.audit.secret_origins import check_call
from ocnb.audit.secrets import SecretStore
from ocnb.audit.trace import TraceWriter
from ocnb.calls import CallContext
from ocnb.errors import OcnbError
from ocnb.results import ToolError, ToolResult

__all__ = ["AuditLayer", "result_summary"]

_SCALARS = (str, int, float, bool)


def result_summary(result: ToolResult) -> str:
    """One line saying what happened: the error, or ``ok``, the element acted on (ref, role and name,
    for an audit that reads like the action) and up to three scalar fields."""
    if not result.ok:
        err = result.error
        return f"{err.code}: {err.message}" if err is not None else "failed"
    data = result.data
    if isinstance(data, dict):
        parts = []
        for key in ("element", "source", "target"):  # the element acted on, named as the audit needs it
            el = data.get(key)
            if isinstance(el, dict) and el.get("ref"):
                name = str(el.get("name") or "")
                parts.append(
                    f'{key}={el["ref"]} {el.get("role") or "?"} "{name[:60] + "…" if len(name) > 60 else name}"'
                )
        named = len(parts)
        for key, value in data.items():
            if isinstance(value, _SCALARS) and value is not None:
                text = str(value)
                parts.append(f"{key}={text[:60] + '…' if len(text) > 60 else text}")
            if len(parts) == named + 3:
                break
        return " ".join(["ok", *parts])
    return "ok"


class AuditLayer:
    """A session's audit trail: its secret store, journal and trace, and their hooks.

    ``secrets`` is a dotenv file to fill the store from. ``clock`` and ``ids`` (trace seq numbers)
    are for golden-file tests.
    """

    def __init__(
        self,
        home: Path,
        session_id: str,
        *,
        secrets: str | os.PathLike[str] | None = None,
        clock: Clock | None = None,
        ids: Iterator[int] | None = None,
    ) -> None:
        self.session_id = session_id
        self.secrets = SecretStore.from_dotenv(secrets) if secrets is not None else SecretStore()
        self.journal = Journal(home, session_id=session_id, secrets=self.secrets, clock=clock)
        self.trace = TraceWriter(home, session_id, secrets=self.secrets, clock=clock, ids=ids)
        #: Faces that hear the non-call events as they happen (the MCP face turns console errors and
        #: crashes into log messages): ``listener(kind, body)`` with secrets already masked, on the
        #: browser thread. A listener must not block; its failure is ignored.
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []

    def trace_call(self, call: CallContext) -> None:
        """Before-hook: the ``tool_call`` event, written before the handler runs (a crash still shows it)."""
        if not call.record:
            return
        self.trace.emit("tool_call", tool=call.name, body=_call_body(call), intent=call.intent)
        mark_traced(call)

    def secrets_in(self, call: CallContext) -> None:
        """Before-hook: replace ``${SECRET:NAME}`` in the handler's arguments (unknown → MISSING_SECRET);
        then refuse a bound secret whose destination is known already (:func:`check_call`)."""
        call.exec_args = self.secrets.substitute(call.exec_args)
        check_call(self.secrets, call)

    def secrets_out(self, call: CallContext, result: ToolResult) -> ToolResult | None:
        """After-hook: a copy of the result with every secret value written as its placeholder."""
        store = self.secrets
        if not len(store):
            return None
        error = result.error
        if error is not None:
            error = ToolError(error.code, store.mask_text(error.message), store.mask(error.details))
        return ToolResult(ok=result.ok, tool=result.tool, data=store.mask(result.data), error=error)

    def record(self, call: CallContext, result: ToolResult) -> None:
        """After-hook: one journal entry and the ``tool_result`` trace event (both sanitized on write).

        A disk error becomes an :class:`OcnbError` (code ``INTERNAL``), which dispatch reports.
        """
        if not call.record:
            return
        try:
            self._record(call, result)
        except OSError as exc:
            raise OcnbError(f"the audit trail could not be written: {exc}") from None

    def _record(self, call: CallContext, result: ToolResult) -> None:
        line = line_of(call)
        entry: dict[str, Any] = {
            "seq": call.seq,
            "session_id": self.session_id,
            "tab_id": call.tab_id,
            "tool": call.name,
            "args": _given_args(call),  # as given: placeholders, never substituted values
            "ok": result.ok,
            "error_code": result.error.code if result.error is not None else None,
            "duration_ms": call.duration_ms,
            "summary": "; ".join(filter(None, [result_summary(result), line.note if line else None])),
            "source": call.source,
        }
        if call.intent:
            entry["intent"] = call.intent
        if line is not None:
            entry.update(line.entries)  # what other layers put in the line (the origin policy's blocked)
        if call.client:
            entry["client"] = call.client
        self.journal.append(entry)
        trace = self.trace
        if not trace.closed:
            if line is None or not line.traced:  # refused before the before-hooks ran
                trace.emit("tool_call", tool=call.name, body=_call_body(call), intent=call.intent)
            body: dict[str, Any] = {"call_seq": call.seq, "ok": result.ok, "duration_ms": round(call.duration_ms, 3)}
            if result.ok:
                body["data"] = result.data
            elif result.error is not None:
                body["error"] = result.error.to_dict()
            trace.emit("tool_result", tool=call.name, body=body, intent=call.intent)

    def trace_event(self, kind: str, body: dict[str, Any]) -> None:
        """Write a non-call event (navigation, console, dialog, download, replay_step) to the trace."""
        if not self.trace.closed:
            try:
                self.trace.emit(kind, body=body)
            except (OSError, ValueError):
                pass
        if self.listeners:
            masked = self.secrets.mask(body) if len(self.secrets) else body
            for listener in list(self.listeners):
                try:
                    listener(kind, masked)
                except Exception:  # noqa: BLE001 - a face's bug never breaks the browser's events
                    pass

    def close(self) -> None:
        """Mark the trace closed and close the journal (the session is closing)."""
        self.trace.close("closed")
        self.journal.close()


def _call_body(call: CallContext) -> dict[str, Any]:
    body: dict[str, Any] = {"call_seq": call.seq, "source": call.source, "args": _given_args(call)}
    if call.tab_id:
        body["tab_id"] = call.tab_id
    return body


def _given_args(call: CallContext) -> dict[str, Any]:
    """The arguments as the caller gave them, less ``intent`` (recorded as its own key)."""
    return {k: v for k, v in call.args.items() if k != "intent"}
