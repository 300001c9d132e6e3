// items: repeated items found by structure (search results, cards, inbox rows), each item's fields
// aligned and named (extract's "items" op).
const HASHY = /\d{3,}|^[a-z]{1,2}\d*$|^[A-Za-z0-9_-]*[A-Z][a-z]*[A-Z]|^css-|^sc-|^jsx-|^_/;
function stableClasses(el) {
  return Array.from(el.classList || []).filter((c) => !HASHY.test(c)).sort();
}
// Items share a shape: their tag and first stable class ("row msg unread" and "row msg" alike), or their
// tag and role when they have no class.
function shape(el) {
  const first = Array.from(el.classList || []).find((c) => !HASHY.test(c));
  return el.tagName + (first ? "." + first : "[" + explicitRole(el) + "]");
}
const OUTSIDE_MAIN = (e) => ["NAV", "HEADER", "FOOTER", "ASIDE"].includes(e.tagName) ||
  ["navigation", "banner", "contentinfo", "complementary", "menu", "menubar"].includes(explicitRole(e));

// The fields of one item: [{key, kind, text, url, el}] in document order.
function fieldsOf(item) {
  const out = [];
  const pathOf = (el) => {
    const p = [];
    for (let e = el; e && e !== item; e = e.parentElement || e.getRootNode().host) {
      const c = stableClasses(e);
      p.push(e.tagName.toLowerCase() + (c.length ? "." + c[0] : ""));
    }
    return p.reverse().join(">");
  };
  const visit = (el, inTitle) => {
    if (SKIP_TAGS.has(el.tagName) || style(el).display === "none") return;
    const tag = el.tagName;
    const role = explicitRole(el);
    if (tag === "BUTTON" || role === "button" || tag === "SELECT" || tag === "TEXTAREA" || tag === "FORM") return;
    if (tag === "INPUT") return;
    const key = pathOf(el);
    if (/^H[1-6]$/.test(tag) || role === "heading") {
      const text = seenText(el);
      if (text) out.push({ key, kind: "title", text, el });
      const a = el.querySelector("a[href]");
      if (a) out.push({ key: key + "@href", kind: "url", text: a.href, el: a });
      return;
    }
    if (tag === "A" && el.hasAttribute("href")) {
      const text = seenText(el);
      const hasBlock = Array.from(el.children).some((c) => !INLINE_DISPLAY.test(style(c).display));
      const imgs = el.querySelectorAll("img");
      if (!hasBlock && imgs.length && !squash(el.innerText || "")) {  // an image link: its url and its image
        out.push({ key: key + "@href", kind: "url", text: el.href, el });
        for (const img of imgs) if (img.currentSrc || img.src) out.push({ key: pathOf(img), kind: "image", text: img.currentSrc || img.src, el: img });
        return;
      }
      if (!hasBlock) {
        out.push({ key, kind: "link", text, url: el.href, el });
        for (const img of el.querySelectorAll("img")) if (img.currentSrc || img.src) out.push({ key: pathOf(img), kind: "image", text: img.currentSrc || img.src, el: img });
        return;
      }
      out.push({ key: key + "@href", kind: "url", text: el.href, el });
    }
    if (tag === "IMG") {
      const src = el.currentSrc || el.src;
      if (src && shown(el)) out.push({ key, kind: "image", text: src, el });
      return;
    }
    if (tag === "TIME") {
      const text = seenText(el);
      if (text) out.push({ key, kind: "date", text, el });
      return;
    }
    let own = "";
    for (const c of el.childNodes) if (c.nodeType === 3) own += c.nodeValue;
    if (squash(own)) {
      const text = seenText(el, (e) => e.tagName === "BUTTON" || explicitRole(e) === "button");
      if (text) { out.push({ key, kind: "text", text, el }); }
      // text beside inline children: those children are part of this text (a link inside keeps its url)
      for (const c of el.querySelectorAll("a[href]")) out.push({ key: pathOf(c) + "@href", kind: "url", text: c.href, el: c });
      return;
    }
    for (const c of childNodesOf(el)) if (c.nodeType === 1) visit(c, inTitle);
  };
  for (const c of childNodesOf(item)) if (c.nodeType === 1) visit(c, false);
  return out;
}

// Candidate item groups, the best first: many items, each with several fields, in the main content.
function itemGroups(root) {
  const found = [];
  for (const parent of [root, ...composedElements(root)]) {
    const ch = parent.nodeType === 1 && parent.shadowRoot ? parent.shadowRoot.children : parent.children;
    if (!ch || ch.length < 2) continue;
    const groups = new Map();
    for (const c of ch) {
      if (SKIP_TAGS.has(c.tagName)) continue;
      const k = shape(c);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(c);
    }
    for (const [, els] of groups) {
      if (els.length < 2) continue;
      const items = els.filter((e) => shown(e) && squash(e.textContent || "").length > 0);
      if (items.length < 2) continue;
      let kinds = 0, textLen = 0;
      const sample = items.slice(0, 30);
      for (const it of sample) {
        const f = fieldsOf(it);
        kinds += new Set(f.map((x) => x.key)).size;
        textLen += seenText(it).length;
      }
      const rich = kinds / sample.length;
      if (rich < 2) continue;
      let score = items.length * Math.min(rich, 8) * Math.log(2 + textLen / sample.length);
      if (closestAcross(items[0], OUTSIDE_MAIN) || OUTSIDE_MAIN(parent)) score *= 0.2;
      found.push({ score, items, parent });
    }
  }
  return found.sort((a, b) => b.score - a.score);
}

const PRICE = /^[^\d]{0,4}\s?[$€£¥₹]\s?\d|^\d[\d.,\s]*\s?(?:[$€£¥₹]|USD|EUR|GBP|Kč|zł)$|^[$€£¥₹]/;
const DATE = /^(?:\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d|\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|\d+ (?:sec|min|minute|hour|day|week|month|year)s? ago|yesterday|today|\d{1,2}:\d{2})/i;
const TAG_WORDS = { CITE: "site", ADDRESS: "address", BLOCKQUOTE: "quote", FIGCAPTION: "caption", LABEL: "label" };
function classWord(el, item) {
  for (let e = el; e && e !== item; e = e.parentElement) {
    for (const c of stableClasses(e)) {
      let w = c.split("--")[0];
      if (w.includes("__")) w = w.split("__").pop();
      const words = w.split(/[-_]/).filter((x) => x && !/^(item|card|result|post|row|msg|message|entry|product|list|text|content|inner|wrap|wrapper|container|body|col|cell|field|meta|info|details|js)$/i.test(x));
      if (words.length) return words[words.length - 1].toLowerCase();
    }
    const ip = e.getAttribute("itemprop") || e.getAttribute("data-field") || e.getAttribute("data-testid");
    if (ip) return ip.toLowerCase().replace(/[^a-z0-9]+/g, "_");
    if (TAG_WORDS[e.tagName]) return TAG_WORDS[e.tagName];
  }
  return "";
}

function itemsTable(best) {
  const items = best.items;
  const perItem = items.map(fieldsOf);
  const keys = new Map();  // key → {kind, count, first position, sample els}
  perItem.forEach((fs) => {
    const seenHere = new Set();
    fs.forEach((f, pos) => {
      let k = keys.get(f.key + "|" + f.kind);
      if (!k) { k = { key: f.key, kind: f.kind, count: 0, pos: pos, els: [], values: [] }; keys.set(f.key + "|" + f.kind, k); }
      if (!seenHere.has(f.key + "|" + f.kind)) { k.count++; seenHere.add(f.key + "|" + f.kind); }
      k.pos = Math.min(k.pos, pos);
      if (k.els.length < 5) k.els.push(f.el);
      if (!k.item) k.item = items[perItem.indexOf(fs)];
      k.values.push(f.text);
    });
  });
  const need = Math.max(2, Math.ceil(items.length * 0.2));
  let cols = Array.from(keys.values()).filter((k) => k.count >= Math.min(need, items.length));
  cols.sort((a, b) => a.pos - b.pos);
  // a column whose text is the same in every item says nothing about the item ("Reply", "Add to cart")
  cols = cols.filter((k) => k.kind === "image" || k.kind === "url" || items.length < 3 || new Set(k.values).size > 1);
  const titles = cols.filter((k) => k.kind === "title");
  const titleText = new Set();
  perItem.forEach((fs) => fs.forEach((f) => { if (f.kind === "title") titleText.add(f.text); }));
  const columns = [];
  const used = new Map();
  const add = (name, k, part) => {
    let n = name, i = 2;
    while (used.has(n)) n = name + "_" + i++;
    used.set(n, true);
    columns.push({ name: n, key: k.key + "|" + k.kind, part });
  };
  for (const k of cols) {
    if (k.kind === "title") { add(titles.length > 1 && k !== titles[0] ? "subtitle" : "title", k, "text"); continue; }
    if (k.kind === "image") { add("image", k, "text"); continue; }
    if (k.kind === "date") { add("date", k, "text"); continue; }
    if (k.kind === "url") { add(k.values.every((v) => v) && !used.has("url") ? "url" : (classWord(k.els[0], k.item) || "link") + "_url", k, "text"); continue; }
    const word = classWord(k.els[0], k.item);
    const vals = k.values.filter((v) => v);
    const isPrice = vals.length && vals.every((v) => PRICE.test(v));
    const isDate = vals.length && vals.every((v) => DATE.test(v));
    if (k.kind === "link") {
      const sameAsTitle = vals.every((v) => titleText.has(v));
      if (!sameAsTitle) add(word || (titles.length ? "link" : "title"), k, "text");
      add(!used.has("url") ? "url" : (word || "link") + "_url", k, "url");
      continue;
    }
    add(isPrice ? "price" : isDate ? (word && word !== "date" && word !== "time" ? word : "date") : (word || "text"), k, "text");
  }
  let rows = perItem.map((fs) => columns.map((c) => {
    const hits = fs.filter((f) => f.key + "|" + f.kind === c.key);
    return Array.from(new Set(hits.map((f) => (c.part === "url" ? f.url : f.text)).filter((v) => v))).join("; ");
  }));
  // a column equal to an earlier one in every item (the card's image link and its title link) once
  const keep = columns.map((c, i) => !columns.slice(0, i).some((_, j) => rows.every((r) => r[j] === r[i])));
  rows = rows.map((r) => r.filter((_, i) => keep[i]));
  const kept = columns.filter((_, i) => keep[i]);
  const ids = refsFor(items);
  return {
    container: refsFor([best.parent.host || best.parent])[0] || null,
    columns: [...kept.map((c) => ({ name: c.name })), { name: "ref" }],
    rows: rows.map((r, i) => [...r, ids[i]]),
  };
}
