"""What an element can take: which candidates a fill, type, select or check may resolve to.

``%oc fill "Search" apple`` on a page with a search box and a Search button means the box: only one of
the two can be filled. :func:`takes` is the one rule; :func:`~.targets.resolve_target` keeps, for such
an action, only the candidates that can take it (a click still considers every candidate).
"""

from __future__ import annotations

from typing import Any

__all__ = ["KINDS", "takes"]

_TEXT = frozenset({"textbox", "searchbox", "spinbutton"})
_ON_INPUT = frozenset({"combobox", "slider"})  # fillable when they are an <input> (not a <select>, a div)
_SELECT = frozenset({"combobox", "listbox"})
_CHECK = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})

#: The action each kind of value-taking call needs; ``set`` is form_input's and fill_form's "any field".
KINDS = ("fill", "type", "select", "check", "uncheck", "set")


def _fillable(c: dict[str, Any]) -> bool:
    role, tag = c.get("role"), c.get("tag")
    return role in _TEXT or (role in _ON_INPUT and tag == "input") or tag == "textarea"


def takes(c: dict[str, Any], action: str | None) -> bool:
    """Whether candidate ``c`` (a dict with ``role`` and ``tag``) can take ``action``; every candidate
    can take a click, hover, press or no action at all."""
    if action in ("fill", "type"):
        return _fillable(c)
    if action == "select":
        return c.get("tag") == "select" or c.get("role") in _SELECT
    if action in ("check", "uncheck"):
        return c.get("role") in _CHECK
    if action == "set":  # form_input also sets a slider drawn by script (by its arrow keys)
        return _fillable(c) or c.get("tag") == "select" or c.get("role") in _SELECT | _CHECK | {"slider"}
    return True
