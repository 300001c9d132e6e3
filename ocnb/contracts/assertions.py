"""Outcome assertions: small JSON documents that say what a page should look like, checked without an LLM.

An assertion is an object with a ``kind`` and the fields of that kind (an optional ``description``
string is allowed on every kind; any other field is an error):

==================  ==========================================================================
kind                fields
==================  ==========================================================================
``url``             ``pattern`` — the page URL matches it
``title``           exactly one of ``equals``, ``contains``, ``pattern``
``dom_text``        ``contains``; optional ``selector`` (default ``body``) — some matching
                    element's visible text contains the string (case-sensitive, runs of
                    whitespace on both sides count as one space)
``dom_count``       ``selector``, ``op`` (``eq`` | ``gte`` | ``lte``), ``value`` (integer ≥ 0)
``element_visible`` ``selector``, or ``role`` + ``name`` (exact accessible name) — some match is visible
``no_dialog``       — no dialog in the observations
``network``         ``url_pattern``; optional ``status_in`` (HTTP statuses) — some observed
                    response matches the pattern (and has one of the statuses)
``and`` / ``or``    ``children`` — a non-empty list of assertions
``not``             ``child`` — one assertion
==================  ==========================================================================

**Patterns** (``url.pattern``, ``title.pattern``, ``network.url_pattern``) are globs matched against
the whole string (``*`` matches anything including ``/``, ``?`` one character, ``[abc]`` a set),
unless they start with ``re:``: then the rest is a Python regular expression searched anywhere in
the string (anchor it with ``^…$`` to match the whole). ``re:^https://shop\\.test/cart$`` is a regex;
``https://shop.test/*`` is a glob.

Page queries run in the main frame, never wait, and turn a page error (a bad selector, a page that
navigated away mid-check) into a failed check whose ``actual`` starts with ``error:``. Selectors are
Playwright selectors (CSS by default).
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .validation import (
    NONEMPTY,
    ValidationError,
    child_path,
    raise_if_invalid,
    schema_errors,
    schema_validator,
    sort_errors,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from playwright.async_api import Page

__all__ = [
    "ASSERTION_DEFS",
    "ASSERTION_KINDS",
    "ASSERTION_SCHEMA",
    "REGEX_PREFIX",
    "AssertionOutcome",
    "PageObservations",
    "assertion_checks",
    "describe_assertion",
    "ensure_valid_assertion",
    "evaluate",
    "evaluate_until",
    "match_pattern",
    "validate_assertion",
]

#: A pattern starting with this prefix is a regular expression; any other pattern is a glob.
REGEX_PREFIX = "re:"
#: Deepest nesting of combinators accepted (protects the evaluator from runaway documents).
MAX_DEPTH = 32
#: Longest text excerpt reported as ``actual``.
EXCERPT_CHARS = 300

_OPS = ("eq", "gte", "lte")
_HTTP_STATUS = "expected an HTTP status 100-599"


def _kind(kind: str, fields: dict[str, Any], required: tuple[str, ...] = (), one_of: Any = None) -> dict[str, Any]:
    """The schema of one kind: its fields (``kind`` and ``description`` come with every kind), closed.

    ``one_of`` is ``(branches, message)``: the fields must match exactly one branch.
    """
    props = {"kind": True, "description": NONEMPTY, **fields}
    schema = {"title": f"{kind} assertion", "properties": props, "required": list(required)}
    if one_of is not None:
        schema.update({"oneOf": one_of[0], "x-messages": {"oneOf": one_of[1]}})
    return {**schema, "additionalProperties": False}


_CHILD = {"$ref": "#/$defs/assertion"}
_KIND_SCHEMAS: dict[str, dict[str, Any]] = {
    "url": _kind("url", {"pattern": NONEMPTY}, ("pattern",)),
    "title": _kind(
        "title",
        {"equals": NONEMPTY, "contains": NONEMPTY, "pattern": NONEMPTY},
        one_of=(
            [{"required": [key]} for key in ("equals", "contains", "pattern")],
            "title assertion needs exactly one of equals, contains, pattern",
        ),
    ),
    "dom_text": _kind("dom_text", {"selector": NONEMPTY, "contains": NONEMPTY}, ("contains",)),
    "dom_count": _kind(
        "dom_count",
        {"selector": NONEMPTY, "op": {"title": "op", "enum": list(_OPS)}, "value": {"type": "integer", "minimum": 0}},
        ("selector", "op", "value"),
    ),
    "element_visible": _kind(
        "element_visible",
        {"selector": NONEMPTY, "role": NONEMPTY, "name": NONEMPTY},
        one_of=(
            [
                {"required": ["selector"], "not": {"anyOf": [{"required": ["role"]}, {"required": ["name"]}]}},
                {"required": ["role", "name"], "not": {"required": ["selector"]}},
            ],
            "element_visible needs selector, or both role and name, not both",
        ),
    ),
    "no_dialog": _kind("no_dialog", {}),
    "network": _kind(
        "network",
        {
            "url_pattern": NONEMPTY,
            "status_in": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "integer",
                    "minimum": 100,
                    "maximum": 599,
                    "x-messages": {"type": _HTTP_STATUS, "minimum": _HTTP_STATUS, "maximum": _HTTP_STATUS},
                },
                "x-messages": {"minItems": "must not be empty (omit it to accept any status)"},
            },
        },
        ("url_pattern",),
    ),
    "and": _kind("and", {"children": {"type": "array", "minItems": 1, "items": _CHILD}}, ("children",)),
    "or": _kind("or", {"children": {"type": "array", "minItems": 1, "items": _CHILD}}, ("children",)),
    "not": _kind("not", {"child": _CHILD}, ("child",)),
}
for _schema in (_KIND_SCHEMAS["and"], _KIND_SCHEMAS["or"]):
    _schema["properties"]["children"]["x-messages"] = {"minItems": "must hold at least one assertion"}
#: Every assertion kind, in documentation order.
ASSERTION_KINDS: tuple[str, ...] = tuple(_KIND_SCHEMAS)
#: The schemas an assertion is made of, for documents that hold assertions (``#/$defs/assertion``).
ASSERTION_DEFS: dict[str, Any] = {
    "assertion": {
        "title": "assertion",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"title": "assertion kind", "enum": list(ASSERTION_KINDS)}},
        "allOf": [
            {"if": {"type": "object", "properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": schema}
            for kind, schema in _KIND_SCHEMAS.items()
        ],
        "x-messages": {"type": "an assertion must be an object, got {got}"},
    }
}
#: The JSON Schema (Draft 2020-12) of an assertion. Nesting depth and regular expressions are checked
#: by :func:`validate_assertion` itself.
ASSERTION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$ref": "#/$defs/assertion",
    "$defs": ASSERTION_DEFS,
}
#: Fields that hold a pattern (a glob, or a regular expression after ``re:``), by kind.
_PATTERN_FIELDS = {"url": ("pattern",), "title": ("pattern",), "network": ("url_pattern",)}


# --------------------------------------------------------------------------------------------
# Patterns


def _compile(pattern: str) -> re.Pattern[str]:
    if pattern.startswith(REGEX_PREFIX):
        return re.compile(pattern[len(REGEX_PREFIX) :])
    return re.compile(fnmatch.translate(pattern))


def match_pattern(pattern: str, text: str) -> bool:
    """Whether ``text`` matches ``pattern``: a whole-string glob, or a regex search after ``re:``."""
    if pattern.startswith(REGEX_PREFIX):
        return re.search(pattern[len(REGEX_PREFIX) :], text) is not None
    return _compile(pattern).match(text) is not None


# --------------------------------------------------------------------------------------------
# Validation


def validate_assertion(obj: Any, path: str = "$") -> list[ValidationError]:
    """Every error of an assertion, each with its JSON path; ``[]`` when valid.

    Unknown kinds and unknown fields are errors (fail closed); patterns must compile; combinators
    nest at most :data:`MAX_DEPTH` levels.
    """
    try:  # the same document is checked again at every poll of evaluate_until: remember the verdict
        text = json.dumps(obj, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return _errors(obj, path)
    return list(_errors_of_text(text, path))


@functools.lru_cache(maxsize=512)
def _errors_of_text(text: str, path: str) -> tuple[ValidationError, ...]:
    return tuple(_errors(json.loads(text), path))


def _errors(obj: Any, path: str) -> list[ValidationError]:
    semantic: list[ValidationError] = []
    pruned = assertion_checks(obj, path, 0, semantic)
    return sort_errors(schema_errors(_validator(), pruned, path) + semantic)


def ensure_valid_assertion(obj: Any, what: str = "assertion") -> None:
    """Raise ``INVALID_ARGUMENT`` with every error in ``details["errors"]`` unless ``obj`` is valid."""
    raise_if_invalid(validate_assertion(obj), what)


@functools.cache
def _validator() -> Any:
    return schema_validator(ASSERTION_SCHEMA)


def assertion_checks(obj: Any, path: str, depth: int, errors: list[ValidationError]) -> Any:
    """Add to ``errors`` what :data:`ASSERTION_SCHEMA` cannot say: nesting depth, regular expressions.

    Returns ``obj`` with what nests too deep cut off, for the schema to check the rest.
    """
    if depth > MAX_DEPTH:
        errors.append(ValidationError(path, f"assertions nest deeper than {MAX_DEPTH} levels"))
        return {"kind": "no_dialog"}  # the schema sees no more of it
    if not isinstance(obj, Mapping):
        return obj
    kind = obj.get("kind")
    for key in _PATTERN_FIELDS.get(kind, ()) if isinstance(kind, str) else ():
        value = obj.get(key)
        if isinstance(value, str) and value.startswith(REGEX_PREFIX):
            try:
                re.compile(value[len(REGEX_PREFIX) :])
            except re.error as exc:
                errors.append(ValidationError(child_path(path, key), f"invalid regular expression: {exc}"))
    if kind in ("and", "or") and isinstance(obj.get("children"), list):
        kids = [
            assertion_checks(c, child_path(child_path(path, "children"), i), depth + 1, errors)
            for i, c in enumerate(obj["children"])
        ]
        return {**obj, "children": kids}
    if kind == "not" and "child" in obj:
        return {**obj, "child": assertion_checks(obj["child"], child_path(path, "child"), depth + 1, errors)}
    return obj


# --------------------------------------------------------------------------------------------
# Description


def describe_assertion(a: Mapping[str, Any]) -> str:
    """A one-line human description (its ``description`` field when given) of a valid assertion."""
    if a.get("description"):
        return str(a["description"])
    kind = a["kind"]
    if kind == "url":
        return f"url matches {a['pattern']!r}"
    if kind == "title":
        for key in ("equals", "contains", "pattern"):
            if key in a:
                verb = {"equals": "equals", "contains": "contains", "pattern": "matches"}[key]
                return f"title {verb} {a[key]!r}"
    if kind == "dom_text":
        return f"text of {a.get('selector', 'body')!r} contains {a['contains']!r}"
    if kind == "dom_count":
        return f"count of {a['selector']!r} {a['op']} {a['value']}"
    if kind == "element_visible":
        if "selector" in a:
            return f"{a['selector']!r} is visible"
        return f"{a['role']} {a['name']!r} is visible"
    if kind == "no_dialog":
        return "no dialog opened"
    if kind == "network":
        statuses = f" with status in {a['status_in']}" if "status_in" in a else ""
        return f"a response from {a['url_pattern']!r}{statuses}"
    if kind in ("and", "or"):
        joiner = " and " if kind == "and" else " or "
        return "(" + joiner.join(describe_assertion(c) for c in a["children"]) + ")"
    if kind == "not":
        return f"not {describe_assertion(a['child'])}"
    return kind  # pragma: no cover - validated documents never get here


# --------------------------------------------------------------------------------------------
# Evaluation


@dataclass
class PageObservations:
    """What a tab saw recently, kept by the browser layer as ring buffers per tab.

    - ``dialogs``: ``{"type": "alert"|"confirm"|"prompt"|"beforeunload", "message": str, "ts"?: float}``
    - ``responses``: ``{"url": str, "status": int, "method"?: str, "ts"?: float}``
    - ``console``: ``{"type": "log"|"error"|..., "text": str, "ts"?: float}``

    ``ts`` is seconds since the epoch; :meth:`since` keeps what happened at or after a moment, which is
    how a caller scopes ``no_dialog`` and ``network`` to "since my action".
    """

    dialogs: list[dict[str, Any]] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    console: list[dict[str, Any]] = field(default_factory=list)

    def since(self, ts: float) -> PageObservations:
        """The entries with ``ts >= ts`` (entries without ``ts`` are kept)."""

        def keep(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [i for i in items if i.get("ts") is None or i["ts"] >= ts]

        return PageObservations(keep(self.dialogs), keep(self.responses), keep(self.console))

    @staticmethod
    def now() -> float:
        """The current moment in the unit of ``ts``."""
        return time.time()

    @classmethod
    def from_tab(cls, tab: Any, since_ms: int | None = None) -> PageObservations:
        """A browser tab's ring buffers (``dialogs``, ``responses``, ``console``), scoped in time.

        With ``since_ms``, what happened in the last ``since_ms`` milliseconds. Without it, what
        happened since the current document loaded (the last response for the page's URL), or all
        that is buffered when that response is not there (a single-page app that only pushed state).
        """
        obs = cls(list(tab.dialogs), list(tab.responses), list(tab.console))
        if since_ms is not None:
            return obs.since(time.time() - since_ms / 1000)
        url = tab.page.url.split("#", 1)[0]
        loads = [r["ts"] for r in obs.responses if str(r.get("url", "")).split("#", 1)[0] == url and "ts" in r]
        return obs.since(loads[-1]) if loads else obs


@dataclass
class AssertionOutcome:
    """The verdict of one assertion tree: ``passed``, and for each failed check a dict
    ``{path, kind, expected, actual}`` (``path`` is the JSON path of the check in the assertion)."""

    passed: bool
    failures: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "failures": self.failures}


@dataclass
class _Node:
    passed: bool
    expected: Any
    actual: Any
    failures: list[dict[str, Any]]


async def evaluate(
    assertion: Mapping[str, Any], page: Page, observations: PageObservations | None = None
) -> AssertionOutcome:
    """Check ``assertion`` against the page now (no waiting) and the observations.

    Raises ``INVALID_ARGUMENT`` (all errors at once) for an invalid assertion; every other problem
    is a failed check. Combinators evaluate all their children, so every failing leaf is reported.
    """
    ensure_valid_assertion(assertion)
    node = await _eval(assertion, "$", page, observations or PageObservations())
    return AssertionOutcome(node.passed, node.failures)


async def evaluate_until(
    assertion: Mapping[str, Any],
    page: Page,
    observe: Callable[[], PageObservations] | PageObservations | None = None,
    *,
    timeout_ms: int,
    poll_ms: int = 100,
) -> AssertionOutcome:
    """Evaluate every ``poll_ms`` until the assertion passes or ``timeout_ms`` has passed.

    ``observe`` is called before each try so that new dialogs and responses count. Returns the last
    outcome; with ``timeout_ms=0`` this is one :func:`evaluate`.
    """
    ensure_valid_assertion(assertion)
    deadline = time.monotonic() + max(timeout_ms, 0) / 1000
    while True:
        obs = observe() if callable(observe) else observe
        outcome = await evaluate(assertion, page, obs)
        left = deadline - time.monotonic()
        if outcome.passed or left <= 0:
            return outcome
        await asyncio.sleep(min(poll_ms / 1000, left))


def _failure(path: str, a: Mapping[str, Any], expected: Any, actual: Any) -> dict[str, Any]:
    out = {"path": path, "kind": a["kind"], "expected": expected, "actual": actual}
    if a.get("description"):
        out["description"] = a["description"]
    return out


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _error_text(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return "error: " + (msg[0] if msg else type(exc).__name__)


async def _eval(a: Mapping[str, Any], path: str, page: Page, obs: PageObservations) -> _Node:
    kind = a["kind"]
    if kind in ("and", "or"):
        kids = [
            await _eval(c, child_path(child_path(path, "children"), i), page, obs) for i, c in enumerate(a["children"])
        ]
        n_pass = sum(k.passed for k in kids)
        failures = [f for k in kids for f in k.failures]
        if kind == "and":
            passed = n_pass == len(kids)
            expected = f"all {len(kids)} children pass"
        else:
            passed = n_pass > 0
            expected = f"at least one of {len(kids)} children passes"
            failures = [] if passed else [_failure(path, a, expected, f"{n_pass} of {len(kids)} passed"), *failures]
        return _Node(passed, expected, f"{n_pass} of {len(kids)} passed", [] if passed else failures)
    if kind == "not":
        kid = await _eval(a["child"], child_path(path, "child"), page, obs)
        expected = f"not ({kid.expected})"
        if kid.passed:
            return _Node(False, expected, kid.actual, [_failure(path, a, expected, kid.actual)])
        return _Node(True, expected, kid.actual, [])
    try:
        passed, expected, actual = await _leaf(kind, a, page, obs)
    except Exception as exc:  # noqa: BLE001 - a page error is a failed check, reported with its message
        passed, expected, actual = False, describe_assertion({**a, "description": None}), _error_text(exc)
    return _Node(passed, expected, actual, [] if passed else [_failure(path, a, expected, actual)])


# Visible as Playwright defines it: a non-empty bounding box and no ``visibility: hidden``.
_IS_VISIBLE = (
    "const r = e.getBoundingClientRect();"
    " return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';"
)
_VISIBLE_JS = "els => els.map(e => { " + _IS_VISIBLE + " })"
# innerText of each visible match, null for the others (innerText of a hidden element falls back to
# its textContent, and hidden text is not what a user sees).
_VISIBLE_TEXTS_JS = (
    "els => els.map(e => { const v = (() => { " + _IS_VISIBLE + " })(); return v ? e.innerText : null; })"
)


async def _leaf(kind: str, a: Mapping[str, Any], page: Page, obs: PageObservations) -> tuple[bool, Any, Any]:
    if kind == "url":
        url = page.url
        return match_pattern(a["pattern"], url), f"url matching {a['pattern']!r}", url
    if kind == "title":
        title = await page.title()
        if "equals" in a:
            return title == a["equals"], f"title equal to {a['equals']!r}", title
        if "contains" in a:
            return a["contains"] in title, f"title containing {a['contains']!r}", title
        return match_pattern(a["pattern"], title), f"title matching {a['pattern']!r}", title
    if kind == "dom_text":
        selector = a.get("selector", "body")
        expected = f"text of {selector!r} containing {a['contains']!r}"
        raw = await page.locator(selector).evaluate_all(_VISIBLE_TEXTS_JS)
        if not raw:
            return False, expected, f"no element matches {selector!r}"
        texts = [_norm(t) for t in raw if t is not None]
        if not texts:
            return False, expected, f"{len(raw)} match, none visible"
        needle = _norm(a["contains"])
        hit = next((t for t in texts if needle in t), None)
        if hit is not None:
            return True, expected, _excerpt(hit)
        return False, expected, _excerpt(" | ".join(texts))
    if kind == "dom_count":
        count = await page.locator(a["selector"]).count()
        value = a["value"]
        passed = {"eq": count == value, "gte": count >= value, "lte": count <= value}[a["op"]]
        return passed, f"count of {a['selector']!r} {a['op']} {value}", count
    if kind == "element_visible":
        if "selector" in a:
            locator = page.locator(a["selector"])
            what = repr(a["selector"])
        else:
            locator = page.get_by_role(a["role"], name=a["name"], exact=True)
            what = f"{a['role']} named {a['name']!r}"
        flags = await locator.evaluate_all(_VISIBLE_JS)
        if any(flags):
            return True, f"{what} visible", "visible"
        actual = f"no element matches {what}" if not flags else f"{len(flags)} match, none visible"
        return False, f"{what} visible", actual
    if kind == "no_dialog":
        seen = [{"type": d.get("type"), "message": d.get("message")} for d in obs.dialogs]
        return not seen, "no dialog", seen[-5:]
    if kind == "network":
        statuses = a.get("status_in")
        matched = [
            r for r in obs.responses if isinstance(r.get("url"), str) and match_pattern(a["url_pattern"], r["url"])
        ]
        ok = [r for r in matched if statuses is None or r.get("status") in statuses]
        expected = f"a response from {a['url_pattern']!r}" + (f" with status in {statuses}" if statuses else "")
        if ok:
            return True, expected, {"url": ok[-1]["url"], "status": ok[-1].get("status")}
        if not matched:
            return False, expected, f"no response matched {a['url_pattern']!r} (of {len(obs.responses)} seen)"
        return False, expected, [{"url": r["url"], "status": r.get("status")} for r in matched[-5:]]
    raise AssertionError(f"unhandled kind {kind}")  # pragma: no cover
