// ocnb perception: one in-page script, evaluated per frame. It is an expression whose value is a
// function `(req) => result`; Python calls it with a request object `{op, ...}`.
// State lives per document under a Symbol on window: element <-> ref number (never reused; the
// counter is owned by Python per page, so a ref from an old document can never name a new element).
// The function also keeps itself per document (FN_KEY), so later calls need not send this source again.
(function ocnbPerception(req) {
  const KEY = Symbol.for("ocnb.perception");
  const FN_KEY = Symbol.for("ocnb.perception.fn");
  if (!window[FN_KEY]) Object.defineProperty(window, FN_KEY, { value: ocnbPerception, enumerable: false });
  let S = window[KEY];
  if (!S) {
    S = { ids: new WeakMap(), els: new Map(), mutations: 0, observer: null };
    Object.defineProperty(window, KEY, { value: S, enumerable: false });
  }
  // (not in the Playwright selector engine's isolated world: nothing there reads the count)
  if (!S.observer && document.documentElement && !req.engine) {
    try {
      S.observer = new MutationObserver((recs) => { S.mutations += recs.length; });
      S.observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    } catch (e) { /* ignore */ }
  }
  let next = req.next || 1;
  const PREFIX = "ax_";
  // Elements the page gave a click/pointer/key listener (ocnb/perception/listeners.py installs the registry).
  const LISTENED = window[Symbol.for("ocnb.listeners")] || null;

  const INTERACTIVE = new Set(["link", "button", "textbox", "searchbox", "checkbox", "radio", "combobox",
    "listbox", "option", "slider", "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "treeitem", "gridcell"]);
  const NAME_FROM_CONTENT = new Set(["button", "link", "heading", "cell", "columnheader", "rowheader",
    "option", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem", "checkbox", "radio",
    "switch", "tooltip", "gridcell", "legend", "caption", "term", "summary"]);
  // Containers whose children are indented under a line of their own.
  const CONTAINERS = new Set(["navigation", "main", "banner", "contentinfo", "complementary", "form",
    "dialog", "alertdialog", "list", "listitem", "table", "row", "region", "iframe", "group", "menu",
    "menubar", "tablist", "tabpanel", "radiogroup", "tree", "grid", "search", "article", "alert", "status",
    "toolbar", "figure", "blockquote"]);
  const SKIP_TAGS = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE",
    "BASE", "PARAM", "SOURCE", "TRACK"]);
  const INLINE_DISPLAY = /^inline(?!-block|-flex|-grid|-table)/;

  const ws = (s) => (s || "").replace(/[\s\u00a0\u200b]+/g, " ").trim();
  const q = (s) => JSON.stringify(s);

  function refOf(el) {
    let id = S.ids.get(el);
    if (id === undefined) {
      id = next++;
      S.ids.set(el, id);
      S.els.set(id, new WeakRef(el));
    }
    return id;
  }
  function peekRef(el) { return S.ids.get(el); }
  function lookup(id) {
    const w = S.els.get(id);
    const el = w && w.deref();
    if (!el) { S.els.delete(id); return null; }
    if (!el.isConnected) return null;
    return el;
  }

  const styleCache = new Map();
  function style(el) {
    let s = styleCache.get(el);
    if (!s) { s = getComputedStyle(el); styleCache.set(el, s); }
    return s;
  }
  // Hidden for the outline: no box at all, or hidden from assistive tech.
  // aria-hidden content that is visibly rendered stays in the outline (a sighted user sees and can
  // click it; innerText and Playwright MCP's snapshot keep it too); it is left out of names.
  function hiddenTree(el, forName) {
    if (SKIP_TAGS.has(el.tagName)) return true;
    if (forName && el.getAttribute("aria-hidden") === "true") return true;
    if (el.hasAttribute("inert")) return true;
    const s = style(el);
    if (s.display === "none") return true;
    return false;
  }
  function selfVisible(el) {
    const v = style(el).visibility;
    return v !== "hidden" && v !== "collapse";
  }
  function zeroBox(el) {
    const r = el.getBoundingClientRect();
    return r.width === 0 && r.height === 0;
  }

  function inputRole(el) {
    const t = (el.getAttribute("type") || "text").toLowerCase();
    switch (t) {
      case "button": case "submit": case "reset": case "image": case "file": return "button";
      case "checkbox": return "checkbox";
      case "radio": return "radio";
      case "range": return "slider";
      case "number": return "spinbutton";
      case "search": return el.hasAttribute("list") ? "combobox" : "searchbox";
      case "hidden": return "";
      case "color": return "button";
      default: return el.hasAttribute("list") ? "combobox" : "textbox";
    }
  }
  function hasLandmarkAncestor(el) {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const t = p.tagName;
      if (t === "ARTICLE" || t === "ASIDE" || t === "MAIN" || t === "NAV" || t === "SECTION") return true;
    }
    return false;
  }
  function implicitRole(el) {
    const tag = el.tagName;
    switch (tag) {
      case "A": case "AREA": return el.hasAttribute("href") ? "link" : "";
      case "BUTTON": return "button";
      case "INPUT": return inputRole(el);
      case "TEXTAREA": return "textbox";
      case "SELECT": return (el.multiple || el.size > 1) ? "listbox" : "combobox";
      case "OPTION": return "option";
      case "H1": case "H2": case "H3": case "H4": case "H5": case "H6": return "heading";
      case "IMG": return (el.getAttribute("alt") === "" && !el.getAttribute("title")) ? "" : "img";
      case "NAV": return "navigation";
      case "MAIN": return "main";
      case "HEADER": return hasLandmarkAncestor(el) ? "" : "banner";
      case "FOOTER": return hasLandmarkAncestor(el) ? "" : "contentinfo";
      case "ASIDE": return "complementary";
      case "FORM": return "form";
      case "SEARCH": return "search";
      case "SECTION": return (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby")) ? "region" : "";
      case "ARTICLE": return "article";
      case "UL": case "OL": case "MENU": return "list";
      case "LI": return "listitem";
      case "TABLE": return "table";
      case "TR": return "row";
      case "TD": return "cell";
      case "TH": return "columnheader";
      case "DIALOG": return "dialog";
      case "SUMMARY": return "button";
      case "DETAILS": return "group";
      case "FIELDSET": return "group";
      case "P": return "paragraph";
      case "BLOCKQUOTE": return "blockquote";
      case "HR": return "separator";
      case "PROGRESS": return "progressbar";
      case "METER": return "meter";
      case "IFRAME": case "FRAME": return "iframe";
      case "FIGURE": return "figure";
      case "OUTPUT": return "status";
      case "DT": return "term";
      case "DD": return "definition";
      case "LEGEND": return "legend";
      case "CAPTION": return "caption";
    }
    if (el.isContentEditable && el.getAttribute("contenteditable") !== null) return "textbox";
    return "";
  }
  function focusable(el) {
    const ti = el.getAttribute("tabindex");
    return ti !== null && +ti >= 0;
  }
  function roleOf(el) {
    const explicit = el.getAttribute("role");
    if (explicit) {
      const r = explicit.trim().split(/\s+/)[0].toLowerCase();
      if (r === "none" || r === "presentation") return focusable(el) ? implicitRole(el) : "";
      if (r === "generic") return "";
      if (r) return r;
    }
    return implicitRole(el);
  }

  // ---- accessible names (a compact take on accname 1.2) ----------------------------------------
  function childNodesOf(el) {
    if (el.shadowRoot) return el.shadowRoot.childNodes;
    if (el.tagName === "SLOT") {
      const a = el.assignedNodes();
      return a.length ? a : el.childNodes;
    }
    return el.childNodes;
  }
  function textOf(root, skip, forceHidden) {
    const parts = [];
    const visit = (n, hiddenOk) => {
      if (n.nodeType === 3) {
        const p = n.parentElement;
        if (hiddenOk || !p || selfVisible(p)) parts.push(n.nodeValue);
        return;
      }
      if (n.nodeType !== 1 || n === skip) return;
      const el = n;
      if (!hiddenOk && hiddenTree(el, true)) return;
      if (SKIP_TAGS.has(el.tagName)) return;
      const tag = el.tagName;
      if (tag === "IMG" || tag === "AREA" || (tag === "INPUT" && el.type === "image")) {
        const alt = el.getAttribute("aria-label") || el.getAttribute("alt") || "";
        if (alt) parts.push(" " + alt + " ");
        return;
      }
      if (el !== root) {
        const al = el.getAttribute("aria-label");
        if (al && ws(al)) { parts.push(" " + al + " "); return; }
        if (tag === "INPUT" || tag === "TEXTAREA") {
          const t = (el.type || "").toLowerCase();
          if (t === "checkbox" || t === "radio") return;
          if (t === "button" || t === "submit" || t === "reset") { parts.push(" " + (el.value || "") + " "); return; }
          parts.push(" " + (el.value || "") + " ");
          return;
        }
        if (tag === "SELECT") {
          const o = el.selectedOptions && el.selectedOptions[0];
          if (o) parts.push(" " + o.textContent + " ");
          return;
        }
        if (tag === "svg" || tag === "SVG") {
          const t = el.querySelector && el.querySelector("title");
          if (t) parts.push(" " + t.textContent + " ");
          return;
        }
      }
      let block = false;
      if (el !== root && !hiddenOk) {
        const d = style(el).display;
        block = !INLINE_DISPLAY.test(d);
      }
      if (block) parts.push(" ");
      for (const c of childNodesOf(el)) visit(c, hiddenOk);
      if (block) parts.push(" ");
      if (tag === "BR") parts.push(" ");
    };
    visit(root, !!forceHidden);
    return ws(parts.join(""));
  }
  function byIds(el, attr) {
    const ids = (el.getAttribute(attr) || "").trim().split(/\s+/).filter(Boolean);
    if (!ids.length) return "";
    const rootNode = el.getRootNode();
    const out = [];
    for (const id of ids) {
      const t = (rootNode.getElementById ? rootNode.getElementById(id) : null) || document.getElementById(id);
      if (t) out.push(t === el ? ws(el.getAttribute("aria-label") || "") : textOf(t, null, true));
    }
    return ws(out.join(" "));
  }
  function labelText(el) {
    const labels = el.labels;
    if (!labels || !labels.length) return "";
    return ws(Array.from(labels).map((l) => textOf(l, el)).join(" "));
  }
  // Returns [name, source] where source says where the name came from.
  function nameOf(el, role) {
    let n = byIds(el, "aria-labelledby");
    if (n) return [n, "labelledby"];
    n = ws(el.getAttribute("aria-label"));
    if (n) return [n, "aria-label"];
    const tag = el.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
      const t = (el.type || "").toLowerCase();
      if (tag === "INPUT" && (t === "button" || t === "submit" || t === "reset")) {
        n = ws(el.value) || (t === "submit" ? "Submit" : t === "reset" ? "Reset" : "");
        if (n) return [n, "value"];
      }
      if (tag === "INPUT" && t === "image") {
        n = ws(el.getAttribute("alt")) || ws(el.getAttribute("title")) || "Submit";
        return [n, "alt"];
      }
      n = labelText(el);
      if (n) return [n, "label"];
      n = ws(el.getAttribute("title"));
      if (n) return [n, "title"];
      n = ws(el.getAttribute("placeholder"));
      if (n) return [n, "placeholder"];
      return ["", ""];
    }
    if (tag === "IMG" || tag === "AREA") {
      n = ws(el.getAttribute("alt"));
      if (n) return [n, "alt"];
      if (tag === "IMG") { n = ws(el.getAttribute("title")); return [n, n ? "title" : ""]; }
    }
    if (tag === "FIELDSET") {
      const lg = el.querySelector(":scope > legend");
      if (lg) { n = textOf(lg); if (n) return [n, "legend"]; }
    }
    if (tag === "TABLE") {
      const c = el.querySelector(":scope > caption");
      if (c) { n = textOf(c); if (n) return [n, "caption"]; }
    }
    if (tag === "FIGURE") {
      const c = el.querySelector(":scope > figcaption");
      if (c) { n = textOf(c); if (n) return [n, "figcaption"]; }
    }
    if (NAME_FROM_CONTENT.has(role) || (SCRIPT_ROLES.has(role) && role !== "img" && (focusable(el) || el.getAttribute("draggable") === "true" || scriptDriven(el)))) {
      n = textOf(el);
      if (n) return [n, "content"];
    }
    if (tag === "IFRAME" || tag === "FRAME") {
      n = ws(el.getAttribute("title")) || ws(el.getAttribute("name"));
      return [n, n ? "title" : ""];
    }
    n = ws(el.getAttribute("title")) || ws(el.getAttribute("data-tooltip")) || ws(el.getAttribute("data-original-title"));
    if (n) return [n, "title"];
    if (isInteractive(el, role)) { n = iconName(el) || swatchName(el); if (n) return [n, "icon"]; }
    return ["", ""];
  }
  // A colour swatch (a control with no words or icon whose only content is a colour: its own
  // background or its only child's) named by the nearest CSS named colour; "inferred" like icons.
  const COLOR_NAMES = {black: 0x000000, white: 0xffffff, gray: 0x808080, silver: 0xc0c0c0, red: 0xff0000,
    maroon: 0x800000, darkred: 0x8b0000, orange: 0xffa500, brown: 0xa52a2a, gold: 0xffd700, yellow: 0xffff00,
    olive: 0x808000, lime: 0x00ff00, green: 0x008000, darkgreen: 0x006400, teal: 0x008080, aqua: 0x00ffff,
    navy: 0x000080, blue: 0x0000ff, royalblue: 0x4169e1, skyblue: 0x87ceeb, purple: 0x800080,
    mediumpurple: 0x9370db, indigo: 0x4b0082, violet: 0xee82ee, fuchsia: 0xff00ff, pink: 0xffc0cb,
    beige: 0xf5f5dc, lavender: 0xe6e6fa};
  function colourName(css) {
    const m = /^rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)$/.exec(css || "");
    if (!m || (m[4] !== undefined && +m[4] < 0.5)) return "";
    const [r, g, b] = [+m[1], +m[2], +m[3]];
    let best = "", dist = Infinity;
    for (const [name, v] of Object.entries(COLOR_NAMES)) {
      const d = (r - (v >> 16)) ** 2 + (g - ((v >> 8) & 255)) ** 2 + (b - (v & 255)) ** 2;
      if (d < dist) { dist = d; best = name; }
    }
    return best;
  }
  function swatchName(el) {
    if (textOf(el) || el.querySelector("img,svg,canvas,video,input") || el.children.length > 1) return "";
    const face = (c) => /^rgb\((239|240), \1, \1\)$/.test(c);  // a native button's own face, not a colour
    const own = style(el).backgroundColor;
    const c = el.children.length && (face(own) || !colourName(own)) ? style(el.children[0]).backgroundColor : own;
    return face(c) ? "" : colourName(c);
  }
  // An icon-only control's name inferred from how it is drawn: an icon font's class (fa-trash,
  // glyphicon-star, icon-reply, bi-heart), a sprite reference (<use href="#icon-like">), data-icon,
  // or a lone action word as its class (class="retweet"). Reported with the state "inferred".
  const ICON_CLASS = /^(?:fa[srlbdt]?|bi|glyphicon|icon|icons?|ion|ionicon|mdi|ti|la|octicon|gg|ri|feather|lucide|uil|ph|material-icons)[-_]([a-z0-9][a-z0-9-]*)$/i;
  const ICON_NOISE = /^(fw|lg|xs|sm|[1-9]x|spin|pulse|border|stack|stack-[12]x|inverse|flip.*|rotate.*|solid|regular|light|thin|duotone|brands|sharp|outline|filled|round|rounded|two-tone|large|small|white|black|primary|secondary|default|button|btn|wrapper|container|only|text)$/i;
  const ICON_WORDS = new Set(["reply", "retweet", "like", "unlike", "share", "more", "star", "trash", "delete", "remove",
    "edit", "close", "search", "menu", "send", "forward", "archive", "heart", "bookmark", "save", "download", "upload",
    "print", "settings", "add", "plus", "minus", "refresh", "copy", "flag", "pin", "bell", "home", "user", "cart",
    "play", "pause", "stop", "next", "prev", "previous", "back", "expand", "collapse", "info", "help", "comment",
    "mail", "email", "attach", "important", "spam", "undo", "redo", "filter", "sort", "lock", "unlock", "favorite"]);
  function iconWords(s) {
    const w = ws(s.replace(/^([a-z]{2,4}[-_])?(icons?|ico|svg|sprite|symbol|i)[-_]/i, "").replace(/[-_]+/g, " ")
      .replace(/\b(o|alt|solid|outline|outlined|fill|filled|regular|light|line|sharp|round|rounded|\d+)\b/gi, " "));
    return w.split(" ").slice(0, 4).join(" ");
  }
  // An icon drawn by CSS from an image file named for its action (content: url(…/send.png),
  // background-image: url(…/icons/trash.svg)): that name, when it is an action word.
  const IMAGE_FILE = /url\(["']?[^"')]*?([^/"')]+?)\.(?:png|svg|gif|webp|jpe?g)(?:[?#][^"')]*)?["']?\)/i;
  function imageIcon(e) {
    if (!(e instanceof HTMLElement)) return "";
    const st = style(e);
    for (const v of [st.content, st.backgroundImage]) {
      const m = v && v !== "none" && v !== "normal" ? IMAGE_FILE.exec(v) : null;
      const w = m ? iconWords(m[1]) : "";
      if (w && ICON_WORDS.has(w.split(" ")[0].toLowerCase())) return w.toLowerCase();
    }
    return "";
  }
  function iconName(el) {
    const els = [el];
    for (const d of el.querySelectorAll("*")) { els.push(d); if (els.length > 12) break; }
    for (const e of els) {
      if (e.tagName === "use" || e.tagName === "USE") {
        const h = e.getAttribute("href") || e.getAttribute("xlink:href") || "";
        const m = /#([^#]+)$/.exec(h);
        if (m && iconWords(m[1])) return iconWords(m[1]);
      }
      const di = e.getAttribute("data-icon");
      if (di && iconWords(di)) return iconWords(di);
      const cls = (e.getAttribute("class") || "").split(/\s+/).filter(Boolean);
      for (const c of cls) {
        const m = ICON_CLASS.exec(c);
        if (m && !ICON_NOISE.test(m[1]) && iconWords(m[1])) return iconWords(m[1]);
      }
      for (const c of cls) if (ICON_WORDS.has(c.toLowerCase())) return c.toLowerCase();
      const img = imageIcon(e);
      if (img) return img;
      if (/^(material-icons|material-symbols)/.test(cls.join(" ")) && ws(e.textContent)) return ws(e.textContent).replace(/_/g, " ");
    }
    return "";
  }

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
    try { u = new URL(el.href, document.baseURI); } catch (e) { return ws(raw).slice(0, 80); }
    let s;
    try { u = { origin: u.origin, protocol: u.protocol, host: u.host, pathname: decodeURI(u.pathname), search: u.search, hash: u.hash }; } catch (e) { /* keep encoded */ }
    if (u.origin === location.origin) {
      if (u.pathname === location.pathname && u.search === location.search && u.hash) return u.hash;
      s = u.pathname;
    } else if (u.protocol === "http:" || u.protocol === "https:") {
      s = u.host.replace(/^www\./, "") + (u.pathname === "/" ? "" : u.pathname);
    } else {
      return u.protocol === "mailto:" || u.protocol === "tel:" ? ws(raw).slice(0, 60) : u.protocol;
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
    if (tag === "SELECT") return Array.from(el.selectedOptions).map((o) => ws(o.textContent)).join(", ");
    if (role === "textbox" && el.isContentEditable) return ws(el.innerText || "");  // an editor's text
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
  function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  // Roles with no interaction of their own that script can give one (a row of an inbox, a day cell).
  const SCRIPT_ROLES = new Set(["", "paragraph", "listitem", "img", "cell", "row", "columnheader", "rowheader",
    "term", "definition", "figure", "heading", "strong", "emphasis", "code"]);
  const CLICK_TYPES = ["click", "dblclick", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend",
    "keydown", "keyup", "keypress"];
  const NATIVE_CONTROL = "a[href],button,input,select,textarea,summary,[role=button],[role=link],[role=checkbox],[role=tab],[role=menuitem],[role=option],[role=treeitem],[contenteditable]";
  // Targets of events a framework delegates to a parent and keeps a table of: jQuery's .on(type, selector).
  let DELEGATED = null;
  function delegated() {
    if (DELEGATED) return DELEGATED;
    DELEGATED = new Set();
    const jq = window.jQuery;
    if (!jq || typeof jq._data !== "function") return DELEGATED;
    const hosts = [document];
    if (LISTENED) for (const el of document.querySelectorAll("*")) if (LISTENED.has(el)) hosts.push(el);
    for (const h of hosts) {
      let ev = null;
      try { ev = jq._data(h, "events"); } catch (e) { ev = null; }
      if (!ev) continue;
      for (const type of CLICK_TYPES) {
        for (const hd of ev[type] || []) {
          if (!hd || !hd.selector) continue;
          try { for (const t of h.querySelectorAll(hd.selector)) DELEGATED.add(t); } catch (e) { /* a jQuery-only selector */ }
          if (DELEGATED.size > 5000) return DELEGATED;
        }
      }
    }
    return DELEGATED;
  }
  // The ancestors of every element with a listener of its own or a delegated one: a control drawn as a
  // row of such spans ("Reply", "Forward" in a clickable bar) shows each of them, not only the bar.
  let LISTENED_INSIDE = null;
  function listenedInside() {
    if (LISTENED_INSIDE) return LISTENED_INSIDE;
    LISTENED_INSIDE = new Set();
    const targets = Array.from(delegated());
    if (LISTENED) for (const el of document.querySelectorAll("*")) if (LISTENED.has(el)) targets.push(el);
    for (const t of targets) {
      for (let p = t.parentElement; p && !LISTENED_INSIDE.has(p); p = p.parentElement) LISTENED_INSIDE.add(p);
    }
    return LISTENED_INSIDE;
  }
  // Whether script makes `el` act on a click or key: a listener of its own (the registry, an on*
  // handler), a framework's delegated selector, or — supporting — a cursor:pointer it sets itself.
  // An element that only wraps one control with the same text is not (the control is the target).
  const driven = new Map();
  function scriptDriven(el) {
    let d = driven.get(el);
    if (d !== undefined) return d;
    d = false;
    const tag = el.tagName;
    if (tag !== "BODY" && tag !== "HTML" && tag !== "LABEL" && tag !== "svg" && !(el.ownerSVGElement && tag !== "svg")) {
      if ((LISTENED && LISTENED.has(el)) || typeof el.onclick === "function" || typeof el.onmousedown === "function" ||
          el.hasAttribute("onclick") || el.hasAttribute("onmousedown") || delegated().has(el)) d = true;
      else if (style(el).cursor === "pointer") {
        // the weaker signal: only an element that sets the cursor itself and shows something to name it by
        const p = el.parentElement;
        d = (!p || style(p).cursor !== "pointer") && !!(textOf(el) || el.getAttribute("aria-label") ||
          el.getAttribute("title") || el.querySelector("img[alt]:not([alt='']),[aria-label],[title]") || iconName(el) ||
          swatchName(el));
      }
      if (d && el.querySelector(NATIVE_CONTROL)) {
        // a wrapper whose text all sits in the controls inside it (a card around its links): they are the targets
        let inside = 0;
        for (const c of el.querySelectorAll(NATIVE_CONTROL)) inside += textOf(c).length;
        if (inside + 2 >= textOf(el).length) d = false;
      }
    } else if (el.ownerSVGElement || tag === "svg") {
      // an icon drawn in SVG: its listener counts, the pointer cursor it inherits does not
      d = !!(LISTENED && LISTENED.has(el) && tag === "svg") || el.hasAttribute("onclick");
    }
    driven.set(el, d);
    return d;
  }
  function isInteractive(el, role) {
    if (INTERACTIVE.has(role)) return true;
    if (SCRIPT_ROLES.has(role)) {
      if (focusable(el) && el.tagName !== "BODY" && el.tagName !== "HTML") return true;
      if (scriptDriven(el)) return true;
    }
    return false;
  }
  function displayRole(el, role) {
    if (role) return role;
    return "clickable";
  }

  // ---- the outline ----------------------------------------------------------------------------
  // A node: {line, kids: [], text: bool}. Text runs are buffered per block and flushed as
  // {text: "..."} nodes; wrappers without role vanish (their children are lifted).
  const opts = req.opts || {};
  const onlyInteractive = opts.filter === "interactive";
  const frameMarks = [];

  // Content longer than this makes an interactive element a container (see emitElement).
  const ATOMIC_CHARS = 150;
  // A link's shortened target is marked while the outline is built; `outline` prints it as " → h" the
  // first time the read shows h, and leaves it out after that (a nav repeated in the footer, a card's
  // image, title and "read more" links): every link keeps its ref, each target is said once.
  const HREF_MARK = "\u0001", HREF_END = "\u0002", HREF_MARKS = /[\u0001\u0002]/g;
  // The first few visible words of an element, up to the end of its first block of text (images'
  // alt text only when it has no text at all), marked "…" as the start of what is listed beneath it.
  function firstWords(el) {
    const words = [];
    let alt = "", done = false;
    const visit = (n) => {
      if (done) return;
      if (n.nodeType === 3) {
        const p = n.parentElement;
        if (!p || selfVisible(p)) for (const w of ws(n.nodeValue).split(" ")) if (w && words.length < 6) words.push(w);
        done = words.length >= 6;
        return;
      }
      if (n.nodeType !== 1 || hiddenTree(n, true)) return;
      if (n.tagName === "IMG") { if (!alt) alt = ws(n.getAttribute("alt")); return; }
      const block = n.tagName === "BR" || !INLINE_DISPLAY.test(style(n).display);
      if (block && words.length) { done = true; return; }
      for (const c of childNodesOf(n)) visit(c);
      if (block && words.length) done = true;
    };
    for (const c of childNodesOf(el)) visit(c);
    const t = ws(words.join(" ")) || alt;
    return t.length > 48 ? t.slice(0, 47) + "…" : t + "…";
  }

  // A name longer than this is cut — but for a <label>'s text, which the page shows and the outline
  // says nowhere else (a consent box's long sentence): that is kept whole up to NAME_SHOWN_MAX.
  const NAME_MAX = 300, NAME_SHOWN_MAX = 3000;
  function describeLine(el, role, name, ref, states, extra, nameSrc) {
    let s = "- " + displayRole(el, role);
    if (name) s += " " + q(clip(name, nameSrc === "label" ? NAME_SHOWN_MAX : NAME_MAX));
    if (ref !== undefined) s += " [" + PREFIX + ref + "]";
    if (extra) s += (extra[0] === HREF_MARK ? "" : " ") + extra;
    if (states.length) s += " " + states.join(" ");
    return s;
  }

  function buildOutline(rootEl) {
    const top = { kids: [] };
    // stack of open containers; buffer of inline text of the current block
    let buf = [];
    let cur = top;
    const flush = () => {
      if (!buf.length) return;
      const t = ws(buf.join(""));
      buf = [];
      bufText = false;
      if (t && !onlyInteractive) cur.kids.push({ text: t });
    };
    let bufText = false;  // does the current block hold visible text yet (without re-joining buf)
    const pushText = (s) => { buf.push(s); if (!bufText && /\S/.test(s)) bufText = true; };

    function emitElement(el, role, forceBlock) {
      // returns true when it consumed the element (its children included)
      const interactive = isInteractive(el, role);
      const tag = el.tagName;
      if (interactive) {
        if (!selfVisible(el)) return false;
        if (zeroBox(el) && !(tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") && !el.getClientRects().length) {
          // zero-size and no box: not visible; children may still be (display:contents-like)
          if (!el.children.length) return true;
          return false;
        }
        const ref = refOf(el);
        let [name, nameSrc] = nameOf(el, role);
        // More than a short phrase inside (an article with a click handler, a card link, a role=button
        // wrapper): a container. Its line gets a short name (its own label, or its first words) and its
        // content stays beneath it; only atomic controls fold their text into their name.
        const container = !forceBlock && tag !== "INPUT" && tag !== "TEXTAREA" && tag !== "SELECT" &&
          (nameSrc === "content" ? name : textOf(el)).length > ATOMIC_CHARS;
        if (container) name = nameSrc === "content" ? firstWords(el) : clip(name, 120);
        const states = statesOf(el, role);
        if (nameSrc === "icon") states.unshift("inferred");
        let extra = "";
        if (role === "link") {
          const h = shortHref(el);
          if (h) extra = HREF_MARK + h + HREF_END;  // " → h" the first time the read shows h (see outline)
        } else {
          const v = valueOf(el, role);
          // A long value is cut in the page's outline, saying how long it is; reading the field itself
          // (ref_id) gives it whole: the text a person scrolls through in a textarea.
          if (v && v !== name) {
            const whole = el === rootEl ? FIELD_VALUE_MAX : FIELD_VALUE_CLIP;
            extra = "value=" + q(clip(v, whole)) + (v.length > whole ? " (" + v.length + " chars)" : "");
          }
          if (tag === "INPUT") { const f = fieldFormat(el); if (f) extra += (extra ? " " : "") + f; }
        }
        // A link inside running text stays inline, markdown-style: "see [the docs](ax_9 → /docs) now".
        if ((role === "link" || (!role && tag !== "IMG")) && name && !container && !states.length && !onlyInteractive && bufText &&
            INLINE_DISPLAY.test(style(el).display) && !hasInteractiveInside(el)) {
          pushText(" [" + clip(name, 300).replace(/[\[\]\\]/g, "\\$&") + "](" + PREFIX + ref + extra + ") ");
          return true;
        }
        flush();
        const node = { line: describeLine(el, role, name, ref, states, extra, nameSrc), kids: [] };
        cur.kids.push(node);
        if (tag === "SELECT") {
          const names = Array.from(el.options).map((o) => ws(o.label || o.textContent)).filter(Boolean);
          if (names.length && !onlyInteractive) node.line += " options: " + names.join(" | ");  // all: they are its words
          else if (names.length) node.line += " options: " + clip(names.join(" | "), 400);
          return true;
        }
        if (container) {
          const saved = cur; const savedBuf = buf; const savedText = bufText;
          cur = node; buf = []; bufText = false;
          walkChildren(el, false);
          flush();
          buf = savedBuf; bufText = savedText; cur = saved;
          return true;
        }
        // Descend for nested interactive elements only (name already carries the text).
        if (tag !== "INPUT" && tag !== "TEXTAREA" && el.querySelector && hasInteractiveInside(el)) {
          const saved = cur; const savedBuf = buf; const savedText = bufText;
          cur = node; buf = []; bufText = false;
          walkChildren(el, true);
          buf = savedBuf; bufText = savedText; cur = saved;
        }
        return true;
      }
      if (role === "heading") {
        if (!selfVisible(el)) return false;
        flush();
        const lvl = el.getAttribute("aria-level") || (/^H[1-6]$/.test(tag) ? tag[1] : "2");
        const name = nameOf(el, role)[0];
        const node = { line: "- heading " + q(name) + " [level=" + lvl + "]", kids: [] };
        if (hasInteractiveInside(el)) {
          const saved = cur; const savedBuf = buf; const savedText = bufText;
          cur = node; buf = []; bufText = false;
          walkChildren(el, true);
          buf = savedBuf; bufText = savedText; cur = saved;
          // heading that is just one link/button with the same name: merge into one line
          if (!onlyInteractive && node.kids.length === 1 && !node.kids[0].kids.length && node.kids[0].line &&
              node.kids[0].line.indexOf(q(name)) > 0) {
            node.line = "- heading [level=" + lvl + "]: " + node.kids[0].line.slice(2);
            node.kids = [];
          }
        }
        if (onlyInteractive) { for (const k of node.kids) cur.kids.push(k); return true; }
        if (name || node.kids.length) cur.kids.push(node);
        return true;
      }
      if (role === "img") {
        if (!selfVisible(el)) return true;
        const name = nameOf(el, role)[0];
        if (name && !onlyInteractive) {
          if (INLINE_DISPLAY.test(style(el).display) && buf.length && !forceBlock) { pushText(" [img " + q(name) + "] "); return true; }
          flush();
          cur.kids.push({ line: "- img " + q(clip(name, 200)), kids: [] });
        }
        if (tag === "IMG") return true;
        return false;
      }
      if (role === "iframe") {
        flush();
        const id = refOf(el);
        const name = nameOf(el, role)[0];
        const node = { line: "- iframe" + (name ? " " + q(clip(name, 80)) : "") + ":", kids: [], frame: id };
        frameMarks.push(id);
        cur.kids.push(node);
        return true;
      }
      if (role === "separator" || role === "progressbar" || role === "meter") {
        if (role !== "separator" && !onlyInteractive) {
          flush();
          const v = valueOf(el, role) || el.value;
          cur.kids.push({ line: "- " + role + (v !== undefined && v !== "" ? " value=" + q(String(v)) : ""), kids: [] });
          return true;
        }
        return role === "separator";
      }
      if (CONTAINERS.has(role) && !onlyInteractive) {
        flush();
        let name = "";
        if (role !== "listitem" && role !== "row" && role !== "list" && role !== "article" && role !== "blockquote") {
          name = nameOf(el, role)[0];
          if (name.length > 80) name = "";
        }
        const node = { line: "- " + role + (name ? " " + q(name) : ""), kids: [], role };
        const saved = cur; cur = node;
        if (tag === "DETAILS" && !el.open) {
          const sm = el.querySelector(":scope > summary");
          if (sm) walkNode(sm);
        } else {
          walkChildren(el);
        }
        flush();
        cur = saved;
        if (node.kids.length) cur.kids.push(node);
        return true;
      }
      return false;
    }

    function hasInteractiveInside(el) {
      return listenedInside().has(el) || !!el.querySelector("a[href],button,input,select,textarea,[role=button],[role=link],[role=checkbox],[role=tab],[role=menuitem],[role=option],[role=treeitem],[role=radio],[role=switch],[role=gridcell],[role=menuitemcheckbox],[role=menuitemradio],[tabindex],[contenteditable],iframe,summary");
    }

    function walkNode(n, nestedOnly) {
      if (n.nodeType === 3) {
        if (nestedOnly) return;
        const p = n.parentElement || (n.parentNode && n.parentNode.host);
        if (!p || selfVisible(p)) pushText(n.nodeValue.replace(HREF_MARKS, ""));
        return;
      }
      if (n.nodeType !== 1) return;
      const el = n;
      if (hiddenTree(el)) return;
      const tag = el.tagName;
      if (tag === "BR") { if (!nestedOnly) pushText("\n"); return; }
      // A label whose text already names its (visible) control adds nothing: keep only what it nests.
      if (tag === "LABEL" && !nestedOnly && el.control && el.control !== el && !hiddenTree(el.control) &&
          el.control.getAttribute("aria-label") === null && el.control.getAttribute("aria-labelledby") === null) {
        walkChildren(el, true);
        return;
      }
      if (tag === "LEGEND" && !nestedOnly && el.parentElement && el.parentElement.tagName === "FIELDSET" && !onlyInteractive) {
        walkChildren(el, true);  // the fieldset's group line already carries it as its name
        return;
      }
      const role = roleOf(el);
      if (nestedOnly) {
        const inter = isInteractive(el, role) || role === "iframe";
        if (inter) { emitElement(el, role, true); return; }
        walkChildren(el, true);
        return;
      }
      if (role && emitElement(el, role, false)) return;
      if (!role && isInteractive(el, role) && emitElement(el, role, false)) return;
      const d = style(el).display;
      const block = !INLINE_DISPLAY.test(d) && d !== "contents";
      if (block) flush();
      if (tag === "DETAILS" && !el.open) {
        const sm = el.querySelector(":scope > summary");
        if (sm) walkNode(sm);
      } else {
        walkChildren(el, false);
      }
      if (block) flush(); else if (d.startsWith("inline-")) pushText(" ");
      if (tag === "TD" || tag === "TH") pushText(" | ");
    }
    function walkChildren(el, nestedOnly) {
      for (const c of childNodesOf(el)) walkNode(c, nestedOnly);
    }

    if (rootEl === document.body || rootEl === document.documentElement) {
      walkChildren(rootEl, false);
    } else {
      walkNode(rootEl, false);
    }
    flush();
    return top;
  }

  // ---- rendering: collapse and print ----------------------------------------------------------
  function simplify(node) {
    // returns a list of nodes replacing `node`
    if (node.text !== undefined) return [node];
    const kids = [];
    for (const k of node.kids) for (const r of simplify(k)) kids.push(r);
    // merge consecutive text runs that ended up adjacent
    const merged = [];
    for (const k of kids) {
      const last = merged[merged.length - 1];
      if (k.text !== undefined && last && last.text !== undefined &&
          (node.role === "row" || (last.text.length < 60 && /:$/.test(last.text)))) last.text += " " + k.text;
      else merged.push(k);
    }
    // A container holding nothing but one unnamed list (a navigation's menu): the list line adds no word.
    if (node.line && merged.length === 1 && merged[0].role === "list" && merged[0].line === "- list") {
      node.kids = merged[0].kids;
    } else {
      node.kids = merged;
    }
    if (node.role === "listitem") {
      if (node.kids.length === 1) return node.kids;     // the item is its single child
      if (!node.kids.length) return [];
    }
    if (node.role === "row") {
      if (node.kids.every((k) => k.text !== undefined)) {
        const t = node.kids.map((k) => k.text.replace(/\s*\|\s*$/, "")).join(" | ");
        return t ? [{ text: t, row: true }] : [];
      }
    }
    return [node];
  }
  function render(node, indent, depth, lines, maxDepth) {
    for (const k of node.kids) {
      if (k.text !== undefined) {
        let t = k.text.replace(/\s*\|\s*$/, "");
        // Text is a plain line (an element's line starts with "- "); text that itself starts with "-"
        // keeps the "- text: " prefix so that it cannot be read as an element.
        if (t) lines.push(indent + (k.row ? "- row: " : t[0] === "-" ? "- text: " : "") + t);
        continue;
      }
      if (k.frame !== undefined) {
        lines.push(indent + k.line);
        lines.push(indent + "  \u0000frame:" + k.frame);
        continue;
      }
      // single text child → inline
      if (k.kids.length === 1 && k.kids[0].text !== undefined && k.kids[0].frame === undefined) {
        lines.push(indent + k.line + ": " + k.kids[0].text.replace(/\s*\|\s*$/, ""));
        continue;
      }
      if (maxDepth !== null && depth >= maxDepth) {
        lines.push(indent + k.line + (k.kids.length ? " …" : ""));
        continue;
      }
      lines.push(indent + k.line + (k.kids.length && !k.line.endsWith(":") ? ":" : ""));
      render(k, indent + "  ", depth + 1, lines, maxDepth);
    }
  }

  function outline(rootEl) {
    const top = buildOutline(rootEl);
    const flat = { kids: [] };
    for (const k of top.kids) for (const r of simplify(k)) flat.kids.push(r);
    const lines = [];
    if (onlyInteractive) {
      // interactive lines only, flat
      const walk = (n) => { for (const k of n.kids) { if (k.line) lines.push(k.frame !== undefined ? k.line + "\n  \u0000frame:" + k.frame : k.line); walk(k); } };
      walk(flat);
    } else {
      render(flat, "", 0, lines, opts.depth == null ? null : opts.depth);
    }
    const seen = new Set();
    return lines.join("\n").replace(/\u0001([^\u0002]*)\u0002/g, (m, h) => {
      if (seen.has(h)) return "";
      seen.add(h);
      return " → " + h;
    });
  }

  // ---- operations ----------------------------------------------------------------------------
  function rootFor(ref) {
    if (ref == null) return document.body || document.documentElement;
    return lookup(ref);
  }
  function info(el) {
    const role = roleOf(el);
    const name = nameOf(el, role);
    return { ref: PREFIX + refOf(el), role: displayRole(el, role), name: name[0], name_source: name[1] };
  }
  // Where an element sits, to tell twins apart: its row, list item, card, form or group, as
  // `row "Invoice 1002 — Globex"` (that container's name, or its text without the element's own).
  function contextOf(el) {
    const own = textOf(el);
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const r = roleOf(p), tag = p.tagName;
      let kind = "";
      if (tag === "TR" || r === "row") kind = "row";
      else if (r === "listitem") kind = "item";
      else if (r === "article" || /(^|[\s_-])card([\s_-]|$)/i.test(p.className || "")) kind = "card";
      else if (r === "form" || r === "search" || tag === "FORM") kind = "form";
      else if (r === "group" || r === "dialog" || r === "region" || r === "tabpanel" || r === "menu") kind = r;
      if (!kind) continue;
      let t = nameOf(p, r)[0];
      if (!t) t = ws(own ? textOf(p).split(own).join(" ") : textOf(p));
      if (!t && kind === "form") t = p.id || p.getAttribute("name") || "";
      if (t) return kind + " " + q(clip(t, 60));
    }
    return "";
  }
  function candidateList() {
    const out = [];
    const visit = (root) => {
      const all = root.querySelectorAll("*");
      for (const el of all) {
        if (el.shadowRoot) visit(el.shadowRoot);
        const role = roleOf(el);
        const extraTarget = el.getAttribute("draggable") === "true" ||
          ((role === "region" || role === "form" || role === "dialog" || role === "group" || role === "list") &&
           (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby")));
        if (!isInteractive(el, role) && !extraTarget) continue;
        // visibility: no hidden ancestor
        if (!visibleForAction(el)) continue;
        const nm = nameOf(el, role);
        const c = {
          ref: PREFIX + refOf(el), role: displayRole(el, role), name: nm[0], name_source: nm[1],
          tag: el.tagName.toLowerCase(),
        };
        const lt = (el.labels && el.labels.length) ? labelText(el) : "";
        if (lt) c.label = lt;
        const ph = el.getAttribute("placeholder");
        if (ph) c.placeholder = ws(ph);
        const nmAttr = el.getAttribute("name");
        if (nmAttr) c.attr_name = nmAttr;
        if (el.id) c.id = el.id;
        const tid = el.getAttribute("data-testid");
        if (tid) c.testid = tid;
        if (!nm[0] || nm[1] !== "content") { const t = textOf(el); if (t) c.text = clip(t, 200); }
        else c.text = clip(nm[0], 200);
        out.push(c);
      }
    };
    visit(document);
    return out;
  }
  function visibleForAction(el) {
    for (let e = el; e; e = e.parentElement || (e.getRootNode && e.getRootNode().host)) {
      if (e.nodeType !== 1) break;
      if (hiddenTree(e)) return false;
    }
    if (!selfVisible(el)) return false;
    if (zeroBox(el) && !(el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA")) return false;
    return true;
  }

  // ---- selector chains -------------------------------------------------------------------------
  const GENERATED = /^(css-|sc-|jsx-|emotion-|_)|[0-9a-f]{6,}|\d{3,}|^[a-z]{1,3}\d|__/i;
  function cssEscape(s) { return CSS.escape(s); }
  function uniqueIn(root, sel, el) {
    try { const m = root.querySelectorAll(sel); return m.length === 1 && m[0] === el; } catch (e) { return false; }
  }
  function xpathOf(el) {
    const parts = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      if (e.id && !GENERATED.test(e.id) && e !== el) {
        parts.unshift("//*[@id=" + q(e.id) + "]");
        return parts.join("/");
      }
      let i = 1;
      for (let s = e.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === e.tagName) i++;
      let many = i > 1;
      if (!many) for (let s = e.nextElementSibling; s; s = s.nextElementSibling) if (s.tagName === e.tagName) { many = true; break; }
      parts.unshift(e.tagName.toLowerCase() + (many ? "[" + i + "]" : ""));
    }
    return "/" + parts.join("/");
  }
  // Chains are emitted in the stored form (the one skills keep on disk): {type: "role_name", role, name}
  // or {type: "accessible_name"|"css"|"xpath"|"text", value}.
  function chainOf(el) {
    const role = roleOf(el);
    const [name] = nameOf(el, role);
    const chain = [];
    const root = el.getRootNode();
    if (role && name) chain.push({ type: "role_name", role: displayRole(el, role), name });
    if (name) chain.push({ type: "accessible_name", value: name });
    const tag = el.tagName.toLowerCase();
    const css = [];
    const tid = el.getAttribute("data-testid");
    if (tid) css.push("[data-testid=" + q(tid) + "]");
    if (el.id && !GENERATED.test(el.id)) css.push("#" + cssEscape(el.id));
    const nm = el.getAttribute("name");
    if (nm) css.push(tag + "[name=" + q(nm) + "]");
    for (const sel of css) if (uniqueIn(root, sel, el)) { chain.push({ type: "css", value: sel }); break; }
    if (root === document) chain.push({ type: "xpath", value: xpathOf(el) });
    const text = textOf(el);
    if (text && text.length <= 80) chain.push({ type: "text", value: text });
    return chain;
  }
  function allElements() {
    const out = [];
    const visit = (root) => { for (const el of root.querySelectorAll("*")) { out.push(el); if (el.shadowRoot) visit(el.shadowRoot); } };
    visit(document);
    return out;
  }
  function matchEntry(entry) {
    const kind = entry.type;
    if (kind === "node_ref") {  // a ref of this document (refs never move to another element)
      const m = /^ax_(\d+)$/.exec(String(entry.value));
      const el = m ? lookup(+m[1]) : null;
      return el ? [el] : [];
    }
    if (kind === "css") {
      const found = [];
      const visit = (root) => {
        try { for (const e of root.querySelectorAll(entry.value)) found.push(e); } catch (e) { /* bad selector */ }
        for (const e of root.querySelectorAll("*")) if (e.shadowRoot) visit(e.shadowRoot);
      };
      visit(document);
      return found;
    }
    if (kind === "xpath") {
      const found = [];
      try {
        const r = document.evaluate(entry.value, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
        for (let i = 0; i < r.snapshotLength; i++) if (r.snapshotItem(i).nodeType === 1) found.push(r.snapshotItem(i));
      } catch (e) { /* bad xpath */ }
      return found;
    }
    const found = [];
    if (kind !== "role_name" && kind !== "accessible_name" && kind !== "text") return found;
    for (const el of allElements()) {
      // cheapest tests first: the role needs no style; hiddenTree and names do
      const role = roleOf(el);
      if (kind === "role_name" && displayRole(el, role) !== entry.role) continue;
      if (!role && !isInteractive(el, role)) continue;
      if (hiddenTree(el)) continue;
      if (kind === "role_name" || kind === "accessible_name") {
        const want = kind === "role_name" ? entry.name : entry.value;
        if (nameOf(el, role)[0] === want && visibleForAction(el)) found.push(el);
      } else if (textOf(el) === entry.value && visibleForAction(el)) {
        found.push(el);
      }
    }
    return found;
  }

  // ---- fingerprints: what a recorded element was, checked before a replayed step acts ----------
  const FP_FIELDS = ["role", "name", "tag", "type", "name_attr", "autocomplete", "label"];
  const FP_FOLD = new Set(["name", "label"]);  // compared without regard to case
  function fingerprintOf(el) {
    const role = roleOf(el);
    const tag = el.tagName.toLowerCase();
    const formy = tag === "input" || tag === "button" || tag === "select" || tag === "textarea";
    return {
      role: displayRole(el, role), name: nameOf(el, role)[0], tag,
      type: formy ? String(el.type || "").toLowerCase() : "",
      name_attr: el.getAttribute("name") || "", autocomplete: ws(el.getAttribute("autocomplete")).toLowerCase(),
      label: labelText(el),
    };
  }
  // Fields of `fp` (recorded) that `cur` (found) disagrees with; fields missing from `fp` are not checked.
  function differs(fp, cur, tolerate) {
    const out = [];
    for (const k of FP_FIELDS) {
      if (!(k in fp) || fp[k] === null || tolerate.includes(k)) continue;
      let a = ws(String(fp[k])), b = ws(String(cur[k] || ""));
      if (FP_FOLD.has(k)) { a = a.toLowerCase(); b = b.toLowerCase(); }
      if (a !== b) out.push(k);
    }
    return out;
  }
  function brief(el, cur, diff, noRef) {
    const out = { role: cur.role, name: cur.name, tag: cur.tag };
    if (!noRef) out.ref = PREFIX + refOf(el);
    if (cur.type) out.type = cur.type;
    if (diff) out.differs = diff;
    return out;
  }
  // Visible elements that could be the recorded one: same role and input type, fewest differences first.
  function nearby(fp, tolerate, skip) {
    const out = [];
    for (const el of allElements()) {
      if (el === skip) continue;
      const role = roleOf(el);
      if (fp.role && displayRole(el, role) !== fp.role) continue;
      if (!role && !isInteractive(el, role)) continue;
      if (hiddenTree(el) || !visibleForAction(el)) continue;
      const cur = fingerprintOf(el);
      if (fp.type && cur.type !== fp.type) continue;
      out.push([differs(fp, cur, tolerate), el, cur]);
    }
    out.sort((a, b) => a[0].length - b[0].length);
    return out;
  }
  // One replay step: the chain's entries in order; the first element a chain entry singles out that
  // agrees with the fingerprint (and is visible) is chosen, unless other visible elements agree as well.
  // With `onlyFirst`, only an agreeing element singled out by the first entry counts (no refs assigned):
  // the fast path, one round trip returning the element itself.
  function resolveStep(chain, fp, tolerate, onlyFirst) {
    const counts = [];
    let refused = null;
    for (let i = 0; i < (onlyFirst ? Math.min(1, chain.length) : chain.length); i++) {
      let m;
      try { m = matchEntry(chain[i]); } catch (e) { m = []; }
      counts.push(m.length);
      if (m.length !== 1) continue;
      const el = m[0];
      const cur = fingerprintOf(el);
      const diff = differs(fp, cur, tolerate);
      if (!visibleForAction(el)) diff.push("visible");
      if (!diff.length) {
        const ok = { status: "ok", el, entry: i, counts, found: brief(el, cur, null, onlyFirst) };
        if (!onlyFirst) ok.ref = PREFIX + refOf(el);
        if (!Object.keys(fp).length) return ok;
        const twins = nearby(fp, tolerate, el).filter((t) => !t[0].length);
        if (onlyFirst && twins.length > (fp.twins || 0)) return { status: "ambiguous" };
        if (twins.length > (fp.twins || 0)) {
          return { status: "ambiguous", entry: i, counts, refused: brief(el, cur, []),
                   candidates: [brief(el, cur, [])].concat(twins.slice(0, 2).map((t) => brief(t[1], t[2], []))),
                   agreeing: twins.length + 1 };
        }
        return ok;
      }
      if (!refused) refused = { el, cur, diff, entry: i };
    }
    if (onlyFirst) return { status: "slow" };
    const out = { status: refused ? "refused" : "none", counts };
    if (refused) {
      out.entry = refused.entry;
      out.refused = brief(refused.el, refused.cur, refused.diff);
      out.found = {};
      for (const k of refused.diff) if (k !== "visible") out.found[k] = refused.cur[k];
    }
    if (Object.keys(fp).length) {
      // the refused element itself stays listed when its role and type agree (a renamed label: confirm it)
      out.candidates = nearby(fp, tolerate, null).slice(0, 3).map((t) => brief(t[1], t[2], t[0]));
    }
    return out;
  }
  function twinCount(el, fp) {
    let n = 0;
    for (const t of nearby(fp, [], el)) if (!t[0].length) n++;
    return n;
  }

  // ---- hit test: what a click at (x, y) of this frame's viewport lands on ------------------------
  // The deepest element there (through open shadow roots), reported as its nearest interactive
  // ancestor (itself when none is). An <iframe> also says which frame it is and where its content
  // starts, so the caller can ask that frame. `unit: "%"` reads x and y as percentages of the viewport.
  function hitAt(x, y, unit) {
    if (unit === "%") { x = x / 100 * innerWidth; y = y / 100 * innerHeight; }
    let el = document.elementFromPoint(x, y);
    if (!el) return null;
    for (let inner; el.shadowRoot && (inner = el.shadowRoot.elementFromPoint(x, y)) && inner !== el;) el = inner;
    let target = el;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement || e.getRootNode().host) {
      if (isInteractive(e, roleOf(e))) { target = e; break; }
    }
    const r = target.getBoundingClientRect();
    const out = info(target);
    if (!isInteractive(target, roleOf(target))) out.role = roleOf(target) || "generic";
    out.tag = target.tagName.toLowerCase();
    out.visible = visibleForAction(target);
    out.rect = { x: r.left, y: r.top, width: r.width, height: r.height };
    out.point = { x, y };
    out.viewport = { width: innerWidth, height: innerHeight };
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
      const f = el.getBoundingClientRect(), cs = getComputedStyle(el);
      out.frame = refOf(el);
      out.content = { x: f.left + el.clientLeft + parseFloat(cs.paddingLeft), y: f.top + el.clientTop + parseFloat(cs.paddingTop) };
    }
    return out;
  }

  // ---- dispatch ----------------------------------------------------------------------------------
  const op = req.op;
  let result;
  if (op === "snapshot") {
    const root = rootFor(req.ref);
    if (!root) result = { stale: true };
    else if (opts.mode === "text") {
      result = { content: (root.innerText || "").replace(/[ \t\u00a0]+/g, " ").replace(/\n\s*\n+/g, "\n").trim() };
      // frames are text too
      const fr = [];
      for (const f of root.querySelectorAll("iframe,frame")) fr.push(refOf(f));
      result.frames = fr;
    } else if (opts.mode === "dom") {
      const lines = [];
      const fr = [];
      const walk = (el, indent, d) => {
        if (SKIP_TAGS.has(el.tagName)) return;
        let s = indent + "- " + el.tagName.toLowerCase();
        if (el.id) s += "#" + el.id;
        for (const a of ["name", "type", "role", "aria-label", "data-testid", "href", "placeholder"]) {
          const v = el.getAttribute(a); if (v) s += " " + a + "=" + q(clip(v, 60));
        }
        const role = roleOf(el);
        if (isInteractive(el, role)) s += " [" + PREFIX + refOf(el) + "]";
        let own = "";
        for (const c of el.childNodes) if (c.nodeType === 3) own += c.nodeValue;
        own = ws(own);
        if (own) s += ": " + clip(own, 120);
        lines.push(s);
        if (el.tagName === "IFRAME" || el.tagName === "FRAME") { const id = refOf(el); fr.push(id); lines.push(indent + "  \u0000frame:" + id); return; }
        if (opts.depth != null && d >= opts.depth) return;
        const kids = el.shadowRoot ? el.shadowRoot.children : el.children;
        for (const c of kids) { if (!hiddenTree(c)) walk(c, indent + "  ", d + 1); }
      };
      walk(root, "", 0);
      result = { content: lines.join("\n"), frames: fr };
    } else {
      result = { content: outline(root), frames: frameMarks };
    }
    result.url = location.href;
    result.title = document.title;
  } else if (op === "frameRef") {
    // called on the parent frame with an <iframe> element handle; never assigns (safe to run in parallel)
    result = peekRef(req.el) === undefined ? null : peekRef(req.el);
  } else if (op === "resolve") {
    const el = lookup(req.id);
    result = el;
  } else if (op === "has") {
    result = !!lookup(req.id);
  } else if (op === "info") {
    result = info(req.el);
  } else if (op === "candidates") {
    result = candidateList();
  } else if (op === "contexts") {
    result = (req.refs || []).map((r) => { const el = lookup(+String(r).replace(PREFIX, "")); return el ? contextOf(el) : ""; });
  } else if (op === "assign") {
    result = (req.els || []).map((el) => info(el));
  } else if (op === "refs") {
    // ref numbers for elements another in-page script found (extract.js), in the same registry
    result = (req.els || []).map(refOf);
  } else if (op === "query") {
    let els = [];
    try {
      if (req.method === "xpath") {
        const r = document.evaluate(req.selector, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
        for (let i = 0; i < r.snapshotLength; i++) if (r.snapshotItem(i).nodeType === 1) els.push(r.snapshotItem(i));
      } else {
        els = Array.from(document.querySelectorAll(req.selector));
      }
    } catch (e) {
      result = { error: String(e.message || e) };
    }
    if (!result) {
      result = { matches: els.slice(0, req.limit || 50).map((el) => { const i = info(el); i.tag = el.tagName.toLowerCase(); i.visible = visibleForAction(el); return i; }), total: els.length };
    }
  } else if (op === "textMatches") {
    // deepest visible elements whose text equals the query (case and spacing aside)
    const want = ws(req.text).toLowerCase();
    const hits = [];
    for (const el of allElements()) {
      if (!ws(el.textContent).toLowerCase().includes(want)) continue;
      if (el.tagName === "HTML" || el.tagName === "BODY" || SKIP_TAGS.has(el.tagName)) continue;
      if (textOf(el).toLowerCase() !== want || !visibleForAction(el)) continue;
      for (let i = hits.length - 1; i >= 0; i--) if (hits[i].contains(el)) hits.splice(i, 1);
      hits.push(el);
    }
    // each as the element a click on it acts on: its nearest interactive ancestor (itself when none is)
    const targets = [];
    for (const el of hits) {
      let t = el;
      for (let e = el; e && e.nodeType === 1 && e !== document.body; e = e.parentElement) {
        if (isInteractive(e, roleOf(e))) { t = e; break; }
      }
      if (!targets.includes(t)) targets.push(t);
    }
    result = targets.slice(0, 20).map((el) => { const i = info(el); i.tag = el.tagName.toLowerCase(); i.text = textOf(el); return i; });
  } else if (op === "chain") {
    result = chainOf(req.el);
  } else if (op === "capture") {
    const fp = fingerprintOf(req.el);
    const twins = twinCount(req.el, fp);
    if (twins) fp.twins = twins;
    result = { chain: chainOf(req.el), fingerprint: fp };
  } else if (op === "fingerprint") {
    result = fingerprintOf(req.el);
  } else if (op === "resolveStep") {
    result = resolveStep(req.chain || [], req.fingerprint || {}, req.tolerate || [], false);
    delete result.el;
  } else if (op === "resolveFirst") {
    // the element itself when the chain's first entry singles out an agreeing one, else null
    const r = resolveStep(req.chain || [], req.fingerprint || {}, req.tolerate || [], true);
    result = r.status === "ok" ? r.el : null;
  } else if (op === "hitTest") {
    result = hitAt(req.x, req.y, req.unit);
  } else if (op === "mutations") {
    result = S.mutations;
  } else {
    throw new Error("unknown op " + op);
  }
  return { result, next };
})
