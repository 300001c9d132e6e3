"""read_page keeps every real page's words: per-page floors over both shared corpora, in real Chromium.

Every page of ``../shared/corpus/real-pages/`` and ``real-pages-2/`` (served on loopback, the gzipped
ones unzipped on the fly, never copied) is read with ``read_page``; a page with at least 50 visible
words must keep ≥ 95% of them (``document.body.innerText``, with multiplicity; a line repeated right
after itself counts once, see ``bench.bench_read_page.visible_text``) and ≥ 95% of its
person-annotated article words (3+ letters). Skipped when ``../shared/corpus`` is absent.

Names outside loopback resolve to nothing at once (``--host-resolver-rules``), as on a closed network
but without waiting for DNS; two pages are read at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from bench.bench_read_page import (
    FLOOR,
    SHARED,
    CorpusPage,
    below_floor,
    corpus_pages,
    measure,
    serve_corpora,
)
from ocnb.browser import find_chromium, launch_args
from ocnb.perception.snapshot import read_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Pages where a floor cannot be met by any reader of the rendered page, with the measurement that shows
#: why. The test checks that the reason still holds (the page's own innerText lacks the article), so an
#: entry cannot hide a regression of read_page.
#: - MSN (two pages): the page's own script replaces the whole body with "This page is not available
#:   right now" when served from another host; the rendered page has 62 words and its innerText holds
#:   1.6% / 1.3% of the article's words, as does read_page (Playwright MCP's snapshot sees the same).
ARTICLE_NOT_RENDERED = {"9eef8162bbb6", "abd9d6291b6b"}

CONCURRENCY = 2


INNER_TEXT = "document.body ? document.body.innerText : ''"


async def _read_all(pages: list[CorpusPage]) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    server, base = serve_corpora()
    rows: list[dict[str, Any]] = []
    try:
        async with async_playwright() as pw:
            path, _ = find_chromium(None, None)
            try:
                browser = await pw.chromium.launch(
                    executable_path=path,
                    args=[*launch_args(), "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
                )
            except Exception as exc:  # noqa: BLE001 - no usable browser on this machine
                pytest.skip(f"Chromium not available: {exc}")
            queue: asyncio.Queue[CorpusPage] = asyncio.Queue()
            for p in pages:
                queue.put_nowait(p)

            async def worker() -> None:
                context = await browser.new_context(viewport={"width": 1280, "height": 720})
                page = await context.new_page()
                page.on("dialog", lambda d: asyncio.ensure_future(d.accept()))
                while not queue.empty():
                    cp = queue.get_nowait()
                    try:
                        await page.goto(base + cp.path, wait_until="load", timeout=20_000)
                    except Exception:  # noqa: BLE001, S110 - a page that never fires load is still read
                        pass
                    # A page that rewrites itself while it is read (an error handler swapping the body,
                    # a clock) is read again until the text before and after the read agree, up to 3 times.
                    for _ in range(3):
                        before = await page.evaluate(INNER_TEXT)
                        out = (await read_page(page))["content"]
                        inner = await page.evaluate(INNER_TEXT)
                        if inner == before:
                            break
                        await asyncio.sleep(0.5)
                    rows.append(measure(cp, inner, out))
                await context.close()

            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            await browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return rows


@pytest.fixture(scope="module")
def corpus_rows() -> Iterator[dict[str, list[dict[str, Any]]]]:
    if not SHARED.is_dir():
        pytest.skip(f"shared corpus not found at {SHARED}")
    pages = [p for c in ("real-pages", "real-pages-2") for p in corpus_pages(c)]
    if not pages:
        pytest.skip("shared corpus holds no pages")
    loop = asyncio.new_event_loop()
    try:
        rows = loop.run_until_complete(_read_all(pages))
    finally:
        loop.close()
    yield {c: [r for r in rows if r["corpus"] == c] for c in ("real-pages", "real-pages-2")}


def _failures(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        miss = below_floor(r)
        if r["page"] in ARTICLE_NOT_RENDERED:
            # the exemption holds only while the rendered page itself lacks the article
            assert r["article_inner_recall"] < FLOOR, f"{r['page']}: the page now shows its article; drop the exemption"
            miss = [m for m in miss if not m.startswith("article")]
        if miss:
            lost = r.get("lost_lines") or r.get("lost_article_words") or r["lost_words"]
            out.append(f"{r['page']} ({r['words']} words): {', '.join(miss)}; lost: {lost}")
    return out


@pytest.mark.parametrize("corpus", ["real-pages", "real-pages-2"])
def test_every_page_keeps_its_words_and_its_article(corpus_rows: dict[str, list[dict[str, Any]]], corpus: str) -> None:
    rows = corpus_rows[corpus]
    assert rows, f"no page of {corpus} was read"
    failures = _failures(rows)
    assert not failures, f"{len(failures)} page(s) of {corpus} below the per-page floors:\n" + "\n".join(failures)
