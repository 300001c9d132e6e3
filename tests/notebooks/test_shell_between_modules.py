"""IPython's test shell is one per process: what one module leaves in the magics is taken back
before the next module on the same worker gets the shell (CI once failed ``%oc mcp start`` in
test_magics because the docs' prose had left ``%oc mcp start --isolated`` running)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ocnb
from tests.conftest import left_behind, process_state
from tests.notebooks import magics_shell

pytestmark = pytest.mark.browser


def test_the_next_module_finds_no_server_and_the_default_settings(tmp_path: Path) -> None:
    pytest.importorskip("ocnb.mcp")
    with magics_shell(tmp_path / "first") as shell:
        server = shell.run_line_magic("oc", "mcp start --isolated")
        shell.run_line_magic("config", "OcMagics.risky_words = ['nuke']")
        shell.run_line_magic("config", "OcMagics.handoff = True")
        assert server.running
    assert not server.running  # stopped, not only forgotten: its port is closed
    with magics_shell(tmp_path / "second") as shell:
        magics = shell.magics_manager.registry["OcMagics"]
        assert (magics.risky_words, magics.handoff) == ([], False)
        assert ocnb.session().home == tmp_path / "second"
        second = shell.run_line_magic("oc", "mcp start")  # refused before: "already running here"
        assert second.running and second.url != server.url


def test_a_server_left_running_in_the_magics_is_named_and_stopped(tmp_path: Path) -> None:
    pytest.importorskip("ocnb.mcp")
    with magics_shell(tmp_path) as shell:
        before = process_state()
        server = shell.run_line_magic("oc", "mcp start")
        assert left_behind(before, process_state()) == [
            f"an MCP server ({server.url}) runs in the notebook shell's magics"
        ]
        assert not server.running
