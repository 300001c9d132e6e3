"""The notebook face's shared fixture: IPython's test shell with ``%load_ext ocnb`` done."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb


@pytest.fixture(scope="module")
def ip(module_home: Path) -> Iterator[Any]:
    """IPython's test shell with the extension loaded; the shared session lives under module_home.

    Whatever a module's tests switched on in the magics (hand-off, an MCP server) is switched off after it.
    """
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # the test shell is started once per process
    shell.run_line_magic("load_ext", "ocnb.magics")
    mp = pytest.MonkeyPatch()
    mp.setenv("OCNB_HOME", str(module_home))
    ocnb.session().start()
    mp.undo()
    yield shell
    magics = shell.magics_manager.registry["OcMagics"]
    magics._mcp_server = None
    shell.run_line_magic("config", "OcMagics.handoff = False")
    ocnb.session().close()
