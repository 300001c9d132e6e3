"""A browser state's dialogs part: alerts, confirms and prompts, answered by the policy or left open.

``dialog_policy`` ``accept`` and ``dismiss`` answer a dialog at once; ``manual`` leaves it open for
``dialog_answer``, and :meth:`Dialogs.guard_call` (dispatch runs every handler through it) returns a
call that a dialog interrupted at once and finishes it once the dialog is answered.

Two things set the policy aside: while a person's demonstration is recorded (:attr:`Dialogs.held`)
every dialog waits as under ``manual`` — it is the person's to answer (in a headed window, from
another driver, or with ``dialog_answer``); and a replayed step that recorded a dialog's answer
:meth:`arms <Dialogs.arm>` it, so the dialog of the same type and message is answered that way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..calls import CallContext
from ..errors import DialogOpen, InvalidArgument, OcnbError
from .tabs import Tab, TabSet, refresh_emulation

__all__ = ["RESUME_WAIT_S", "Dialogs", "Interruptible", "PendingDialog", "about_to_act", "pending_on"]

#: How long ``dialog_answer`` waits for the calls a dialog interrupted to finish once it is answered.
RESUME_WAIT_S = 5.0


@dataclass(eq=False)
class PendingDialog:
    """A dialog left open under ``dialog_policy="manual"``: its page is frozen until it is answered.

    ``record`` is its entry in ``Tab.dialogs`` (``action`` is ``pending`` until answered);
    ``interrupted`` holds the calls that were running when it opened and returned at once
    (``(tool, seq, task)``): they finish once it is answered.
    """

    dialog: Any
    record: dict[str, Any]
    interrupted: list[tuple[str, int, Any]] = field(default_factory=list)

    def describe(self, tab_id: str) -> dict[str, Any]:
        """What a result shows: ``{"tab_id", "type", "message", "default"}``."""
        return {
            "tab_id": tab_id,
            "type": self.record["type"],
            "message": self.record["message"],
            "default": self.record.get("default_value") or "",
        }


@dataclass
class TabDialog:
    """The dialog layer's state of one tab: the dialog waiting for ``dialog_answer`` (``manual``)."""

    pending: PendingDialog | None = None


def pending_on(tab: Tab) -> PendingDialog | None:
    """The dialog waiting on ``tab`` for ``dialog_answer``, or None."""
    mine = tab.peek(TabDialog)
    return mine.pending if mine is not None else None


async def _refresh(tab: Tab | None) -> None:
    """Re-apply the tab's emulation unless a dialog waits on it (the page is frozen)."""
    if tab is not None and pending_on(tab) is None:
        await refresh_emulation(tab)


@dataclass
class Interruptible:
    """The dialog layer's state of one call: what its handler was about to do (its element and
    action) when a dialog interrupted it, for the result (``completed: false``)."""

    act: dict[str, Any] | None = None


def about_to_act(call: CallContext, act: dict[str, Any], *, keep: bool = False) -> None:
    """Say what the call's handler is about to do (``{"element", "action"}``, or a point): should a
    dialog interrupt it, its result says this. ``keep``: an act said earlier in the call stays."""
    state = call.slot(Interruptible)
    if state.act is None or not keep:
        state.act = act


class Dialogs:
    """The dialogs of a browser state's tabs (each tab's ``dialogs`` log, and the dialog waiting on it)."""

    def __init__(self, owner: TabSet, on_event: Callable[[str, dict[str, Any]], None]) -> None:
        self._owner = owner
        self._on_event = on_event
        #: Futures of running calls, each resolved with the tab whose dialog opened under "manual".
        self._waiters: set[Any] = set()
        #: Demonstrations recording (a person answers the dialogs): the policy is "manual" meanwhile.
        self.held = 0
        #: Per tab: the answer a replayed step recorded for the dialog it opens (see :meth:`arm`).
        self._armed: dict[str, dict[str, Any]] = {}

    @property
    def policy(self) -> str:
        """The policy in force: ``manual`` while a demonstration records, else ``dialog_policy``."""
        return "manual" if self.held else str(self._owner.config.dialog_policy)

    def arm(self, tab: Tab, answer: dict[str, Any]) -> dict[str, Any]:
        """Answer the next dialog on ``tab`` as ``answer`` says (``type``, ``message``, ``accept``,
        ``text``) when its type and message are the recorded ones; another dialog gets the policy.
        Returns the slot, whose ``outcome`` becomes ``answered`` or ``changed`` (else ``not shown``)."""
        slot = {**answer, "outcome": "not shown"}
        self._armed[tab.id] = slot
        return slot

    def disarm(self, tab: Tab | None) -> None:
        if tab is not None:
            self._armed.pop(tab.id, None)

    def closed(self, tab: Tab, accepted: bool) -> None:
        """The tab's dialog was answered outside ocnb (a person in the window, another driver): a
        dialog left waiting is no longer pending; the calls it interrupted go on by themselves."""
        pending = pending_on(tab)
        if pending is None:
            return
        pending.record["action"] = "accepted" if accepted else "dismissed"
        tab.slot(TabDialog).pending = None
        self._on_event(
            "dialog",
            {
                "tab_id": tab.id,
                "type": pending.record["type"],
                "message": pending.record["message"],
                "action": pending.record["action"],
            },
        )

    def on_dialog(self, tab: Tab, dialog: Any) -> None:
        """Record a dialog on the tab and handle it with the configured policy: ``accept`` and
        ``dismiss`` answer it at once; ``manual`` leaves it open for ``dialog_answer`` and wakes the
        running call (see :meth:`guard_call`)."""
        slot = self._armed.get(tab.id)
        if slot is not None and slot["outcome"] == "not shown":
            if slot.get("type") == dialog.type and slot.get("message") == dialog.message:
                self._armed.pop(tab.id, None)
                slot["outcome"] = "answered"
                self._answer_now(tab, dialog, bool(slot.get("accept")), slot.get("text"))
                return
            slot["outcome"] = "changed"  # another dialog than the recorded one: the policy answers it
        policy = self.policy
        if policy != "manual":
            self._answer_now(tab, dialog, policy == "accept", None)
            return
        record = {
            "ts": time.time(),
            "type": dialog.type,
            "message": dialog.message,
            "default_value": dialog.default_value,
            "action": "pending",
        }
        tab.dialogs.append(record)
        self._on_event(
            "dialog",
            {"tab_id": tab.id, "type": record["type"], "message": record["message"], "action": record["action"]},
        )
        tab.slot(TabDialog).pending = PendingDialog(dialog, record)
        for waiter in list(self._waiters):
            if not waiter.done():
                waiter.set_result(tab)

    def _answer_now(self, tab: Tab, dialog: Any, accept: bool, text: str | None) -> None:
        """Record the dialog on the tab and answer it at once (a prompt: ``text``, else its default)."""
        record = {
            "ts": time.time(),
            "type": dialog.type,
            "message": dialog.message,
            "default_value": dialog.default_value,
            "action": "accepted" if accept else "dismissed",
        }
        tab.dialogs.append(record)
        self._on_event(
            "dialog",
            {"tab_id": tab.id, "type": record["type"], "message": record["message"], "action": record["action"]},
        )
        coro = (
            dialog.accept(dialog.default_value if text is None else str(text))
            if (accept and dialog.type == "prompt")
            else (dialog.accept() if accept else dialog.dismiss())
        )
        task = asyncio.ensure_future(coro)
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    # -- dialogs left open ("manual") and the calls around them ---------------------------------
    def pending(self) -> list[dict[str, Any]]:
        """Every dialog waiting for an answer, as results show it (``tab_id``, ``type``, ``message``, ``default``)."""
        waiting = ((t, pending_on(t)) for t in self._owner.tabs.values())
        return [p.describe(t.id) for t, p in waiting if p is not None]

    async def answer(self, tab: Tab, *, accept: bool = True, text: str | None = None) -> dict[str, Any]:
        """Answer the dialog waiting on ``tab``; then wait (at most :data:`RESUME_WAIT_S`) for the
        calls it interrupted and report how each ended.

        ``text`` answers a prompt (accepted); without it a prompt gets its default value, as the
        ``accept`` policy does. No dialog, or ``text`` for a dialog that is not a prompt, is
        ``INVALID_ARGUMENT`` and answers nothing.
        """
        pending = pending_on(tab)
        if pending is None:
            raise InvalidArgument(
                f"no dialog is waiting on tab {tab.id}", details={"tab_id": tab.id, "pending": self.pending()}
            )
        kind = pending.record["type"]
        if text is not None and kind != "prompt":
            raise InvalidArgument(f"text answers a prompt; this dialog is {kind}", details={"type": kind})
        dialog = pending.dialog
        try:
            if not accept:
                await dialog.dismiss()
            elif kind == "prompt":
                await dialog.accept(dialog.default_value if text is None else text)
            else:
                await dialog.accept()
        except Exception:  # noqa: BLE001 - the page went away or navigated: the dialog is gone either way
            pending.record["action"] = "gone"
        else:
            pending.record["action"] = "accepted" if accept else "dismissed"
        tab.slot(TabDialog).pending = None
        self._on_event(
            "dialog",
            {"tab_id": tab.id, "type": kind, "message": pending.record["message"], "action": pending.record["action"]},
        )
        resumed = []
        tasks = [task for _, _, task in pending.interrupted]
        if tasks:
            await asyncio.wait(tasks, timeout=RESUME_WAIT_S)
        for name, seq, task in pending.interrupted:
            entry: dict[str, Any] = {"tool": name, "seq": seq, "done": task.done()}
            if task.done() and not task.cancelled():
                exc = task.exception()
                entry["ok"] = exc is None
                if isinstance(exc, OcnbError):
                    entry["error"] = {"code": exc.code, "message": exc.message}
                elif exc is not None:
                    entry["error"] = {"code": "INTERNAL", "message": f"{type(exc).__name__}: {exc}"[:300]}
                else:
                    entry["data"] = task.result()
            resumed.append(entry)
        return {
            "tab_id": tab.id,
            "type": kind,
            "message": pending.record["message"],
            "action": pending.record["action"],
            "resumed": resumed,
        }

    def _call_tab(self, call: CallContext) -> Tab | None:
        tab_id = call.exec_args.get("tab_id") if isinstance(call.exec_args, dict) else None
        owner = self._owner
        return owner.tabs.get(tab_id if isinstance(tab_id, str) else (owner.active_id or ""))

    async def guard_call(self, call: CallContext, coro: Any) -> Any:
        """Run one call's handler (dispatch does, for every call) under the dialog rules.

        Under ``dialog_policy="manual"`` a page-using call on a tab whose dialog waits is refused at
        once (``DIALOG_OPEN``: the page is frozen, the call would hang), except the ``dialogs``
        tools; a call during which a dialog opens returns at once with ``completed: false`` and the
        ``pending_dialog`` (what the handler said with :func:`about_to_act` first, e.g. the element
        about to be clicked), and finishes in the background once the dialog is answered. While a
        dialog waits, every result's data (a dict) carries ``pending_dialog``. A tab with emulation
        gets it re-applied after the call.
        """
        tooldef = call.tooldef
        target = self._call_tab(call)
        manual = self.policy == "manual"
        if not manual and not any(pending_on(t) is not None for t in self._owner.tabs.values()):
            result = await coro
            await _refresh(target)
            return result
        if (
            target is not None
            and (open_dialog := pending_on(target)) is not None
            and getattr(tooldef, "uses_page", False)
            and getattr(tooldef, "category", "") != "dialogs"
        ):
            coro.close()
            pending = open_dialog.describe(target.id)
            raise DialogOpen(
                f"a {pending['type']} dialog waits on tab {target.id} ({pending['message'][:80]!r}); "
                "answer it with dialog_answer, or close the tab",
                details={"pending_dialog": pending},
            )
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        task = asyncio.ensure_future(coro)
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the call's timeout (or shutdown): the handler goes with it
            task.cancel()
            raise
        finally:
            self._waiters.discard(waiter)
        if not task.done():
            tab: Tab = waiter.result()
            pending_dialog = pending_on(tab)
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
            if pending_dialog is not None:
                pending_dialog.interrupted.append((call.name, call.seq, task))
                described = pending_dialog.describe(tab.id)
            else:  # answered already (by another face): nothing to report but that the call goes on
                described = None
            said = call.peek(Interruptible)
            partial = said.act if said is not None else None
            return {**(partial if isinstance(partial, dict) else {}), "completed": False, "pending_dialog": described}
        await _refresh(target)
        waiting = self.pending()
        pending_now = next((d for d in waiting if target is not None and d["tab_id"] == target.id), None)
        pending_now = pending_now or (waiting[0] if waiting else None)
        try:
            data = task.result()
        except OcnbError as exc:
            if pending_now is not None:
                exc.details.setdefault("pending_dialog", pending_now)
            raise
        if pending_now is not None and isinstance(data, dict):
            data = {**data, "pending_dialog": pending_now}
        return data
