"""BrowserView: the live page in a notebook — screenshot, URL bar, back/forward/reload, tabs.

Every button goes through a tool (``navigate``, ``page_reload``, ``tabs_activate``,
``tabs_create``, ``interact``) so it lands in the journal with ``source="widget"``. The
screenshot is refreshed after each tool call from any face (throttled, see
:mod:`ocnb.widgets.watch`). Clicking on the screenshot asks ``query_dom`` (``method="point"``) which
element a click there lands on — its ref, role and name, in frames and shadow roots too — and clicks
that ref with ``interact``; the element hit is outlined and named. No JavaScript tool is involved, so
this works with ``allow_javascript=False``.

When its session closes the view says so and, if it showed the notebook's default session, follows
the next one (``%oc close``, then any ``%oc`` line). :meth:`BrowserView.watch` shows another session:
an isolated MCP client's (``handle.client_session("claude-code")``), then back with ``watch()``.
"""

from __future__ import annotations

import contextlib
import html
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as w
import traitlets

from ..results import ToolResult
from .caller import Caller, SessionCaller
from .screen import ScreenView
from .watch import watcher_for

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["BrowserView"]


def _describe(hit: dict[str, Any]) -> str:
    role = hit.get("role")
    who = role if role and role != "generic" else hit.get("tag") or "element"
    name = hit.get("name") or ""
    label = f"{who} “{name}”" if name else str(who)
    return f"{label} ({hit['ref']})" if hit.get("ref") else label


def _fractions(rect: dict[str, Any], viewport: dict[str, Any]) -> dict[str, float]:
    """A rect in viewport pixels as fractions of the viewport (what the screenshot's highlight takes)."""
    width, height = float(viewport.get("width") or 1), float(viewport.get("height") or 1)
    return {
        "x": rect["x"] / width,
        "y": rect["y"] / height,
        "w": rect["width"] / width,
        "h": rect["height"] / height,
    }


#: A focused field whose text is a secret (every frame is searched by query_dom).
_SECRET_FOCUS = ", ".join(
    f"input{sel}:focus"
    for sel in (
        '[type="password"]',
        '[autocomplete~="current-password" i]',
        '[autocomplete~="new-password" i]',
        '[autocomplete~="one-time-code" i]',
    )
)


class BrowserView(w.VBox):
    """The session's active tab as a clickable screenshot with a URL bar, history buttons and tabs.

    Args:
        session: the :class:`~ocnb.Session` to show.
        auto_refresh: refresh after every tool call from any face (throttled to ``interval`` s).
        caller: the tool seam (default: dispatch with ``source="widget"``); tests pass a fake.
        click_action: the ``interact`` action a click on the screenshot performs.
    """

    url = traitlets.Unicode("", help="URL of the active tab at the last refresh.")
    title = traitlets.Unicode("", help="Title of the active tab at the last refresh.")
    refreshes = traitlets.Int(0, help="How many refreshes have completed.")
    session_id = traitlets.Unicode("", help="The id of the session shown ('' before one is attached).")
    attached = traitlets.Bool(False, help="False once the session shown has closed (until the next one).")

    def __init__(
        self,
        session: Session | None = None,
        *,
        auto_refresh: bool = True,
        interval: float = 0.4,
        caller: Caller | None = None,
        click_action: str = "click",
        refresh_now: bool = True,
    ) -> None:
        if caller is None:
            if session is None:
                raise TypeError("BrowserView needs a session (or a caller)")
            caller = SessionCaller(session)
        self.session = session
        self.call: Caller = caller
        self._own_caller = session is not None and isinstance(caller, SessionCaller)
        #: The session this view was made for (then the next default one, when it followed).
        self._home = session
        self._cancel_close: Callable[[], None] | None = None
        self._cancel_follow: Callable[[], None] | None = None
        self._default = False
        self.interval = interval
        self.click_action = click_action
        self.auto_refresh = auto_refresh and session is not None
        self.last_hit: dict[str, Any] | None = None
        self.last_result: ToolResult | None = None
        self._lock = threading.RLock()
        self._syncing = False
        self._tab_ids: list[str] = []
        self._typed_secrets = 0

        btn = w.Layout(width="auto")
        self.back_button = w.Button(description="Back", icon="arrow-left", tooltip="navigate back", layout=btn)
        self.forward_button = w.Button(
            description="Forward", icon="arrow-right", tooltip="navigate forward", layout=btn
        )
        self.reload_button = w.Button(description="Reload", icon="refresh", tooltip="page_reload", layout=btn)
        self.url_bar = w.Text(
            placeholder="https://…", continuous_update=False, layout=w.Layout(flex="1 1 auto", width="auto")
        )
        self.go_button = w.Button(description="Go", button_style="primary", layout=btn)
        self.tabs = w.Dropdown(options=[], description="Tab", layout=w.Layout(width="auto", flex="1 1 auto"))
        self.new_tab_button = w.Button(description="New tab", icon="plus", layout=btn)
        self.screen = ScreenView()
        self.status = w.HTML("", layout=w.Layout(min_height="1.5em"))
        self.add_class("ocnb-browser-view")

        self.back_button.on_click(lambda _b: self.back())
        self.forward_button.on_click(lambda _b: self.forward())
        self.reload_button.on_click(lambda _b: self.reload())
        self.go_button.on_click(lambda _b: self.go(self.url_bar.value))
        self.new_tab_button.on_click(lambda _b: self.new_tab())
        self.url_bar.observe(self._on_url_submit, names="value")
        self.tabs.observe(self._on_tab_pick, names="value")
        self.screen.on_click(lambda fx, fy: self.click_at(fx, fy))
        self.screen.on_keys(lambda kind, value: self.type(value) if kind == "text" else self.press(value))

        toolbar = w.HBox([self.back_button, self.forward_button, self.reload_button, self.url_bar, self.go_button])
        tabbar = w.HBox([self.tabs, self.new_tab_button])
        super().__init__(children=[toolbar, tabbar, self.screen, self.status])

        self._unsubscribe: Callable[[], None] | None = None
        if session is not None:
            self._attach(session)
        if refresh_now:
            self.refresh()

    # -- which session it shows ------------------------------------------------------------
    def watch(self, session: Session | None = None) -> None:
        """Show ``session`` from now on — an isolated MCP client's (``handle.client_session(name)``) —
        or, with None, the session this view was made for again."""
        target = session if session is not None else self._home
        if target is None or target.closed:
            raise ValueError("that session is closed" if target is not None else "no session to watch")
        self._attach(target)
        self.status.value = ""
        self.refresh()

    def _attach(self, session: Session) -> None:
        from ..session import is_default

        self._detach()
        self.session = session
        self._default = is_default(session)  # the notebook's default session: the view follows the next
        if self._own_caller:
            self.call = SessionCaller(session)
        if self.auto_refresh:
            self._unsubscribe = watcher_for(session, interval=self.interval).subscribe(self.refresh)
        self._cancel_close = session.on_close(lambda: self._closed(session))
        self.session_id = session.id
        self.attached = True

    def _detach(self) -> None:
        for cancel in (self._unsubscribe, self._cancel_close, self._cancel_follow):
            if cancel is not None:
                cancel()
        self._unsubscribe = self._cancel_close = self._cancel_follow = None

    def _closed(self, session: Session) -> None:
        """The session shown closed: say so; go back to this view's own session, or follow the next default one."""
        if session is not self.session:
            return
        from ..session import on_new_default

        was_default = self._default  # checked at attach: the session is no longer the default now
        self._detach()
        self.attached = False
        home = self._home
        if home is not None and home is not session and not home.closed:
            self._attach(home)
            self._say(f"session {session.id} closed; showing {home.id} again")
            return
        self._say(
            f"session {session.id} closed"
            + ("; this view follows the next session (any %oc line starts one)" if was_default else "")
        )
        if was_default:
            self._cancel_follow = on_new_default(self._follow)

    def _follow(self, session: Session) -> None:
        """A new default session was created: show it (refreshed after its first call)."""
        self._home = session
        self._attach(session)
        self._say(f"now showing session {session.id}")

    def _say(self, text: str) -> None:
        self.status.value = f'<span style="color:#5d4037">{html.escape(text)}</span>'

    # -- actions (journaled) ---------------------------------------------------------------
    def _act(self, tool: str, args: dict[str, Any]) -> ToolResult:
        result = self.call(tool, args)
        self.last_result = result
        if not result.ok:
            self._say_error(result)
        if not self.auto_refresh:
            self.refresh()
        return result

    def go(self, url: str) -> ToolResult:
        """Open ``url`` in the active tab (``navigate``)."""
        return self._act("navigate", {"url": url.strip()})

    def back(self) -> ToolResult:
        return self._act("navigate", {"url": "back"})

    def forward(self) -> ToolResult:
        return self._act("navigate", {"url": "forward"})

    def reload(self) -> ToolResult:
        return self._act("page_reload", {})

    def new_tab(self, url: str | None = None) -> ToolResult:
        return self._act("tabs_create", {"url": url} if url else {})

    def select_tab(self, tab_id: str) -> ToolResult:
        """Make ``tab_id`` the active tab (``tabs_activate``)."""
        return self._act("tabs_activate", {"tab_id": tab_id})

    def type(self, text: str, *, secret: bool | None = None) -> ToolResult:
        """Type ``text`` into the page's focused element, as keystrokes (``interact`` action ``type``
        with no target): what the screen forwards when it has focus and a person types.

        Into a password field (or with ``secret=True``) the text is added to the session's secrets
        and typed as ``${SECRET:TYPED_n}``, so the journal and trace hold only the placeholder.
        """
        if secret is None:
            secret = self._focus_is_secret()
        value = text
        if secret and self.session is not None:
            self._typed_secrets += 1
            name = f"TYPED_{self._typed_secrets}"
            self.session.secrets.update({name: text})
            value = "${SECRET:" + name + "}"
        result = self._act("interact", {"action": "type", "value": value})
        if result.ok:
            self.status.value = f"typed {len(text)} character(s)" + (" (a secret)" if secret else "")
        return result

    def _focus_is_secret(self) -> bool:
        """Whether the focused element, in any frame, is a password or one-time-code field (``query_dom``, quiet)."""
        found = self.call("query_dom", {"selector": _SECRET_FOCUS, "limit": 1}, quiet=True)
        return bool(found.ok and isinstance(found.data, dict) and found.data.get("matches"))

    def press(self, key: str) -> ToolResult:
        """Press ``key`` (``Enter``, ``Control+A`` …) on the page's focused element (``interact`` press)."""
        result = self._act("interact", {"action": "press", "key": key})
        if result.ok:
            self.status.value = f"pressed {html.escape(key)}"
        return result

    def click_at(self, fx: float, fy: float, action: str | None = None) -> ToolResult | None:
        """Act on the element at (``fx``, ``fy``), fractions of the screenshot; ``None`` if nothing is there.

        The element is found with ``query_dom`` (``method="point"``: the element a click there
        lands on, as a ref) and acted on with ``interact``, which the journal records.
        """
        point = f"{fx * 100:.4f}%,{fy * 100:.4f}%"
        found = self.call("query_dom", {"selector": point, "method": "point"}, quiet=True)
        if not found.ok:
            self._say_error(found)
            return found
        matches = (found.data or {}).get("matches") or []
        hit = matches[0] if matches and isinstance(matches[0], dict) else None
        self.last_hit = hit
        if hit is None:
            self.screen.highlight = {}
            self.status.value = "<i>nothing under the pointer</i>"
            return None
        label = _describe(hit)
        self.screen.highlight = {**_fractions(hit["rect"], hit["viewport"]), "label": label}
        args: dict[str, Any] = {"ref": hit["ref"], "action": action or self.click_action}
        result = self.call("interact", args)
        self.last_result = result
        if result.ok:
            self.status.value = f"{html.escape(args['action'])} → <b>{html.escape(label)}</b>"
        else:
            self._say_error(result, prefix=f"{label}: ")
        if not self.auto_refresh:
            self.refresh()
        return result

    # -- display -------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Take a fresh screenshot and tab list (quiet calls: not journaled); nothing once its session closed."""
        if self._own_caller and self.session is not None and self.session.closed:
            return
        with self._lock:
            shot = self.call("page_screenshot", {}, quiet=True)
            if shot.ok and isinstance(shot.data, dict):
                path = Path(str(shot.data.get("path", "")))
                with contextlib.suppress(OSError):
                    data = path.read_bytes()
                    self.screen.show_png(data, int(shot.data.get("width") or 0), int(shot.data.get("height") or 0))
                    path.unlink()
            elif not shot.ok:
                self._say_error(shot)
            tabs = self.call("tabs_context", {}, quiet=True)
            if tabs.ok and isinstance(tabs.data, dict):
                self._show_tabs(tabs.data)
            self.refreshes += 1

    def _show_tabs(self, data: dict[str, Any]) -> None:
        listed = [t for t in data.get("tabs", []) if isinstance(t, dict)]
        active = next((t for t in listed if t.get("active")), listed[0] if listed else None)
        options = []
        for t in listed:
            title = t.get("title") or t.get("url") or t.get("tab_id")
            options.append((f"{t.get('tab_id')}: {str(title)[:60]}", t.get("tab_id")))
        self._syncing = True
        try:
            self._tab_ids = [str(t.get("tab_id")) for t in listed]
            if list(self.tabs.options) != options:
                self.tabs.options = options
            if active is not None:
                self.tabs.value = active.get("tab_id")
                url = str(active.get("url") or "")
                if self.url and url != self.url:  # another page: the highlighted element is not on it
                    self.screen.highlight = {}
                    self.last_hit = None
                self.url = url
                self.title = str(active.get("title") or "")
                self.url_bar.value = self.url
        finally:
            self._syncing = False

    def _say_error(self, result: ToolResult, prefix: str = "") -> None:
        err = result.error
        if err is None:
            return
        self.status.value = (
            f'<span style="color:#b71c1c">{html.escape(prefix)}<b>{html.escape(err.code)}</b> '
            f"{html.escape(result.tool)}: {html.escape(err.message)}</span>"
        )

    def _on_url_submit(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        url = str(change["new"]).strip()
        if url and url != self.url:
            self.go(url)

    def _on_tab_pick(self, change: dict[str, Any]) -> None:
        if self._syncing or change["new"] is None:
            return
        self.select_tab(str(change["new"]))

    def close(self) -> None:
        """Stop refreshing and close the widget and its children."""
        self._detach()
        for child in (self.screen, self.status, self.tabs, self.url_bar):
            child.close()
        super().close()

    def __repr__(self) -> str:
        return f"<ocnb.widgets.BrowserView {json.dumps(self.url)} refreshes={self.refreshes}>"
