"""The hand-off widget tells look-alike candidates apart: distinct labels (row, position) and one
numbered mark per candidate on the screenshot, where the candidate is."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from ocnb.results import ToolError, ToolResult
from ocnb.widgets.caller import ScriptedCaller
from ocnb.widgets.handoff import HumanHandoff

# a 400 × 300 PNG header is all marked_screenshot reads for the size; the rest is any PNG body
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAZAAAAEsCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _result(shot: Path) -> ToolResult:
    candidates = [
        {"ref": "ax_13", "role": "button", "name": "Delete", "context": "Invoice 1001 — Acme Corp", "position": 1,
         "box": {"x": 300.0, "y": 40.0, "width": 50.0, "height": 20.0}},
        {"ref": "ax_14", "role": "button", "name": "Delete", "context": "Invoice 1002 — Globex", "position": 2,
         "box": {"x": 300.0, "y": 70.0, "width": 50.0, "height": 20.0}},
    ]  # fmt: skip
    payload = {"tool": "interact", "target": {"query": "Delete"}, "reason": "AMBIGUOUS_TARGET",
               "candidates": candidates, "screenshot": str(shot), "args": {"query": "Delete", "action": "click"}}  # fmt: skip
    return ToolResult(ok=False, tool="interact", error=ToolError("NEEDS_HUMAN", "pick", payload))


def test_labels_are_distinct_and_each_candidate_is_marked(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    widget = HumanHandoff(_result(shot), caller=ScriptedCaller({"interact": {"element": {"ref": "ax_14"}}}))
    labels = [label for label, _ in widget.picker.options]
    assert labels == [
        "#1 button “Delete” in “Invoice 1001 — Acme Corp” (ax_13)",
        "#2 button “Delete” in “Invoice 1002 — Globex” (ax_14)",
    ]
    svg = widget.marked.value
    assert 'viewBox="0 0 400 300"' in svg
    rects = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)"', svg)
    assert rects == [("297.0", "37.0"), ("297.0", "67.0")]  # around each box, 3 px out
    assert re.findall(r">(\d)</text>", svg) == ["1", "2"]
    assert widget.image.layout.display == "none"  # the marked picture replaces the plain one


def test_without_boxes_the_plain_screenshot_stays(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    result = _result(shot)
    for c in result.error.details["candidates"]:
        c.pop("box")
    widget = HumanHandoff(result, caller=ScriptedCaller({}))
    assert widget.marks == [] and widget.marked.value == "" and widget.image.layout.display != "none"


def test_a_context_with_a_role_reads_as_role_and_quoted_name(tmp_path: Path) -> None:
    """What perception gives (``item "Invoice 1001 — Acme Corp"``) is not quoted twice in the label."""
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    result = _result(shot)
    assert result.error is not None
    for c, company in zip(result.error.details["candidates"], ("Acme Corp", "Globex"), strict=True):
        c["context"] = f'item "Invoice {c["ref"][-2:]} — {company}"'
    widget = HumanHandoff(result, caller=ScriptedCaller({}))
    assert [label for label, _ in widget.picker.options] == [
        "#1 button “Delete” in item “Invoice 13 — Acme Corp” (ax_13)",
        "#2 button “Delete” in item “Invoice 14 — Globex” (ax_14)",
    ]
