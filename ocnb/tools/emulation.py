"""emulate: a device, viewport size, user agent, locale, timezone or geolocation for one tab (capability group ``emulation``).

Everything is applied to the live page through Chrome DevTools Protocol overrides (``Emulation.*``)
on a CDP session the tab keeps (:class:`TabEmulation`, held as ``Tab.emulation``), plus Playwright's own
``set_viewport_size`` for the size, so nothing is lost: cookies, storage, history and the page itself
stay. A browser context is not re-created. The overrides last through navigations of the tab until
``reset``; a popup the tab opens is not emulated. Playwright's own screenshots reset device metrics
for a moment, so the browser layer re-applies them after each call on the tab.

``geolocation`` also grants the geolocation permission to the context (every tab may then ask; only
this tab gets the position), and ``reset`` clears the context's permissions again.

Devices come from Playwright's device table (``playwright.devices``: viewport, device scale factor,
mobile, touch, user agent). Every argument is checked before anything is applied: an unknown device
or timezone, or a locale Chromium refuses, is ``INVALID_ARGUMENT`` and changes nothing.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from ..browser.tabs import Tab
from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..registry import tool

__all__ = ["TabEmulation", "emulate"]

_LOCALE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_SEEN_JS = """() => ({width: innerWidth, height: innerHeight, device_scale_factor: devicePixelRatio,
  user_agent: navigator.userAgent, touch_points: navigator.maxTouchPoints, language: navigator.language,
  timezone: Intl.DateTimeFormat().resolvedOptions().timeZone})"""


@dataclass(eq=False)
class TabEmulation:
    """The overrides in effect on one tab and the CDP session that holds them (detaching it drops them)."""

    cdp: Any
    #: ``Emulation.setDeviceMetricsOverride`` parameters of an emulated device, re-sent by :meth:`refresh`.
    metrics: dict[str, Any] | None = None
    #: What is emulated, as results show it.
    settings: dict[str, Any] = field(default_factory=dict)
    granted_geolocation: bool = False

    async def refresh(self) -> None:
        """Send the device metrics again (Playwright's screenshots reset them to its own)."""
        if self.metrics is not None:
            # Chromium skips an override equal to the session's last one: clear it first.
            await self.cdp.send("Emulation.clearDeviceMetricsOverride")
            await self.cdp.send("Emulation.setDeviceMetricsOverride", self.metrics)


def _device(playwright: Any, name: str) -> tuple[str, dict[str, Any]]:
    table: dict[str, Any] = dict(playwright.devices) if playwright is not None else {}
    if name in table:
        return name, table[name]
    folded = {k.casefold(): k for k in table}
    if name.casefold() in folded:
        key = folded[name.casefold()]
        return key, table[key]
    near = difflib.get_close_matches(name, list(table), n=5, cutoff=0.4)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise InvalidArgument(
        f"unknown device {name!r}{hint} (Playwright's device table has {len(table)} devices)",
        details={"device": name, "near": near},
    )


def _check_timezone(tz: str) -> None:
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(tz)
    except (ValueError, KeyError, OSError) as exc:  # ZoneInfoNotFoundError is a KeyError
        raise InvalidArgument(
            f"unknown timezone {tz!r}: give an IANA name such as Europe/Paris", details={"timezone": tz}
        ) from exc


def _wanted(args: dict[str, Any]) -> dict[str, Any]:
    keys = ("device", "width", "height", "user_agent", "locale", "timezone", "geolocation")
    wanted = {k: args[k] for k in keys if args.get(k) is not None}
    if not wanted and not args.get("reset"):
        raise InvalidArgument("give device, width/height, user_agent, locale, timezone, geolocation or reset")
    if args.get("locale") is not None and not _LOCALE.match(args["locale"]):
        raise InvalidArgument(f"{args['locale']!r} is not a locale such as de-DE", details={"locale": args["locale"]})
    if args.get("timezone") is not None:
        _check_timezone(args["timezone"])
    return wanted


async def _send(cdp: Any, method: str, params: dict[str, Any]) -> None:
    try:
        await cdp.send(method, params)
    except Exception as exc:  # noqa: BLE001 - Chromium refused the value
        text = str(exc).rsplit("):", 1)[-1].strip()
        raise InvalidArgument(
            f"Chromium refused {method}: {text}", details={"method": method, "params": params}
        ) from None


def _emulation_of(tab: Tab) -> TabEmulation | None:
    """The overrides this tool left on ``tab`` (the tab holds them as an :class:`~ocnb.browser.tabs.Emulation`)."""
    emu = tab.emulation
    return emu if isinstance(emu, TabEmulation) else None


async def _reset(ctx: ToolContext, tab: Tab) -> None:
    emu = _emulation_of(tab)
    tab.emulation = None
    if emu is None:
        return
    try:
        await emu.cdp.detach()  # every override of that session goes with it
    except Exception:  # noqa: BLE001 - already detached
        pass
    width, height = ctx.config.viewport
    await tab.page.set_viewport_size({"width": width, "height": height})
    if emu.granted_geolocation:
        await tab.page.context.clear_permissions()


@tool(
    name="emulate",
    page_text=("page_sees",),
    examples=(
        "pretend to be an iPhone",
        "set the timezone to Tokyo and the language to French",
        "fake my location in Paris",
    ),
    category="emulation",
    group="emulation",
    side_effects=True,
    description="Emulate a device, viewport, locale, timezone or geolocation. "
    "device is a name from Playwright's device table, e.g. 'Pixel 7'; reset drops every override. "
    "Applied to the live page (CDP overrides): nothing is lost. Returns what is emulated and what the page now sees.",
    properties={
        "device": {"type": "string", "minLength": 1},
        "width": {"type": "integer", "minimum": 100, "maximum": 8000},
        "height": {"type": "integer", "minimum": 100, "maximum": 8000},
        "user_agent": {"type": "string", "minLength": 1},
        "locale": {"type": "string", "minLength": 2},
        "timezone": {"type": "string", "minLength": 1},
        "geolocation": {
            "type": "object",
            "properties": {
                "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                "accuracy": {"type": "number", "minimum": 0},
            },
            "required": ["latitude", "longitude"],
            "additionalProperties": False,
        },
        "reset": {"type": "boolean", "description": "drop every override first"},
    },
)
async def emulate(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    wanted = _wanted(args)
    device_name, device = _device(ctx.browser.playwright, wanted["device"]) if "device" in wanted else (None, None)
    page = await ctx.page(args.get("tab_id"))
    tab = ctx.tab(args.get("tab_id"))  # the page's own tab
    if args.get("reset"):
        await _reset(ctx, tab)
    if wanted:
        await _apply(ctx, tab, page, wanted, device_name, device)
    seen = await page.evaluate(_SEEN_JS)
    emu = _emulation_of(tab)
    return {"tab_id": tab.id, "emulating": dict(emu.settings) if emu else {}, "page_sees": seen}


async def _apply(
    ctx: ToolContext,
    tab: Tab,
    page: Any,
    wanted: dict[str, Any],
    device_name: str | None,
    device: dict[str, Any] | None,
) -> None:
    created = _emulation_of(tab) is None
    emu = _emulation_of(tab) or TabEmulation(cdp=await page.context.new_cdp_session(page))
    try:
        # What Chromium may refuse goes first, so that a refusal changes nothing.
        if "locale" in wanted:
            await _send(emu.cdp, "Emulation.setLocaleOverride", {"locale": wanted["locale"]})
        if "timezone" in wanted:
            await _send(emu.cdp, "Emulation.setTimezoneOverride", {"timezoneId": wanted["timezone"]})
    except InvalidArgument:
        if created:
            await emu.cdp.detach()
        raise
    tab.emulation = emu
    s = emu.settings
    for key in ("locale", "timezone"):
        if key in wanted:
            s[key] = wanted[key]
    if device is not None:
        s.update(
            device=device_name,
            user_agent=device["user_agent"],
            device_scale_factor=device["device_scale_factor"],
            mobile=device["is_mobile"],
            touch=device["has_touch"],
            width=device["viewport"]["width"],
            height=device["viewport"]["height"],
        )
    if "user_agent" in wanted:
        s["user_agent"] = wanted["user_agent"]
    if "user_agent" in s or "locale" in wanted:
        ua = s.get("user_agent") or (await emu.cdp.send("Browser.getVersion"))["userAgent"]
        params = {"userAgent": ua}
        if s.get("locale"):
            params["acceptLanguage"] = s["locale"]
        await _send(emu.cdp, "Emulation.setUserAgentOverride", params)
    if device is not None or "width" in wanted or "height" in wanted:
        current = page.viewport_size or {}
        width = wanted.get("width") or s.get("width") or current.get("width") or ctx.config.viewport[0]
        height = wanted.get("height") or s.get("height") or current.get("height") or ctx.config.viewport[1]
        s.update(width=width, height=height)
        await page.set_viewport_size({"width": width, "height": height})
        if "device" in s:
            emu.metrics = {
                "width": width,
                "height": height,
                "deviceScaleFactor": s["device_scale_factor"],
                "mobile": s["mobile"],
                "screenWidth": width,
                "screenHeight": height,
            }
            await emu.refresh()
    if device is not None:
        touch = {"enabled": True, "maxTouchPoints": 5} if s["touch"] else {"enabled": False}
        await _send(emu.cdp, "Emulation.setTouchEmulationEnabled", touch)
    if "geolocation" in wanted:
        geo = {"accuracy": 10.0, **wanted["geolocation"]}
        await page.context.grant_permissions(["geolocation"])
        emu.granted_geolocation = True
        await _send(emu.cdp, "Emulation.setGeolocationOverride", geo)
        s["geolocation"] = geo
