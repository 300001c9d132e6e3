"""SkillRecorder: exploratory skill authoring in one widget — record, save, replay, export.

While recording, every capable call from any face (``interact``, ``form_input``, ``fill_form``,
``navigate``, ``tabs_create``: the tools whose schema offers ``capture_artifact``) runs with
``capture_artifact: true`` added just before its handler, so the skills layer buffers the step with
its selector chain; the widget lists those steps as they happen. *Save* calls ``oc_skill_record``
(which takes the buffered steps), *Replay* calls ``oc_skill_replay`` and shows a status per step,
*Export* calls ``oc_skill_export`` and shows the standalone script.

*Record what I do* records the person instead (``record_start``: their own clicks and typing in the
page, from a headed window, the live view or another driver); switched off, it stops
(``record_stop`` without a name) and lists the steps with their intents, editable, and a field for
parameters (``email=email, plan=tier``); *Save* then saves them with ``record_stop``.
"""

from __future__ import annotations

import html
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as w
import traitlets

from ..results import ToolResult
from ..skills.capture import artifact_for
from .assets import asset_text
from .caller import Caller, SessionCaller
from .watch import watcher_for

if TYPE_CHECKING:
    from ..calls import CallContext
    from ..session import Session

__all__ = ["SkillRecorder", "format_chain", "replay_steps", "selector_chain"]

_CHAIN_KEYS = ("selector_chain", "selectors", "chain")
_ARTIFACT_KEYS = ("replay_artifact", "artifact", "step", "captured")


def selector_chain(data: Any) -> list[Any]:
    """The selector chain in a captured call's result data (``[]`` when there is none)."""
    if not isinstance(data, dict):
        return []
    for key in _CHAIN_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            return value
        if isinstance(value, dict):
            inner = selector_chain(value)
            if inner:
                return inner
    for key in _ARTIFACT_KEYS:
        inner = selector_chain(data.get(key))
        if inner:
            return inner
        steps = data.get(key, {}).get("steps") if isinstance(data.get(key), dict) else None
        if isinstance(steps, list) and steps:
            inner = selector_chain(steps[-1])
            if inner:
                return inner
    return []


def format_chain(chain: list[Any]) -> str:
    """``role_name=button "Send" → css=#send → …`` for display."""
    parts = []
    for sel in chain:
        if isinstance(sel, dict):
            kind = sel.get("type") or sel.get("kind") or "?"
            if kind == "role_name":
                parts.append(f"role={sel.get('role')} “{sel.get('name', '')}”")
                continue
            value = sel.get("value", sel.get("selector", ""))
            if isinstance(value, dict):
                value = " ".join(f"{v}" for v in value.values())
            parts.append(f"{kind}={value}")
        else:
            parts.append(str(sel))
    return " → ".join(parts)


def _artifact_steps(tool: str, args: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Replay steps of one captured call, built by the skills layer exactly as it buffers them."""
    try:
        return list(artifact_for(tool, args, data))
    except Exception:  # noqa: BLE001 - show the step even if its artifact cannot be built
        return [{"kind": tool, "selectors": selector_chain(data), "target": data.get("element") or {}}]


def _target(step: dict[str, Any]) -> str:
    target = step.get("target") or {}
    if target.get("role") or target.get("name"):
        return f"{target.get('role') or ''} “{target.get('name') or ''}”".strip()
    args = step.get("args") or {}
    for key in ("ref", "query", "url", "fields"):
        if key in args:
            return f"{key}={args[key]}"
    return ""


def replay_steps(result: ToolResult) -> list[dict[str, Any]]:
    """Per-step status of an ``oc_skill_replay`` result: ok, the failure code, or ``not run``.

    A failed replay is an error result whose details are the replay report.
    """
    if result.ok:
        report = result.data if isinstance(result.data, dict) else {}
    else:
        report = result.error.details if result.error is not None else {}
    done: dict[int, dict[str, Any]] = {
        r["index"]: r for r in report.get("step_results", []) if isinstance(r, dict) and isinstance(r.get("index"), int)
    }
    failure = report.get("failure") or {}
    fail_at = failure.get("step_index")
    total = report.get("steps_total")
    if not isinstance(total, int):
        total = max([*done, fail_at if isinstance(fail_at, int) else -1, -1]) + 1
    out: list[dict[str, Any]] = []
    for i in range(total):
        r = done.get(i, {})
        if i == fail_at:
            status = str(failure.get("code") or "failed")
        elif i in done:
            status = "ok" if r.get("ok", True) else "failed"
        else:
            status = "not run"
        out.append(
            {"index": i, "status": status, "resolved_via": r.get("resolved_via"), "elapsed_ms": r.get("elapsed_ms")}
        )
    if not out and not result.ok and result.error is not None:
        out.append({"index": 0, "status": result.error.code, "resolved_via": None, "elapsed_ms": None})
    return out


def _no_chain(step: dict[str, Any]) -> str:
    return "—" if step.get("kind") == "navigate" else "<i>no chain captured</i>"


def _first(data: Any, *keys: str) -> Any:
    if isinstance(data, dict):
        for key in keys:
            if data.get(key) is not None:
                return data[key]
        for value in data.values():
            if isinstance(value, dict):
                found = _first(value, *keys)
                if found is not None:
                    return found
    return None


@dataclass
class RecorderCapture:
    """The recorder's state of one call: whether the recorder asked it to capture its artifact."""

    asked: bool = False


class SkillRecorder(w.VBox):
    """Record steps with their selector chains, save them as a skill, replay it, export it.

    Args:
        session: the session whose calls are recorded (calls from every face count).
        domain: the skill's domain (default: the host of the page when saving).
        caller: the tool seam for save/replay/export (default: dispatch with ``source="widget"``).
    """

    recording = traitlets.Bool(False)
    steps: traitlets.List[dict[str, Any]] = traitlets.List(help="Recorded steps: index, tool, args, selectors, ok.")
    skill_id = traitlets.Unicode(None, allow_none=True)
    replay_status: traitlets.List[dict[str, Any]] = traitlets.List(
        help="Per step of the last replay: index, status, resolved_via, elapsed_ms."
    )
    script = traitlets.Unicode("", help="The last exported script.")
    demonstrating = traitlets.Bool(False, help="Recording the person's own input (Record what I do).")
    demo_steps: traitlets.List[dict[str, Any]] = traitlets.List(
        help="The demonstration's steps (record_status / record_stop): index, action, intent, target …"
    )

    def __init__(
        self,
        session: Session | None = None,
        *,
        domain: str | None = None,
        caller: Caller | None = None,
        name: str = "",
    ) -> None:
        if caller is None:
            if session is None:
                raise TypeError("SkillRecorder needs a session (or a caller)")
            caller = SessionCaller(session)
        self.session = session
        self.call: Caller = caller
        self.domain = domain
        self.last_result: ToolResult | None = None
        self._lock = threading.Lock()
        self._label_boxes: list[w.Text] = []

        lay = w.Layout(width="auto")
        self.start_button = w.Button(description="Record", icon="circle", button_style="danger", layout=lay)
        self.stop_button = w.Button(description="Stop", icon="stop", disabled=True, layout=lay)
        self.clear_button = w.Button(description="Clear", icon="trash", layout=lay)
        self.name_box = w.Text(value=name, placeholder="skill name", description="Name")
        self.save_button = w.Button(description="Save", icon="save", button_style="primary", layout=lay)
        self.replay_button = w.Button(description="Replay", icon="play", disabled=True, layout=lay)
        self.export_button = w.Button(description="Export", icon="file-code-o", disabled=True, layout=lay)
        self.status = w.HTML("")
        self.steps_table = w.HTML("")
        self.replay_table = w.HTML("")
        self.script_box = w.Textarea(value="", layout=w.Layout(width="100%", height="12em", display="none"))
        self.demo_toggle = w.ToggleButton(
            value=False, description="Record what I do", icon="hand-pointer-o", tooltip="record_start / record_stop"
        )
        self.params_box = w.Text(placeholder="field=param, …", description="Params")
        self.demo_box = w.VBox([])
        self._toggling = False
        self.demo_toggle.observe(self._on_toggle, names="value")
        self.add_class("ocnb-skill-recorder")

        self.start_button.on_click(lambda _b: self.start())
        self.stop_button.on_click(lambda _b: self.stop())
        self.clear_button.on_click(lambda _b: self.clear())
        self.save_button.on_click(lambda _b: self.save())
        self.replay_button.on_click(lambda _b: self.replay())
        self.export_button.on_click(lambda _b: self.export())

        bar1 = w.HBox([self.start_button, self.stop_button, self.clear_button, self.demo_toggle])
        bar2 = w.HBox([self.name_box, self.save_button, self.replay_button, self.export_button])
        children = [bar1, self.steps_table, self.demo_box, bar2, self.status, self.replay_table, self.script_box]
        super().__init__(children=children)
        self._hooks: list[Any] = []
        if session is not None:
            watcher = watcher_for(session)
            self._hooks = [
                watcher.on_before(self._before),
                watcher.on_call(self._after),
                watcher.subscribe(self.render),
            ]
        self.render()

    # -- recording (hooks run on the browser thread) -----------------------------------------
    def start(self) -> None:
        """Start capturing: capable calls run with ``capture_artifact: true`` until :meth:`stop`."""
        self.recording = True
        self.start_button.disabled, self.stop_button.disabled = True, False
        self.status.value = "<b>recording</b> — act on the page from any cell, the browser view or an agent"

    def stop(self) -> None:
        self.recording = False
        self.start_button.disabled, self.stop_button.disabled = False, True
        self.status.value = f"stopped: {len(self.steps)} step(s); name the skill and save it"
        self.render()

    def clear(self) -> None:
        with self._lock:
            self.steps = []
        self.render()

    def _before(self, call: CallContext) -> None:
        if not self.recording or call.source == "replay" or call.tooldef is None:
            return
        if "capture_artifact" in call.tooldef.input_schema.get("properties", {}):
            if "capture_artifact" not in call.args:
                # the skills layer's capture hook reads call.args; the journal then shows the flag too
                call.args["capture_artifact"] = True
                call.exec_args["capture_artifact"] = True
                call.slot(RecorderCapture).asked = True

    def _after(self, call: CallContext, result: ToolResult) -> None:
        if not self.recording or call.source == "replay":
            return
        mine = call.peek(RecorderCapture)
        if not ((mine is not None and mine.asked) or call.args.get("capture_artifact")):
            return
        self.observe_step(call.name, call.args, result)

    def observe_step(self, tool: str, args: dict[str, Any], result: ToolResult) -> list[dict[str, Any]]:
        """Add the replay steps of one captured call (failed calls add none); returns them.

        A call becomes one step, or one per field for ``fill_form``, each with its selector chain —
        the same steps the skills layer buffers for ``oc_skill_record``.
        """
        if not result.ok:
            return []
        data = result.data if isinstance(result.data, dict) else {}
        args = {k: v for k, v in args.items() if k not in ("capture_artifact", "tab_id", "intent")}
        with self._lock:
            added: list[dict[str, Any]] = []
            for art in _artifact_steps(tool, args, data):
                target = art.get("target") or {}
                added.append(
                    {
                        "index": len(self.steps) + len(added),
                        "tool": tool,
                        "kind": art.get("kind") or tool,
                        "args": args,
                        "target": target,
                        "selectors": list(art.get("selectors") or []),
                        "url": data.get("url"),
                    }
                )
            self.steps = [*self.steps, *added]
        return added

    # -- a person's demonstration (record_start / record_stop) -----------------------------------
    def demonstrate(self, on: bool = True) -> ToolResult:
        """Start (``on``) or stop recording what the person does in the page; stopped, the steps are
        listed with their intents in editable boxes until :meth:`save` (or :meth:`discard_demo`)."""
        if on == self.demonstrating:
            return ToolResult.success("record_status", {"recording": on})
        if on and self.session is not None and "record" not in self.session.registry.caps:
            self.session.configure(caps=(*self.session.settings.caps, "record"))  # the person asked for it
        result = self.call("record_start" if on else "record_stop", {})
        if result.ok:
            self.demonstrating = on
            if on:
                self.demo_steps = []
                self.status.value = "<b>recording what you do</b> — act in the page; switch off when done"
            else:
                self.demo_steps = list((result.data or {}).get("steps") or [])
                self.status.value = f"stopped: {len(self.demo_steps)} step(s); edit the intents, name it and save"
            self._show_demo()
        self._toggling = True  # the toggle shows what is, without asking again
        try:
            self.demo_toggle.value = self.demonstrating
        finally:
            self._toggling = False
        return self._report(result)

    def refresh_demo(self) -> ToolResult:
        """Show the demonstration's steps so far (``record_status``, quiet)."""
        result = self.call("record_status", {}, quiet=True)
        if result.ok:
            self.demo_steps = list((result.data or {}).get("steps") or [])
            self._show_demo()
        return result

    def discard_demo(self) -> ToolResult:
        """Drop the demonstration's steps without saving them."""
        result = self.call("record_stop", {"discard": True})
        if result.ok:
            self.demonstrating, self.demo_steps = False, []
            self._show_demo()
        return self._report(result)

    def _on_toggle(self, change: dict[str, Any]) -> None:
        if not self._toggling:
            self.demonstrate(bool(change["new"]))

    def _show_demo(self) -> None:
        self._label_boxes = [
            w.Text(value=str(st.get("intent") or ""), description=f"{st.get('index')}", layout=w.Layout(width="100%"))
            for st in self.demo_steps
        ]
        self.demo_box.children = [*self._label_boxes, self.params_box] if self.demo_steps else []

    def _demo_params(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for part in self.params_box.value.replace(";", ",").split(","):
            field, eq, name = part.strip().partition("=")
            if eq and field.strip() and name.strip():
                out[field.strip()] = name.strip()
        return out

    def _save_demo(self, name: str) -> ToolResult:
        labels = {
            str(st["index"]): box.value.strip()
            for st, box in zip(self.demo_steps, self._label_boxes, strict=False)
            if box.value.strip() and box.value.strip() != st.get("intent")
        }
        args: dict[str, Any] = {"name": name}
        if labels:
            args["labels"] = labels
        if params := self._demo_params():
            args["params"] = params
        if self.domain:
            args["domain"] = self.domain
        result = self.call("record_stop", args)
        if result.ok:
            self.demonstrating, self.demo_steps = False, []
            self._show_demo()
        return result

    # -- skill actions (journaled) --------------------------------------------------------------
    def save(self, name: str | None = None) -> ToolResult:
        """Record the captured steps as a skill (``oc_skill_record``); remembers its ``skill_id``.

        The domain is the recorder's ``domain`` when set, else the skills layer's default (the host
        of the recorded start page).
        """
        name = (name or self.name_box.value).strip()
        if not name:
            return self._report(
                ToolResult.failure("oc_skill_record", "INVALID_ARGUMENT", "give the skill a name first")
            )
        self.name_box.value = name
        if self.recording:
            self.stop()
        if self.demonstrating or self.demo_steps:  # a demonstration: its steps, labels and params
            result = self._save_demo(name)
        else:
            args: dict[str, Any] = {"name": name}
            if self.domain:
                args["domain"] = self.domain
            result = self.call("oc_skill_record", args)
        if result.ok:
            skill_id = _first(result.data, "skill_id", "id")
            self.skill_id = str(skill_id) if skill_id is not None else None
            self.domain = _first(result.data, "domain") or self.domain
            self.replay_button.disabled = self.export_button.disabled = self.skill_id is None
            self.status.value = (
                f"saved <b>{html.escape(name)}</b> as <code>{html.escape(str(self.skill_id))}</code>"
                f" ({html.escape(str(_first(result.data, 'steps')))} step(s), {html.escape(str(self.domain))})"
            )
        return self._report(result)

    def replay(self, params: dict[str, Any] | None = None, **options: Any) -> ToolResult:
        """Replay the saved skill (``oc_skill_replay``) and show each step's outcome."""
        if not self.skill_id:
            return self._report(ToolResult.failure("oc_skill_replay", "INVALID_ARGUMENT", "save the skill first"))
        args: dict[str, Any] = {"skill_id": self.skill_id, **options}
        if params:
            args["params"] = params
        result = self.call("oc_skill_replay", args)
        self.replay_status = replay_steps(result)
        self.replay_table.value = self._render_replay()
        if result.ok:
            self.status.value = f"replayed {len(self.replay_status)} step(s): ok"
        return self._report(result)

    def export(self, path: str | None = None, *, overwrite: bool = False) -> ToolResult:
        """Export the saved skill as a standalone Playwright script (``oc_skill_export``) and show it.

        An existing file is kept (``INVALID_ARGUMENT``) unless ``overwrite`` is true.
        """
        if not self.skill_id:
            return self._report(ToolResult.failure("oc_skill_export", "INVALID_ARGUMENT", "save the skill first"))
        args: dict[str, Any] = {"skill_id": self.skill_id}
        if path:
            args["path"] = str(path)
        if overwrite:
            args["overwrite"] = True
        result = self.call("oc_skill_export", args)
        if result.ok:
            script = _first(result.data, "script", "code")
            written = _first(result.data, "path")
            if script is None and written:
                try:
                    script = Path(str(written)).read_text(encoding="utf-8")
                except OSError:
                    script = ""
            self.script = str(script or "")
            self.script_box.value = self.script
            self.script_box.layout.display = "block"
            self.status.value = f"exported to <code>{html.escape(str(written))}</code>"
        return self._report(result)

    def _report(self, result: ToolResult) -> ToolResult:
        self.last_result = result
        if not result.ok and result.error is not None:
            self.status.value = (
                f'<span style="color:#b71c1c"><b>{html.escape(result.error.code)}</b> {html.escape(result.tool)}: '
                f"{html.escape(result.error.message)}</span>"
            )
        return result

    # -- display ---------------------------------------------------------------------------------
    def render(self) -> None:
        """Redraw the steps table."""
        rows = []
        for s in list(self.steps):
            rows.append(
                f"<tr class='ocnb-row'><td>{s['index']}</td><td>{html.escape(s['tool'])}</td>"
                f"<td>{html.escape(s.get('kind', ''))}</td><td>{html.escape(_target(s))}</td>"
                f"<td class='ocnb-chain'>{html.escape(format_chain(s['selectors'])) or _no_chain(s)}</td></tr>"
            )
        body = "".join(rows) or "<tr class='ocnb-empty'><td colspan='5'><i>no steps recorded</i></td></tr>"
        self.steps_table.value = (
            f"<style>{asset_text('tables.css')}</style><table class='ocnb-table ocnb-steps'>"
            f"<thead><tr><th>#</th><th>tool</th><th>step</th><th>target</th><th>selector chain</th></tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )

    def _render_replay(self) -> str:
        rows = []
        for r in self.replay_status:
            klass = "ok" if r["status"] == "ok" else ("pending" if r["status"] == "not run" else "failed")
            rows.append(
                f"<tr class='ocnb-row'><td>{r['index']}</td><td><span class='ocnb-badge {klass}'>"
                f"{html.escape(r['status'])}</span></td><td>{html.escape(str(r.get('resolved_via') or ''))}</td>"
                f"<td>{html.escape(str(r.get('elapsed_ms') or ''))}</td></tr>"
            )
        return (
            "<table class='ocnb-table ocnb-replay'><thead><tr><th>#</th><th>status</th><th>resolved via</th>"
            f"<th>ms</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def close(self) -> None:
        for unhook in self._hooks:
            unhook()
        self._hooks = []
        self.recording = False
        super().close()
