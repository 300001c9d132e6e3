// ocnb extract: page data as rows, evaluated per frame like snapshot.js (which must already be loaded in
// the document: refs are assigned through its "refs" op, so an item's ref is the one read_page shows).
// An expression whose value is a function `(req) => {result, next}`; req: {op, next, ref?, ...}.
//   op "tables": every visible table (HTML, ARIA grid/table/treegrid, div rows with role=row) under the
//                root → [{ref, caption, columns, rows, header}] (cells as text a person sees, spans expanded)
//   op "items":  repeated items found by structure under the root → {ref, columns, rows} or null
//   op "fields": {item?, fields: {name: "css" | "css@attr"}} → {columns, rows} or {error, selector}
(function ocnbExtract(req) {
  const P = window[Symbol.for("ocnb.perception.fn")];
  let next = req.next || 1;
  const PREFIX = "ax_";
  function refs(els) {
    if (!els.length) return [];
    const r = P({ op: "refs", els, next });
    next = r.next;
    return r.result.map((n) => PREFIX + n);
  }
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE", "BASE"]);
  const BLOCK_INLINE = /^inline(?!-block|-flex|-grid|-table)/;
  const ws = (s) => (s || "").replace(/[\s\u00a0\u200b]+/g, " ").trim();
  const styles = new Map();
  function style(el) {
    let s = styles.get(el);
    if (!s) { s = getComputedStyle(el); styles.set(el, s); }
    return s;
  }
  function shown(el) { return el.checkVisibility ? el.checkVisibility() : style(el).display !== "none"; }
  function kids(el) {
    if (el.shadowRoot) return el.shadowRoot.childNodes;
    if (el.tagName === "SLOT") { const a = el.assignedNodes(); return a.length ? a : el.childNodes; }
    return el.childNodes;
  }
  function* deep(root) {  // every element under root, open shadow roots included, in document order
    const stack = [root];
    while (stack.length) {
      const n = stack.pop();
      const ch = n.nodeType === 1 && n.shadowRoot ? n.shadowRoot.children : n.children;
      if (n.nodeType === 1 && n !== root) yield n;
      if (!ch) continue;
      for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i]);
    }
  }
  function closestAcross(el, pred) {  // nearest ancestor (crossing shadow boundaries) matching pred
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

  // The text a person sees in a cell or field: visible text, an input's value (never a password's), the
  // selected option; an image's alt text only when nothing else is written there.
  function textOf(root, skip) {
    const parts = [];
    const alts = [];
    const visit = (n) => {
      if (n.nodeType === 3) {
        const p = n.parentElement;
        const v = p ? style(p).visibility : "visible";
        if (v !== "hidden" && v !== "collapse") parts.push(n.nodeValue);
        return;
      }
      if (n.nodeType !== 1 || SKIP.has(n.tagName)) return;
      if (skip && n !== root && skip(n)) return;
      const tag = n.tagName;
      const s = style(n);
      if (s.display === "none") return;
      if (tag === "INPUT") {
        const t = (n.type || "").toLowerCase();
        if (t === "hidden" || t === "image" || t === "file") return;
        if (t === "password") { if (n.value) parts.push(" •••• "); return; }
        if (t === "checkbox" || t === "radio") { parts.push(n.checked ? " true " : " false "); return; }
        parts.push(" " + (n.value || "") + " ");
        return;
      }
      if (tag === "TEXTAREA") { parts.push(" " + n.value + " "); return; }
      if (tag === "SELECT") {
        parts.push(" " + Array.from(n.selectedOptions).map((o) => o.textContent).join(", ") + " ");
        return;
      }
      if (tag === "IMG") { const a = n.getAttribute("alt"); if (a && ws(a)) alts.push(ws(a)); return; }
      if (tag === "BR") { parts.push(" "); return; }
      const block = n !== root && !BLOCK_INLINE.test(s.display);
      if (block) parts.push(" ");
      for (const c of kids(n)) visit(c);
      if (block) parts.push(" ");
    };
    visit(root);
    const text = ws(parts.join(""));
    return text || alts.join(" ");
  }

  // ---- tables ------------------------------------------------------------------------------------
  const GRID_ROLES = new Set(["grid", "table", "treegrid"]);
  const CELL_ROLES = new Set(["cell", "gridcell", "columnheader", "rowheader"]);
  const roleOf = (el) => ((el.getAttribute("role") || "").trim().split(/\s+/)[0] || "").toLowerCase();
  const isTableLike = (el) => el.tagName === "TABLE" || GRID_ROLES.has(roleOf(el));

  function captionOf(t) {
    if (t.tagName === "TABLE" && t.caption) return ws(textOf(t.caption));
    const al = t.getAttribute("aria-label");
    if (al) return ws(al);
    const by = t.getAttribute("aria-labelledby");
    if (by) {
      const root = t.getRootNode();
      return ws(by.split(/\s+/).map((id) => { const e = root.getElementById ? root.getElementById(id) : null; return e ? textOf(e) : ""; }).join(" "));
    }
    return "";
  }

  // A cell as {text, url, header, rowspan, colspan}: the url kept when the cell is one link.
  function cell(td, header) {
    const text = textOf(td);
    let url = "";
    const links = td.querySelectorAll("a[href]");
    if (links.length === 1 && ws(textOf(links[0])) === text && text) url = links[0].href;
    const span = (a, b) => { const v = parseInt(td.getAttribute(a) || td.getAttribute(b) || "1", 10); return v > 0 ? Math.min(v, 1000) : 1; };
    return { text, url, header, rowspan: span("rowspan", "aria-rowspan"), colspan: span("colspan", "aria-colspan") };
  }

  // Rows of cells → a grid with colspan and rowspan expanded (a spanned cell's text in every slot).
  function expand(rows) {
    const out = [];
    let carry = [];  // per column: {cell, left}
    for (const row of rows) {
      const line = [];
      let col = 0;
      const nextCarry = [];
      const takeCarried = () => {
        while (carry[col] && carry[col].left > 0) {
          line[col] = carry[col].cell;
          nextCarry[col] = { cell: carry[col].cell, left: carry[col].left - 1 };
          col++;
        }
      };
      for (const c of row) {
        takeCarried();
        for (let k = 0; k < c.colspan; k++) {
          line[col] = c;
          if (c.rowspan > 1) nextCarry[col] = { cell: c, left: c.rowspan - 1 };
          col++;
        }
      }
      takeCarried();
      for (let i = 0; i < line.length; i++) if (!line[i]) line[i] = { text: "", url: "", header: false };
      out.push(line);
      carry = nextCarry;
    }
    return out;
  }

  function htmlTableRows(t) {
    const head = [], body = [], foot = [];
    for (const tr of t.rows) {
      if (!shown(tr)) continue;
      const sect = tr.parentElement && tr.parentElement.tagName;
      (sect === "THEAD" ? head : sect === "TFOOT" ? foot : body).push(tr);
    }
    const cellsOf = (tr) => Array.from(tr.cells).filter(shown).map((td) => cell(td, td.tagName === "TH"));
    let headRows = head.map(cellsOf);
    const bodyRows = body.map(cellsOf);
    if (!headRows.length) {
      while (bodyRows.length > 1 && bodyRows[0].length && bodyRows[0].every((c) => c.header)) headRows.push(bodyRows.shift());
    }
    return { headRows, bodyRows: bodyRows.concat(foot.map(cellsOf)) };
  }

  function ariaRows(container, rowEls) {
    const headRows = [], bodyRows = [];
    for (const r of rowEls) {
      if (!shown(r)) continue;
      const cells = [];
      for (const c of deep(r)) {
        if (!CELL_ROLES.has(roleOf(c)) && !(c.tagName === "TD" || c.tagName === "TH")) continue;
        if (closestAcross(c, (e) => roleOf(e) === "row" || e.tagName === "TR") !== r) continue;
        if (!shown(c)) continue;
        cells.push(cell(c, roleOf(c) === "columnheader"));
      }
      if (!cells.length) continue;
      if (!bodyRows.length && cells.every((c) => c.header)) headRows.push(cells);
      else bodyRows.push(cells);
    }
    return { headRows, bodyRows };
  }

  function buildTable(el, parts) {
    const head = expand(parts.headRows);
    const body = expand(parts.bodyRows).filter((r) => r.some((c) => c.text));
    const width = Math.max(0, ...head.map((r) => r.length), ...body.map((r) => r.length));
    if (!body.length || !width) return null;
    const names = [];
    for (let i = 0; i < width; i++) {
      const seen = [];
      for (const r of head) { const t = r[i] ? r[i].text : ""; if (t && seen[seen.length - 1] !== t) seen.push(t); }
      names.push(seen.join(" "));
    }
    // a column that holds links gets a "<name> url" column beside it
    const linkCols = new Set();
    for (const r of body) r.forEach((c, i) => { if (c.url) linkCols.add(i); });
    const columns = [], rows = body.map(() => []);
    for (let i = 0; i < width; i++) {
      columns.push({ name: names[i], index: i });
      body.forEach((r, k) => rows[k].push(r[i] ? r[i].text : ""));
      if (linkCols.has(i)) {
        columns.push({ name: (names[i] || "col" + (i + 1)) + " url", index: i, url: true });
        body.forEach((r, k) => rows[k].push(r[i] ? r[i].url : ""));
      }
    }
    return { el, caption: captionOf(el), header: head.length > 0, columns, rows };
  }

  function findTables(root, only) {
    const found = [];
    const seen = new Set();
    const candidates = only ? [only] : Array.from(deep(root)).filter((e) => isTableLike(e) || roleOf(e) === "row");
    const orphanGroups = new Map();
    for (const el of candidates) {
      if (el.tagName === "TABLE") {
        const r = roleOf(el);
        if ((r === "presentation" || r === "none") && !only) continue;
        if (!shown(el)) continue;
        const t = buildTable(el, htmlTableRows(el));
        if (t) found.push(t);
      } else if (GRID_ROLES.has(roleOf(el))) {
        if (!shown(el)) continue;
        const rows = Array.from(deep(el)).filter((r) => roleOf(r) === "row" && closestAcross(r, isTableLike) === el);
        rows.forEach((r) => seen.add(r));
        const t = buildTable(el, ariaRows(el, rows));
        if (t) found.push(t);
      } else if (roleOf(el) === "row" && !seen.has(el) && !closestAcross(el, isTableLike)) {
        // div rows with no table around them: one table per parent (a rowgroup's parent)
        let group = el.parentElement || el.getRootNode().host;
        if (group && roleOf(group) === "rowgroup") group = group.parentElement || group.getRootNode().host;
        if (!orphanGroups.has(group)) orphanGroups.set(group, []);
        orphanGroups.get(group).push(el);
      }
    }
    for (const [group, rows] of orphanGroups) {
      if (!group || !shown(group)) continue;
      const t = buildTable(group, ariaRows(group, rows));
      if (t) found.push(t);
    }
    const ids = refs(found.map((t) => t.el));
    return found.map((t, i) => ({ ref: ids[i], caption: t.caption, header: t.header, columns: t.columns, rows: t.rows }));
  }

  // ---- repeated items ----------------------------------------------------------------------------
  const HASHY = /\d{3,}|^[a-z]{1,2}\d*$|^[A-Za-z0-9_-]*[A-Z][a-z]*[A-Z]|^css-|^sc-|^jsx-|^_/;
  function stableClasses(el) {
    return Array.from(el.classList || []).filter((c) => !HASHY.test(c)).sort();
  }
  // Items share a shape: their tag and first stable class ("row msg unread" and "row msg" alike), or their
  // tag and role when they have no class.
  function shape(el) {
    const first = Array.from(el.classList || []).find((c) => !HASHY.test(c));
    return el.tagName + (first ? "." + first : "[" + roleOf(el) + "]");
  }
  const OUTSIDE_MAIN = (e) => ["NAV", "HEADER", "FOOTER", "ASIDE"].includes(e.tagName) ||
    ["navigation", "banner", "contentinfo", "complementary", "menu", "menubar"].includes(roleOf(e));

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
      if (SKIP.has(el.tagName) || style(el).display === "none") return;
      const tag = el.tagName;
      const role = roleOf(el);
      if (tag === "BUTTON" || role === "button" || tag === "SELECT" || tag === "TEXTAREA" || tag === "FORM") return;
      if (tag === "INPUT") return;
      const key = pathOf(el);
      if (/^H[1-6]$/.test(tag) || role === "heading") {
        const text = textOf(el);
        if (text) out.push({ key, kind: "title", text, el });
        const a = el.querySelector("a[href]");
        if (a) out.push({ key: key + "@href", kind: "url", text: a.href, el: a });
        return;
      }
      if (tag === "A" && el.hasAttribute("href")) {
        const text = textOf(el);
        const hasBlock = Array.from(el.children).some((c) => !BLOCK_INLINE.test(style(c).display));
        const imgs = el.querySelectorAll("img");
        if (!hasBlock && imgs.length && !ws(el.innerText || "")) {  // an image link: its url and its image
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
        const text = textOf(el);
        if (text) out.push({ key, kind: "date", text, el });
        return;
      }
      let own = "";
      for (const c of el.childNodes) if (c.nodeType === 3) own += c.nodeValue;
      if (ws(own)) {
        const text = textOf(el, (e) => e.tagName === "BUTTON" || roleOf(e) === "button");
        if (text) { out.push({ key, kind: "text", text, el }); }
        // text beside inline children: those children are part of this text (a link inside keeps its url)
        for (const c of el.querySelectorAll("a[href]")) out.push({ key: pathOf(c) + "@href", kind: "url", text: c.href, el: c });
        return;
      }
      for (const c of kids(el)) if (c.nodeType === 1) visit(c, inTitle);
    };
    for (const c of kids(item)) if (c.nodeType === 1) visit(c, false);
    return out;
  }

  // Candidate item groups, the best first: many items, each with several fields, in the main content.
  function itemGroups(root) {
    const found = [];
    for (const parent of [root, ...deep(root)]) {
      const ch = parent.nodeType === 1 && parent.shadowRoot ? parent.shadowRoot.children : parent.children;
      if (!ch || ch.length < 2) continue;
      const groups = new Map();
      for (const c of ch) {
        if (SKIP.has(c.tagName)) continue;
        const k = shape(c);
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k).push(c);
      }
      for (const [, els] of groups) {
        if (els.length < 2) continue;
        const items = els.filter((e) => shown(e) && ws(e.textContent || "").length > 0);
        if (items.length < 2) continue;
        let kinds = 0, textLen = 0;
        const sample = items.slice(0, 30);
        for (const it of sample) {
          const f = fieldsOf(it);
          kinds += new Set(f.map((x) => x.key)).size;
          textLen += textOf(it).length;
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
    const ids = refs(items);
    return {
      container: refs([best.parent.host || best.parent])[0] || null,
      columns: [...kept.map((c) => ({ name: c.name })), { name: "ref" }],
      rows: rows.map((r, i) => [...r, ids[i]]),
    };
  }

  // ---- named fields ------------------------------------------------------------------------------
  function deepAll(root, sel) {
    const out = [];
    const scopes = [root];
    for (const e of deep(root)) if (e.shadowRoot) scopes.push(e.shadowRoot);
    for (const s of scopes) for (const m of s.querySelectorAll(sel)) out.push(m);
    return out;
  }
  function fieldValue(el, attr) {
    if (!attr) return textOf(el);
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
      const ids = refs(items);
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

  // ---- dispatch ----------------------------------------------------------------------------------
  let root = document.body || document.documentElement;
  if (req.ref != null) {
    root = P({ op: "resolve", id: req.ref, next }).result;
    if (!root) return { result: { stale: true }, next };
  }
  let result;
  if (req.op === "tables") {
    let only = null;
    if (req.ref != null) only = isTableLike(root) ? root : null;
    if (req.ref != null && !only) {
      const up = closestAcross(root, isTableLike);
      if (up) only = up;
    }
    result = only ? findTables(root, only) : findTables(root, null);
  } else if (req.op === "items") {
    // the best group whose items keep at least two fields that differ from item to item
    result = null;
    for (const group of itemGroups(root).slice(0, 12)) {
      const t = itemsTable(group);
      if (t.columns.length >= 3) { result = t; break; }
    }
  } else if (req.op === "fields") {
    result = named(root, req);
  } else {
    throw new Error("unknown op " + req.op);
  }
  return { result, next };
})
