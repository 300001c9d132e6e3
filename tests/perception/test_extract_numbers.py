"""extract's tables as a pandas user expects them (issue 44 §2): the footer apart from the rows, columns
typed as ``pandas.read_html`` types them, ``numbers="parse"`` for currency, percent and units,
``numbers="raw"`` for text.

Fixtures: tests/fixtures/sites/extract/numbers.html (a tfoot Total row spanning two columns, a tfoot note, a trailing
"Grand total:" row with no tfoot, a last data row whose name starts like a total word, a spanned
"Average" row; numbers as 1,204 / $1,018.50 / 12 % / 3.5 kg / (1,200) / – / 1e3 / 007) and
numbers-de.html (a German page: 1.204,5 / 42,00 € / 12,5 %). Each table is compared with what
``pandas.read_html`` makes of the live DOM (``outerHTML`` after the page ran), its footer taken out.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ocnb.commands.demosite import DemoSite, serve
from ocnb.perception.extract import split_footer
from ocnb.perception.numbers import read_cell, type_columns

pytestmark = pytest.mark.browser

EXTRACT = Path(__file__).resolve().parents[1] / "fixtures" / "sites" / "extract"


@pytest.fixture(scope="module")
def pages() -> Iterator[DemoSite]:
    with serve(root=EXTRACT) as s:
        yield s


def _tables(session: Any, pages: DemoSite, name: str) -> list[dict[str, Any]]:
    assert session.call("navigate", url=pages.page(name)).ok
    r = session.call("extract")
    assert r.ok, r.error
    return list(r.data["tables"])


def _read_html(session: Any, table_id: str, drop_rows: int) -> pd.DataFrame:
    """``pandas.read_html`` of one table of the live DOM, without its footer (tfoot, or the last rows)."""
    js = (
        f"() => {{ const t = document.getElementById('{table_id}').cloneNode(true); t.querySelector('tfoot')?.remove();"
        f" for (let i = 0; i < {drop_rows}; i++) t.rows[t.rows.length - 1].remove(); return t.outerHTML; }}"
    )
    html = session.call("javascript_tool", expression=js).data["result"]
    return pd.read_html(io.StringIO(html))[0]


@pytest.mark.parametrize(("table_id", "index", "trailing"), [("sales", 0, 0), ("scores", 1, 1), ("teams", 2, 0)])
def test_each_table_is_typed_as_read_html_types_it(
    session: Any, pages: DemoSite, table_id: str, index: int, trailing: int
) -> None:
    ref = _tables(session, pages, "numbers.html")[index]["ref"]
    ours = session.call("extract", ref=ref).df
    theirs = _read_html(session, table_id, trailing)
    assert list(ours.columns) == list(theirs.columns)
    assert ours.dtypes.to_dict() == theirs.dtypes.to_dict()
    pd.testing.assert_frame_equal(ours, theirs)


def test_the_footer_is_not_a_row_and_footer_true_keeps_it_apart(session: Any, pages: DemoSite) -> None:
    tables = _tables(session, pages, "numbers.html")
    assert [t["rows"] for t in tables] == [3, 3, 2, 2, 2]
    # the Teams' "All Stars" row is data; the Orders' tfoot is a footer though it names no total
    assert [t.get("footer_rows", 0) for t in tables] == [1, 1, 0, 1, 1]
    orders = session.call("extract", ref=tables[4]["ref"], footer=True)
    assert orders.df.to_dict("list") == {"Order": ["A-1", "A-2"], "Items": [3, 5]}
    assert orders.data["footer"] == "Order,Items\nShown: 2 of 40,\n"
    sales = session.call("extract", ref=tables[0]["ref"])
    df = sales.df
    assert list(df["Region"]) == ["North", "South", "East"] and "footer" not in df.attrs
    assert df["Units"].sum() == 1204 + 87 + 12000  # summing a column no longer counts the total
    kept = session.call("extract", ref=tables[0]["ref"], footer=True, numbers="parse")
    foot = kept.df.attrs["footer"]
    assert list(foot.columns) == list(kept.df.columns) and len(foot) == 1
    row = foot.iloc[0]
    assert row["Region"] == "Total" and pd.isna(row["Units"])  # the label's span is shown once, not copied
    assert (row["Revenue ($)"], row["Share (%)"], row["Weight (kg)"]) == (1061.49, 100.0, 15.75)
    assert kept.data["footer"].splitlines()[1] == "Total,,1061.49,100.0,15.75,,"
    assert kept.df["Revenue ($)"].sum() == pytest.approx(kept.df.attrs["footer"]["Revenue ($)"][0])


def test_demo_checkout_total_is_a_footer(session: Any, site: DemoSite) -> None:
    assert session.call("navigate", url=site.page("checkout.html")).ok
    r = session.call("extract", numbers="parse")
    assert r.data["content"] == "Item,Qty,Price ($)\nNotebook,2,12.0\nFountain pen,1,18.0\n"
    assert r.data["numbers"] == {"Qty": "int", "Price ($)": "float"}
    assert r.data["tables"][0]["footer_rows"] == 1


def test_parse_reads_currency_percent_units_and_names_the_unit(session: Any, pages: DemoSite) -> None:
    ref = _tables(session, pages, "numbers.html")[0]["ref"]
    r = session.call("extract", ref=ref, numbers="parse")
    df = r.df
    assert list(df.columns) == ["Region", "Units", "Revenue ($)", "Share (%)", "Weight (kg)", "Change", "Note"]
    assert r.data["numbers"] == {
        "Units": "int",
        "Revenue ($)": "float",
        "Share (%)": "float",
        "Weight (kg)": "float",
        "Change": "float",
    }
    assert df["Revenue ($)"].tolist() == [42.0, 1018.5, 0.99]
    assert df["Share (%)"].tolist() == [12.0, 7.5, 80.5]
    assert df["Weight (kg)"].tolist() == [3.5, 12.0, 0.25]
    assert df["Change"].iloc[0] == -1200 and pd.isna(df["Change"].iloc[1]) and df["Change"].iloc[2] == -3
    assert df["Note"].tolist() == ["new", "−", "2024"]  # a text column with a year in it stays text
    assert str(df["Note"].dtype) == str(
        pd.read_html(io.StringIO("<table><tr><th>a</th></tr><tr><td>x</td></tr></table>"))[0]["a"].dtype
    )


def test_raw_keeps_the_text(session: Any, pages: DemoSite) -> None:
    ref = _tables(session, pages, "numbers.html")[2]["ref"]
    r = session.call("extract", ref=ref, numbers="raw")
    assert r.data["numbers"] == {}
    assert r.df.to_dict("list") == {"Team": ["Rovers", "All Stars"], "Wins": ["12", "9"], "Code": ["007", "010"]}


def test_a_german_page_reads_decimal_commas_with_parse(session: Any, pages: DemoSite) -> None:
    _tables(session, pages, "numbers-de.html")
    auto = session.call("extract")
    assert auto.data["numbers"] == {}  # read_html reads none of these as numbers: neither do we by default
    assert auto.df["Menge"].tolist() == ["1.204,5", "980"]
    r = session.call("extract", numbers="parse", footer=True)
    assert r.df.to_dict("list") == {
        "Filiale": ["Berlin", "Hamburg"],
        "Menge": [1204.5, 980.0],
        "Umsatz (€)": [42.0, 1018.5],
        "Anteil (%)": [12.5, 87.5],
        "Gewicht (kg)": [3.5, 12.0],
    }
    assert r.df.attrs["footer"]["Filiale"].tolist() == ["Summe"]  # a tfoot row is a footer whatever it says


# -- the rules, without a browser -------------------------------------------------------------------


def test_footer_rule_on_rows() -> None:
    rows = [["a", "1"], ["b", "2"], ["Subtotal", "3"], ["Total", "3"]]
    assert split_footer(rows) == ([["a", "1"], ["b", "2"]], [["Subtotal", "3"], ["Total", "3"]])
    assert split_footer([["Sum", "1"], ["Sum", "2"]])[1] == []  # Sum alone, in a row shaped like the others, is data
    assert split_footer([["Total", "1"]])[1] == []  # one body row always stays
    assert split_footer([["a", "1"], ["Sum", "Sum"]], spans=[[], [1]])[1] == [["Sum", ""]]
    assert split_footer([["a", "1"], ["Total", "5", "5"]], spans=[[], []])[1] == [["Total", "5", "5"]]
    assert split_footer([["a", "1"], ["Summer", "2"]])[1] == []  # a word that starts like one is not one
    assert split_footer([["a", "1"], ["note", "x"]], foot=1)[1] == [["note", "x"]]  # tfoot, whatever it says


def test_read_cell_formats() -> None:
    assert read_cell("1,204", False) == (1204.0, "")
    assert read_cell("1.204,5", True) == (1204.5, "")
    assert read_cell("(1,200)", False) == (-1200.0, "")
    assert read_cell("−5 %", False) == (-5.0, "%")
    assert read_cell("€ 3", False) == (3.0, "€")
    assert read_cell("12,34,5", False) is None and read_cell("$5 kg", False) is None
    assert type_columns(["w"], [["1 kg"], ["3 g"]], "parse").numbers == {}  # two units: left as text
