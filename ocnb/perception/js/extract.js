// extract: page data as rows (ocnb/perception/extract.py), evaluated per frame like the perception
// bundle, which must already be in the document: refs are assigned through its "refs" op, so an
// item's ref is the one read_page shows. main(req) returns {result, next}; req: {op, next, ref?, ...}.
//   op "tables": every visible table (HTML, ARIA grid/table/treegrid, div rows with role=row) under the
//                root → [{ref, caption, columns, rows, header}] (cells as text a person sees, spans expanded)
//   op "items":  repeated items found by structure under the root → {ref, columns, rows} or null
//   op "fields": {item?, fields: {name: "css" | "css@attr"}} → {columns, rows} or {error, selector}
const perceive = window[Symbol.for("ocnb.perception.fn")];
// Refs (ax_N) of elements, from the perception bundle's registry.
function refsFor(els) {
  if (!els.length) return [];
  const answer = perceive({ op: "refs", els, next });
  next = answer.next;
  return answer.result.map((n) => PREFIX + n);
}

// The table a ref names: itself when it is one, else the table around it.
function tableAt(root) {
  if (isTableLike(root)) return root;
  return closestAcross(root, isTableLike);
}
// The best group whose items keep at least two fields that differ from item to item (null when none).
function bestItems(root) {
  for (const group of itemGroups(root).slice(0, 12)) {
    const table = itemsTable(group);
    if (table.columns.length >= 3) return table;
  }
  return null;
}

const OPS = {
  tables: (root, req) => {
    const only = req.ref != null ? tableAt(root) : null;
    return only ? findTables(root, only) : findTables(root, null);
  },
  items: (root) => bestItems(root),
  fields: (root, req) => named(root, req),
};

function main(req) {
  let root = document.body || document.documentElement;
  if (req.ref != null) {
    root = perceive({ op: "resolve", id: req.ref, next }).result;
    if (!root) return { result: { stale: true }, next };
  }
  if (!Object.prototype.hasOwnProperty.call(OPS, req.op)) throw new Error("unknown op " + req.op);
  const result = OPS[req.op](root, req);
  return { result, next };
}
