"""Settings of one :class:`~ocnb.session.Session`, as a plain object (library code never sees magics)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Config"]


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass
class Config:
    """What a session may do and how. Defaults are safe (DESIGN §6); env vars override a few.

    - ``default_timeout_ms``: per-call timeout when the call gives none.
    - ``allow_javascript``: ``javascript_tool`` answers ``DISABLED`` when false (``OCNB_JAVASCRIPT=0``).
    - ``allowed_schemes``: URL schemes ``navigate`` accepts besides http(s), about:blank and data:
      (add ``"file"`` to allow local files; ``OCNB_ALLOW_FILE_URLS=1`` does the same).
    - ``upload_root``: ``file_upload`` takes only files under this folder (default: working directory).
    - ``dialog_policy``: ``accept`` (alert/confirm accepted, prompt answered with its default) or ``dismiss``.
    - ``handoff``: when true, a target that cannot be resolved returns ``NEEDS_HUMAN`` with a payload.
    """

    headless: bool = True
    default_timeout_ms: int = 30_000
    allow_javascript: bool = field(default_factory=lambda: _env_flag("OCNB_JAVASCRIPT", True))
    allowed_schemes: tuple[str, ...] = field(
        default_factory=lambda: ("file",) if _env_flag("OCNB_ALLOW_FILE_URLS", False) else ()
    )
    upload_root: Path = field(default_factory=Path.cwd)
    dialog_policy: str = "accept"
    handoff: bool = False
    viewport: tuple[int, int] = (1280, 800)
    skill_replay: bool = field(default_factory=lambda: _env_flag("OCNB_SKILL_REPLAY", True))
