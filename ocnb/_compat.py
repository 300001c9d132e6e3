"""The import paths modules had before the package layout of issue 35, kept working.

``import ocnb.demosite``, ``from ocnb.pool import Pool``, ``python -m ocnb.capmap`` … still work: a
finder on ``sys.meta_path`` answers each old name with the module that now holds it (the same module
object, so ``ocnb.demosite is ocnb.commands.demosite``). The table is the list of moves; CHANGELOG.md
says the same.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import CodeType, ModuleType

__all__ = ["MOVED", "install"]

#: Old module name → the module that holds it now.
MOVED: dict[str, str] = {
    "ocnb.storage": "ocnb.files",
    "ocnb.workflow": "ocnb.contracts.taskguard",
    "ocnb.telemetry": "ocnb.audit.telemetry",
    "ocnb.runtime": "ocnb.browser.runtime",
    "ocnb.browser_setup": "ocnb.browser.setup",
    "ocnb.remote": "ocnb.browser.remote",
    "ocnb.downloads": "ocnb.browser.download_store",
    "ocnb.logins": "ocnb.browser.saved_logins",
    "ocnb.pool": "ocnb.batch.pool",
    "ocnb.replay_pool": "ocnb.batch.runner",
    "ocnb.ledger": "ocnb.batch.ledger",
    "ocnb.dask": "ocnb.batch.dask",
    "ocnb.cli": "ocnb.commands",
    "ocnb.demo": "ocnb.commands.demo",
    "ocnb.demosite": "ocnb.commands.demosite",
    "ocnb.notebooks": "ocnb.commands.notebooks",
    "ocnb.token_report": "ocnb.commands.token_report",
    "ocnb.capmap": "ocnb.commands.capmap",
    "ocnb.widgets.calls": "ocnb.widgets.caller",
}


class _MovedLoader(importlib.abc.Loader):
    """Loads an old name as the module that holds it now (and runs it for ``python -m OLD``)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.own_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported under its own name. The import system has just set
        its ``__spec__`` to the old name's spec; put its own back, or ``__spec__.parent`` (``ocnb``)
        would no longer match ``__package__`` (``ocnb.commands``) and every later relative import in it
        would warn and resolve against the wrong package."""
        module.__spec__ = self.own_spec

    def get_code(self, fullname: str) -> CodeType:
        """For ``python -m OLD``: code that runs the new module as ``__main__``."""
        return compile(
            f"import runpy; runpy.run_module({self.target!r}, run_name='__main__', alter_sys=True)", fullname, "exec"
        )


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
