// ocnb BrowserView screen: shows the page screenshot, reports clicks as fractions of the image,
// forwards the keys typed while it has focus (text in runs, other keys one by one),
// and outlines the element that a click hit. Loaded by anywidget (ocnb.widgets.screen.ScreenView).

function render({ model, el }) {
  el.classList.add("ocnb-screen-root");
  const frame = document.createElement("div");
  frame.className = "ocnb-screen-frame";
  const img = document.createElement("img");
  img.className = "ocnb-screen";
  img.alt = "page screenshot";
  img.draggable = false;
  frame.tabIndex = 0;  // focusable: keys typed while it has focus go to the page's focused element
  frame.title = "click to act; type while focused to type into the page";
  const box = document.createElement("div");
  box.className = "ocnb-screen-hit";
  const placeholder = document.createElement("div");
  placeholder.className = "ocnb-screen-empty";
  placeholder.textContent = "no screenshot yet";
  frame.append(img, box, placeholder);
  el.append(frame);

  function showImage() {
    const src = model.get("src");
    if (src) {
      img.src = src;
      img.style.display = "";
      placeholder.style.display = "none";
    } else {
      img.removeAttribute("src");
      img.style.display = "none";
      placeholder.style.display = "";
    }
  }

  function showHighlight() {
    const h = model.get("highlight") || {};
    if (typeof h.x !== "number") {
      box.style.display = "none";
      return;
    }
    box.style.display = "block";
    box.style.left = `${h.x * 100}%`;
    box.style.top = `${h.y * 100}%`;
    box.style.width = `${h.w * 100}%`;
    box.style.height = `${h.h * 100}%`;
    box.title = h.label || "";
    box.dataset.label = h.label || "";
  }

  img.addEventListener("click", (event) => {
    const rect = img.getBoundingClientRect();
    if (!rect.width || !rect.height) return;
    const fx = (event.clientX - rect.left) / rect.width;
    const fy = (event.clientY - rect.top) / rect.height;
    model.send({ type: "click", fx: Math.min(Math.max(fx, 0), 1), fy: Math.min(Math.max(fy, 0), 1) });
  });

  // Typed characters are sent as one run after a short pause; any other key flushes the run first.
  let run = "";
  let timer = null;
  const flush = () => {
    if (timer) { clearTimeout(timer); timer = null; }
    if (run) { model.send({ type: "text", text: run }); run = ""; }
  };
  const NAMED = new Set(["Enter", "Tab", "Backspace", "Delete", "Escape", "ArrowUp", "ArrowDown", "ArrowLeft",
    "ArrowRight", "Home", "End", "PageUp", "PageDown"]);
  frame.addEventListener("keydown", (event) => {
    if (event.isComposing) return;
    const mods = [event.ctrlKey && "Control", event.metaKey && "Meta", event.altKey && "Alt"].filter(Boolean);
    if (event.key.length === 1 && !mods.length) {
      run += event.key;
      if (timer) clearTimeout(timer);
      timer = setTimeout(flush, 250);
    } else if (NAMED.has(event.key) || (mods.length && event.key.length === 1)) {
      flush();
      const key = event.key.length === 1 ? event.key.toUpperCase() : event.key;
      model.send({ type: "key", key: [...mods, event.shiftKey && mods.length ? "Shift" : null, key].filter(Boolean).join("+") });
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();  // not Jupyter's shortcuts
  });
  frame.addEventListener("blur", flush);

  model.on("change:src", showImage);
  model.on("change:highlight", showHighlight);
  showImage();
  showHighlight();
  return () => {
    model.off("change:src", showImage);
    model.off("change:highlight", showHighlight);
  };
}

export default { render };
