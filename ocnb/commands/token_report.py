"""Token-cost analysis: what ocnb's tools and results cost an agent's context, in cl100k tokens.

:func:`token_report` measures, from the live registry and a session's recent results:

- the full tool list as MCP JSON schemas (every capability group), the default set only, and the opt-in groups;
- the generated capability map (the preamble alternative to the schemas);
- each tool's schema (sorted, for a bar chart);
- the results a session's calls produced, by tool (``read_page`` outputs among them).

All counts use tiktoken's ``cl100k_base`` shipped offline (``ocnb.tokens``). Anthropic publishes no
offline tokenizer for current Claude models, so Claude figures derived from these are estimates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..registry import Registry, capability_groups
from ..tokens import DEFAULT_ENCODING, count_json, count_text, count_tools

if TYPE_CHECKING:
    import pandas as pd

    from ..session import Session

__all__ = ["TokenReport", "token_report"]


@dataclass
class TokenReport:
    """Tables of token figures; ``summary`` has one row per measured item."""

    encoding: str
    summary: pd.DataFrame
    per_tool: pd.DataFrame
    results: pd.DataFrame

    def to_html(self) -> str:
        """The report as HTML: the summary, a bar chart of per-tool schema tokens, results by tool."""
        bar = self.per_tool.style.bar(subset=["tokens"], color="#7aa6d8").format({"tokens": "{:d}"}).hide(axis="index")
        parts = [
            f"<h3>Token costs ({self.encoding})</h3>",
            self.summary.to_html(index=False),
            "<h4>Tool schemas, largest first</h4>",
            bar.to_html(),
            "<h4>Results of this session's calls</h4>",
            self.results.to_html(index=False) if not self.results.empty else "<p>(no calls yet)</p>",
            "<p><small>No offline tokenizer exists for current Claude models: Claude figures are estimates.</small></p>",
        ]
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"TokenReport({self.encoding})\n{self.summary.to_string(index=False)}"


def token_report(
    session: Session | None = None, *, capability_map: str | None = None, encoding: str = DEFAULT_ENCODING
) -> TokenReport:
    """Measure tool-list, capability-map and result tokens (see the module docstring)."""
    import pandas as pd

    core = list(Registry())
    full = list(Registry(caps=capability_groups()))
    opt_in = [t for t in full if t.group != "core"]
    rows: list[dict[str, Any]] = [
        {
            "item": "full tool list (MCP schemas)",
            "tools": len(full),
            "tokens": count_tools([t.to_mcp() for t in full], encoding),
        },
        {"item": "default set only", "tools": len(core), "tokens": count_tools([t.to_mcp() for t in core], encoding)},
        {
            "item": "opt-in groups only",
            "tools": len(opt_in),
            "tokens": count_tools([t.to_mcp() for t in opt_in], encoding) if opt_in else 0,
        },
    ]
    if capability_map is None:
        from pathlib import Path

        path = Path(__file__).resolve().parents[2] / "docs" / "agent" / "capability-map.md"
        capability_map = path.read_text(encoding="utf-8") if path.is_file() else None
    if capability_map is not None:
        listed = sum(1 for line in capability_map.splitlines() if line.startswith("- "))
        rows.append(
            {"item": "capability map (preamble)", "tools": listed, "tokens": count_text(capability_map, encoding)}
        )
    summary = pd.DataFrame(rows).astype({"tools": "Int64", "tokens": "Int64"})
    per_tool = pd.DataFrame(
        [
            {"tool": t.name, "category": t.category, "group": t.group, "tokens": count_json(t.to_mcp(), encoding)}
            for t in full
        ]
    ).sort_values(["tokens", "tool"], ascending=[False, True], ignore_index=True)
    recent = list(session.recent_results) if session is not None else []
    res = pd.DataFrame(
        [{"tool": r["tool"], "tokens": count_text(r["json"], encoding)} for r in recent], columns=["tool", "tokens"]
    )
    if res.empty:
        results = pd.DataFrame(columns=["tool", "calls", "tokens_total", "tokens_mean", "tokens_max"])
    else:
        results = (
            res.groupby("tool")["tokens"]
            .agg(calls="count", tokens_total="sum", tokens_mean="mean", tokens_max="max")
            .reset_index()
            .sort_values("tokens_total", ascending=False, ignore_index=True)
        )
        results["tokens_mean"] = results["tokens_mean"].round(1)
    return TokenReport(encoding, summary, per_tool, results)
