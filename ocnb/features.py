"""Optional layers that plug into a session's pipeline (audit, secrets, guards …).

Each layer is installed here, in one place, so the order of hooks is explicit:
before-hooks: secrets in → signature guards; after-hooks: secrets out → journal → trace.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .session import Session

__all__ = ["install"]


def install(session: Session, *, secrets: str | os.PathLike[str] | None = None) -> None:
    """Attach every available layer's hooks to ``session.pipeline``."""
    session._on_close = []  # type: ignore[attr-defined]
    from .skills.capture import capture_hook
    from .workflow import guard_after_hook, guard_before_hook

    session.task = None  # type: ignore[attr-defined]  # a bound task signature (oc_task_start)
    session.pipeline.before.append(guard_before_hook)
    session.pipeline.after.append(guard_after_hook)
    session.pipeline.after.append(capture_hook)
