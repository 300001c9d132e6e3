"""Cookies and Web Storage of the page: cookies, storage."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..audit.secret_origins import check_page
from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..registry import tool

__all__ = ["cookies", "storage"]


def _cookie_url(raw: str, *, of_page: bool = False) -> str:
    """``raw`` if it is an http(s) URL with a host (what the cookie jar can be asked about), else
    INVALID_ARGUMENT — saying it is the page's URL when ``of_page`` (no ``url`` argument was given)."""
    try:
        parts = urlsplit(raw)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        ok = False
    if not ok:
        where = f"the page is at {raw[:80]}; pass url" if of_page else f"not {raw[:80]!r}"
        raise InvalidArgument(f"cookies need an http(s) URL with a host, {where}", details={"url": raw[:200]})
    return raw


@tool(
    name="cookies",
    page_text=("cookies",),
    examples=(
        "show the cookies of this site",
        "delete all cookies",
        "set a cookie for the session",
    ),
    category="storage",
    side_effects=True,
    description="Get, set or clear the browser's cookies. set needs name and value; url defaults to the page.",
    properties={
        "action": {"type": "string", "enum": ["get", "set", "clear"]},
        "name": {"type": "string", "minLength": 1},
        "value": {"type": "string"},
        "url": {"type": "string"},
    },
    required=["action"],
)
async def cookies(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if args.get("url"):  # checked before anything changes
        _cookie_url(args["url"])
    context = ctx.browser.context
    page = await ctx.page(args.get("tab_id"))
    await check_page(ctx.session.secrets, page, args, url=args.get("url"))
    action = args["action"]
    if action == "set":
        if "name" not in args or "value" not in args:
            raise InvalidArgument("cookies set needs name and value")
        url = args.get("url") or _cookie_url(page.url, of_page=True)
        await context.add_cookies([{"name": args["name"], "value": args["value"], "url": url}])
    elif action == "clear":
        await context.clear_cookies(**({"name": args["name"]} if "name" in args else {}))
    urls = [args["url"]] if args.get("url") else ([page.url] if page.url.startswith("http") else [])
    jar = await context.cookies(urls) if urls else await context.cookies()
    if "name" in args and action == "get":
        jar = [c for c in jar if c["name"] == args["name"]]
    keep = ("name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite")
    return {"action": action, "cookies": [{k: c.get(k) for k in keep} for c in jar]}


_JS = """([kind, action, key, value]) => {
  const s = kind === 'session' ? window.sessionStorage : window.localStorage;
  if (action === 'set') s.setItem(key, value);
  if (action === 'clear') { if (key === null) s.clear(); else s.removeItem(key); }
  const items = {};
  for (let i = 0; i < s.length; i++) { const k = s.key(i); items[k] = s.getItem(k); }
  return items;
}"""


@tool(
    name="storage",
    page_text=("items", "origin"),
    examples=(
        "what is in localStorage",
        "clear the session storage",
        "set a value in local storage",
    ),
    category="storage",
    side_effects=True,
    description="Get, set or clear localStorage or sessionStorage.",
    properties={
        "action": {"type": "string", "enum": ["get", "set", "clear"]},
        "storage_type": {"type": "string", "enum": ["local", "session"], "default": "local"},
        "key": {"type": "string", "minLength": 1},
        "value": {"type": "string"},
    },
    required=["action"],
)
async def storage(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    action = args["action"]
    if action == "set" and ("key" not in args or "value" not in args):
        raise InvalidArgument("storage set needs key and value")
    page = await ctx.page(args.get("tab_id"))
    if not page.url.startswith(("http://", "https://")):
        raise InvalidArgument(f"Web Storage needs an http(s) page; the page is at {page.url}")
    await check_page(ctx.session.secrets, page, args)
    kind = args.get("storage_type", "local")
    items = await page.evaluate(_JS, [kind, action, args.get("key"), args.get("value")])
    if action == "get" and "key" in args:
        items = {args["key"]: items.get(args["key"])} if args["key"] in items else {}
    return {
        "action": action,
        "storage_type": kind,
        "origin": page.url.split("/", 3)[:3] and "/".join(page.url.split("/", 3)[:3]),
        "items": items,
    }
