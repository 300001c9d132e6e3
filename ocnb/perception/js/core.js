// core: the helpers every page script shares (bundled first by ocnb/perception/bundle.py).
// A bundle is one function `(req) => {result, next}` made of these modules' text in a declared order;
// what a module declares at its top level lives for one call (caches included), except what
// state.js keeps per document.

// Refs are numbered by a counter Python owns per page: it arrives as req.next and goes back as `next`.
let next = req.next || 1;
const PREFIX = "ax_";

// Elements whose content is never shown.
const SKIP_TAGS = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE",
  "BASE", "PARAM", "SOURCE", "TRACK"]);
const INLINE_DISPLAY = /^inline(?!-block|-flex|-grid|-table)/;

// Runs of white space (no-break and zero-width spaces included) as one space, trimmed.
const squash = (s) => (s || "").replace(/[\s\u00a0\u200b]+/g, " ").trim();
const quote = (s) => JSON.stringify(s);
function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

// getComputedStyle, once per element per call.
const styleCache = new Map();
function style(el) {
  let computed = styleCache.get(el);
  if (!computed) { computed = getComputedStyle(el); styleCache.set(el, computed); }
  return computed;
}

// The nodes rendered inside `el`: its open shadow root's, a slot's assigned nodes (else its fallback).
function childNodesOf(el) {
  if (el.shadowRoot) return el.shadowRoot.childNodes;
  if (el.tagName === "SLOT") {
    const assigned = el.assignedNodes();
    return assigned.length ? assigned : el.childNodes;
  }
  return el.childNodes;
}

// Every element of the document, each open shadow root's elements right after its host.
function allElements() {
  const out = [];
  const visit = (root) => { for (const el of root.querySelectorAll("*")) { out.push(el); if (el.shadowRoot) visit(el.shadowRoot); } };
  visit(document);
  return out;
}
// Every element under root as rendered, in document order: a host's open shadow root stands for its children.
function* composedElements(root) {
  const stack = [root];
  while (stack.length) {
    const node = stack.pop();
    const children = node.nodeType === 1 && node.shadowRoot ? node.shadowRoot.children : node.children;
    if (node.nodeType === 1 && node !== root) yield node;
    if (!children) continue;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
}
// The nearest ancestor (crossing shadow boundaries) matching pred.
function closestAcross(el, pred) {
  for (let e = el.parentElement || (el.getRootNode && el.getRootNode().host); e;
    e = e.parentElement || (e.getRootNode && e.getRootNode().host)) {
    if (pred(e)) return e;
  }
  return null;
}
function absUrl(v) {
  if (v == null || v === "") return "";
  try { return new URL(v, document.baseURI).href; } catch (e) { return v; }
}
