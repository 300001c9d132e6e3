"""The typed face of ``Session``'s tool methods: an empty class at run time.

``Session`` derives from :class:`ToolMethods`; its tool methods are made from the registry when a
session starts (one per offered tool). Type checkers and editors read ``_tool_methods.pyi`` beside this
file instead, generated from the registry by ``python -m ocnb.commands.stubs`` and checked in CI.
"""

__all__ = ["ToolMethods"]


class ToolMethods:
    """Every tool as a method of ``Session`` (attached at run time; typed in ``_tool_methods.pyi``)."""

    __slots__ = ()
