"""Plots of what a session did, from the DataFrames ocnb already gives (``journal_df``, the token
report, ``replay_df``): a call timeline, tokens by tool, replay step durations.

Drawn with matplotlib (the ``notebook`` extra): a static PNG renders the same in JupyterLab, in a
notebook exported to HTML and on a closed network, with nothing fetched at view time (Vega-Lite and
Plotly charts need their JavaScript from a CDN, or megabytes of it inlined, to show in exported HTML).
Each function returns the ``Figure`` (shown under the cell; ``fig.savefig(...)`` writes it).
"""

from __future__ import annotations

from typing import Any

from .._extras import extra

__all__ = ["call_timeline", "replay_durations", "tokens_by_tool"]

_OK, _FAILED = "#2f6fb0", "#d33"
_RUNS = ("#2f6fb0", "#8cb6e0", "#1b3f66", "#5a95cf")


def _pyplot() -> Any:
    with extra("notebook"):  # a missing matplotlib names the extra that installs it
        import matplotlib

        matplotlib.use(matplotlib.get_backend())  # keep the kernel's inline backend
        import matplotlib.pyplot as plt
    return plt


def call_timeline(journal: Any, *, title: str = "calls over time") -> Any:
    """Each call of ``journal`` (:func:`ocnb.journal_df`) as a bar from its start to its end, one row
    per tool; failed calls in red with their error code."""
    plt = _pyplot()
    import pandas as pd

    df = journal.dropna(subset=["ts"]).copy()
    tools = list(dict.fromkeys(df["tool"].astype(str)))
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(len(tools), 2) + 1.2))
    if df.empty:
        ax.set_title(f"{title} (no calls)")
        return fig
    lengths = pd.to_numeric(df["duration_ms"], errors="coerce").fillna(0).to_numpy(dtype=float) / 1000.0
    stamps = (df["ts"] - df["ts"].min()).dt.total_seconds()  # the journal stamps a call when it ends
    ends = stamps - float((stamps.to_numpy() - lengths).min())  # 0: when the first call began
    rows = [tools.index(str(t)) for t in df["tool"]]
    failed = ~df["ok"].fillna(False).astype(bool).to_numpy()
    colours = [_FAILED if f else _OK for f in failed]
    ax.barh(rows, [max(v, 0.02) for v in lengths], left=ends.to_numpy() - lengths, color=colours, height=0.6)
    for row, end, code, bad in zip(rows, ends, df["error_code"], failed, strict=True):
        if bad:
            ax.annotate(
                str(code), (end, row), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8, color=_FAILED
            )
    if failed.any():  # room on the right for the error codes written after the bars
        ax.set_xlim(0, float(ends.max()) * 1.18 + 0.1)
    ax.set_yticks(range(len(tools)), tools)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the first call began")
    ok, bad = int((~failed).sum()), int(failed.sum())
    ax.set_title(f"{title}: {ok} ok, {bad} failed")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def tokens_by_tool(table: Any, *, column: str | None = None, top: int = 20, title: str = "tokens by tool") -> Any:
    """A horizontal bar per tool of ``table`` (the token report's ``per_tool`` or ``results``), largest first."""
    plt = _pyplot()
    column = column or next(c for c in ("tokens_total", "tokens") if c in table.columns)
    df = table.sort_values(column, ascending=False).head(top)
    fig, ax = plt.subplots(figsize=(8, 0.32 * max(len(df), 2) + 1.2))
    ax.barh(df["tool"].astype(str), df[column].astype(float), color=_OK)
    ax.invert_yaxis()
    ax.set_xlabel(f"{column} (cl100k_base)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def replay_durations(replay: Any, *, title: str = "replay step durations") -> Any:
    """Each step of :func:`ocnb.replay_df` as a bar of its elapsed time, runs side by side (each its own
    shade, named in the legend); failed steps red."""
    plt = _pyplot()
    from matplotlib.patches import Patch

    df = replay.dropna(subset=["step_index"])
    fig, ax = plt.subplots(figsize=(8, 3.5))
    runs = list(dict.fromkeys(df["session_id"].astype(str))) if "session_id" in df else ["run"]
    width = 0.8 / max(len(runs), 1)
    legend = []
    for i, run in enumerate(runs):
        part = df[df["session_id"].astype(str) == run] if "session_id" in df else df
        x = part["step_index"].astype(float).to_numpy() + (i - (len(runs) - 1) / 2) * width  # centred on the step
        failed = ~part["ok"].fillna(False).astype(bool).to_numpy()
        shade = _RUNS[i % len(_RUNS)]  # each run its own blue, so runs side by side are told apart
        ax.bar(x, part["elapsed_ms"].astype(float), width=width, color=[_FAILED if f else shade for f in failed])
        legend.append(Patch(color=shade, label=f"run {i + 1}: {run[:12]}"))
    ax.set_xticks(sorted({int(v) for v in df["step_index"].dropna()}))
    if not df["ok"].fillna(False).astype(bool).all():
        legend.append(Patch(color=_FAILED, label="failed step"))
    if len(legend) > 1:
        ax.legend(handles=legend, fontsize=8, loc="upper left")
    ax.set_xlabel("step")
    ax.set_ylabel("ms")
    ax.set_title(f"{title} ({len(runs)} run{'s' if len(runs) != 1 else ''})")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
