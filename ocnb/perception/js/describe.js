// describe: what an outline line says about an element beside its role and name — its states, a
// link's shortened target, a field's value and format.

function statesOf(el, role) {
  const out = [];
  const tag = el.tagName;
  const attr = (a) => el.getAttribute(a);
  if (role === "checkbox" || role === "radio" || role === "switch" || role === "menuitemcheckbox" || role === "menuitemradio") {
    const c = (tag === "INPUT") ? (el.indeterminate ? "mixed" : el.checked) : attr("aria-checked");
    if (c === true || c === "true") out.push("checked");
    else if (c === "mixed") out.push("mixed");
  }
  if (tag === "OPTION" ? el.selected : attr("aria-selected") === "true") out.push("selected");
  if (attr("aria-pressed") === "true") out.push("pressed");
  const ex = attr("aria-expanded");
  if (ex === "true") out.push("expanded");
  else if (ex === "false") out.push("collapsed");
  if (tag === "SUMMARY" && el.parentElement && el.parentElement.tagName === "DETAILS") {
    out.push(el.parentElement.open ? "expanded" : "collapsed");
  }
  else if (ex === null && tag !== "SUMMARY") { const t = treeState(el, role); if (t) out.push(t); }
  if (role === "slider" && tag !== "INPUT") { const sl = sliderState(el); if (sl && sl.guessed) out.push("inferred"); }
  if (el.disabled === true || attr("aria-disabled") === "true") out.push("disabled");
  if (el.required === true || attr("aria-required") === "true") out.push("required");
  if ((el.readOnly === true && (tag === "INPUT" || tag === "TEXTAREA")) || attr("aria-readonly") === "true") out.push("readonly");
  if (attr("aria-invalid") === "true") out.push("invalid");
  // a text area (several lines) said apart from a one-line field; an entry that opens a menu (a submenu)
  if (tag === "TEXTAREA" || attr("aria-multiline") === "true") out.push("multiline");
  const popup = attr("aria-haspopup");
  if (popup && popup !== "false" && ex === null && role !== "combobox") out.push("haspopup");
  if (attr("aria-current") && attr("aria-current") !== "false") out.push("current");
  return out;
}

function shortHref(el) {
  const raw = el.getAttribute("href");
  if (raw === null) return "";
  if (/^\s*javascript:/i.test(raw)) return "";
  let u;
  try { u = new URL(el.href, document.baseURI); } catch (e) { return squash(raw).slice(0, 80); }
  let s;
  try { u = { origin: u.origin, protocol: u.protocol, host: u.host, pathname: decodeURI(u.pathname), search: u.search, hash: u.hash }; } catch (e) { /* keep encoded */ }
  if (u.origin === location.origin) {
    if (u.pathname === location.pathname && u.search === location.search && u.hash) return u.hash;
    s = u.pathname;
  } else if (u.protocol === "http:" || u.protocol === "https:") {
    s = u.host.replace(/^www\./, "") + (u.pathname === "/" ? "" : u.pathname);
  } else {
    return u.protocol === "mailto:" || u.protocol === "tel:" ? squash(raw).slice(0, 60) : u.protocol;
  }
  if (s.length > HREF_PATH_CHARS) s = s.slice(0, HREF_PATH_CHARS - 1) + "…";
  // A shortened target: tracking parameters (utm_*, fbclid, mod=…) are left out, and a longer query
  // shows as "?…" (the link's ref still follows the whole href).
  const query = u.search ? u.search.slice(1).split("&").filter((kv) => kv && !TRACKING_PARAM.test(kv.split("=")[0])).join("&") : "";
  if (query) s += query.length > HREF_QUERY_CHARS ? "?…" : "?" + query;
  return s;
}
const HREF_PATH_CHARS = 40, HREF_QUERY_CHARS = 16;
const TRACKING_PARAM = /^(utm_\w*|mod|intcid|icid|ocid|cmpid|cmp|fbclid|gclid|dclid|msclkid|yclid|mc_cid|mc_eid|xtor|ito|ftag|smid|smtyp|ns_\w+|igshid|spm|trk|trkid|sr_share|ref|ref_src|ref_url|referrer|src|via|_ga|_gl|__twitter_impression|wt\.mc_id)$/i;

function valueOf(el, role) {
  const tag = el.tagName;
  if (tag === "INPUT") {
    const t = (el.type || "").toLowerCase();
    if (t === "checkbox" || t === "radio" || t === "button" || t === "submit" || t === "reset" || t === "image" || t === "file") {
      if (t === "file" && el.files && el.files.length) return Array.from(el.files).map((f) => f.name).join(", ");
      return "";
    }
    if (t === "password") return el.value ? "••••" : "";
    return el.value;
  }
  if (tag === "TEXTAREA") return el.value;
  if (tag === "SELECT") return Array.from(el.selectedOptions).map((o) => squash(o.textContent)).join(", ");
  if (role === "textbox" && el.isContentEditable) return squash(el.innerText || "");  // an editor's text
  const vn = el.getAttribute("aria-valuenow");
  if (vn !== null) return el.getAttribute("aria-valuetext") || vn;
  if (role === "slider") { const sl = sliderState(el); if (sl) return String(sl.value); }
  return "";
}
// What a typed field takes: a date, time, month or week field its one format; a number or range its bounds.
const FORMATS = { date: "YYYY-MM-DD", time: "HH:MM", "datetime-local": "YYYY-MM-DDTHH:MM", month: "YYYY-MM", week: "YYYY-Www" };
function fieldFormat(el, role) {
  if (el.tagName !== "INPUT") {
    // a slider drawn by script: its bounds, as a range input's
    const sl = role === "slider" ? sliderState(el) : null;
    if (!sl) return "";
    const out = [];
    if (sl.min !== null) out.push("min=" + sl.min);
    if (sl.max !== null) out.push("max=" + sl.max);
    if (sl.step !== null && sl.step !== 1) out.push("step=" + sl.step);
    return out.join(" ");
  }
  const t = (el.type || "").toLowerCase();
  if (FORMATS[t]) return "format=" + FORMATS[t];
  if (t !== "number" && t !== "range") return "";
  const out = [];
  for (const a of ["min", "max", "step"]) {
    const v = el.getAttribute(a);
    if (v !== null && v !== "" && !(a === "step" && (v === "1" || v === "any"))) out.push(a + "=" + v);
  }
  return out.join(" ");
}
const FIELD_VALUE_CLIP = 200;  // a field's value in the page's outline
const FIELD_VALUE_MAX = 20000;  // a field's value when the field itself is read (ref_id)

// A tree item without aria-expanded: expanded or collapsed as its nested list shows or hides (a folder
// in a <ul> tree, jQuery treeview, jsTree, fancytree), the library's classes saying it when the list is
// empty or not there yet. "" when `el` is not an item that holds (or says it holds) a nested list.
const TREE_CLOSED = /(?:^|\s)(?:expandable|jstree-closed|collapsed|is-collapsed|tree-closed)(?:\s|$)/;
const TREE_OPEN = /(?:^|\s)(?:collapsable|jstree-open|fancytree-expanded|expanded|is-expanded|tree-open)(?:\s|$)/;
function treeState(el, role) {
  let item = null;
  if (el.tagName === "LI" || role === "treeitem") item = el;
  else if (el.parentElement && el.parentElement.tagName === "LI" && el.parentElement.firstElementChild === el) item = el.parentElement;
  if (!item) return "";
  let sub = null;
  for (const c of item.children) {
    if (c.tagName === "UL" || c.tagName === "OL" || c.getAttribute("role") === "group") { sub = c; break; }
  }
  if (sub && sub.children.length) return hiddenTree(sub) ? "collapsed" : "expanded";
  const cls = (item.getAttribute("class") || "") + " " + (el === item ? "" : el.getAttribute("class") || "");
  if (!sub && role !== "treeitem" && !item.closest("[role=tree],.treeview,.jstree,.fancytree-container,ul ul")) return "";
  if (TREE_CLOSED.test(cls)) return "collapsed";
  if (TREE_OPEN.test(cls)) return "expanded";
  return "";
}
// A slider that is not an <input type=range>: its value, min and max from aria-valuenow/min/max, else
// from jQuery UI's slider widget (the instance it keeps on the track), else — guessed — from where the
// handle sits on its track (0–100). Null when there is no value to read.
function sliderState(el) {
  const num = (v) => (v === null || v === undefined || v === "" || isNaN(+v)) ? null : +v;
  let value = num(el.getAttribute("aria-valuenow"));
  let min = num(el.getAttribute("aria-valuemin")), max = num(el.getAttribute("aria-valuemax"));
  let step = null, guessed = false;
  const track = el.closest(".ui-slider") || el.parentElement;
  const jq = window.jQuery;
  if (track && jq && typeof jq.data === "function") {
    let inst = null;
    try { inst = jq.data(track, "ui-slider") || jq.data(track, "uiSlider") || null; } catch (e) { inst = null; }
    if (inst && inst.options) {
      const o = inst.options;
      if (min === null) min = num(o.min);
      if (max === null) max = num(o.max);
      step = num(o.step);
      if (value === null) {
        const i = Array.prototype.indexOf.call(track.querySelectorAll(".ui-slider-handle"), el);
        try { value = num(o.range === true || (o.values && o.values.length) ? inst.values(Math.max(i, 0)) : inst.value()); } catch (e) { value = null; }
      }
    }
  }
  if (value === null && track && track !== el) {
    const left = el.style.left || el.style.bottom;
    if (/%$/.test(left) && !isNaN(parseFloat(left))) {
      const lo = min === null ? 0 : min, hi = max === null ? 100 : max;
      value = Math.round(lo + parseFloat(left) / 100 * (hi - lo));
      min = lo; max = hi; guessed = true;
    }
  }
  if (value === null) return null;
  return { value, min, max, step, guessed };
}
