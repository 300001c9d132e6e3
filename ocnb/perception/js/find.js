// find: the elements a person could mean — candidates for find, what a point lands on, what a
// selector or a text matches — and where an element sits (its context).

// Where an element sits, to tell twins apart: its row, list item, card, form or group, as
// `row "Invoice 1002 — Globex"` (that container's name, or its text without the element's own).
function contextOf(el) {
  const own = textOf(el);
  const named = nameOf(el, roleOf(el))[0];  // a name from aria-label, which the container's text repeats
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const r = roleOf(p), tag = p.tagName;
    let kind = "";
    if (tag === "TR" || r === "row") kind = "row";
    else if (r === "listitem") kind = "item";
    else if (r === "article" || /(^|[\s_-])card([\s_-]|$)/i.test(p.className || "")) kind = "card";
    else if (r === "form" || r === "search" || tag === "FORM") kind = "form";
    else if (r === "group" || r === "dialog" || r === "region" || r === "tabpanel" || r === "menu") kind = r;
    if (!kind) continue;
    let t = nameOf(p, r)[0];
    if (!t) {
      let rest = textOf(p);
      for (const part of [own, named]) if (part) rest = rest.split(part).join(" ");
      t = squash(rest);
    }
    if (!t && kind === "form") t = p.id || p.getAttribute("name") || "";
    if (t) return kind + " " + quote(clip(t, 60));
  }
  return "";
}
function candidateList() {
  const out = [];
  const visit = (root) => {
    const all = root.querySelectorAll("*");
    for (const el of all) {
      if (el.shadowRoot) visit(el.shadowRoot);
      const role = roleOf(el);
      const extraTarget = el.getAttribute("draggable") === "true" ||
        ((role === "region" || role === "form" || role === "dialog" || role === "group" || role === "list") &&
         (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby")));
      if (!isInteractive(el, role) && !extraTarget) continue;
      // visibility: no hidden ancestor
      if (!visibleForAction(el)) continue;
      const nm = nameOf(el, role);
      const c = {
        ref: PREFIX + refOf(el), role: displayRole(el, role), name: nm[0], name_source: nm[1],
        tag: el.tagName.toLowerCase(),
      };
      const lt = (el.labels && el.labels.length) ? labelText(el) : "";
      if (lt) c.label = lt;
      const ph = el.getAttribute("placeholder");
      if (ph) c.placeholder = squash(ph);
      const nmAttr = el.getAttribute("name");
      if (nmAttr) c.attr_name = nmAttr;
      if (el.id) c.id = el.id;
      const tid = el.getAttribute("data-testid");
      if (tid) c.testid = tid;
      if (!nm[0] || nm[1] !== "content") { const t = textOf(el); if (t) c.text = clip(t, 200); }
      else c.text = clip(nm[0], 200);
      out.push(c);
    }
  };
  visit(document);
  return out;
}

// ---- hit test: what a click at (x, y) of this frame's viewport lands on ------------------------
// The deepest element there (through open shadow roots), reported as its nearest interactive
// ancestor (itself when none is). An <iframe> also says which frame it is and where its content
// starts, so the caller can ask that frame. `unit: "%"` reads x and y as percentages of the viewport.
function hitAt(x, y, unit) {
  if (unit === "%") { x = x / 100 * innerWidth; y = y / 100 * innerHeight; }
  let el = document.elementFromPoint(x, y);
  if (!el) return null;
  for (let inner; el.shadowRoot && (inner = el.shadowRoot.elementFromPoint(x, y)) && inner !== el;) el = inner;
  let target = el;
  for (let e = el; e && e.nodeType === 1; e = e.parentElement || e.getRootNode().host) {
    if (isInteractive(e, roleOf(e))) { target = e; break; }
  }
  const r = target.getBoundingClientRect();
  const out = info(target);
  if (!isInteractive(target, roleOf(target))) out.role = roleOf(target) || "generic";
  out.tag = target.tagName.toLowerCase();
  out.visible = visibleForAction(target);
  out.rect = { x: r.left, y: r.top, width: r.width, height: r.height };
  out.point = { x, y };
  out.viewport = { width: innerWidth, height: innerHeight };
  if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
    const f = el.getBoundingClientRect(), cs = getComputedStyle(el);
    out.frame = refOf(el);
    out.content = { x: f.left + el.clientLeft + parseFloat(cs.paddingLeft), y: f.top + el.clientTop + parseFloat(cs.paddingTop) };
  }
  return out;
}

// Elements a CSS selector or an XPath matches, as info with tag and visibility (the first `limit`).
function queryAll(selector, method, limit) {
  let els = [];
  try {
    if (method === "xpath") {
      const found = document.evaluate(selector, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
      for (let i = 0; i < found.snapshotLength; i++) if (found.snapshotItem(i).nodeType === 1) els.push(found.snapshotItem(i));
    } else {
      els = Array.from(document.querySelectorAll(selector));
    }
  } catch (e) {
    return { error: String(e.message || e) };
  }
  return { matches: els.slice(0, limit || 50).map((el) => { const out = info(el); out.tag = el.tagName.toLowerCase(); out.visible = visibleForAction(el); return out; }), total: els.length };
}
// The deepest visible elements whose text equals `text` (case and spacing aside), each as the element
// a click on it acts on: its nearest interactive ancestor (itself when none is); 20 at most.
function textMatches(text) {
  const want = squash(text).toLowerCase();
  const hits = [];
  for (const el of allElements()) {
    if (!squash(el.textContent).toLowerCase().includes(want)) continue;
    if (el.tagName === "HTML" || el.tagName === "BODY" || SKIP_TAGS.has(el.tagName)) continue;
    if (textOf(el).toLowerCase() !== want || !visibleForAction(el)) continue;
    for (let i = hits.length - 1; i >= 0; i--) if (hits[i].contains(el)) hits.splice(i, 1);
    hits.push(el);
  }
  const targets = [];
  for (const el of hits) {
    let target = el;
    for (let e = el; e && e.nodeType === 1 && e !== document.body; e = e.parentElement) {
      if (isInteractive(e, roleOf(e))) { target = e; break; }
    }
    if (!targets.includes(target)) targets.push(target);
  }
  return targets.slice(0, 20).map((el) => { const out = info(el); out.tag = el.tagName.toLowerCase(); out.text = textOf(el); return out; });
}
