"""A seam of STYLE.md, read from the source of ``ocnb/``: a private name (``_name``) is used only in
the module that defines it — no ``from .x import _name`` across modules (a shared helper lives in a
module of its own, under a public name). Where Playwright's errors are translated is checked in
``test_architecture.py`` (``TRANSLATIONS_ALLOWED``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from .test_architecture import module_files

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ocnb"

#: (importer, module, name) of the private imports kept, each with the reason.
PRIVATE_IMPORTS_ALLOWED: set[tuple[str, str, str]] = set()


def private_imports(name: str, source: str, modules: dict[str, Path]) -> list[tuple[str, str, int]]:
    """``(module, name, line)`` of every private name module ``name`` imports from another module.

    A private module (``from . import _compat``) is not a private helper: it is the package's own.
    """
    is_package = modules.get(name, Path()).name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            if private and f"{base}.{alias.name}" not in modules and base != name:
                out.append((base, alias.name, node.lineno))
    return out


def test_the_scan_finds_a_private_import() -> None:
    """The scanner itself: relative and absolute private imports are found, a private module is not."""
    modules = {"ocnb.tools.forms": Path("forms.py"), "ocnb.tools.interact": Path("interact.py"), "ocnb._compat": Path()}
    source = (
        "from .interact import _Watch, interact\nfrom ocnb.tools.interact import _timeout\nfrom .. import _compat\n"
    )
    assert private_imports("ocnb.tools.forms", source, modules) == [
        ("ocnb.tools.interact", "_Watch", 1),
        ("ocnb.tools.interact", "_timeout", 2),
    ]


def test_no_private_name_is_imported_across_modules() -> None:
    modules = module_files()
    found = set()
    where = []
    for name, path in modules.items():
        for module, private, line in private_imports(name, path.read_text(encoding="utf-8"), modules):
            found.add((name, module, private))
            if (name, module, private) not in PRIVATE_IMPORTS_ALLOWED:
                where.append(f"{path.relative_to(ROOT)}:{line}: {private} from {module}")
    assert not where, "private names imported from another module (make them public in a module of their own):\n" + (
        "\n".join(where)
    )
    assert found >= PRIVATE_IMPORTS_ALLOWED, (
        f"no longer needed, drop from the allow-list: {PRIVATE_IMPORTS_ALLOWED - found}"
    )
