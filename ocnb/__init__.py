"""ocnb — drive a real Chromium from Jupyter notebooks, for people and LLM agents alike."""

from .config import Config
from .dispatch import dispatch
from .errors import OcnbError
from .registry import Registry, ToolDef, build_registry
from .results import ToolError, ToolResult
from .session import Session, session

__version__ = "0.1.0"

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
