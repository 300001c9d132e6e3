"""HumanHandoff: show a ``NEEDS_HUMAN`` result (screenshot, candidates, intent), let a person pick, resume.

A target that cannot be resolved (not found, ambiguous) comes back, when hand-off is enabled, as
a failed result with code ``NEEDS_HUMAN`` whose details are the payload: ``tool``, ``target``,
``candidates``, a screenshot path and the ``intent`` when one was given. The widget shows it; the
person picks a candidate and presses *Resume*, which runs the action on that element — through
the audit layer's resume call when present, else by re-running the tool with the chosen ``ref``
(journaled, ``source="widget"``).

It also asks for approval: an ``APPROVAL_REQUIRED`` result (a risky action held by the ``confirm``
setting) is shown with *Approve* and *Deny* (:mod:`ocnb.widgets.approval`) — and so is a resumed
hand-off whose chosen element is risky: *Approve* / *Deny* appear in the same widget, and once
answered the widget shows the outcome in place of the request.

It also shows a replay refusal (a failed ``oc_skill_replay`` with ``ARTIFACT_RESOLUTION_FAILED``):
the step, the fingerprint fields that differ, the refused candidate and the other candidates as
buttons. Pressing one confirms it (:func:`ocnb.widgets.replay_refusal.confirm_candidate`): the
step's action runs on that element through dispatch, the step is re-recorded from it (unless
*re-record* is unticked) and the replay goes on from the next step (unless *continue* is unticked).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..results import ToolError, ToolResult
from .approval import Settle, approval_lines, approval_request, decide, is_approval_request, session_settle
from .caller import Caller, SessionCaller
from .replay_refusal import Confirmed, candidates_of, confirm_candidate, is_replay_refusal, refusal_payload

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["HumanHandoff", "handoff_payload", "marked_screenshot", "resume_with_ref"]

Resume = Callable[[dict[str, Any], str], ToolResult]
_TARGET_KEYS = ("ref", "query")


def handoff_payload(result: ToolResult | dict[str, Any]) -> dict[str, Any]:
    """The payload of a ``NEEDS_HUMAN`` result (or the payload itself); raises ``ValueError`` otherwise."""
    if isinstance(result, dict):
        return result
    if not result.ok and result.error is not None and result.error.code == "NEEDS_HUMAN":
        details = dict(result.error.details)
        return dict(details.get("payload") or details)
    code = result.error.code if result.error is not None else "ok"
    raise ValueError(f"HumanHandoff needs a NEEDS_HUMAN result, not {result.tool}: {code}")


def _screenshot(payload: dict[str, Any]) -> Path | None:
    for key in ("screenshot", "screenshot_path"):
        value = payload.get(key)
        if isinstance(value, dict):
            value = value.get("path")
        if isinstance(value, str) and Path(value).is_file():
            return Path(value)
    return None


def _label(c: dict[str, Any]) -> str:
    """``#1 button “Delete” in “Invoice 1001 — Acme Corp” (ax_13)``: the number is its mark on the screenshot."""
    role = c.get("role") or c.get("tag") or "element"
    name = c.get("name") or c.get("text") or ""
    extra = f" — {c['why']}" if c.get("why") else ""
    where = f" in {_quoted_context(str(c['context']))}" if c.get("context") else ""
    number = f"#{c['position']} " if c.get("position") else ""
    return f"{number}{role} “{name}”{where} ({c.get('ref')}){extra}"


def _quoted_context(context: str) -> str:
    """``item "Invoice 1001 — Acme Corp"`` (a role and its name) reads ``item “Invoice 1001 — Acme Corp”``;
    plain text is put in quotes whole."""
    match = re.fullmatch(r'([\w -]+) "(.*)"', context)
    return f"{match[1]} “{match[2]}”" if match else f"“{context}”"


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def marked_screenshot(data: bytes, candidates: list[dict[str, Any]]) -> str:
    """The screenshot as an SVG with each candidate's box outlined and numbered (its ``position``)."""
    size = _png_size(data)
    if size is None:
        return ""
    width, height = size
    shapes = []
    for c in candidates:
        box, number = c.get("box"), c.get("position")
        if not isinstance(box, dict) or not number:
            continue
        x, y, bw, bh = (float(box.get(k, 0)) for k in ("x", "y", "width", "height"))
        shapes.append(
            f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="{bw + 6:.1f}" height="{bh + 6:.1f}" fill="none" '
            f'stroke="#e8590c" stroke-width="3" rx="4"/>'
            f'<circle cx="{x - 3:.1f}" cy="{y - 3:.1f}" r="11" fill="#e8590c"/>'
            f'<text x="{x - 3:.1f}" y="{y + 1.5:.1f}" font-size="13" font-family="sans-serif" font-weight="bold" '
            f'fill="white" text-anchor="middle">{int(number)}</text>'
        )
    picture = base64.b64encode(data).decode("ascii")
    return (
        f'<svg class="ocnb-handoff-marks" viewBox="0 0 {width} {height}" style="max-width:100%" '
        f'xmlns="http://www.w3.org/2000/svg"><image href="data:image/png;base64,{picture}" '
        f'width="{width}" height="{height}"/>{"".join(shapes)}</svg>'
    )


def resume_with_ref(call: Caller, payload: dict[str, Any], ref: str) -> ToolResult:
    """Re-run the payload's tool on ``ref`` with its other arguments (and its intent) unchanged."""
    args = {k: v for k, v in dict(payload.get("args") or {}).items() if k not in _TARGET_KEYS}
    args["ref"] = ref
    if payload.get("intent") and "intent" not in args:
        args["intent"] = payload["intent"]
    return call(str(payload.get("tool") or "interact"), args)


def _library_resume(session: Session, call: Caller) -> Resume:
    """Resume through the session (:meth:`ocnb.Session.resume_handoff`) when the payload has a
    ``handoff_id`` it knows; otherwise re-run the tool on the chosen ref through ``call``."""
    from ..errors import OcnbError

    def resume(payload: dict[str, Any], ref: str) -> ToolResult:
        handoff_id = payload.get("handoff_id")
        if isinstance(handoff_id, str) and handoff_id in session.handoffs.pending:
            try:
                return session.resume_handoff(handoff_id, ref, source="widget")
            except OcnbError as exc:
                return ToolResult(ok=False, tool=str(payload.get("tool")), error=ToolError.from_exception(exc))
        return resume_with_ref(call, payload, ref)

    return resume


def _screenshot_views(shot: Path | None, candidates: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]], Any]:
    """The plain screenshot widget, the candidates that can be marked on it, and the marked picture
    (shown instead of the plain one when there are marks)."""
    image = w.Image(value=shot.read_bytes() if shot else b"", format="png", layout=w.Layout(max_width="100%"))
    marks = [
        {"position": c["position"], "ref": c["ref"], "box": c["box"]}
        for c in candidates
        if isinstance(c.get("box"), dict) and c.get("position")
    ]
    marked = w.HTML(marked_screenshot(shot.read_bytes(), candidates) if shot and marks else "")
    if shot is None or marks:
        image.layout.display = "none"
    return image, marks, marked


class HumanHandoff(w.VBox):
    """A ``NEEDS_HUMAN`` payload with a candidate picker and a *Resume* button, or a replay refusal
    with its candidates as buttons.

    Args:
        result: the ``NEEDS_HUMAN`` :class:`ToolResult` (or its payload as a dict), or a failed
            ``oc_skill_replay`` result with ``ARTIFACT_RESOLUTION_FAILED`` (or its ``data``), or an
            ``APPROVAL_REQUIRED`` result (or its request): then *Approve* and *Deny*.
        session: the session to resume in.
        resume: the seam ``resume(payload, ref) -> ToolResult`` (default: the audit layer's resume,
            else re-running the tool with the chosen ref through dispatch).
        replay_args: for a replay refusal, the ``oc_skill_replay`` arguments that were refused
            (``params``, ``tolerate``, ``step_range``, …): the confirmed step's values come from its
            ``params`` and the continued replay uses the same arguments.
        settle: for an approval, the seam ``settle(approval_id, approved) -> (tool, args)`` (default:
            the session's approval layer, decided by ``widget``).
    """

    def __init__(
        self,
        result: ToolResult | dict[str, Any],
        session: Session | None = None,
        *,
        resume: Resume | None = None,
        caller: Caller | None = None,
        replay_args: dict[str, Any] | None = None,
        settle: Settle | None = None,
    ) -> None:
        self.session = session
        self.result: ToolResult | None = None
        call: Caller | None = caller or (SessionCaller(session) if session is not None else None)
        if is_approval_request(result):
            self._init_approval(result, call, settle)
            return
        if is_replay_refusal(result):
            self._init_replay(result, call, replay_args)
            return
        self.replay_failure: dict[str, Any] | None = None
        self.payload = handoff_payload(result)
        self._resume: Resume | None = resume
        if self._resume is None and session is not None and call is not None:
            self._resume = _library_resume(session, call)
        elif self._resume is None and call is not None:
            self._resume = lambda payload, ref: resume_with_ref(call, payload, ref)
        if self._resume is None:
            raise TypeError("HumanHandoff needs a session, a caller or a resume function")
        p = self.payload
        self.candidates = [c for c in p.get("candidates") or [] if isinstance(c, dict) and c.get("ref")]

        target = p.get("target")
        target_text = target if isinstance(target, str) else ", ".join(f"{k}={v}" for k, v in (target or {}).items())
        lines = [f"<b>{html.escape(str(p.get('tool') or 'a tool'))}</b> needs a person to pick the element"]
        if target_text:
            lines.append(f"target: <code>{html.escape(str(target_text))}</code>")
        if p.get("intent"):
            lines.append(f"intent: <i>{html.escape(str(p['intent']))}</i>")
        if p.get("reason") or p.get("code"):
            lines.append(f"why: {html.escape(str(p.get('reason') or p.get('code')))}")
        self.header = w.HTML("<br>".join(lines))
        shot = _screenshot(p)
        #: The screenshot; ``marks`` the candidates drawn on it (``{"position", "ref", "box"}`` each), and
        #: ``marked`` the picture with them, which replaces the plain one.
        self.image, self.marks, self.marked = _screenshot_views(shot, self.candidates)
        self.picker = w.RadioButtons(
            options=[(_label(c), c["ref"]) for c in self.candidates],
            value=self.candidates[0]["ref"] if self.candidates else None,
            layout=w.Layout(width="auto"),
        )
        self.resume_button = w.Button(
            description="Resume", icon="play", button_style="success", disabled=not self.candidates
        )
        self.cancel_button = w.Button(description="Cancel", icon="times")
        self.outcome = w.HTML("" if self.candidates else "<i>no candidates to pick from</i>")
        self.resume_button.on_click(lambda _b: self.resume())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.add_class("ocnb-human-handoff")
        super().__init__(
            children=[
                self.header,
                self.image,
                self.marked,
                self.picker,
                w.HBox([self.resume_button, self.cancel_button]),
                self.outcome,
            ]
        )

    def pick(self, ref: str) -> None:
        """Choose a candidate by its ref (what clicking its radio button does)."""
        self.picker.value = ref

    def resume(self, ref: str | None = None) -> ToolResult:
        """Run the action on the chosen element; the result is kept in :attr:`result`."""
        ref = ref or self.picker.value
        if not ref:
            result = ToolResult.failure(
                str(self.payload.get("tool") or "interact"), "INVALID_ARGUMENT", "pick an element"
            )
        else:
            assert self._resume is not None
            result = self._resume(self.payload, ref)
        self.result = result
        if is_approval_request(result) and self.session is not None:  # a risky pick: ask right here
            self._ask_here(result)
            return result
        if result.ok:
            self.outcome.value = f"resumed on <b>{html.escape(ref or '')}</b>: ok"
            self.resume_button.disabled = self.cancel_button.disabled = True
            self.picker.disabled = True
        elif result.error is not None:
            self.outcome.value = (
                f'<span style="color:#b71c1c"><b>{html.escape(result.error.code)}</b> '
                f"{html.escape(result.error.message)}</span>"
            )
        return result

    def cancel(self) -> None:
        """Give up on this hand-off (nothing runs)."""
        self.outcome.value = "cancelled: nothing was done"
        if self.replay_failure is not None:
            self._disable()
            return
        self.resume_button.disabled = self.cancel_button.disabled = True
        self.picker.disabled = True

    # ---- approval requests (ocnb.widgets.approval) --------------------------------------------

    def _init_approval(self, result: ToolResult | dict[str, Any], call: Caller | None, settle: Settle | None) -> None:
        settle = settle or (session_settle(self.session) if self.session is not None else None)
        if call is None or settle is None:
            raise TypeError("HumanHandoff needs a session (or a caller and a settle function) to settle an approval")
        self._call: Caller = call
        self._settle = settle
        self.replay_failure = None
        self.payload = self.approval = approval_request(result)
        self.header = w.HTML("<br>".join(approval_lines(self.payload)))
        self._approval_buttons()
        self.outcome = w.HTML("")
        self.add_class("ocnb-human-handoff")
        self.add_class("ocnb-approval")
        super().__init__(children=[self.header, self.approval_bar, self.outcome])

    def _approval_buttons(self) -> None:
        self.approve_button = w.Button(description="Approve", icon="check", button_style="danger")
        self.deny_button = w.Button(description="Deny", icon="times")
        self.approve_button.on_click(lambda _b: self.approve())
        self.deny_button.on_click(lambda _b: self.deny())
        self.approval_bar = w.HBox([self.approve_button, self.deny_button])

    def _ask_here(self, result: ToolResult) -> None:
        """The resumed call was held for approval: show its request with *Approve* / *Deny* here."""
        assert self.session is not None
        self._call = SessionCaller(self.session)
        self._settle = session_settle(self.session)
        self.approval = approval_request(result)
        self.resume_button.disabled = self.cancel_button.disabled = self.picker.disabled = True
        self.asking = w.HTML("<br>".join(approval_lines(self.approval)))
        self._approval_buttons()
        self.outcome.value = ""
        self.add_class("ocnb-approval")
        shown: tuple[Any, ...] = tuple(self.children)  # type: ignore[has-type]  # a traitlet ipywidgets leaves untyped
        self.children = (*shown[:-1], self.asking, self.approval_bar, self.outcome)

    def approve(self) -> ToolResult:
        """Approve the action (what *Approve* does): it runs now, journaled as approved by the widget."""
        return self._decide(True)

    def deny(self) -> ToolResult:
        """Refuse the action (what *Deny* does): nothing happens in the page; journaled as denied."""
        return self._decide(False)

    def _decide(self, approved: bool) -> ToolResult:
        request = self.approval
        result = self.result = decide(self._call, self._settle, request, approved)
        self.approve_button.disabled = self.deny_button.disabled = True  # one answer per request
        self.approval_bar.layout.display = "none"
        word = "approved" if approved else "denied"
        what = html.escape(str(request.get("tool") or "the call"))
        element = " ".join(str(request[k]) for k in ("role", "name") if request.get(k))
        if element:
            what += f" on {html.escape(element)}"
        if result.ok:
            self.outcome.value = f"approved: done — {what} went ahead"
        elif result.error is not None:
            self.outcome.value = (
                f'{word}: <span style="color:#b71c1c"><b>{html.escape(result.error.code)}</b> '
                f"{html.escape(result.error.message)}</span>"
            )
        # the request is answered: the widget now shows the outcome, not the request that asked
        asked = getattr(self, "asking", None) or self.header
        asked.value = f"<b>{what}</b>: {word} by you in the notebook"
        return result

    # ---- replay refusals -------------------------------------------------------------------

    def _init_replay(
        self, result: ToolResult | dict[str, Any], call: Caller | None, replay_args: dict[str, Any] | None
    ) -> None:
        if self.session is None or call is None:
            raise TypeError("HumanHandoff needs a session to settle a replay refusal")
        self._call = call
        self.payload = refusal_payload(result)
        f = self.replay_failure = dict(self.payload["failure"])
        self.replay_args = dict(replay_args or {})
        self.confirmed: Confirmed | None = None
        self.candidates = candidates_of(f)
        recorded, found = f.get("recorded") or {}, f.get("found") or {}
        lines = [
            f"<b>skill replay</b> refused step <b>{html.escape(str(f.get('step_index')))}</b> "
            f"of <code>{html.escape(str(self.payload.get('skill_id')))}</code>",
            f"why: {html.escape(str(f.get('detail') or ''))}",
        ]
        differs = [d for d in f.get("differs") or [] if isinstance(d, str)]
        if differs:
            rows = "".join(
                f"<tr><td>{html.escape(d)}</td><td>{html.escape(repr(recorded.get(d, '')))}</td>"
                f"<td>{html.escape(repr(found.get(d, '')))}</td></tr>"
                for d in differs
            )
            lines.append(
                '<table class="ocnb-replay-differs"><tr><th>field</th><th>recorded</th><th>found</th></tr>'
                f"{rows}</table>"
            )
        self.header = w.HTML("<br>".join(lines))
        bundle = f.get("evidence_bundle_path")
        shot = _screenshot({"screenshot": str(Path(bundle) / "screenshot.png")}) if bundle else None
        #: The screenshot; ``marks`` the candidates drawn on it (``{"position", "ref", "box"}`` each), and
        #: ``marked`` the picture with them, which replaces the plain one.
        self.image, self.marks, self.marked = _screenshot_views(shot, self.candidates)
        self.candidate_buttons: dict[str, w.Button] = {}
        for c in self.candidates:
            why = f" (refused: {', '.join(c.get('differs') or [])})" if c.get("refused") else ""
            if not c.get("refused") and c.get("differs"):
                why = f" (differs: {', '.join(c['differs'])})"
            b = w.Button(
                description=f"{c.get('role') or c.get('tag') or 'element'} “{c.get('name') or ''}” ({c['ref']}){why}",
                tooltip=f"do step {f.get('step_index')} on {c['ref']}",
                button_style="warning" if c.get("refused") or c.get("differs") else "info",
                layout=w.Layout(width="auto"),
            )
            b.on_click(lambda _b, ref=c["ref"]: self.confirm(ref))
            self.candidate_buttons[c["ref"]] = b
        self.rerecord = w.Checkbox(value=True, description="re-record the step from the chosen element", indent=False)
        self.continue_replay = w.Checkbox(
            value=True, description="continue the replay from the next step", indent=False
        )
        self.cancel_button = w.Button(description="Cancel", icon="times")
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.outcome = w.HTML("" if self.candidates else "<i>no candidates to pick from</i>")
        self.add_class("ocnb-human-handoff")
        self.add_class("ocnb-replay-refusal")
        super().__init__(
            children=[
                self.header,
                self.image,
                w.VBox(list(self.candidate_buttons.values())),
                w.HBox([self.rerecord, self.continue_replay]),
                self.cancel_button,
                self.outcome,
            ]
        )

    def _disable(self) -> None:
        for b in self.candidate_buttons.values():
            b.disabled = True
        self.cancel_button.disabled = self.rerecord.disabled = self.continue_replay.disabled = True

    def confirm(self, ref: str) -> Confirmed:
        """Do the refused step on ``ref`` (what pressing its button does), re-record it, continue."""
        if ref not in self.candidate_buttons:
            raise ValueError(f"{ref!r} is not one of the candidates: {', '.join(self.candidate_buttons)}")
        assert self.session is not None
        done = confirm_candidate(
            self.session,
            self._call,
            str(self.payload["skill_id"]),
            self.replay_failure or {},
            ref,
            replay_args=self.replay_args,
            rerecord=self.rerecord.value,
            continue_replay=self.continue_replay.value,
        )
        self.confirmed = done
        self.result = done.continued or done.recorded or done.acted
        parts = []
        for label, r in (("acted", done.acted), ("re-recorded", done.recorded), ("replay", done.continued)):
            if r is None:
                continue
            if r.ok:
                parts.append(f"{label}: ok")
            elif r.error is not None:
                parts.append(
                    f'{label}: <span style="color:#b71c1c"><b>{html.escape(r.error.code)}</b> '
                    f"{html.escape(r.error.message)}</span>"
                )
        self.outcome.value = f"<b>{html.escape(ref)}</b> — " + "; ".join(parts)
        if done.acted.ok:
            self._disable()  # the step ran: pressing another candidate would do it twice
        return done
