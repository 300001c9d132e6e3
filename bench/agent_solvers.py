"""Scripted solvers for ``bench_agent_tasks``: one per MiniWoB++ task type, the same for every server.

A solver gets the task's instruction (what MiniWoB's ``core.getUtterance()`` gives an agent) and an
:class:`Agent`: ``look()`` (the server's page outline, parsed), ``read(ref)`` (one element, for a
field the outline cut short), ``click(ref)``, ``type(ref, text)``, ``select(ref, value)``, ``press(key)``. It finds its targets in the outline by role, name and text and
acts **by ref** only — no selector, no DOM, no coordinates. When the outline does not show what it
needs, it gives up (:class:`GaveUp`, with the reason): that is what the benchmark measures.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from agent_outline import Node, Outline, norm

__all__ = ["SOLVERS", "Agent", "GaveUp"]


class GaveUp(Exception):
    """The outline did not show what the solver needed."""


class Adapter(Protocol):
    async def snapshot(self) -> str: ...
    async def read(self, ref: str) -> str: ...
    async def click(self, ref: str, label: str) -> str: ...
    async def type(self, ref: str, label: str, text: str) -> str: ...
    async def select(self, ref: str, label: str, value: str) -> str: ...
    async def press(self, key: str) -> str: ...
    async def scroll(self, ref: str, label: str, to: str) -> str | None: ...


class Agent:
    """The solver's only view of the page: the adapter's six calls, with the outline parsed."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.steps = 0

    async def look(self) -> Outline:
        self.steps += 1
        return Outline(await self.adapter.snapshot())

    async def read(self, ref: str) -> Outline:
        """Read one element (a field cut short in the page's outline): the server's narrowest read."""
        self.steps += 1
        return Outline(await self.adapter.read(ref))

    async def click(self, ref: str | None, what: str = "element") -> None:
        if not ref:
            raise GaveUp(f"no ref for {what}")
        self.steps += 1
        await self.adapter.click(ref, what)

    async def type(self, ref: str | None, text: str, what: str = "field") -> None:
        if not ref:
            raise GaveUp(f"no ref for {what}")
        self.steps += 1
        await self.adapter.type(ref, what, text)

    async def select(self, ref: str | None, value: str, what: str = "select") -> None:
        if not ref:
            raise GaveUp(f"no ref for {what}")
        self.steps += 1
        await self.adapter.select(ref, what, value)

    async def press(self, key: str) -> None:
        self.steps += 1
        await self.adapter.press(key)

    async def scroll(self, ref: str | None, to: str, what: str = "element") -> None:
        """Scroll with the wheel, by whatever tool the server offers for it (asked for if not listed)."""
        if not ref:
            raise GaveUp(f"no ref for {what}")
        self.steps += 1
        if await self.adapter.scroll(ref, what, to) is None:
            raise GaveUp(f"{what} opens only when scrolled by the wheel: the server offers no such tool")

    # -- common moves ---------------------------------------------------------------------------
    async def click_text(self, o: Outline, text: str, *, role: str | None = None, contains: bool = False) -> None:
        """Click the element named ``text`` (a control with that name first, else any text's ref)."""
        if role:
            node = o.first(role, text) or o.first(role, pred=lambda n: norm(text) in norm(n.all_text()) and bool(n.ref))
            if node is not None:
                await self.click(node.acting_ref(), f"{role} {text!r}")
                return
        await self.click(o.ref_for(text, contains=contains), repr(text))

    async def submit(self, o: Outline | None = None, name: str = "Submit") -> None:
        o = o or await self.look()
        await self.click_text(o, name, role="button")


Solver = Callable[[Agent, str], Awaitable[None]]
SOLVERS: dict[str, Solver] = {}


def solves(*tasks: str) -> Callable[[Solver], Solver]:
    def register(fn: Solver) -> Solver:
        for t in tasks:
            SOLVERS[t] = fn
        return fn

    return register


def quoted(utterance: str) -> list[str]:
    return re.findall(r'"([^"]*)"', utterance)


ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def ordinals(utterance: str) -> list[int]:
    return [int(x) for x in ORDINAL.findall(utterance)]


def fields(o: Outline, role: str = "textbox") -> list[Node]:
    return [n for n in o.nodes if n.role == role and n.ref]


def field_after(o: Outline, label: str, role: str = "textbox") -> Node | None:
    """The first ``role`` field after the text ``label`` (a label beside its field), or named so."""
    named = o.first(role, pred=lambda n: norm(n.name).rstrip(":") == norm(label).rstrip(":"))
    if named is not None:
        return named
    for n in o.nodes:
        if n.role != role and norm(n.label).rstrip(":") == norm(label).rstrip(":"):
            for m in o.after(n):
                if m.role == role:
                    return m
    return None


# -- click tasks -------------------------------------------------------------------------------------


@solves("click-test")
async def click_test(ag: Agent, u: str) -> None:
    o = await ag.look()
    button = o.first("button")
    await ag.click(button.ref if button else None, "the button")


@solves("click-test-2", "unicode-test")
async def click_named_button(ag: Agent, u: str) -> None:
    m = re.search(r"button (\w+)\.", u)
    name = quoted(u)[0] if quoted(u) else (m.group(1) if m else "")
    await ag.click_text(await ag.look(), name, role="button")


@solves("button-delay")
async def button_delay(ag: Agent, u: str) -> None:
    """Click, wait, click: the wait is timed from the first click (its call's midpoint), the second button
    found before waiting, and the second click's own latency (half the first call's) taken off."""
    names = re.findall(r"button (\w+)", u)
    m = re.search(r"wait (\d+) second", u)
    o = await ag.look()
    clicked_at, half = 0.0, 0.0
    for i, name in enumerate(names):
        for _ in range(8):
            if o.first("button", name):
                break
            await asyncio.sleep(0.5)
            o = await ag.look()
        if i and m:
            await asyncio.sleep(max(0.0, clicked_at + int(m.group(1)) - half - time.perf_counter()))
        t0 = time.perf_counter()
        await ag.click_text(o, name, role="button")
        half = (time.perf_counter() - t0) / 2
        clicked_at = t0 + half


@solves("sign-agreement")
async def sign_agreement(ag: Agent, u: str) -> None:
    o = await ag.look()
    m = re.search(r'enter the name "(.*?)" then press "(.*?)"', u)
    if m is None:
        m2 = re.search(r"Click the (\w+) button", u, re.I)
        await ag.click_text(o, m2.group(1) if m2 else "Cancel", role="button")
        return
    name, button = m.groups()
    area = next((b for b in fields(o) if b.state()), None)
    if area is not None and "disabled" in area.flags:  # read to the end by the wheel: the name field opens
        await ag.scroll(area.acting_ref(), "bottom", "the agreement")
    else:
        await ag.click(area.acting_ref() if area else None, "the agreement")
        await ag.press("Control+End")  # read to the bottom: the name field opens
    o = await ag.look()
    box = o.first("textbox", "Name") or next((b for b in fields(o) if not b.state()), None)
    await ag.type(box.ref if box else None, name, "the name field")
    await ag.click_text(await ag.look(), button, role="button")


@solves("click-widget")
async def click_widget(ag: Agent, u: str) -> None:
    kind = quoted(u)[0]
    roles = {"button": "button", "checkbox": "checkbox", "radio": "radio", "text": "textbox", "textarea": "textbox"}
    o = await ag.look()
    found = fields(o, roles.get(kind, kind))
    if kind in ("text", "textarea") and any("multiline" in n.flags for n in found):  # the outline tells them apart
        found = [n for n in found if ("multiline" in n.flags) == (kind == "textarea")]
    if not found:
        raise GaveUp(f"no {kind} widget")
    await ag.click(found[0].ref, kind)


@solves("click-checkboxes-large", "click-checkboxes-transfer")
async def click_checkboxes(ag: Agent, u: str) -> None:
    m = re.search(r"Select (.*?) and click Submit", u)
    words = [] if not m or m.group(1).strip() == "nothing" else [w.strip() for w in m.group(1).split(",")]
    o = await ag.look()
    for w in words:
        box = o.first("checkbox", w)
        if box is None:
            raise GaveUp(f"no checkbox {w!r}")
        await ag.click(box.ref, f"checkbox {w}")
    await ag.submit(o)


@solves("click-collapsible-2", "click-tab-2-easy", "click-tab-2-medium", "click-tab-2-hard")
async def open_sections(ag: Agent, u: str) -> None:
    """Open each section or tab in turn until the link shows, then click it."""
    target = quoted(u)[0]
    o = await ag.look()
    tabs = [n for n in o.nodes if n.role == "tab"]
    if not tabs:
        raise GaveUp("no tabs")
    for i in range(len(tabs)):
        link = o.first("link", target) or o.first("clickable", target)
        if link is not None and link.ref:
            await ag.click(link.ref, f"link {target}")
            return
        tab = [n for n in o.nodes if n.role == "tab"][i]
        if "selected" not in tab.flags or i:
            await ag.click(tab.acting_ref() or (tab.children[0].ref if tab.children else None), f"tab {tab.label}")
            o = await ag.look()
    link = o.first("link", target) or o.first("clickable", target)
    await ag.click(link.ref if link else None, f"link {target}")


@solves("click-menu-2")
async def click_menu(ag: Agent, u: str) -> None:
    q = quoted(u)
    if len(q) < 2:
        raise GaveUp("the item is named by an icon the instruction shows as a picture")
    o = await ag.look()
    await ag.click_text(o, q[0], role="button")
    o = await ag.look()
    if o.first("menuitem", q[1]) is None:  # in a submenu: open the entries that say they open one
        for entry in [n for n in o.find_all("menuitem") if "haspopup" in n.flags]:
            await ag.click(entry.ref, f"menu item {entry.label}")
            await asyncio.sleep(0.4)
            o = await ag.look()
            if o.first("menuitem", q[1]) is not None:
                break
    item = o.first("menuitem", q[1]) or o.first(pred=lambda n: norm(n.label) == norm(q[1]) and bool(n.acting_ref()))
    await ag.click(item.acting_ref() if item else None, f"menu item {q[1]}")


@solves("buy-ticket")
async def buy_ticket(ag: Agent, u: str) -> None:
    o = await ag.look()
    by_price = "cost" in u or "cheapest" in u
    sign = -1 if ("longest" in u or "most expensive" in u) else 1  # the largest: the smallest negated
    best: tuple[float, Node] | None = None
    duration: float | None = None
    for n in o.nodes:
        m = re.fullmatch(r"(\d+)h (\d+)m", n.label.strip())
        if m:
            duration = int(m.group(1)) * 60 + int(m.group(2))
        if n.role == "button" and n.name.startswith("Book for $"):
            price = float(n.name.split("$")[1])
            if not by_price and duration is None:
                raise GaveUp("no duration beside a Book button")
            key = sign * (price if by_price else duration)  # type: ignore[operator]
            if best is None or key < best[0]:
                best = (key, n)
    await ag.click(best[1].ref if best else None, "Book button")


@solves("phone-book")
async def phone_book(ag: Agent, u: str) -> None:
    name = re.search(r"Find (.+?) in the contact book", u).group(1)  # type: ignore[union-attr]
    want = re.search(r"click on their (.+?)\.", u).group(1)  # type: ignore[union-attr]
    key = {"phone number": "Phone", "email": "Email", "address": "Address"}.get(want, want)
    for _ in range(12):
        o = await ag.look()
        head = o.first("heading", name)
        if head is not None:
            for n in o.after(head):
                if norm(n.label).startswith(norm(key)):
                    value = n.label.split(":", 1)[1].strip() if ":" in n.label else ""
                    if value:  # "Phone: 373-…" on one line
                        ref = o.ref_for(value)
                    else:  # "Phone:" then the number beside it
                        beside = next((m for m in o.after(n) if m.label), None)
                        ref = beside.ref if beside is not None else None
                    await ag.click(ref, f"{key} of {name}")
                    return
            raise GaveUp(f"no {key} under {name}")
        await ag.click_text(o, ">", role="link")
    raise GaveUp(f"{name} not found")


@solves("stock-market")
async def stock_market(ag: Agent, u: str) -> None:
    limit = float(re.search(r"less than \$(\d+(?:\.\d+)?)", u).group(1))  # type: ignore[union-attr]
    for _ in range(60):
        o = await ag.look()
        price = next(
            (float(m.group(1)) for t in o.texts() if (m := re.search(r"Stock price: \$(\d+(?:\.\d+)?)", t))), None
        )
        if price is None:
            await asyncio.sleep(0.3)
            continue
        if price < limit:
            await ag.click_text(o, "Buy", role="button")
            return
        await asyncio.sleep(0.3)
    raise GaveUp("no stock price below the limit shown")


@solves("social-media-all", "social-media-some")
async def social_media(ag: Agent, u: str) -> None:
    """A post is its author line and what follows it up to the next author line (document order: one
    server nests a post's lines, the other lists them flat)."""
    button = quoted(u)[0]
    user = re.search(r"(@\w+)", u).group(1)  # type: ignore[union-attr]
    m = re.search(r"on (\d+) posts? by", u)
    count = int(m.group(1)) if m else None
    o = await ag.look()
    authors = [n for n in o.nodes if re.search(r"@\w+$", n.label.strip()) and n.label != u]
    done = 0
    for i, n in enumerate(authors):
        if not n.label.endswith(user) or (count is not None and done >= count):
            continue
        end = authors[i + 1].index if i + 1 < len(authors) else len(o.nodes)
        post = o.nodes[n.index + 1 : end]
        ctrl = next((c for c in post if norm(c.label) == norm(button) and c.ref), None)
        if ctrl is None:
            raise GaveUp(f"no {button!r} control on a post by {user}")
        await ag.click(ctrl.ref, f"{button} of {user}")
        done += 1
    await ag.submit(o)


# -- typing tasks ------------------------------------------------------------------------------------


@solves("enter-text-dynamic")
async def enter_text(ag: Agent, u: str) -> None:
    o = await ag.look()
    box = fields(o)
    await ag.type(box[0].ref if box else None, quoted(u)[0], "the text field")
    await ag.submit(o)


@solves("focus-text-2")
async def focus_text(ag: Agent, u: str) -> None:
    n = ordinals(u)[0]
    boxes = fields(await ag.look())
    await ag.click(boxes[n - 1].ref if len(boxes) >= n else None, f"textbox {n}")


@solves("find-word")
async def find_word(ag: Agent, u: str) -> None:
    n = ordinals(u)[0]
    o = await ag.look()
    box = fields(o)[0]
    para = [t for t in o.nodes[: box.index] if t.label and t.label != u and t.role in ("text", "paragraph", "generic")]
    if not para:
        raise GaveUp("no paragraph")
    words = para[-1].label.split()
    await ag.type(box.ref, words[n - 1].strip(".,"), "the textbox")
    await ag.submit(o)


@solves("copy-paste", "copy-paste-2")
async def copy_paste(ag: Agent, u: str) -> None:
    o = await ag.look()
    boxes = fields(o)
    sources = [b for b in boxes if b.state()]
    targets = [b for b in boxes if not b.state()]
    n = ordinals(u)[0] if ordinals(u) else 1
    if len(sources) < n or not targets:
        raise GaveUp("the text to copy is not shown")
    await ag.type(targets[0].ref, sources[n - 1].state(), "the text input")
    await ag.submit(o)


@solves("scroll-text")
async def scroll_text(ag: Agent, u: str) -> None:
    o = await ag.look()
    boxes = fields(o)
    src = next((b for b in boxes if b.state()), None)
    dst = next((b for b in boxes if not b.state()), None)
    if src is None or dst is None:
        raise GaveUp("no text area shown")
    text = src.state()
    if text.endswith("…") and src.ref:  # cut short in the page's outline: read the field itself
        whole = (await ag.read(src.ref)).first(pred=lambda n: n.ref == src.ref)
        text = whole.state() if whole else text
    if text.endswith("…"):
        raise GaveUp("the text area is cut short")
    await ag.type(dst.ref, text.split()[-1].strip(".,;:!?"), "the text field")
    await ag.submit(o)


@solves("scroll-text-2")
async def scroll_text_2(ag: Agent, u: str) -> None:
    o = await ag.look()
    area = next((b for b in fields(o) if b.state()), None)
    await ag.click(area.ref if area else None, "the text area")
    await ag.press("Control+Home" if re.search(r"\bto the top\b", u) else "Control+End")
    await ag.submit(await ag.look())


@solves("text-transform")
async def text_transform(ag: Agent, u: str) -> None:
    o = await ag.look()
    box = fields(o)
    if not box:
        raise GaveUp("no text field")
    start = next((n.index for n in o.nodes if n.label == u), 0)
    letters = [n.label for n in o.nodes[start + 1 : box[0].index] if n.label and len(n.label) == 1]
    if not letters:
        raise GaveUp("the text is not shown")
    await ag.type(box[0].ref, "".join(letters), "the text field")
    await ag.submit(o)


@solves("form-sequence-2")
async def form_sequence_2(ag: Agent, u: str) -> None:
    r, t = ordinals(u)[:2]
    o = await ag.look()
    radios, boxes = fields(o, "radio"), fields(o)
    await ag.click(radios[r - 1].ref if len(radios) >= r else None, f"radio {r}")
    await ag.type(boxes[t - 1].ref if len(boxes) >= t else None, quoted(u)[0], f"textbox {t}")
    await ag.submit(o)


@solves("form-sequence-3")
async def form_sequence_3(ag: Agent, u: str) -> None:
    value = re.search(r"Choose (.+?) from the dropdown", u).group(1)  # type: ignore[union-attr]
    o = await ag.look()
    combo = o.first("combobox")
    await ag.select(combo.ref if combo else None, value, "the dropdown")
    await ag.click_text(o, quoted(u)[0], role="button")


@solves("multi-layouts", "multi-orderings")
async def multi_layouts(ag: Agent, u: str) -> None:
    """Each field by its label: its own name, else the label beside it — before it, or after it where the
    fields come first (a label under its field). "Movie Genre", "Director Name", "Released Date" say
    genre, director, year."""
    m = re.search(r"Search for (\w+) movies directed by (\w+) from year (\d+)", u)
    if not m:
        raise GaveUp("instruction not understood")
    values = dict(zip(("genre", "director", "year"), m.groups(), strict=True))
    words = {"genre": ("genre",), "director": ("director",), "year": ("year", "date", "released")}

    def key_of(text: str) -> str | None:
        return next((k for k, ws in words.items() if any(w in norm(text) for w in ws)), None)

    o = await ag.look()
    boxes = fields(o)
    labels = [n for n in o.nodes if n.role != "textbox" and n.label and n.label != u and key_of(n.label)]
    fields_lead = bool(boxes and labels and boxes[0].index < labels[0].index)
    for box in boxes:
        key = key_of(box.name) if box.name else None
        if key is None:
            beside = (
                [n for n in labels if n.index > box.index]
                if fields_lead
                else [n for n in labels if n.index < box.index]
            )
            label = (beside[0] if fields_lead else beside[-1]) if beside else None
            key = key_of(label.label) if label else None
        if key is not None:
            await ag.type(box.ref, values[key], key)
    button = o.first("button") or o.first(pred=lambda n: n.label in ("Submit", "Search") and bool(n.acting_ref()))
    await ag.click(button.acting_ref() if button else None, "the submit button")


@solves("read-table-2")
async def read_table(ag: Agent, u: str) -> None:
    o = await ag.look()
    table: dict[str, str] = {}
    for row in o.find_all("row"):
        cells = [c.label for c in row.children if c.label] or [x.strip() for x in row.text.split("|")]
        if len(cells) >= 2:
            table[norm(cells[0])] = cells[1]
    boxes = fields(o)
    if not table or not boxes:
        raise GaveUp("no table or no form")
    for box in boxes:
        label = next((n.label for n in reversed(o.nodes[: box.index]) if n.label.endswith(":")), "")
        value = table.get(norm(label.rstrip(":")))
        if value is None:
            raise GaveUp(f"no value for {label!r}")
        await ag.type(box.ref, value, label)
    await ag.submit(o)


@solves("use-autocomplete-nodelay")
async def autocomplete(ag: Agent, u: str) -> None:
    q = quoted(u)
    start, end = q[0], (q[1] if len(q) > 1 else "")
    o = await ag.look()
    box = fields(o)
    await ag.type(box[0].ref if box else None, start, "the tags field")
    o = await ag.look()
    options = [n for n in o.nodes if n.label.startswith(start) and n.label.endswith(end) and n.role != "textbox"]
    if not options:
        raise GaveUp("no suggestion shown")
    await ag.click(options[0].acting_ref(), f"suggestion {options[0].label}")
    await ag.submit(await ag.look())


async def keyboard(ag: Agent, text: str) -> None:
    """Type ``text`` key by key (a terminal reads keystrokes, not a filled value), then Enter."""
    for ch in text:
        await ag.press("Space" if ch == " " else ch)
    await ag.press("Enter")


@solves("terminal")
async def terminal(ag: Agent, u: str) -> None:
    o = await ag.look()
    box = fields(o)
    if not box:
        raise GaveUp("no terminal input")
    await ag.click(box[0].ref, "the terminal")
    await keyboard(ag, "ls")
    o = await ag.look()
    names = [w for t in o.texts() if t != u for w in t.split() if re.fullmatch(r"[\w-]+(\.\w+)?", w)]
    ext = re.search(r"extension (\.\w+)", u)
    if ext:
        cands = [w for w in names if w.endswith(ext.group(1))]
    else:  # what the last `ls` printed, up to the next prompt (one text or several lines)
        shown = " ".join(t for t in o.texts() if t != u)
        after = shown.rsplit("$ ls", 1)[1] if "$ ls" in shown else ""
        listing = re.split(r"\s\S*\$", after, maxsplit=1)[0]
        cands = [w for w in listing.split() if re.fullmatch(r"[\w-]+", w)]
    if not cands:
        raise GaveUp("no file in the listing")
    await keyboard(ag, f"rm {cands[0]}")


@solves("use-slider-2")
async def use_slider(ag: Agent, u: str) -> None:
    targets = [int(x) for x in re.search(r"\[([\d,\s]+)\]", u).group(1).split(",")]  # type: ignore[union-attr]
    o = await ag.look()
    for i, want in enumerate(targets):
        for _ in range(25):
            handles = [  # a slider's handle, not its track (the innermost control)
                n for n in o.nodes if n.ref and n.role in ("clickable", "slider") and not any(c.ref for c in n.children)
            ]
            if len(handles) <= i:
                raise GaveUp("no slider handle")
            handle = handles[i]
            value = next((n.label for n in o.after(handle) if re.fullmatch(r"-?\d+", n.label.strip())), None)
            if value is None:
                raise GaveUp("no slider value")
            if int(value) == want:
                break
            await ag.click(handle.ref, f"slider {i + 1}")
            key = "ArrowRight" if int(value) < want else "ArrowLeft"
            for _ in range(abs(int(value) - want)):
                await ag.press(key)
            o = await ag.look()
    await ag.submit(o)


# -- dates ------------------------------------------------------------------------------------------

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]  # fmt: skip


@solves("choose-date", "choose-date-easy", "choose-date-medium")
async def choose_date(ag: Agent, u: str) -> None:
    mm, dd, _yy = (int(x) for x in re.search(r"(\d+)/(\d+)/(\d+)", u).groups())  # type: ignore[union-attr]
    o = await ag.look()
    box = fields(o)
    await ag.click(box[0].ref if box else None, "the date field")
    for _ in range(14):
        o = await ag.look()
        shown = next((m for t in o.texts() if (m := re.search(r"(" + "|".join(MONTHS) + r")", t))), None)
        if shown is None:
            raise GaveUp("no calendar shown")
        month = MONTHS.index(shown.group(1)) + 1
        if month == mm:
            day = o.first("link", str(dd)) or o.first(pred=lambda n: n.label == str(dd) and bool(n.acting_ref()))
            await ag.click(day.acting_ref() if day else None, f"day {dd}")
            await ag.submit()
            return
        await ag.click_text(o, "Prev" if month > mm else "Next")
    raise GaveUp("month not reached")


# -- inbox ------------------------------------------------------------------------------------------


async def open_email(ag: Agent, sender: str) -> Outline:
    """Click the inbox row that starts with the sender's name (a row shows sender, subject, first words)."""
    o = await ag.look()
    ref = o.ref_for(sender)
    if ref is None:
        row = o.first(pred=lambda n: norm(n.label).split()[:1] == [norm(sender)] and bool(n.acting_ref()))
        ref = row.acting_ref() if row else None
    await ag.click(ref, f"the email by {sender}")
    return await ag.look()


def control(o: Outline, *words: str) -> Node | None:
    """A control whose name or text says one of ``words`` (an icon without a name is not found)."""
    for n in o.nodes:
        if n.acting_ref() and any(norm(n.label) == w for w in words):
            return n
    return None


@solves("email-inbox-delete", "email-inbox-important", "email-inbox-forward", "email-inbox-reply",
        "email-inbox-star-reply", "email-inbox-noscroll")  # fmt: skip
async def email_inbox(ag: Agent, u: str) -> None:
    sender = re.search(r"email by (\w+)", u).group(1)  # type: ignore[union-attr]
    o = await open_email(ag, sender)
    if "trash" in u or "delete" in u:
        node = control(o, "trash", "delete")
        await ag.click(node.acting_ref() if node else None, "the trash icon")
        return
    if "star" in u or "important" in u:
        node = control(o, "star", "important")
        await ag.click(node.acting_ref() if node else None, "the star icon")
        return
    if "forward" in u:
        to = re.search(r"forward that email to (\w+)", u).group(1)  # type: ignore[union-attr]
        node = control(o, "forward")
        await ag.click(node.acting_ref() if node else None, "forward")
        o = await ag.look()
        box = fields(o)
        await ag.type(box[0].ref if box else None, to, "the to field")
    else:
        text = quoted(u)[0]
        node = control(o, "reply")
        await ag.click(node.acting_ref() if node else None, "reply")
        o = await ag.look()
        box = [b for b in fields(o) if not b.state()] or fields(o)
        await ag.type(box[-1].ref if box else None, text, "the reply text")
    node = control(o, "send")
    await ag.click(node.acting_ref() if node else None, "send")


def supported() -> list[str]:
    return sorted(SOLVERS)


# -- the rest -----------------------------------------------------------------------------------------


def task_source(task: str) -> str:
    """A task's source in the ``miniwob`` package: the stand-in for what a language model knows
    (which words are synonyms, how a digit is drawn), never the page the server shows."""
    import miniwob

    return (Path(miniwob.__file__).resolve().parent / "html" / "miniwob" / f"{task}.html").read_text()


def synonym_groups() -> list[list[str]]:
    """The word groups click-checkboxes-soft draws from."""
    block = task_source("click-checkboxes-soft").split("SYNONYMS", 1)[1].split("];", 1)[0]
    return [re.findall(r"'([^']*)'", g) for g in re.findall(r"\[([^\[\]]*)\]", block)]


@solves("click-checkboxes-soft")
async def click_checkboxes_soft(ag: Agent, u: str) -> None:
    m = re.search(r"similar to (.*?) and click Submit", u)
    words = [] if not m or m.group(1) == "nothing" else [w.strip() for w in m.group(1).split(",")]
    groups = synonym_groups()
    o = await ag.look()
    for box in fields(o, "checkbox"):
        label = box.name or next((n.label for n in o.after(box) if n.label), "")
        if any(label in g and w in g for w in words for g in groups):
            await ag.click(box.ref, f"checkbox {label}")
    await ag.submit(o)


@solves("order-food")
async def order_food(ag: Agent, u: str) -> None:
    o = await ag.look()
    by_type = re.search(r"Order (\d+) items? that (?:are|is) ([\w-]+)", u)
    if by_type:  # every dish ordered must be of the type: the first dish that shows it, that many times
        n, kind = int(by_type.group(1)), by_type.group(2)
        mark = next(iter(o.with_label(kind)), None)
        plus = next((m for m in o.after(mark) if m.label.strip() == "+" and m.ref), None) if mark else None
        if plus is None or not plus.ref:
            raise GaveUp(f"no dish shown as {kind!r}")
        for _ in range(n):
            await ag.click(plus.ref, f"+ of a {kind} dish")
        button = o.first("button")
        await ag.click(button.ref if button else None, "the order button")
        return
    if ":" not in u:
        raise GaveUp("instruction not understood")
    items = [x.strip() for x in u.split(":", 1)[1].split(",")]
    for item in items:
        node = next(iter(o.with_label(item)), None)
        if node is None:
            raise GaveUp(f"no item {item!r}")
        plus = next((n for n in o.after(node) if n.label.strip() == "+" or norm(n.name) in ("add", "increase")), None)
        if plus is None or not plus.ref:
            raise GaveUp(f"no ref for the + of {item!r}")
        await ag.click(plus.ref, f"+ {item}")
    button = o.first("button")
    await ag.click(button.ref if button else None, "the order button")


KEYS_OF_STYLE = {"bold": "Control+b", "italics": "Control+i", "underlined": "Control+u"}


@solves("text-editor")
async def text_editor(ag: Agent, u: str) -> None:
    m = re.search(r"the style (\w+)", u)
    colour = re.search(r"the color (\w+)", u)
    if not colour and (not m or m.group(1) not in KEYS_OF_STYLE):
        raise GaveUp("instruction not understood")
    o = await ag.look()
    word_m = re.search(r"(?:give the text|make the text) (.+?) (?:the style|the color)", u)  # as the page splits it
    editor = next(
        (n for n in o.nodes if n.role in ("textbox", "paragraph") and (n.state() or n.label) and n.label != u), None
    )
    if editor is None:
        raise GaveUp("the editor's text is not shown")
    shown = editor.state() or editor.label
    await ag.click(editor.acting_ref(), "the editor")
    await ag.press("Control+a")
    if word_m and "everything" not in u:
        word = word_m.group(1)
        start = shown.find(word)
        if start < 0:
            raise GaveUp(f"{word!r} not in the editor's text")
        await ag.press("ArrowLeft")
        for _ in range(start):
            await ag.press("ArrowRight")
        for _ in range(len(word)):
            await ag.press("Shift+ArrowRight")
    if colour:
        await pick_colour(ag, colour.group(1).lower())
    elif m:
        await ag.press(KEYS_OF_STYLE[m.group(1)])
    await ag.submit()


async def pick_colour(ag: Agent, colour: str) -> None:
    """Open the toolbar's colour picker (its first unnamed control, the one that opens a list) and click the
    swatch of that colour: named so, or a shade of it by name (royalblue, mediumpurple, darkred)."""
    o = await ag.look()
    unnamed = [n for n in o.nodes if n.role in ("button", "clickable") and n.ref and not n.label]
    opener = next((n for n in unnamed if {"collapsed", "haspopup"} & n.flags), unnamed[0] if unnamed else None)
    if opener is not None:
        await ag.click(opener.ref, "the colour picker")
        o = await ag.look()
    swatches = [n for n in o.nodes if n.ref and norm(n.name).endswith(colour)]
    swatch = next((n for n in swatches if norm(n.name) == colour), swatches[0] if swatches else None)
    if swatch is None:
        raise GaveUp(f"no swatch named {colour!r}")
    await ag.click(swatch.ref, f"the {colour} swatch")


@solves("number-checkboxes")
async def number_checkboxes(ag: Agent, u: str) -> None:
    digit = int(quoted(u)[0])
    block = task_source("number-checkboxes").split("var PATTERNS", 1)[1].split("];\n", 1)[0]
    patterns = [[int(x) for x in re.findall(r"[01]", p)] for p in re.split(r"//\s*\d+", block)[1:]]
    o = await ag.look()
    boxes = fields(o, "checkbox")
    if len(boxes) != 28:
        raise GaveUp("the 7x4 grid of checkboxes is not shown")
    for box, on in zip(boxes, patterns[digit], strict=True):
        if on != ("checked" in box.flags):
            await ag.click(box.ref, "a checkbox of the grid")
    await ag.submit(o)


@solves("daily-calendar")
async def daily_calendar(ag: Agent, u: str) -> None:
    o = await ag.look()
    slot = o.first(pred=lambda n: n.role in ("button", "gridcell", "cell") and bool(n.ref))
    if slot is None:
        raise GaveUp("an event is made by dragging over half-hour slots, which have no ref")
    raise GaveUp("dragging is not one of the agent's calls")
