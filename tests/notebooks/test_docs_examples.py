"""Every example in README.md and docs/ runs as printed: Python blocks, IPython blocks, `%oc` lines in prose.

- ```` ```python ```` blocks run in one namespace per file, in order (``doc`` is the file's latest
  ```` ```json ```` block, for examples that say "the JSON above"). A block written as a doctest
  (``>>>``) is checked as one; a last expression followed by a ``# value`` comment must equal it.
- ```` ```ipython ```` blocks run cell by cell in a real IPython shell: each ``%oc`` line must
  succeed (``ok``), every other line must run without an error.
- `` `%oc ...` `` spans in the prose run in order in the same shell, against the demo site; the one
  rewrite is the placeholder URL ``https://…``, which becomes the demo site's sign-up form.
- ```` ```bash ```` and ```` ```json ```` blocks are not run here (the two make commands are CI
  itself; JSON is data); `tests/package/test_docs.py` checks the tool names they mention.

The only network an example may reach is the Anthropic API; it is replaced by a stand-in that
records the request and answers with a fixed reply.
"""

from __future__ import annotations

import ast
import doctest
import json
import re
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ocnb.commands.demosite import DemoSite
from tests.notebooks import magics_shell

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```", re.S | re.M)
INLINE_OC = re.compile(r"`(%oc [^`]+)`")
PLACEHOLDER_URL = "https://…"


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def blocks(path: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(path.read_text(encoding="utf-8"))]


def prose_magics(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    # `%oc TOOL ...` is the syntax, not an example.
    return [m.group(1) for m in INLINE_OC.finditer(text) if "TOOL" not in m.group(1) and "..." not in m.group(1)]


class _FakeAnthropic:
    """Stands in for ``anthropic.Anthropic``: records ``messages.create`` and answers with a fixed text."""

    requests: list[dict[str, Any]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.messages = types.SimpleNamespace(create=self._create)

    def _create(self, **kwargs: Any) -> Any:
        type(self).requests.append(kwargs)
        return types.SimpleNamespace(content=[types.SimpleNamespace(type="text", text="fill_form")])


@pytest.fixture
def no_anthropic_network(monkeypatch: pytest.MonkeyPatch) -> type[_FakeAnthropic]:
    anthropic = pytest.importorskip("anthropic")
    _FakeAnthropic.requests = []
    monkeypatch.setattr(anthropic, "Anthropic", _FakeAnthropic)
    return _FakeAnthropic


def _expected_value(block: str) -> tuple[str, str] | None:
    """A block ending in an expression and a ``# value`` comment: (expression source, value text)."""
    lines = block.rstrip().splitlines()
    if len(lines) < 2 or not lines[-1].startswith("# "):
        return None
    tree = ast.parse("\n".join(lines[:-1]))
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    return ast.get_source_segment("\n".join(lines[:-1]), tree.body[-1]) or "", lines[-1][2:]


def run_python_blocks(path: Path) -> int:
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    ran = 0
    for lang, body in blocks(path):
        if lang == "json":
            namespace["doc"] = json.loads(body)
        if lang != "python":
            continue
        ran += 1
        where = f"{_rel(path)} block {ran}"
        if body.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(body, namespace, where, str(path), 0)
            runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
            runner.run(test, out=lambda text, where=where: pytest.fail(f"{where}:\n{text}"))
            continue
        exec(compile(body, where, "exec"), namespace)
        expected = _expected_value(body)
        if expected:
            source, value = expected
            assert repr(eval(source, namespace)) == value, f"{where}: the comment's value"
    return ran


@pytest.mark.parametrize("path", [p for p in DOCS if any(lang == "python" for lang, _ in blocks(p))], ids=_rel)
def test_python_blocks_run_as_printed(
    path: Path, site: DemoSite, no_anthropic_network: type[_FakeAnthropic], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert run_python_blocks(path) >= 1
    for request in no_anthropic_network.requests:
        # The preamble an agent is given is the capability map a session of today offers.
        assert "\n# ocnb tools\n" in request["system"] and "- navigate(" in request["system"], request["system"][:200]


# ---------------------------------------------------------------------------------------------
# IPython: ```ipython blocks and `%oc` lines in prose


@pytest.fixture(scope="module")
def ip(module_home: Path) -> Iterator[Any]:
    with magics_shell(module_home) as shell:  # an MCP server a doc's prose starts is stopped after
        yield shell


def _cells(block: str) -> list[str]:
    """One cell per magic line; the Python between magic lines as one cell each."""
    cells: list[str] = []
    plain: list[str] = []
    for line in block.splitlines():
        if line.startswith("%"):
            if plain:
                cells.append("\n".join(plain))
                plain = []
            cells.append(line)
        else:
            plain.append(line)
    if plain:
        cells.append("\n".join(plain))
    return [c for c in cells if c.strip()]


def run_cell(shell: Any, cell: str, where: str) -> Any:
    result = shell.run_cell(cell, store_history=True)
    error = result.error_before_exec or result.error_in_exec
    assert error is None, f"{where}: {cell!r} raised {error!r}"
    value = result.result
    if cell.startswith("%oc ") and not cell.startswith(("%oc tools", "%oc help", "%oc mcp", "%oc close")):
        rows = type(value).__name__ == "DataFrame"  # %oc extract shows its rows (a failure would raise)
        assert value is not None and (rows or getattr(value, "ok", False)), f"{where}: {cell!r} -> {value!r}"
    return value


IPYTHON_DOCS = [p for p in DOCS if any(lang == "ipython" for lang, _ in blocks(p))]
PROSE_DOCS = [p for p in DOCS if prose_magics(p)]


def test_the_readme_has_a_notebook_example_and_a_headline_magic() -> None:
    assert ROOT / "README.md" in IPYTHON_DOCS and ROOT / "README.md" in PROSE_DOCS


@pytest.mark.parametrize("path", IPYTHON_DOCS, ids=_rel)
def test_ipython_blocks_run_as_printed(path: Path, ip: Any) -> None:
    n = 0
    for lang, body in blocks(path):
        if lang != "ipython":
            continue
        n += 1
        for cell in _cells(body):
            run_cell(ip, cell, f"{_rel(path)} ipython block {n}")


@pytest.mark.parametrize("path", PROSE_DOCS, ids=_rel)
def test_magics_in_the_prose_run_as_printed(path: Path, ip: Any, site: DemoSite) -> None:
    ip.run_line_magic("load_ext", "ocnb")
    for line in prose_magics(path):
        run_cell(ip, line.replace(PLACEHOLDER_URL, site.page("form.html")), f"{_rel(path)} prose")
