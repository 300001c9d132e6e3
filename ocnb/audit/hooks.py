"""The audit layer's pipeline hooks: secrets in and out, journal and trace, for every face at once.

:func:`install` attaches them to a session (called from :mod:`ocnb.features`)::

    before: trace_call (tool_call event) → secrets_in (${SECRET:NAME} → value, or MISSING_SECRET)
    after:  secrets_out (values → placeholders in the result) → record (journal entry + tool_result event)

The handler alone ever sees a secret value. Calls refused for a bad intent (``call.record`` false)
leave neither a journal entry nor a trace event.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ocnb.audit.journal import Journal
from ocnb.audit.jsonl import Clock
from ocnb.audit.secrets import SecretStore
from ocnb.audit.trace import TraceWriter
from ocnb.errors import OcnbError
from ocnb.results import ToolError, ToolResult

if TYPE_CHECKING:
    from ocnb.dispatch import CallContext
    from ocnb.session import Session

__all__ = ["install", "record", "result_summary", "secrets_in", "secrets_out", "trace_call"]

_SCALARS = (str, int, float, bool)


def result_summary(result: ToolResult) -> str:
    """One line saying what happened: the error, or ``ok`` and up to three scalar fields."""
    if not result.ok:
        err = result.error
        return f"{err.code}: {err.message}" if err is not None else "failed"
    data = result.data
    if isinstance(data, dict):
        parts = []
        for key, value in data.items():
            if isinstance(value, _SCALARS) and value is not None:
                text = str(value)
                parts.append(f"{key}={text[:60] + '…' if len(text) > 60 else text}")
            if len(parts) == 3:
                break
        return " ".join(["ok", *parts])
    return "ok"


def trace_call(call: CallContext) -> None:
    """Before-hook: the ``tool_call`` event, written before the handler runs (a crash still shows it)."""
    trace: TraceWriter | None = getattr(call.session, "trace", None)
    if trace is None or not call.record:
        return
    trace.emit("tool_call", tool=call.name, body=_call_body(call), intent=call.intent)
    call.extra["traced_call"] = True


def secrets_in(call: CallContext) -> None:
    """Before-hook: replace ``${SECRET:NAME}`` in the handler's arguments (unknown → MISSING_SECRET)."""
    store: SecretStore | None = getattr(call.session, "secrets", None)
    call.exec_args = (store if store is not None else SecretStore()).substitute(call.exec_args)


def secrets_out(call: CallContext, result: ToolResult) -> ToolResult | None:
    """After-hook: a copy of the result with every secret value written as its placeholder."""
    store: SecretStore | None = getattr(call.session, "secrets", None)
    if store is None or not len(store):
        return None
    error = result.error
    if error is not None:
        error = ToolError(error.code, store.mask_text(error.message), store.mask(error.details))
    return ToolResult(ok=result.ok, tool=result.tool, data=store.mask(result.data), error=error)


def record(call: CallContext, result: ToolResult) -> None:
    """After-hook: one journal entry and the ``tool_result`` trace event (both sanitized on write).

    A disk error becomes an :class:`OcnbError` (code ``INTERNAL``), which dispatch reports.
    """
    if not call.record:
        return
    try:
        _record(call, result)
    except OSError as exc:
        raise OcnbError(f"the audit trail could not be written: {exc}") from None


def _record(call: CallContext, result: ToolResult) -> None:
    session = call.session
    journal: Journal | None = getattr(session, "journal", None)
    if journal is not None:
        entry: dict[str, Any] = {
            "seq": call.seq,
            "session_id": session.id,
            "tab_id": call.tab_id,
            "tool": call.name,
            "args": _given_args(call),  # as given: placeholders, never substituted values
            "ok": result.ok,
            "error_code": result.error.code if result.error is not None else None,
            "duration_ms": call.duration_ms,
            "summary": "; ".join(filter(None, [result_summary(result), call.extra.get("summary_note")])),
            "source": call.source,
        }
        if call.intent:
            entry["intent"] = call.intent
        journal.append(entry)
    trace: TraceWriter | None = getattr(session, "trace", None)
    if trace is not None and not trace.closed:
        if not call.extra.get("traced_call"):  # refused before the before-hooks ran
            trace.emit("tool_call", tool=call.name, body=_call_body(call), intent=call.intent)
        body: dict[str, Any] = {"call_seq": call.seq, "ok": result.ok, "duration_ms": round(call.duration_ms, 3)}
        if result.ok:
            body["data"] = result.data
        elif result.error is not None:
            body["error"] = result.error.to_dict()
        trace.emit("tool_result", tool=call.name, body=body, intent=call.intent)


def install(
    session: Session,
    *,
    secrets: str | os.PathLike[str] | None = None,
    clock: Clock | None = None,
    ids: Iterator[int] | None = None,
) -> None:
    """Give ``session`` its ``secrets``, ``journal`` and ``trace`` and attach the hooks.

    Sets ``session.secrets`` (a :class:`SecretStore`, filled from the dotenv file when given),
    ``session.journal`` and ``session.trace``; registers closing the trace on ``session._on_close``.
    ``clock`` and ``ids`` (trace seq numbers) are for golden-file tests.
    """
    store = SecretStore.from_dotenv(secrets) if secrets is not None else SecretStore()
    session.secrets = store
    session.journal = Journal(session.home, session_id=session.id, secrets=store, clock=clock)  # type: ignore[attr-defined]
    session.trace = TraceWriter(session.home, session.id, secrets=store, clock=clock, ids=ids)  # type: ignore[attr-defined]
    session.pipeline.before[:0] = [trace_call, secrets_in]
    session.pipeline.after[:0] = [secrets_out, record]
    on_close = getattr(session, "_on_close", None)
    if isinstance(on_close, list):
        on_close.append(_close)


def _close(session: Any) -> None:
    session.trace.close("closed")
    session.journal.close()


def _call_body(call: CallContext) -> dict[str, Any]:
    body: dict[str, Any] = {"call_seq": call.seq, "source": call.source, "args": _given_args(call)}
    if call.tab_id:
        body["tab_id"] = call.tab_id
    return body


def _given_args(call: CallContext) -> dict[str, Any]:
    """The arguments as the caller gave them, less ``intent`` (recorded as its own key)."""
    return {k: v for k, v in call.args.items() if k != "intent"}
