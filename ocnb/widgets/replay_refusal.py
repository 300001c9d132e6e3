"""A replay refusal a person can settle: act on a confirmed candidate, re-record the step, go on.

``oc_skill_replay`` refuses an element that disagrees with its recorded fingerprint with
``ARTIFACT_RESOLUTION_FAILED``; ``data.failure`` names the step, the differing fields, the refused
candidate and up to three candidates. :class:`~ocnb.widgets.HumanHandoff` shows that refusal and,
when a person picks one of the candidates, :func:`confirm_candidate`:

1. acts on it with the step's own action and values (``${var}`` from the replay's ``params``)
   through dispatch with ``capture_artifact: true`` — journaled, ``source="widget"``;
2. re-records the step from what that capture saw (the chosen element's selector chain and
   fingerprint, :func:`ocnb.skills.capture.artifact_for` — the normal record path), keeping the
   step's arguments and placeholders, and stores the skill again through ``oc_skill_record``
   (same id, checked against the skill schema);
3. continues the replay from the next step (``step_range``) with the replay's other arguments.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..placeholders import fill_params
from ..results import ToolResult
from ..skills.capture import capture_buffer
from .caller import Caller

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["Confirmed", "confirm_candidate", "is_replay_refusal", "refusal_payload"]

#: oc_skill_replay arguments a continued replay keeps.
REPLAY_KEYS = ("params", "tolerate", "step_timeout_ms", "allow_risky", "stop_on_contract_failure", "tab_id")


def is_replay_refusal(result: ToolResult | dict[str, Any]) -> bool:
    """A failed ``oc_skill_replay`` whose element was refused (or its payload)."""
    if isinstance(result, dict):
        return (result.get("failure") or {}).get("code") == "ARTIFACT_RESOLUTION_FAILED" and "skill_id" in result
    return (
        not result.ok
        and result.error is not None
        and result.error.code == "ARTIFACT_RESOLUTION_FAILED"
        and isinstance(result.data, dict)
        and isinstance(result.data.get("failure"), dict)
    )


def refusal_payload(result: ToolResult | dict[str, Any]) -> dict[str, Any]:
    """The replay report of a refusal: ``{skill_id, failure, …}``."""
    if isinstance(result, dict):
        return dict(result)
    assert isinstance(result.data, dict)
    return dict(result.data)


def candidates_of(failure: dict[str, Any]) -> list[dict[str, Any]]:
    """The refused candidate first, then the others (distinct refs), each with ``refused`` set."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    refused = failure.get("refused")
    for c in ([refused] if isinstance(refused, dict) else []) + list(failure.get("candidates") or []):
        if not isinstance(c, dict) or not isinstance(c.get("ref"), str) or c["ref"] in seen:
            continue
        seen.add(c["ref"])
        out.append({**c, "refused": c is refused or c["ref"] == (refused or {}).get("ref")})
    return out


def locate_step(skill: dict[str, Any], index: int) -> tuple[int, int]:
    """(skill step, artifact step) of the replay's flat step ``index`` (as ``oc_skill_replay`` counts)."""
    flat = 0
    for si, st in enumerate(skill.get("steps") or []):
        low = (st.get("replay_artifact") or {}).get("steps") or []
        if index < flat + len(low):
            return si, index - flat
        flat += len(low)
    raise IndexError(f"the skill has no step {index}")


def flat_count(skill: dict[str, Any]) -> int:
    return sum(len((st.get("replay_artifact") or {}).get("steps") or []) for st in skill.get("steps") or [])


def action_call(low: dict[str, Any], ref: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool call that does what the recorded step ``low`` does, on ``ref``."""
    args = fill_params(dict(low.get("args") or {}), params)
    action = args.get("action", "click")
    if action == "form_input":
        return "form_input", {"ref": ref, "value": args.get("value")}
    if low.get("kind") == "select":
        action = "select"
    call: dict[str, Any] = {"ref": ref, "action": action}
    for key in ("value", "key"):
        if key in args:
            call[key] = args[key]
    return "interact", call


@dataclass
class Confirmed:
    """What confirming a candidate did: the action, the re-recording and the continued replay."""

    ref: str
    acted: ToolResult
    recorded: ToolResult | None = None
    continued: ToolResult | None = None
    step: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(r is None or r.ok for r in (self.acted, self.recorded, self.continued))


def _take_capture(session: Session, tool: str, ref: str, tab_id: str | None) -> dict[str, Any] | None:
    """Remove and return the capture-buffer entry the confirming call just added."""
    state = session.state
    if state is None:
        return None
    tabs = [state.tabs.get(tab_id)] if tab_id else list(state.tabs.values())
    for tab in tabs:
        buf = capture_buffer(tab) if tab is not None else None
        if buf and buf[-1]["tool"] == tool and buf[-1]["args"].get("ref") == ref:
            entry: dict[str, Any] = buf.pop()
            return entry
    return None


def rerecorded_steps(skill: dict[str, Any], index: int, captured: dict[str, Any]) -> list[dict[str, Any]]:
    """The skill's steps with flat step ``index`` re-recorded from ``captured`` (one low-level step).

    The new chain, fingerprint, frame and target come from the capture; the step's arguments (and
    their ``${var}``/``${SECRET:…}`` placeholders), kind and post-assertion stay as recorded.
    """
    si, ai = locate_step(skill, index)
    steps = copy.deepcopy(skill["steps"])
    art = steps[si]["replay_artifact"]
    old = art["steps"][ai]
    new = dict(old)
    for key in ("selectors", "frame_ordinal", "target", "fingerprint"):
        if key in captured:
            new[key] = captured[key]
    new["risky"] = bool(old.get("risky")) or bool(captured.get("risky"))
    art["steps"][ai] = new
    return steps


def confirm_candidate(
    session: Session,
    call: Caller,
    skill_id: str,
    failure: dict[str, Any],
    ref: str,
    *,
    replay_args: dict[str, Any] | None = None,
    rerecord: bool = True,
    continue_replay: bool = True,
) -> Confirmed:
    """Act on ``ref`` for the refused step, re-record the step from it, and continue the replay."""
    from ..skills.store import SkillStore

    replay_args = dict(replay_args or {})
    skill = SkillStore(session.home).get(skill_id)
    index = int(failure["step_index"])
    si, ai = locate_step(skill, index)
    low = skill["steps"][si]["replay_artifact"]["steps"][ai]
    tool, args = action_call(low, ref, dict(replay_args.get("params") or {}))
    tab_id = replay_args.get("tab_id")
    if tab_id:
        args["tab_id"] = tab_id
    args["intent"] = f"confirm step {index} of skill {skill['name']!r} on {ref}"
    acted = call(tool, {**args, "capture_artifact": rerecord})
    out = Confirmed(ref=ref, acted=acted, step={"index": index, "tool": tool, "args": args})
    if not acted.ok:
        return out
    if rerecord:
        entry = _take_capture(session, tool, ref, tab_id or (acted.data or {}).get("tab_id"))
        if entry is None or not entry.get("steps"):
            out.recorded = ToolResult.failure(
                "oc_skill_record", "ARTIFACT_MISSING", "the confirming call captured no step to re-record"
            )
            return out
        steps = rerecorded_steps(skill, index, entry["steps"][0])
        out.recorded = call("oc_skill_record", {"domain": skill["domain"], "name": skill["name"], "steps": steps})
        if not out.recorded.ok:
            return out
    last = replay_args.get("step_range", {}).get("to", flat_count(skill) - 1)
    if continue_replay and index < last:
        cont = {k: replay_args[k] for k in REPLAY_KEYS if k in replay_args}
        out.continued = call(
            "oc_skill_replay", {"skill_id": skill_id, **cont, "step_range": {"from": index + 1, "to": last}}
        )
    return out
