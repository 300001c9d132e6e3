"""Tool modules, one per category (``ocnb/tools/<category>.py``). Importing this package registers every tool."""

from . import (  # noqa: F401
    contracts,
    discovery,
    dom,
    evidence,
    forms,
    interact,
    js,
    navigation,
    observability,
    skills,
    storage,
    tabs,
    workflow,
)

__all__: list[str] = []
