// ocnb demonstration recorder: one per document while a person's demonstration is recorded.
// An expression: a function `(cfg, perceive)` where cfg = {binding, nonce, secretFields} and perceive
// is the perception script (ocnb.perception.refs.script()), whose "capture" op gives the selector chain and fingerprint
// of an element in the very form a recorded interact call stores. Only trusted events (the person's
// own input: a real mouse, keyboard or a driver's Input.* events) are reported; events a page script
// dispatches have isTrusted false and are ignored. Each report goes to the binding with the nonce, so
// a page script calling the binding itself is told apart (it cannot read this closure).
// A password field's value never leaves the page: its report says only that it changed.
(function ocnbRecorder(cfg, perceive) {
  const KEY = Symbol.for("ocnb.recorder." + cfg.nonce);  // one per recording: stop silences it by this key
  if (window[KEY]) return;
  const state = { active: true };
  Object.defineProperty(window, KEY, { value: state, enumerable: false });
  const send = window[cfg.binding];
  if (typeof send !== "function") return;
  const secretFields = new Set((cfg.secretFields || []).map((s) => String(s).toLowerCase()));
  const post = (msg) => {
    if (!state.active) return;
    try { send({ ...msg, nonce: cfg.nonce, t: Date.now() }); } catch (e) { /* the binding went away */ }
  };
  // ask whether a recording is on (a document created after it stopped keeps quiet)
  try { Promise.resolve(send({ type: "hello", nonce: cfg.nonce })).then((on) => { if (on === false) state.active = false; }, () => {}); } catch (e) { /* ignore */ }

  const TEXT_TYPES = new Set(["", "text", "search", "email", "url", "tel", "password", "number", "date",
    "datetime-local", "month", "time", "week"]);
  const ROLES = new Set(["button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "switch", "treeitem", "combobox", "gridcell"]);
  const LISTENED = () => window[Symbol.for("ocnb.listeners")] || null;
  const ids = new WeakMap();
  let nextId = 1;
  const idOf = (el) => { let n = ids.get(el); if (!n) { n = nextId++; ids.set(el, n); } return n; };
  const tag = (el) => (el && el.tagName ? el.tagName.toLowerCase() : "");
  const isTextField = (el) => {
    if (!el || el.nodeType !== 1) return false;
    if (tag(el) === "textarea") return true;
    if (el.isContentEditable) return true;
    return tag(el) === "input" && TEXT_TYPES.has(String(el.type || "").toLowerCase());
  };
  const isSecret = (el) => {
    if (tag(el) === "input" && String(el.type).toLowerCase() === "password") return true;
    const ac = String(el.getAttribute && el.getAttribute("autocomplete") || "").toLowerCase();
    if (/(^|\s)(current-password|new-password|one-time-code)(\s|$)/.test(ac)) return true;
    if (!secretFields.size) return false;
    const keys = [el.getAttribute("name"), el.id, el.getAttribute("aria-label")];
    for (const l of el.labels || []) keys.push(l.textContent);
    return keys.some((k) => k && secretFields.has(String(k).trim().toLowerCase()));
  };
  const capture = (el) => {
    try { return perceive({ op: "capture", el, next: 1 }).result; } catch (e) { return null; }
  };
  // The element a click acts on: the nearest actionable one on the event's composed path.
  const actionable = (ev) => {
    const L = LISTENED();
    for (const node of ev.composedPath()) {
      if (!node || node.nodeType !== 1) continue;
      const t = tag(node);
      if (t === "body" || t === "html") return null;
      if (t === "button" || t === "select" || t === "textarea" || t === "summary" || t === "option" || t === "label") return node;
      if (t === "input") return node;
      if (t === "a" && node.hasAttribute("href")) return node;
      if (ROLES.has(String(node.getAttribute("role") || ""))) return node;
      if (node.isContentEditable) return node;
      if (node.hasAttribute("onclick") || (L && L.has(node))) return node;
    }
    return null;
  };
  // A checkbox or radio toggled by the person: their trusted click (on it or its label) or Space key.
  // Chromium reports the change of a script's el.click() as trusted too, so the act itself is checked.
  let toggled = null;
  let implicit = null;  // {form, t}: the last Enter in a form's field
  const toggleOf = (el) => {
    const c = el && tag(el) === "label" ? el.control : el;
    const type = c && tag(c) === "input" ? String(c.type || "").toLowerCase() : "";
    return type === "checkbox" || type === "radio" ? c : null;
  };
  // A field's chain and fingerprint are taken at its first keystroke and kept: typing costs no more scans.
  const fieldCaps = new WeakMap();
  const report = (type, el, extra) => {
    let cap = type === "fill" ? fieldCaps.get(el) : null;
    if (!cap) {
      cap = capture(el);
      if (cap && type === "fill") fieldCaps.set(el, cap);
    }
    if (!cap) return;
    post({ type, id: idOf(el), chain: cap.chain, fingerprint: cap.fingerprint, ...extra });
  };

  window.addEventListener("click", (ev) => {
    if (!ev.isTrusted || !state.active || ev.button !== 0) return;
    const el = actionable(ev);
    if (!el) return;  // a click on nothing that acts: mouse noise
    if (toggleOf(el)) { toggled = toggleOf(el); return; }  // reported on change
    // Enter in a field submits its form through a click on its default button: the Enter is the step
    if (ev.detail === 0 && implicit && el.form === implicit.form && Date.now() - implicit.t < 1000) { implicit = null; return; }
    const t = tag(el);
    if (isTextField(el) || t === "select" || t === "option") return;  // focus clicks; a choice is a change
    if (t === "label" && el.control) return;  // the control it forwards to reports itself
    if (t === "input") {
      const type = String(el.type || "").toLowerCase();
      if (type === "checkbox" || type === "radio" || type === "file") return;  // reported on change
    }
    report("click", el, {});
  }, true);

  window.addEventListener("input", (ev) => {
    if (!ev.isTrusted || !state.active) return;
    const el = ev.composedPath()[0];
    if (!isTextField(el)) return;
    if (isSecret(el)) { report("fill", el, { secret: true }); return; }
    const value = el.isContentEditable && tag(el) !== "input" && tag(el) !== "textarea" ? el.textContent : el.value;
    report("fill", el, { value });
  }, true);

  window.addEventListener("change", (ev) => {
    if (!state.active) return;
    const el = ev.composedPath()[0];
    if (!el || el.nodeType !== 1) return;
    // A change follows the person's own act; a page script's el.dispatchEvent(new Event("change")) is not trusted.
    if (!ev.isTrusted) return;
    const t = tag(el);
    if (t === "select") {
      const chosen = Array.from(el.selectedOptions || []).map((o) => (o.label || o.textContent || "").trim());
      report("select", el, { value: el.multiple ? chosen : (chosen[0] || "") });
    } else if (t === "input") {
      const type = String(el.type || "").toLowerCase();
      if (type === "checkbox" || type === "radio") {
        if (toggled !== el) return;  // not the person's act
        toggled = null;
        report(type === "radio" || el.checked ? "check" : "uncheck", el, {});
      } else if (type === "file") report("file", el, { files: Array.from(el.files || []).map((f) => f.name) });
    }
  }, true);

  const ACTING = new Set(["Enter", "Escape"]);
  const MOVING = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End",
    "Delete", "Backspace", "Tab", " "]);
  window.addEventListener("keydown", (ev) => {
    if (!ev.isTrusted || !state.active || ev.isComposing) return;
    const el = ev.composedPath()[0];
    if (ev.key === " " && toggleOf(el)) toggled = el;
    const field = isTextField(el);
    const t = tag(el);
    let key = ev.key;
    if (!ACTING.has(key)) {
      if (MOVING.has(key) || field || key.length === 1 && !(ev.ctrlKey || ev.metaKey || ev.altKey)) return;
      if (!(ev.ctrlKey || ev.metaKey || ev.altKey) && !/^F\d+$/.test(key)) return;  // a lone modifier, etc.
      if (["Control", "Meta", "Alt", "Shift"].includes(key)) return;
      const mods = [ev.ctrlKey && "Control", ev.metaKey && "Meta", ev.altKey && "Alt", ev.shiftKey && "Shift"].filter(Boolean);
      key = [...mods, key.length === 1 ? key.toUpperCase() : key].join("+");
    }
    if (key === "Enter" && field && el.form) implicit = { form: el.form, t: Date.now() };
    if (key === "Enter" && (t === "button" || t === "a" || t === "textarea" || t === "select" || ROLES.has(String(el && el.getAttribute && el.getAttribute("role") || "")))) return;  // a click or a new line
    if (el && el.nodeType === 1 && t !== "body" && t !== "html") report("press", el, { key });
    else post({ type: "press", key });
  }, true);
})
