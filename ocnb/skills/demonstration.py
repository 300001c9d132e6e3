"""Demonstrations: what a person does in the page, recorded as the steps a capturing call would record.

:class:`Demonstration` installs ``recorder.js`` on a browser context (an init script for new
documents, evaluated in the frames already open) with a binding it answers. The script reports
only trusted input — clicks, typing, choices, checkboxes and radios, keys that act — with the
element's selector chain and fingerprint taken in the page at event time by the perception
script's ``capture`` op (the same as :func:`ocnb.perception.selectors.capture_element`); a report
without this recording's nonce (a page script calling the binding) is refused and counted.
Navigations the browser starts itself (an address typed, ``navigate``: ``Sec-Fetch-Site: none``)
become navigate steps; the ones a step causes do not.

Typing is coalesced into one fill per field. A password field's value never leaves the page: its
step holds ``${SECRET:NAME}`` (named from the field). :meth:`Demonstration.finish` turns the
steps into capture-buffer entries (:func:`ocnb.skills.capture.to_skill_steps` makes skill steps
of them), with ``${var}`` for fields the person names as parameters.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import secrets
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..perception.refs import script as perception_script
from ..perception.selectors import frame_fingerprint, stored_chain
from .capture import artifact_for

__all__ = ["DemoStep", "Demonstration", "demonstration_of", "field_keys", "file_param", "secret_name"]

#: Steps one demonstration keeps; later input is counted in ``Demonstration.dropped``, not kept.
MAX_STEPS = 500
#: Notes of input that could not become a step, newest kept.
MAX_SKIPPED = 50
#: Characters of a dialog's message and a prompt's answer kept.
MAX_DIALOG_TEXT = 2000
#: File names one file choice keeps (the step's value, shown to the person; never replayed).
MAX_FILES = 20
#: How long after a step a navigation without a ``Sec-Fetch-Site`` header counts as caused by it.
CAUSE_WINDOW_S = 3.0
_KEY_SYMBOL = "ocnb.recorder."


@functools.cache
def _recorder_js() -> str:
    return Path(__file__).with_name("recorder.js").read_text(encoding="utf-8")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class DemoStep:
    """One recorded step: an element act (with chain and fingerprint) or a navigation."""

    action: str  # click, fill, check, uncheck, select, press, navigate, upload
    tab_id: str | None
    url: str
    chain: list[dict[str, Any]] = field(default_factory=list)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    value: Any = None
    key: str | None = None
    secret: str | None = None  # the ${SECRET:…} name when the value is a secret
    new_tab: bool = False
    label: str = ""
    element: tuple[int, str, int] | None = None  # (frame, document url, element number): one field
    #: The dialog this step opened and how it was answered: type, message, accept (and a prompt's text).
    dialog: dict[str, Any] | None = None
    #: When the act happened, ms since the epoch (the page's clock for input it reports).
    at: float = field(default_factory=lambda: time.time() * 1000)
    recorded_at: str = field(default_factory=_now)

    def target(self) -> dict[str, Any]:
        return {"role": self.fingerprint.get("role"), "name": self.fingerprint.get("name")}

    def describe(self) -> str:
        """The intent inferred from the element: ``fill textbox "Email"``, ``click button "Sign up"`` …"""
        role, name = self.fingerprint.get("role") or "element", self.fingerprint.get("name") or ""
        what = f'{role} "{name}"' if name else role
        if self.action == "navigate":
            text = f"open {self.url}" + (" in a new tab" if self.new_tab else "")
        elif self.action == "select":
            text = f"choose {self.value!r} in {what}"
        elif self.action == "press":
            text = f"press {self.key}" + (f" in {what}" if self.chain else "")
        elif self.action == "upload":
            text = f"upload file(s) to {what}"
        else:
            text = f"{self.action} {what}"
        return text[:120]


def field_keys(fp: dict[str, Any], chain: list[dict[str, Any]]) -> set[str]:
    """The names a person may use for a field: its ``name`` attribute, label, accessible name, id."""
    keys = {str(fp.get(k) or "").strip().lower() for k in ("name_attr", "label", "name")}
    for e in chain:
        if e.get("type") == "css" and str(e.get("value", "")).startswith("#"):
            keys.add(str(e["value"])[1:].lower())
    keys.discard("")
    return keys


def file_param(fp: dict[str, Any], chain: list[dict[str, Any]]) -> str:
    """The ``${file_…}`` parameter of a file input's paths: ``file_`` and its name attribute, label or id."""
    ids = [str(e["value"])[1:] for e in chain if e.get("type") == "css" and str(e.get("value", "")).startswith("#")]
    base = str(fp.get("name_attr") or fp.get("label") or (ids[0] if ids else "") or fp.get("name") or "upload")
    return "file_" + (re.sub(r"[^A-Za-z0-9]+", "_", base).strip("_").lower() or "upload")


def secret_name(fp: dict[str, Any], taken: set[str]) -> str:
    """A ``${SECRET:NAME}`` name for a field: its name attribute or label, upper-cased (``PASSWORD``)."""
    base = str(fp.get("name_attr") or fp.get("label") or fp.get("name") or "secret")
    name = re.sub(r"[^A-Za-z0-9]+", "_", base).strip("_").upper() or "SECRET"
    if name[0].isdigit():
        name = "S_" + name
    out, n = name, 2
    while out in taken:
        out, n = f"{name}_{n}", n + 1
    return out


class Demonstration:
    """The recording of one browser state's context (see the module docstring). Runs on the browser thread."""

    def __init__(self, state: Any) -> None:
        self._state = state
        self.active = False
        self.steps: list[DemoStep] = []
        #: Reports refused: without this recording's nonce (a page script), or from another context.
        self.refused = 0
        #: Input that cannot become a replayable step (file choices), with the reason.
        self.skipped: list[dict[str, Any]] = []
        #: Steps not kept: the demonstration already had :data:`MAX_STEPS`.
        self.dropped = 0
        self._nonce = ""
        self._binding = ""
        self._disposables: list[Any] = []
        self._listeners: list[tuple[Any, str, Any]] = []
        self._last_act: dict[str | None, float] = {}
        self._new_tabs: set[str] = set()
        self._secret_names: dict[tuple[int, str, int], str] = {}
        self._cdp: list[Any] = []
        #: Per tab: the last dialog answered (opened at, answer, the step it went to).
        self._dialogs: dict[str, tuple[float, dict[str, Any], DemoStep]] = {}
        self._holding = False

    # -- start and stop --------------------------------------------------------------------------
    async def start(self, secret_fields: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
        """Start recording in every tab (and tab opened later); the active tab's page is the first step."""
        if self.active:
            raise InvalidArgument("a demonstration is already being recorded; stop it first (record_stop)")
        if self.steps:
            raise InvalidArgument(
                f"{len(self.steps)} recorded step(s) are not saved yet: record_stop with a name saves them, "
                "with discard drops them"
            )
        context = self._state.live_context()
        self.steps, self.skipped, self.refused, self.dropped = [], [], 0, 0
        self._last_act, self._new_tabs, self._secret_names, self._dialogs = {}, set(), {}, {}
        self._nonce = secrets.token_hex(16)
        self._binding = "__ocnb_rec_" + secrets.token_hex(6)
        cfg = {"binding": self._binding, "nonce": self._nonce, "secretFields": list(secret_fields)}
        source = f"({_recorder_js()})({json.dumps(cfg)}, ({perception_script()}))"
        self._disposables.append(await context.expose_binding(self._binding, self._on_report))
        self._disposables.append(await context.add_init_script(source))
        self.active = True
        self._state.dialogs.held += 1  # dialogs are the person's to answer meanwhile
        self._holding = True
        for tab in list(self._state.tabs.values()):
            await self._watch(tab.page, source)
        self._on(context, "page", self._on_page)
        tab = self._state.tab()
        if tab.page.url.startswith(("http://", "https://")):
            self.steps.append(DemoStep("navigate", tab.id, tab.page.url))
        return {"recording": True, "tab_id": tab.id, "url": tab.page.url}

    async def stop(self) -> None:
        """Stop recording: remove the script and binding, silence the recorders already in documents."""
        self.active = False
        if self._holding:
            self._holding = False
            self._state.dialogs.held -= 1
        sessions, self._cdp = self._cdp, []
        for cdp in sessions:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(cdp.detach(), 2)
        for emitter, event, handler in self._listeners:
            with contextlib.suppress(Exception):
                emitter.remove_listener(event, handler)
        self._listeners.clear()
        disposables, self._disposables = self._disposables, []
        for d in disposables:
            with contextlib.suppress(Exception):
                await d.close()
        key = _KEY_SYMBOL + self._nonce
        for tab in list(self._state.tabs.values()):
            for frame in list(tab.page.frames):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        frame.evaluate("(k) => { const s = window[Symbol.for(k)]; if (s) s.active = false; }", key), 2
                    )

    def clear(self) -> None:
        """Forget the steps (after they were saved or discarded)."""
        self.steps, self.skipped, self._secret_names, self._dialogs = [], [], {}, {}

    def _on(self, emitter: Any, event: str, handler: Any) -> None:
        emitter.on(event, handler)
        self._listeners.append((emitter, event, handler))

    async def _watch(self, page: Any, source: str | None) -> None:
        self._on(page, "request", lambda request, p=page: self._on_request(p, request))
        await self._watch_dialogs(page)
        if source is None:
            return
        for frame in list(page.frames):  # documents already open: the init script is for new ones
            with contextlib.suppress(Exception):
                await asyncio.wait_for(frame.evaluate(source), 5)

    def _on_page(self, page: Any) -> None:
        tab = self._state.tab_of(page)
        if tab is None:
            return
        self._on(page, "request", lambda request, p=page: self._on_request(p, request))
        self._on(page, "framenavigated", lambda frame, p=page: self._on_framenavigated(p, frame))
        asyncio.ensure_future(self._new_tab(page, tab.id))
        asyncio.ensure_future(self._watch_dialogs(page))

    async def _watch_dialogs(self, page: Any) -> None:
        """Hear how the page's dialogs are answered, whoever answers (``Page.javascriptDialogClosed``
        tells the answer and a prompt's text; the Playwright side of ocnb sees only the opening)."""
        with contextlib.suppress(Exception):
            cdp = await page.context.new_cdp_session(page)
            self._cdp.append(cdp)
            opened: dict[str, Any] = {}
            cdp.on("Page.javascriptDialogOpening", lambda event: opened.update(event, at=time.time() * 1000))
            cdp.on("Page.javascriptDialogClosed", lambda event: self._dialog_closed(page, dict(opened), event))
            await asyncio.wait_for(cdp.send("Page.enable"), 5)

    def _dialog_closed(self, page: Any, opened: dict[str, Any], event: dict[str, Any]) -> None:
        tab = self._state.tab_of(page)
        if tab is None:
            return
        accepted = bool(event.get("result"))
        self._state.dialogs.closed(tab, accepted)  # answered in the window or by another driver
        if not self.active:
            return
        answer: dict[str, Any] = {
            "type": str(opened.get("type") or ""),
            "message": str(opened.get("message") or "")[:MAX_DIALOG_TEXT],
            "accept": accepted,
        }
        if answer["type"] == "prompt" and accepted:
            answer["text"] = str(event.get("userInput") or "")[:MAX_DIALOG_TEXT]
        at = float(opened.get("at") or time.time() * 1000)
        step = next((s for s in reversed(self.steps) if s.tab_id == tab.id and s.at <= at), None)
        if step is None:
            self.skipped.append(
                {"input": "dialog answered", "message": answer["message"], "reason": "no step before it"}
            )
            del self.skipped[:-MAX_SKIPPED]
            return
        step.dialog = answer
        self._dialogs[tab.id] = (at, answer, step)

    def _late_opener(self, step: DemoStep) -> None:
        """The report of the act that opened a dialog can come after the dialog's answer (two channels
        of DevTools): a step that happened before the tab's last dialog opened, and after the step its
        answer went to, is the one that opened it."""
        last = self._dialogs.get(step.tab_id or "")
        if last is None or step.dialog is not None:
            return
        at, answer, went_to = last
        if went_to.at < step.at <= at and went_to.dialog is answer:
            went_to.dialog, step.dialog = None, answer
            self._dialogs[step.tab_id or ""] = (at, answer, step)

    async def _new_tab(self, page: Any, tab_id: str) -> None:
        """A tab nobody's page opened (no opener): its first address is a step, even when it loaded
        before these listeners were attached (another program may open and fill it at once)."""
        with contextlib.suppress(Exception):
            if await page.opener() is not None:
                return
            self._new_tabs.add(tab_id)
            self._tab_navigated(tab_id, str(page.url))

    def _on_framenavigated(self, page: Any, frame: Any) -> None:
        tab = self._state.tab_of(page)
        if tab is not None and frame is page.main_frame and tab.id in self._new_tabs:
            self._tab_navigated(tab.id, str(frame.url))

    def _tab_navigated(self, tab_id: str, url: str) -> None:
        if not self.active or not url.startswith(("http://", "https://")):
            return
        if any(s.tab_id == tab_id for s in self.steps):
            return  # its request made the step already, or the tab has steps of its own
        self._append(DemoStep("navigate", tab_id, url, new_tab=True))

    # -- what the page reports ---------------------------------------------------------------------
    async def _on_report(self, source: dict[str, Any], msg: Any) -> bool:
        if not isinstance(msg, dict) or msg.get("nonce") != self._nonce or not self._nonce:
            self.refused += 1
            return False
        if msg.get("type") == "hello" or not self.active:
            return self.active
        page, frame = source.get("page"), source.get("frame")
        tab = self._state.tab_of(page) if page is not None else None
        if tab is None or frame is None:
            self.refused += 1
            return False
        self._take(tab, page, frame, msg)
        return True

    def _take(self, tab: Any, page: Any, frame: Any, msg: dict[str, Any]) -> None:
        kind = str(msg.get("type") or "")
        fp = dict(msg.get("fingerprint") or {}) if isinstance(msg.get("fingerprint"), dict) else {}
        chain = [e for e in (msg.get("chain") or []) if isinstance(e, dict)]
        if fp:
            fp["frame"] = frame_fingerprint(page, frame)
        element = (id(frame), str(frame.url), int(msg.get("id") or 0)) if msg.get("id") else None
        if kind not in ("click", "fill", "check", "uncheck", "select", "press", "file"):
            return
        if kind != "press" and not chain:
            return
        self._last_act[tab.id] = time.monotonic()
        last = self.steps[-1] if self.steps else None
        if kind == "fill" and last is not None and last.action == "fill" and last.element == element:
            if not msg.get("secret"):
                last.value = str(msg.get("value") or "")
            return  # typing coalesced into one fill per field
        step = DemoStep(kind, tab.id, page.url, chain=chain, fingerprint=fp, element=element)
        if isinstance(msg.get("t"), int | float):
            step.at = float(msg["t"])
        if kind == "fill":
            if msg.get("secret") and element is not None:
                name = self._secret_names.get(element)
                if name is None:
                    name = self._secret_names[element] = secret_name(fp, set(self._secret_names.values()))
                step.secret, step.value = name, "${SECRET:" + name + "}"
            else:
                step.value = str(msg.get("value") or "")
        elif kind == "select":
            value = msg.get("value")
            step.value = [str(v) for v in value] if isinstance(value, list) else str(value or "")
            if last is not None and last.action == "select" and last.element == element:
                last.value = step.value  # a second choice in the same list replaces the first
                return
        elif kind == "press":
            step.key = str(msg.get("key") or "")
            if not step.key:
                return
        elif kind == "file":  # the page sees only the names: the paths are a parameter at replay
            files = msg.get("files")
            step.action = "upload"
            step.value = [str(f)[:200] for f in files[:MAX_FILES]] if isinstance(files, list) else []
            if last is not None and last.action == "upload" and last.element == element:
                last.value = step.value  # chosen again: the last choice stands
                return
        self._append(step)

    def _append(self, step: DemoStep) -> None:
        if len(self.steps) >= MAX_STEPS:
            self.dropped += 1
            return
        self.steps.append(step)
        self._late_opener(step)

    def _on_request(self, page: Any, request: Any) -> None:
        if not self.active:
            return
        with contextlib.suppress(Exception):
            if not request.is_navigation_request() or request.frame != page.main_frame:
                return
            if request.redirected_from is not None:
                return
            asyncio.ensure_future(self._navigation(page, request))

    async def _navigation(self, page: Any, request: Any) -> None:
        tab = self._state.tab_of(page)
        if tab is None or not str(request.url).startswith(("http://", "https://")):
            return
        when = time.monotonic()
        site = None
        with contextlib.suppress(Exception):
            site = (await asyncio.wait_for(request.all_headers(), 5)).get("sec-fetch-site")
        if site is None:  # no header to tell: a navigation soon after a step is the step's
            if when - self._last_act.get(tab.id, -1e9) < CAUSE_WINDOW_S:
                return
        elif site != "none":
            return  # the page started it (a link, a form, a script): the step that caused it is recorded
        if not self.active:
            return
        prev = next((s for s in reversed(self.steps) if s.tab_id == tab.id), None)
        if prev is not None and prev.action == "navigate" and prev.url == request.url:
            return  # the same address again (a new tab's first one, seen as it committed)
        new_tab = tab.id in self._new_tabs and not any(s.tab_id == tab.id for s in self.steps)
        self._append(DemoStep("navigate", tab.id, str(request.url), new_tab=new_tab))

    # -- the result ---------------------------------------------------------------------------------
    def entries(
        self,
        *,
        params: dict[str, str] | None = None,
        secrets_: dict[str, str] | None = None,
        labels: dict[int, str] | None = None,
        risky_words: tuple[str, ...] = (),
    ) -> list[dict[str, Any]]:
        """The steps as capture-buffer entries: ``params`` maps a field (its name, label or id) to a
        ``${var}``, ``secrets_`` to a ``${SECRET:NAME}``; ``labels`` replaces step intents by index."""
        params = {k.strip().lower(): v for k, v in (params or {}).items()}
        secrets_ = {k.strip().lower(): v for k, v in (secrets_ or {}).items()}
        used: set[str] = set()
        out = []
        for i, step in enumerate(self.steps):
            value = step.value
            keys = field_keys(step.fingerprint, step.chain) if step.action in ("fill", "select", "upload") else set()
            hit = next((k for k in keys if k in secrets_), None)
            if hit is not None and step.action == "fill":
                value = "${SECRET:" + secrets_[hit] + "}"
                used.add(hit)
            hit = next((k for k in keys if k in params), None)
            if hit is not None and step.secret is None:
                value = "${" + params[hit] + "}"
                used.add(hit)
            elif step.action == "upload":  # the real paths never reach the page: always a parameter
                value = "${" + file_param(step.fingerprint, step.chain) + "}"
            dialog = dict(step.dialog) if step.dialog else None
            if dialog is not None and "text" in dialog:  # a prompt's answer: by "prompt" or its message
                said = {"prompt", str(dialog["message"]).strip().lower()}
                hit = next((k for k in said if k in params), None)
                if hit is not None:
                    dialog["text"] = "${" + params[hit] + "}"
                    used.add(hit)
            entry = self._entry(step, value, (labels or {}).get(i) or step.describe(), risky_words)
            if dialog is not None:
                entry["steps"][-1]["args"]["dialog"] = dialog  # replay answers it so (Dialogs.arm)
            out.append(entry)
        unknown = sorted((set(params) | set(secrets_)) - used)
        if unknown:
            fields = sorted(
                {
                    k
                    for s in self.steps
                    if s.action in ("fill", "select", "upload")
                    for k in field_keys(s.fingerprint, s.chain)
                }
                | {"prompt" for s in self.steps if s.dialog and "text" in s.dialog}
            )
            raise InvalidArgument(
                f"no recorded field is called {', '.join(map(repr, unknown))}; fields: {', '.join(fields) or 'none'}",
                details={"unknown": unknown, "fields": fields},
            )
        return out

    @staticmethod
    def _entry(step: DemoStep, value: Any, label: str, risky_words: tuple[str, ...]) -> dict[str, Any]:
        args: dict[str, Any]
        if step.action == "navigate":
            tool = "tabs_create" if step.new_tab else "navigate"
            args = {"url": step.url}
            low = artifact_for(tool, args, {"url": step.url}, risky_words)
        elif step.action == "upload":
            tool = "file_upload"
            role, name = step.fingerprint.get("role") or "", step.fingerprint.get("name") or ""
            args = {"query": f'{role} "{name}"' if role and name else name or role, "paths": value}
            low = [
                {
                    "kind": "upload",
                    "selectors": stored_chain(step.chain),
                    "frame_ordinal": int((step.fingerprint.get("frame") or {}).get("ordinal", 0) or 0),
                    "args": {"action": "upload", "paths": value},
                    "risky": False,
                    "target": step.target(),
                    "fingerprint": step.fingerprint,
                }
            ]
        else:
            tool = "interact"
            action = "fill" if step.action == "fill" else step.action
            role, name = step.fingerprint.get("role") or "", step.fingerprint.get("name") or ""
            args = {"query": f'{role} "{name}"' if role and name else name or role, "action": action}
            if step.action in ("fill", "select"):
                args["value"] = value
            if step.action == "press":
                args["key"] = step.key
            data = {
                "element": step.target(),
                "selector_chain": step.chain,
                "fingerprint": step.fingerprint,
                "frame_ordinal": int((step.fingerprint.get("frame") or {}).get("ordinal", 0) or 0),
            }
            low = artifact_for(tool, args, data, risky_words)
        return {
            "tool": tool,
            "args": args,
            "intent": label,
            "url": step.url,
            "recorded_at": step.recorded_at,
            "steps": low,
        }

    def summary(self) -> list[dict[str, Any]]:
        """The steps so far, as a person reads them (a secret shows only its placeholder)."""
        out = []
        for i, s in enumerate(self.steps):
            item: dict[str, Any] = {"index": i, "action": s.action, "intent": s.describe(), "tab_id": s.tab_id}
            if s.action == "navigate":
                item["url"] = s.url
            else:
                item["target"] = s.target()
                item["selectors"] = len(s.chain)
            if s.action == "upload":  # the names the page saw; replay takes the paths as a parameter
                item["files"], item["param"] = s.value, file_param(s.fingerprint, s.chain)
            elif s.value is not None:
                item["value"] = s.value
            if s.key:
                item["key"] = s.key
            if s.dialog:
                item["dialog"] = s.dialog
            out.append(item)
        return out


_DEMOS: weakref.WeakKeyDictionary[Any, Demonstration] = weakref.WeakKeyDictionary()


def demonstration_of(state: Any) -> Demonstration:
    """The demonstration recorder of a browser state (created on first use, dropped with the state)."""
    demo = _DEMOS.get(state)
    if demo is None:
        demo = _DEMOS[state] = Demonstration(state)
    return demo
