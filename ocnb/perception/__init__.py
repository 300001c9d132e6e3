"""Perception: the page as text with refs, target resolution and selector chains (DESIGN §3).

- :mod:`.snapshot` — :func:`read_page` (modes ax/text/dom) over the in-page perception script
  (modules in ``js/``, joined by :mod:`.bundle`);
- :mod:`.refs` — per-page ref registry; :func:`resolve_ref` or ``STALE_REF``;
- :mod:`.targets` — :func:`resolve_target` (ref or query), :func:`find`, :func:`query_dom`;
- :mod:`.changes` — :class:`~.changes.ChangeWatch`: what an action changed (navigation, new tab,
  dialogs, DOM, downloads);
- :mod:`.point` — :func:`element_at`: the element a click at a point of the viewport lands on, as a ref;
- :mod:`.selectors` — the one selector-chain resolver: :func:`~.selectors.capture_element` (chain +
  fingerprint) when recording, :func:`~.selectors.resolve` (verified) when skill replay acts again.
"""

from __future__ import annotations

from .point import element_at
from .refs import REF_PATTERN, page_refs, resolve_ref
from .selectors import resolve_chain, selector_chain
from .snapshot import read_page
from .targets import Resolved, find, query_dom, resolve_target

__all__ = [
    "REF_PATTERN",
    "Resolved",
    "element_at",
    "find",
    "page_refs",
    "query_dom",
    "read_page",
    "resolve_chain",
    "resolve_ref",
    "resolve_target",
    "selector_chain",
]
