"""``CAPABILITY.yaml`` manifests: where they live, scanning, and hot reload.

Roots, highest priority first: ``OCNB_HOME/capabilities/``, ``./.ocnb/capabilities/``, then
each folder of ``OCNB_CAPABILITY_DIRS`` (``os.pathsep``-separated). One folder per capability.
When two folders declare the same id, the higher-priority root wins. An invalid manifest is
skipped with a warning naming the file and the problem; it never stops a scan.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ocnb._extras import extra
from ocnb.discovery.descriptors import (
    MANIFEST_FILE,
    CapabilityDescriptor,
    ManifestError,
    ManifestWarning,
    from_manifest,
)
from ocnb.files import ocnb_home, private_dir
from ocnb.settings import Settings

__all__ = ["ManifestSet", "ManifestWarning", "ManifestWatcher", "manifest_roots"]

log = logging.getLogger(__name__)


def manifest_roots(
    home: str | os.PathLike[str] | None = None, extra_dirs: Iterable[str | os.PathLike[str]] | None = None
) -> list[Path]:
    """The manifest roots in priority order (existing or not): ``home``'s (default OCNB_HOME), the
    working directory's, then ``extra_dirs`` (default ``Settings.capability_dirs``: OCNB_CAPABILITY_DIRS)."""
    roots = [ocnb_home(home) / "capabilities", Path.cwd() / ".ocnb" / "capabilities"]
    extra = Settings.from_env().capability_dirs if extra_dirs is None else extra_dirs
    roots += [Path(p) for p in extra]
    return roots


def _load(folder: Path) -> CapabilityDescriptor | None:
    try:
        return from_manifest(folder)
    except (ManifestError, UnicodeDecodeError) as exc:
        msg = f"skipped capability manifest {folder / MANIFEST_FILE}: {exc}"
        warnings.warn(msg, ManifestWarning, stacklevel=3)
        return None


class ManifestSet:
    """Parsed manifests of a list of roots, re-parsing only the folders that change."""

    def __init__(self, roots: Sequence[str | Path] | None = None) -> None:
        self.roots = [Path(r) for r in (manifest_roots() if roots is None else roots)]
        self._parsed: dict[Path, CapabilityDescriptor | None] = {}

    def scan(self) -> dict[str, CapabilityDescriptor]:
        """Parse every capability folder of every root; return the merged view."""
        self._parsed = {}
        for root in self.roots:
            if root.is_dir():
                for folder in sorted(p for p in root.iterdir() if (p / MANIFEST_FILE).is_file()):
                    self._parsed[folder] = _load(folder)
        return self.descriptors()

    def folder_of(self, path: str | Path) -> Path | None:
        """The capability folder (a direct child of a root) that ``path`` lies in."""
        path = Path(path)
        for root in self.roots:
            try:
                rel = path.relative_to(root)
            except ValueError:
                continue
            if rel.parts:
                return root / rel.parts[0]
        return None

    def reload(self, folders: Iterable[Path]) -> dict[str, CapabilityDescriptor]:
        """Re-parse only ``folders`` (gone folders are dropped); return the merged view."""
        for folder in sorted(set(folders)):
            if (folder / MANIFEST_FILE).is_file():
                self._parsed[folder] = _load(folder)
            else:
                self._parsed.pop(folder, None)
        return self.descriptors()

    def descriptors(self) -> dict[str, CapabilityDescriptor]:
        """id → descriptor, the higher-priority root winning a shared id."""
        out: dict[str, CapabilityDescriptor] = {}
        rank = {root: i for i, root in enumerate(self.roots)}
        for folder in sorted(self._parsed, key=lambda f: (rank.get(f.parent, len(rank)), f)):
            d = self._parsed[folder]
            if d is not None and d.id not in out:
                out[d.id] = d
        return out


class ManifestWatcher:
    """A daemon thread that watches the roots with watchfiles and calls ``on_change(folders)``
    with the changed capability folders, after ``debounce_ms`` of grouping."""

    def __init__(
        self,
        manifests: ManifestSet,
        on_change: Callable[[set[Path]], None],
        debounce_ms: int = 500,
    ) -> None:
        self.manifests = manifests
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    def start(self) -> None:
        """Start watching (roots that do not exist yet are created so they can be watched)."""
        if self._thread is not None:
            return
        with extra("discovery"):
            from watchfiles import watch
        self._watch = watch
        for root in self.manifests.roots:
            private_dir(root)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="ocnb-manifest-watch", daemon=True)
        self._thread.start()
        self._ready.wait(5)

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        roots = [str(r) for r in self.manifests.roots]
        gen = self._watch(
            *roots,
            debounce=self.debounce_ms,
            step=50,
            stop_event=self._stop,
            rust_timeout=200,
            yield_on_timeout=True,
        )
        for changes in gen:
            self._ready.set()  # the first (empty) yield means the watch is in place
            if not changes:
                continue
            folders = {f for _, path in changes if (f := self.manifests.folder_of(Path(path))) is not None}
            if folders:
                try:
                    self.on_change(folders)
                except Exception:  # a bad reload must not kill the watcher
                    log.exception("capability manifest reload failed")
