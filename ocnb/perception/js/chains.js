// chains: selector chains and fingerprints of an element, and resolving a replayed step by them.

const GENERATED = /^(css-|sc-|jsx-|emotion-|_)|[0-9a-f]{6,}|\d{3,}|^[a-z]{1,3}\d|__/i;
function cssEscape(s) { return CSS.escape(s); }
function uniqueIn(root, sel, el) {
  try { const m = root.querySelectorAll(sel); return m.length === 1 && m[0] === el; } catch (e) { return false; }
}
function xpathOf(el) {
  const parts = [];
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
    if (e.id && !GENERATED.test(e.id) && e !== el) {
      parts.unshift("//*[@id=" + quote(e.id) + "]");
      return parts.join("/");
    }
    let i = 1;
    for (let s = e.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === e.tagName) i++;
    let many = i > 1;
    if (!many) for (let s = e.nextElementSibling; s; s = s.nextElementSibling) if (s.tagName === e.tagName) { many = true; break; }
    parts.unshift(e.tagName.toLowerCase() + (many ? "[" + i + "]" : ""));
  }
  return "/" + parts.join("/");
}
// Chains are emitted in the stored form (the one skills keep on disk): {type: "role_name", role, name}
// or {type: "accessible_name"|"css"|"xpath"|"text", value}.
function chainOf(el) {
  const role = roleOf(el);
  const [name] = nameOf(el, role);
  const chain = [];
  const root = el.getRootNode();
  if (role && name) chain.push({ type: "role_name", role: displayRole(el, role), name });
  if (name) chain.push({ type: "accessible_name", value: name });
  const tag = el.tagName.toLowerCase();
  const css = [];
  const tid = el.getAttribute("data-testid");
  if (tid) css.push("[data-testid=" + quote(tid) + "]");
  if (el.id && !GENERATED.test(el.id)) css.push("#" + cssEscape(el.id));
  const nm = el.getAttribute("name");
  if (nm) css.push(tag + "[name=" + quote(nm) + "]");
  for (const sel of css) if (uniqueIn(root, sel, el)) { chain.push({ type: "css", value: sel }); break; }
  if (root === document) chain.push({ type: "xpath", value: xpathOf(el) });
  const text = textOf(el);
  if (text && text.length <= 80) chain.push({ type: "text", value: text });
  return chain;
}

function matchEntry(entry) {
  const kind = entry.type;
  if (kind === "node_ref") {  // a ref of this document (refs never move to another element)
    const m = /^ax_(\d+)$/.exec(String(entry.value));
    const el = m ? lookup(+m[1]) : null;
    return el ? [el] : [];
  }
  if (kind === "css") {
    const found = [];
    const visit = (root) => {
      try { for (const e of root.querySelectorAll(entry.value)) found.push(e); } catch (e) { /* bad selector */ }
      for (const e of root.querySelectorAll("*")) if (e.shadowRoot) visit(e.shadowRoot);
    };
    visit(document);
    return found;
  }
  if (kind === "xpath") {
    const found = [];
    try {
      const r = document.evaluate(entry.value, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
      for (let i = 0; i < r.snapshotLength; i++) if (r.snapshotItem(i).nodeType === 1) found.push(r.snapshotItem(i));
    } catch (e) { /* bad xpath */ }
    return found;
  }
  const found = [];
  if (kind !== "role_name" && kind !== "accessible_name" && kind !== "text") return found;
  for (const el of allElements()) {
    // cheapest tests first: the role needs no style; hiddenTree and names do
    const role = roleOf(el);
    if (kind === "role_name" && displayRole(el, role) !== entry.role) continue;
    if (!role && !isInteractive(el, role)) continue;
    if (hiddenTree(el)) continue;
    if (kind === "role_name" || kind === "accessible_name") {
      const want = kind === "role_name" ? entry.name : entry.value;
      if (nameOf(el, role)[0] === want && visibleForAction(el)) found.push(el);
    } else if (textOf(el) === entry.value && visibleForAction(el)) {
      found.push(el);
    }
  }
  return found;
}

// ---- fingerprints: what a recorded element was, checked before a replayed step acts ----------
const FP_FIELDS = ["role", "name", "tag", "type", "name_attr", "autocomplete", "label"];
const FP_FOLD = new Set(["name", "label"]);  // compared without regard to case
function fingerprintOf(el) {
  const role = roleOf(el);
  const tag = el.tagName.toLowerCase();
  const formy = tag === "input" || tag === "button" || tag === "select" || tag === "textarea";
  return {
    role: displayRole(el, role), name: nameOf(el, role)[0], tag,
    type: formy ? String(el.type || "").toLowerCase() : "",
    name_attr: el.getAttribute("name") || "", autocomplete: squash(el.getAttribute("autocomplete")).toLowerCase(),
    label: labelText(el),
  };
}
// Fields of `fp` (recorded) that `cur` (found) disagrees with; fields missing from `fp` are not checked.
function differs(fp, cur, tolerate) {
  const out = [];
  for (const k of FP_FIELDS) {
    if (!(k in fp) || fp[k] === null || tolerate.includes(k)) continue;
    let a = squash(String(fp[k])), b = squash(String(cur[k] || ""));
    if (FP_FOLD.has(k)) { a = a.toLowerCase(); b = b.toLowerCase(); }
    if (a !== b) out.push(k);
  }
  return out;
}
function brief(el, cur, diff, noRef) {
  const out = { role: cur.role, name: cur.name, tag: cur.tag };
  if (!noRef) out.ref = PREFIX + refOf(el);
  if (cur.type) out.type = cur.type;
  if (diff) out.differs = diff;
  return out;
}
// Visible elements that could be the recorded one: same role and input type, fewest differences first.
function nearby(fp, tolerate, skip) {
  const out = [];
  for (const el of allElements()) {
    if (el === skip) continue;
    const role = roleOf(el);
    if (fp.role && displayRole(el, role) !== fp.role) continue;
    if (!role && !isInteractive(el, role)) continue;
    if (hiddenTree(el) || !visibleForAction(el)) continue;
    const cur = fingerprintOf(el);
    if (fp.type && cur.type !== fp.type) continue;
    out.push([differs(fp, cur, tolerate), el, cur]);
  }
  out.sort((a, b) => a[0].length - b[0].length);
  return out;
}
// One replay step: the chain's entries in order; the first element a chain entry singles out that
// agrees with the fingerprint (and is visible) is chosen, unless other visible elements agree as well.
// With `onlyFirst`, only an agreeing element singled out by the first entry counts (no refs assigned):
// the fast path, one round trip returning the element itself.
function resolveStep(chain, fp, tolerate, onlyFirst) {
  const counts = [];
  let refused = null;
  for (let i = 0; i < (onlyFirst ? Math.min(1, chain.length) : chain.length); i++) {
    let m;
    try { m = matchEntry(chain[i]); } catch (e) { m = []; }
    counts.push(m.length);
    if (m.length !== 1) continue;
    const el = m[0];
    const cur = fingerprintOf(el);
    const diff = differs(fp, cur, tolerate);
    if (!visibleForAction(el)) diff.push("visible");
    if (!diff.length) {
      const ok = { status: "ok", el, entry: i, counts, found: brief(el, cur, null, onlyFirst) };
      if (!onlyFirst) ok.ref = PREFIX + refOf(el);
      if (!Object.keys(fp).length) return ok;
      const twins = nearby(fp, tolerate, el).filter((t) => !t[0].length);
      if (onlyFirst && twins.length > (fp.twins || 0)) return { status: "ambiguous" };
      if (twins.length > (fp.twins || 0)) {
        return { status: "ambiguous", entry: i, counts, refused: brief(el, cur, []),
                 candidates: [brief(el, cur, [])].concat(twins.slice(0, 2).map((t) => brief(t[1], t[2], []))),
                 agreeing: twins.length + 1 };
      }
      return ok;
    }
    if (!refused) refused = { el, cur, diff, entry: i };
  }
  if (onlyFirst) return { status: "slow" };
  const out = { status: refused ? "refused" : "none", counts };
  if (refused) {
    out.entry = refused.entry;
    out.refused = brief(refused.el, refused.cur, refused.diff);
    out.found = {};
    for (const k of refused.diff) if (k !== "visible") out.found[k] = refused.cur[k];
  }
  if (Object.keys(fp).length) {
    // the refused element itself stays listed when its role and type agree (a renamed label: confirm it)
    out.candidates = nearby(fp, tolerate, null).slice(0, 3).map((t) => brief(t[1], t[2], t[0]));
  }
  return out;
}
function twinCount(el, fp) {
  let n = 0;
  for (const t of nearby(fp, [], el)) if (!t[0].length) n++;
  return n;
}

