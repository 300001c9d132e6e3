// roles: an element's ARIA role, explicit (role="…") or implicit (HTML-AAM, the part ocnb uses).

// Roles a person acts on.
const INTERACTIVE = new Set(["link", "button", "textbox", "searchbox", "checkbox", "radio", "combobox",
  "listbox", "option", "slider", "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox",
  "menuitemradio", "treeitem", "gridcell"]);
// Roles with no interaction of their own that script can give one (a row of an inbox, a day cell).
const SCRIPT_ROLES = new Set(["", "paragraph", "listitem", "img", "cell", "row", "columnheader", "rowheader",
  "term", "definition", "figure", "heading", "strong", "emphasis", "code"]);

function inputRole(el) {
  const type = (el.getAttribute("type") || "text").toLowerCase();
  switch (type) {
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
    const tag = p.tagName;
    if (tag === "ARTICLE" || tag === "ASIDE" || tag === "MAIN" || tag === "NAV" || tag === "SECTION") return true;
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
// In the tab order by its own tabindex.
function focusable(el) {
  const tabIndex = el.getAttribute("tabindex");
  return tabIndex !== null && +tabIndex >= 0;
}
// The roles a role attribute may name: WAI-ARIA 1.2's non-abstract roles (the list Playwright's
// roleUtils.ts keeps as validRoles). Abstract roles (widget, landmark, …) and unknown words are not roles.
const VALID_ROLES = new Set(["alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
  "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary", "contentinfo", "definition",
  "deletion", "dialog", "directory", "document", "emphasis", "feed", "figure", "form", "generic", "grid", "gridcell",
  "group", "heading", "img", "insertion", "link", "list", "listbox", "listitem", "log", "main", "mark", "marquee",
  "math", "meter", "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio", "navigation", "none", "note",
  "option", "paragraph", "presentation", "progressbar", "radio", "radiogroup", "region", "row", "rowgroup",
  "rowheader", "scrollbar", "search", "searchbox", "separator", "slider", "spinbutton", "status", "strong",
  "subscript", "superscript", "switch", "tab", "table", "tablist", "tabpanel", "term", "textbox", "time", "timer",
  "toolbar", "tooltip", "tree", "treegrid", "treeitem"]);
// The role a role attribute names ("" when none): as WAI-ARIA 1.2 §7.1 (author errors) says, the first
// of its space-separated tokens that is a valid, non-abstract role; tokens that are not are skipped
// (role="foo button" is a button, role="widget" names none). Tokens compare lower-cased.
function explicitRole(el) {
  const value = el.getAttribute("role");
  if (!value) return "";
  for (const token of value.trim().toLowerCase().split(/\s+/)) if (VALID_ROLES.has(token)) return token;
  return "";
}
// The role ocnb reads an element as: its explicit role, else its implicit one; none/presentation
// drop the role (unless the element is focusable), generic is no role.
function roleOf(el) {
  const explicit = explicitRole(el);
  if (explicit === "none" || explicit === "presentation") return focusable(el) ? implicitRole(el) : "";
  if (explicit === "generic") return "";
  if (explicit) return explicit;
  return implicitRole(el) || widgetRole(el);
}
// The role of a widget a library draws without ARIA: jQuery UI's slider handle
// (`<span tabindex=0 class="ui-slider-handle">`, moved by arrow keys) is a slider.
function widgetRole(el) {
  const cls = el.classList;
  if (cls && cls.contains("ui-slider-handle")) return "slider";
  return "";
}
// The role said in the outline: an element without one that script makes act is "clickable".
function displayRole(el, role) {
  if (role) return role;
  return "clickable";
}
