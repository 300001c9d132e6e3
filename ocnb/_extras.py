"""Optional features and the extra that installs each: one message for a missing one.

``pip install ocnb`` is the core: a script that drives Chromium through :class:`ocnb.Session`. The
rest comes with extras declared in ``pyproject.toml`` (``[all]`` is every one of them)::

    notebook   %load_ext ocnb, the widgets, executing the example notebooks
    mcp        the MCP shim (ocnb.mcp, ``ocnb mcp``)
    discovery  the neural retrievers of capability discovery, and manifest hot reload
    dask       replaying a skill on a dask cluster (ocnb.batch.dask), a batch's journal as a Dask DataFrame

A module that needs an extra imports its packages inside ``with extra("NAME"):``; without them the
import fails with one line that says what to install (a :class:`MissingExtraError`, which is an
ImportError, so ``except ImportError`` still catches it)::

    MissingExtraError: ocnb.mcp needs the 'mcp' extra: pip install 'ocnb[mcp]' (missing: uvicorn)

``tests/package/test_extras.py`` checks that every third-party import in ``ocnb/`` is a core
dependency or sits under the guard of an extra that lists it.
"""

from __future__ import annotations

import sys
from types import TracebackType

__all__ = ["EXTRAS", "MissingExtraError", "extra"]

#: The extras of pyproject.toml and what each gives (the test checks the two lists agree).
EXTRAS = {
    "notebook": "%load_ext ocnb, the widgets and executing the example notebooks",
    "mcp": "the MCP shim",
    "discovery": "the neural retrievers of capability discovery and manifest hot reload",
    "dask": "replay on a dask cluster, and a batch's journal as a Dask DataFrame",
}


class MissingExtraError(ModuleNotFoundError):
    """A package of an ocnb extra is not installed; the message names the extra to install."""


def extra(name: str) -> _Guard:
    """``with extra("mcp"): import ...``: a missing third-party package becomes an ImportError that
    names ocnb's extra installing it, and the module whose imports failed (the caller)."""
    if name not in EXTRAS:
        raise ValueError(f"unknown extra {name!r}; known: {', '.join(EXTRAS)}")
    return _Guard(name, sys._getframe(1).f_globals.get("__name__", "ocnb"))


class _Guard:
    def __init__(self, name: str, user: str) -> None:
        self.name = name
        self.user = user

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not isinstance(exc, ModuleNotFoundError) or isinstance(exc, MissingExtraError):
            return None
        missing = (exc.name or "").partition(".")[0]
        if not missing or missing == "ocnb":  # one of our own modules is missing: a bug, not an extra
            return None
        message = f"{self.user} needs the {self.name!r} extra: pip install 'ocnb[{self.name}]' (missing: {missing})"
        raise MissingExtraError(message, name=exc.name) from None
