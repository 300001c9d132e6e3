"""Where ocnb keeps its files (``OCNB_HOME``) and how it writes them safely.

Writes are atomic (temp file in the same folder, fsync, ``os.replace``); read-modify-write goes under
an inter-process lock (:func:`file_lock`), so a kernel, an MCP client and a second process writing at
once lose nothing. A corrupt JSON file raises :class:`CorruptFile` and is never overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from .errors import OcnbError

__all__ = [
    "CorruptFile",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "file_lock",
    "ocnb_home",
    "read_json",
]


class CorruptFile(OcnbError):
    """A stored file exists but cannot be parsed; it is left untouched."""

    code = "INTERNAL"


def ocnb_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The storage root: ``home`` if given, else ``$OCNB_HOME``, else ``~/.ocnb``."""
    if home is not None:
        return Path(home).expanduser()
    env = os.environ.get("OCNB_HOME")
    return Path(env).expanduser() if env else Path.home() / ".ocnb"


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: readers see the old file or the new one, never half."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Atomically write UTF-8 text with LF line endings as given."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Atomically write ``obj`` as stable, human-diffable JSON (sorted keys, 2-space indent, newline)."""
    return atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def read_json(path: str | os.PathLike[str], default: Any = None) -> Any:
    """Read a JSON file; ``default`` when missing; :class:`CorruptFile` when unparsable."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFile(f"{p} is not valid JSON ({exc}); fix or move it — ocnb will not overwrite it") from None


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str], timeout: float = 30.0) -> Iterator[None]:
    """Hold an inter-process lock named after ``path`` (``<path>.lock``) for a read-modify-write."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(p) + ".lock", timeout=timeout):
        yield
