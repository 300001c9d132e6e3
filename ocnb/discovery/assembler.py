"""Tiered, token-budgeted context from ranked capabilities.

Tier 0: category summaries, always present (cached per index version). Tier 1: compact
one-line summaries of the top results above a minimum relevance (pulled-in dependencies ride
with their parent). Tier 2: full schema or skill content for the first few. Every tier's text
is counted with ``ocnb.tokens`` (cl100k_base) and never exceeds its budget.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ocnb import tokens
from ocnb.discovery.descriptors import CapabilityDescriptor, first_sentence
from ocnb.discovery.graph import Ranked

__all__ = ["Budgets", "DiscoveryResult", "Tier1Entry", "tier0_text", "assemble"]


@dataclass(frozen=True)
class Budgets:
    """Token budget per tier (cl100k_base)."""

    tier0: int = 150
    tier1: int = 300
    tier2: int = 1000


@dataclass(frozen=True)
class Tier1Entry:
    """A capability shown in Tier 1, with its relevance."""

    id: str
    name: str
    kind: str
    category: str
    relevance: float
    summary: str
    pulled_in_by: str | None = None
    #: The capability group to ask for (``caps``) before this tool can be called, when it is not offered.
    needs_caps: str | None = None
    #: ``"example"`` or ``"learned"`` when an example request (declared, or learned from an earlier
    #: call's intent) raised this match above its description's score; None otherwise.
    via: str | None = None


@dataclass
class DiscoveryResult:
    """What one ``discover()`` call found, as tiers of text with their token counts."""

    query: str
    index_version: int
    tier0: str
    tier1: list[Tier1Entry]
    tier1_text: str
    tier2: list[str]
    tier2_text: str
    tokens: dict[str, int] = field(default_factory=dict)
    #: Label of the retriever that ranked (e.g. ``"WordLlama 0.7 + BM25 0.3"``), set by the engine.
    retriever: str = ""
    #: How many capabilities the index holds (what the results were chosen from).
    total_indexed: int = 0

    def render_for_prompt(self) -> str:
        """The tiers as one prompt section (empty tiers left out)."""
        return "".join(t for t in (self.tier0, self.tier1_text, self.tier2_text) if t)

    def to_dict(self) -> dict[str, object]:
        """JSON-able form (Tier 1 entries with relevance, per-tier token counts, the retriever)."""
        return {
            "query": self.query,
            "index_version": self.index_version,
            "results": [e.__dict__ for e in self.tier1],
            "tokens": dict(self.tokens),
            "retriever": self.retriever,
            "total_indexed": self.total_indexed,
        }


#: Tier 0's last line: what to do when the passive tiers do not show the capability needed.
TIER0_HINT = "Nothing here fits? Call discover_capabilities(query).\n"


def tier0_text(descriptors: Sequence[CapabilityDescriptor], budget: int, hint: str = TIER0_HINT) -> str:
    """Category summaries: ``category (n): a, b, c, +k more`` per category, then ``hint``, within budget.

    Categories are ordered by size (largest first, then name); each line shortens its name
    list until it fits; categories that do not fit at all are summed up in a last line. The
    ``hint`` line (``""`` for none) is kept: category lines give way to it.
    """
    room = budget - tokens.count_text(hint) if hint else 0
    while hint and room > 0:
        body = _tier0_categories(descriptors, room)
        if not body:
            break
        if tokens.count_text(body + hint) <= budget:
            return body + hint
        room -= 1
    return _tier0_categories(descriptors, budget)


def _tier0_categories(descriptors: Sequence[CapabilityDescriptor], budget: int) -> str:
    by_cat: dict[str, list[str]] = defaultdict(list)
    for d in descriptors:
        by_cat[d.category].append(d.name)
    cats = sorted(by_cat, key=lambda c: (-len(by_cat[c]), c))
    header = "## Capability categories\n"
    text = header
    if tokens.count_text(text) > budget:
        return ""
    shown = 0
    for cat in cats:
        names = sorted(by_cat[cat])
        for n in range(min(len(names), 4), -1, -1):
            more = len(names) - n
            listed = ", ".join(names[:n]) + (f", +{more} more" if n and more else "")
            line = f"{cat} ({len(names)})" + (f": {listed}" if n else "") + "\n"
            if tokens.count_text(text + line) <= budget:
                text += line
                shown += 1
                break
        else:
            break
    rest = len(cats) - shown
    if rest:
        tail = f"+{rest} more categories\n"
        while shown and tokens.count_text(text + tail) > budget:
            text = text[: text.rstrip("\n").rfind("\n") + 1]
            shown -= 1
            tail = f"+{len(cats) - shown} more categories\n"
        if tokens.count_text(text + tail) <= budget:
            text += tail
    return text if text != header else ""


def _summary(d: CapabilityDescriptor) -> str:
    params = f" ({', '.join(d.params[:6])})" if d.params else ""
    return first_sentence(d.description)[:200] + params


def _tier1_line(e: Tier1Entry) -> str:
    via = f" [needed by {e.pulled_in_by}]" if e.pulled_in_by else ""
    caps = f" [needs caps={e.needs_caps}]" if e.needs_caps else ""
    learned = " [learned]" if e.via == "learned" else ""
    return f"- {e.id} {e.relevance:.2f}: {e.summary}{via}{caps}{learned}"


def _full(d: CapabilityDescriptor) -> str | None:
    if d.full_content:
        return d.full_content
    if d.full_schema:
        return json.dumps(d.full_schema, separators=(",", ":"), ensure_ascii=False)
    return None


def _tier1(entries: list[Tier1Entry], budget: int) -> tuple[str, list[Tier1Entry]]:
    """Tier-1 lines in rank order while they fit; a pulled-in line only with its parent."""
    text, shown, ids = "## Relevant capabilities\n", list[Tier1Entry](), set[str]()
    for e in entries:
        if e.pulled_in_by is not None and e.pulled_in_by not in ids:
            continue
        candidate = text + _tier1_line(e) + "\n"
        if tokens.count_text(candidate) <= budget:
            text = candidate
            shown.append(e)
            ids.add(e.id)
    return (text, shown) if shown else ("", [])


_CUT = "\n[truncated]\n"


def _truncate(prefix: str, body: str, budget: int) -> str | None:
    """The longest token prefix of ``body`` such that ``prefix + cut + _CUT`` fits."""
    enc = tokens.get_encoder()
    ids = enc.encode(body, disallowed_special=())
    room = budget - tokens.count_text(prefix + _CUT)
    while room > 20:
        candidate = prefix + enc.decode(ids[:room]) + _CUT
        if tokens.count_text(candidate) <= budget:
            return candidate
        room -= 4
    return None


def _tier2(
    shown: list[Tier1Entry], descriptors: dict[str, CapabilityDescriptor], budget: int, count: int
) -> tuple[str, list[str]]:
    """Full schema/content of the first ``count`` shown capabilities that have one; a block
    too long for the remaining budget is cut at a token boundary and marked ``[truncated]``."""
    text, blocks = "## Details\n", list[str]()
    for e in shown:
        if len(blocks) >= count:
            break
        full = _full(descriptors[e.id])
        if not full:
            continue
        head = text + f"### {e.id}\n"
        candidate = head + full + "\n"
        if tokens.count_text(candidate) > budget:
            cut = _truncate(head, full, budget)
            if cut is None:
                break
            candidate = cut
        text = candidate
        blocks.append(e.id)
    return (text, blocks) if blocks else ("", [])


def assemble(
    query: str,
    ranked: Sequence[Ranked],
    descriptors: dict[str, CapabilityDescriptor],
    tier0: str,
    index_version: int,
    *,
    budgets: Budgets = Budgets(),
    top_k: int = 8,
    min_relevance: float = 0.35,
    tier2_count: int = 2,
    via: dict[str, str] | None = None,
) -> DiscoveryResult:
    """Tier 1 and Tier 2 from ranked results; Tier 0 is passed in (cached by the engine).
    ``via`` marks ids an example request raised (``"example"``/``"learned"``)."""
    entries: list[Tier1Entry] = []
    parents_in: set[str] = set()
    for r in ranked:
        if len(entries) >= top_k:
            break
        d = descriptors.get(r.id)
        if d is None:
            continue
        if r.pulled_in_by is None and r.score < min_relevance:
            continue
        if r.pulled_in_by is not None and r.pulled_in_by not in parents_in:
            continue
        needs = d.group if d.kind == "tool" and not d.available and d.group != "core" else None
        entries.append(
            Tier1Entry(
                d.id,
                d.name,
                d.kind,
                d.category,
                round(r.score, 4),
                _summary(d),
                r.pulled_in_by,
                needs,
                (via or {}).get(d.id),
            )
        )
        parents_in.add(d.id)
    tier1_text, shown = _tier1(entries, budgets.tier1)
    tier2_text, tier2_blocks = _tier2(shown, descriptors, budgets.tier2, tier2_count)
    counts = {
        "tier0": tokens.count_text(tier0),
        "tier1": tokens.count_text(tier1_text),
        "tier2": tokens.count_text(tier2_text),
    }
    result = DiscoveryResult(query, index_version, tier0, shown, tier1_text, tier2_blocks, tier2_text)
    counts["total"] = tokens.count_text(result.render_for_prompt())
    result.tokens = counts
    return result
