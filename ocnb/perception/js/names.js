// names: accessible names (a compact take on accname 1.2) and the text a name is made of.

// Roles named by their content.
const NAME_FROM_CONTENT = new Set(["button", "link", "heading", "cell", "columnheader", "rowheader",
  "option", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem", "checkbox", "radio",
  "switch", "tooltip", "gridcell", "legend", "caption", "term", "summary"]);
// The text of `root` as a name takes it: visible text (all of it with forceHidden), an image's alt,
// a nested control's value, block boundaries as spaces; `skip` (the labelled control) left out.
function textOf(root, skip, forceHidden) {
  const parts = [];
  const visit = (n, hiddenOk) => {
    if (n.nodeType === 3) {
      const p = n.parentElement;
      if (hiddenOk || !p || selfVisible(p)) parts.push(n.nodeValue);
      return;
    }
    if (n.nodeType !== 1 || n === skip) return;
    const el = n;
    if (!hiddenOk && hiddenTree(el, true)) return;
    if (SKIP_TAGS.has(el.tagName)) return;
    const tag = el.tagName;
    if (tag === "IMG" || tag === "AREA" || (tag === "INPUT" && el.type === "image")) {
      const alt = el.getAttribute("aria-label") || el.getAttribute("alt") || "";
      if (alt) parts.push(" " + alt + " ");
      return;
    }
    if (el !== root) {
      const al = el.getAttribute("aria-label");
      if (al && squash(al)) { parts.push(" " + al + " "); return; }
      if (tag === "INPUT" || tag === "TEXTAREA") {
        const t = (el.type || "").toLowerCase();
        if (t === "checkbox" || t === "radio") return;
        if (t === "button" || t === "submit" || t === "reset") { parts.push(" " + (el.value || "") + " "); return; }
        parts.push(" " + (el.value || "") + " ");
        return;
      }
      if (tag === "SELECT") {
        const o = el.selectedOptions && el.selectedOptions[0];
        if (o) parts.push(" " + o.textContent + " ");
        return;
      }
      if (tag === "svg" || tag === "SVG") {
        const t = el.querySelector && el.querySelector("title");
        if (t) parts.push(" " + t.textContent + " ");
        return;
      }
    }
    let block = false;
    if (el !== root && !hiddenOk) {
      const d = style(el).display;
      block = !INLINE_DISPLAY.test(d);
    }
    if (block) parts.push(" ");
    for (const c of childNodesOf(el)) visit(c, hiddenOk);
    if (block) parts.push(" ");
    if (tag === "BR") parts.push(" ");
  };
  visit(root, !!forceHidden);
  return squash(parts.join(""));
}
function byIds(el, attr) {
  const ids = (el.getAttribute(attr) || "").trim().split(/\s+/).filter(Boolean);
  if (!ids.length) return "";
  const rootNode = el.getRootNode();
  const out = [];
  for (const id of ids) {
    const t = (rootNode.getElementById ? rootNode.getElementById(id) : null) || document.getElementById(id);
    if (t) out.push(t === el ? squash(el.getAttribute("aria-label") || "") : textOf(t, null, true));
  }
  return squash(out.join(" "));
}
function labelText(el) {
  const labels = el.labels;
  if (!labels || !labels.length) return "";
  return squash(Array.from(labels).map((l) => textOf(l, el)).join(" "));
}
// Returns [name, source] where source says where the name came from.
function nameOf(el, role) {
  let n = byIds(el, "aria-labelledby");
  if (n) return [n, "labelledby"];
  n = squash(el.getAttribute("aria-label"));
  if (n) return [n, "aria-label"];
  const tag = el.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
    const t = (el.type || "").toLowerCase();
    if (tag === "INPUT" && (t === "button" || t === "submit" || t === "reset")) {
      n = squash(el.value) || (t === "submit" ? "Submit" : t === "reset" ? "Reset" : "");
      if (n) return [n, "value"];
    }
    if (tag === "INPUT" && t === "image") {
      n = squash(el.getAttribute("alt")) || squash(el.getAttribute("title")) || "Submit";
      return [n, "alt"];
    }
    n = labelText(el);
    if (n) return [n, "label"];
    n = squash(el.getAttribute("title"));
    if (n) return [n, "title"];
    n = squash(el.getAttribute("placeholder"));
    if (n) return [n, "placeholder"];
    return ["", ""];
  }
  if (tag === "IMG" || tag === "AREA") {
    n = squash(el.getAttribute("alt"));
    if (n) return [n, "alt"];
    if (tag === "IMG") { n = squash(el.getAttribute("title")); return [n, n ? "title" : ""]; }
  }
  if (tag === "FIELDSET") {
    const lg = el.querySelector(":scope > legend");
    if (lg) { n = textOf(lg); if (n) return [n, "legend"]; }
  }
  if (tag === "TABLE") {
    const c = el.querySelector(":scope > caption");
    if (c) { n = textOf(c); if (n) return [n, "caption"]; }
  }
  if (tag === "FIGURE") {
    const c = el.querySelector(":scope > figcaption");
    if (c) { n = textOf(c); if (n) return [n, "figcaption"]; }
  }
  if (NAME_FROM_CONTENT.has(role) || (SCRIPT_ROLES.has(role) && role !== "img" && (focusable(el) || el.getAttribute("draggable") === "true" || scriptDriven(el)))) {
    n = textOf(el);
    if (n) return [n, "content"];
  }
  if (tag === "IFRAME" || tag === "FRAME") {
    n = squash(el.getAttribute("title")) || squash(el.getAttribute("name"));
    return [n, n ? "title" : ""];
  }
  n = squash(el.getAttribute("title")) || squash(el.getAttribute("data-tooltip")) || squash(el.getAttribute("data-original-title"));
  if (n) return [n, "title"];
  if (isInteractive(el, role) && role !== "slider") { n = iconName(el) || swatchName(el); if (n) return [n, "icon"]; }
  return ["", ""];
}
// What an element shows when its name comes from elsewhere (aria-label, aria-labelledby, title) and
// the shown text says words the name does not: a story link labelled "Opens a new window" shows its
// headline. "" when the content writes no word the name lacks (a label equal to its text, an icon's
// "×", an image's alt text).
const NAME_ELSEWHERE = new Set(["aria-label", "labelledby", "title"]);
const wordsOf = (s) => (s || "").toLowerCase().match(/[\p{L}\p{N}_]+/gu) || [];
function contentBeyondName(el, name, nameSrc, content) {
  if (!NAME_ELSEWHERE.has(nameSrc)) return "";
  const text = content === undefined ? textOf(el) : content;
  if (!text) return "";
  const have = new Set(wordsOf(name));
  const more = wordsOf(text).filter((w) => !have.has(w));
  if (!more.length) return "";
  // words a person reads there (not an image's alt text, an icon's <title>, hidden text)
  const written = new Set(wordsOf(typeof el.innerText === "string" ? el.innerText : el.textContent));
  return more.some((w) => written.has(w)) ? text : "";
}
