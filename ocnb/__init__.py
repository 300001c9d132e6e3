"""ocnb — drive a real Chromium from Jupyter notebooks, for people and LLM agents alike."""

from . import _compat
from . import display as _display
from ._version import __version__
from .audit.secrets import SecretStore
from .audit.telemetry import journal_df, replay_df, trace_df
from .batch.pool import Pool
from .dispatch import dispatch
from .errors import OcnbError
from .registry import Registry, ToolDef, build_registry
from .registry import use_catalogue as _use_catalogue
from .results import ToolError, ToolResult
from .session import Session, session
from .settings import Settings

_compat.install()  # the import paths of modules that moved (ocnb.demosite, ocnb.pool, …) keep working

#: The old name of :class:`Settings`.
Config = Settings


def _declare_tools() -> None:
    """Import the tool catalogue (``ocnb/tools/__init__.py``): its modules declare every tool."""
    from . import tools  # noqa: F401


_use_catalogue(_declare_tools)


def _progress_in_cells(tool: str, args: dict[str, object]) -> object:
    """A long call's progress line in a Jupyter cell (:mod:`ocnb.widgets.progress`); None elsewhere."""
    import sys

    if "ipykernel" not in sys.modules:  # not a kernel: nothing to show, nothing imported
        return None
    try:
        from .widgets.progress import cell_progress
    except ImportError:  # the notebook extra is not installed
        return None
    return cell_progress(tool, args)


_display.options.progress = _progress_in_cells  # type: ignore[assignment]


def capability_map() -> str:
    """The capability map (one line per tool, grouped by category) as text, from the installed package.

    The same text as ``ocnb capability-map --print`` and the checked-in ``docs/agent/capability-map.md``;
    load it as a model's system prompt so it can choose a tool before it sees any schema.
    """
    from .commands.capmap import generate

    return generate()


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext ocnb``: register the ``%oc`` / ``%%oc`` magics."""
    from .magics import load_ipython_extension as _load

    _load(ipython)


__all__ = [
    "Config",
    "OcnbError",
    "Registry",
    "Pool",
    "SecretStore",
    "Session",
    "Settings",
    "ToolDef",
    "ToolError",
    "ToolResult",
    "__version__",
    "build_registry",
    "capability_map",
    "dispatch",
    "journal_df",
    "load_ipython_extension",
    "replay_df",
    "session",
    "trace_df",
]


def __getattr__(name: str):  # noqa: ANN202 - module-level lazy import
    """``ocnb.mcp`` and ``ocnb.widgets`` are imported on first use (uvicorn and the MCP SDK; ipywidgets)."""
    if name in ("mcp", "widgets"):
        import importlib

        return importlib.import_module(f"ocnb.{name}")
    raise AttributeError(f"module 'ocnb' has no attribute {name!r}")
