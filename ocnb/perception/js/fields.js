// fields: values named by CSS selectors, per item or within a root (extract's "fields" op).
function deepAll(root, sel) {
  const out = [];
  const scopes = [root];
  for (const e of composedElements(root)) if (e.shadowRoot) scopes.push(e.shadowRoot);
  for (const s of scopes) for (const m of s.querySelectorAll(sel)) out.push(m);
  return out;
}
function fieldValue(el, attr) {
  if (!attr) return seenText(el);
  if (attr === "href" || attr === "src") return absUrl(el.getAttribute(attr));
  const v = el.getAttribute(attr);
  return v == null ? "" : v;
}
function named(root, spec) {
  const fields = Object.entries(spec.fields || {}).map(([name, s]) => {
    const at = s.lastIndexOf("@");
    const sel = at >= 0 ? s.slice(0, at).trim() : s.trim();
    return { name, spec: s, sel, attr: at >= 0 ? s.slice(at + 1).trim() : "" };
  });
  const check = (sel) => { try { document.createDocumentFragment().querySelector(sel); return null; } catch (e) { return String(e.message || e); } };
  for (const f of [{ sel: spec.item || "", spec: spec.item }, ...fields]) {
    if (!f.sel) continue;
    const err = check(f.sel);
    if (err) return { error: "malformed", selector: f.spec, message: err };
  }
  const columns = fields.map((f) => ({ name: f.name }));
  if (spec.item) {
    const items = deepAll(root, spec.item).filter(shown);
    if (!items.length) return { error: "nothing", selector: spec.item };
    const hit = new Array(fields.length).fill(false);
    const rows = items.map((it) => fields.map((f, i) => {
      const m = f.sel ? (it.matches(f.sel) ? it : deepAll(it, f.sel)[0]) : it;
      if (!m) return "";
      hit[i] = true;
      return fieldValue(m, f.attr);
    }));
    const miss = fields.findIndex((f, i) => !hit[i]);
    if (miss >= 0) return { error: "nothing", selector: fields[miss].spec, field: fields[miss].name };
    const ids = refsFor(items);
    return { columns: [...columns, { name: "ref" }], rows: rows.map((r, i) => [...r, ids[i]]) };
  }
  const lists = fields.map((f) => (f.sel ? deepAll(root, f.sel) : [root]).filter(shown).map((m) => fieldValue(m, f.attr)));
  const miss = lists.findIndex((l) => !l.length);
  if (miss >= 0) return { error: "nothing", selector: fields[miss].spec, field: fields[miss].name };
  const n = Math.max(...lists.map((l) => l.length));
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(lists.map((l) => (i < l.length ? l[i] : "")));
  return { columns, rows };
}
