"""Data tools: extract (a page's tables, repeated items or named fields as CSV rows, across pages).

The rows come back as compact CSV in ``content`` (the MCP shim sends it as its own text block;
``ToolResult.df`` reads it into a DataFrame), with the row count and the column names beside it; with
``to_file`` the CSV goes under ``OCNB_HOME/outputs/`` instead. ``next`` clicks a next-page control
through ``interact`` (so each click is journaled and guarded like any other), reads each new page, and
stops when the control is gone or disabled, when ``max_pages`` is reached, or when a click left the rows
as they were (no page is read twice).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..dispatch import ToolContext
from ..errors import InvalidArgument, OcnbError
from ..perception.extract import Grid, extract_page, next_control, to_csv
from ..perception.numbers import MODES, type_columns, type_footer
from ..registry import tool
from .evidence import TO_FILE, output_to_file

__all__ = ["extract"]

#: The part of the call's timeout one page's read may take.
READ_SHARE = 0.9
#: How long a click on the next-page control may take to show new rows (a script-driven pager).
NEXT_WAIT_S = 5.0
NEXT_POLL_S = 0.2
NEXT_INTENT = "extract: the next page of data"
MAX_PAGES = 100


def _join(grids: list[Grid], page_no: int | None) -> tuple[list[str], list[list[Any]]]:
    """One grid, or several under a ``table`` column (their columns in order of first appearance);
    ``page`` first when pages were followed."""
    rows: list[list[Any]]
    if len(grids) == 1:
        columns, rows = list(grids[0].columns), [list(r) for r in grids[0].rows]
    else:
        columns = ["table"]
        for g in grids:
            columns.extend(c for c in g.columns if c not in columns)
        rows = []
        for i, g in enumerate(grids, 1):
            at = [columns.index(c) for c in g.columns]
            for r in g.rows:
                line: list[Any] = [""] * len(columns)
                line[0] = i
                for k, v in zip(at, r, strict=False):
                    line[k] = v
                rows.append(line)
    if page_no is not None:
        columns = ["page", *columns]
        rows = [[page_no, *r] for r in rows]
    return columns, rows


def _same(a: list[Grid], b: list[Grid]) -> bool:
    return [g.rows for g in a] == [g.rows for g in b]


@tool(
    name="extract",
    examples=(
        "get the table on this page as a dataframe",
        "scrape the search results with titles and links",
        "collect every product name and price across all pages",
    ),
    category="extract",
    page_text=("content", "columns", "numbers", "footer", "tables", "url", "file", "error.details"),
    description="Page data as CSV: tables, repeated items or fields. kind table|items, or fields "
    "{name: 'css[@attr]'} per item selector; next: a pager ref/query; numbers: auto|parse ($, %, units)|raw.",
    properties={
        "kind": {"type": "string", "enum": ["table", "items"]},
        "ref": {"type": "string"},
        "fields": {"type": "object"},
        "item": {"type": "string"},
        "next": {"type": "string"},
        "max_pages": {"type": "integer"},
        "numbers": {"type": "string", "enum": list(MODES)},
        "footer": {"type": "boolean"},
        "to_file": TO_FILE,
    },
)
async def extract(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if "max_pages" in args and not 1 <= args["max_pages"] <= MAX_PAGES:
        raise InvalidArgument(f"max_pages must be 1 to {MAX_PAGES}", details={"max_pages": args["max_pages"]})
    fields = args.get("fields")
    if fields is not None and (not fields or not all(isinstance(v, str) and v.strip() for v in fields.values())):
        raise InvalidArgument("fields maps each name to a CSS selector (css or css@attr)", details={"fields": fields})
    page = await ctx.page(args.get("tab_id"))
    kind = "fields" if args.get("fields") else args.get("kind", "table")
    spec: dict[str, Any] = {
        "kind": args.get("kind", "table"),
        "ref": args.get("ref"),
        "item": args.get("item"),
        "fields": args.get("fields"),
    }
    budget = ctx.config.default_timeout_ms / 1000 * READ_SHARE
    grids = await extract_page(page, **spec, timeout_s=budget)
    target, pages = args.get("next"), int(args.get("max_pages", 10 if args.get("next") else 1))
    footers = [_join(_footers(grids), None)[1]] if target is None else []
    if target is None:
        columns, rows = _join(grids, None)
        out: dict[str, Any] = {"url": page.url, "kind": kind}
    else:
        spec["ref"] = None  # a ref names an element of the first page only
        all_cols: list[str] = []
        per_page: list[tuple[list[str], list[list[Any]]]] = [_join(grids, 1)]
        footers.append(_join(_footers(grids), 1)[1])
        stopped, prev = "max_pages", grids
        for page_no in range(2, pages + 1):
            ctl = await next_control(page, target)
            if ctl is None:
                stopped = "no next control"
                break
            if target == ctl.ref and ctl.name:
                target = ctl.name  # a ref dies with its page: later pages find the control by its name
            ctx.progress(page_no - 1, pages, f"page {page_no}")
            clicked = await ctx.dispatch("interact", {"ref": ctl.ref, "intent": NEXT_INTENT})
            if not clicked.ok:
                assert clicked.error is not None
                stopped = f"next failed: {clicked.error.code}"
                break
            page = await ctx.page(args.get("tab_id"))
            new = await _changed(page, spec, prev, budget)
            if new is None:
                stopped = "next left the rows unchanged"
                break
            per_page.append(_join(new, page_no))
            footers.append(_join(_footers(new), page_no)[1])
            prev = new
        for cols, _ in per_page:
            all_cols.extend(c for c in cols if c not in all_cols)
        columns = all_cols
        rows = []
        footer_rows: list[list[Any]] = []
        for (cols, page_rows), page_footer in zip(per_page, footers, strict=True):
            at = [columns.index(c) for c in cols]
            for part, into in ((page_rows, rows), (page_footer, footer_rows)):
                for r in part:
                    line: list[Any] = [""] * len(columns)
                    for k, v in zip(at, r, strict=False):
                        line[k] = v
                    into.append(line)
        footers = [footer_rows]
        out = {"url": page.url, "kind": kind, "pages": len(per_page), "stopped": stopped}
    if kind == "table":
        out["tables"] = [
            {
                "ref": g.ref,
                **({"caption": g.caption} if g.caption else {}),
                "rows": len(g.rows),
                **({"footer_rows": len(g.footer)} if g.footer else {}),
                **g.meta,
            }
            for g in grids
        ]
    mode = args.get("numbers", "auto")
    typed = type_columns(columns, rows, mode, await _lang(page) if mode == "parse" else "")
    columns, rows = typed.columns, typed.rows
    out.update({"format": "csv", "rows": len(rows), "columns": columns, "numbers": typed.numbers})
    footer = footers[0] if footers else []
    if footer and args.get("footer"):
        out["footer"] = to_csv(columns, type_footer(typed, footer))
    content = to_csv(columns, rows)
    if args.get("to_file"):
        out["file"] = output_to_file(ctx, "extract", content, "csv")
    else:
        out["content"] = content
    return out


def _footers(grids: list[Grid]) -> list[Grid]:
    """Each grid's footer rows as a grid of its own (joined the way its rows are)."""
    return [Grid(g.columns, g.footer) for g in grids]


async def _lang(page: Any) -> str:
    """The page's language (``<html lang>``, else the browser's): whether ``1.204,5`` is a number."""
    try:
        return str(await page.main_frame.evaluate("() => document.documentElement.lang || navigator.language || ''"))
    except Exception:  # noqa: BLE001 - a page navigating away: no language, numbers read the en way
        return ""


async def _changed(page: Any, spec: dict[str, Any], prev: list[Grid], budget: float) -> list[Grid] | None:
    """The page's data once it differs from ``prev`` (a navigation or a script swapping rows), or
    ``None`` when it stays the same for :data:`NEXT_WAIT_S`."""
    deadline = time.monotonic() + NEXT_WAIT_S
    while True:
        try:
            new = await extract_page(page, **spec, timeout_s=budget)
            if not _same(new, prev):
                return new
        except OcnbError as exc:
            if exc.code not in ("NOT_FOUND", "TARGET_CLOSED", "NAVIGATION_FAILED", "INTERNAL"):
                raise
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(NEXT_POLL_S)
