// listeners: which elements script makes act (listeners, delegated handlers, a pointer cursor), and
// so which elements are interactive.

// Elements the page gave a click/pointer/key listener (ocnb/perception/listeners.py installs the registry).
const LISTENED = window[Symbol.for("ocnb.listeners")] || null;

const CLICK_TYPES = ["click", "dblclick", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend",
  "keydown", "keyup", "keypress"];
const NATIVE_CONTROL = "a[href],button,input,select,textarea,summary,[role=button],[role=link],[role=checkbox],[role=tab],[role=menuitem],[role=option],[role=treeitem],[role=slider],.ui-slider-handle,[contenteditable]";
// Hosts of click-type listeners (elements, the document, the window) → the selectors their source tests
// an event's target against (`e.target.closest(".row")`): ocnb/perception/listeners.py records them.
const DELEGATES = window[Symbol.for("ocnb.delegates")] || null;
// Elements with a listener that is not only one dispatching to selectors under them (those are hosts, not controls).
const OWN = window[Symbol.for("ocnb.own")] || null;
// A delegated selector that matches more than this under its host is too broad to mean "these are controls".
const DELEGATED_MAX_MATCHES = 400;
// Targets of events delegated to a parent that says which: jQuery's .on(type, selector) table, and a
// listener whose source dispatches by the target's selector (a hand-written root listener).
let DELEGATED = null;
function delegated() {
  if (DELEGATED) return DELEGATED;
  DELEGATED = new Set();
  const hosts = [window, document];
  if (LISTENED) for (const el of document.querySelectorAll("*")) if (LISTENED.has(el)) hosts.push(el);
  const add = (scope, selector) => {
    let found;
    try { found = scope.querySelectorAll(selector); } catch (e) { return; }  // a jQuery-only selector
    if (found.length > DELEGATED_MAX_MATCHES) return;
    for (const t of found) if (t.tagName !== "BODY" && t.tagName !== "HTML") DELEGATED.add(t);
  };
  const jq = window.jQuery;
  for (const h of hosts) {
    const scope = h === window ? document : h;
    if (DELEGATES && DELEGATES.has(h)) for (const selector of DELEGATES.get(h)) add(scope, selector);
    if (!jq || typeof jq._data !== "function" || h === window) continue;
    let ev = null;
    try { ev = jq._data(h, "events"); } catch (e) { ev = null; }
    if (!ev) continue;
    for (const type of CLICK_TYPES) {
      for (const hd of ev[type] || []) if (hd && hd.selector) add(scope, hd.selector);
    }
    if (DELEGATED.size > 5000) return DELEGATED;
  }
  return DELEGATED;
}
// Whether React keeps a click handler on `el` itself (its root listener dispatches to it): the props
// React stores on each element it renders (__reactProps$… since React 17, __reactEventHandlers$… before).
const REACT_HANDLERS = ["onClick", "onClickCapture", "onMouseDown", "onMouseUp", "onPointerDown", "onPointerUp", "onDoubleClick", "onKeyDown"];
function reactClick(el) {
  for (const k of Object.keys(el)) {
    if (!k.startsWith("__reactProps$") && !k.startsWith("__reactEventHandlers$")) continue;
    const props = el[k];
    if (props && REACT_HANDLERS.some((h) => typeof props[h] === "function")) return true;
  }
  return false;
}
// The ancestors of every element with a listener of its own or a delegated one: a control drawn as a
// row of such spans ("Reply", "Forward" in a clickable bar) shows each of them, not only the bar.
let LISTENED_INSIDE = null;
function listenedInside() {
  if (LISTENED_INSIDE) return LISTENED_INSIDE;
  LISTENED_INSIDE = new Set();
  const targets = Array.from(delegated());
  // elements with a listener of their own, React's onClick, or a pointer cursor under a listening host
  for (const el of document.querySelectorAll("*")) {
    if ((LISTENED && LISTENED.has(el)) || reactClick(el)) targets.push(el);
    else if (DELEGATES && style(el).cursor === "pointer" && scriptDriven(el)) targets.push(el);
  }
  for (const t of targets) {
    for (let p = t.parentElement; p && !LISTENED_INSIDE.has(p); p = p.parentElement) LISTENED_INSIDE.add(p);
  }
  return LISTENED_INSIDE;
}
// Whether every listener of `el` dispatches to elements under it that are not native controls
// (`closest(".row")`): then the rows are the controls, not `el`. A listener that tests for a link or
// button only to leave it alone (`if (e.target.closest("a")) return;`) still makes `el` act itself.
function onlyDelegates(el) {
  if (!OWN || OWN.has(el) || !DELEGATES || !DELEGATES.has(el)) return false;
  for (const selector of DELEGATES.get(el)) {
    let found;
    try { found = el.querySelectorAll(selector); } catch (e) { continue; }
    for (const t of found) if (!t.matches(NATIVE_CONTROL)) return true;
  }
  return false;
}
// Whether script makes `el` act on a click or key: a listener of its own (the registry, an on*
// handler, React's onClick), a delegated selector that matches it, or — the weaker sign, answered
// "inferred" — a cursor:pointer it sets itself (as under a root listener that dispatches by target
// without saying to which selector). An element that only wraps one control with the same text is not (the
// control is the target).
const driven = new Map();
function scriptDriven(el) {
  let answer = driven.get(el);
  if (answer !== undefined) return answer;
  answer = false;
  const tag = el.tagName;
  if (tag !== "BODY" && tag !== "HTML" && tag !== "LABEL" && tag !== "svg" && !(el.ownerSVGElement && tag !== "svg")) {
    if ((LISTENED && LISTENED.has(el) && !onlyDelegates(el)) || typeof el.onclick === "function" || typeof el.onmousedown === "function" ||
        el.hasAttribute("onclick") || el.hasAttribute("onmousedown") || delegated().has(el) || reactClick(el)) answer = true;
    else if (style(el).cursor === "pointer") {
      // the weaker signal: only an element that sets the cursor itself and shows something to name it by
      const parent = el.parentElement;
      answer = (!parent || style(parent).cursor !== "pointer") && !!(textOf(el) || el.getAttribute("aria-label") ||
        el.getAttribute("title") || el.querySelector("img[alt]:not([alt='']),[aria-label],[title]") || iconName(el) ||
        swatchName(el));
      if (answer) answer = "inferred";
    }
    if (answer && el.querySelector(NATIVE_CONTROL)) {
      // a wrapper whose text all sits in the controls inside it (a card around its links): they are the targets
      let inside = 0;
      for (const c of el.querySelectorAll(NATIVE_CONTROL)) inside += textOf(c).length;
      if (inside + 2 >= textOf(el).length) answer = false;
    }
  } else if (el.ownerSVGElement || tag === "svg") {
    // an icon drawn in SVG: its listener counts, the pointer cursor it inherits does not
    answer = !!(LISTENED && LISTENED.has(el) && tag === "svg") || el.hasAttribute("onclick");
  }
  driven.set(el, answer);
  return answer;
}
// Whether `el` is a control only by the weaker sign (a pointer cursor): its outline line says "inferred".
function inferredControl(el, role) {
  return SCRIPT_ROLES.has(role) && !focusable(el) && scriptDriven(el) === "inferred";
}
// Whether a person acts on `el`: an interactive role, or a role script can drive that it does.
function isInteractive(el, role) {
  if (INTERACTIVE.has(role)) return true;
  if (SCRIPT_ROLES.has(role)) {
    if (focusable(el) && el.tagName !== "BODY" && el.tagName !== "HTML") return true;
    if (scriptDriven(el)) return true;
  }
  return false;
}
