"""Examples learned from use: the intents of successful calls, kept as example requests of the
capability that served them.

Opt-in (``Settings.discovery_learn``: ``OCNB_DISCOVERY_LEARN=1``, ``Session(discovery_learn=True)``,
``%config OcMagics.discovery_learn = True``). :class:`LearnedExamples` is the file
``OCNB_HOME/capabilities/learned.jsonl`` (``0600``): one JSON line per learned request,
``{"capability": "tool:interact", "example": "tick the terms box", "ts": ...}``; read it with
any JSON-lines reader, delete it (or call :meth:`LearnedExamples.forget`) to unlearn.
:class:`DiscoveryLearner` is the session layer whose after-hook writes it: an ``ok`` call with an
``intent`` is learned for its tool, or for the skill an ``oc_skill_replay`` ran; a failed call never
is, and neither is an intent that held a secret value or a ``${SECRET:...}`` placeholder.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ocnb.calls import CallContext
from ocnb.files import atomic_write_text, file_lock, open_append
from ocnb.results import ToolResult

__all__ = ["DiscoveryLearner", "LearnedExamples", "LEARNED_FILE", "MAX_PER_CAPABILITY"]

LEARNED_FILE = Path("capabilities") / "learned.jsonl"
#: Learned examples kept per capability (the most recent); older lines are dropped on compaction.
MAX_PER_CAPABILITY = 20
_SECRET_MARK = "${SECRET:"


class LearnedExamples:
    """The learned-examples file of one ``OCNB_HOME``: append, read (capped per capability), forget."""

    def __init__(self, home: str | os.PathLike[str], cap: int = MAX_PER_CAPABILITY) -> None:
        self.path = Path(home) / LEARNED_FILE
        self.cap = cap
        self._lock = threading.Lock()
        self._cached: tuple[float, int, dict[str, tuple[str, ...]]] | None = None

    def add(self, capability: str, example: str) -> None:
        """Append one learned example (whitespace collapsed); compacts the file when it grows."""
        text = " ".join(example.split())
        if not text:
            return
        line = json.dumps({"capability": capability, "example": text, "ts": round(time.time(), 3)})
        with self._lock, file_lock(self.path):
            fd = open_append(self.path)
            try:
                os.write(fd, (line + "\n").encode("utf-8"))
            finally:
                os.close(fd)
            rows = self._rows()
            if len(rows) > 2 * self.cap * max(1, len({r["capability"] for r in rows})):
                self._write(self._capped(rows))

    def _rows(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        rows = []
        for raw in text.splitlines():
            try:
                row = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a torn or hand-edited line is skipped, never fatal
            if isinstance(row, dict) and isinstance(row.get("capability"), str) and isinstance(row.get("example"), str):
                rows.append(row)
        return rows

    def _capped(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The most recent ``cap`` distinct examples per capability, in file order."""
        seen: dict[str, list[str]] = {}
        keep: list[dict[str, Any]] = []
        for row in reversed(rows):
            mine = seen.setdefault(row["capability"], [])
            if row["example"] in mine or len(mine) >= self.cap:
                continue
            mine.append(row["example"])
            keep.append(row)
        return keep[::-1]

    def _write(self, rows: list[dict[str, Any]]) -> None:
        atomic_write_text(self.path, "".join(json.dumps(r) + "\n" for r in rows))

    def all(self) -> dict[str, tuple[str, ...]]:
        """capability id → its learned examples (most recent ``cap``, oldest first); cached by file stamp."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return {}
        stamp = (st.st_mtime, st.st_size)
        with self._lock:
            if self._cached is not None and self._cached[:2] == stamp:
                return self._cached[2]
            out: dict[str, list[str]] = {}
            for row in self._capped(self._rows()):
                out.setdefault(row["capability"], []).append(row["example"])
            found = {k: tuple(v) for k, v in sorted(out.items())}
            self._cached = (*stamp, found)
            return found

    def forget(self, capability: str | None = None) -> int:
        """Delete the learned examples of one capability (or all: the file is removed); returns how many."""
        with self._lock, file_lock(self.path):
            rows = self._rows()
            if capability is None:
                self.path.unlink(missing_ok=True)
                gone = len(rows)
            else:
                keep = [r for r in rows if r["capability"] != capability]
                gone = len(rows) - len(keep)
                if gone:
                    self._write(keep)
            self._cached = None
            return gone


class DiscoveryLearner:
    """Session layer: learns the intents of successful calls as examples (when the setting is on).

    ``masks(text)`` returns ``text`` with the session's secret values replaced by placeholders;
    an intent it changes, or that holds a placeholder, is never learned.
    """

    def __init__(self, home: str | os.PathLike[str], masks: Callable[[str], str]) -> None:
        self.examples = LearnedExamples(home)
        self._masks = masks

    def capability_of(self, name: str, args: dict[str, Any]) -> str:
        """The capability a call served: the replayed skill for ``oc_skill_replay``, else the tool."""
        if name == "oc_skill_replay" and isinstance(args.get("skill_id"), str):
            return f"skill:{args['skill_id']}"
        return f"tool:{name}"

    def after(self, call: CallContext, result: ToolResult) -> None:
        """After-hook: record ``call.intent`` as an example of what served it (opt-in, ok calls only)."""
        if not call.session.config.discovery_learn:
            return
        intent = call.intent
        if not intent or not result.ok or not call.record or call.source == "replay":
            return
        if _SECRET_MARK in intent or self._masks(intent) != intent:
            return
        try:
            self.examples.add(self.capability_of(call.name, call.args), intent)
        except OSError:  # learning is a courtesy: a read-only home never fails a call
            pass
