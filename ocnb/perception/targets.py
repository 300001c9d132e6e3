"""Targets: turn a ref or a plain-words query into exactly one live element — or say why not.

A query is resolved deterministically, stage by stage, and the first stage with any match wins:

1. role + name: the accessible name equals the query (with a role hint such as "button" or
   "field" in the query, the role must fit);
2. label: a ``<label>`` text equals it;
3. placeholder equals it;
4. ``name`` attribute, id or data-testid equals it;
5. visible text equals it (the deepest element whose text is exactly the query, as the control a click
   on it acts on: its nearest interactive ancestor);
6. fuzzy: the closest names by similarity (only a clear winner counts).

With an ``action`` that needs a field (fill, type, select, check; ``set`` for form_input), only the
candidates that can take it are considered (:func:`~.affordance.takes`): a Search button never makes a
search box ambiguous for a fill.

One match → :class:`Resolved`. Several → ``AMBIGUOUS_TARGET`` listing the candidates with their role,
name and context (the row, card or form they sit in), in the message and in ``details``; a candidate
whose name comes from aria-label, aria-labelledby or title and differs from what it shows also carries
that ``text`` (as :func:`find`'s candidates do), so twins named alike are told apart. None →
``ELEMENT_NOT_FOUND`` with the nearest candidates. Resolution never acts.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from ..errors import AmbiguousTarget, ElementNotFound, InvalidArgument
from .affordance import takes
from .point import element_at, parse_point
from .refs import REF_PATTERN, call, page_refs, resolve_ref

__all__ = ["Resolved", "candidates", "changed_since", "find", "focused", "query_dom", "resolve_target"]

#: Words in a query that hint at a role (and are dropped from the name to match).
ROLE_HINTS: dict[str, tuple[str, ...]] = {
    "button": ("button",),
    "btn": ("button",),
    "link": ("link",),
    "field": ("textbox", "searchbox", "combobox", "spinbutton"),
    "input": ("textbox", "searchbox", "combobox", "spinbutton", "checkbox", "radio"),
    "textbox": ("textbox", "searchbox"),
    "box": ("textbox", "searchbox", "checkbox", "combobox"),
    "checkbox": ("checkbox", "switch"),
    "radio": ("radio",),
    "dropdown": ("combobox", "listbox"),
    "select": ("combobox", "listbox"),
    "menu": ("combobox", "menuitem", "button"),
    "tab": ("tab",),
    "area": ("textbox",),
}
STOPWORDS = {"the", "a", "an", "on", "in", "to", "of", "for", "this", "that", "click", "press", "type"}
_ROLE_NAME = re.compile(r'^\s*(\w+)\s+"(.*)"\s*$')


@dataclass
class Resolved:
    """One resolved element: its handle, frame, ref, role and name (plus how it was found)."""

    element: Any
    frame: Any
    ref: str
    role: str
    name: str
    via: str = "ref"
    #: The page's frames at resolution time (``frame_ordinal`` indexes them).
    frames: tuple[Any, ...] = ()

    @property
    def frame_ordinal(self) -> int:
        """Index of the element's frame in ``page.frames`` (0: the main frame)."""
        try:
            return list(self.frames).index(self.frame)
        except ValueError:
            return 0

    def describe(self) -> dict[str, Any]:
        return {"ref": self.ref, "role": self.role, "name": self.name}


async def candidates(page: Any) -> list[dict[str, Any]]:
    """Every visible interactive (or draggable / named region) element of every frame, with refs."""
    state = page_refs(page)
    out: list[dict[str, Any]] = []
    async with state.lock:
        for ordinal, frame in enumerate(page.frames):
            try:
                items = await call(frame, page, {"op": "candidates"})
            except Exception:  # noqa: BLE001 - a frame that went away has no candidates
                continue
            for item in items:
                item["frame_ordinal"] = ordinal
                out.append(item)
    return out


def _norm(s: str | None) -> str:
    return " ".join((s or "").lower().split())


def parse_query(query: str) -> tuple[str, tuple[str, ...], str | None]:
    """``(core text, role hints, explicit role)`` of a query such as ``the email field``."""
    m = _ROLE_NAME.match(query)
    if m:
        return _norm(m.group(2)), (m.group(1).lower(),), m.group(1).lower()
    words = _norm(query).strip(" .!?\"'").split()
    hints: tuple[str, ...] = ()
    kept = []
    for i, w in enumerate(words):
        if w in ROLE_HINTS and (i == len(words) - 1 or i == 0) and len(words) > 1:
            hints = ROLE_HINTS[w]
            continue
        kept.append(w)
    while kept and kept[0] in STOPWORDS and len(kept) > 1:
        kept.pop(0)
    core = " ".join(kept)
    return core, hints, None


def _similar(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    if a in b or b in a:
        return 0.6 + 0.4 * min(len(a), len(b)) / max(len(a), len(b))
    ta, tb = set(a.split()), set(b.split())
    overlap = len(ta & tb) / max(len(ta | tb), 1)
    return max(difflib.SequenceMatcher(None, a, b).ratio() * 0.85, overlap * 0.9)


def _fits(c: dict[str, Any], hints: tuple[str, ...]) -> bool:
    return not hints or c.get("role") in hints


_STAGES: tuple[tuple[str, Any], ...] = (
    ("role+name", lambda c: [c.get("name")]),
    ("label", lambda c: [c.get("label")]),
    ("placeholder", lambda c: [c.get("placeholder")]),
    ("name attribute", lambda c: [c.get("attr_name"), c.get("id"), c.get("testid")]),
)


_WORDS = re.compile(r"\w+")
#: Where a name comes from when it is not the element's own text.
_NAME_ELSEWHERE = ("aria-label", "labelledby", "title")


def _shows(c: dict[str, Any]) -> str:
    """The text a candidate shows when its name comes from aria-label, aria-labelledby or title and the
    text says words the name does not (thirty story links all named "Opens a new window", each showing
    its headline); "" otherwise."""
    text = c.get("text") or ""
    if c.get("name_source") not in _NAME_ELSEWHERE or not text:
        return ""
    have = set(_WORDS.findall((c.get("name") or "").lower()))
    return text if set(_WORDS.findall(text.lower())) - have else ""


def _brief(c: dict[str, Any], **extra: Any) -> dict[str, Any]:
    out = {"ref": c["ref"], "role": c.get("role"), "name": c.get("name", "")}
    shows = _shows(c)
    if shows:
        out["text"] = shows
    out.update(extra)
    return out


def _nearest(cands: list[dict[str, Any]], core: str, n: int = 5) -> list[dict[str, Any]]:
    scored = []
    for c in cands:
        s = max(_similar(core, _norm(v)) for v in (c.get("name"), c.get("label"), c.get("placeholder"), c.get("text")))
        scored.append((s, c))
    scored.sort(key=lambda t: -t[0])
    return [_brief(c, score=round(s, 3)) for s, c in scored[:n] if s > 0]


async def _text_matches(page: Any, core: str) -> list[dict[str, Any]]:
    state = page_refs(page)
    out = []
    async with state.lock:
        for ordinal, frame in enumerate(page.frames):
            try:
                items = await call(frame, page, {"op": "textMatches", "text": core})
            except Exception:  # noqa: BLE001
                continue
            for item in items:
                item["frame_ordinal"] = ordinal
                out.append(item)
    return out


async def _from_candidate(page: Any, c: dict[str, Any], via: str) -> Resolved:
    frame, el = await resolve_ref(page, c["ref"])
    return Resolved(el, frame, c["ref"], c.get("role", ""), c.get("name", ""), via, tuple(page.frames))


#: The focused element of a document, through open shadow roots (``null``: nothing but the body).
_ACTIVE_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  return e && e !== document.body && e !== document.documentElement ? e : null;
}"""


async def focused(page: Any) -> Resolved | None:
    """The element that has the keyboard focus (followed into frames), as a ref with its role and
    name; ``None`` when nothing but the page itself has it. Nothing is acted on."""
    frame = page.main_frame
    for _ in range(8):  # as deep as read_page reads frames
        handle = await frame.evaluate_handle(_ACTIVE_JS)  # a failure: dispatch translates it
        el = handle.as_element()
        if el is None:
            await handle.dispose()
            return None
        child = await el.content_frame() if await el.evaluate("e => /^I?FRAME$/.test(e.tagName)") else None
        if child is None:
            info = await call(frame, page, {"op": "info", "el": el})
            return Resolved(el, frame, info["ref"], info["role"], info["name"], "focus", tuple(page.frames))
        frame = child
    return None


async def _ambiguous(page: Any, query: str, stage: str, hits: list[dict[str, Any]], what: str) -> AmbiguousTarget:
    """``AMBIGUOUS_TARGET`` listing each candidate with its context, so they can be told apart."""
    shown = [dict(c) for c in hits[:10]]
    by_frame: dict[int, list[dict[str, Any]]] = {}
    for c in shown:
        by_frame.setdefault(int(c.get("frame_ordinal", 0)), []).append(c)
    state = page_refs(page)
    frames = page.frames
    async with state.lock:
        for ordinal, group in by_frame.items():
            try:
                ctx = await call(frames[ordinal], page, {"op": "contexts", "refs": [c["ref"] for c in group]})
            except Exception:  # noqa: BLE001 - a frame gone meanwhile: no context
                continue
            for c, text in zip(group, ctx, strict=False):
                if text:
                    c["context"] = text
    cands = [_brief(c, **({"context": c["context"]} if c.get("context") else {})) for c in shown]
    listed = "; ".join(
        f"{c['ref']} {c['role']} {c['name']!r}"
        + (f" showing {c['text']!r}" if c.get("text") else "")
        + (f" in {c['context']}" if c.get("context") else "")
        for c in cands
    )
    return AmbiguousTarget(
        f"{len(hits)} elements {what} {query!r} by {stage}: {listed}; use a ref or a more specific query",
        details={"query": query, "stage": stage, "candidates": cands},
    )


async def changed_since(page: Any, r: Resolved) -> str | None:
    """How the resolved element ``r`` changed since it was resolved, or None when it is still the
    same: in the document (its frame attached, the element connected) with the same role and
    accessible name — and, for the focused element (a key press without a target), still focused.
    A page that navigated or reloaded destroys the element, so it says "gone"."""
    try:
        if r.frame.is_detached() or not await r.element.evaluate("e => e.isConnected"):
            return "it is gone from the page"
        if r.via == "focus" and not await r.element.evaluate("e => e.getRootNode().activeElement === e"):
            return "the focus moved away from it"
        info = await call(r.frame, page, {"op": "info", "el": r.element})
    except Exception:  # noqa: BLE001 - its document went away (navigated, reloaded, closed)
        return "it is gone from the page"
    if (info.get("role"), info.get("name")) != (r.role, r.name):
        return f"it is now {info.get('role') or 'element'} {info.get('name')!r}"
    return None


async def resolve_target(
    page: Any, ref: str | None = None, query: str | None = None, action: str | None = None
) -> Resolved:
    """Resolve a ref or a query to exactly one live element (see the module docstring); with an
    ``action`` such as ``fill``, a query considers only the elements that can take it."""
    if (ref is None) == (query is None):
        raise InvalidArgument("give exactly one of ref or query")
    if ref is not None:
        frame, el = await resolve_ref(page, ref)
        info = await call(frame, page, {"op": "info", "el": el})
        return Resolved(el, frame, ref, info["role"], info["name"], "ref", tuple(page.frames))
    assert query is not None
    if REF_PATTERN.match(query.strip()):
        return await resolve_target(page, ref=query.strip())
    core, hints, explicit = parse_query(query)
    if not core:
        raise InvalidArgument("query is empty", details={"query": query})
    full = _norm(query)
    every = await candidates(page)
    cands = [c for c in every if takes(c, action)]
    for stage, values in _STAGES:
        hits = []
        for c in cands:
            vals = [_norm(v) for v in values(c)]
            if (not explicit and full in vals) or (core in vals and _fits(c, hints)):
                hits.append(c)
        if explicit and stage != "role+name":
            hits = []
        if len(hits) == 1:
            return await _from_candidate(page, hits[0], stage)
        if len(hits) > 1:
            raise await _ambiguous(page, query, stage, hits, "match")
    if not explicit:
        texts = [t for t in await _text_matches(page, core) if _fits(t, hints) and takes(t, action)]
        if len(texts) == 1:
            return await _from_candidate(page, texts[0], "visible text")
        if len(texts) > 1:
            raise await _ambiguous(page, query, "visible text", texts, "show the text")
        ranked = [(max(_similar(core, _norm(c.get(k))) for k in ("name", "label", "placeholder")), c) for c in cands]
        ranked = [(s, c) for s, c in ranked if s >= 0.75 and _fits(c, hints)]
        ranked.sort(key=lambda t: -t[0])
        if len(ranked) == 1 or (len(ranked) > 1 and ranked[0][0] - ranked[1][0] >= 0.1):
            return await _from_candidate(page, ranked[0][1], "fuzzy")
        if len(ranked) > 1:
            raise await _ambiguous(page, query, "fuzzy", [c for _s, c in ranked], "are close to")
    if len(cands) < len(every):
        nearest = _nearest(cands, core) or _nearest(every, core)
        raise ElementNotFound(
            f"no element that can take {action} matches {query!r}{_next_step(nearest)}",
            details={"query": query, "action": action, "nearest": nearest},
        )
    nearest = _nearest(cands, core)
    raise ElementNotFound(
        f"nothing matches {query!r}{_next_step(nearest)}",
        details={"query": query, "nearest": nearest},
    )


def _next_step(nearest: list[dict[str, Any]]) -> str:
    """What to try after a query matched nothing: the closest elements by ref, then the tools to look with."""
    close = "; ".join(
        f"{c['ref']} {c['role']} {c['name']!r}" for c in nearest[:3] if c.get("ref") and c.get("score", 1) >= 0.4
    )
    return (
        (f"; nearest: {close}" if close else "")
        + "; next: act on one of those by ref, try find with fewer or other words, or read_page to see the "
        "page's refs (wait_for the text first if the page is still loading)"
    )


async def find(page: Any, query: str, limit: int = 5, action: str | None = None) -> list[dict[str, Any]]:
    """Ranked candidates for a plain-words query (``ref, role, name, score, why``); never acts.

    The elements ranked are exactly those :func:`resolve_target` chooses from for the same query and
    action: every candidate (native, ARIA and script-driven controls) and the elements showing the
    query as their visible text (as the control a click on them acts on)."""
    core, hints, _explicit = parse_query(query)
    cands = [c for c in await candidates(page) if takes(c, action)]
    known = {c["ref"] for c in cands}
    if core:
        cands += [t for t in await _text_matches(page, core) if t["ref"] not in known and takes(t, action)]
    scored: list[tuple[float, str, dict[str, Any]]] = []
    weights = (
        ("name", 1.0, "name"),
        ("label", 0.95, "label"),
        ("placeholder", 0.9, "placeholder"),
        ("text", 0.85, "text"),
    )
    for c in cands:
        best, why = 0.0, ""
        for key, weight, label in weights:
            v = _norm(c.get(key))
            if not v:
                continue
            if v == core:
                s, w = weight, f"{label} equals {core!r}"
            else:
                sim = _similar(core, v)
                s, w = sim * weight * 0.9, f"{label} is like {core!r} ({sim:.2f})"
            if s > best:
                best, why = s, w
        for key in ("attr_name", "id", "testid"):
            if core and _norm(c.get(key)) == core and best < 0.88:
                best, why = 0.88, f"{key} equals {core!r}"
        if hints and c.get("role") in hints:
            best, why = best + 0.05, why + f"; role {c.get('role')} fits the query"
        elif hints:
            best *= 0.8
        if best > 0.3:
            scored.append((best, why, c))
    scored.sort(key=lambda t: -t[0])
    return [_brief(c, score=round(s, 3), why=w) for s, w, c in scored[: max(limit, 0)]]


async def query_dom(page: Any, selector: str, method: str = "css", limit: int = 50) -> dict[str, Any]:
    """Elements matching a CSS selector or XPath in every frame, each with a ref.

    ``method="point"``: the one element a click at the point ``selector`` (``"x,y"`` in CSS pixels of the
    viewport, or ``"50%,25%"``) lands on, as :func:`~.point.element_at` finds it; none off the page.
    """
    if method == "point":
        hit = await element_at(page, *parse_point(selector))
        found = [hit] if hit is not None else []
        return {"selector": selector, "method": method, "total": len(found), "matches": found[:limit]}
    if method not in ("css", "xpath"):
        raise InvalidArgument("method must be css, xpath or point", details={"method": method})
    state = page_refs(page)
    matches: list[dict[str, Any]] = []
    total = 0
    async with state.lock:
        for ordinal, frame in enumerate(page.frames):
            try:
                out = await call(frame, page, {"op": "query", "selector": selector, "method": method, "limit": limit})
            except Exception:  # noqa: BLE001
                continue
            if "error" in out:
                if ordinal == 0:
                    raise InvalidArgument(
                        f"invalid {method} selector {selector!r}: {out['error']}", details={"selector": selector}
                    )
                continue
            total += out["total"]
            for m in out["matches"]:
                m["frame_ordinal"] = ordinal
                matches.append(m)
    return {"selector": selector, "method": method, "total": total, "matches": matches[:limit]}
