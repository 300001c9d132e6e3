// ocnb BrowserView screen: shows the page screenshot, reports clicks as fractions of the image,
// and outlines the element that a click hit. Loaded by anywidget (ocnb.widgets.screen.ScreenView).

function render({ model, el }) {
  el.classList.add("ocnb-screen-root");
  const frame = document.createElement("div");
  frame.className = "ocnb-screen-frame";
  const img = document.createElement("img");
  img.className = "ocnb-screen";
  img.alt = "page screenshot";
  img.draggable = false;
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
