"""The approval desk in a notebook, and the agent's panel under ``%oc mcp start``.

:class:`ApprovalDesk` shows the session's open approval requests (:meth:`ocnb.audit.approval.Approvals.pending`):
for each, the tool, the element (role, name, the row or form around it, marked on a screenshot), the
page, the intent and why it asks, with *Approve* and *Deny*. An agent's waiting call goes on as soon
as it is answered here (decided by ``notebook``); a person's held call is settled and run again. While
shown, the desk is attended: an agent's request waits for the person instead of failing at once.

:class:`AgentPanel` is what the cell that ran ``%oc mcp start`` shows: the server's banner (without the
token), the agent's policy in one line, *Pause agent* / *Resume agent*, the desk, and a live feed of
the agent's calls (a :class:`~ocnb.widgets.journal_view.JournalView` of ``source == "mcp"``).
"""

from __future__ import annotations

import html
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as w
import traitlets

from ..errors import OcnbError
from ..results import ToolResult
from .caller import SessionCaller
from .handoff import marked_screenshot
from .journal_view import JournalView, journal_source
from .watch import watcher_for

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["AgentPanel", "ApprovalDesk", "request_lines"]

#: Who the desk's answers are from, as the journal names them.
DESK_DECIDER = "notebook"


def request_lines(request: dict[str, Any]) -> list[str]:
    """A desk request as the person reads it (HTML lines, escaped)."""
    esc = lambda v: html.escape(str(v))  # noqa: E731 - a local shorthand
    element = dict(request.get("element") or {})
    what = " ".join(
        f"“{esc(element[k])}”" if k == "name" else esc(element[k]) for k in ("role", "name") if element.get(k)
    )
    who = "the agent" if request.get("waiting") else "your call"
    lines = [
        f"<b>{esc(request.get('approval_id'))}</b> · {who} wants <b>{esc(request.get('tool'))}</b>"
        + (f" on {what}" if what else "")
    ]
    if element.get("context"):
        lines.append(f"in: {esc(element['context'])}")
    if request.get("page"):
        lines.append(f"page: <code>{esc(request['page'])}</code>")
    if request.get("intent"):
        lines.append(f"intent: <i>{esc(request['intent'])}</i>")
    lines.append(f"why asked: {esc(request.get('why') or '')}")
    if request.get("source"):
        lines.append(f"from: {esc(request['source'])}")
    return lines


def _picture(request: dict[str, Any]) -> str:
    shot = request.get("screenshot")
    if not isinstance(shot, str) or not Path(shot).is_file():
        return ""
    box = (request.get("element") or {}).get("box")
    marks = [{"position": 1, "box": box}] if isinstance(box, dict) else []
    picture = marked_screenshot(Path(shot).read_bytes(), marks)
    return f'<div style="max-width:560px">{picture}</div>' if picture else ""


class ApprovalDesk(w.VBox):
    """The session's open approval requests, each with *Approve* / *Deny*; redrawn as they change.

    ``requests`` (a trait) holds what is shown — :meth:`Approvals.pending`'s dicts. :meth:`approve` and
    :meth:`deny` are what the buttons do; ``outcomes`` keeps what each answer led to.
    """

    requests: traitlets.List[dict[str, Any]] = traitlets.List(help="The open requests shown, oldest first.")

    def __init__(self, session: Session, *, attend: bool = True) -> None:
        self.session = session
        self.outcomes: dict[str, dict[str, Any]] = {}
        self._drawing = threading.Lock()
        self.title = w.HTML("")
        self.cards = w.VBox()
        self.note = w.HTML("")
        self.add_class("ocnb-approval-desk")
        super().__init__(children=[self.title, self.cards, self.note])
        approvals = session.approvals
        self._leave = approvals.attend() if attend else (lambda: None)
        approvals.listeners.append(self.refresh)
        self._buttons: dict[str, tuple[Any, Any]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Re-read the open requests and redraw (called by the desk whenever it changes, any thread)."""
        with self._drawing:  # the desk calls from any thread: one redraw at a time, of what is open now
            pending = self.session.approvals.pending()
            n = len(pending)
            self.title.value = (
                f"<b>Approval desk</b>: {n} request{'' if n == 1 else 's'} waiting"
                if n
                else "<b>Approval desk</b>: nothing waiting"
            )
            if [r["approval_id"] for r in pending] != [r["approval_id"] for r in self.requests]:
                self._draw(pending)

    def _draw(self, pending: list[dict[str, Any]]) -> None:
        """The cards first, then ``requests``: whoever sees a request listed sees its card."""
        cards, buttons = [], {}
        for r in pending:
            if r.get("kind") == "pick":
                cards.append(self._pick_card(r))
                continue
            approve = w.Button(description="Approve", icon="check", button_style="danger")
            deny = w.Button(description="Deny", icon="times")
            approve.on_click(lambda _b, i=r["approval_id"]: self.approve(i))
            deny.on_click(lambda _b, i=r["approval_id"]: self.deny(i))
            buttons[r["approval_id"]] = (approve, deny)
            card = w.VBox([w.HTML("<br>".join(request_lines(r))), w.HTML(_picture(r)), w.HBox([approve, deny])])
            card.add_class("ocnb-desk-request")
            cards.append(card)
        self._buttons = buttons
        self.cards.children = tuple(cards)
        self.requests = pending

    def _pick_card(self, r: dict[str, Any]) -> Any:
        """An agent's hand-off: one button per candidate (role, name, the row around it)."""
        picks = []
        for n, c in enumerate(r.get("candidates") or [], 1):
            label = f"#{n} {c.get('role') or 'element'} {str(c.get('name') or '')[:40]!r}"
            if c.get("context"):
                label += f" in {str(c['context'])[:60]}"
            button = w.Button(description=label, tooltip=label, layout=w.Layout(width="auto"))
            button.on_click(lambda _b, i=r["approval_id"], k=n: self.pick(i, k))
            picks.append(button)
        shot = r.get("screenshot")
        marks = [{"position": n, "box": c["box"]} for n, c in enumerate(r.get("candidates") or [], 1) if c.get("box")]
        picture = ""
        if isinstance(shot, str) and Path(shot).is_file():
            picture = marked_screenshot(Path(shot).read_bytes(), marks) or ""
        lines = [f"<b>{html.escape(str(r.get('approval_id')))}</b> · the agent needs you to pick the element"]
        lines += request_lines(r)[1:]
        card = w.VBox([w.HTML("<br>".join(lines)), w.HTML(picture), w.VBox(picks)])
        card.add_class("ocnb-desk-request")
        return card

    def pick(self, handoff_id: str, n: int) -> dict[str, Any]:
        """Pick candidate ``n`` (1-based) of an agent's hand-off (what its buttons do)."""
        try:
            out = self.session.approvals.pick(handoff_id, n, by=DESK_DECIDER)
        except OcnbError as exc:  # answered elsewhere first, or timed out
            self.note.value = f"{html.escape(handoff_id)}: {html.escape(exc.message)}"
            return {"handoff_id": handoff_id, "error": exc.code}
        self.note.value = f"{html.escape(handoff_id)}: picked {html.escape(out['ref'])}; the agent's call goes on"
        self.outcomes[handoff_id] = out
        self.refresh()
        return out

    def approve(self, approval_id: str) -> dict[str, Any]:
        """Approve a request (what its *Approve* does)."""
        return self._answer(approval_id, True)

    def deny(self, approval_id: str) -> dict[str, Any]:
        """Deny a request (what its *Deny* does): nothing happens in the page."""
        return self._answer(approval_id, False)

    def _answer(self, approval_id: str, approved: bool) -> dict[str, Any]:
        word = "approved" if approved else "denied"
        try:
            out = self.session.approvals.answer(approval_id, approved, by=DESK_DECIDER)
        except OcnbError as exc:  # answered elsewhere first, or timed out
            self.note.value = f"{html.escape(approval_id)}: {html.escape(exc.message)}"
            return {"approval_id": approval_id, "error": exc.code}
        rerun = out.get("rerun")
        if rerun is not None:  # a person's held call: run it again, now settled
            result: ToolResult = SessionCaller(self.session)(rerun["tool"], rerun["args"])
            out["result"] = result
            done = "done" if result.ok else f"{result.error.code if result.error else 'failed'}"
            self.note.value = f"{html.escape(approval_id)} {word}: {html.escape(done)}"
        else:
            self.note.value = f"{html.escape(approval_id)} {word}: the agent's call goes on"
        self.outcomes[approval_id] = out
        self.refresh()
        return out

    def close(self) -> None:
        """Stop following the desk (and no longer attend it)."""
        self._leave()
        listeners = self.session.approvals.listeners
        if self.refresh in listeners:
            listeners.remove(self.refresh)
        super().close()


class AgentPanel(w.VBox):
    """What ``%oc mcp start`` shows: banner, the agent's policy, *Pause agent*, the desk and the live feed.

    Args:
        session: the session the MCP server serves.
        banner: the server's banner, without the token (``McpHandle.safe_banner()``).
        policy: the agent's policy in one line.
        clients: an ``--isolated`` server's clients (:class:`~ocnb.mcp.clients.ClientSessions`):
            their calls, journaled in sessions of their own, join the live feed.
    """

    def __init__(self, session: Session, banner: str, policy: str, clients: Any = None) -> None:
        self.session = session
        self.banner_text = banner
        self.banner = w.HTML(f"<pre style='margin:0'>{html.escape(banner)}</pre>")
        self.policy = w.HTML(f"<b>{html.escape(policy)}</b>")
        self.pause_button = w.Button(description="Pause agent", icon="pause", layout=w.Layout(width="auto"))
        self.pause_button.on_click(lambda _b: self.toggle())
        self.state = w.HTML("")
        self.desk = ApprovalDesk(session)
        every = journal_source(session)

        def agents() -> list[dict[str, Any]]:
            mine = [e for e in every() if e.get("source") == "mcp"]
            if clients is None:
                return mine
            theirs = [e for e in clients.entries() if e.get("source") == "mcp"]
            return sorted(mine + theirs, key=lambda e: str(e.get("ts") or ""))

        #: The agent's calls as they land (``source == "mcp"``; an isolated server's clients' too), newest first.
        self.feed = JournalView(session, entries=agents, limit=20)
        # an isolated client's call lands in its own session: it wakes the feed's (throttled) refresher
        self._unfollow = clients.on_call(watcher_for(session).request) if clients is not None else (lambda: None)
        self.add_class("ocnb-agent-panel")
        super().__init__(
            children=[
                self.banner,
                self.policy,
                w.HBox([self.pause_button, self.state]),
                self.desk,
                w.HTML("<b>The agent's calls</b>"),
                self.feed,
            ]
        )
        session.approvals.listeners.append(self._show_state)
        self._show_state()

    @property
    def paused(self) -> bool:
        return bool(self.session.approvals.paused)

    def pause(self) -> None:
        """Pause the agent (what *Pause agent* does): its calls end ``PAUSED``; yours go on."""
        self.session.approvals.pause()

    def resume(self) -> None:
        """Let the agent act again (what *Resume agent* does)."""
        self.session.approvals.resume()

    def toggle(self) -> None:
        self.resume() if self.paused else self.pause()

    def _show_state(self) -> None:
        if self.paused:
            self.pause_button.description, self.pause_button.icon = "Resume agent", "play"
            self.state.value = "<span style='color:#b71c1c'><b>agent paused</b>: its calls end PAUSED</span>"
        else:
            self.pause_button.description, self.pause_button.icon = "Pause agent", "pause"
            self.state.value = "agent running"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):  # a saved notebook's text/plain is the banner (no token), not a repr
            bundle["text/plain"] = self.banner_text
        return bundle

    def close(self) -> None:
        self._unfollow()
        listeners = self.session.approvals.listeners
        if self._show_state in listeners:
            listeners.remove(self._show_state)
        self.desk.close()
        self.feed.close()
        super().close()
