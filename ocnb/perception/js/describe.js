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
  return "";
}
// What a typed field takes: a date, time, month or week field its one format; a number or range its bounds.
const FORMATS = { date: "YYYY-MM-DD", time: "HH:MM", "datetime-local": "YYYY-MM-DDTHH:MM", month: "YYYY-MM", week: "YYYY-Www" };
function fieldFormat(el) {
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
