// tables: every visible table — HTML, ARIA grid/table/treegrid, div rows with role=row — as column
// names and rows of cell text, spans expanded (extract's "tables" op). A <tfoot>'s rows come last, counted
// in `foot`; `spans` lists, per row, the columns a cell to their left spans (extract.py tells footers by both).
const GRID_ROLES = new Set(["grid", "table", "treegrid"]);
const CELL_ROLES = new Set(["cell", "gridcell", "columnheader", "rowheader"]);

const isTableLike = (el) => el.tagName === "TABLE" || GRID_ROLES.has(explicitRole(el));

function captionOf(t) {
  if (t.tagName === "TABLE" && t.caption) return squash(seenText(t.caption));
  const al = t.getAttribute("aria-label");
  if (al) return squash(al);
  const by = t.getAttribute("aria-labelledby");
  if (by) {
    const root = t.getRootNode();
    return squash(by.split(/\s+/).map((id) => { const e = root.getElementById ? root.getElementById(id) : null; return e ? seenText(e) : ""; }).join(" "));
  }
  return "";
}

// A cell as {text, url, header, rowspan, colspan}: the url kept when the cell is one link.
function cell(td, header) {
  const text = seenText(td);
  let url = "";
  const links = td.querySelectorAll("a[href]");
  if (links.length === 1 && squash(seenText(links[0])) === text && text) url = links[0].href;
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
  return { headRows, bodyRows, footRows: foot.map(cellsOf) };
}

function ariaRows(container, rowEls) {
  const headRows = [], bodyRows = [];
  for (const r of rowEls) {
    if (!shown(r)) continue;
    const cells = [];
    for (const c of composedElements(r)) {
      if (!CELL_ROLES.has(explicitRole(c)) && !(c.tagName === "TD" || c.tagName === "TH")) continue;
      if (closestAcross(c, (e) => explicitRole(e) === "row" || e.tagName === "TR") !== r) continue;
      if (!shown(c)) continue;
      cells.push(cell(c, explicitRole(c) === "columnheader"));
    }
    if (!cells.length) continue;
    if (!bodyRows.length && cells.every((c) => c.header)) headRows.push(cells);
    else bodyRows.push(cells);
  }
  return { headRows, bodyRows };
}

function buildTable(el, parts) {
  const head = expand(parts.headRows);
  const filled = (rows) => rows.filter((r) => r.some((c) => c.text));
  const foot = filled(expand(parts.footRows || []));
  const body = filled(expand(parts.bodyRows)).concat(foot);
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
  // per row, the output columns whose cell continues the span of the cell to its left
  const spans = body.map((r) => columns.flatMap((c, j) => (!c.url && c.index > 0 && r[c.index] && r[c.index] === r[c.index - 1] ? [j] : [])));
  return { el, caption: captionOf(el), header: head.length > 0, columns, rows, foot: foot.length, spans };
}

function findTables(root, only) {
  const found = [];
  const seen = new Set();
  const candidates = only ? [only] : Array.from(composedElements(root)).filter((e) => isTableLike(e) || explicitRole(e) === "row");
  const orphanGroups = new Map();
  for (const el of candidates) {
    if (el.tagName === "TABLE") {
      const r = explicitRole(el);
      if ((r === "presentation" || r === "none") && !only) continue;
      if (!shown(el)) continue;
      const t = buildTable(el, htmlTableRows(el));
      if (t) found.push(t);
    } else if (GRID_ROLES.has(explicitRole(el))) {
      if (!shown(el)) continue;
      const rows = Array.from(composedElements(el)).filter((r) => explicitRole(r) === "row" && closestAcross(r, isTableLike) === el);
      rows.forEach((r) => seen.add(r));
      const t = buildTable(el, ariaRows(el, rows));
      if (t) found.push(t);
    } else if (explicitRole(el) === "row" && !seen.has(el) && !closestAcross(el, isTableLike)) {
      // div rows with no table around them: one table per parent (a rowgroup's parent)
      let group = el.parentElement || el.getRootNode().host;
      if (group && explicitRole(group) === "rowgroup") group = group.parentElement || group.getRootNode().host;
      if (!orphanGroups.has(group)) orphanGroups.set(group, []);
      orphanGroups.get(group).push(el);
    }
  }
  for (const [group, rows] of orphanGroups) {
    if (!group || !shown(group)) continue;
    const t = buildTable(group, ariaRows(group, rows));
    if (t) found.push(t);
  }
  const ids = refsFor(found.map((t) => t.el));
  return found.map((t, i) => ({
    ref: ids[i], caption: t.caption, header: t.header, columns: t.columns, rows: t.rows, foot: t.foot, spans: t.spans,
  }));
}
