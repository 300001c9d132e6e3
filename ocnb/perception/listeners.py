"""Script-driven controls: which elements a page listens to for clicks and keys.

A ``<div>``, ``<span>``, ``<td>`` or ``<a>`` without ``href`` that works only through script has no role
to say so. The browser knows (DevTools' ``DOMDebugger.getEventListeners``), but asking it is one
protocol round trip per element; instead, an init script installed on the browser context before any
page script runs wraps ``EventTarget.prototype.addEventListener`` and keeps, in a ``WeakSet`` under a
symbol on ``window``, every element that got a click, pointer, mouse, touch or key listener. The
perception script (``js/listeners.js``) reads that set: a membership test per element, no round trip.
``bench/bench_listeners.py`` measures both ways on one page.

Frameworks that delegate events to a parent are read where they keep their own table: jQuery's
``.on(type, selector, …)`` (``jQuery._data(el, "events")``, the selector matched under the element).
A framework that delegates without such a table (React's root listener) is met by the supporting
signals the perception script also uses: an element that sets ``cursor: pointer`` itself, and ``tabindex``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["INIT_SCRIPT", "KEY", "install"]

#: The symbol (``Symbol.for(KEY)``) the set lives under; js/listeners.js reads the same one.
KEY = "ocnb.listeners"

INIT_SCRIPT = """(() => {
  const K = Symbol.for("ocnb.listeners");
  if (window[K]) return;
  const marked = new WeakSet();
  Object.defineProperty(window, K, { value: marked, enumerable: false });
  const TYPES = new Set(["click", "dblclick", "auxclick", "mousedown", "mouseup", "pointerdown", "pointerup",
    "touchstart", "touchend", "keydown", "keyup", "keypress"]);
  const proto = EventTarget.prototype;
  const original = proto.addEventListener;
  const add = { addEventListener(type, listener, options) {
    try { if (this && this.nodeType === 1 && TYPES.has(String(type).toLowerCase())) marked.add(this); } catch (e) { /* ignore */ }
    return original.call(this, type, listener, options);
  } }.addEventListener;
  Object.defineProperty(add, "toString", { value: () => original.toString(), enumerable: false });
  Object.defineProperty(proto, "addEventListener", { value: add, writable: true, configurable: true, enumerable: true });
})();"""


async def install(context: Any) -> None:
    """Install the listener registry on a Playwright browser context (its pages loaded from now on)."""
    await context.add_init_script(INIT_SCRIPT)
