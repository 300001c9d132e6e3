// state: what the perception script keeps per document, under symbols on window: element <-> ref
// number (never reused; the counter is owned by Python per page, so a ref from an old document can
// never name a new element), the count of DOM mutations, and the script's own function (FN_KEY), so
// later calls need not send its source again. ocnbPerception is the bundle's function (bundle.py).
const KEY = Symbol.for("ocnb.perception");
const FN_KEY = Symbol.for("ocnb.perception.fn");
if (!window[FN_KEY]) Object.defineProperty(window, FN_KEY, { value: ocnbPerception, enumerable: false });
let docState = window[KEY];
if (!docState) {
  docState = { ids: new WeakMap(), els: new Map(), mutations: 0, observer: null };
  Object.defineProperty(window, KEY, { value: docState, enumerable: false });
}
// (not in the Playwright selector engine's isolated world: nothing there reads the count)
if (!docState.observer && document.documentElement && !req.engine) {
  try {
    docState.observer = new MutationObserver((records) => { docState.mutations += records.length; });
    docState.observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  } catch (e) { /* ignore */ }
}
