// icons: names inferred for controls with no words — an icon's class, sprite or image file, a colour
// swatch's colour. Reported with the state "inferred".

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
  const w = squash(s.replace(/^([a-z]{2,4}[-_])?(icons?|ico|svg|sprite|symbol|i)[-_]/i, "").replace(/[-_]+/g, " ")
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
    if (/^(material-icons|material-symbols)/.test(cls.join(" ")) && squash(e.textContent)) return squash(e.textContent).replace(/_/g, " ");
  }
  return "";
}

