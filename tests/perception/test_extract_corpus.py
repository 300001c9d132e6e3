"""extract(kind="table") agrees with pandas.read_html on every table of both shared corpora, in Chromium.

Every page of ``../shared/corpus/real-pages/`` and ``real-pages-2/`` (served on loopback, the gzipped ones
unzipped on the fly, never copied) is loaded; each table of its live DOM that read_html reads as at least
2 rows x 2 columns of text is compared cell for cell (``bench.bench_extract``: whitespace aside, numbers as
numbers): ≥ 99% of all cells and ≥ 95% of every table. Skipped when ``../shared/corpus`` is absent.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.bench_extract import TOTAL_FLOOR, run, summarize
from bench.bench_read_page import CORPORA, SHARED, corpus_pages

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared/corpus")
def test_every_corpus_table_agrees_with_read_html() -> None:
    rows = asyncio.run(run([p for c in CORPORA for p in corpus_pages(c)]))
    s = summarize(rows)
    assert not s["errors"], s["errors"]
    assert s["tables"] >= 8 and s["pages_with_tables"] >= 4, s  # the corpora hold these tables
    assert s["agreement"] >= TOTAL_FLOOR, s["worst"]
    assert not s["below_table_floor"], s["below_table_floor"]
