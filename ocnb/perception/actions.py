"""One action on one element: the mapping both ``interact`` and skill replay use.

``interact`` acts on what an agent resolved a moment ago; replay acts on what a selector chain
resolved from a recording. Both end in the same Playwright element call, so the mapping from an
action name to that call lives here once (and a fix to one reaches the other).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ACTIONS", "CHECKED_WORDS", "UNCHECKED_WORDS", "checked", "perform"]

#: Strings that check a checkbox (trimmed, any case) and strings that uncheck it. Any other string is
#: refused rather than read as "unchecked": ``"maybe"`` must not silently clear a consent box.
CHECKED_WORDS = frozenset({"1", "true", "yes", "on", "checked", "x"})
UNCHECKED_WORDS = frozenset({"0", "false", "no", "off", "unchecked", ""})


def checked(value: object) -> bool:
    """Whether ``value`` asks for a checked box: the one rule of ``form_input``, ``fill_form``, skill
    replay and exported scripts. ValueError for a string that is neither a yes nor a no word."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in CHECKED_WORDS or word in UNCHECKED_WORDS:
            return word in CHECKED_WORDS
        raise ValueError(f"{value!r} is not a checkbox value: use true/false (or yes/no, on/off, 1/0)")
    if value is None or isinstance(value, bool | int | float):
        return bool(value)
    raise ValueError(f"a {type(value).__name__} is not a checkbox value: use true or false")


#: Every action an element can take, in the order the ``interact`` schema lists them.
ACTIONS = ("click", "double_click", "hover", "fill", "type", "press", "select", "check", "uncheck", "scroll_into_view")

#: Actions that take nothing but a timeout, and the Playwright method each one calls.
_NO_VALUE = {
    "click": "click",
    "double_click": "dblclick",
    "hover": "hover",
    "check": "check",
    "uncheck": "uncheck",
    "scroll_into_view": "scroll_into_view_if_needed",
}

#: Actions that can land at a given point of the element.
_AT_POINT = frozenset({"click", "double_click", "hover"})


async def perform(
    element: Any,
    action: str,
    *,
    value: Any = None,
    key: str | None = None,
    timeout: int,
    position: dict[str, float] | None = None,
) -> None:
    """Run ``action`` on a Playwright locator or element handle; ValueError for an unknown action.

    ``position`` (``{x, y}`` from the top-left corner of the element's padding box) is where a click, double click or hover
    lands instead of the element's centre (``interact_at`` acts at a point of a screenshot).

    ``select`` takes one string (matched against option values, then labels, as Playwright does)
    or a list of them; ``type`` sends key presses one by one, for fields that react to each key.
    """
    if position is not None and action in _AT_POINT:
        await getattr(element, _NO_VALUE[action])(timeout=timeout, position=position)
    elif action in _NO_VALUE:
        await getattr(element, _NO_VALUE[action])(timeout=timeout)
    elif action == "fill":
        await element.fill("" if value is None else str(value), timeout=timeout)
    elif action == "type":
        # Locators call it press_sequentially; element handles (refs) still call it type.
        send = getattr(element, "press_sequentially", None) or element.type
        await send(str(value), timeout=timeout)
    elif action == "press":
        await element.press(str(key), timeout=timeout)
    elif action == "select":
        await element.select_option(value if isinstance(value, list) else str(value), timeout=timeout)
    else:
        raise ValueError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
