// refs: element <-> ref number in this document's registry (state.js), and what a ref is reported as.

// The element's ref number, assigned from the page's counter on first sight.
function refOf(el) {
  let id = docState.ids.get(el);
  if (id === undefined) {
    id = next++;
    docState.ids.set(el, id);
    docState.els.set(id, new WeakRef(el));
  }
  return id;
}
// The element's ref number if it has one (never assigns).
function peekRef(el) { return docState.ids.get(el); }
// The live, connected element of a ref number, or null.
function lookup(id) {
  const held = docState.els.get(id);
  const el = held && held.deref();
  if (!el) { docState.els.delete(id); return null; }
  if (!el.isConnected) return null;
  return el;
}
function rootFor(ref) {
  if (ref == null) return document.body || document.documentElement;
  return lookup(ref);
}
// An element as a ref, its role and its name (and where the name came from).
function info(el) {
  const role = roleOf(el);
  const name = nameOf(el, role);
  return { ref: PREFIX + refOf(el), role: displayRole(el, role), name: name[0], name_source: name[1] };
}
