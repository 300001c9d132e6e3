"""Retrievers rank by meaning offline; the static-embedding model never downloads."""

from __future__ import annotations

import socket

import pytest

from ocnb.discovery.retrievers import (
    BM25Retriever,
    HybridRetriever,
    StaticEmbeddingRetriever,
    load_wordllama,
)

DOCS = [
    ("tool:weather", "Weather. Forecast of rain, sun and temperature for a city."),
    ("tool:flights", "Flights. Search and book plane tickets between airports."),
    ("tool:recipes", "Recipes. Find cooking recipes by ingredient."),
]


def test_bm25_ranks_matching_terms_first_with_scores_in_unit_range() -> None:
    r = BM25Retriever()
    r.fit(DOCS)
    hits = r.search("book a plane ticket", 3)
    assert hits[0][0] == "tool:flights" and hits[0][1] == 1.0
    assert all(0.0 <= s <= 1.0 for _, s in hits)
    assert r.search("", 2) == [("tool:weather", 0.0), ("tool:flights", 0.0)]


def test_static_embeddings_load_offline_and_match_by_meaning(monkeypatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("tried to use the network")

    # patch the calls, not the class: a library that subclasses socket.socket on import (PySocks,
    # pulled in lazily by requests) must still import while the network is refused
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    load_wordllama.cache_clear()
    r = StaticEmbeddingRetriever()
    r.fit(DOCS)
    # no shared word with the weather document: a lexical retriever cannot find it
    assert r.search("will it be raining tomorrow?", 1)[0][0] == "tool:weather"
    assert r.search("dinner ideas with chicken", 1)[0][0] == "tool:recipes"
    r.search("will it be raining tomorrow?", 1)
    assert r._embed_query.cache_info().hits >= 1


def test_refit_embeds_only_changed_documents() -> None:
    model = load_wordllama()
    calls: list[int] = []

    class Counting:
        embedding = model.embedding

        def embed(self, texts, norm=True):
            calls.append(len(texts))
            return model.embed(texts, norm=norm)

    r = StaticEmbeddingRetriever(Counting())
    r.fit(DOCS)
    r.fit(DOCS[:2] + [("tool:recipes", "Recipes. Vegan cooking.")])
    assert calls == [3, 1]


@pytest.mark.parametrize("query", ["book a plane ticket", "forecast for paris"])
def test_hybrid_agrees_when_both_parts_agree(query: str) -> None:
    h = HybridRetriever([(StaticEmbeddingRetriever(), 0.7), (BM25Retriever(), 0.3)])
    h.fit(DOCS)
    best = h.search(query, 1)[0]
    assert best[0] == ("tool:flights" if "plane" in query else "tool:weather")
    assert best[1] == pytest.approx(1.0)
