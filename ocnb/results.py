"""ToolResult: what every tool call returns, whichever face made it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .errors import ERROR_CODES, OcnbError

__all__ = ["ToolError", "ToolResult"]


@dataclass(frozen=True)
class ToolError:
    """A failed call's stable ``code``, one-line ``message`` and JSON-able ``details``."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_exception(cls, exc: OcnbError) -> ToolError:
        return cls(exc.code, exc.message, dict(exc.details))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


@dataclass
class ToolResult:
    """The outcome of one tool call: ``ok``, ``data`` on success, ``error`` on failure.

    A failure may carry ``data`` too, when the tool has a report to give back (a skill replay's
    ``{ok: false, failure: {code, step_index, detail, …}, step_results}``).

    ``tool`` names the tool that ran. dispatch never raises for a tool failure; it returns a
    ``ToolResult`` with ``ok=False`` and an :class:`ToolError` carrying a stable code.
    """

    ok: bool
    tool: str
    data: Any = None
    error: ToolError | None = None

    @classmethod
    def success(cls, tool: str, data: Any) -> ToolResult:
        return cls(ok=True, tool=tool, data=data)

    @classmethod
    def failure(cls, tool: str, code: str, message: str = "", details: dict[str, Any] | None = None) -> ToolResult:
        return cls(ok=False, tool=tool, error=ToolError(code, message or ERROR_CODES.get(code, code), details or {}))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "tool": self.tool}
        if self.ok or self.data is not None:
            out["data"] = self.data
        if not self.ok:
            assert self.error is not None
            out["error"] = self.error.to_dict()
        return out

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent, default=str)

    @property
    def df(self) -> Any:
        """The rows of a result that carries them as CSV (``extract``: ``format: "csv"``, in ``content``
        or, with ``to_file``, in the written file) as a pandas DataFrame; ``None`` for any other result.

        The columns ``data["numbers"]`` names are numbers, the others text; a table's footer, when asked
        for (``footer=True``), is the DataFrame in ``attrs["footer"]``."""
        data = self.data
        if not self.ok or not isinstance(data, dict) or data.get("format") != "csv":
            return None
        import io

        import pandas as pd  # imported lazily: only a caller of .df needs it

        # columns the tool typed as numbers are read as numbers, every other one as text (as it was shown)
        numbers = data.get("numbers")
        text = None if numbers is None else {c: str for c in data.get("columns", []) if c not in numbers}
        source = io.StringIO(data["content"]) if isinstance(data.get("content"), str) else data["file"]["path"]
        frame = pd.read_csv(source, dtype=text)
        if isinstance(data.get("footer"), str):  # extract(footer=True): a table's totals, apart from its rows
            frame.attrs["footer"] = pd.read_csv(io.StringIO(data["footer"]), dtype=text)
        return frame

    def raise_for_error(self) -> ToolResult:
        """Raise the :class:`OcnbError` of a failed result; return ``self`` when ok."""
        if not self.ok and self.error is not None:
            raise OcnbError(self.error.message, code=self.error.code, details=self.error.details)
        return self

    def __getitem__(self, key: str) -> Any:
        """Shortcut to ``data[key]`` for successful results."""
        if not isinstance(self.data, dict):
            raise KeyError(key)
        return self.data[key]

    # -- display ---------------------------------------------------------------------------
    def summary_line(self) -> str:
        if not self.ok:
            assert self.error is not None
            return f"{self.tool}: {self.error.code}: {self.error.message}"
        return f"{self.tool}: ok"

    def __str__(self) -> str:
        if not self.ok:
            return self.summary_line()
        data = self.data
        if isinstance(data, dict) and isinstance(data.get("element"), dict) and "ref" in data["element"]:
            from .display import acted_summary  # an action in one line; the JSON is .to_json()

            return f"{self.tool}: ok {acted_summary(data)}"
        if isinstance(data, dict) and isinstance(data.get("content"), str):
            head = {k: v for k, v in data.items() if k != "content"}
            return f"{self.tool}: ok {json.dumps(head, ensure_ascii=False, default=str)}\n{data['content']}"
        return f"{self.tool}: ok {json.dumps(data, ensure_ascii=False, indent=2, default=str)}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from .display import render_html  # imported lazily: only notebooks need it

        return {"text/plain": str(self), "text/html": render_html(self)}

    def __repr__(self) -> str:
        if self.ok:
            return f"ToolResult(ok=True, tool={self.tool!r}, data={self.data!r})"
        return f"ToolResult(ok=False, tool={self.tool!r}, error={self.error!r})"
