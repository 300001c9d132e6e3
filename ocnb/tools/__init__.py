"""Tool modules, one per category. Importing this package registers every tool."""

from . import contracts, discovery, journal, meta, navigation, page_state, scripting, skills, tabs, workflow  # noqa: F401

__all__: list[str] = []
