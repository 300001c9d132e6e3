"""Approval before irreversible actions: which calls need a person's yes, and who gives it.

``Settings.confirm`` says which calls ask (``OCNB_CONFIRM``, ``ocnb mcp --confirm``,
``%config OcMagics.confirm``, ``Session(confirm=…)``):

- ``never`` — nothing asks (the Python API's and the magics' default: the person wrote the call);
- ``risky`` — an action is risky when the element's accessible name holds a word of the risky
  vocabulary (:data:`RISKY_WORDS` plus ``Settings.risky_words``) and the action clicks or presses it,
  when it submits a form to another origin than the frame's, and always for ``file_upload``
  (the MCP server's default);
- ``acting`` — every call of a tool with side effects asks (for a plan or a replay: each step).

The decision is taken *after* the target is resolved (the request names the element's role, name and
ref) and *before* anything happens in the page: the acting tools call :meth:`Approvals.check` at that
point (``ctx.session.approvals``); tools without an element are asked about in :meth:`Approvals.before` (``acting`` only).

Whose calls ask follows the caller (authority by caller): a person's own calls (cells, widgets,
Python) follow ``Settings.confirm``; an agent's (an MCP client's, :data:`~ocnb.calls.AGENT_SOURCES`,
and the plans and replays it runs) follow ``Settings.agent_confirm`` (default ``risky``).

Who approves, in order: an answer a face already gave for this very call (a person's held call,
answered in its cell's widget: :meth:`Approvals.settle`, then the face runs the call again);
``Session(approve=callable)``, which gets an :class:`ApprovalRequest` and returns yes or no (run off
the browser loop, so it may block to ask); for an agent's call, **the approval desk**: the request is
offered at once to the person (:meth:`Approvals.pending`, the desk widget, ``%oc approve``) and to the
agent's own client (MCP elicitation, through the call's :data:`~ocnb.calls.AskFn`); the call waits,
its time-out paused, until the first answer (the others are withdrawn or ignored), or ends
``APPROVAL_TIMEOUT`` after ``Settings.approval_timeout_s``. With nobody to ask at all (no desk attended,
no elicitation, no callable) and for a person's own call: ``APPROVAL_REQUIRED``, whose details are the
request with its ``approval_id`` for a face to settle. A no is ``APPROVAL_DENIED``. Either way nothing
happens in the page before a yes, and the call's journal line ends with ``approval: <decision> by
<who>`` (:data:`DECIDERS`) — its trace has an ``approval`` event with the request.

The person can also pause the agent (:meth:`Approvals.pause`): its calls then end ``PAUSED``,
journaled, nothing done; the person's own calls go on.

The desk's state — the waiting requests, whether a person attends, the pause and whose agent policy
applies — is a :class:`Desk` of its own, which a session may share: an ``--isolated`` MCP client's
session waits at its served session's desk (``Session(desk=served.approvals.desk)``).

Skill capture marks its risky steps with the same vocabulary (:func:`risky_word`), and skill replay
asks the same approver before a risky step (:meth:`Approvals.replay_approved`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import itertools
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..calls import CallContext, Host
from ..errors import (
    ApprovalDenied,
    ApprovalRequired,
    ApprovalTimeout,
    InvalidArgument,
    OcnbError,
    Paused,
    StaleRef,
    TargetNavigatedAway,
)
from ..files import atomic_write_bytes
from ..perception.context import place_candidates
from ..perception.targets import changed_since
from .notes import add_note, note
from .sanitize import sanitize_args
from .secrets import SecretStore

__all__ = [
    "COMMIT_ACTIONS",
    "DECIDERS",
    "ELEMENT_TOOLS",
    "RISKY_WORDS",
    "ApprovalRequest",
    "Approvals",
    "Desk",
    "DeskEntry",
    "Approver",
    "risky_word",
]

#: The risky vocabulary: an element whose accessible name holds one of these (as a whole word) pays,
#: deletes or sends something. ``Settings.risky_words`` adds words; skill capture uses the same list.
RISKY_WORDS = (
    "pay",
    "payment",
    "purchase",
    "buy",
    "checkout",
    "place order",
    "order now",
    "delete",
    "remove",
    "destroy",
    "send",
    "transfer",
    "wire",
    "submit payment",
)
#: Actions that can commit something by the element's name: a click or a key press on it.
COMMIT_ACTIONS = ("click", "double_click", "press", "submit")
#: Tools that resolve an element and ask (:meth:`Approvals.check`) once they have it.
ELEMENT_TOOLS = frozenset({"interact", "form_input", "fill_form", "file_upload", "drag_drop"})
#: Tools that run other calls: their steps are asked about one by one, not the whole.
CONTAINER_TOOLS = frozenset({"execute_plan", "oc_skill_replay"})
#: Who can decide, as the journal names them: the ``approve`` callable, a held call's widget, the
#: desk's person in the notebook (its widget, ``%oc approve``), Python (:meth:`Approvals.answer`), the
#: agent's MCP client (elicitation), and nobody.
DECIDERS = ("callable", "widget", "notebook", "python", "mcp", "mcp-client", "nobody")
#: How often a waiting call tells its face it still waits (MCP progress), in seconds.
WAIT_TICK_S = 1.0
#: Open requests kept for a face to settle (the oldest is forgotten beyond this).
PENDING_MAX = 50

_ids = itertools.count(1)

#: Where a click or key press on the element would submit its form to, and the frame's own origin.
_SUBMIT_JS = """(el, press) => {
  const form = el.form || (el.closest && el.closest('form'));
  if (!form) return null;
  const tag = el.tagName, type = (el.getAttribute('type') || '').toLowerCase();
  const button = (tag === 'BUTTON' && (type === '' || type === 'submit'))
    || (tag === 'INPUT' && (type === 'submit' || type === 'image'));
  const field = tag === 'INPUT' && !['button', 'checkbox', 'radio', 'reset', 'file'].includes(type);
  if (!(button || (press && field))) return null;
  const action = button && el.hasAttribute('formaction') ? el.formAction : form.action;
  let target;
  try { target = new URL(action, document.baseURI).origin; } catch (e) { return null; }
  return {target, origin: location.origin};
}"""


@functools.lru_cache(maxsize=64)
def _pattern(extra: tuple[str, ...]) -> re.Pattern[str]:
    words = sorted({*RISKY_WORDS, *extra}, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in words) + r")\b", re.I)


def risky_word(name: str | None, extra: Iterable[str] = ()) -> str | None:
    """The word of the risky vocabulary (plus ``extra``) that ``name`` holds, or None."""
    if not name:
        return None
    found = _pattern(tuple(extra)).search(str(name))
    return found.group(1).lower() if found else None


@dataclass(frozen=True)
class ApprovalRequest:
    """What the approver is asked: the call, the element it would act on, and why it asks."""

    tool: str
    #: The call's arguments as given, secrets masked and sensitive keys redacted.
    args: dict[str, Any]
    role: str | None
    name: str | None
    ref: str | None
    #: The page the action would happen on.
    url: str
    intent: str | None
    #: Why it asks: the risky word, the other origin a form posts to, ``file_upload``, or ``confirm=acting``.
    reason: str
    approval_id: str = field(default_factory=lambda: f"a{next(_ids)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: ``approve(request) -> bool``: yes (True) runs the action, anything else refuses it.
Approver = Callable[[ApprovalRequest], object]


@dataclass
class DeskEntry:
    """An agent's call waiting at the desk: its request, where it comes from, and the one answer."""

    request: ApprovalRequest
    #: The face of the call that asks (``mcp``).
    source: str
    #: The element as the person sees it: role, name, ref, the row or form around it (``context``)
    #: and its ``box`` on :attr:`screenshot` (a PNG file), when they could be read.
    element: dict[str, Any]
    screenshot: str | None
    opened: float = field(default_factory=time.time)
    #: The MCP client's name (``clientInfo.name``) — an isolated client's request at its served session's desk.
    client: str | None = None
    #: ``(approved, by)`` once answered — the first answer; the others are refused.
    answer: concurrent.futures.Future[tuple[bool, str]] = field(default_factory=concurrent.futures.Future)
    #: ``approval`` (Approve / Deny), or ``pick``: an agent's hand-off, answered with a candidate.
    kind: str = "approval"
    #: A pick's candidates as :func:`~ocnb.perception.context.place_candidates` placed them.
    candidates: list[dict[str, Any]] = field(default_factory=list)
    #: The ref the first pick chose.
    picked: str | None = None
    #: Makes a pick's ref and its answer one step (against a second pick, or the wait's end).
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """What :meth:`Approvals.pending` lists: the request, its element, source and screenshot."""
        req = self.request.to_dict()
        return {
            **req,
            "kind": self.kind,
            "candidates": [dict(c) for c in self.candidates],
            "element": dict(self.element),
            "page": req["url"],
            "why": req["reason"],
            "source": self.source,
            "client": self.client,
            "screenshot": self.screenshot,
            "waiting": True,
            "opened": self.opened,
        }


@dataclass
class _Settled:
    """A face's answer to an open request, waiting for the same call to run again."""

    tool: str
    args: dict[str, Any]
    target: tuple[str | None, str | None]
    approved: bool
    by: str


class Desk:
    """The approval desk: agents' calls waiting for the person's answer, the person's presence at it,
    and whether the agent is paused — shared by a served session and its isolated MCP clients' sessions.

    ``policy()`` returns the settings whose ``agent_confirm`` and ``approval_timeout_s`` the agents'
    calls at this desk follow (its owner's, read at each call).
    """

    def __init__(self, policy: Callable[[], Any]) -> None:
        self.policy = policy
        #: Agents' calls waiting, by ``approval_id`` (any session at this desk).
        self.waiting: dict[str, DeskEntry] = {}
        #: Called (no arguments, from any thread) when the desk changes: a request opens or closes,
        #: the agent is paused or resumed.
        self.listeners: list[Callable[[], None]] = []
        #: While true, the agents' calls end ``PAUSED``.
        self.paused = False
        self._attendants = 0
        self._lock = threading.Lock()

    @property
    def attended(self) -> bool:
        return self._attendants > 0

    def attend(self) -> Callable[[], None]:
        """Say a person watches the desk; returns the function that says they left (idempotent)."""
        with self._lock:
            self._attendants += 1
        left = threading.Event()

        def leave() -> None:
            if not left.is_set():
                left.set()
                with self._lock:
                    self._attendants -= 1

        return leave

    def pause(self) -> None:
        self.paused = True
        self.changed()

    def resume(self) -> None:
        self.paused = False
        self.changed()

    def changed(self) -> None:
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # a display never fails a call
                listener()


class Approvals:
    """A session's approval layer: the approver, the open requests and the faces' answers to them.

    ``approve`` is ``Session(approve=…)``; ``secrets`` masks what a request shows.
    """

    def __init__(
        self, host: Host, secrets: SecretStore, approve: Approver | None = None, *, desk: Desk | None = None
    ) -> None:
        if approve is not None and not callable(approve):
            raise TypeError(f"approve must be a callable taking an ApprovalRequest, not {type(approve).__name__}")
        self.host = host
        self.secrets = secrets
        self.approve = approve
        #: The approval desk this session's agent calls wait at: its own, or (an isolated MCP client's
        #: session) the served session's, so that the person's desk, answers and pause reach it.
        self.desk: Desk = desk if desk is not None else Desk(lambda: host.config)
        #: Held requests (``APPROVAL_REQUIRED``: a person's call, or nobody to ask), by ``approval_id``.
        self.held: dict[str, tuple[ApprovalRequest, dict[str, Any]]] = {}
        #: Agents' calls waiting at the desk, by ``approval_id`` (the desk's, shared by the sessions at it).
        self.waiting: dict[str, DeskEntry] = self.desk.waiting
        self._settled: list[_Settled] = []
        #: Called (no arguments, from any thread) when the desk changes: a request opens or closes,
        #: the agent is paused or resumed. The desk widget redraws on it (the desk's list).
        self.listeners: list[Callable[[], None]] = self.desk.listeners

    @property
    def paused(self) -> bool:
        """While true, an agent's calls end ``PAUSED`` (:meth:`pause`; the desk's state)."""
        return self.desk.paused

    @property
    def agent_settings(self) -> Any:
        """The settings whose ``agent_confirm`` and ``approval_timeout_s`` an agent's call follows: the desk's owner's."""
        return self.desk.policy()

    # -- the policy ---------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        """The person's policy (``Settings.confirm``); an agent's call follows :meth:`mode_for`."""
        return str(self.host.config.confirm)

    def mode_for(self, call: CallContext) -> str:
        """The policy of ``call``'s caller: ``agent_confirm`` for an agent's call, else ``confirm``."""
        return str(self.agent_settings.agent_confirm if call.agent else self.host.config.confirm)

    def gate(self, call: CallContext) -> None:
        """Before-hook (early): an agent's call while the agent is paused ends ``PAUSED``, nothing done."""
        if self.paused and call.agent:
            raise Paused(
                f"{call.name}: the person paused the agent (%oc mcp pause); nothing was done — "
                "wait and try again once they resume it"
            )

    async def before(self, call: CallContext) -> None:
        """Before-hook: with ``acting``, ask before a tool with side effects that has no element to
        resolve (those ask themselves once they have it, :meth:`check`)."""
        tooldef = call.tooldef
        if self.mode_for(call) != "acting" or tooldef is None or not tooldef.side_effects or call.source == "replay":
            return
        if call.name in ELEMENT_TOOLS or call.name in CONTAINER_TOOLS:
            return
        await self.decide(
            call, self.request(call, None, _page_url(self.host, call), "confirm=acting: every acting call")
        )

    async def check(self, call: CallContext, page: Any, target: Any, *, action: str, key: str | None = None) -> None:
        """Ask, when the policy says so, before ``action`` on the resolved ``target`` (or None: the page)."""
        mode = self.mode_for(call)
        if mode == "never":
            return
        reason = await self.risk(call.name, target, action=action, key=key)
        if reason is None and mode == "acting":
            reason = "confirm=acting: every acting call"
        if reason is None:
            return
        req = self.request(call, target, str(getattr(page, "url", "") or ""), reason)
        await self.decide(call, req, page=page, target=target)

    async def risk(self, tool: str, target: Any, *, action: str, key: str | None = None) -> str | None:
        """Why the action is risky, or None: ``file_upload``, a risky word in the element's name
        (for a click or key press), or a form it submits to another origin."""
        if tool == "file_upload":
            return "file_upload sends a local file to the page"
        if target is None or action not in COMMIT_ACTIONS:
            return None
        word = risky_word(getattr(target, "name", None), self.host.config.risky_words)
        if word is not None:
            return f"its name holds the risky word {word!r}"
        press = action == "press" and (key or "").split("+")[-1] in ("Enter", "NumpadEnter")
        if action == "press" and not press:
            return None
        try:
            found = await target.element.evaluate(_SUBMIT_JS, press)
        except Exception:  # noqa: BLE001 - a detached element submits nothing; the action will say so
            return None
        if found and found.get("target") not in (None, "null", found.get("origin")):
            return f"it submits a form to another origin ({found['target']})"
        return None

    def request(self, call: CallContext, target: Any, url: str, reason: str) -> ApprovalRequest:
        given = {k: v for k, v in call.args.items() if k != "intent"}
        return ApprovalRequest(
            tool=call.name,
            args=sanitize_args(given, self.secrets),
            role=getattr(target, "role", None),
            name=getattr(target, "name", None),
            ref=getattr(target, "ref", None),
            url=url,
            intent=call.intent,
            reason=reason,
        )

    # -- who decides --------------------------------------------------------------------------
    async def decide(self, call: CallContext, req: ApprovalRequest, *, page: Any = None, target: Any = None) -> None:
        """Return when ``req`` is approved; raise ``APPROVAL_DENIED``, ``APPROVAL_TIMEOUT`` or
        ``APPROVAL_REQUIRED`` otherwise (see the module's docstring for who is asked)."""
        answer = self._take_settled(call, req)
        if answer is not None:
            approved, by = answer
        elif self.approve is not None:
            by = "callable"
            try:
                approved = (await asyncio.to_thread(self.approve, req)) is True
            except Exception as exc:  # noqa: BLE001 - an approver that fails has not said yes
                approved = False
                req = ApprovalRequest(**{**req.to_dict(), "reason": f"{req.reason}; the approver raised {exc!r}"[:300]})
        elif call.agent and (self.attended or call.root.ask_fn is not None):
            approved, by = await self._wait(call, req, page, target)
        else:
            self.held[req.approval_id] = (req, {"tool": call.name, "args": dict(call.args)})
            while len(self.held) > PENDING_MAX:
                del self.held[next(iter(self.held))]
            # a cell's or a widget's call is asked in the notebook (its widget); elsewhere nobody is asked
            self._note(call, req, "asked", "notebook" if call.root.source in ("magic", "widget") else "nobody")
            self._changed()
            raise ApprovalRequired(
                f"{_what(req)} needs a person's approval ({req.reason}); nothing was done",
                details=req.to_dict(),
            )
        self._note(call, req, "approved" if approved else "denied", by)
        if not approved:
            raise ApprovalDenied(
                f"{_what(req)} was not approved (by {by}); nothing was done",
                details={**req.to_dict(), "decided_by": by},
            )

    # -- the desk: an agent's call waits for the first answer -----------------------------------
    @property
    def attended(self) -> bool:
        """Whether a person is at the desk (``%oc mcp start``'s widget, a desk widget, :meth:`attend`)."""
        return self.desk.attended

    def attend(self) -> Callable[[], None]:
        """Say a person watches the desk: an agent's request then waits for an answer instead of
        failing at once. Returns the function that says they left (idempotent)."""
        return self.desk.attend()

    def pending(self) -> list[dict[str, Any]]:
        """Open requests, oldest first: agents' calls waiting at the desk (``waiting: True``), then
        held calls (``waiting: False``) — each with ``approval_id``, ``tool``, ``element`` (role, name,
        ref, context), ``page``, ``intent``, ``why`` and ``source``."""
        waiting = [e.to_dict() for e in list(self.waiting.values()) if not e.answer.done()]
        held = []
        for req, _call in list(self.held.values()):
            d = req.to_dict()
            element = {"role": req.role, "name": req.name, "ref": req.ref, "context": None}
            held.append(
                {
                    **d,
                    "kind": "approval",
                    "candidates": [],
                    "element": element,
                    "page": d["url"],
                    "why": d["reason"],
                    "source": None,
                    "client": None,
                    "waiting": False,
                }
            )
        return waiting + held

    def answer(self, approval_id: str, approved: bool, *, by: str = "python") -> dict[str, Any]:
        """Answer an open request. An agent's waiting call goes on at once (approved: it acts; else
        ``APPROVAL_DENIED``); the first answer wins and a later one is ``INVALID_ARGUMENT``. A held
        call is settled: the result's ``rerun`` (``{"tool", "args"}``) is the call to run again."""
        if by not in DECIDERS[:-1]:
            raise InvalidArgument(f"by must be one of {', '.join(DECIDERS[:-1])}, not {by!r}")
        if not isinstance(approved, bool):
            raise InvalidArgument(f"approved must be True or False, not {approved!r}")
        entry = self.waiting.get(approval_id)
        if entry is not None and entry.kind == "pick":
            raise InvalidArgument(f"{approval_id!r} is a hand-off: answer it with pick({approval_id!r}, N)")
        if entry is not None:
            try:
                entry.answer.set_result((approved, by))
            except concurrent.futures.InvalidStateError:
                raise InvalidArgument(f"approval request {approval_id!r} was already answered or closed") from None
            self._changed()
            return {"approval_id": approval_id, "approved": approved, "by": by, "rerun": None}
        if approval_id in self.held:
            tool, args = self.settle(approval_id, approved, by=by)
            return {"approval_id": approval_id, "approved": approved, "by": by, "rerun": {"tool": tool, "args": args}}
        raise InvalidArgument(f"no open approval request {approval_id!r} (already answered, timed out, or unknown)")

    def pick(self, handoff_id: str, choice: int | str, *, by: str = "python") -> dict[str, Any]:
        """Answer an agent's hand-off waiting at the desk with its candidate ``choice`` (1-based, as
        listed, or the candidate's ref). The agent's call then acts once on it; the first answer wins
        (the client's elicitation or another face), a later one is ``INVALID_ARGUMENT``."""
        if by not in DECIDERS[:-1]:
            raise InvalidArgument(f"by must be one of {', '.join(DECIDERS[:-1])}, not {by!r}")
        entry = self.waiting.get(handoff_id)
        if entry is None or entry.kind != "pick":
            raise InvalidArgument(
                f"no hand-off {handoff_id!r} waiting at the desk (already answered, timed out, or unknown)"
            )
        refs = [str(c["ref"]) for c in entry.candidates]
        if isinstance(choice, bool) or not isinstance(choice, int | str):
            raise InvalidArgument(f"choice must be a candidate's number (1-{len(refs)}) or ref, not {choice!r}")
        if isinstance(choice, int):
            if not 1 <= choice <= len(refs):
                raise InvalidArgument(f"no candidate #{choice}: {handoff_id} has {len(refs)} (1-{len(refs)})")
            ref = refs[choice - 1]
        elif choice in refs:
            ref = choice
        else:
            raise InvalidArgument(f"{choice!r} is not one of {handoff_id}'s candidates ({', '.join(refs)})")
        with entry.lock:
            if entry.answer.done():
                raise InvalidArgument(f"hand-off {handoff_id!r} was already answered or closed")
            entry.picked = ref
            try:
                entry.answer.set_result((True, by))
            except concurrent.futures.InvalidStateError:
                raise InvalidArgument(f"hand-off {handoff_id!r} was already answered or closed") from None
        self._changed()
        return {"handoff_id": handoff_id, "ref": ref, "by": by}

    async def wait_pick(self, call: CallContext, payload: dict[str, Any]) -> tuple[str, str] | None:
        """Offer an agent's hand-off (a ``NEEDS_HUMAN`` payload) at the desk and to the call's own
        client at once; wait, like an approval (lock let go, progress), for the first pick.
        Returns ``(ref, by)``, or None when nobody picked within ``approval_timeout_s``."""
        candidates = [dict(c) for c in payload.get("candidates") or [] if isinstance(c, dict) and c.get("ref")]
        req = ApprovalRequest(
            tool=call.name,
            args=sanitize_args({k: v for k, v in call.args.items() if k != "intent"}, self.secrets),
            role=None,
            name=None,
            ref=None,
            url=_page_url(self.host, call),
            intent=call.intent,
            reason=f"hand-off: {payload.get('message')}"[:300],
            approval_id=str(payload["handoff_id"]),
        )
        element: dict[str, Any] = {"role": None, "name": None, "ref": None, "context": None}
        entry = DeskEntry(
            req,
            call.root.source,
            element,
            payload.get("screenshot"),
            client=call.root.client,
            kind="pick",
            candidates=candidates,
        )
        hold = call.root.lock
        started = time.monotonic()  # after the handler: its time-out has ended already
        if hold is None:
            answer = await self._await_entry(call, entry, started)
        else:
            async with hold.released():
                answer = await self._await_entry(call, entry, started)
        if answer is None or entry.picked is None:
            return None
        return entry.picked, answer[1]

    def pause(self) -> None:
        """Pause the agent: its calls end ``PAUSED`` until :meth:`resume`; the person's go on."""
        self.desk.pause()

    def resume(self) -> None:
        """Let the agent's calls run again."""
        self.desk.resume()

    async def _wait(self, call: CallContext, req: ApprovalRequest, page: Any, target: Any) -> tuple[bool, str]:
        """Offer ``req`` at the desk and to the call's own client; wait for the first answer.

        The session's call lock is let go while it waits (the person's own calls run meanwhile) and
        taken back before the answer counts; a yes then holds only if the page and the element are
        still the ones the person approved (:meth:`_recheck`). The call's time-outs are paused for all
        of it, taking the lock back too: the person's call that holds it is not this call's time."""
        hold = call.root.lock
        paused = _pause_deadlines(call)
        started = time.monotonic()
        try:
            if hold is None:
                return await self._wait_unlocked(call, req, page, started)
            async with hold.released() as let_go:
                answer = await self._wait_unlocked(call, req, page, started)
        finally:
            _resume_deadlines(paused, time.monotonic() - started)
        if answer[0] and let_go:
            await self._recheck(call, req, page, target, by=answer[1])
        return answer

    async def _recheck(self, call: CallContext, req: ApprovalRequest, page: Any, target: Any, *, by: str) -> None:
        """After a wait during which other calls could run: refuse when the page navigated
        (``TARGET_NAVIGATED_AWAY``) or the element is gone or changed its role or name (``STALE_REF``)."""
        url = str(getattr(page, "url", "") or "") if page is not None else _page_url(self.host, call)
        error: OcnbError | None = None
        if url != req.url:
            error = TargetNavigatedAway(
                f"{_what(req)}: approved by {by}, but the page navigated away while it waited; nothing was done"
            )
        elif target is not None and (change := await changed_since(page, target)) is not None:
            error = StaleRef(
                f"{_what(req)}: approved by {by}, but while it waited {change}; nothing was done",
                details={"ref": req.ref},
            )
        if error is None:
            return
        error.details = {**req.to_dict(), **(error.details or {}), "decided_by": by, "now": url}
        self._note(call, req, "approved", by)
        note(call, f"approval: approved by {by}, page changed meanwhile")
        raise error

    async def _wait_unlocked(
        self, call: CallContext, req: ApprovalRequest, page: Any, started: float
    ) -> tuple[bool, str]:
        element, shot = await self._element(req, page)
        entry = DeskEntry(req, call.root.source, element, shot, client=call.root.client)
        answer = await self._await_entry(call, entry, started)
        if answer is None:
            limit = float(self.agent_settings.approval_timeout_s)
            self._note(call, req, "timed out", "nobody")
            raise ApprovalTimeout(
                f"{_what(req)} waited {limit:g} s for a person's approval and nobody answered; nothing was done",
                details={**req.to_dict(), "waited_s": round(time.monotonic() - started, 1)},
            )
        return answer

    async def _await_entry(self, call: CallContext, entry: DeskEntry, started: float) -> tuple[bool, str] | None:
        """Open ``entry`` at the desk, ask the call's client too, and wait for the first answer
        (None: nobody answered within ``approval_timeout_s``)."""
        req = entry.request
        self.waiting[req.approval_id] = entry
        if call.record:
            self.host.trace_event(
                "approval", {"call_seq": call.seq, "decision": "asked", "decided_by": None, **req.to_dict()}
            )
        self._changed()
        root = call.root
        withdraw: Callable[[], None] = lambda: None  # noqa: E731 - nothing to withdraw yet
        if root.ask_fn is not None:

            def from_client(value: Any) -> None:
                with contextlib.suppress(InvalidArgument):  # answered already: the first answer won
                    if entry.kind == "pick":
                        if isinstance(value, str):
                            self.pick(req.approval_id, value, by="mcp-client")
                    else:
                        self.answer(req.approval_id, bool(value), by="mcp-client")

            asked = {**req.to_dict(), "kind": entry.kind, "candidates": entry.candidates}
            try:
                withdraw = root.ask_fn(asked, from_client)
            except Exception:  # noqa: BLE001 - the client could not be asked; the desk still can
                pass
        limit = float(self.agent_settings.approval_timeout_s)
        waiter = asyncio.wrap_future(entry.answer)
        what = "a pick" if entry.kind == "pick" else "approval"
        try:
            while True:
                waited = time.monotonic() - started
                if waited >= limit:
                    break
                try:
                    return await asyncio.wait_for(asyncio.shield(waiter), min(WAIT_TICK_S, limit - waited))
                except TimeoutError:
                    waited = time.monotonic() - started
                    root.progress(round(waited, 1), limit, f"waiting for {what} {req.approval_id}: {_what(req)}")
            with entry.lock:
                if entry.answer.cancel() or not entry.answer.done():
                    return None
            return entry.answer.result()  # answered at the last instant
        finally:
            entry.answer.cancel()  # a late answer is refused
            self.waiting.pop(req.approval_id, None)
            with contextlib.suppress(Exception):
                withdraw()
            self._changed()

    async def _element(self, req: ApprovalRequest, page: Any) -> tuple[dict[str, Any], str | None]:
        """The element's context and box, and a screenshot of the page to mark it on."""
        element: dict[str, Any] = {"role": req.role, "name": req.name, "ref": req.ref, "context": None}
        if page is None:
            return element, None
        try:
            if req.ref:
                (placed,) = await place_candidates(page, [dict(element)])
                element.update({k: placed.get(k) for k in ("context", "box")})
            path = self.host.home / "screenshots" / self.host.id / f"approval-{req.approval_id}.png"
            atomic_write_bytes(path, await page.screenshot(type="png"))  # 0600, in folders 0700
            return element, str(path)
        except Exception:  # noqa: BLE001 - the request is useful without a picture
            return element, None

    def _changed(self) -> None:
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # a display never fails a call
                listener()

    def settle(self, approval_id: str, approved: bool, *, by: str) -> tuple[str, dict[str, Any]]:
        """A face's answer to a held request: returns the tool and arguments to run again, which
        then go ahead (approved) or end ``APPROVAL_DENIED`` — on the same element only."""
        if by not in DECIDERS[:-1]:
            raise InvalidArgument(f"by must be one of {', '.join(DECIDERS[:-1])}, not {by!r}")
        entry = self.held.pop(approval_id, None)
        if entry is None:
            raise InvalidArgument(f"no open approval request {approval_id!r}")
        req, call = entry
        self._settled.append(_Settled(call["tool"], call["args"], (req.role, req.name), bool(approved), by))
        del self._settled[:-PENDING_MAX]
        self._changed()
        return call["tool"], dict(call["args"])

    def _take_settled(self, call: CallContext, req: ApprovalRequest) -> tuple[bool, str] | None:
        for i, s in enumerate(self._settled):
            if s.tool == call.name and s.args == call.args and s.target == (req.role, req.name):
                del self._settled[i]
                return s.approved, s.by
        return None

    def _note(self, call: CallContext, req: ApprovalRequest, decision: str, by: str) -> None:
        """The decision in the call's journal line (its summary) and, with the request, in its trace."""
        if decision == "timed out":
            text = "approval: nobody answered in time"
        elif decision == "asked" and by == "notebook":
            text = "approval: held for the person's answer in the notebook"
        else:
            text = f"approval: {decision} by {by}"
        note(call, text)
        parent = call.parent
        if not call.record and parent is not None:  # a hand-off's nested act: its line is the parent's
            add_note(parent, text)
        if call.record:
            self.host.trace_event(
                "approval", {"call_seq": call.seq, "decision": decision, "decided_by": by, **req.to_dict()}
            )

    # -- skill replay -------------------------------------------------------------------------
    def risky_steps(self, steps: list[dict[str, Any]], start: int = 0) -> list[tuple[int, dict[str, Any]]]:
        """The risky steps of a replay as (index from ``start``, step) pairs (:meth:`is_risky_step`)."""
        return [(start + i, s) for i, s in enumerate(steps) if self.is_risky_step(s)]

    async def replay_approved(
        self, call: CallContext, risky: list[tuple[int, dict[str, Any]]], *, allow_risky: bool
    ) -> bool:
        """Whether a replay may run its ``risky`` steps (:meth:`check_replay`, on the call's page)."""
        return await self.check_replay(call, _page_url(self.host, call), risky, allow_risky=allow_risky)

    async def check_replay(
        self, call: CallContext, url: str, risky: list[tuple[int, dict[str, Any]]], *, allow_risky: bool
    ) -> bool:
        """Before a replay with ``risky`` steps ((index, step) pairs) runs: True to run them, False
        when nobody is there to ask and ``allow_risky`` is false (today's ``RISKY_STEP_BLOCKED``).

        ``allow_risky: true`` skips asking only with ``confirm="never"``: an agent's own flag is no
        approval where a person must approve. Raises ``APPROVAL_DENIED`` (or ``APPROVAL_REQUIRED``).
        """
        if not risky or (allow_risky and self.mode_for(call) == "never"):
            return True
        index, step = risky[0]
        target = step.get("target") or {}
        shown = ", ".join(f"{i} ({s['kind']} {(s.get('target') or {}).get('name')!r})" for i, s in risky[:5])
        req = ApprovalRequest(
            tool=call.name,
            args=sanitize_args({k: v for k, v in call.args.items() if k != "intent"}, self.secrets),
            role=target.get("role"),
            name=target.get("name"),
            ref=None,
            url=url,
            intent=call.intent,
            reason=f"the skill has risky step(s) {shown}",
        )
        if self.mode_for(call) == "never" and self.approve is None and not self._has_settled(call, req):
            return False
        await self.decide(call, req)
        return True

    def _has_settled(self, call: CallContext, req: ApprovalRequest) -> bool:
        return any(
            s.tool == call.name and s.args == call.args and s.target == (req.role, req.name) for s in self._settled
        )

    def is_risky_step(self, step: dict[str, Any]) -> bool:
        """A replay step recorded as risky, or whose element's name is risky by today's vocabulary."""
        if step.get("risky"):
            return True
        name = (step.get("target") or {}).get("name")
        return (
            step.get("kind") in ("click", "submit", "press")
            and risky_word(name, self.host.config.risky_words) is not None
        )


def _pause_deadlines(call: CallContext) -> list[tuple[Any, float]]:
    """Stop the clocks of ``call``'s time-outs (its own and its parents'): a person's thinking time
    is not the call's. Returns what :func:`_resume_deadlines` puts back."""
    paused = []
    c: CallContext | None = call
    while c is not None:
        cm = c.deadline
        when = cm.when() if cm is not None else None
        if cm is not None and when is not None:
            try:
                cm.reschedule(None)
            except RuntimeError:  # its scope ended (a hand-off's act runs after its parent's handler)
                pass
            else:
                paused.append((cm, when))
        c = c.parent
    return paused


def _resume_deadlines(paused: list[tuple[Any, float]], waited: float) -> None:
    for cm, when in paused:
        with contextlib.suppress(RuntimeError):  # the timeout's scope already ended
            cm.reschedule(when + waited)


def _what(req: ApprovalRequest) -> str:
    if req.name or req.role:
        name = req.name if req.name is None or len(req.name) <= 60 else req.name[:60] + "…"
        return f"{req.tool} on {req.role or 'element'} {name!r}"
    return req.tool


def _page_url(host: Host, call: CallContext) -> str:
    state = host.state
    if state is None:
        return ""
    try:
        tab = state.tabs.get(call.tab_id or state.active_id)
        return str(tab.page.url) if tab is not None else ""
    except Exception:  # noqa: BLE001 - the URL only informs the person
        return ""
