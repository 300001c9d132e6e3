// perception: the operations Python calls (ocnb/perception/refs.py), op name → function of the request.
// Each answers a JSON-able value or an element; main() returns {result, next}.
const OPS = {
  snapshot,
  // called on the parent frame with an <iframe> element handle; never assigns (safe to run in parallel)
  frameRef: (req) => (peekRef(req.el) === undefined ? null : peekRef(req.el)),
  resolve: (req) => lookup(req.id),
  has: (req) => !!lookup(req.id),
  info: (req) => info(req.el),
  candidates: () => candidateList(),
  contexts: (req) => (req.refs || []).map((ref) => { const el = lookup(+String(ref).replace(PREFIX, "")); return el ? contextOf(el) : ""; }),
  assign: (req) => (req.els || []).map((el) => info(el)),
  // ref numbers for elements another in-page script found (the extract bundle), in the same registry
  refs: (req) => (req.els || []).map(refOf),
  query: (req) => queryAll(req.selector, req.method, req.limit),
  textMatches: (req) => textMatches(req.text),
  chain: (req) => chainOf(req.el),
  capture: (req) => {
    const fingerprint = fingerprintOf(req.el);
    const twins = twinCount(req.el, fingerprint);
    if (twins) fingerprint.twins = twins;
    return { chain: chainOf(req.el), fingerprint };
  },
  fingerprint: (req) => fingerprintOf(req.el),
  resolveStep: (req) => {
    const result = resolveStep(req.chain || [], req.fingerprint || {}, req.tolerate || [], false);
    delete result.el;
    return result;
  },
  // the element itself when the chain's first entry singles out an agreeing one, else null
  resolveFirst: (req) => {
    const step = resolveStep(req.chain || [], req.fingerprint || {}, req.tolerate || [], true);
    return step.status === "ok" ? step.el : null;
  },
  hitTest: (req) => hitAt(req.x, req.y, req.unit),
  mutations: () => docState.mutations,
};

function main(req) {
  if (!Object.prototype.hasOwnProperty.call(OPS, req.op)) throw new Error("unknown op " + req.op);
  const result = OPS[req.op](req);
  return { result, next };
}
