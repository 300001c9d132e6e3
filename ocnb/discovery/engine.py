"""The discovery engine: index + retriever + graph + tiered assembly, per turn.

``DiscoveryEngine`` holds descriptors from any source (registry tools, recorded skills,
manifests), rebuilds its index lazily when they change (each change bumps ``index_version``),
and answers ``discover(query, kind, category, ...)`` with a token-budgeted ``DiscoveryResult``.
Example requests (declared ``examples`` and ``learned`` ones) sit in a second index beside the
descriptions; a capability's score is its description's, raised towards its best example's by
``example_weight`` (:func:`fuse`; examples only ever raise a score).
``get_stats()`` (also ``getStats()``) reports what is indexed and which retriever ranks; the
first discovery with a fallback retriever logs once how to get the better one.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ocnb.discovery.assembler import Budgets, DiscoveryResult, assemble, tier0_text
from ocnb.discovery.descriptors import (
    CapabilityDescriptor,
    embedding_text,
    from_skills,
    from_tooldefs,
)
from ocnb.discovery.graph import Ranked, build_graph, rerank
from ocnb.discovery.manifests import ManifestSet, ManifestWatcher
from ocnb.discovery.retrievers import Retriever, default_retriever, notice_fallback, retriever_info

from ..errors import InvalidArgument

__all__ = ["DiscoveryEngine", "KINDS", "example_vote", "fuse"]

KINDS = ("tool", "skill", "any")


def fuse(
    desc: np.ndarray,
    example: np.ndarray,
    weight: float,
    vote: np.ndarray | None = None,
    vote_weight: float = 0.0,
) -> np.ndarray:
    """Description scores raised by the examples: ``desc + weight * max(0, example - desc) + vote_weight * vote``.

    ``example`` holds each capability's best example score (0 without examples), so a capability
    without examples keeps its description score and an example never lowers one (``weight`` 1 is
    the plain maximum). ``vote`` is each capability's share of a soft nearest-neighbour vote over
    all examples (:func:`example_vote`; shares sum to 1), which rewards a capability whose examples
    crowd around the request rather than one lucky neighbour. ``bench/bench_discovery.py``
    measures the choices.
    """
    fused = desc + weight * np.maximum(example - desc, 0.0)
    return fused + vote_weight * vote if vote is not None and vote_weight else fused


def example_vote(scores: np.ndarray, owner: np.ndarray, n: int, temperature: float) -> np.ndarray:
    """Softmax (``temperature``) of the example scores, summed per owning capability (``n`` of them)."""
    if not len(scores):
        return np.zeros(n)
    weights = np.exp((scores - scores.max()) / temperature)
    return np.bincount(owner, weights=weights / weights.sum(), minlength=n)


class DiscoveryEngine:
    """Per-turn capability discovery within token budgets.

    ``retriever`` defaults to the measured hybrid (MiniLM + WordLlama + BM25, by what is
    installed: see :func:`~ocnb.discovery.retrievers.default_retriever`). ``manifest_roots``:
    ``None`` for the standard roots, ``()`` for none. Call ``refresh()`` to re-read sources,
    ``watch()``/``stop()`` for hot reload of manifests.
    """

    def __init__(
        self,
        descriptors: Iterable[CapabilityDescriptor] = (),
        *,
        tools: Iterable[Any] | None = None,
        skills: Iterable[Mapping[str, Any]] | None = None,
        manifest_roots: Sequence[str | Path] | None = (),
        retriever: Retriever | None = None,
        budgets: Budgets = Budgets(),
        top_k: int = 8,
        min_relevance: float = 0.35,
        tier2_count: int = 2,
        candidates: int = 30,
        debounce_ms: int = 500,
        use_graph_reranking: bool = True,
        graph_boost_factor: float = 0.1,
        example_weight: float = 0.5,
        example_vote: float = 1.0,
        example_temperature: float = 0.2,
        example_retriever: Retriever | None = None,
    ) -> None:
        self.retriever = retriever if retriever is not None else default_retriever()
        #: The joint index of descriptions and example requests (same method as ``retriever``, sharing
        #: its models); used only when some capability has examples.
        self.example_retriever = example_retriever if example_retriever is not None else self.retriever.spawn()
        self.budgets, self.top_k, self.min_relevance = budgets, top_k, min_relevance
        self.tier2_count, self.candidates = tier2_count, candidates
        self.use_graph_reranking, self.graph_boost_factor = use_graph_reranking, graph_boost_factor
        self.example_weight, self.example_vote, self.example_temperature = (
            example_weight,
            example_vote,
            example_temperature,
        )
        self._example_owner = np.zeros(0, dtype=np.int64)
        self._example_learned = np.zeros(0, dtype=bool)
        self._results: OrderedDict[tuple[Any, ...], DiscoveryResult] = OrderedDict()
        self._cache_hits = 0
        self._lock = threading.RLock()
        self._static: dict[str, CapabilityDescriptor] = {}
        self._manifest_ids: set[str] = set()
        self._all: dict[str, CapabilityDescriptor] = {}
        self.index_version = 0
        self._built_version = -1
        self._tier0 = ""
        self._build_ms: float | None = None
        self._builds = 0
        self._queries = 0
        self.manifests = ManifestSet(manifest_roots) if manifest_roots != () else None
        self._watcher: ManifestWatcher | None = None
        self._debounce_ms = debounce_ms
        self.add(descriptors)
        if tools is not None:
            self.add(from_tooldefs(tools))
        if skills is not None:
            self.add(from_skills(skills))
        if self.manifests is not None:
            self._set_manifests(self.manifests.scan())

    # -- contents -----------------------------------------------------------------------
    def add(self, descriptors: Iterable[CapabilityDescriptor]) -> None:
        """Add or replace descriptors (by id)."""
        with self._lock:
            changed = False
            for d in descriptors:
                if self._static.get(d.id) != d:
                    self._static[d.id] = d
                    changed = True
            if changed:
                self._merge()

    def remove(self, ids: Iterable[str]) -> None:
        """Remove descriptors by id (unknown ids are ignored)."""
        with self._lock:
            if any([self._static.pop(i, None) is not None for i in ids]):
                self._merge()

    def refresh(self) -> None:
        """Re-scan the manifest roots (and rebuild the index on the next query)."""
        with self._lock:
            if self.manifests is not None:
                self._set_manifests(self.manifests.scan())
            self.index_version += 1

    def _set_manifests(self, found: dict[str, CapabilityDescriptor]) -> None:
        with self._lock:
            self._manifest_descs = found
            self._merge()

    def _merge(self) -> None:
        merged = dict(getattr(self, "_manifest_descs", {}))
        merged.update(self._static)  # registry tools and skills win over a manifest of same id
        if merged != self._all:
            self._all = merged
            self.index_version += 1

    def _on_manifest_change(self, folders: set[Path]) -> None:
        assert self.manifests is not None
        with self._lock:
            self._set_manifests(self.manifests.reload(folders))

    @property
    def descriptors(self) -> dict[str, CapabilityDescriptor]:
        """id → descriptor of everything indexed (a copy)."""
        with self._lock:
            return dict(self._all)

    # -- hot reload ---------------------------------------------------------------------
    def watch(self) -> None:
        """Start hot reload of the manifest roots (debounced)."""
        if self.manifests is None:
            raise InvalidArgument("this engine has no manifest roots to watch")
        if self._watcher is None:
            self._watcher = ManifestWatcher(self.manifests, self._on_manifest_change, self._debounce_ms)
            self._watcher.start()

    def stop(self) -> None:
        """Stop hot reload (idempotent)."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    # -- querying -----------------------------------------------------------------------
    def build(self) -> None:
        """(Re)build the index now if the contents changed since the last build."""
        with self._lock:
            if self._built_version == self.index_version:
                return
            t0 = time.perf_counter()
            descs = [self._all[i] for i in sorted(self._all)]
            self.retriever.fit([(d.id, embedding_text(d)) for d in descs])
            docs, owner, learned = [], [], []
            for n, d in enumerate(descs):
                for j, (text, is_learned) in enumerate(
                    [*((e, False) for e in d.examples), *((e, True) for e in d.learned)]
                ):
                    docs.append((f"{d.id}#{j}", text))
                    owner.append(n)
                    learned.append(is_learned)
            # One joint index of descriptions and examples: its scores put a capability's examples
            # and every description on one scale (a retriever's scores are relative to its best hit),
            # so an example only counts where it matches better than the descriptions do.
            texts = [(d.id, embedding_text(d)) for d in descs]
            self.example_retriever.fit([*texts, *docs] if docs else [])
            self._example_owner = np.array(owner, dtype=np.int64)
            self._example_learned = np.array(learned, dtype=bool)
            self._results.clear()
            self._graph, self._deps = build_graph(descs)
            self._tier0 = tier0_text(descs, self.budgets.tier0)
            self._built_version = self.index_version
            self._build_ms = round((time.perf_counter() - t0) * 1000, 1)
            self._builds += 1

    def get_stats(self) -> dict[str, Any]:
        """What the engine holds and how it ranks, as JSON.

        ``retriever`` (label of the ranking method), ``retriever_preferred``, ``retriever_fallback``
        and ``retriever_upgrade`` (see :func:`~ocnb.discovery.retrievers.retriever_info`);
        ``total_indexed``, ``by_kind``, ``by_source`` (``registry``, ``skill``, ``manifest``);
        ``examples`` (``declared``/``learned`` counts); the ranking settings; ``index_version``,
        ``index_built`` (the index matches the contents), ``builds``, ``last_build_ms`` (``None``
        before the first build), ``queries`` and ``cache_hits`` (queries answered from the result
        cache: the same query and options on an unchanged index). ``totalIndexed`` is the seed's name.
        """
        with self._lock:
            descs = list(self._all.values())
            info = retriever_info(self.retriever)
            by_kind: dict[str, int] = {}
            by_source: dict[str, int] = {}
            examples = {
                "declared": sum(len(d.examples) for d in descs),
                "learned": sum(len(d.learned) for d in descs),
            }
            for d in descs:
                by_kind[d.kind] = by_kind.get(d.kind, 0) + 1
                source = next((p for p in ("registry", "skill") if d.source_ref.startswith(p + ":")), "manifest")
                by_source[source] = by_source.get(source, 0) + 1
            return {
                "retriever": info["retriever"],
                "retriever_preferred": info["preferred"],
                "retriever_fallback": info["fallback"],
                "retriever_upgrade": info["upgrade"],
                "total_indexed": len(descs),
                "totalIndexed": len(descs),
                "by_kind": dict(sorted(by_kind.items())),
                "by_source": dict(sorted(by_source.items())),
                "examples": examples,
                "use_graph_reranking": self.use_graph_reranking,
                "graph_boost_factor": self.graph_boost_factor,
                "example_weight": self.example_weight,
                "example_vote": self.example_vote,
                "example_temperature": self.example_temperature,
                "index_version": self.index_version,
                "index_built": self._built_version == self.index_version,
                "builds": self._builds,
                "last_build_ms": self._build_ms,
                "queries": self._queries,
                "cache_hits": self._cache_hits,
            }

    getStats = get_stats  # the name the discovery contract uses

    def scores(self, query: str) -> tuple[list[tuple[str, float]], dict[str, str]]:
        """The best candidates ``(id, fused score)`` for ``query`` before graph re-ranking, and the
        ids an example raised (``"example"`` or ``"learned"``, by the best example's origin)."""
        with self._lock:
            self.build()
            ids = self.retriever.ids
            if not ids:
                return [], {}
            n = len(ids)
            best = np.zeros(n)
            which = np.full(n, -1, dtype=np.int64)
            vote = None
            if len(self._example_owner):
                joint = self.example_retriever.scores(query)
                desc, ex = joint[:n], joint[n:]
                order = np.argsort(ex, kind="stable")  # ascending: the best example of an owner is written last
                best[self._example_owner[order]] = ex[order]
                which[self._example_owner[order]] = order
                if self.example_vote:  # every description votes for its capability too
                    owners = np.concatenate([np.arange(n), self._example_owner])
                    vote = example_vote(joint, owners, n, self.example_temperature)
            else:
                desc = self.retriever.scores(query)
            fused = fuse(desc, best, self.example_weight, vote, self.example_vote)
            top = np.argsort(-fused, kind="stable")[: max(self.candidates, self.top_k)].tolist()
            via = {
                ids[i]: ("learned" if self._example_learned[which[i]] else "example")
                for i in top
                if which[i] >= 0 and fused[i] - desc[i] >= 0.05  # an example lifted it noticeably
            }
            return [(ids[i], float(fused[i])) for i in top], via

    def discover(
        self,
        query: str,
        kind: str = "any",
        category: str | None = None,
        *,
        top_k: int | None = None,
        min_relevance: float | None = None,
        budgets: Budgets | None = None,
        only_available: bool = False,
    ) -> DiscoveryResult:
        """Tiered context for ``query``, restricted to a kind (tool|skill|any) and category.

        ``top_k``, ``min_relevance`` and ``budgets`` override the engine's for this query;
        ``only_available`` leaves out tools of a capability group the session does not offer.
        """
        if kind not in KINDS:
            raise InvalidArgument(f"kind must be one of {KINDS}, not {kind!r}")
        top_k = self.top_k if top_k is None else top_k
        min_relevance = self.min_relevance if min_relevance is None else min_relevance
        budgets = budgets or self.budgets
        if self._queries == 0:
            notice_fallback(self.retriever)  # once per process, and only for a weaker default
        with self._lock:
            self._queries += 1
            self.build()
            key = (query, kind, category, top_k, min_relevance, budgets, only_available, self.index_version)
            cached = self._results.get(key)
            if cached is not None:
                self._cache_hits += 1
                self._results.move_to_end(key)
                return replace(cached, tier1=list(cached.tier1), tier2=list(cached.tier2), tokens=dict(cached.tokens))
            descs = self._all
            hits, via = self.scores(query)
            hits = [
                (i, s)
                for i, s in hits
                if (kind == "any" or descs[i].kind == kind)
                and (category is None or descs[i].category == category)
                and (descs[i].available or not only_available)
            ]
            if self.use_graph_reranking:
                ranked = rerank(hits, self._graph, self._deps, boost=self.graph_boost_factor)
            else:
                ranked = [Ranked(i, s) for i, s in hits]
            tier0 = (
                self._tier0 if budgets.tier0 == self.budgets.tier0 else tier0_text(list(descs.values()), budgets.tier0)
            )
            result = assemble(
                query,
                ranked,
                descs,
                tier0,
                self.index_version,
                budgets=budgets,
                top_k=top_k,
                min_relevance=min_relevance,
                tier2_count=self.tier2_count,
                via=via,
            )
            result.retriever = self.retriever.label or type(self.retriever).__name__
            result.total_indexed = len(descs)
            self._results[key] = result
            while len(self._results) > 256:
                self._results.popitem(last=False)
            return replace(result, tier1=list(result.tier1), tier2=list(result.tier2), tokens=dict(result.tokens))
