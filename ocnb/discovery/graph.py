"""The capability relationship graph and graph re-ranking (networkx).

Edges (undirected weights, except DEPENDS_ON which also keeps its direction):
``DEPENDS_ON`` 1.0 (from ``required_tools``), ``COMPOSED_WITH`` 0.5 (tools used together in a
skill's steps, and declared ``composed_with``), ``TAGGED_WITH`` 0.3 per shared tag when two
capabilities share at least two tags, ``SAME_CATEGORY`` 0.1 within categories of 2–8 members.

Re-ranking boosts retrieved capabilities whose neighbours were retrieved too, then pulls the
dependencies of each top result in right after it, with its parent's score, so that they really
reach Tier 1 together with the parent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

import networkx as nx

from ocnb.discovery.descriptors import CapabilityDescriptor

__all__ = ["EDGE_WEIGHTS", "Ranked", "build_graph", "rerank"]

EDGE_WEIGHTS = {"DEPENDS_ON": 1.0, "COMPOSED_WITH": 0.5, "TAGGED_WITH": 0.3, "SAME_CATEGORY": 0.1}


@dataclass(frozen=True)
class Ranked:
    """One ranked capability; ``pulled_in_by`` names the parent that required it."""

    id: str
    score: float
    pulled_in_by: str | None = None


def _add(g: nx.Graph, u: str, v: str, kind: str, weight: float) -> None:
    if u == v:
        return
    data = g.get_edge_data(u, v)
    if data is None:
        g.add_edge(u, v, weight=weight, kinds={kind})
    else:
        data["weight"] += weight
        data["kinds"].add(kind)


def build_graph(descriptors: Iterable[CapabilityDescriptor]) -> tuple[nx.Graph, nx.DiGraph]:
    """The weighted relationship graph and the directed dependency graph."""
    descs = sorted(descriptors, key=lambda d: d.id)
    ids = {d.id for d in descs}
    g, deps = nx.Graph(), nx.DiGraph()
    g.add_nodes_from(ids)
    deps.add_nodes_from(ids)
    for d in descs:
        for t in d.required_tools:
            if t in ids:
                _add(g, d.id, t, "DEPENDS_ON", EDGE_WEIGHTS["DEPENDS_ON"])
                deps.add_edge(d.id, t)
        used = [t for t in d.required_tools if t in ids]
        if d.kind == "skill":
            for a, b in combinations(used, 2):
                _add(g, a, b, "COMPOSED_WITH", EDGE_WEIGHTS["COMPOSED_WITH"])
        for other in d.composed_with:
            if other in ids:
                _add(g, d.id, other, "COMPOSED_WITH", EDGE_WEIGHTS["COMPOSED_WITH"])
    by_tag: dict[str, list[str]] = defaultdict(list)
    by_cat: dict[str, list[str]] = defaultdict(list)
    for d in descs:
        for t in set(d.tags):
            by_tag[t].append(d.id)
        by_cat[d.category].append(d.id)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for members in by_tag.values():
        if len(members) <= 50:  # a tag on everything says nothing
            for a, b in combinations(members, 2):
                shared[(a, b)] += 1
    for (a, b), n in sorted(shared.items()):
        if n >= 2:
            _add(g, a, b, "TAGGED_WITH", EDGE_WEIGHTS["TAGGED_WITH"] * n)
    for members in by_cat.values():
        if 2 <= len(members) <= 8:
            for a, b in combinations(members, 2):
                _add(g, a, b, "SAME_CATEGORY", EDGE_WEIGHTS["SAME_CATEGORY"])
    return g, deps


def rerank(
    hits: list[tuple[str, float]],
    graph: nx.Graph,
    deps: nx.DiGraph,
    *,
    boost: float = 0.1,
    pull_top: int = 5,
) -> list[Ranked]:
    """Graph re-ranking of retriever hits (best first).

    Each hit gains ``boost × Σ weight(u, v) × score(v)`` over retrieved neighbours ``v``
    (mutual: both ends gain). Then the dependencies of the first ``pull_top`` results are
    placed right after their parent, with the parent's score, unless already ranked above.
    """
    scores = dict(hits)
    boosted = {}
    for u, s in hits:
        gain = 0.0
        if u in graph:
            for v, data in graph[u].items():
                if v in scores:
                    gain += data["weight"] * scores[v]
        boosted[u] = s + boost * gain
    order = sorted(boosted, key=lambda i: (-boosted[i], i))
    out: list[Ranked] = []
    placed: set[str] = set()
    for rank, u in enumerate(order):
        if u in placed:
            continue
        out.append(Ranked(u, boosted[u]))
        placed.add(u)
        if rank < pull_top and u in deps:
            for dep in sorted(nx.descendants(deps, u)):
                if dep not in placed:
                    out.append(Ranked(dep, boosted[u], pulled_in_by=u))
                    placed.add(dep)
    return out
