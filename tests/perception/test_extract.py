"""extract: page data as rows — tables read_html cannot read, repeated items, named fields, pages.

Fixtures: tests/fixtures/sites/extract/ — grids.html (an ARIA grid, a role=table div table, bare role=row
rows, an HTML table with rowspan/colspan and an input, a table in an open shadow root, one in an iframe),
the shapes of repeated items people meet (search-1..3.html, products.html, feed.html, inbox.html), items
whose classes do not say what they are (grid-rotating.html: classes rotating per card, click handlers, no
links; unique-classes.html: every element's class unique to its card; featured.html: a first story with a
badge, a picture and a bigger heading; grid-ads.html: ads of another shape between the cards; columns.html:
one list laid out in three columns of 3, 2 and 1 items), and empty.html (no table, no items).
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


# Items found by shape, not by class: every row the page shows, in its order, each field in the same
# column on every card; ads and a featured card's extras left out. "{base}" is the site's root URL.
STRUCTURE = {
    "grid-rotating.html": [
        {"image": "{base}img/k1.jpg", "title": "Alder kettle", "price": "$24.00", "rating": "4.2 stars"},
        {"image": "{base}img/k2.jpg", "title": "Birch kettle", "price": "$31.50", "rating": "3.8 stars"},
        {"image": "{base}img/k3.jpg", "title": "Cedar kettle", "price": "$19.99", "rating": "4.9 stars"},
        {"image": "{base}img/k4.jpg", "title": "Dogwood kettle", "price": "$45.00", "rating": "4.0 stars"},
        {"image": "{base}img/k5.jpg", "title": "Elm kettle", "price": "$27.25", "rating": "3.5 stars"},
        {"image": "{base}img/k6.jpg", "title": "Fir kettle", "price": "$52.00", "rating": "4.6 stars"},
    ],
    "unique-classes.html": [
        {"image": "{base}img/alpha.jpg", "title": "Alpha desk lamp", "url": "{base}p/alpha", "price": "€39", "rating": "4.5/5"},
        {"image": "{base}img/bravo.jpg", "title": "Bravo floor lamp", "url": "{base}p/bravo", "price": "€120", "rating": "4.0/5"},
        {"image": "{base}img/charlie.jpg", "title": "Charlie wall light", "url": "{base}p/charlie", "price": "€64", "rating": "3.5/5"},
        {"image": "{base}img/delta.jpg", "title": "Delta pendant", "url": "{base}p/delta", "price": "€89", "rating": "4.8/5"},
    ],
    "featured.html": [
        {"title": "Harbour reopens after the storm", "url": "{base}s/harbour", "summary": "Ferries run again from Monday, the port says.", "byline": "Ana Silva", "date": "Dec 1"},
        {"title": "City library extends its hours", "url": "{base}s/library", "summary": "Open until ten on weekdays from January.", "byline": "Ben Okafor", "date": "Nov 30"},
        {"title": "New trams arrive in spring", "url": "{base}s/trams", "summary": "Twelve low-floor trams replace the old fleet.", "byline": "Chloe Martin", "date": "Nov 29"},
        {"title": "Winter market opens on the square", "url": "{base}s/market", "summary": "Forty stalls and a skating rink this year.", "byline": "Dev Patel", "date": "Nov 28"},
        {"title": "Bridge repairs finish early", "url": "{base}s/bridge", "summary": "Both lanes open a week ahead of plan.", "byline": "Eva Lind", "date": "Nov 27"},
    ],
    "grid-ads.html": [
        {"url": "{base}p/arne", "image": "{base}img/arne.jpg", "title": "Arne chair", "price": "$89.00", "rating": "4.4 stars"},
        {"url": "{base}p/bode", "image": "{base}img/bode.jpg", "title": "Bode stool", "price": "$45.00", "rating": "4.1 stars"},
        {"url": "{base}p/cleo", "image": "{base}img/cleo.jpg", "title": "Cleo armchair", "price": "$240.00", "rating": "4.7 stars"},
        {"url": "{base}p/dara", "image": "{base}img/dara.jpg", "title": "Dara bench", "price": "$130.00", "rating": "3.9 stars"},
        {"url": "{base}p/enzo", "image": "{base}img/enzo.jpg", "title": "Enzo rocker", "price": "$199.00", "rating": "4.5 stars"},
    ],
    "columns.html": [
        {"image": "{base}img/soup.jpg", "title": "Pumpkin soup", "url": "{base}r/soup", "text": "Roasted pumpkin with ginger.", "duration": "25 min"},
        {"image": "{base}img/stew.jpg", "title": "Bean stew", "url": "{base}r/stew", "text": "Three beans and smoked paprika.", "duration": "50 min"},
        {"image": "{base}img/tart.jpg", "title": "Leek tart", "url": "{base}r/tart", "text": "Crisp pastry, leeks and thyme.", "duration": "45 min"},
        {"image": "{base}img/salad.jpg", "title": "Winter salad", "url": "{base}r/salad", "text": "Kale, apple and walnuts.", "duration": "15 min"},
        {"image": "{base}img/curry.jpg", "title": "Lentil curry", "url": "{base}r/curry", "text": "Red lentils in coconut milk.", "duration": "35 min"},
        {"image": "{base}img/bread.jpg", "title": "Rye bread", "url": "{base}r/bread", "text": "A sourdough loaf for the week.", "duration": "4 h"},
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_items_found_by_their_shape_whatever_their_classes(session: Any, pages: DemoSite, name: str) -> None:
    _open(session, pages, name)
    r = session.call("extract", kind="items")
    assert r.ok, r.error
    base = pages.page("")
    want = [{k: v.format(base=base) for k, v in row.items()} for row in STRUCTURE[name]]
    df = r.df
    assert list(df.columns) == [*want[0], "ref"], r.data["content"]
    assert df.drop(columns=["ref"]).to_dict("records") == want
    assert df["ref"].is_unique
    # each row's ref is the card a person sees: it reads back with that card's title and nothing else's
    for i in (0, len(want) - 1):
        part = session.call("read_page", ref_id=df["ref"].iloc[i])
        assert part.ok and want[i]["title"] in part.data["content"]
        others = [w["title"] for j, w in enumerate(want) if j != i]
        assert not any(t in part.data["content"] for t in others), part.data["content"]
    if name == "grid-ads.html":  # the ads between the cards are no rows
        assert not df.apply(
            lambda row: row.astype(str).str.contains("Sponsored|ads.example|sofa|rug").any(), axis=1
        ).any()


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
