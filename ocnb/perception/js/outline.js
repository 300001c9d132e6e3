// outline: the page as an indented outline of roles, names, states and refs (read_page's ax mode).

// Containers whose children are indented under a line of their own.
const CONTAINERS = new Set(["navigation", "main", "banner", "contentinfo", "complementary", "form",
  "dialog", "alertdialog", "list", "listitem", "table", "row", "region", "iframe", "group", "menu",
  "menubar", "tablist", "tabpanel", "radiogroup", "tree", "grid", "search", "article", "alert", "status",
  "toolbar", "figure", "blockquote"]);

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
      if (!p || selfVisible(p)) for (const w of squash(n.nodeValue).split(" ")) if (w && words.length < 6) words.push(w);
      done = words.length >= 6;
      return;
    }
    if (n.nodeType !== 1 || hiddenTree(n, true)) return;
    if (n.tagName === "IMG") { if (!alt) alt = squash(n.getAttribute("alt")); return; }
    const block = n.tagName === "BR" || !INLINE_DISPLAY.test(style(n).display);
    if (block && words.length) { done = true; return; }
    for (const c of childNodesOf(n)) visit(c);
    if (block && words.length) done = true;
  };
  for (const c of childNodesOf(el)) visit(c);
  const t = squash(words.join(" ")) || alt;
  return t.length > 48 ? t.slice(0, 47) + "…" : t + "…";
}

// A name longer than this is cut — but for a <label>'s text, which the page shows and the outline
// says nowhere else (a consent box's long sentence): that is kept whole up to NAME_SHOWN_MAX.
const NAME_MAX = 300, NAME_SHOWN_MAX = 3000;
function describeLine(el, role, name, ref, states, extra, nameSrc) {
  let s = "- " + displayRole(el, role);
  if (name) s += " " + quote(clip(name, nameSrc === "label" ? NAME_SHOWN_MAX : NAME_MAX));
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
    const t = squash(buf.join(""));
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
      const field = tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
      const content = field ? "" : nameSrc === "content" ? name : textOf(el);
      const container = !forceBlock && !field && content.length > ATOMIC_CHARS;
      if (container) name = nameSrc === "content" ? firstWords(el) : clip(name, 120);
      // A name from aria-label, aria-labelledby or title that says other words than the element shows:
      // its text stays beneath it (as a container's does), so the page's words are all read.
      const shows = container || field ? "" : contentBeyondName(el, name, nameSrc, content);
      const states = statesOf(el, role);
      if (nameSrc === "icon" || inferredControl(el, role)) states.unshift("inferred");
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
          extra = "value=" + quote(clip(v, whole)) + (v.length > whole ? " (" + v.length + " chars)" : "");
        }
        if (tag === "INPUT" || role === "slider") { const f = fieldFormat(el, role); if (f) extra += (extra ? " " : "") + f; }
      }
      // A link inside running text stays inline, markdown-style: "see [the docs](ax_9 → /docs) now".
      if ((role === "link" || (!role && tag !== "IMG")) && name && !container && !shows && !states.length && !onlyInteractive && bufText &&
          INLINE_DISPLAY.test(style(el).display) && !hasInteractiveInside(el)) {
        pushText(" [" + clip(name, 300).replace(/[\[\]\\]/g, "\\$&") + "](" + PREFIX + ref + extra + ") ");
        return true;
      }
      flush();
      const node = { line: describeLine(el, role, name, ref, states, extra, nameSrc), kids: [] };
      cur.kids.push(node);
      if (tag === "SELECT") {
        const names = Array.from(el.options).map((o) => squash(o.label || o.textContent)).filter(Boolean);
        if (names.length && !onlyInteractive) node.line += " options: " + names.join(" | ");  // all: they are its words
        else if (names.length) node.line += " options: " + clip(names.join(" | "), 400);
        return true;
      }
      if (shows && !hasInteractiveInside(el)) {
        if (onlyInteractive) node.line += ": " + clip(shows, NAME_MAX);
        else node.kids.push({ text: clip(shows, NAME_MAX) });
        return true;
      }
      if (container || shows) {
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
      const [name, nameSrc] = nameOf(el, role);
      const node = { line: "- heading " + quote(name) + " [level=" + lvl + "]", kids: [] };
      const shows = contentBeyondName(el, name, nameSrc);
      if (shows && !hasInteractiveInside(el)) {
        if (!onlyInteractive) cur.kids.push({ line: node.line, kids: [{ text: clip(shows, NAME_SHOWN_MAX) }] });
        return true;
      } else if (hasInteractiveInside(el)) {
        const saved = cur; const savedBuf = buf; const savedText = bufText;
        cur = node; buf = []; bufText = false;
        walkChildren(el, true);
        buf = savedBuf; bufText = savedText; cur = saved;
        // heading that is just one link/button with the same name: merge into one line
        // (a link that keeps its shown text beneath its label keeps it: "…: link "Opens…" [ax_6]: Headline")
        const only = node.kids.length === 1 ? node.kids[0] : null;
        if (!onlyInteractive && only && only.line && only.line.indexOf(quote(name)) > 0 &&
            (!only.kids.length || (only.kids.length === 1 && only.kids[0].text !== undefined))) {
          node.line = "- heading [level=" + lvl + "]: " + only.line.slice(2);
          node.kids = only.kids;
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
        if (INLINE_DISPLAY.test(style(el).display) && buf.length && !forceBlock) { pushText(" [img " + quote(name) + "] "); return true; }
        flush();
        cur.kids.push({ line: "- img " + quote(clip(name, 200)), kids: [] });
      }
      if (tag === "IMG") return true;
      return false;
    }
    if (role === "iframe") {
      flush();
      const id = refOf(el);
      const name = nameOf(el, role)[0];
      const node = { line: "- iframe" + (name ? " " + quote(clip(name, 80)) : "") + ":", kids: [], frame: id };
      frameMarks.push(id);
      cur.kids.push(node);
      return true;
    }
    if (role === "separator" || role === "progressbar" || role === "meter") {
      if (role !== "separator" && !onlyInteractive) {
        flush();
        const v = valueOf(el, role) || el.value;
        cur.kids.push({ line: "- " + role + (v !== undefined && v !== "" ? " value=" + quote(String(v)) : ""), kids: [] });
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
      const node = { line: "- " + role + (name ? " " + quote(name) : ""), kids: [], role };
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

// ---- the snapshot op: the outline, or the page's text, or its elements ----------------------------
// The text a person reads (innerText, blank lines folded), and the refs of its frames.
function textSnapshot(root) {
  const result = { content: (root.innerText || "").replace(/[ \t\u00a0]+/g, " ").replace(/\n\s*\n+/g, "\n").trim() };
  // frames are text too
  const frames = [];
  for (const frame of root.querySelectorAll("iframe,frame")) frames.push(refOf(frame));
  result.frames = frames;
  return result;
}
// The element tree: tag, id, the telling attributes, own text, and a ref for what a person acts on.
function domSnapshot(root) {
  const lines = [];
  const frames = [];
  const walk = (el, indent, depth) => {
    if (SKIP_TAGS.has(el.tagName)) return;
    let line = indent + "- " + el.tagName.toLowerCase();
    if (el.id) line += "#" + el.id;
    for (const attr of ["name", "type", "role", "aria-label", "data-testid", "href", "placeholder"]) {
      const value = el.getAttribute(attr); if (value) line += " " + attr + "=" + quote(clip(value, 60));
    }
    const role = roleOf(el);
    if (isInteractive(el, role)) line += " [" + PREFIX + refOf(el) + "]";
    let own = "";
    for (const c of el.childNodes) if (c.nodeType === 3) own += c.nodeValue;
    own = squash(own);
    if (own) line += ": " + clip(own, 120);
    lines.push(line);
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") { const id = refOf(el); frames.push(id); lines.push(indent + "  \u0000frame:" + id); return; }
    if (opts.depth != null && depth >= opts.depth) return;
    const kids = el.shadowRoot ? el.shadowRoot.children : el.children;
    for (const c of kids) { if (!hiddenTree(c)) walk(c, indent + "  ", depth + 1); }
  };
  walk(root, "", 0);
  return { content: lines.join("\n"), frames };
}
// The page (or the element of req.ref) in the mode of req.opts: the outline, "text" or "dom".
function snapshot(req) {
  const root = rootFor(req.ref);
  let result;
  if (!root) result = { stale: true };
  else if (opts.mode === "text") result = textSnapshot(root);
  else if (opts.mode === "dom") result = domSnapshot(root);
  else result = { content: outline(root), frames: frameMarks };
  result.url = location.href;
  result.title = document.title;
  return result;
}
