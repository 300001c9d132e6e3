"""Sliders drawn by script: set by the keys a person would press, and read back.

A ``<div role="slider">`` or jQuery UI's ``<span class="ui-slider-handle">`` takes no ``fill``; a person
focuses the handle and presses arrow keys. :func:`set_slider` does that until the slider holds the
number asked (read after the presses, from ``aria-valuenow`` or jQuery UI's widget), and answers
``INVALID_VALUE`` — after pressing its way back to the value it had — when the number is outside the
slider's bounds or the slider steps past it: a refused value leaves the slider as it was.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue

__all__ = ["read_slider", "set_slider"]

#: The slider's value, min and max (the same reading as the page script's sliderState in js/describe.js).
_READ_JS = """e => {
  const num = (v) => (v === null || v === undefined || v === '' || isNaN(+v)) ? null : +v;
  let value = num(e.getAttribute('aria-valuenow'));
  let min = num(e.getAttribute('aria-valuemin')), max = num(e.getAttribute('aria-valuemax'));
  const track = e.closest('.ui-slider') || e.parentElement;
  const jq = window.jQuery;
  if (track && jq && typeof jq.data === 'function') {
    let inst = null;
    try { inst = jq.data(track, 'ui-slider') || jq.data(track, 'uiSlider') || null; } catch (x) { inst = null; }
    if (inst && inst.options) {
      const o = inst.options;
      if (min === null) min = num(o.min);
      if (max === null) max = num(o.max);
      if (value === null) {
        const i = Array.prototype.indexOf.call(track.querySelectorAll('.ui-slider-handle'), e);
        try { value = num(o.range === true || (o.values && o.values.length) ? inst.values(Math.max(i, 0)) : inst.value()); } catch (x) { value = null; }
      }
    }
  }
  return {value, min, max};
}"""

#: Presses at most, going one way (a slider of 0..1000 in steps of 1 is a thousand).
MAX_PRESSES = 1000


async def read_slider(element: Any) -> dict[str, float | None]:
    """``{value, min, max}`` of a script-drawn slider (a None where the page says nothing)."""
    return dict(await element.evaluate(_READ_JS))


async def _press_to(element: Any, want: float, start: float, timeout: int) -> float:
    """Press arrow keys on ``element`` until it holds ``want`` or cannot get closer; its last value."""
    value = start
    keys = {True: "ArrowRight", False: "ArrowLeft"}
    tried_vertical = False
    presses = 0
    while value != want and presses < MAX_PRESSES:
        up = value < want
        await element.press(keys[up], timeout=timeout)
        presses += 1
        now = (await read_slider(element))["value"]
        if now is None:
            break
        if now == value:
            if tried_vertical:
                break
            tried_vertical = True  # a vertical slider may answer only to Up/Down
            keys = {True: "ArrowUp", False: "ArrowDown"}
            continue
        step = abs(now - value)
        value = now
        if (value < want) != up or value == want:
            break  # reached, or stepped past it
        more = int(abs(want - value) // step) - 1  # the presses sure not to pass it, sent without reading
        for _ in range(max(0, min(more, MAX_PRESSES - presses))):
            await element.press(keys[up], timeout=timeout)
            presses += 1
        if more > 0:
            now = (await read_slider(element))["value"]
            if now is None:
                break
            value = now
    return value


async def set_slider(element: Any, value: Any, timeout: int) -> None:
    """Move a script-drawn slider to ``value`` with arrow keys and read it back; ``INVALID_VALUE`` (the
    slider moved back to where it was) when it cannot hold it."""
    state = await read_slider(element)
    start = state["value"]
    if start is None:
        raise InvalidValue("the slider says no value (no aria-valuenow, no slider widget to ask)", details={})
    try:
        want = float(str(value).strip())
    except ValueError:
        raise InvalidValue(f"{value!r} is not a number", details={"field": "slider", "asked": value}) from None
    bounds = {k: v for k in ("min", "max") if (v := state[k]) is not None}
    if want < bounds.get("min", want) or want > bounds.get("max", want):
        raise InvalidValue(
            f"{value!r} is outside the slider's range ({state['min']}–{state['max']}); it was left at {start:g}",
            details={"field": "slider", "asked": value, "holds": start, **bounds},
        )
    await element.evaluate("e => e.focus()")
    got = await _press_to(element, want, start, timeout)
    if got == want:
        return
    back = await _press_to(element, start, got, timeout)
    raise InvalidValue(
        f"the slider cannot hold {value} (it stepped to {got:g}); it was moved back to {back:g}",
        details={"field": "slider", "asked": value, "holds": back, **bounds},
    )
