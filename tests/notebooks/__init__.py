"""The notebook face's tests, and the IPython shell they share.

IPython's test shell is one per process, and so is the :class:`~ocnb.magics.OcMagics` it holds: an
MCP server a module started, or a setting it changed with ``%config``, would still be there for the
next module the same worker runs. :func:`magics_shell` gives a module the shell as a fresh kernel
would have it, and takes back whatever the module left.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import ocnb


@contextmanager
def magics_shell(module_home: Path, *, from_magics: bool = False) -> Iterator[Any]:
    """IPython's test shell with the shared session under ``module_home``.

    ``from_magics`` makes the session from the magics' settings (``%config OcMagics...``) instead of
    the plain default. On the way in and out: no MCP server running in the magics, their settings as
    a new kernel's, the session closed.
    """
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # the test shell is started once per process
    shell.run_line_magic("load_ext", "ocnb.magics")  # the extension's objects exist to be reset
    magics = shell.magics_manager.registry["OcMagics"]
    _reset(magics)
    mp = pytest.MonkeyPatch()
    mp.setenv("OCNB_HOME", str(module_home))
    if from_magics:
        magics.session()
    else:
        ocnb.session().start()
    mp.undo()
    try:
        yield shell
    finally:
        _reset(magics)


def _reset(magics: Any) -> None:
    """No MCP server, no session, and every ``%config OcMagics`` setting at its default."""
    server, magics._mcp_server = magics._mcp_server, None
    if server is not None and server.running:
        server.stop()
    ocnb.session().close()  # first: a setting changed with no session open changes only the magics
    for name in magics.traits(config=True):
        value = magics.trait_defaults(name)
        if getattr(magics, name) != value:
            setattr(magics, name, value)
