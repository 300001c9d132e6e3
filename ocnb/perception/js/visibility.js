// visibility: whether an element is shown, for the outline, for names and for acting on it.

// Hidden for the outline: no box at all, or hidden from assistive tech.
// aria-hidden content that is visibly rendered stays in the outline (a sighted user sees and can
// click it; innerText and Playwright MCP's snapshot keep it too); it is left out of names.
function hiddenTree(el, forName) {
  if (SKIP_TAGS.has(el.tagName)) return true;
  if (forName && el.getAttribute("aria-hidden") === "true") return true;
  if (el.hasAttribute("inert")) return true;
  if (style(el).display === "none") return true;
  return false;
}
function selfVisible(el) {
  const visibility = style(el).visibility;
  return visibility !== "hidden" && visibility !== "collapse";
}
function zeroBox(el) {
  const box = el.getBoundingClientRect();
  return box.width === 0 && box.height === 0;
}
// Shown to a person who would act on it: no hidden ancestor (across shadow roots), visible itself,
// with a box (a form field may have a zero box and still take input).
function visibleForAction(el) {
  for (let e = el; e; e = e.parentElement || (e.getRootNode && e.getRootNode().host)) {
    if (e.nodeType !== 1) break;
    if (hiddenTree(e)) return false;
  }
  if (!selfVisible(el)) return false;
  if (zeroBox(el) && !(el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA")) return false;
  return true;
}
// Rendered at all (the browser's checkVisibility where there is one).
function shown(el) { return el.checkVisibility ? el.checkVisibility() : style(el).display !== "none"; }
