// seen_text: the text a person sees in an element, as extract reports a cell or a field.

// The text a person sees in a cell or field: visible text, an input's value (never a password's), the
// selected option; an image's alt text only when nothing else is written there.
function seenText(root, skip) {
  const parts = [];
  const alts = [];
  const visit = (n) => {
    if (n.nodeType === 3) {
      const parent = n.parentElement;
      if (!parent || selfVisible(parent)) parts.push(n.nodeValue);
      return;
    }
    if (n.nodeType !== 1 || SKIP_TAGS.has(n.tagName)) return;
    if (skip && n !== root && skip(n)) return;
    const tag = n.tagName;
    const s = style(n);
    if (s.display === "none") return;
    if (tag === "INPUT") {
      const t = (n.type || "").toLowerCase();
      if (t === "hidden" || t === "image" || t === "file") return;
      if (t === "password") { if (n.value) parts.push(" •••• "); return; }
      if (t === "checkbox" || t === "radio") { parts.push(n.checked ? " true " : " false "); return; }
      parts.push(" " + (n.value || "") + " ");
      return;
    }
    if (tag === "TEXTAREA") { parts.push(" " + n.value + " "); return; }
    if (tag === "SELECT") {
      parts.push(" " + Array.from(n.selectedOptions).map((o) => o.textContent).join(", ") + " ");
      return;
    }
    if (tag === "IMG") { const a = n.getAttribute("alt"); if (a && squash(a)) alts.push(squash(a)); return; }
    if (tag === "BR") { parts.push(" "); return; }
    const block = n !== root && !INLINE_DISPLAY.test(s.display);
    if (block) parts.push(" ");
    for (const c of childNodesOf(n)) visit(c);
    if (block) parts.push(" ");
  };
  visit(root);
  const text = squash(parts.join(""));
  return text || alts.join(" ");
}
