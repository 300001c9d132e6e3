"""The context's routes: one Playwright route handler per context, asking ordered rules (issue 35 §4).

The origin policy (:mod:`ocnb.browser.policy`), ``network_route`` (mock, block) and a batch's
``block_resources`` each add a :class:`Rule` to the context's :class:`Routes` instead of a route of
their own. The one handler asks the rules about a request in order — the origin policy's first (a
mock cannot answer for a refused URL), then the others, newest first — until one takes it; a request
no rule takes falls back to the browser (or to a route installed outside, such as the HTTP-credentials
route of ``network_conditions``).

The browser asks Python only about URLs some rule's matcher may take: when every rule matches by a
regular expression with the same flags, the handler's matcher is their union, checked in the browser;
a rule that matches by a Python function makes Playwright ask about every request.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Routes", "Rule"]

#: A rule's matcher: a regular expression on the URL, or a function of it.
Matcher = re.Pattern[str] | Callable[[str], bool]


@dataclass(eq=False)
class Rule:
    """One kind of answer for the requests ``matcher`` takes.

    ``handle`` gets the Playwright route and returns True when it answered it (aborted, fulfilled,
    continued), False to let the next rule have it. ``first``: asked before every rule without it.
    ``standalone=False``: the context is routed for this rule only while another rule needs the route
    (the origin policy's, when the browser-level guard already judges every request: it only keeps a
    mock from answering for a refused URL). A routed context costs every request a pause in Playwright
    and turns the browser's HTTP cache off (Playwright does so while it intercepts).
    """

    name: str
    matcher: Matcher
    handle: Callable[[Any], Awaitable[bool]]
    first: bool = False
    standalone: bool = True

    def matches(self, url: str) -> bool:
        if isinstance(self.matcher, re.Pattern):
            return self.matcher.search(url) is not None
        return bool(self.matcher(url))


@dataclass
class Routes:
    """The rules of one browser context, and the single route handler that asks them."""

    context_of: Callable[[], Any]
    rules: list[Rule] = field(default_factory=list)
    _installed: tuple[Any, Any] | None = None  # (context, matcher) the handler is routed with
    _lock: asyncio.Lock | None = None

    def ordered(self) -> list[Rule]:
        """The rules in the order the handler asks them: ``first`` ones, then the newest first."""
        newest = list(reversed(self.rules))
        return [r for r in newest if r.first] + [r for r in newest if not r.first]

    async def add(self, rule: Rule) -> None:
        self.rules.append(rule)
        await self._sync()

    async def remove(self, rule: Rule) -> None:
        if rule in self.rules:
            self.rules.remove(rule)
            await self._sync()

    def matcher(self) -> Matcher:
        """What the handler is routed with: the union of the rules' regular expressions, checked in the
        browser, or (a function among them, or their flags differ) a function of the URL."""
        patterns = [r.matcher for r in self.rules]
        if patterns and all(isinstance(p, re.Pattern) for p in patterns):
            regexes = [p for p in patterns if isinstance(p, re.Pattern)]
            if len({p.flags for p in regexes}) == 1:
                return re.compile("|".join(f"(?:{p.pattern})" for p in regexes), regexes[0].flags)
        rules = list(self.rules)
        return lambda url: any(r.matches(url) for r in rules)

    async def _sync(self) -> None:
        """Route the one handler with the rules' matcher (again, when they changed); none without a
        standalone rule."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            context = self.context_of()
            if self._installed is not None:
                old_context, old_matcher = self._installed
                self._installed = None
                try:
                    await old_context.unroute(old_matcher, self._handle)
                except Exception:  # noqa: BLE001 - a closed context has no routes left
                    pass
            if any(r.standalone for r in self.rules) and context is not None:
                matcher = self.matcher()
                await context.route(matcher, self._handle)
                self._installed = (context, matcher)

    async def _handle(self, route: Any) -> None:
        url = route.request.url
        try:
            for rule in self.ordered():
                if rule.matches(url) and await rule.handle(route):
                    return
            await route.fallback()
        except Exception:  # noqa: BLE001 - the page closed under the request: nothing is sent either way
            pass
