"""README.md and docs/ name only things that exist: tools, magic words, storage folders, Python names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ocnb.contracts import CONTROL_TOOLS, OBSERVATION_TOOLS
from ocnb.magics import COMMANDS, VERBS
from ocnb.registry import all_tooldefs

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TOOLS = {t.name for t in all_tooldefs()}
#: Tools of peer servers that the docs compare ocnb with; named only beside the peer's name.
PEER_TOOLS = {"browser_snapshot": "Playwright MCP"}
SOURCE_WORDS = {
    word for path in (ROOT / "ocnb").rglob("*.py") for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text())
}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def mentioned_names(text: str) -> set[str]:
    """Snake-case names in backticks, words after ``%oc``, and tools in JSON ``allowedTools`` lists."""
    names = set(re.findall(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`", text))
    code = re.findall(r"`(%oc [^`]+)`", text) + re.findall(r"```ipython\n(.*?)```", text, re.S)
    names |= {"%oc " + w for snippet in code for w in re.findall(r"(?m)^%oc ([a-z_]+)", snippet)}
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        names |= set(json.loads(block).get("allowedTools", []))
    return names


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_tool_a_doc_names_is_registered(path: Path) -> None:
    text = _text(path)
    wrong = []
    for name in sorted(mentioned_names(text)):
        if name.startswith("%oc "):
            word = name[4:]
            if word not in TOOLS and word not in VERBS and word not in COMMANDS:
                wrong.append(f"{name}: not a tool, a verb ({', '.join(VERBS)}) or a command")
        elif name in PEER_TOOLS:
            if PEER_TOOLS[name] not in text:
                wrong.append(f"{name}: a {PEER_TOOLS[name]} tool, named without saying so")
        elif name.startswith("oc_") and name not in TOOLS:
            wrong.append(f"{name}: no such tool")
        elif name not in TOOLS and name not in SOURCE_WORDS:
            wrong.append(f"{name}: neither a tool nor a name in ocnb's source")
    assert not wrong, wrong


def test_the_checker_catches_a_tool_that_does_not_exist() -> None:
    names = mentioned_names(
        '`oc_trace` and `%oc get_page_text` and ```json\n{"allowedTools": ["console_capture"]}\n```'
    )
    assert {"oc_trace", "%oc get_page_text", "console_capture"} <= names
    assert not {"oc_trace", "get_page_text", "console_capture"} & (TOOLS | set(VERBS) | set(COMMANDS))
    assert "console_capture" not in SOURCE_WORDS


def test_the_evaluator_names_only_registered_tools() -> None:
    assert OBSERVATION_TOOLS - TOOLS == set()
    assert CONTROL_TOOLS - TOOLS == set()


def test_the_readme_lists_every_folder_ocnb_writes_under_its_home() -> None:
    written = set()
    for path in (ROOT / "ocnb").rglob("*.py"):
        written |= set(re.findall(r'home\)? / "([a-z][a-z-]*)"', path.read_text()))
    assert {"journal", "traces", "skill-memory"} <= written, written
    storage = re.search(r"Storage lives under `OCNB_HOME`.*?\n\n", _text(ROOT / "README.md"), re.S)
    assert storage is not None
    missing = sorted(f for f in written if f"`{f}/`" not in storage.group(0))
    assert not missing, f"README's storage list lacks {missing}"


def test_figures_said_twice_agree() -> None:
    """The headless shell's saving is stated in the README and in the set-up script: the same figure."""
    readme, setup = _text(ROOT / "README.md"), (ROOT / "scripts" / "setup.sh").read_text()
    pattern = r"about (\d+%|half)(?: less)? (?:the )?(?:browser-process )?CPU"
    figures = [m for text in (readme, setup) for m in re.findall(pattern, text)]
    assert len(figures) >= 2 and set(figures) == {"30%"}, figures
