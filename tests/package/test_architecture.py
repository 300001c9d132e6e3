"""The import rule of docs/architecture.md, checked on the import graph of ``ocnb/`` read from the source.

Every ``import`` and ``from … import`` in every module counts — at module level, inside functions and
under ``TYPE_CHECKING`` alike — and so does ``importlib.import_module("ocnb.…")`` with a literal name.
Relative imports are resolved; ``from pkg import name`` is an edge to ``pkg.name`` when that is a
module, else to ``pkg`` (so ``from ocnb import Session`` is an edge to ``ocnb/__init__``).

Two rules: the graph has no cycle, and every edge goes to the importer's own layer or a lower one.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ocnb"

#: The layers, lowest first. A module may import modules of its own layer or of a lower one. A name
#: stands for the module and, for a package, everything under it. docs/architecture.md explains them.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "ocnb._version",
            "ocnb._extras",
            "ocnb._compat",
            "ocnb._tool_methods",
            "ocnb.errors",
            "ocnb.jsonsafe",
            "ocnb.results",
            "ocnb.display",
            "ocnb.files",
            "ocnb.urls",
            "ocnb.origins",
            "ocnb.tokens",
            "ocnb.settings",
            "ocnb.placeholders",
            "ocnb.origins",
        ),
    ),
    ("calls", ("ocnb.registry", "ocnb.calls")),
    (
        "engine",
        (
            "ocnb.browser",
            "ocnb.dispatch",
            "ocnb.perception",
            "ocnb.audit",
            "ocnb.contracts",
            "ocnb.skills",
            "ocnb.discovery",
        ),
    ),
    ("tools", ("ocnb.tools",)),
    ("session", ("ocnb.session",)),
    (
        "faces",
        (
            "ocnb",
            "ocnb.magics",
            "ocnb.notebook",
            "ocnb.widgets",
            "ocnb.mcp",
            "ocnb.batch",
            "ocnb.commands",
        ),
    ),
]

#: At most this many public modules (and packages) at the top level of ``ocnb/``: the rest live in
#: packages named for what they hold (docs/architecture.md).
TOP_LEVEL_MAX = 16


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``path:line``."""

    source: str
    target: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}  ({self.path}:{self.line})"


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(node: ast.AST, package: str, modules: dict[str, Path]) -> list[str]:
    """The modules one AST node imports (names outside the package are kept; the caller drops them)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        return [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


def import_edges() -> list[Edge]:
    """Every import of one ``ocnb`` module by another, one edge per place it is written."""
    modules = module_files()
    edges = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for target in _imported(node, package, modules):
                if target in modules and target != name:
                    edges.append(Edge(name, target, str(path.relative_to(ROOT)), getattr(node, "lineno", 0)))
    return edges


def import_graph(edges: list[Edge] | None = None) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(module_files())
    for e in import_edges() if edges is None else edges:
        graph.add_edge(e.source, e.target)
    return graph


def layer_of(module: str) -> int | None:
    """The index in :data:`LAYERS` of the most specific name covering ``module`` (``ocnb`` covers only itself)."""
    best: tuple[int, int] | None = None  # (length of the matching name, layer)
    for index, (_, names) in enumerate(LAYERS):
        for n in names:
            covers = module == n or (n != "ocnb" and module.startswith(n + "."))
            if covers and (best is None or len(n) > best[0]):
                best = (len(n), index)
    return None if best is None else best[1]


def _where(edges: list[Edge], source: str, target: str) -> str:
    return next(str(e) for e in edges if (e.source, e.target) == (source, target))


def test_the_graph_sees_the_package() -> None:
    """A sanity check on the reader itself: known edges of each kind are found."""
    pairs = {(e.source, e.target) for e in import_edges()}
    assert ("ocnb", "ocnb.session") in pairs  # from .session import Session
    assert ("ocnb.mcp.http", "ocnb.session") in pairs  # inside a function: from ..session import session
    assert ("ocnb.session", "ocnb.browser.runtime") in pairs  # plain relative import
    assert ("ocnb.discovery.assembler", "ocnb.tokens") in pairs  # from ocnb import tokens (a module)
    assert ("ocnb.audit.telemetry", "ocnb.audit.journal") in pairs  # absolute import


def test_no_import_cycles() -> None:
    edges = import_edges()
    graph = import_graph(edges)
    cycles = []
    for component in sorted(nx.strongly_connected_components(graph), key=len, reverse=True):
        if len(component) < 2:
            continue
        cycle = nx.find_cycle(graph.subgraph(component))
        steps = "\n".join(f"    {_where(edges, a, b)}" for a, b in cycle)
        cycles.append(f"{len(component)} modules: {', '.join(sorted(component))}\n  one cycle:\n{steps}")
    assert not cycles, "import cycles in ocnb/:\n" + "\n".join(cycles)


def test_every_module_has_a_layer() -> None:
    missing = [m for m in module_files() if layer_of(m) is None]
    assert not missing, f"add these modules to LAYERS (and to docs/architecture.md): {missing}"


def test_imports_go_down_the_layers() -> None:
    wrong = []
    for e in import_edges():
        src, dst = layer_of(e.source), layer_of(e.target)
        if src is None or dst is None or dst <= src:
            continue
        wrong.append(f"  {e}: {LAYERS[src][0]} may not import {LAYERS[dst][0]}")
    assert not wrong, "imports against the layers of docs/architecture.md:\n" + "\n".join(wrong)


def test_nothing_inside_imports_the_package_namespace() -> None:
    """``from ocnb import Session`` inside ocnb needs ``ocnb/__init__`` done first: import the defining module."""
    wrong = [str(e) for e in import_edges() if e.target == "ocnb"]
    assert not wrong, "import the module that defines the name instead:\n" + "\n".join(wrong)


def test_every_tool_lives_in_the_module_named_for_its_category() -> None:
    """``ocnb/tools/<category>.py``: a tool's code is found from its category."""
    from ocnb.registry import all_tooldefs

    ours = [t for t in all_tooldefs() if t.handler.__module__.startswith("ocnb.")]
    assert ours
    wrong = [
        f"{t.name}: category {t.category!r}, declared in {t.handler.__module__}"
        for t in ours
        if t.handler.__module__ != f"ocnb.tools.{t.category}"
    ]
    assert not wrong, wrong


def test_the_registry_names_no_tool_module() -> None:
    """Tools reach the registry through the catalogue the package hands it, not by the registry importing them."""
    wrong = [str(e) for e in import_edges() if e.source == "ocnb.registry" and e.target.startswith("ocnb.tools")]
    assert not wrong, wrong


def test_the_catalogue_lists_every_tool_module() -> None:
    from ocnb.tools import CATALOGUE, SHARED

    listed = sorted(m.__name__ for m in CATALOGUE)
    on_disk = sorted(
        f"ocnb.tools.{p.stem}" for p in (PACKAGE / "tools").glob("*.py") if p.stem not in ("__init__", *SHARED)
    )
    assert listed == on_disk


def test_docs_architecture_lists_the_same_layers() -> None:
    """The table in docs/architecture.md is this file's LAYERS: same layers, same modules."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    documented = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1] in {name for name, _ in LAYERS}:
            documented[cells[1]] = {m.rstrip("/") for m in re.findall(r"`([a-z_][a-z0-9_]*/?)`", cells[2])}
    expected = {name: {"ocnb" if m == "ocnb" else m.removeprefix("ocnb.") for m in mods} for name, mods in LAYERS}
    assert documented == expected


def test_the_top_level_is_small() -> None:
    """A newcomer finds a concept from the package names: few public modules sit at the top (the
    rest live in the packages, the rooms: browser/, batch/, commands/ …)."""
    public = sorted(p.stem for p in PACKAGE.glob("*.py") if not p.name.startswith("_"))
    assert len(public) <= TOP_LEVEL_MAX, f"{len(public)} public top-level modules: {public}"


def test_top_level_modules_have_no_twins_below() -> None:
    """No top-level module shares its name with a module in a package (``storage.py`` — atomic files —
    beside ``tools/storage.py`` — cookies — was one): the name says which one a reader opens."""
    top = {p.stem for p in PACKAGE.glob("*.py") if not p.name.startswith("_")}
    twins = sorted(name for name, path in module_files().items() if path.parent != PACKAGE and path.stem in top)
    assert not twins, f"modules named like a top-level module: {twins}"


def test_old_import_paths_still_work() -> None:
    """Modules moved by the layout of issue 35 are still importable by their old names."""
    import importlib

    import ocnb
    from ocnb._compat import MOVED

    for old, new in MOVED.items():
        assert importlib.import_module(old) is importlib.import_module(new), old
        # the module keeps its own spec: later relative imports in it resolve in its own package
        assert importlib.import_module(new).__spec__.name == new, old
    from ocnb.batch import UNKNOWN_OUTCOME  # the old row module's names, from the package

    assert UNKNOWN_OUTCOME and ocnb.demosite.serve is ocnb.commands.demosite.serve


#: The objects of Playwright a module drives when it calls a method on them.
PLAYWRIGHT_OBJECTS = frozenset({"page", "locator", "element", "frame", "keyboard", "mouse", "handle", "context"})
#: Who may call ``from_playwright`` (errors.py's one translation of Playwright's errors) and how often,
#: each with why. Everywhere else a Playwright error propagates to dispatch, which translates it, or the
#: code raises the ocnb error it means (a tool adding context raises ``errors.InContext``).
TRANSLATIONS_ALLOWED = {
    # the seam: every handler's failure (_translated), and a hook's or the pipeline's own
    "ocnb/dispatch.py": 2,
    # the in-page script's calls: their engine callers (selector chains skip a frame that went away,
    # the extract pager retries) decide by the code before any tool or dispatch sees the error
    "ocnb/perception/refs.py": 3,
    # navigate/page_reload/tabs_create turn INTERNAL, NAVIGATION_FAILED and TARGET_NAVIGATED_AWAY into a
    # NAVIGATION_FAILED naming the URL; wait_for says which condition a TIMEOUT missed and calls a bad
    # selector (INVALID_ARGUMENT) a bad selector
    "ocnb/tools/navigation.py": 2,
    # javascript_tool reports what would be INTERNAL (the page's own exception) as SCRIPT_ERROR
    "ocnb/tools/js.py": 1,
}
#: At most this many modules besides dispatch's seam translate Playwright's errors themselves.
TRANSLATING_MODULES_MAX = 3
#: Packages that act only by dispatching tool calls (docs/architecture.md): never on Playwright itself.
DISPATCH_ONLY = ("skills", "batch")
#: Modules there that touch a page without acting on it, each with why.
WATCH_ONLY = {
    # the demonstration recorder installs its in-page listener script in each frame and reads what a
    # person does; it never clicks, fills or navigates (a move to perception/ would be cleaner)
    "ocnb/skills/demonstration.py",
}


def _receiver_names(node: ast.AST) -> set[str]:
    """The name of a call's receiver, through calls made on the way: ``self.page`` → {page},
    ``p.locator("#x")`` → {locator}, ``tab.page.url`` → {url} (a string's method is no Playwright call)."""
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return {node.attr}
    return {node.id} if isinstance(node, ast.Name) else set()


def playwright_calls(path: Path) -> list[str]:
    """Where ``path`` calls a Playwright object's method (``page.goto(…)``, ``self.page.locator(…)``,
    ``element.click(…)`` …) or names ``from_playwright``: ``line: text`` for each."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        hit = False
        if isinstance(node, ast.Name | ast.alias) and "from_playwright" in (
            getattr(node, "id", None),
            getattr(node, "name", None),
        ):
            hit = True
        elif isinstance(node, ast.Attribute) and node.attr == "from_playwright":
            hit = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            hit = bool(_receiver_names(node.func.value) & PLAYWRIGHT_OBJECTS)
        if hit:
            out.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {ast.unparse(node)[:80]}")
    return out


def test_skills_and_batch_act_only_through_dispatch() -> None:
    """A replay, a plan's step or a batch row acts by dispatching tool calls, so every rule of the pipeline
    (secrets, origin policy, approvals, dialogs, error codes, journal, trace) applies to it by construction."""
    paths = [p for pkg in DISPATCH_ONLY for p in sorted((PACKAGE / pkg).rglob("*.py"))]
    found = [hit for p in paths if str(p.relative_to(ROOT)) not in WATCH_ONLY for hit in playwright_calls(p)]
    assert all((ROOT / w).exists() for w in WATCH_ONLY), "drop a module that is gone from WATCH_ONLY"
    assert not found, "act through ToolContext.dispatch / dispatch instead:\n" + "\n".join(found)


def test_the_check_sees_a_direct_call(tmp_path: Path) -> None:
    """The check above is not vacuous: a module that drives the page itself is caught."""
    bad = ROOT / "ocnb" / "skills" / "_probe_not_a_module.py"
    try:
        bad.write_text(
            "from ..errors import from_playwright\n\nasync def act(page, ctx):\n"
            "    await ctx.page_obj.locator('#x').click()\n    await page.goto('about:blank')\n",
            encoding="utf-8",
        )
        hits = playwright_calls(bad)
    finally:
        bad.unlink()
    assert len(hits) == 3, hits  # the import, locator(…).click(), page.goto(…)


def _translation_calls() -> dict[str, int]:
    """How many times each module of ``ocnb/`` (errors.py aside) calls ``from_playwright``."""
    counts: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel == "ocnb/errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called == "from_playwright":
                    counts[rel] = counts.get(rel, 0) + 1
    return counts


def test_playwright_errors_are_translated_in_few_places() -> None:
    """Each call of ``from_playwright`` outside dispatch is a place that decides by the code (see
    :data:`TRANSLATIONS_ALLOWED`); a new ``try/except Exception: raise from_playwright(...)`` around a
    Playwright call is what dispatch already does for every handler."""
    assert _translation_calls() == TRANSLATIONS_ALLOWED
    assert len(set(TRANSLATIONS_ALLOWED) - {"ocnb/dispatch.py"}) <= TRANSLATING_MODULES_MAX


#: A C901 waiver (noqa) on a function's ``def`` line keeps it above ruff's max-complexity (pyproject.toml);
#: its docstring must then have a line that says why, naming its complexity.
_COMPLEXITY_REASON = re.compile(r"\bcomplexity\b.*\S", re.IGNORECASE)


def complexity_waivers_without_reason(path: Path) -> list[str]:
    """Each ``# noqa: C901`` in ``path`` that is not on a function's ``def`` line, or whose function's
    docstring has no line about its complexity: ``file:line: name``."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    waived = {n for n, text in enumerate(lines, 1) if re.search(r"#\s*noqa:[^#]*\bC901\b", text)}
    if not waived:
        return []
    out = []
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno in waived:
            waived.discard(node.lineno)
            doc = ast.get_docstring(node) or ""
            if not any(_COMPLEXITY_REASON.search(line) for line in doc.splitlines()):
                out.append(f"{path}:{node.lineno}: {node.name} (no docstring line says why its complexity stays)")
    out += [f"{path}:{n}: not on a def line" for n in sorted(waived)]
    return out


def test_every_complexity_waiver_says_why() -> None:
    """No function in ocnb/ above complexity 20 (ruff C901) unless its docstring says why."""
    found = [hit for p in sorted(PACKAGE.rglob("*.py")) for hit in complexity_waivers_without_reason(p)]
    assert not found, "\n".join(found)


def test_the_waiver_check_sees_a_missing_reason(tmp_path: Path) -> None:
    """The check above is not vacuous: a waiver without its reason, or away from a def, is caught."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def a():  # noqa: C901\n"
        '    """Many branches."""\n\n\n'
        "def b():  # noqa: C901\n"
        '    """Reads one table.\n\n    Its complexity stays: one branch per column type, read in order."""\n\n\n'
        "x = 1  # noqa: C901\n",
        encoding="utf-8",
    )
    hits = complexity_waivers_without_reason(probe)
    assert [h.split(": ", 1)[0].rsplit(":", 1)[1] for h in hits] == ["1", "11"], hits
