"""Where ocnb keeps its files (``OCNB_HOME``) and how it writes them safely.

Writes are atomic (temp file in the same folder, fsync, ``os.replace``); read-modify-write goes under
an inter-process lock (:func:`file_lock`), so a kernel, an MCP client and a second process writing at
once lose nothing. A corrupt JSON file raises :class:`~ocnb.errors.CorruptFile` (``CORRUPT_FILE``,
naming the file) and is never overwritten. A writer killed between creating its temp file and the
rename leaves ``.<name>.<random>.tmp`` behind; the next write of the same file removes it (at once
when the caller holds the file's lock, else once it is older than :data:`STALE_TEMP_S`).

Everything ocnb writes is private to the user: files are created ``0600`` (:data:`PRIVATE_FILE`) and
folders ``0700`` (:data:`PRIVATE_DIR`), whatever the umask. Every writer goes through this module —
:func:`atomic_write_bytes` and its siblings, :func:`open_append` for the journal and the trace,
:func:`private_dir` for a folder of its own — so there is one place where modes are decided.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from .errors import CorruptFile, FileNotAllowed, InvalidArgument

__all__ = [
    "allowed_files",
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "STALE_TEMP_S",
    "CorruptFile",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "clean_stale_temps",
    "file_lock",
    "ocnb_home",
    "open_append",
    "private_dir",
    "read_json",
]


#: A temp file of a write older than this (seconds) is a leftover of a killed writer, not a live one.
STALE_TEMP_S = 600.0
#: The mode of every file ocnb creates: read and write for the user only.
PRIVATE_FILE = 0o600
#: The mode of every folder ocnb creates: the user only.
PRIVATE_DIR = 0o700


def private_dir(path: str | os.PathLike[str], *, tighten: bool = False) -> Path:
    """Make the folder ``path`` and its missing parents, each ``0700``; return it.

    ``tighten=True`` also takes group and other permissions off ``path`` itself when it exists
    (a folder an older version of ocnb created ``0755``), if it belongs to this user.
    """
    target = Path(path)
    missing: list[Path] = []
    p = target
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # made by another writer meanwhile
            continue
        with contextlib.suppress(OSError):
            os.chmod(folder, PRIVATE_DIR)  # the umask may have taken bits off, never added any
    if not target.is_dir():
        target.mkdir(parents=True, exist_ok=True)  # raises the clear error (a file in the way …)
    if tighten and not missing:
        _tighten(target, PRIVATE_DIR)
    return target


def _tighten(path: Path, mode: int, fd: int | None = None) -> None:
    """Set ``mode`` on a file or folder of this user that grants group or other anything."""
    with contextlib.suppress(OSError):
        st = os.fstat(fd) if fd is not None else path.stat()
        if st.st_mode & 0o077 and (not hasattr(os, "getuid") or st.st_uid == os.getuid()):
            if fd is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            else:
                os.chmod(path, mode)


def open_append(path: str | os.PathLike[str]) -> int:
    """Open ``path`` for appending whole lines (``O_APPEND``), created ``0600``; returns the fd.

    A file an older version created ``0644`` is made ``0600`` when opened.
    """
    target = Path(path)
    private_dir(target.parent)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
    fd = os.open(target, flags, PRIVATE_FILE)
    _tighten(target, PRIVATE_FILE, fd)
    return fd


def ocnb_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The storage root: ``home`` if given, else ``$OCNB_HOME``, else ``~/.ocnb``."""
    if home is not None:
        return Path(home).expanduser()
    from .settings import Settings

    return Settings.from_env().home_path


def clean_stale_temps(path: str | os.PathLike[str], older_than_s: float = STALE_TEMP_S) -> list[Path]:
    """Remove the temp files that killed writers of ``path`` left behind; returns the ones removed.

    Only names :func:`atomic_write_bytes` itself creates (``.<name>.<8 random>.tmp``) are touched.
    Pass ``older_than_s=0`` only while holding ``path``'s :func:`file_lock`: then no live writer can
    own one.
    """
    target = Path(path)
    pattern = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")
    removed: list[Path] = []
    try:
        candidates = list(target.parent.iterdir())
    except OSError:
        return removed
    now = time.time()
    for tmp in candidates:
        if not pattern.fullmatch(tmp.name):
            continue
        try:
            if older_than_s > 0 and now - tmp.stat().st_mtime < older_than_s:
                continue
            tmp.unlink()
        except OSError:  # gone already, or not ours to remove
            continue
        removed.append(tmp)
    return removed


def atomic_write_bytes(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = True, locked: bool = False
) -> Path:
    """Write ``data`` to ``path`` atomically: readers see the old file or the new one, never half.

    ``overwrite=False`` refuses (``FileExistsError``) when ``path`` exists, atomically where the file
    system has hard links. ``locked=True`` says the caller holds ``path``'s :func:`file_lock`, so every
    leftover temp file of ``path`` is removed, not only stale ones.
    """
    target = Path(path)
    private_dir(target.parent)
    clean_stale_temps(target, 0 if locked else STALE_TEMP_S)
    if not overwrite and target.exists():
        raise FileExistsError(str(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, target)
        else:
            _place_new(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return target


def _place_new(tmp: str, target: Path) -> None:
    """Move ``tmp`` to ``target`` only if ``target`` does not exist (a hard link fails if it does)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network or FAT file systems): check, then rename
        if target.exists():
            raise FileExistsError(str(target)) from None
        os.replace(tmp, target)
        return
    os.unlink(tmp)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, overwrite: bool = True, locked: bool = False) -> Path:
    """Atomically write UTF-8 text with LF line endings as given (see :func:`atomic_write_bytes`)."""
    return atomic_write_bytes(path, text.encode("utf-8"), overwrite=overwrite, locked=locked)


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, locked: bool = False) -> Path:
    """Atomically write ``obj`` as stable, human-diffable JSON (sorted keys, 2-space indent, newline)."""
    text = json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    return atomic_write_text(path, text, locked=locked)


def read_json(path: str | os.PathLike[str], default: Any = None) -> Any:
    """Read a JSON file; ``default`` when missing; :class:`CorruptFile` when unparsable."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    except UnicodeDecodeError as exc:
        raise CorruptFile(
            f"{p} is not UTF-8 text ({exc.reason}); fix or move it — ocnb will not overwrite it", file=p
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFile(
            f"{p} is not valid JSON ({exc}); fix or move it — ocnb will not overwrite it", file=p
        ) from None


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str], timeout: float = 30.0) -> Iterator[None]:
    """Hold an inter-process lock named after ``path`` (``<path>.lock``) for a read-modify-write."""
    p = Path(path)
    private_dir(p.parent)
    with FileLock(str(p) + ".lock", timeout=timeout, mode=PRIVATE_FILE):
        yield


def allowed_files(paths: list[str], root: Path) -> list[str]:
    """Files a page may be given (``file_upload``, a replayed upload step): ``paths`` resolved (relative
    ones against ``root``, symlinks followed); one outside ``root`` is ``FILE_NOT_ALLOWED``."""
    base = Path(root).expanduser().resolve()
    out = []
    for raw in paths:
        p = Path(raw).expanduser()
        p = (base / p) if not p.is_absolute() else p
        real = p.resolve()
        if not real.is_relative_to(base):
            raise FileNotAllowed(
                f"{raw} resolves to {real}, outside the upload root {base}",
                details={"path": str(raw), "upload_root": str(base)},
            )
        if not real.is_file():
            raise InvalidArgument(f"{raw} is not a file", details={"path": str(raw)})
        out.append(str(real))
    return out
