"""The tool catalogue: every tool module, one per category (``ocnb/tools/<category>.py``).

Importing this package imports the modules of :data:`CATALOGUE`, whose ``@tool`` declarations are the
registry's tools. The registry itself names no tool module: the package (``ocnb/__init__.py``) hands it
this import as its catalogue, run the first time the tools are asked for.
"""

from . import (
    console,
    contracts,
    dialogs,
    discovery,
    dom,
    downloads,
    emulation,
    evidence,
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
    vision,
    workflow,
)

__all__ = ["CATALOGUE"]

#: The tool modules, each named for the category of its tools. A new category is a new module, listed here.
CATALOGUE = (
    console,
    contracts,
    dialogs,
    discovery,
    dom,
    downloads,
    emulation,
    evidence,
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
    vision,
    workflow,
)
