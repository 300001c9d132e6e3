"""Script-driven controls: which elements a page listens to for clicks and keys.

A ``<div>``, ``<span>``, ``<td>`` or ``<a>`` without ``href`` that works only through script has no role
to say so. The browser knows (DevTools' ``DOMDebugger.getEventListeners``), but asking it is one
protocol round trip per element; instead, an init script installed on the browser context before any
page script runs wraps ``EventTarget.prototype.addEventListener`` and keeps, in a ``WeakSet`` under a
symbol on ``window``, every element that got a click, pointer, mouse, touch or key listener. The
perception script (``js/listeners.js``) reads that set: a membership test per element, no round trip.
``bench/bench_listeners.py`` measures both ways on one page.

A listener on an ancestor that handles clicks on what is under it (delegation) is read three ways, from
the surest to the weakest:

- where a framework keeps its own table: jQuery's ``.on(type, selector, …)`` (``jQuery._data(el,
  "events")``, the selector matched under the element); React's root listener dispatches to the
  ``onClick`` it keeps on each element (``__reactProps$…``), which is read as the element's own handler;
- a listener written by hand that dispatches by target (``e.target.closest(".row")``,
  ``matches("li.item")``, ``classList.contains("row")``): the init script also keeps, per element,
  ``document`` or ``window`` given a click-type listener, the selectors its source tests the target
  against (``Symbol.for(DELEGATES)``), and the perception script matches them under that element;
- an element that sets ``cursor: pointer`` itself under an ancestor (or the document) with a click
  listener: the weaker sign, shown as ``inferred`` in the outline.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DELEGATES", "INIT_SCRIPT", "KEY", "install"]

#: The symbol (``Symbol.for(KEY)``) the set lives under; js/listeners.js reads the same one.
KEY = "ocnb.listeners"

#: The symbol of the hosts of click-type listeners (elements, the document, the window), each with the
#: selectors its listeners' source tests an event's target against; js/listeners.js reads the same one.
DELEGATES = "ocnb.delegates"

INIT_SCRIPT = r"""(() => {
  const K = Symbol.for("ocnb.listeners");
  if (window[K]) return;
  const marked = new WeakSet();
  Object.defineProperty(window, K, { value: marked, enumerable: false });
  const TYPES = new Set(["click", "dblclick", "auxclick", "mousedown", "mouseup", "pointerdown", "pointerup",
    "touchstart", "touchend", "keydown", "keyup", "keypress"]);
  // hosts of click-type listeners -> the selectors their source tests the target against (delegation)
  const hosts = new WeakMap();
  Object.defineProperty(window, Symbol.for("ocnb.delegates"), { value: hosts, enumerable: false });
  // elements with a listener that is not only a delegating one: they act themselves
  const own = new WeakSet();
  Object.defineProperty(window, Symbol.for("ocnb.own"), { value: own, enumerable: false });
  const CLICKS = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend"]);
  const SELECTOR = /\.(?:closest|matches|webkitMatchesSelector)\(\s*(["'`])((?:(?!\1)[^\\])+)\1\s*\)/g;
  const CLASS = /classList\.contains\(\s*(["'`])([\w-]+)\1\s*\)/g;
  const selectorsOf = (listener) => {
    const out = [];
    let src = "";
    try { src = String(typeof listener === "function" ? listener : listener && listener.handleEvent); } catch (e) { return out; }
    if (src.length > 20000) src = src.slice(0, 20000);
    for (const m of src.matchAll(SELECTOR)) out.push(m[2]);
    for (const m of src.matchAll(CLASS)) out.push("." + m[2]);
    return out;
  };
  const proto = EventTarget.prototype;
  const original = proto.addEventListener;
  const add = { addEventListener(type, listener, options) {
    try {
      const t = String(type).toLowerCase();
      const element = this && this.nodeType === 1;
      if (element && TYPES.has(t)) marked.add(this);
      let found = [];
      if (this && (element || this.nodeType === 9 || this === window) && CLICKS.has(t) && listener) {
        let sels = hosts.get(this);
        if (!sels) { sels = new Set(); hosts.set(this, sels); }
        found = selectorsOf(listener);
        if (sels.size < 50) for (const s of found) sels.add(s);
      }
      if (element && TYPES.has(t) && !found.length) own.add(this);
    } catch (e) { /* ignore */ }
    return original.call(this, type, listener, options);
  } }.addEventListener;
  Object.defineProperty(add, "toString", { value: () => original.toString(), enumerable: false });
  Object.defineProperty(proto, "addEventListener", { value: add, writable: true, configurable: true, enumerable: true });
})();"""


async def install(context: Any) -> None:
    """Install the listener registry on a Playwright browser context (its pages loaded from now on)."""
    await context.add_init_script(INIT_SCRIPT)
