"""Where the widgets' front-end files (ES modules and CSS) are found.

Installed from a wheel they live next to the package as ``ocnb/_widgets`` (``pyproject.toml``
force-includes the top-level ``widgets/`` folder there); in a source checkout they are read from
the repository's ``widgets/`` folder, so ``ANYWIDGET_HMR=1`` reloads edits while developing.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["asset", "asset_text", "assets_dir"]

_PACKAGE = Path(__file__).resolve().parent.parent


def assets_dir() -> Path:
    """The folder holding ``screen.js``, ``screen.css`` and ``tables.css``."""
    installed = _PACKAGE / "_widgets"
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / "widgets"


def asset(name: str) -> Path:
    """Path of one front-end file; raises ``FileNotFoundError`` naming the folder searched."""
    path = assets_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"ocnb widget asset {name!r} not found in {path.parent}")
    return path


@functools.cache
def asset_text(name: str) -> str:
    """The text of one front-end file (cached: assets do not change while a kernel runs)."""
    return asset(name).read_text(encoding="utf-8")
