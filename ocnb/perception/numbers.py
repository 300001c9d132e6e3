"""Numbers in extracted columns, typed the way a pandas user expects.

``auto`` types a column as :func:`pandas.read_html` would, by the very parser it uses (pandas'
``TextParser`` with ``thousands=","``): ``1,204`` is 1204, ``12.5`` a float, ``$42.00`` stays text.
``parse`` also reads what a person reads as a number — currency (``$42.00``, ``42,00 €``), percent
(``12 %``), units (``3.5 kg``), a negative in parentheses (``(1,200)``), a Unicode minus, a decimal comma
(``1.204,5`` on a page whose language writes it so, or when the cell cannot be read otherwise) — as long
as every cell of the column carries the same unit, which then goes into the column's name
(``Price ($)``, ``Share (%)``); a dash alone (``–``, ``—``) is a missing value. ``raw`` keeps text.

A column is numeric only when every cell that is not empty (or a missing-value mark) reads as a number;
it is ``int`` when each of them is whole and none is missing, else ``float`` (NaN for the missing ones).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

__all__ = ["MODES", "Typed", "read_cell", "type_columns", "type_footer"]

MODES = ("auto", "parse", "raw")

#: Dashes a table writes for "no value" (read as missing in ``parse`` mode).
_DASHES = frozenset({"-", "–", "—", "−", "‒", "n/a", "N/A", "NA", ""})
#: Currency marks and the unit name a column takes from them.
_CURRENCY = {
    "$": "$",
    "US$": "$",
    "€": "€",
    "£": "£",
    "¥": "¥",
    "₹": "₹",
    "₩": "₩",
    "CHF": "CHF",
    "USD": "USD",
    "EUR": "EUR",
    "GBP": "GBP",
    "JPY": "JPY",
    "kr": "kr",
    "zł": "zł",
    "R$": "R$",
    "₽": "₽",
    "₺": "₺",
}
#: Units written after a number (the name kept as written).
_UNITS = (
    "%|‰|kg|mg|g|lbs?|oz|t|km|cm|mm|m|mi|ft|in|ml|cl|l|L|gal|ms|s|sec|min|h|hrs?|days?|GB|MB|KB|kB|TB|B|"
    "GHz|MHz|Hz|kWh|Wh|kW|W|V|mAh|°C|°F|px|pt|x|×"
)
_CUR = "|".join(re.escape(c) for c in sorted(_CURRENCY, key=len, reverse=True))
_CELL = re.compile(
    rf"^(?P<sign1>[-+−])?\s*(?P<open>\()?\s*(?P<sign2>[-+−])?\s*(?P<pre>{_CUR})?\s*(?P<sign3>[-+−])?\s*"
    rf"(?P<num>\d[\d.,'\u00a0\u202f ]*|[.,]\d+)\s*(?P<post>{_CUR}|{_UNITS})?\s*(?P<close>\))?$"
)
#: Languages that write 1.204,5 (a decimal comma, dots or spaces between thousands).
_COMMA_LANGS = frozenset(
    "de fr es it pt nl da sv nb nn no fi pl cs sk sl hr sr bs ro hu tr ru uk bg el lt lv et id vi is ca eu gl".split()
)


class _Fraction(float):
    """A whole value written with a fractional part (``12.00``): its column stays float."""


@dataclass
class Typed:
    """Columns after typing: their names (a unit added in ``parse`` mode), the rows with numbers in
    place of their text, and ``{column: "int" | "float"}`` for the numeric ones."""

    columns: list[str]
    rows: list[list[Any]]
    numbers: dict[str, str]
    #: Per numeric column's index, how its text was read (used on footer rows, which are not typed).
    readers: dict[int, Any]


def _comma_decimal(lang: str) -> bool:
    return lang.lower().replace("_", "-").split("-")[0] in _COMMA_LANGS


def _digits(num: str, comma_decimal: bool) -> float | None:
    """The value of a digit run with separators, or None when its grouping cannot be read."""
    s = re.sub(r"[\u00a0\u202f ']", "", num)
    if not s:
        return None
    dec, group = (",", ".") if comma_decimal else (".", ",")
    if s.count(dec) > 1:
        return None
    whole, _, frac = s.partition(dec)
    if group in whole:
        parts = whole.split(group)
        if not parts[0] or len(parts[0]) > 3 or any(len(p) != 3 for p in parts[1:]):
            return None
        whole = "".join(parts)
    if not whole.isdigit() and whole != "" or (frac and not frac.isdigit()) or (not whole and not frac):
        return None
    return float(f"{whole or 0}.{frac or 0}")


def read_cell(text: str, comma_decimal: bool) -> tuple[float, str] | None:
    """``(value, unit)`` for a cell a person reads as a number (``unit`` ``""`` when it has none), or None.
    A value written with a fractional part (``$12.00``) is a float even when it is whole."""
    t = text.strip()
    m = _CELL.match(t)
    if not m or bool(m.group("open")) != bool(m.group("close")):
        return None
    if m.group("pre") and m.group("post"):
        return None
    num = m.group("num").strip()
    value, comma = _digits(num, comma_decimal), comma_decimal
    if value is None and not comma_decimal:  # 1.204,5 or 42,00 € on a page whose language says otherwise
        value, comma = (_digits(num, True), True) if re.search(r",\d{1,2}$|\.\d{3},", num) else (None, False)
    if value is None:
        return None
    if ("," if comma else ".") in num and value.is_integer():
        value = _Fraction(value)
    signs = [m.group(k) for k in ("sign1", "sign2", "sign3") if m.group(k)]
    if len(signs) > 1:
        return None
    if (signs and signs[0] in "-−") or m.group("open"):
        value = -value
    unit = m.group("pre") or m.group("post") or ""
    return value, _CURRENCY.get(unit, unit)


def _parse_column(cells: list[str], comma_decimal: bool) -> tuple[list[float], str] | None:
    """The column's values (NaN for a missing one) and its one unit, or None when it is not numbers."""
    values: list[float] = []
    units: set[str] = set()
    seen = False
    for c in cells:
        s = c.strip()
        if s in _DASHES:
            values.append(math.nan)
            continue
        got = read_cell(s, comma_decimal)
        if got is None:
            return None
        values.append(got[0])
        units.add(got[1])
        seen = True
    if not seen or len(units) > 1:
        return None
    return values, units.pop()


def _named(name: str, unit: str) -> str:
    if not unit or f"({unit})" in name or name.endswith(unit):
        return name
    return f"{name} ({unit})" if name else f"({unit})"


def _auto_columns(columns: list[str], rows: list[list[Any]]) -> dict[int, list[Any]]:
    """The columns pandas' read_html parser types as numbers: index → values."""
    if not rows:
        return {}
    from pandas.io.parsers import TextParser  # the parser read_html uses, with its thousands=","

    width = len(columns)
    body = [[("" if v is None else str(v)) for v in (list(r) + [""] * width)[:width]] for r in rows]
    with TextParser(body, header=None, names=list(range(width)), thousands=",") as tp:
        frame = tp.read()
    out: dict[int, list[Any]] = {}
    for i in range(width):
        col = frame[i]
        if col.dtype.kind in "iuf":
            out[i] = col.tolist()
    return out


def _as_number(values: list[float]) -> tuple[list[Any], str]:
    whole = all(not math.isnan(v) and float(v).is_integer() and not isinstance(v, _Fraction) for v in values)
    if whole:
        return [int(v) for v in values], "int"
    return [None if math.isnan(v) else float(v) for v in values], "float"


def type_columns(columns: list[str], rows: list[list[Any]], mode: str = "auto", lang: str = "") -> Typed:
    """Type each column of ``rows`` by ``mode`` (:data:`MODES`); ``lang`` is the page's language (for a
    decimal comma). Cells that are already numbers (a ``page`` or ``table`` column) stay as they are."""
    if mode == "raw" or not rows:
        return Typed(list(columns), [list(r) for r in rows], {}, {})
    comma = _comma_decimal(lang)
    names = list(columns)
    out = [list(r) + [""] * (len(columns) - len(r)) for r in rows]
    numbers: dict[str, str] = {}
    readers: dict[int, Any] = {}
    auto = _auto_columns(columns, rows)
    for i, name in enumerate(columns):
        cells = [r[i] for r in out]
        if all(isinstance(c, int | float) and not isinstance(c, bool) for c in cells):
            numbers[name] = "int" if all(isinstance(c, int) for c in cells) else "float"
            continue
        if i in auto:
            values = [math.nan if v is None else float(v) for v in auto[i]]
            if any(isinstance(v, float) for v in auto[i]):  # read_html's parser made it a float column
                values = [_Fraction(v) if not math.isnan(v) else v for v in values]
            unit = ""
            readers[i] = _auto_cell
        elif mode == "parse":
            parsed = _parse_column([str(c) for c in cells], comma)
            if parsed is None:
                continue
            values, unit = parsed
            readers[i] = partial(read_cell, comma_decimal=comma)
        else:
            continue
        typed, kind = _as_number(values)
        for r, v in zip(out, typed, strict=True):
            r[i] = v
        names[i] = _named(name, unit)
        numbers[names[i]] = kind
    return Typed(names, out, numbers, readers)


def _auto_cell(text: str) -> tuple[float, str] | None:
    """One cell as read_html's parser reads it with ``thousands=","`` (for a footer cell)."""
    s = text.strip()
    if re.fullmatch(r"[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d*)?([eE][-+]?\d+)?|[-+]?\.\d+", s):
        return float(s.replace(",", "")), ""
    return None


def type_footer(typed: Typed, rows: list[list[Any]]) -> list[list[Any]]:
    """Footer rows with each cell of a numeric column read the way its column was; text it cannot read
    (a ``Total`` label spread over the column) stays text."""
    out = []
    for r in rows:
        line = list(r)
        for i, read in typed.readers.items():
            got = read(str(line[i])) if i < len(line) else None
            if got is not None:
                whole = typed.numbers.get(typed.columns[i]) == "int" and float(got[0]).is_integer()
                line[i] = int(got[0]) if whole else float(got[0])
        out.append(line)
    return out
