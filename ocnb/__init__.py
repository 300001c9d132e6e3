"""ocnb — drive a real Chromium from Jupyter notebooks, for people and LLM agents alike."""

from ._version import __version__
from .config import Config
from .dispatch import dispatch
from .errors import OcnbError
from .registry import Registry, ToolDef, build_registry
from .results import ToolError, ToolResult
from .session import Session, session

__all__ = [
    "Config",
    "OcnbError",
    "Registry",
    "Session",
    "ToolDef",
    "ToolError",
    "ToolResult",
    "__version__",
    "build_registry",
    "dispatch",
    "session",
]
