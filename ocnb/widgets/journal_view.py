"""JournalView: a live table of the session's journal, newest first, filtered by tool and outcome."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as w
import traitlets

from .assets import asset_text
from .watch import watcher_for

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["ALL", "JournalView", "journal_source", "render_journal"]

ALL = "(all tools)"
STATUSES = ("all", "ok", "failed")
COLUMNS = ("seq", "time", "tool", "status", "ms", "source", "summary", "intent")


def journal_source(session: Session) -> Callable[[], list[dict[str, Any]]]:
    """Where a session's entries come from: its journal's in-memory entries."""

    def entries() -> list[dict[str, Any]]:
        return [e for e in session.journal.entries if e.get("session_id") in (None, session.id)]

    return entries


def _cell(entry: dict[str, Any], col: str) -> str:
    if col == "time":
        ts = str(entry.get("ts") or "")
        return html.escape(ts[11:23] if len(ts) > 19 else ts)
    if col == "status":
        if entry.get("ok"):
            return '<span class="ocnb-badge ok">ok</span>'
        code = html.escape(str(entry.get("error_code") or "failed"))
        return f'<span class="ocnb-badge failed">{code}</span>'
    if col == "ms":
        value = entry.get("duration_ms")
        return f"{value:.0f}" if isinstance(value, int | float) else ""
    value = entry.get(col)
    return "" if value is None else html.escape(str(value))


def render_journal(entries: list[dict[str, Any]]) -> str:
    """An HTML table of ``entries`` in the order given (one ``tr.ocnb-row`` per entry)."""
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    rows = []
    for e in entries:
        klass = "ocnb-row" if e.get("ok") else "ocnb-row ocnb-failed"
        cells = "".join(f"<td>{_cell(e, c)}</td>" for c in COLUMNS)
        rows.append(f'<tr class="{klass}" data-seq="{html.escape(str(e.get("seq")))}">{cells}</tr>')
    body = "".join(rows) or f'<tr class="ocnb-empty"><td colspan="{len(COLUMNS)}"><i>no calls yet</i></td></tr>'
    return (
        f"<style>{asset_text('tables.css')}</style>"
        f'<div class="ocnb-scroll"><table class="ocnb-table ocnb-journal"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


class JournalView(w.VBox):
    """The journal as a table that updates after every tool call (throttled).

    Args:
        session: whose calls to show (entries with its ``session_id``).
        limit: at most this many rows (the newest).
        entries: the seam — a callable returning entries oldest first (default: the session's journal).
        auto_refresh: refresh after each tool call from any face.
    """

    rows: traitlets.List[dict[str, Any]] = traitlets.List(help="The entries shown, newest first, after filtering.")

    def __init__(
        self,
        session: Session | None = None,
        *,
        limit: int = 50,
        entries: Callable[[], list[dict[str, Any]]] | None = None,
        auto_refresh: bool = True,
        interval: float = 0.4,
    ) -> None:
        if entries is None:
            if session is None:
                raise TypeError("JournalView needs a session (or an entries source)")
            entries = journal_source(session)
        self.session = session
        self.limit = limit
        self._entries = entries
        self._lock = threading.RLock()
        self.tool_filter = w.Dropdown(options=[ALL], value=ALL, description="Tool")
        self.status_filter = w.ToggleButtons(options=list(STATUSES), value="all", style={"button_width": "5em"})
        self.refresh_button = w.Button(description="Refresh", icon="refresh", layout=w.Layout(width="auto"))
        self.count = w.HTML("")
        self.table = w.HTML("")
        self.add_class("ocnb-journal-view")
        self._updating = False
        self.tool_filter.observe(self._on_filter, names="value")
        self.status_filter.observe(self._on_filter, names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        bar = w.HBox([self.tool_filter, self.status_filter, self.refresh_button, self.count])
        super().__init__(children=[bar, self.table])
        self._unsubscribe = None
        if auto_refresh and session is not None:
            self._unsubscribe = watcher_for(session, interval=interval).subscribe(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Re-read the entries and redraw the table with the current filters."""
        with self._lock:
            entries = list(self._entries())
            tools = sorted({str(e.get("tool")) for e in entries if e.get("tool")})
            options = [ALL, *tools]
            if list(self.tool_filter.options) != options:
                keep = self.tool_filter.value if self.tool_filter.value in options else ALL
                self._updating = True
                try:
                    self.tool_filter.options = options
                    self.tool_filter.value = keep
                finally:
                    self._updating = False
            tool = self.tool_filter.value
            status = self.status_filter.value
            picked = [
                e
                for e in entries
                if (tool == ALL or e.get("tool") == tool) and (status == "all" or bool(e.get("ok")) == (status == "ok"))
            ]
            picked.reverse()
            picked = picked[: self.limit]
            self.rows = picked
            self.count.value = f"{len(picked)} of {len(entries)} calls"
            self.table.value = render_journal(picked)

    def _on_filter(self, _change: dict[str, Any]) -> None:
        if not self._updating:
            self.refresh()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()
