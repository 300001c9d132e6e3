// items: repeated items found by structure (search results, cards, inbox rows), each item's fields
// aligned and named (extract's "items" op). Items are siblings (or children of sibling columns, for a
// grid split into columns) whose subtrees have one shape: the same tag paths and text slots. Class names only help:
// a class most items share names a field; a class one card has (rotating `c-3`, a hashed module
// class, "featured") is ignored.
const HASHY = /\d{3,}|^[a-z]{1,2}\d*$|^[A-Za-z0-9_-]*[A-Z][a-z]*[A-Z]|^css-|^sc-|^jsx-|^_/;
function stableClasses(el, common) {
  return Array.from(el.classList || []).filter((c) => !HASHY.test(c) && (!common || common.has(c))).sort();
}
const OUTSIDE_MAIN = (e) => ["NAV", "HEADER", "FOOTER", "ASIDE"].includes(e.tagName) ||
  ["navigation", "banner", "contentinfo", "complementary", "menu", "menubar"].includes(explicitRole(e));

// An element's shape: the set of tag paths under it (tags only), a "/t" slot where text is written.
const SHAPE_NODES = 120, SHAPE_DEPTH = 7;
// Tags one card writes where another writes a sibling tag (a featured card's <h2>, the others' <h3>).
const SHAPE_TAGS = { H1: "h", H2: "h", H3: "h", H4: "h", H5: "h", H6: "h", STRONG: "b", B: "b", EM: "i", I: "i" };
const shapeCache = new Map();
function shapeOf(el) {
  let set = shapeCache.get(el);
  if (set) return set;
  set = new Set();
  let n = 0;
  const walk = (e, path, depth) => {
    for (const c of childNodesOf(e)) {
      if (c.nodeType === 3) { if (/\S/.test(c.nodeValue)) set.add(path + "/t"); continue; }
      if (c.nodeType !== 1 || SKIP_TAGS.has(c.tagName)) continue;
      if (++n > SHAPE_NODES) { set.big = true; return; }
      const p = path + ">" + (SHAPE_TAGS[c.tagName] || c.tagName.toLowerCase());
      set.add(p);
      if (depth < SHAPE_DEPTH) walk(c, p, depth + 1);
    }
  };
  walk(el, el.tagName.toLowerCase(), 0);
  shapeCache.set(el, set);
  return set;
}
// How alike two shapes are: shared paths over all paths (1 = the same shape).
function alike(a, b) {
  if (a === b) return 1;
  let both = 0;
  for (const p of a) if (b.has(p)) both++;
  return both / (a.size + b.size - both || 1);
}
const ALIKE = 0.5;
// A cluster takes an element as like its first few members.
function joins(cluster, el) {
  if (cluster.tag !== el.tagName) return 0;
  const s = shapeOf(el);
  let best = 0;
  for (const m of cluster.items.slice(0, 4)) {
    const o = shapeOf(m);
    if (Math.min(o.size, s.size) < ALIKE * Math.max(o.size, s.size)) continue;  // too unlike in size to be alike
    best = Math.max(best, alike(o, s));
    if (best >= 0.9) break;
  }
  return best;
}
// Where an element first writes text (its lead: the tag path of its first text, a card's title): items
// whose content varies (a live feed's entries, a chapter's sections) still start alike.
const leadCache = new Map();
function leadOf(el) {
  if (leadCache.has(el)) return leadCache.get(el);
  let lead = "", n = 0;
  const walk = (e, path) => {
    for (const c of childNodesOf(e)) {
      if (lead || ++n > SHAPE_NODES) return;
      if (c.nodeType === 3) { if (/\S/.test(c.nodeValue)) lead = path + "/t"; continue; }
      if (c.nodeType !== 1 || SKIP_TAGS.has(c.tagName)) continue;
      walk(c, path + ">" + (SHAPE_TAGS[c.tagName] || c.tagName.toLowerCase()));
    }
  };
  walk(el, el.tagName.toLowerCase());
  leadCache.set(el, lead);
  return lead;
}
// The first class that is no hash (the items of one list often share it).
function classKey(el) {
  const first = Array.from(el.classList || []).find((c) => !HASHY.test(c));
  return first ? el.tagName + "." + first : "";
}
// An ad or a sponsored slot: said by its classes or id, its first words, or a frame inside.
const AD_WORD = /^(ad|ads|advert|adverts|advertisement|adslot|sponsor|sponsored|promo|promoted|dfp|gpt)$/i;
const AD_TEXT = /^(sponsored|advertisement|ad|promoted|anzeige|publicité|paid content)\b/i;
const adCache = new Map();
function isAd(el) {
  if (!adCache.has(el)) adCache.set(el, adLike(el));
  return adCache.get(el);
}
function adLike(el) {
  const words = ((el.className && el.className.baseVal === undefined ? el.className : "") + " " + (el.id || "")).split(/[\s_-]+/);
  if (words.some((w) => AD_WORD.test(w))) return true;
  const lead = leadOf(el);  // the first text it writes
  if (lead) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(), i = 0; t && i < 50; t = walker.nextNode(), i++) {
      if (!/\S/.test(t.nodeValue)) continue;
      if (AD_TEXT.test(squash(t.nodeValue))) return true;
      break;
    }
  }
  return !!el.querySelector("iframe");
}
// May `el` join `cluster` (siblings under one parent)? Alike in shape; or, for what is no ad, the same
// first class, or the same lead (a class-less list whose entries differ in length).
function fits(cluster, el) {
  if (cluster.tag !== el.tagName) return 0;
  // a region of the page (more than SHAPE_NODES elements) is no card: only a shared class joins regions
  if (shapeOf(el).big || shapeOf(cluster.items[0]).big) {
    const key = classKey(el);
    return key && key === cluster.key ? ALIKE : 0;
  }
  const s = joins(cluster, el);
  if (s >= ALIKE) return s;
  if (cluster.ad || isAd(el)) return 0;
  const key = classKey(el);
  if (key && key === cluster.key) return ALIKE;
  if (!key && !cluster.key && cluster.lead && leadOf(el) === cluster.lead) return ALIKE;
  return 0;
}
// The classes most items share (at least half of them, two at least): the ones that may name a field.
function commonClasses(items) {
  const count = new Map();
  for (const it of items.slice(0, 40)) {
    const here = new Set();
    for (const c of it.classList || []) here.add(c);
    for (const e of Array.from(it.querySelectorAll("[class]")).slice(0, 200)) for (const c of e.classList) here.add(c);
    for (const c of here) count.set(c, (count.get(c) || 0) + 1);
  }
  const need = Math.max(2, Math.ceil(Math.min(items.length, 40) / 2));
  return new Set(Array.from(count).filter(([, n]) => n >= need).map(([c]) => c));
}

const PRICE = /^[^\d]{0,4}\s?[$€£¥₹]\s?\d|^\d[\d.,\s]*\s?(?:[$€£¥₹]|USD|EUR|GBP|Kč|zł)$|^[$€£¥₹]/;
const DATE = /^(?:\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d|\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|\d+ (?:sec|min|minute|hour|day|week|month|year)s? ago|yesterday|today|\d{1,2}:\d{2})/i;
const RATING = /^(?:rated\s+)?\d(?:[.,]\d)?\s*(?:\/\s*(?:5|10)|out of (?:5|10)|stars?\b|★)|^[★☆]{3,}|^\d(?:[.,]\d)?\s*[★☆]/i;
const DURATION = /^\d+(?:[.,]\d+)?\s*(?:s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?)$/i;
// What a text holds, when it says: a price, a rating, a date, a duration.
function textSort(t) {
  if (PRICE.test(t)) return "price";
  if (RATING.test(t)) return "rating";
  if (DATE.test(t)) return "date";
  if (DURATION.test(t)) return "duration";
  return "text";
}

// The fields of one item: [{key, kind, sort, text, url, el}] in document order. A key is the field's
// tag path in the item, with the classes most items share (`common`) as a helper.
function fieldsOf(item, common) {
  const out = [];
  const pathOf = (el) => {
    const p = [];
    for (let e = el; e && e !== item; e = e.parentElement || e.getRootNode().host) {
      const c = stableClasses(e, common);
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
      if (text) { out.push({ key, kind: "text", sort: textSort(text), text, el }); }
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
// Under each parent its children are clustered by shape (an ad between cards, a different shape, is
// left out; a featured first item with an extra badge is still alike); clusters of one shape under
// parents that are siblings (a grid split into columns, several items each) are one group, in
// document order.
function itemGroups(root) {
  const clusters = [];
  for (const parent of [root, ...composedElements(root)]) {
    const ch = parent.nodeType === 1 && parent.shadowRoot ? parent.shadowRoot.children : parent.children;
    if (!ch || !ch.length) continue;
    const here = [];
    for (const c of ch) {
      if (SKIP_TAGS.has(c.tagName)) continue;
      let best = null, score = ALIKE;
      for (const cl of here) { const s = fits(cl, c); if (s >= score) { best = cl; score = s; } }
      if (best) best.items.push(c);
      else here.push({ tag: c.tagName, items: [c], parent, home: parent, key: classKey(c), lead: leadOf(c), ad: isAd(c) });
    }
    for (const cl of here) clusters.push(cl);
  }
  // one group across columns: clusters of one shape whose parents are siblings of one tag (each
  // cluster joins the first group it is alike to: linear in the clusters under one grandparent)
  const up = (e) => (e && (e.parentElement || (e.getRootNode && e.getRootNode().host))) || null;
  const byKin = new Map();
  for (const cl of clusters) {
    if (cl.home === root || cl.items.length > 200) continue;
    const kin = up(cl.home);
    if (!kin) continue;
    if (!byKin.has(kin)) byKin.set(kin, []);
    byKin.get(kin).push(cl);
  }
  const merged = new Set();
  for (const [kin, cls] of byKin) {
    if (cls.length < 2) continue;
    const groups = [];
    for (const b of cls) {
      const a = groups.find((g) => g.tag === b.tag && g.home.tagName === b.home.tagName && !g.homes.has(b.home) &&
        joins(g, b.items[0]) >= ALIKE);
      if (!a) { b.homes = new Set([b.home]); groups.push(b); continue; }
      a.parts = a.parts || [a.items.slice()];
      a.parts.push(b.items.slice());
      a.items.push(...b.items);
      a.homes.add(b.home);
      a.parents = a.homes;
      a.parent = kin;
      merged.add(b);
    }
  }
  // a list in columns holds several items per column; else its parts are lists of their own
  const lists = [];
  for (const cl of clusters) {
    if (merged.has(cl)) continue;
    const seen = cl.parents ? cl.items.filter((e) => shown(e) && squash(e.textContent || "").length > 0).length : 0;
    if (cl.parents && seen < 1.5 * cl.parents.size) {
      for (const part of cl.parts) lists.push({ items: part, parent: part[0].parentElement || cl.home });
    } else lists.push(cl);
  }
  const found = [];
  for (const cl of lists) {
    if (cl.items.length < 2) continue;
    let items = cl.items.filter((e) => shown(e) && squash(e.textContent || "").length > 0);
    if (items.length < 2) continue;
    items = items.sort((x, y) => (x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    const common = commonClasses(items);
    let kinds = 0, textLen = 0;
    const sample = items.slice(0, 30);
    for (const it of sample) {
      const f = fieldsOf(it, common);
      kinds += new Set(f.map((x) => x.key)).size;
      textLen += seenText(it).length;
    }
    const rich = kinds / sample.length;
    if (rich < 2) continue;
    let score = items.length * Math.min(rich, 8) * Math.log(2 + textLen / sample.length);
    if (closestAcross(items[0], OUTSIDE_MAIN) || OUTSIDE_MAIN(cl.parent)) score *= 0.2;
    if (textLen / sample.length > 1500) score *= 0.3;  // regions of the page, not items
    if (sample.filter((it) => shapeOf(it).big).length * 2 > sample.length) score *= 0.5;  // (more than SHAPE_NODES elements each)
    found.push({ score, items, parent: cl.parent, common, parents: cl.parents });
  }
  // the columns themselves (alike, side by side, each holding several items and little else) are no items
  const holders = new Set();
  for (const g of found) {
    if (!g.parents || g.items.length < 1.5 * g.parents.size) continue;
    const mine = new Set(g.items);
    for (const p of g.parents) {
      const kids = Array.from(p.children).filter((c) => !SKIP_TAGS.has(c.tagName));
      if (kids.filter((c) => mine.has(c)).length >= 0.8 * kids.length) holders.add(p);
    }
  }
  return found.filter((g) => !g.items.every((e) => holders.has(e))).sort((a, b) => b.score - a.score);
}

const TAG_WORDS = { CITE: "site", ADDRESS: "address", BLOCKQUOTE: "quote", FIGCAPTION: "caption", LABEL: "label" };
function classWord(el, item, common) {
  for (let e = el; e && e !== item; e = e.parentElement) {
    for (const c of stableClasses(e, common)) {
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

const RESCUED = new Set(["title", "url", "image", "date"]);
// The items as rows: each field a column named from what it holds, the same on every item.
function itemsTable(best) {
  const items = best.items;
  const perItem = items.map((it) => fieldsOf(it, best.common));
  // a field's column: its path, kind and sort ("price", "rating", …); several in one item are joined
  for (const fs of perItem) for (const f of fs) { f.col = f.key + "|" + f.kind + "|" + (f.sort || ""); f.slot = f.key + "|" + f.kind; }
  const keys = new Map();  // col → {kind, count, first position, sample els, the items holding it}
  perItem.forEach((fs, itemIndex) => {
    fs.forEach((f, pos) => {
      let k = keys.get(f.col);
      if (!k) { k = { col: f.col, slot: f.slot, key: f.key, kind: f.kind, sort: f.sort, pos, els: [], values: [], holders: new Set(), item: items[itemIndex] }; keys.set(f.col, k); }
      k.holders.add(itemIndex);
      k.pos = Math.min(k.pos, pos);
      if (k.els.length < 5) k.els.push(f.el);
      k.values.push(f.text);
    });
  });
  // One field, two columns: the same slot holding a price on most cards and "Free" on one; or a field
  // that one card (a featured one) writes in another element. Columns no item holds both of are one.
  const need = Math.max(2, Math.ceil(items.length * 0.2));
  const into = new Map();
  const all = Array.from(keys.values()).sort((a, b) => b.holders.size - a.holders.size);
  for (let i = 0; i < all.length; i++) {
    const a = all[i];
    if (into.has(a.col)) continue;
    for (let j = i + 1; j < all.length; j++) {
      const b = all[j];
      if (into.has(b.col) || b.kind !== a.kind) continue;
      const sameSlot = b.slot === a.slot;
      // (a rescue is for a card's title, link, image or date written in another element, on lists of 3+)
      const rescue = items.length >= 3 && b.holders.size < need && RESCUED.has(a.kind) && (b.sort || "") === (a.sort || "");
      if (!sameSlot && !rescue) continue;
      if (Array.from(b.holders).some((h) => a.holders.has(h))) continue;
      for (const h of b.holders) a.holders.add(h);
      a.values.push(...b.values);
      a.pos = Math.min(a.pos, b.pos);
      into.set(b.col, a.col);
    }
  }
  for (const fs of perItem) for (const f of fs) if (into.has(f.col)) f.col = into.get(f.col);
  for (const col of into.keys()) keys.delete(col);
  const sortOf = (k) => {  // the sort most of a column's values have
    const n = new Map();
    for (const v of k.values) if (v) { const s = textSort(v); n.set(s, (n.get(s) || 0) + 1); }
    let best = "text", most = 0;
    for (const [s, c] of n) if (c > most) { best = s; most = c; }
    return most * 2 > k.values.filter((v) => v).length ? best : "text";
  };
  let cols = Array.from(keys.values()).filter((k) => k.holders.size >= Math.min(need, items.length));
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
    columns.push({ name: n, col: k.col, part });
  };
  const bold = (el) => parseInt(style(el).fontWeight, 10) >= 600;
  for (const k of cols) {
    if (k.kind === "title") { add(titles.length > 1 && k !== titles[0] ? "subtitle" : "title", k, "text"); continue; }
    if (k.kind === "image") { add("image", k, "text"); continue; }
    if (k.kind === "date") { add("date", k, "text"); continue; }
    if (k.kind === "url") { add(k.values.every((v) => v) && !used.has("url") ? "url" : (classWord(k.els[0], k.item, best.common) || "link") + "_url", k, "text"); continue; }
    const word = classWord(k.els[0], k.item, best.common);
    const vals = k.values.filter((v) => v);
    if (k.kind === "link") {
      const sameAsTitle = vals.every((v) => titleText.has(v));
      if (!sameAsTitle) add(word || (titles.length || used.has("title") ? "link" : "title"), k, "text");
      add(!used.has("url") ? "url" : (word || "link") + "_url", k, "url");
      continue;
    }
    const sort = sortOf(k);
    if (sort === "price" || sort === "rating" || sort === "duration") { add(sort, k, "text"); continue; }
    if (sort === "date") { add(word && word !== "date" && word !== "time" ? word : "date", k, "text"); continue; }
    if (!word && !titles.length && !used.has("title") && k.els.every(bold)) { add("title", k, "text"); continue; }
    add(word || "text", k, "text");
  }
  let rows = perItem.map((fs) => columns.map((c) => {
    const hits = fs.filter((f) => f.col === c.col);
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
