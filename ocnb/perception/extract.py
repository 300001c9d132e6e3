"""``extract``: a page's data as rows — its tables, its repeated items, or fields named by CSS.

The in-page script (the ``extract`` bundle of :mod:`.bundle`; the ``perception`` bundle keeps the ref
registry it names elements in) finds the data in one frame; this module runs it in every frame of the
page the way :func:`~.snapshot.read_page` reads them (open shadow roots included), and joins what it finds into :class:`Grid` values: column names and rows of
cell text. Kinds:

- ``table``: HTML tables, ARIA ``grid``/``table``/``treegrid``, and ``role=row`` div tables; header rows
  (``thead``, a first row of ``th``/``columnheader``) name the columns, ``colspan``/``rowspan`` are
  expanded, a cell that is one link gets its URL in a ``<column> url`` column.
- ``items``: siblings of one shape (search results, product cards, posts, inbox rows); each item's fields
  aligned by their place in the item and named (title, url, image, price, date, or the class a page gave
  them), and the item's ``ref`` last.
- ``fields``: ``{name: "css"}`` or ``"css@attr"``, per ``item`` (a CSS selector) or within ``ref``.

Nothing here acts on the page: reading it assigns refs, nothing more.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import AmbiguousTarget, ElementNotFound, InvalidArgument, NotFound, StaleRef, Timeout
from .bundle import bundle
from .refs import call_script, page_refs, parse_ref
from .targets import Resolved, resolve_target

__all__ = ["KINDS", "Grid", "extract_page", "next_control", "split_footer", "to_csv"]

KINDS = ("table", "items")
#: Frames read below the page's own document (as read_page: frames inside frames, 8 deep at most).
MAX_FRAMES = 50


def _script() -> str:
    return bundle("extract")


@dataclass
class Grid:
    """One extracted table: column names, rows of cell text, its footer rows (totals, kept apart from
    the rows: :func:`split_footer`), and what it came from."""

    columns: list[str]
    rows: list[list[str]]
    ref: str | None = None
    caption: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    footer: list[list[str]] = field(default_factory=list)


#: A footer row's label, in the first cell that has text: words that say the row sums the rows above.
_TOTAL = re.compile(
    r"^\s*(grand\s+total|sub-?\s?total|totals?|gesamt(summe|betrag)?|summe|insgesamt|total\s+général|totale|"
    r"totaal|suma\s+total|合計|总计|合计)\b\s*:?",
    re.IGNORECASE,
)
#: Weaker labels: a footer only when the row is also shaped unlike a data row (a spanned or empty cell).
_SUM = re.compile(r"^\s*(sum|all|overall|average|avg|mean|net|balance)\b\s*:?", re.IGNORECASE)


def split_footer(
    rows: list[list[str]], foot: int = 0, spans: list[list[int]] | None = None
) -> tuple[list[list[str]], list[list[str]]]:
    """``(body, footer)``: the footer is the table's last ``foot`` rows (its ``<tfoot>``), and before
    them any trailing rows that read as totals — a row whose first cell with text is a total word
    (``Total``, ``Subtotal``, ``Grand total``, ``Summe`` …), or a weaker one (``Sum``, ``Average`` …) in a
    row shaped unlike a data row: a cell spanning columns or an empty cell. At least one body row stays.

    ``spans`` lists per row the columns whose cell continues a span from the left (a page script knows
    them; without it, a cell repeating its left neighbour's text counts). A footer's label is shown once:
    the columns its span covers are left empty (``Total`` is not a quantity)."""
    n = len(rows)
    cont = (
        [list(s) for s in spans]
        if spans is not None and len(spans) == n
        else [[k for k in range(1, len(r)) if str(r[k]).strip() and r[k] == r[k - 1]] for r in rows]
    )
    cut = n - foot if 0 < foot < n else n
    while cut > 1:
        row = rows[cut - 1]
        label = str(next((c for c in row if str(c).strip()), ""))
        odd = bool(cont[cut - 1]) or any(not str(c).strip() for c in row)
        if not (_TOTAL.match(label) or (_SUM.match(label) and odd)):
            break
        cut -= 1
    footer = [[("" if k in cont[i] else c) for k, c in enumerate(rows[i])] for i in range(cut, n)]
    return [list(r) for r in rows[:cut]], footer


def _names(raw: list[str]) -> list[str]:
    """Column names a CSV header can carry: an empty one becomes ``colN``, a repeated one ``name_2``."""
    out: list[str] = []
    seen: set[str] = set()
    for i, name in enumerate(raw, 1):
        base = name.strip() or f"col{i}"
        n, k = base, 2
        while n in seen:
            n, k = f"{base}_{k}", k + 1
        seen.add(n)
        out.append(n)
    return out


def to_csv(columns: list[str], rows: list[list[Any]]) -> str:
    """Compact CSV (quoted only where needed, ``\\n`` line ends), header first."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    return buf.getvalue()


def _frames(page: Any) -> list[Any]:
    """The page's frames in document order, the main frame first (detached ones left out)."""
    out: list[Any] = []

    def walk(frame: Any, depth: int) -> None:
        if len(out) >= MAX_FRAMES or frame.is_detached():
            return
        out.append(frame)
        if depth < 8:
            for child in frame.child_frames:
                walk(child, depth + 1)

    walk(page.main_frame, 0)
    return out


async def _run(frame: Any, page: Any, req: dict[str, Any], main: bool) -> Any:
    try:
        return await call_script(frame, page, _script(), req)
    except Exception:
        if main:
            raise
        return None  # a frame that went away or cannot be read (as read_page: it shows as empty)


async def extract_page(
    page: Any,
    *,
    kind: str = "table",
    ref: str | None = None,
    item: str | None = None,
    fields: dict[str, str] | None = None,
    timeout_s: float | None = None,
) -> list[Grid]:
    """The data of ``page`` as :class:`Grid` values (one per table; one for items or fields).

    ``NOT_FOUND`` when there is no table or no repeated items; ``INVALID_ARGUMENT`` naming a selector that
    is malformed or matches nothing; ``STALE_REF`` for a ref whose element is gone. Reading changes nothing.
    """
    if fields is None and kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {', '.join(KINDS)}", details={"kind": kind})
    if item is not None and fields is None:
        raise InvalidArgument("item needs fields (the values to take from each item)", details={"item": item})
    state = page_refs(page)
    async with state.lock:
        frames = _frames(page)
        n: int | None = None
        if ref is not None:
            n = parse_ref(ref)
            frame = state.frames.get(n)
            if frame is None or frame.is_detached():
                raise StaleRef(f"{ref} is stale; call read_page for fresh refs", details={"ref": ref})
            frames = [frame]
        try:
            return await asyncio.wait_for(_extract(page, frames, kind, n, ref, item, fields), timeout_s)
        except TimeoutError:
            raise Timeout(
                f"reading the page's data did not finish within {timeout_s:.1f} s; name one part with ref",
                details={"url": page.url},
            ) from None


async def _extract(
    page: Any,
    frames: list[Any],
    kind: str,
    n: int | None,
    ref: str | None,
    item: str | None,
    fields: dict[str, str] | None,
) -> list[Grid]:
    main = frames[0]
    if fields is not None:
        req: dict[str, Any] = {"op": "fields", "fields": fields, "item": item, "ref": n}
        grids: list[Grid] = []
        missing: dict[str, Any] | None = None
        for frame in frames:
            out = await _run(frame, page, req, frame is main)
            if out is None:
                continue
            if out.get("stale"):
                raise StaleRef(f"{ref} is stale; call read_page for fresh refs", details={"ref": ref})
            if out.get("error") == "malformed":
                raise InvalidArgument(
                    f"selector {out['selector']!r} is not valid CSS: {out.get('message', '')}",
                    details={"selector": out["selector"]},
                )
            if out.get("error"):
                missing = missing or out
                continue
            grids.append(Grid([c["name"] for c in out["columns"]], out["rows"]))
        if not grids:
            assert missing is not None
            what = f"field {missing['field']!r}: " if missing.get("field") else ""
            raise InvalidArgument(
                f"{what}selector {missing['selector']!r} matches nothing on the page",
                details={
                    "selector": missing["selector"],
                    **({"field": missing["field"]} if missing.get("field") else {}),
                },
            )
        first = grids[0]
        return [Grid(first.columns, [r for g in grids for r in g.rows])]
    if kind == "items":
        best: dict[str, Any] | None = None
        for frame in frames:
            out = await _run(frame, page, {"op": "items", "ref": n}, frame is main)
            if isinstance(out, dict) and out.get("stale"):
                raise StaleRef(f"{ref} is stale; call read_page for fresh refs", details={"ref": ref})
            if out and (
                best is None or len(out["rows"]) * len(out["columns"]) > len(best["rows"]) * len(best["columns"])
            ):
                best = out
        if best is None:
            raise NotFound(
                "no repeated items on the page (siblings of one shape with at least two fields each); next: "
                "read_page to see how the page is built, then name the parts yourself with item (a CSS selector "
                "for one item) and fields ({name: 'css'}), or try kind='table'",
                details={"looked_for": "items", "url": page.url},
            )
        return [Grid(_names([c["name"] for c in best["columns"]]), best["rows"], ref=best.get("container"))]
    tables: list[Grid] = []
    for frame in frames:
        out = await _run(frame, page, {"op": "tables", "ref": n}, frame is main)
        if isinstance(out, dict) and out.get("stale"):
            raise StaleRef(f"{ref} is stale; call read_page for fresh refs", details={"ref": ref})
        for t in out or []:
            meta = {"header": t["header"]}
            if frame is not page.main_frame:
                meta["frame"] = frame.url
            body, footer = split_footer(t["rows"], int(t.get("foot") or 0), t.get("spans"))
            grid = Grid(_names([c["name"] for c in t["columns"]]), body, t["ref"], t["caption"], meta, footer)
            tables.append(grid)
    if not tables:
        raise NotFound(
            "no table on the page"
            + (f" under {ref}" if ref else "")
            + " (HTML table, ARIA grid or role=row rows); next: "
            + ("drop ref to look at the whole page, or " if ref else "")
            + "try kind='items' for repeated cards, read_page to see how the page is built, or wait_for the "
            "table's text if it is still loading",
            details={"looked_for": "table", "url": page.url, **({"ref": ref} if ref else {})},
        )
    return tables


_HREF_JS = "el => el.closest('a[href]') ? el.closest('a[href]').href : null"


async def _same_target(page: Any, many: AmbiguousTarget) -> Resolved:
    """The first of several matching controls when every one is a link to the same URL; else the
    ambiguity stands (clicking one of two different controls could read the wrong page)."""
    cands = (many.details or {}).get("candidates") or []
    hrefs: set[str | None] = set()
    first: Resolved | None = None
    for c in cands:
        one = await resolve_target(page, ref=c["ref"])
        hrefs.add(await one.element.evaluate(_HREF_JS))
        first = first or one
    if first is None or len(hrefs) != 1 or None in hrefs:
        raise many
    return first


#: True when a next-page control cannot be used: disabled, aria-disabled, or a link with no target.
_DISABLED_JS = """el => !!(el.disabled || el.getAttribute('aria-disabled') === 'true'
  || (el.tagName === 'A' && !el.hasAttribute('href')) || el.classList.contains('disabled')
  || (el.closest && el.closest('[aria-disabled="true"], .disabled, [disabled]')))"""


async def next_control(page: Any, target: str) -> Resolved | None:
    """The next-page control named by ``target`` (a ref or a query) when it is there and usable, else
    ``None`` (gone, stale or disabled: the last page). Ambiguity and bad input still raise."""
    try:
        found = await resolve_target(page, query=target)
    except (ElementNotFound, StaleRef):
        return None
    except AmbiguousTarget as many:  # "Next" above and below the list: one control when they go to one place
        found = await _same_target(page, many)
    try:
        disabled = bool(await found.element.evaluate(_DISABLED_JS))
    except Exception:  # noqa: BLE001 - the element went away meanwhile
        return None
    return None if disabled else found
