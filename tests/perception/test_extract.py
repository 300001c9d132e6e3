"""extract: page data as rows — tables read_html cannot read, repeated items, named fields, pages.

Fixtures: tests/fixtures/sites/extract/ — grids.html (an ARIA grid, a role=table div table, bare role=row
rows, an HTML table with rowspan/colspan and an input, a table in an open shadow root, one in an iframe),
the shapes of repeated items people meet (search-1..3.html, products.html, feed.html, inbox.html), and
empty.html (no table, no items).
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite, serve

pytestmark = pytest.mark.browser

EXTRACT = Path(__file__).resolve().parents[1] / "fixtures" / "sites" / "extract"


@pytest.fixture(scope="module")
def pages() -> Iterator[DemoSite]:
    with serve(root=EXTRACT) as s:
        yield s


def _open(session: Any, pages: DemoSite, name: str) -> None:
    assert session.call("navigate", url=pages.page(name)).ok


def _table(df: Any, n: int) -> list[dict[str, Any]]:
    """Table ``n`` of a several-table frame, its empty columns dropped, cells as strings."""
    part = df[df["table"] == n].drop(columns=["table"]).dropna(axis=1, how="all")

    def cell(v: Any) -> str:  # numbers of a column with gaps come back as floats (3.0)
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)

    return [{k: cell(v) for k, v in r.items()} for r in part.to_dict("records")]


def test_aria_grids_div_tables_spans_shadow_roots_and_frames(session: Any, pages: DemoSite) -> None:
    _open(session, pages, "grids.html")
    r = session.call("extract")
    assert r.ok, r.error
    tables = r.data["tables"]
    assert [t.get("caption", "") for t in tables] == ["Tasks", "Plans", "Stock by warehouse", "", "", ""]
    assert [t["rows"] for t in tables] == [3, 3, 4, 2, 2, 2]
    assert tables[-1]["frame"].endswith("/frame-table.html")
    df = r.df
    assert len(df) == r.data["rows"] == 16 and list(df.columns) == r.data["columns"]
    base = pages.page("")
    assert _table(df, 1) == [  # the ARIA grid: links kept, hidden text left out, aria-colspan spread
        {"Task": "Write the report", "Task url": base + "task/1", "Owner": "Ada", "Status": "Done"},
        {"Task": "Review the budget", "Task url": base + "task/2", "Owner": "Grace", "Status": "Open"},
        {"Task": "Plan the offsite", "Task url": base + "task/3", "Owner": "Unassigned", "Status": "Unassigned"},
    ]
    assert _table(df, 2) == [
        {"Plan": "Starter", "Seats": "1", "Price": "$0"},
        {"Plan": "Team", "Seats": "10", "Price": "$49"},
        {"Plan": "Enterprise", "Seats": "Unlimited", "Price": "Call us"},
    ]
    assert _table(df, 3) == [  # two header rows joined; colspan and rowspan expanded; an input's value
        {"Item": "Bolts", "Warehouse North": "120", "Warehouse South": "80"},
        {"Item": "Nuts", "Warehouse North": "none", "Warehouse South": "none"},
        {"Item": "Washers", "Warehouse North": "5", "Warehouse South": "6"},
        {"Item": "Washers", "Warehouse North": "7", "Warehouse South": "8"},
    ]
    assert _table(df, 4) == [{"City": "Oslo", "Temp": "-3"}, {"City": "Rome", "Temp": "14"}]  # shadow root
    assert _table(df, 5) == [{"col1": "EUR", "col2": "1.08"}, {"col1": "GBP", "col2": "1.27"}]  # bare rows
    assert _table(df, 6) == [{"Player": "Kim", "Score": "31"}, {"Player": "Lee", "Score": "27"}]  # iframe
    one = session.call("extract", ref=tables[1]["ref"])  # the one table under a ref
    assert one.ok and one.data["rows"] == 3 and one.data["columns"] == ["Plan", "Seats", "Price"], one.data


ITEMS = {
    "search-1.html": (
        4,
        ["title", "url", "site", "snippet", "ref"],
        {
            "title": "Reading HTML tables with pandas",
            "url": "https://docs.example/read_html",
            "site": "docs.example/read_html",
            "snippet": "read_html turns tables into frames.",
        },
    ),
    "products.html": (
        6,
        ["url", "image", "title", "price", "rating", "ref"],
        {
            "url": "{base}p/beam",
            "image": "{base}img/beam.jpg",
            "title": "Beam floor lamp",
            "price": "$129.00",
            "rating": "4.1 stars",
        },
    ),
    "feed.html": (
        4,
        ["author", "url", "date", "text", "likes", "ref"],
        {
            "author": "Omar Haddad",
            "url": "{base}u/omar",
            "date": "Nov 21",
            "text": "New release of our map tiles is out, with faster loading for mobile.",
            "likes": "40 likes",
        },
    ),
    "inbox.html": (
        5,
        ["sender", "subject", "url", "snippet", "date", "ref"],
        {
            "sender": "Priya Raman",
            "subject": "Lunch on Friday?",
            "url": "{base}m/2",
            "snippet": "There is a new place near the station",
            "date": "08:02",
        },
    ),
}


@pytest.mark.parametrize("name", sorted(ITEMS))
def test_repeated_items_every_item_once_with_the_fields_a_person_names(
    session: Any, pages: DemoSite, name: str
) -> None:
    count, columns, second = ITEMS[name]
    _open(session, pages, name)
    r = session.call("extract", kind="items")
    assert r.ok, r.error
    assert r.data["columns"] == columns and r.data["rows"] == count, r.data["content"]
    df = r.df
    row = {k: str(v) for k, v in df.iloc[1].items() if k != "ref"}
    assert row == {k: v.format(base=pages.page("")) for k, v in second.items()}
    name = "title" if "title" in columns else columns[0]
    assert df["ref"].is_unique and df[name].is_unique  # no item split or merged
    # the item's ref is the element read_page names: it reads back as that item
    part = session.call("read_page", ref_id=df["ref"].iloc[1])
    assert part.ok and str(df[name].iloc[1]) in part.data["content"]


def test_named_fields_per_item_and_page_wide(session: Any, pages: DemoSite) -> None:
    _open(session, pages, "search-2.html")
    r = session.call("extract", item="li.result", fields={"title": "h3", "link": "h3 a@href", "text": ".snippet"})
    assert r.ok, r.error
    assert r.data["columns"] == ["title", "link", "text", "ref"]
    assert r.df[["title", "link"]].values.tolist()[0] == ["Jupyter magics explained", "https://jupyter.example/magics"]
    assert len(r.df) == 4
    flat = session.call("extract", fields={"title": "h3", "site": "cite"})
    assert flat.ok and flat.df["site"].tolist()[-1] == "data.example/prices"


def test_pages_followed_by_the_next_control_each_row_once(session: Any, pages: DemoSite) -> None:
    _open(session, pages, "search-1.html")
    before = len(session.journal_df())
    r = session.call("extract", kind="items", next="Next", max_pages=10)
    assert r.ok, r.error
    df = r.df
    # page 2 has two Next links to one place (above and below the list); page 3's Next is disabled
    assert r.data["pages"] == 3 and r.data["stopped"] == "no next control"
    assert df.groupby("page").size().to_dict() == {1: 4, 2: 4, 3: 3}
    assert df["title"].is_unique and len(df) == 11
    assert df["title"].iloc[-1] == "Testing with fixture sites"
    clicks = session.journal_df().iloc[before:]
    assert clicks["tool"].tolist().count("interact") == 2  # each page's click journaled like any other
    capped = session.call("extract", kind="items", next="Previous", max_pages=2)  # from page 3 back to 2
    assert capped.ok and capped.data["pages"] == 2 and capped.data["stopped"] == "max_pages"


def test_nothing_there_or_a_bad_selector_changes_nothing(session: Any, pages: DemoSite) -> None:
    _open(session, pages, "empty.html")
    mutations = "() => document.body.innerHTML"
    html = session.call("javascript_tool", expression=mutations).data["result"]
    none = session.call("extract")
    assert not none.ok and none.error.code == "NOT_FOUND" and none.error.details["looked_for"] == "table"
    items = session.call("extract", kind="items")
    assert not items.ok and items.error.code == "NOT_FOUND" and "repeated items" in items.error.message
    bad = session.call("extract", item="li[", fields={"t": "h3"})
    assert not bad.ok and bad.error.code == "INVALID_ARGUMENT" and bad.error.details["selector"] == "li["
    nothing = session.call("extract", item="li.result", fields={"t": "h3"})
    assert not nothing.ok and nothing.error.code == "INVALID_ARGUMENT" and "matches nothing" in nothing.error.message
    field = session.call("extract", fields={"t": "h3.missing"})
    assert not field.ok and field.error.details == {"selector": "h3.missing", "field": "t"}
    assert session.call("javascript_tool", expression=mutations).data["result"] == html
    assert session.call("tabs_context").data["tabs"][0]["url"].endswith("/empty.html")


def test_to_file_and_secrets_masked(pages: DemoSite, tmp_path: Path) -> None:
    secrets = tmp_path / "s.env"
    secrets.write_text("PRICE=$129.00\n")  # a page value that happens to be a secret is never returned
    s = ocnb.Session(home=tmp_path / "home", secrets=secrets)
    try:
        assert s.navigate(url=pages.page("products.html")).ok
        inline = s.extract(kind="items")
        assert inline.ok and "$129.00" not in json.dumps(inline.data)
        assert "${SECRET:PRICE}" in inline.df["price"].tolist()
        r = s.extract(kind="items", to_file=True)
        assert r.ok and "content" not in r.data
        path = Path(r.data["file"]["path"])
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.suffix == ".csv"
        assert "$129.00" not in path.read_text(encoding="utf-8")
        assert r.df.equals(inline.df) and r.data["rows"] == 6
    finally:
        s.close()


def test_a_plan_ending_with_extract_carries_its_rows(session: Any, pages: DemoSite) -> None:
    steps = [
        {"tool": "navigate", "args": {"url": pages.page("products.html")}},
        {"tool": "extract", "args": {"item": ".card", "fields": {"name": "h2", "price": ".price"}}},
    ]
    r = session.call("execute_plan", steps=steps)
    assert r.ok and r.data["status"] == "completed" and r.data["rows"] == 6, r.data
    assert r.df[["name", "price"]].values.tolist()[0] == ["Aurora desk lamp", "$49.00"]
