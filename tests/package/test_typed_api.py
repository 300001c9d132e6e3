"""What an editor and a type checker see of ocnb: the tool methods of ``Session``, typed from the registry.

The stub (``ocnb/_tool_methods.pyi``) is generated from the registry; these tests fail when it drifts,
when a tool has no method in it, and — through mypy run on a small user script, as a user's CI would —
when a wrong argument type stops being an error or a right call becomes one.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ocnb
from ocnb.commands import stubs
from ocnb.registry import all_tooldefs

ROOT = Path(__file__).resolve().parents[2]


def test_the_stub_matches_the_registry() -> None:
    assert stubs.STUB_PATH.read_text(encoding="utf-8") == stubs.generate(), (
        "ocnb/_tool_methods.pyi is out of date: run `python -m ocnb.commands.stubs`"
    )


def test_every_tool_has_a_typed_method_and_the_package_is_typed() -> None:
    text = stubs.STUB_PATH.read_text(encoding="utf-8")
    missing = [t.name for t in all_tooldefs() if f"    def {t.name}(self, **kwargs: Unpack[" not in text]
    assert not missing, missing
    assert (ROOT / "ocnb" / "py.typed").is_file()
    assert issubclass(ocnb.Session, stubs_module_class())


def stubs_module_class() -> type:
    from ocnb._tool_methods import ToolMethods

    return ToolMethods


def test_the_runtime_class_adds_no_method() -> None:
    """Only type checkers read the stub: at run time a session still has exactly its offered tools."""
    from ocnb._tool_methods import ToolMethods

    assert [n for n in vars(ToolMethods) if not n.startswith("__")] == []
    s = ocnb.Session(headless=True)
    try:
        assert hasattr(s, "navigate") and not hasattr(s, "network_requests")  # an opt-in group's tool
        s.configure(caps=["network"])
        assert hasattr(s, "network_requests")
    finally:
        s.close()


@pytest.mark.slow
def test_mypy_catches_a_wrong_tool_argument_in_a_user_script(tmp_path: Path) -> None:
    script = tmp_path / "user_script.py"
    script.write_text(
        textwrap.dedent(
            """
            import ocnb

            s = ocnb.Session(headless=True)
            r = s.navigate(url="https://example.com", intent="open the page")
            r = s.navigate({"url": "https://example.com"})
            r = s.interact(query="Sign up", action="click", intent="send the form")
            r = s.form_input(ref="ax_1", value="Ada")
            ok: bool = r.ok
            wrong_type = s.navigate(url=1)  # line 9
            missing = s.navigate(intent="no url")  # line 10
            typo = s.interact(querry="Sign up")  # line 11
            bad_action = s.interact(query="x", action="smash")  # line 12
            """
        ).lstrip()
    )
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "c"), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    lines = sorted({int(line.split(":")[1]) for line in errors})
    assert lines == [9, 10, 11, 12], run.stdout  # the four wrong calls, and no right one
