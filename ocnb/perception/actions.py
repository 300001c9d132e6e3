"""One action on one element: the mapping both ``interact`` and skill replay use.

``interact`` acts on what an agent resolved a moment ago; replay acts on what a selector chain
resolved from a recording. Both end in the same Playwright element call, so the mapping from an
action name to that call lives here once (and a fix to one reaches the other).
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from .fills import ReadBack, field_of, fill_plain, prepare, refused_check, restore, verify

__all__ = ["ACTIONS", "CHECKED_WORDS", "KEY_NAMES", "UNCHECKED_WORDS", "check_key", "checked", "perform"]

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


#: Every key name Playwright's keyboard knows: the codes and key values of its US layout (Playwright
#: ``usKeyboardLayout.ts``; a name outside it is "Unknown key", raised only after the modifiers before
#: it were already pressed), plus ``ControlOrMeta``.
KEY_NAMES = frozenset(
    (
        "Alt AltGraph AltLeft AltRight ArrowDown ArrowLeft ArrowRight ArrowUp AudioVolumeDown AudioVolumeMute "
        "AudioVolumeUp Backquote Backslash Backspace BracketLeft BracketRight CapsLock Clear Comma ContextMenu "
        "Control ControlLeft ControlOrMeta ControlRight Delete End Enter Equal Escape Home Insert "
        "MediaPlayPause MediaTrackNext MediaTrackPrevious Meta MetaLeft MetaRight Minus NumLock NumpadAdd "
        "NumpadDecimal NumpadDivide NumpadEnter NumpadMultiply NumpadSubtract PageDown PageUp Pause Period "
        "PrintScreen Quote ScrollLock Semicolon Shift ShiftLeft ShiftRight Slash Space Tab"
    ).split()
    + [f"F{n}" for n in range(1, 13)]
    + [f"Digit{n}" for n in range(10)]
    + [f"Numpad{n}" for n in range(10)]
    + [f"Key{c}" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    + [chr(c) for c in range(0x20, 0x7F)]  # every printable ASCII character
)


def _split_keys(key: str) -> list[str]:
    """``"Control+Shift+A"`` → ``["Control", "Shift", "A"]`` the way Playwright splits it (``"Shift++"``
    is Shift and ``+``)."""
    keys, building = [], ""
    for ch in key:
        if ch == "+" and building:
            keys.append(building)
            building = ""
        else:
            building += ch
    keys.append(building)
    return keys


def check_key(key: object) -> str:
    """``key`` if Playwright can press it (each part of a ``+`` chord a known key name), else
    ValueError naming the unknown part — checked before anything is pressed."""
    text = str(key)
    for part in _split_keys(text):
        if part not in KEY_NAMES:
            raise ValueError(
                f"unknown key {part!r} in {text!r}: use a key name such as Enter, Escape, Tab, ArrowDown, "
                "PageDown, F5 or a character, joined with + for chords (Control+A)"
            )
    return text


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
    read_back: ReadBack | None = None,
) -> dict[str, str] | None:
    """Run ``action`` on a Playwright locator or element handle; ValueError for an unknown action.

    ``fill``, ``type``, ``select``, ``check`` and ``uncheck`` are checked (:mod:`.fills`): a value the
    field cannot take is ``INVALID_VALUE`` before acting, and the field is read back afterwards
    (``INVALID_VALUE`` when it does not hold what was asked). Returns ``{from, to}`` when a person's
    value was put into the field's format (``10/11/2011`` → ``2011-10-11``), else None.

    ``read_back`` is given when ``element`` matches only an enabled, editable plain text field (a
    :func:`~ocnb.perception.selectors.verified_locator` with ``fillable`` and ``keep``): a
    :class:`~ocnb.perception.fills.ReadBack` of the same element without that condition. A fill then
    skips the field read before it and is read back through ``read_back``
    (:func:`~ocnb.perception.fills.fill_plain`), still checked.

    ``position`` (``{x, y}`` from the top-left corner of the element's padding box) is where a click, double click or hover
    lands instead of the element's centre (``interact_at`` acts at a point of a screenshot).

    ``select`` takes one string (matched against option values, then labels, as Playwright does)
    or a list of them; ``type`` sends key presses one by one, for fields that react to each key.
    """
    if action == "fill" and read_back is not None:
        await fill_plain(element, read_back, value, timeout)
        return None
    if action in _CHECKED:
        field = await field_of(element)
        value, converted = prepare(field, action, value)
        try:
            await _run(element, action, value, key, timeout, position)
        except Exception as exc:  # noqa: BLE001 - only the page's refusal is told here; the rest goes on
            refused = refused_check(field, action, exc)
            if refused is None:
                raise
            raise refused from None
        try:
            await verify(element, field, action, value)
        except InvalidValue:
            await restore(element, field)  # a refused value is not left in the field to be submitted
            raise
        return converted
    await _run(element, action, value, key, timeout, position)
    return None


#: The actions whose result is read back from the field.
_CHECKED = frozenset({"fill", "type", "select", "check", "uncheck"})


async def _run(
    element: Any, action: str, value: Any, key: str | None, timeout: int, position: dict[str, float] | None
) -> None:
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
        await element.press(str(key), timeout=timeout)  # checked by the callers (check_key) before acting
    elif action == "select":
        await element.select_option(value if isinstance(value, list) else str(value), timeout=timeout)
    else:
        raise ValueError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
