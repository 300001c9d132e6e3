"""Logins that persist: storage-state files (cookies, localStorage, IndexedDB) under ``OCNB_HOME/state``.

A state file holds live credentials, so it is treated as a secret: it is written ``0600`` in a ``0700``
folder, and its content never reaches a result, the journal or the trace — callers report only
:func:`summary` (the path and how many cookies and origins it holds).

Where a state file may be (:func:`state_path`):

- a bare name (``"github"``, ``"github.json"``) is ``OCNB_HOME/state/<name>.json``;
- a path (``./auth.json``, ``/abs/auth.json``; relative to the working directory) is read only when it
  resolves, symlinks followed, under ``OCNB_HOME/state`` or the upload root (``Settings.upload_root``,
  where ``file_upload`` reads too: e.g. a file saved by ``playwright codegen --save-storage``), and
  written only under ``OCNB_HOME/state`` — a secret is never written into a project folder.

Anything else is ``FILE_NOT_ALLOWED`` before a file is touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ..errors import FileNotAllowed, InvalidArgument
from ..files import atomic_write_text
from ..settings import Settings

__all__ = ["STATE_DIR", "load_state", "restore_state", "save_state", "state_dir", "state_path", "summary"]

#: The folder under ``OCNB_HOME`` that holds saved logins.
STATE_DIR = "state"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def state_dir(settings: Settings) -> Path:
    """``OCNB_HOME/state`` (not created here)."""
    return settings.home_path / STATE_DIR


def state_path(value: str | os.PathLike[str], settings: Settings, *, write: bool = False) -> Path:
    """The state file ``value`` names, checked against the allowed folders (see the module docstring).

    Raises ``FILE_NOT_ALLOWED`` for a path outside them and ``INVALID_ARGUMENT`` for a bad name;
    touches no file.
    """
    raw = os.fspath(value).strip()
    if not raw:
        raise InvalidArgument("a storage state needs a name or a path")
    home_state = state_dir(settings).expanduser().resolve()
    if os.sep not in raw and "/" not in raw and not raw.startswith(("~", ".")):
        if not _NAME.fullmatch(raw) or ".." in raw:
            raise InvalidArgument(
                f"{raw!r} is not a state name: use letters, digits, '.', '_' and '-'", details={"path": raw}
            )
        return home_state / (raw if raw.endswith(".json") else f"{raw}.json")
    real = Path(raw).expanduser().resolve()
    roots = [home_state] if write else [home_state, Path(settings.upload_root).expanduser().resolve()]
    if not any(real.is_relative_to(r) for r in roots):
        where = "OCNB_HOME/state" if write else "OCNB_HOME/state or the upload root"
        raise FileNotAllowed(
            f"{raw} resolves to {real}, outside {where}; a state file holds logins and stays there",
            details={"path": raw, "allowed": [str(r) for r in roots]},
        )
    return real


def summary(path: Path, state: dict[str, Any]) -> dict[str, Any]:
    """What may be said about a state: its path and counts, never a cookie or a stored value."""
    origins = state.get("origins") or []
    return {
        "path": str(path),
        "cookies": len(state.get("cookies") or []),
        "origins": len(origins),
        "indexed_db": sum(1 for o in origins if o.get("indexedDB")),
    }


def load_state(path: Path) -> dict[str, Any]:
    """Read a state file: ``INVALID_ARGUMENT`` when it is missing or not a state.

    The error never quotes the file's content.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidArgument(f"no storage state at {path}; save one with storage_state(action='save')") from None
    except OSError as exc:
        raise InvalidArgument(f"cannot read {path}: {exc.strerror}") from None
    try:
        state = json.loads(text)
    except ValueError:
        state = None
    if not isinstance(state, dict) or not isinstance(state.get("cookies", []), list):
        raise InvalidArgument(f"{path} is not a storage state (a JSON object with cookies and origins)")
    state.setdefault("cookies", [])
    state.setdefault("origins", [])
    return state


async def save_state(context: Any, path: Path) -> dict[str, Any]:
    """Save ``context``'s cookies, localStorage and IndexedDB to ``path`` (0600); returns the state."""
    state: dict[str, Any] = await context.storage_state(indexed_db=True)
    atomic_write_text(path, json.dumps(state, indent=1))
    return state


async def restore_state(context: Any, state: dict[str, Any]) -> None:
    """Load ``state`` into the running ``context``: its cookies replace the context's, and each of its
    origins gets exactly its localStorage and IndexedDB.

    Playwright restores an origin's IndexedDB by deleting every database there first; a page of the
    context that holds a database open (most apps that use one) blocks that delete, and the load then
    waited ~30 s before it went on (Chromium 156, a page that never closes its connection). So the
    origins' IndexedDB is cleared over DevTools first, which closes such connections at once (the page
    sees its database closed, as it would have it deleted): the load is then immediate."""
    origins = [str(o.get("origin")) for o in state.get("origins") or [] if isinstance(o, dict) and o.get("origin")]
    pages = list(context.pages)
    if origins and pages:
        with contextlib.suppress(Exception):  # not Chromium, or the page closed: Playwright's own way, slower
            cdp = await context.new_cdp_session(pages[0])  # any page: the context's storage is one
            try:
                for origin in origins:
                    await cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "indexeddb"})
            finally:
                await cdp.detach()
    await context.set_storage_state(state)
