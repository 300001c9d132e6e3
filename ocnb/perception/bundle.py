"""The in-page scripts, assembled from the modules in ``js/`` (no build step: joined at load time).

A page script is one JavaScript expression whose value is a function ``(req) => {result, next}``;
Python evaluates it in a frame with a request ``{op, next, ...}`` (:mod:`.refs`, :mod:`.extract`).
Its source lives in ``ocnb/perception/js/`` as modules by what they compute — roles, names, visibility,
the outline, refs, listeners, chains, tables, items — that share one set of helpers (``core.js``,
``roles.js``, ``visibility.js``). A bundle is those modules' text, in the order :data:`BUNDLES`
declares, inside ``(function NAME(req) { … return main(req); })``: every module's top-level names are
the function's locals, so what a module declares lives for one call (caches included), and the last
module's ``main(req)`` looks ``req.op`` up in its table of operations.

- ``perception`` (``ocnbPerception``): read_page, find, refs, selector chains, replay's resolution,
  the hit test; it keeps itself and the ref registry per document (``state.js``).
- ``extract`` (``ocnbExtract``): tables, repeated items, named fields; it names elements through the
  perception bundle's ``refs`` op, so that bundle must already be in the document.

Each bundle is read and joined once per process (:func:`bundle` is cached).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

__all__ = ["BUNDLES", "JS_DIR", "SHARED", "assemble", "bundle"]

#: The folder of the page-script modules.
JS_DIR = Path(__file__).with_name("js")

#: The helpers every bundle starts with: text and style helpers, roles, visibility.
SHARED: tuple[str, ...] = ("core.js", "roles.js", "visibility.js")

#: Bundle name → (the function's name, its modules in order). Modules only declare at their top level
#: (but for ``state.js``, which keeps the per-document state), so their order matters only where one
#: module's top-level code reads another's: the helpers come first.
BUNDLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "perception": (
        "ocnbPerception",
        (
            *SHARED,
            "state.js",
            "refs.js",
            "listeners.js",
            "names.js",
            "icons.js",
            "describe.js",
            "outline.js",
            "find.js",
            "chains.js",
            "perception.js",
        ),
    ),
    "extract": ("ocnbExtract", (*SHARED, "seen_text.js", "tables.js", "items.js", "fields.js", "extract.js")),
}


@cache
def bundle(name: str) -> str:
    """The source of bundle ``name``: an expression evaluating to ``(req) => {result, next}``."""
    function, modules = BUNDLES[name]
    return assemble(name, function, modules)


def assemble(name: str, function: str, modules: Sequence[str], extra: str = "") -> str:
    """Join ``modules`` (file names in :data:`JS_DIR`) and then ``extra`` (source text) into one function
    expression named ``function`` that returns ``main(req)``. :func:`bundle` uses it for the declared
    bundles; a test uses it to add an op that calls the modules' functions directly."""
    parts = [
        f"// ocnb page script {name!r}: the modules of ocnb/perception/js/ joined by ocnb/perception/bundle.py",
        f"(function {function}(req) {{",
    ]
    for module in modules:
        parts.append(f"// ---- js/{module}")
        parts.append((JS_DIR / module).read_text(encoding="utf-8").rstrip("\n"))
    if extra:
        parts.append(extra.rstrip("\n"))
    parts.append("return main(req);")
    parts.append("})")
    return "\n".join(parts) + "\n"
