"""extract against pandas.read_html and against read_page, on the shared corpus and the fixture pages.

Run: ``python -m bench.bench_extract`` (needs ``../shared/corpus`` and Chromium).

1. Agreement: every page of ``real-pages/`` and ``real-pages-2/`` is loaded in Chromium; each HTML table
   of the live DOM (``document.documentElement.outerHTML``) that ``pandas.read_html`` reads as at least
   2 rows x 2 columns is compared cell for cell with ``extract(kind="table")``'s table of the same
   element, its footer rows (set apart by extract, last among read_html's rows) left out of both. Cells compare with whitespace removed and numbers as numbers (read_html turns "1.50" into
   1.5); rows are aligned in order (a row only one side kept counts as cells missed). read_html runs
   with ``keep_default_na=False, thousands=None`` so that it keeps cells as written.
2. Tokens: on the same pages, tokens (cl100k) of extract's CSV against read_page's outline (what an agent
   reads otherwise to get the same rows), as a ratio in one run; and the time extract takes per page.

Writes ``bench/results/extract.json`` and ``extract.md``.
"""

from __future__ import annotations

import asyncio
import difflib
import io
import json
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from bench.bench_read_page import CORPORA, SHARED, CorpusPage, corpus_pages, serve_corpora

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures" / "sites" / "extract"
TOTAL_FLOOR = 0.99
TABLE_FLOOR = 0.95
_NUM = re.compile(r"^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$")
_WS = re.compile(r"\s+")


def canon(value: Any) -> str:
    """A cell as compared: whitespace removed, a number as its value ("1.50" and 1.5 agree)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    s = _WS.sub("", str(value))
    if _NUM.match(s):
        f = float(s)
        return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)
    return s


def _their_header(label: Any) -> str:
    parts = label if isinstance(label, tuple) else (label,)
    seen: list[str] = []
    for p in parts:
        t = str(p)
        if isinstance(p, int) or t.startswith("Unnamed:"):
            continue
        t = re.sub(r"\.\d+$", "", t) if re.search(r"\.\d+$", t) and not _NUM.match(t) else t
        if t and (not seen or seen[-1] != t):
            seen.append(t)
    return canon(" ".join(seen))


def _our_header(name: str) -> str:
    if re.fullmatch(r"col\d+", name):
        return ""
    return canon(re.sub(r"_\d+$", "", name))


def read_html_table(html: str) -> Any:
    """The first table pandas.read_html finds in ``html`` (one table's markup), or ``None``."""
    import pandas as pd

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frames = pd.read_html(io.StringIO(html), keep_default_na=False, thousands=None)
    except (ValueError, IndexError, AssertionError, TypeError):
        return None
    return frames[0] if frames else None


def agreement(theirs: Any, columns: list[str], rows: list[list[str]]) -> tuple[int, int, list[tuple[str, str]]]:
    """``(cells agreeing, cells of read_html's table, a few differing pairs)`` for one table."""
    keep = [i for i, c in enumerate(columns) if not c.endswith(" url")]
    ours = [[canon(r[i]) for i in keep] for r in rows]
    mine_head = [_our_header(columns[i]) for i in keep]
    head = [_their_header(c) for c in theirs.columns]
    body = [[canon(v) for v in r] for r in theirs.itertuples(index=False, name=None)]
    total = len(head) * (len(body) + 1)
    diffs: list[tuple[str, str]] = []
    good = sum(1 for a, b in zip(head, mine_head, strict=False) if a == b)
    if any(head) or any(mine_head):
        diffs.extend((a, b) for a, b in zip(head, mine_head, strict=False) if a != b)
    else:
        good = len(head)
    sm = difflib.SequenceMatcher(None, ["\x1f".join(r) for r in body], ["\x1f".join(r) for r in ours], autojunk=False)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "equal":
            good += sum(len(body[i]) for i in range(a0, a1))
        elif op == "replace":
            for a, b in zip(range(a0, a1), range(b0, b1), strict=False):
                for x, y in zip(body[a], ours[b], strict=False):
                    if x == y:
                        good += 1
                    else:
                        diffs.append((x, y))
    return good, total, diffs[:5]


_TABLES_JS = """() => Array.from(document.querySelectorAll('table')).map(t => t.outerHTML)"""
_INDEX_JS = """el => el.tagName === 'TABLE' && el.getRootNode() === document
  ? Array.from(document.querySelectorAll('table')).indexOf(el) : -1"""


async def compare_page(page: Any) -> tuple[list[dict[str, Any]], int]:
    """Each table of the loaded ``page`` that read_html reads as ≥ 2 x 2 rows with text, with its
    agreement; and how many tables were left out for holding a table."""
    from ocnb.errors import OcnbError
    from ocnb.perception.extract import extract_page
    from ocnb.perception.refs import resolve_ref

    outer = await page.evaluate("() => document.documentElement.outerHTML")
    htmls = _tables_of(outer)
    try:
        grids = await extract_page(page, kind="table", timeout_s=60)
    except OcnbError:
        grids = []
    by_index: dict[int, Any] = {}
    for g in grids:
        if g.meta.get("frame") or g.ref is None:
            continue
        try:
            _, el = await resolve_ref(page, g.ref)
            i = await el.evaluate(_INDEX_JS)
            await el.dispose()
        except OcnbError:
            continue
        if i >= 0:
            by_index[i] = g
    out: list[dict[str, Any]] = []
    nested = 0
    for i, html in enumerate(htmls):
        if html is None:
            nested += 1
            continue
        theirs = read_html_table(html)
        if theirs is not None:  # rows with no text carry no data (extract leaves them out too)
            theirs = theirs[[any(canon(v) for v in r) for r in theirs.itertuples(index=False, name=None)]]
        if theirs is None or theirs.shape[0] < 2 or theirs.shape[1] < 2:
            continue
        g = by_index.get(i)
        if g is None:
            total = theirs.shape[1] * (theirs.shape[0] + 1)
            out.append(
                {"table": i, "shape": list(theirs.shape), "good": 0, "cells": total, "ratio": 0.0, "missing": True}
            )
            continue
        if g.footer:  # footer rows are set apart on purpose (read_html puts them last among its rows)
            theirs = theirs.iloc[: max(0, len(theirs) - len(g.footer))]
        good, total, diffs = agreement(theirs, g.columns, g.rows)
        out.append(
            {
                "table": i,
                "shape": list(theirs.shape),
                "good": good,
                "cells": total,
                "ratio": good / total if total else 1.0,
                "diffs": diffs,
                "footer_rows": len(g.footer),
            }
        )
    return out, nested


def _tables_of(outer: str) -> list[str | None]:
    """Every ``<table>`` of the serialized live DOM, in document order, as its own markup; ``None`` for a
    table holding another table (read_html reads the inner table's rows into the outer one as well:
    ``.//tbody//tr``, so the two cannot be compared row for row). Script and style elements are left out
    (read_html keeps their source as cell text; no reader of the page sees it)."""
    from lxml import etree, html

    doc = html.document_fromstring(outer)
    for el in list(doc.iter("script", "style", "noscript", "template")):
        el.drop_tree()
    return [
        None if t.find(".//table") is not None else etree.tostring(t, encoding="unicode", method="html")
        for t in doc.iter("table")
    ]


async def run(pages: list[CorpusPage], *, tokens: bool = False) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    from ocnb.browser import find_chromium, launch_args
    from ocnb.perception.extract import extract_page, to_csv
    from ocnb.perception.snapshot import read_page
    from ocnb.tokens import count_text

    server, base = serve_corpora()
    rows: list[dict[str, Any]] = []
    try:
        async with async_playwright() as pw:
            path, _ = find_chromium(None, None)
            browser = await pw.chromium.launch(
                executable_path=path,
                args=[*launch_args(), "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
            )
            context = await browser.new_context(viewport={"width": 1280, "height": 720})
            for cp in pages:
                page = await context.new_page()
                page.on("dialog", lambda d: asyncio.ensure_future(d.accept()))
                try:
                    await page.goto(base + cp.path, wait_until="load", timeout=20_000)
                except Exception:  # noqa: BLE001, S110 - a page that never fires load is still read
                    pass
                row: dict[str, Any] = {"corpus": cp.corpus, "page": cp.name}
                try:
                    row["tables"], row["nested"] = await compare_page(page)
                    if tokens and row["tables"]:
                        t0 = time.perf_counter()
                        grids = await extract_page(page, kind="table", timeout_s=60)
                        row["extract_s"] = time.perf_counter() - t0
                        csv = "".join(to_csv(g.columns, g.rows) for g in grids)
                        outline = (await read_page(page, timeout_s=60))["content"]
                        row["extract_tokens"] = count_text(csv)
                        row["read_page_tokens"] = count_text(outline)
                except Exception as exc:  # noqa: BLE001 - a page that cannot be read is reported
                    row["error"] = f"{type(exc).__name__}: {exc}"[:200]
                rows.append(row)
                await page.close()
            await browser.close()
    finally:
        server.shutdown()
    return rows


ITEM_PAGES = ("search-1.html", "products.html", "feed.html", "inbox.html")


async def items_tokens() -> list[dict[str, Any]]:
    """On the fixture pages of repeated items: tokens of extract(kind="items") against read_page, and time."""
    from playwright.async_api import async_playwright

    from ocnb.browser import find_chromium, launch_args
    from ocnb.commands.demosite import serve
    from ocnb.perception.extract import extract_page, to_csv
    from ocnb.perception.snapshot import read_page
    from ocnb.tokens import count_text

    out: list[dict[str, Any]] = []
    with serve(root=FIXTURES) as site:
        async with async_playwright() as pw:
            path, _ = find_chromium(None, None)
            browser = await pw.chromium.launch(executable_path=path, args=[*launch_args(), "--disable-gpu"])
            page = await browser.new_page()
            for name in ITEM_PAGES:
                await page.goto(site.page(name), wait_until="load")
                t0 = time.perf_counter()
                grids = await extract_page(page, kind="items", timeout_s=60)
                took = time.perf_counter() - t0
                csv = to_csv(grids[0].columns, grids[0].rows)
                outline = (await read_page(page, timeout_s=60))["content"]
                out.append(
                    {
                        "page": name,
                        "rows": len(grids[0].rows),
                        "extract_tokens": count_text(csv),
                        "read_page_tokens": count_text(outline),
                        "extract_s": took,
                    }
                )
            await browser.close()
    return out


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tables = [dict(t, page=r["page"]) for r in rows for t in r.get("tables", [])]
    good = sum(t["good"] for t in tables)
    cells = sum(t["cells"] for t in tables)
    worst = sorted(tables, key=lambda t: t["ratio"])[:8]
    return {
        "pages": len(rows),
        "pages_with_tables": sum(1 for r in rows if r.get("tables")),
        "nested_left_out": sum(r.get("nested", 0) for r in rows),
        "tables": len(tables),
        "footer_rows": sum(t.get("footer_rows", 0) for t in tables),
        "cells": cells,
        "agreement": good / cells if cells else 1.0,
        "below_table_floor": [t for t in tables if t["ratio"] < TABLE_FLOOR],
        "worst": worst,
        "errors": [r for r in rows if r.get("error")],
    }


def main(argv: list[str] | None = None) -> None:
    if not SHARED.is_dir():
        sys.exit(f"no corpus at {SHARED}")
    pages = [p for c in CORPORA for p in corpus_pages(c)]
    rows = asyncio.run(run(pages, tokens=True))
    s = summarize(rows)
    with_tok = [r for r in rows if r.get("extract_tokens")]
    ext = sum(r["extract_tokens"] for r in with_tok)
    rp = sum(r["read_page_tokens"] for r in with_tok)
    s["tokens"] = {"extract": ext, "read_page": rp, "ratio": ext / rp if rp else None}
    s["extract_s_per_page"] = sum(r["extract_s"] for r in with_tok) / len(with_tok) if with_tok else None
    items = asyncio.run(items_tokens())
    ie, ir = sum(r["extract_tokens"] for r in items), sum(r["read_page_tokens"] for r in items)
    s["items"] = {"pages": items, "extract": ie, "read_page": ir, "ratio": ie / ir if ir else None}
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "extract.json").write_text(json.dumps({"summary": s, "pages": rows}, indent=1, default=str) + "\n")
    md = [
        "# extract vs pandas.read_html and read_page (one run)",
        "",
        f"- pages: {s['pages']}, with a read_html table ≥ 2x2: {s['pages_with_tables']}; tables: {s['tables']} "
        f"(tables holding a table, left out: {s['nested_left_out']})",
        f"- cells agreeing: {s['agreement']:.2%} of {s['cells']} (floor {TOTAL_FLOOR:.0%}); "
        f"tables below {TABLE_FLOOR:.0%}: {len(s['below_table_floor'])}",
        f"- tokens, same pages (tables): extract {ext:,} vs read_page {rp:,} = {s['tokens']['ratio']:.3f}x",
        f"- tokens, fixture pages (items: search, products, feed, inbox): extract {ie:,} vs read_page {ir:,} "
        f"= {s['items']['ratio']:.3f}x; extract time per page "
        f"{sum(r['extract_s'] for r in items) / len(items):.3f} s",
        f"- extract time per page: {s['extract_s_per_page']:.3f} s" if s["extract_s_per_page"] else "",
        "",
        "| page | table | shape | agreement |",
        "| --- | --- | --- | --- |",
        *[f"| {t['page']} | {t['table']} | {t['shape'][0]}x{t['shape'][1]} | {t['ratio']:.1%} |" for t in s["worst"]],
    ]
    (out / "extract.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
