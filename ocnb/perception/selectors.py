"""Selector chains: the one place that records an element and finds it again — and vouches for it.

Recording (:func:`capture_element`) keeps two things about an element, computed in the page before
anything is done to it:

- its **selector chain**, most robust first, in the stored form skills keep on disk:
  ``{"type": "role_name", "role", "name"}``, ``{"type": "accessible_name" | "css" | "xpath" | "text" |
  "node_ref", "value"}`` (css is ``[data-testid=…]``, ``#id`` or ``tag[name=…]``, never generated
  class names; xpath is positional, anchored at the nearest stable id);
- its **fingerprint**: ``role``, accessible ``name``, ``tag``, input ``type``, the ``name`` and
  ``autocomplete`` attributes (``name_attr``, ``autocomplete``), ``label`` text, and the ``frame``
  (ordinal, plus the frame's address when it is not the main frame). ``twins`` counts other visible
  elements that had the very same fingerprint.

Resolving (:func:`resolve`) looks in the recorded frame first (a child frame is found again by its
address, so re-ordered frames do not matter), tries the chain's entries in order with one in-page
matching engine (``resolveStep`` in ``js/chains.js``), and keeps polling up to the step's timeout.
An element counts only when an entry singles it out **and** it agrees with the fingerprint and is
visible: a fallback entry may survive changed ids, classes, order and wrappers, never a different
role, input type, accessible name or label. When more visible elements agree than at recording,
the match is ambiguous. Otherwise :class:`ChainRefused` (``ARTIFACT_RESOLUTION_FAILED``) names the
fields that differ, the refused candidate (ref, role, name) and up to three candidates of the same
role and type, closest first. Nothing is ever acted on here.

:func:`verified_locator` is the same first-entry check as a Playwright locator (the ``ocnb-verified``
selector engine, :func:`register_engine`): replay acts through it so that resolving, verifying and
acting are one call; it matches nothing unverified, and declines at once (:func:`engine_declined`)
where :func:`resolve` has to decide.

``tolerate`` relaxes named fields for one resolution (``["name"]`` accepts a renamed label); role
and input type can never be tolerated. Older chain spellings (``{"kind", "selector"|"name"|"text"}``)
and steps recorded without a fingerprint (schema v2) are read compatibly: the fingerprint of such a
step is its recorded role and name.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import weakref
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from ..errors import InvalidArgument, OcnbError
from .fills import PATTERN_MISMATCH, PLAIN_TEXT_TYPES, RESTORE_JS
from .refs import call, page_refs, parse_ref, script

__all__ = [
    "FINGERPRINT_FIELDS",
    "SELECTOR_TYPES",
    "TOLERABLE",
    "ENGINE",
    "ChainRefused",
    "Resolution",
    "capture_element",
    "engine_declined",
    "frame_fingerprint",
    "register_engine",
    "resolve",
    "resolve_chain",
    "selector_chain",
    "step_fingerprint",
    "stored_chain",
    "tolerated_fields",
    "verified_locator",
]

#: The chain entry types the resolver knows; the skill schema accepts exactly these.
SELECTOR_TYPES = ("node_ref", "role_name", "accessible_name", "css", "xpath", "text")
FINGERPRINT_FIELDS = ("role", "name", "tag", "type", "name_attr", "autocomplete", "label")
#: What ``tolerate`` may relax, and the fingerprint fields each word covers. Role and type never.
TOLERABLE: dict[str, tuple[str, ...]] = {
    "name": ("name", "label"),
    "label": ("label",),
    "tag": ("tag",),
    "name_attr": ("name_attr",),
    "autocomplete": ("autocomplete",),
}
POLL_S = 0.05
_ALIASES = {"role": "role_name", "role+name": "role_name", "rolename": "role_name", "ref": "node_ref"}
_ALIASES.update({"node": "node_ref", "label": "accessible_name", "name": "accessible_name", "aria": "accessible_name"})


# ---- the stored form -------------------------------------------------------------------------------
def _stored_entry(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    kind = str(entry.get("type") or entry.get("kind") or entry.get("strategy") or "")
    kind = _ALIASES.get(kind, kind)
    if kind == "role_name":
        if not entry.get("role"):
            return None
        return {"type": kind, "role": entry["role"], "name": entry.get("name") or ""}
    if kind not in SELECTOR_TYPES:
        return None
    value = entry.get("value")
    for key in ("selector", "name", "text"):
        if value is None:
            value = entry.get(key)
    return None if value is None else {"type": kind, "value": value}


def stored_chain(chain: Any) -> list[dict[str, Any]]:
    """A chain in the stored form, whatever spelling it came in (unknown entries are dropped)."""
    out = [_stored_entry(e) for e in (chain or [])]
    return [e for e in out if e is not None]


def _origin_path(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}{p.path}"


def _frame_of(page: Any, frame: Any) -> dict[str, Any]:
    frames = list(page.frames)
    if frame is page.main_frame or frame not in frames:
        return {"ordinal": 0}
    return {"ordinal": frames.index(frame), "url": _origin_path(frame.url)}


def frame_fingerprint(page: Any, frame: Any) -> dict[str, Any]:
    """The ``frame`` field of a fingerprint taken in ``frame`` of ``page`` (as :func:`capture_element` adds it)."""
    return _frame_of(page, frame)


# ---- recording ---------------------------------------------------------------------------------------
async def capture_element(page: Any, element: Any, frame: Any | None = None) -> dict[str, Any]:
    """``{"selector_chain": […], "fingerprint": {…}}`` of ``element`` (a handle in ``frame``)."""
    frame = frame or page.main_frame
    out = await call(frame, page, {"op": "capture", "el": element})
    fp = dict(out["fingerprint"])
    fp["frame"] = _frame_of(page, frame)
    return {"selector_chain": list(out["chain"]), "fingerprint": fp}


async def selector_chain(page: Any, element: Any, frame: Any | None = None) -> list[dict[str, Any]]:
    """The selector chain of ``element`` alone (see :func:`capture_element`)."""
    return (await capture_element(page, element, frame))["selector_chain"]


def step_fingerprint(step: dict[str, Any]) -> dict[str, Any]:
    """The fingerprint of a stored step; for steps recorded without one, their role and name."""
    fp = step.get("fingerprint")
    if isinstance(fp, dict) and fp:
        return dict(fp)
    out: dict[str, Any] = {}
    target = step.get("target") or {}
    if target.get("role"):
        out["role"] = target["role"]
        if target.get("name"):
            out["name"] = target["name"]
    else:
        for e in stored_chain(step.get("selectors")):
            if e["type"] == "role_name":
                out = {"role": e["role"], "name": e["name"]} if e["name"] else {"role": e["role"]}
                break
    if out:
        out["frame"] = {"ordinal": int(step.get("frame_ordinal", 0) or 0)}
    return out


def tolerated_fields(tolerate: Any) -> list[str]:
    """Fingerprint fields relaxed by ``tolerate`` (a list of :data:`TOLERABLE` words)."""
    words = list(tolerate or [])
    bad = [w for w in words if w not in TOLERABLE]
    if bad:
        raise InvalidArgument(
            f"tolerate accepts {', '.join(TOLERABLE)}; role and input type are never tolerated (got {bad})",
            details={"tolerate": words},
        )
    return sorted({f for w in words for f in TOLERABLE[w]})


# ---- resolving -----------------------------------------------------------------------------------------
@dataclass
class Resolution:
    """The element a chain resolved to, verified against its fingerprint (or unverifiable: none stored)."""

    element: Any
    frame: Any
    ref: str
    role: str
    name: str
    entry_index: int
    via: str
    attempts: int
    verified: bool
    tolerated: list[str] = field(default_factory=list)


class ChainRefused(OcnbError):
    """No element can be vouched for: none matched, the match disagrees with the fingerprint, or several agree."""

    code = "ARTIFACT_RESOLUTION_FAILED"


def _frames(page: Any, fp: dict[str, Any], ordinal: int) -> list[Any]:
    frames = list(page.frames)
    url = (fp.get("frame") or {}).get("url")
    if url:
        hits = [f for f in frames if _origin_path(f.url) == url]
        hits.sort(key=lambda f: frames.index(f) != ordinal)
        return hits
    return [frames[ordinal]] if 0 <= ordinal < len(frames) else []


#: The element of a ref just assigned by ``resolveStep``, read from the perception script's per-document state
#: without sending the whole script again (one round trip instead of five: this is replay's hot path).
_HANDLE_JS = """(id) => {
  const S = window[Symbol.for("ocnb.perception")];
  const w = S && S.els.get(id);
  const el = w && w.deref();
  return el && el.isConnected ? el : null;
}"""


_FIRST_JS = """(req) => {
  const f = window[Symbol.for("ocnb.perception.fn")];
  return f ? f({ ...req, op: "resolveFirst", next: 0 }).result : null;
}"""


async def _first(page: Any, frame: Any, req: dict[str, Any]) -> Any:
    """The element when the chain's first entry singles out one that agrees (no refs assigned), else None.

    A frame whose document has not had the script yet gets it with this very call (still one round trip).
    """
    state = page_refs(page)
    primed = frame in state.primed
    source = _FIRST_JS if primed else f"(req) => {script()}({{ ...req, op: 'resolveFirst', next: 0 }}).result"
    try:
        js = await frame.evaluate_handle(source, req)
    except Exception:  # noqa: BLE001 - the slow path explains what went wrong
        return None
    if not primed:
        state.primed.add(frame)
    el = js.as_element()
    if el is None:
        await js.dispose()
    return el


#: The name of the Playwright selector engine that runs ``resolveFirst`` in Playwright's isolated world.
ENGINE = "ocnb-verified"
#: Thrown by the engine when the chain's first entry does not single out an agreeing element.
_DECLINED = "ocnb-verified: no verified first-entry match"
_REGISTERED: weakref.WeakSet[Any] = weakref.WeakSet()


#: A Playwright selector engine around the perception script. Playwright puts it in every document's isolated
#: world with its own script, so the script rides along as a string and is compiled at the engine's
#: first query (as code it would cost every document ~8 ms of parsing; as a string ~1 ms). It never
#: returns an unverified element: it throws (DECLINED), so the action fails at once, acting on nothing.
#: A request with ``fillable`` also declines an element that is not a :func:`plain_text_field`.
#: For a fused fill (:class:`ocnb.perception.fills.ReadBack`), all in the same query, so without a
#: round trip of their own: ``keep`` keeps the element and its value under that key (the fill's own
#: query, just before Playwright fills it); ``read`` takes the element kept under that key while it
#: is in the document (the very element filled, verified by the fill's query, so not resolved and
#: verified again; else it is resolved as usual); ``valid`` throws PATTERN when the value fails the
#: field's ``pattern``; ``undo`` puts the kept value back (RESTORE, as
#: :func:`ocnb.perception.fills.restore` does; once: a later query finds nothing kept, changes nothing).
_ENGINE_JS = """(() => {
  const source = SCRIPT;
  const plain = new Set(PLAIN);
  const restore = RESTORE;
  const kept = new Map();
  const fillable = e => {
    const tag = e.tagName.toLowerCase();
    return (tag === "textarea" || (tag === "input" && plain.has((e.type || "text").toLowerCase())))
      && !e.disabled && !e.readOnly
      && e.getAttribute("aria-disabled") !== "true" && e.getAttribute("aria-readonly") !== "true";
  };
  let perceive = null;
  return {
    queryAll(root, body) {
      perceive = perceive || (0, eval)(source);
      const req = JSON.parse(decodeURIComponent(body));
      const held = req.read ? kept.get(req.read) : undefined;
      const el = held && held.el.isConnected ? held.el
        : perceive({ ...req, op: "resolveFirst", next: 0, engine: true }).result;
      if (!el || (req.fillable && !fillable(el))) throw new Error(DECLINED);
      if (req.keep) {
        if (kept.size > 64) kept.clear();
        kept.set(req.keep, { el, value: String(el.value ?? "") });
      }
      if (req.valid && el.validity && el.validity.patternMismatch) throw new Error(PATTERN);
      if (req.undo && held) {
        restore(el, { value: held.value, checked: false, box: false, selected: [], html: "" });
        kept.delete(req.read);
      }
      return [el];
    },
    query(root, body) { return this.queryAll(root, body)[0]; },
  };
})()"""


def _engine_source() -> str:
    source = (
        _ENGINE_JS.replace("DECLINED", json.dumps(_DECLINED))
        .replace("PATTERN", json.dumps(PATTERN_MISMATCH))
        .replace("PLAIN", json.dumps(sorted(PLAIN_TEXT_TYPES)))
        .replace("RESTORE", RESTORE_JS)
    )
    head, tail = source.split("SCRIPT")
    return head + json.dumps(script()) + tail


async def register_engine(playwright: Any) -> bool:
    """Register the ``ocnb-verified`` selector engine with ``playwright`` (once); False when it cannot be.

    Documents created afterwards carry it; in an older document a query through it fails at once,
    which :func:`engine_declined` recognises (the caller then resolves the slow way).
    """
    if playwright is None:
        return False
    if playwright in _REGISTERED:
        return True
    try:
        await playwright.selectors.register(ENGINE, _engine_source(), content_script=True)
    except Exception as exc:  # noqa: BLE001 - a remote server that refuses it: the slow path works anyway
        if "already registered" not in str(exc):
            return False
    _REGISTERED.add(playwright)
    return True


def verified_locator(
    page: Any,
    chain: list[dict[str, Any]],
    fingerprint: dict[str, Any] | None = None,
    *,
    frame_ordinal: int = 0,
    tolerate: list[str] | tuple[str, ...] = (),
    fillable: bool = False,
    keep: str | None = None,
    read: str | None = None,
    valid: bool = False,
    undo: bool = False,
) -> Any | None:
    """A Playwright locator that matches only what :func:`resolve`'s first-entry fast path would return.

    Its one query runs ``resolveFirst`` (the chain's first entry singles out one visible element that
    agrees with ``fingerprint``, and no more visible elements agree than at recording) inside
    Playwright's own actionability loop, so resolving, verifying and acting are one call; when that
    does not hold the query throws at once (:func:`engine_declined`), before anything is acted on, and
    the caller falls back to :func:`resolve`. None when the chain's frame is not a single one.
    With ``fillable`` it also declines an element that is not an enabled, editable plain text field
    (:func:`ocnb.perception.fills.plain_text`: a textarea, or an input of a text-like type), so a fill
    through it needs no field read first (:func:`ocnb.perception.fills.fill_plain`). ``keep``, ``read``,
    ``valid`` and ``undo`` are that fill's read-back in the same query (:class:`ocnb.perception.fills.ReadBack`):
    keep the element and its value under a key; take the element kept under a key (while it is in the
    document); fail with ``PATTERN_MISMATCH`` when its value fails its ``pattern``; put the kept value back.
    Only for a page whose Playwright has :func:`register_engine`.
    """
    chain = stored_chain(chain)
    fp = dict(fingerprint or {})
    ordinal = int((fp.get("frame") or {}).get("ordinal", frame_ordinal) or 0)
    frames = _frames(page, fp, ordinal)
    if len(frames) != 1 or not chain:
        return None
    req: dict[str, Any] = {
        "chain": chain,
        "fingerprint": {k: v for k, v in fp.items() if k != "frame"},
        "tolerate": list(tolerate),
    }
    extra: dict[str, Any] = {}
    if fillable:
        extra["fillable"] = True
    if keep:
        extra["keep"] = keep
    if read:
        extra["read"] = read
    if valid:
        extra["valid"] = True
    if undo:
        extra["undo"] = True
    body = json.dumps(req, separators=(",", ":"))
    if not extra:
        return frames[0].locator(_engine_selector(body))
    # The request is the step's part and these few keys, whose ``keep``/``read`` key is new at every
    # fill: the step's part is quoted once (cached), the keys on their own (quoting is per character).
    tail = "," + json.dumps(extra, separators=(",", ":"))[1:]
    return frames[0].locator(_engine_selector(body[:-1]) + quote(tail, safe=""))


@functools.lru_cache(maxsize=1024)
def _engine_selector(body: str) -> str:
    """The selector for the engine's request ``body`` (URL-quoted); a batch asks the same steps' again
    each row, and a fill's four locators (the fill and its read-back) share the step's part."""
    return f"{ENGINE}=" + quote(body, safe="")


def engine_declined(exc: BaseException) -> bool:
    """True when a locator from :func:`verified_locator` failed before acting: no verified match, or
    a document that predates the engine's registration."""
    text = str(exc)
    # an older document's Playwright script has no such engine: it fails looking up queryAll
    return _DECLINED in text or f'"{ENGINE}"' in text or "'queryAll'" in text


async def _handle(frame: Any, ref: str) -> Any:
    try:
        js = await frame.evaluate_handle(_HANDLE_JS, parse_ref(ref))
    except Exception:  # noqa: BLE001 - the frame navigated between the two calls: poll again
        return None
    el = js.as_element()
    if el is None:
        await js.dispose()
    return el


def _show(c: dict[str, Any]) -> str:
    return f'{c.get("ref")} {c.get("role")} "{c.get("name", "")}"'


def _explain(out: dict[str, Any], fp: dict[str, Any], chain: list[dict[str, Any]], frames: int) -> ChainRefused:
    status = out.get("status", "none")
    details: dict[str, Any] = {"reason": status, "selector_matches": out.get("counts", [])}
    want = f'{fp.get("role", "element")} "{fp.get("name", "")}"' if fp else "the recorded element"
    if status == "refused":
        r = out["refused"]
        diffs = [d for d in r.get("differs", []) if d != "visible"]
        parts = [f"{d} is {out['found'].get(d)!r}, recorded {fp.get(d)!r}" for d in diffs]
        if "visible" in r.get("differs", []):
            parts.append("it is hidden")
        via = chain[out["entry"]]["type"] if out.get("entry") is not None else "?"
        msg = f"refused {_show(r)} (found by {via}), not the recorded {want}: " + "; ".join(parts)
        details.update(refused=r, differs=r.get("differs", []), via=via)
        details["recorded"] = {d: fp.get(d) for d in diffs}
        details["found"] = out.get("found", {})
    elif status == "ambiguous":
        msg = f"{out.get('agreeing', 2)} visible elements agree with the recorded {want}; none can be chosen"
        details.update(refused=out["refused"], differs=["ambiguous"])
    elif status == "frame":
        msg = f"the recorded frame ({(fp.get('frame') or {}).get('url')}) is not on the page"
        details.update(differs=["frame"])
    else:
        kinds = ", ".join(e["type"] for e in chain)
        msg = f"no element matches any of the {len(chain)} selectors ({kinds}) of the recorded {want}"
    cands = out.get("candidates") or []
    details["candidates"] = cands[:3]
    if cands and status != "ambiguous":
        msg += "; candidates: " + ", ".join(
            _show(c) + (f" (differs: {', '.join(c['differs'])})" if c.get("differs") else "") for c in cands[:3]
        )
    elif cands:
        msg += ": " + ", ".join(_show(c) for c in cands[:3])
    if frames > 1:
        details["frames_searched"] = frames
    return ChainRefused(msg, details=details)


async def resolve(
    page: Any,
    chain: list[dict[str, Any]],
    fingerprint: dict[str, Any] | None = None,
    *,
    frame_ordinal: int = 0,
    timeout_ms: int = 0,
    tolerate: list[str] | tuple[str, ...] = (),
) -> Resolution:
    """The element ``chain`` singles out that agrees with ``fingerprint``, or :class:`ChainRefused`.

    Polls until ``timeout_ms`` while nothing agrees (the page may still be rendering). Never acts.
    """
    chain = stored_chain(chain)
    fp = dict(fingerprint or {})
    tol = list(tolerate)
    js_fp = {k: v for k, v in fp.items() if k != "frame"}
    ordinal = int((fp.get("frame") or {}).get("ordinal", frame_ordinal) or 0)
    state = page_refs(page)
    deadline = time.monotonic() + max(timeout_ms, 0) / 1000
    attempts = 0
    if len(frames := _frames(page, fp, ordinal)) == 1 and chain:
        # The common case in one round trip: the first entry singles out an element that agrees.
        handle = await _first(page, frames[0], {"chain": chain, "fingerprint": js_fp, "tolerate": tol})
        if handle is not None:
            role, name = str(fp.get("role") or ""), str(fp.get("name") or "")
            return Resolution(handle, frames[0], "", role, name, 0, chain[0]["type"], 1, bool(js_fp), tol)
    while True:
        attempts += 1
        frames = _frames(page, fp, ordinal)
        results: list[tuple[Any, dict[str, Any]]] = []
        async with state.lock:
            for frame in frames:
                try:
                    out = await call(
                        frame, page, {"op": "resolveStep", "chain": chain, "fingerprint": js_fp, "tolerate": tol}
                    )
                except OcnbError:
                    continue  # a frame that navigated or went away
                results.append((frame, out))
        oks = [(f, o) for f, o in results if o["status"] == "ok"]
        if len(oks) == 1:
            frame, out = oks[0]
            handle = await _handle(frame, out["ref"])
            if handle is not None:
                found = out.get("found") or {}
                return Resolution(
                    handle,
                    frame,
                    out["ref"],
                    found.get("role", ""),
                    found.get("name", ""),
                    out["entry"],
                    chain[out["entry"]]["type"],
                    attempts,
                    bool(js_fp),
                    tol,
                )
        if len(oks) > 1:
            last = {"status": "ambiguous", "refused": oks[0][1]["found"], "agreeing": len(oks)}
            last["candidates"] = [o["found"] for _, o in oks[:3]]
        elif not frames:
            last = {"status": "frame"}
        else:
            informative = [o for _, o in results if o["status"] != "none"]
            last = informative[0] if informative else (results[0][1] if results else {"status": "none"})
        if time.monotonic() >= deadline:
            raise _explain(last, fp, chain, len(frames))
        await asyncio.sleep(POLL_S)


async def resolve_chain(page: Any, chain: list[dict[str, Any]]) -> tuple[Any, int | None, int]:
    """``(element, entry_index, attempts)`` of the first entry singling out one element, unverified.

    For callers that hold a chain but no fingerprint; ``(None, None, attempts)`` when nothing matches.
    """
    try:
        r = await resolve(page, chain)
    except ChainRefused as exc:
        return None, None, len(exc.details.get("selector_matches") or [])
    return r.element, r.entry_index, r.entry_index + 1
