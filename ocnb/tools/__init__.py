"""Tool modules, one per category. Importing this package registers every tool."""

from . import (  # noqa: F401
    contracts,
    discovery,
    interact,
    journal,
    meta,
    navigation,
    page_state,
    read,
    scripting,
    skills,
    tabs,
    workflow,
)

__all__: list[str] = []
