"""The tool catalogue: every tool module, one per category (``ocnb/tools/<category>.py``).

Importing this package imports the modules of :data:`CATALOGUE`, whose ``@tool`` declarations are the
registry's tools. The registry itself names no tool module: the package (``ocnb/__init__.py``) hands it
this import as its catalogue, run the first time the tools are asked for.
"""

from types import ModuleType

from . import (  # noqa: F401 - imported for CATALOGUE (and their @tool declarations)
    console,
    contracts,
    dialogs,
    discovery,
    dom,
    downloads,
    emulation,
    evidence,
    extract,
    forms,
    interact,
    js,
    logins,
    navigation,
    network,
    observability,
    pdf,
    skills,
    storage,
    tabs,
    targeting,
    vision,
    workflow,
)

__all__ = ["CATALOGUE", "SHARED"]

#: Modules of this package that declare no tool: what the tool modules share (targets, timeouts, results).
SHARED = ("targeting",)

#: The tool modules imported above, each named for the category of its tools, in name order. A new
#: category is a new module, added to the import list.
CATALOGUE: tuple[ModuleType, ...] = tuple(
    module
    for name, module in sorted(globals().items())
    if isinstance(module, ModuleType) and module.__name__ == f"{__name__}.{name}" and name not in SHARED
)
