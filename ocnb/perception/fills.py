"""Fills that are checked: what a field takes, a person's value in the field's format, and a read-back.

A fill that did nothing must never read as done. :func:`prepare` looks at the field before anything is
set: a date, time, month or week field takes one ISO format only, so a value a person would write
(``10/11/2011`` on an en-US page, ``8:04 PM``) is converted when it is unambiguous and refused with
``INVALID_VALUE`` (naming the format) when it is not; an option that a select does not have is refused
at once. :func:`verify` reads the field back after the action and compares it with what was asked: a
value cut by ``maxlength``, a number outside ``min``/``max``/``step``, a range that snapped, a box that a
script unticked, a select that kept its old option, text its ``pattern`` refuses, a date outside
``min``/``max`` — each is ``INVALID_VALUE``, and the field is first put back as it was before
(:func:`restore`, with the ``input``/``change`` events an undo fires), so a refused value is never
submitted. A date the calendar lacks (``31/02/2024``) is refused before anything is set. Password fields never have their value put in an error, and a value cut by ``maxlength`` is
said as lengths (what it kept is a prefix of what was asked, which may be a secret).

:func:`fill_plain` is the same check for a field already known to be an enabled, editable plain text
field (a replayed step's locator vouches for it): only its value is read before, and the read-back is
Playwright's own ``input_value``; only a field that does not hold what was asked is read in full, to
say why in the very words :func:`verify` uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidValue

__all__ = [
    "FORMATS",
    "PATTERN_MISMATCH",
    "PLAIN_TEXT_TYPES",
    "RESTORE_JS",
    "Field",
    "ReadBack",
    "field_of",
    "fill_plain",
    "missing_day",
    "plain_text",
    "prepare",
    "refused_check",
    "restore",
    "to_format",
    "verify",
]

#: The one format each typed field takes (``value`` as the HTML spec defines it), and an example.
FORMATS: dict[str, tuple[str, str]] = {
    "date": ("YYYY-MM-DD", "2011-10-11"),
    "time": ("HH:MM (24-hour, seconds optional)", "20:04"),
    "datetime-local": ("YYYY-MM-DDTHH:MM", "2011-10-11T20:04"),
    "month": ("YYYY-MM", "2011-10"),
    "week": ("YYYY-Www", "2011-W41"),
    "number": ("a number", "42"),
    "range": ("a number", "50"),
    "color": ("#rrggbb", "#ff0000"),
}
_ISO = {
    "date": re.compile(r"^\d{4,}-\d{2}-\d{2}$"),
    "time": re.compile(r"^\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$"),
    "datetime-local": re.compile(r"^\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$"),
    "month": re.compile(r"^\d{4,}-\d{2}$"),
    "week": re.compile(r"^\d{4,}-W\d{2}$"),
    "color": re.compile(r"^#[0-9a-fA-F]{6}$"),
}
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        )
    )
    for m in names.split()
}

#: What the page says about a field, read in one round trip before acting.
_FIELD_JS = """e => {
  const tag = e.tagName.toLowerCase();
  const lang = (e.closest('[lang]') || document.documentElement).getAttribute('lang') || navigator.language || '';
  const out = {tag, type: tag === 'input' ? (e.type || 'text').toLowerCase() : '', editable: !!e.isContentEditable,
               lang, value: e.isContentEditable && tag !== 'input' && tag !== 'textarea' ? e.innerText : (e.value ?? ''),
               checked: !!e.checked, readonly: !!e.readOnly || e.getAttribute('aria-readonly') === 'true',
               disabled: !!e.disabled || e.getAttribute('aria-disabled') === 'true'};
  for (const a of ['min', 'max', 'step', 'maxlength', 'pattern']) { const v = e.getAttribute(a); if (v !== null) out[a] = v; }
  if (tag === 'select') {
    out.multiple = e.multiple;
    out.options = Array.from(e.options).map(o => [o.value, (o.label || o.textContent || '').trim()]);
    out.selected = Array.from(e.options).filter(o => o.selected).map(o => o.index);
  }
  if (e.isContentEditable && tag !== 'input' && tag !== 'textarea') out.html = e.innerHTML;
  return out;
}"""

#: The field after the action: its value (or checked state, or selected options) and validity.
_READ_JS = """e => {
  const tag = e.tagName.toLowerCase();
  const v = e.validity || {};
  return {value: e.isContentEditable && tag !== 'input' && tag !== 'textarea' ? e.innerText : (e.value ?? ''),
          checked: !!e.checked,
          selected: tag === 'select' ? Array.from(e.selectedOptions).map(o => [o.value, (o.label || o.textContent || '').trim()]) : null,
          bad: !!v.badInput, over: !!v.rangeOverflow, under: !!v.rangeUnderflow, step: !!v.stepMismatch,
          long: !!v.tooLong, pattern: !!v.patternMismatch};
}"""

#: Put a field back as :data:`_FIELD_JS` read it, as a person's undo would: the value set through the
#: element's own setter (so a framework that watches it sees the change), then ``input`` (inputType
#: ``historyUndo``) and ``change``. Nothing is fired when the field already holds what it held.
RESTORE_JS = """(e, prev) => {
  const tag = e.tagName.toLowerCase();
  const rich = e.isContentEditable && tag !== 'input' && tag !== 'textarea';
  const now = () => tag === 'select' ? Array.from(e.options).filter(o => o.selected).map(o => o.index).join(',')
    : prev.box ? String(!!e.checked) : rich ? e.innerHTML : String(e.value ?? '');
  const was = tag === 'select' ? prev.selected.join(',') : prev.box ? String(prev.checked) : rich ? prev.html : prev.value;
  if (now() === was) return false;
  if (tag === 'select') {
    for (const o of e.options) o.selected = prev.selected.includes(o.index);
  } else if (prev.box) {
    e.checked = prev.checked;
  } else if (rich) {
    e.innerHTML = prev.html;
  } else {
    const proto = tag === 'textarea' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(e, prev.value);
  }
  e.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'historyUndo'}));
  e.dispatchEvent(new Event('change', {bubbles: true}));
  return true;
}"""


@dataclass(frozen=True)
class Field:
    """A field as :data:`_FIELD_JS` reads it."""

    tag: str
    type: str
    editable: bool
    lang: str
    value: str
    checked: bool
    attrs: dict[str, str]
    options: list[tuple[str, str]]
    multiple: bool = False
    readonly: bool = False
    disabled: bool = False
    #: The indexes of a select's selected options; a contenteditable's HTML (for :func:`restore`).
    selected: tuple[int, ...] = ()
    html: str = ""

    @property
    def secret(self) -> bool:
        return self.type == "password"

    @property
    def textlike(self) -> bool:
        return self.tag == "textarea" or self.editable or (self.tag == "input" and self.type not in _NOT_TEXT)


_NOT_TEXT = frozenset({"checkbox", "radio", "file", "button", "submit", "reset", "image", "hidden"})

#: Input types whose value a fill sets as given (no format to convert to, no number to check): in an
#: enabled, editable field of one of these (or a textarea) :func:`prepare` changes and refuses nothing.
PLAIN_TEXT_TYPES = frozenset({"text", "email", "password", "search", "tel", "url"})


def plain_text(tag: object, kind: object) -> bool:
    """Whether an element of ``tag`` and input ``kind`` (as a fingerprint records them) is a textarea or
    an input of one of :data:`PLAIN_TEXT_TYPES`."""
    return tag == "textarea" or (tag == "input" and kind in PLAIN_TEXT_TYPES)


async def field_of(element: Any) -> Field:
    """What ``element`` is as a field (one round trip)."""
    raw = await element.evaluate(_FIELD_JS)
    attrs = {k: str(raw[k]) for k in ("min", "max", "step", "maxlength", "pattern") if k in raw}
    options = [(str(v), str(label)) for v, label in raw.get("options") or []]
    return Field(
        raw["tag"],
        raw["type"],
        bool(raw["editable"]),
        str(raw["lang"]),
        str(raw["value"]),
        bool(raw["checked"]),
        attrs,
        options,
        bool(raw.get("multiple")),
        bool(raw.get("readonly")),
        bool(raw.get("disabled")),
        tuple(int(i) for i in raw.get("selected") or ()),
        str(raw.get("html") or ""),
    )


async def restore(element: Any, before: Field) -> bool:
    """Put ``element`` back as it was when ``before`` was read, firing ``input`` and ``change`` as an
    undo would; True when something was put back. Called when a value was refused after it was set, so
    that a refusal changes nothing (the form submits what it held before)."""
    prev = {
        "value": before.value,
        "checked": before.checked,
        "box": before.tag == "input" and before.type in ("checkbox", "radio"),
        "selected": list(before.selected),
        "html": before.html,
    }
    return bool(await element.evaluate(RESTORE_JS, prev))


def _two(n: int) -> str:
    return f"{n:02d}"


def _month_first(lang: str) -> bool:
    """Whether ``1/2/2011`` reads month first on a page in ``lang`` (en-US and bare ``en``)."""
    lang = lang.lower().replace("_", "-")
    return lang in ("", "en", "en-us") or lang.endswith("-us")


def _date(text: str, lang: str) -> str | None:
    """``YYYY-MM-DD`` for a date a person wrote, or None when it is not one (or ambiguous)."""
    t = text.strip().lower().replace(",", " ")
    m = re.fullmatch(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", t)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        m = re.fullmatch(r"(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})", t)
        if m:
            a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if a > 12 >= b:
                d, mo = a, b
            elif b > 12 >= a:
                mo, d = a, b
            elif "." in t or not _month_first(lang):
                d, mo = a, b
            else:
                mo, d = a, b
        else:
            words = t.split()
            names = [w for w in words if w.rstrip(".") in _MONTHS]
            nums = [int(w.rstrip("stndrh.")) for w in words if re.fullmatch(r"\d{1,4}(st|nd|rd|th)?\.?", w)]
            if len(names) != 1 or len(nums) != 2:
                return None
            mo = _MONTHS[names[0].rstrip(".")]
            years = [n for n in nums if n > 31]
            if len(years) != 1:
                return None
            y = years[0]
            d = next(n for n in nums if n != y)
    if not (1 <= mo <= 12 and 1 <= d <= 31):
        return None
    return f"{y:04d}-{_two(mo)}-{_two(d)}"


def _time(text: str) -> str | None:
    """``HH:MM`` (``:SS`` kept) for a time a person wrote (``8:04 PM``, ``20:04``, ``8pm``), or None."""
    t = text.strip().lower().replace(".", "")
    m = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(am|pm|a|p)?", t)
    if not m or (m.group(2) is None and m.group(4) is None):
        return None
    h, mi = int(m.group(1)), int(m.group(2) or 0)
    half = m.group(4)
    if half:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if half.startswith("p") else 0)
    if h > 23 or mi > 59:
        return None
    out = f"{_two(h)}:{_two(mi)}"
    if m.group(3) is not None:
        out += f":{m.group(3)}"
    return out


def _month(text: str, lang: str) -> str | None:
    t = text.strip().lower().replace(",", " ")
    m = re.fullmatch(r"(\d{1,2})[/.-](\d{4})", t) or None
    if m:
        mo, y = int(m.group(1)), int(m.group(2))
    else:
        m = re.fullmatch(r"(\d{4})[/.](\d{1,2})", t)
        if m:
            y, mo = int(m.group(1)), int(m.group(2))
        else:
            words = t.split()
            if len(words) != 2 or words[0].rstrip(".") not in _MONTHS or not re.fullmatch(r"\d{4}", words[1]):
                return None
            mo, y = _MONTHS[words[0].rstrip(".")], int(words[1])
    return f"{y:04d}-{_two(mo)}" if 1 <= mo <= 12 else None


def _sane(iso: str) -> bool:
    """Whether the numbers of an ISO-shaped value are in range (no month 13, no 25:99)."""
    m = re.search(r"\d{4,}-(\d{2})(?:-(\d{2}))?", iso)
    if m and not (1 <= int(m.group(1)) <= 12 and (m.group(2) is None or 1 <= int(m.group(2)) <= 31)):
        return False
    w = re.search(r"-W(\d{2})$", iso)
    if w and not 1 <= int(w.group(1)) <= 53:
        return False
    t = re.search(r"(?:^|T)(\d{2}):(\d{2})", iso)
    return not t or (int(t.group(1)) <= 23 and int(t.group(2)) <= 59)


_MONTH_NAMES = ("January February March April May June July August September October November December").split()


def missing_day(iso: str) -> str | None:
    """Why the ``YYYY-MM-DD`` that ``iso`` starts with names no day of the calendar (``February 2024 has
    29 days``), or None when it does (or is no such date)."""
    m = re.match(r"(\d{4,})-(\d{2})-(\d{2})", iso)
    if not m:
        return None
    y, mo, d = (int(g) for g in m.groups())
    if not 1 <= mo <= 12:
        return None
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[mo - 1]
    return f"{_MONTH_NAMES[mo - 1]} {y} has {days} days" if d > days else None


def to_format(kind: str, text: str, lang: str = "en-US") -> str | None:
    """``text`` in the one format a ``kind`` field (``date``, ``time`` …) takes; None when it cannot be
    read without guessing, or names a day the calendar lacks (:func:`missing_day`). A value already in
    that format is returned as it is."""
    shaped = _shape(kind, text, lang)
    return None if shaped is None or missing_day(shaped) else shaped


def _shape(kind: str, text: str, lang: str) -> str | None:
    """``text`` in the format of a ``kind`` field, its numbers in range but not checked against the calendar."""
    text = text.strip()
    iso = _ISO.get(kind)
    if iso is not None and iso.match(text):
        return text if _sane(text) else None
    if kind == "date":
        return _date(text, lang)
    if kind == "time":
        return _time(text)
    if kind == "month":
        return _month(text, lang)
    if kind == "datetime-local":
        m = re.fullmatch(r"(.+?)(?:\s*(?:T|\s|,|\bat\b)\s*)(\d{1,2}(?::\d{2}){0,2}\s*(?:[ap]\.?m?\.?)?)", text, re.I)
        if not m:
            return None
        d, t = _date(m.group(1), lang), _time(m.group(2))
        return f"{d}T{t}" if d and t else None
    return None


def _refuse(f: Field, asked: Any, why: str, **details: Any) -> InvalidValue:
    kind = f.type if f.tag == "input" else f.tag
    fmt = FORMATS.get(f.type)
    out: dict[str, Any] = {"field": kind, **details}
    if fmt:
        out["expected"] = fmt[0]
    if f.secret:
        out.pop("holds", None)
    else:
        out["asked"] = asked
    msg = why
    if fmt:
        msg += f"; a {kind} field takes {fmt[0]} (e.g. {fmt[1]})"
    return InvalidValue(msg, details=out)


def prepare(f: Field, action: str, value: Any) -> tuple[Any, dict[str, str] | None]:
    """``(value to set, converted)`` for ``action`` on field ``f`` — or ``INVALID_VALUE`` before anything
    is set. ``converted`` is ``{from, to}`` when a person's value was put into the field's format."""
    if f.disabled or (f.readonly and action in ("fill", "type")):
        state = "disabled" if f.disabled else "read-only"
        raise InvalidValue(
            f"the field is {state}: it takes no value", details={"field": f.type or f.tag, "state": state}
        )
    if action in ("fill", "type") and f.tag == "input" and f.type in _ISO:
        text = "" if value is None else str(value)
        if text == "" and action == "fill":
            return text, None  # clearing a field is always possible
        to = to_format(f.type, text, f.lang)
        if to is None:
            gap = missing_day(_shape(f.type, text, f.lang) or "")
            if gap:
                raise _refuse(f, text, f"{text!r} is a date that does not exist: {gap}", holds=f.value)
            raise _refuse(f, text, f"{text!r} is not a {f.type} this field can take", holds=f.value)
        if action == "type":
            return text, None  # keys are typed as given; verify() compares with `to`
        return to, ({"from": text, "to": to} if to != text else None)
    if action in ("fill", "type") and f.tag == "input" and f.type in ("number", "range") and value not in (None, ""):
        try:
            float(str(value).strip())
        except ValueError:
            raise _refuse(f, value, f"{value!r} is not a number", holds=f.value) from None
    if action == "select" and f.tag == "select":
        wanted = value if isinstance(value, list) else [value]
        known = {v for v, _ in f.options} | {label for _, label in f.options}
        missing = [str(w) for w in wanted if str(w) not in known]
        if missing:
            shown = [label or v for v, label in f.options[:12]]
            raise _refuse(
                f,
                value,
                f"the select has no option {missing[0]!r} (options: {', '.join(shown)}"
                + (", …" if len(f.options) > 12 else "")
                + ")",
                holds=f.value,
                options=shown,
            )
    return value, None


def _same_text(a: str, b: str) -> bool:
    """Equal, or equal once case, spacing and punctuation a page's formatter adds are set aside."""
    if a == b:
        return True
    norm = re.compile(r"[\W_]+", re.UNICODE)
    return bool(norm.sub("", a).casefold() == norm.sub("", b).casefold() and norm.sub("", a))


async def verify(element: Any, f: Field, action: str, asked: Any) -> None:
    """Read the field back after ``action`` and raise ``INVALID_VALUE`` when it does not hold ``asked``."""
    after = await element.evaluate(_READ_JS)
    holds = str(after["value"])
    if action in ("check", "uncheck"):
        if f.tag == "input" and f.type in ("checkbox", "radio") and bool(after["checked"]) != (action == "check"):
            raise _refuse(
                f, action, f"the box is still {'un' if action == 'check' else ''}checked", holds=action != "check"
            )
        return
    if action == "select" and f.tag == "select":
        wanted = [str(w) for w in (asked if isinstance(asked, list) else [asked])]
        got = after["selected"] or []
        if not all(any(w in (v, label) for v, label in got) for w in wanted):
            raise _refuse(f, asked, "the select did not keep the option asked", holds=[label or v for v, label in got])
        return
    if action not in ("fill", "type") or not (f.textlike or f.tag == "input"):
        return
    text = "" if asked is None else str(asked)
    if f.tag == "input" and f.type in _ISO:
        want = to_format(f.type, text, f.lang) or text
        if holds != want and not (f.type == "time" and holds.startswith(want)):
            raise _refuse(f, text, f"the field holds {holds!r}, not {want!r}", holds=holds)
        problems = [
            f"{p} {f.attrs[k]}"
            for p, flag, k in (("after max", "over", "max"), ("before min", "under", "min"))
            if after[flag] and k in f.attrs
        ]
        if problems:
            raise _refuse(f, text, f"{want!r} is not a value this field takes ({'; '.join(problems)})", holds=holds)
        return
    if f.type in ("number", "range"):
        problems = [
            p for p, flag in (("above max", "over"), ("below min", "under"), ("off step", "step")) if after[flag]
        ]
        if after["bad"] or holds == "" and text != "":
            problems.append("not a number")
        limits = ", ".join(f"{k} {f.attrs[k]}" for k in ("min", "max", "step") if k in f.attrs)
        if not problems:
            try:
                if float(holds) == float(text):
                    return
            except ValueError:
                pass
            problems.append(f"holds {holds}")
        raise _refuse(
            f,
            text,
            f"{text!r} is not a value this field takes ({'; '.join(problems)}"
            + (f"; {limits}" if limits else "")
            + ")",
            holds=holds,
            **{k: f.attrs[k] for k in ("min", "max", "step") if k in f.attrs},
        )
    if action == "type":
        ok = text in holds or _same_text(text, holds[-len(text) :] if len(holds) >= len(text) else holds)
    else:
        ok = _same_text(text, holds) or (f.editable and _same_text(text, holds.strip()))
    if not ok and "maxlength" in f.attrs and len(holds) < len(text) and text.startswith(holds):
        # what it kept is a prefix of what was asked: said as lengths only (the value may be a secret)
        cut = len(text) - len(holds)
        raise _refuse(
            f,
            "" if f.secret else text,
            f"the field keeps at most {f.attrs['maxlength']} characters (maxlength): the last {cut} of the "
            f"{len(text)} characters asked were cut",
            maxlength=f.attrs["maxlength"],
            kept=len(holds),
        )
    if not ok:
        why = f"the field holds {'a different value' if f.secret else repr(holds)}, not what was asked"
        raise _refuse(f, "" if f.secret else text, why, holds=holds)
    if after.get("pattern"):
        shown = "the value" if f.secret else repr(text)
        raise _refuse(
            f,
            "" if f.secret else text,
            f"{shown} does not match the field's pattern {f.attrs.get('pattern', '')!r}",
            pattern=f.attrs.get("pattern", ""),
        )


#: Thrown by a read-back locator's query (:class:`ReadBack`) when the field's value fails its ``pattern``.
PATTERN_MISMATCH = "ocnb-verified: the value does not match the field's pattern"


@dataclass(frozen=True)
class ReadBack:
    """How a fused fill (:func:`fill_plain`) reads its field back and undoes a refused value: locators
    from :func:`ocnb.perception.selectors.verified_locator` of the very element the fill's locator
    verified and filled (kept in the page by that locator's query, just before Playwright fills it,
    with its value then; resolved and verified again only when it has left the document), without the
    ``fillable`` condition (a field a page locks once it is filled still reads back). So no read is
    needed before the fill, and the read-back verifies nothing twice."""

    #: ``input_value`` reads the field; its query fails with :data:`PATTERN_MISMATCH` when the value fails the field's pattern
    checked: Any
    #: the element as it is (for :func:`field_of` when the value was refused)
    plain: Any
    #: its query puts back the value the fill's locator kept (as :func:`restore` does, firing ``input`` and ``change``)
    undo: Any


async def fill_plain(element: Any, read_back: ReadBack, value: Any, timeout: int) -> None:
    """Fill ``element`` — a locator that matches only an enabled, editable plain text field (see
    :func:`plain_text`) and keeps its value before the fill — and read the field back through
    ``read_back``; ``INVALID_VALUE`` as :func:`verify` says it when the field does not hold ``value``
    (cut by ``maxlength``, changed by a script, refused by its ``pattern`` …), and the field is then put
    back as it was (``read_back.undo``).

    Two round trips in Playwright's utility world (fill; read-back with the pattern check in the same
    query) where the general path takes four or more, some in the page's main world: with such a field
    :func:`prepare` would leave ``value`` as it is, and ``input_value`` reads it back without a script
    of ours in the page's own world (the first locator evaluate in the page's main world of a new
    document costs 60-130 ms: Playwright injects its script there too)."""
    text = "" if value is None else str(value)
    await element.fill(text, timeout=timeout)
    try:
        if _same_text(text, await read_back.checked.input_value(timeout=timeout)):
            return
    except Exception as exc:  # noqa: BLE001 - only a pattern mismatch is told here
        if PATTERN_MISMATCH not in str(exc):
            raise
    after = await field_of(read_back.plain)
    try:
        await verify(read_back.plain, after, "fill", text)  # says why, as a checked fill does
    except InvalidValue:
        await read_back.undo.input_value(timeout=timeout)
        raise


def refused_check(f: Field, action: str, exc: BaseException) -> InvalidValue | None:
    """``INVALID_VALUE`` for a check or uncheck the page undid at once (Playwright says "did not change
    its state"); None for any other failure."""
    if action in ("check", "uncheck") and "did not change its state" in str(exc):
        return _refuse(
            f,
            action,
            f"the page undid the {action}: the box is {'un' if action == 'check' else ''}checked",
            holds=action != "check",
        )
    return None
