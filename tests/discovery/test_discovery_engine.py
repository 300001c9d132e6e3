"""discover(): graph pull-in, tier budgets, filters, index versions."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocnb import tokens
from ocnb.discovery import BM25Retriever, Budgets, CapabilityDescriptor, DiscoveryEngine


def cap(name: str, description: str, kind: str = "tool", **kw) -> CapabilityDescriptor:
    return CapabilityDescriptor(
        id=f"{kind}:{name}",
        kind=kind,
        name=name,
        display_name=name,
        description=description,
        category=kw.pop("category", "general"),
        **kw,
    )


CAPS = [
    cap(
        "checkout",
        "Buy the items in the shopping cart and pay for the order.",
        kind="skill",
        required_tools=("tool:fill_form",),
        category="skills",
    ),
    cap("fill_form", "Type values into several inputs at once.", category="forms"),
    cap("navigate", "Open a URL in the tab.", category="navigation"),
    cap("screenshot", "Capture the visible viewport as a PNG image.", category="evidence"),
    cap("weather", "Forecast the weather for a city.", category="travel"),
]


def engine(**kw) -> DiscoveryEngine:
    return DiscoveryEngine(CAPS, retriever=BM25Retriever(), **kw)


def test_a_pulled_in_dependency_reaches_tier1_with_its_parent() -> None:
    eng = engine()
    # the dependency alone is irrelevant to the query: it would not pass min_relevance
    alone = dict(eng.retriever.search("pay for my shopping cart order", 10))
    assert alone.get("tool:fill_form", 0.0) < eng.min_relevance
    result = eng.discover("pay for my shopping cart order")
    ids = [e.id for e in result.tier1]
    assert ids[:2] == ["skill:checkout", "tool:fill_form"]
    assert result.tier1[1].pulled_in_by == "skill:checkout"
    assert "tool:fill_form" in result.tier1_text and "needed by skill:checkout" in result.tier1_text
    assert "tool:weather" not in ids


def test_kind_and_category_filters() -> None:
    eng = engine()
    assert all(e.kind == "tool" for e in eng.discover("shopping cart", kind="tool").tier1)
    res = eng.discover("weather forecast city", category="travel")
    assert [e.id for e in res.tier1] == ["tool:weather"]
    assert eng.discover("weather", category="forms").tier1 == []


def test_tier0_is_always_present_and_cached_per_index_version() -> None:
    eng = engine()
    r1 = eng.discover("nothing matches zzz")
    assert r1.tier1 == [] and "forms (1)" in r1.tier0 and r1.render_for_prompt() == r1.tier0
    assert eng.discover("weather").tier0 is r1.tier0  # same object: not regenerated
    v = eng.index_version
    eng.add([cap("upload", "Upload a file.", category="forms")])
    r2 = eng.discover("weather")
    assert eng.index_version == v + 1 and r2.index_version == v + 1
    assert "forms (2)" in r2.tier0
    eng.remove(["tool:upload"])
    assert eng.index_version == v + 2 and "forms (1)" in eng.discover("x").tier0
    eng.add([CAPS[0]])  # unchanged: no new version
    assert eng.index_version == v + 2


def test_token_counts_reported_per_tier_match_the_text() -> None:
    res = engine().discover("open a url")
    assert res.tokens["tier0"] == tokens.count_text(res.tier0)
    assert res.tokens["tier1"] == tokens.count_text(res.tier1_text)
    assert res.tokens["tier2"] == tokens.count_text(res.tier2_text)
    assert res.tokens["total"] == tokens.count_text(res.render_for_prompt())
    assert res.to_dict()["results"][0]["id"] == "tool:navigate"


def test_a_schema_too_long_for_tier2_is_cut_at_the_budget() -> None:
    props = {f"field_{i}": {"type": "string", "description": f"Value number {i} of the form."} for i in range(200)}
    big = replace(CAPS[1], _schema_loader=lambda: {"type": "object", "properties": props})
    eng = DiscoveryEngine([big, *CAPS[2:]], retriever=BM25Retriever())
    res = eng.discover("type values into inputs")
    assert res.tier2 == ["tool:fill_form"]
    assert res.tier2_text.endswith("[truncated]\n") and '"field_0"' in res.tier2_text
    assert 900 < res.tokens["tier2"] <= 1000


WORDS = st.sampled_from(
    "open page click form weather city order cart image upload file tab read text data "
    "search price flight hotel login email calendar note music video map".split()
)
capability = st.builds(
    lambda name, words, cat, kind, schema_n: CapabilityDescriptor(
        id=f"{kind}:{name}",
        kind=kind,
        name=name,
        display_name=name,
        description=" ".join(words),
        category=cat,
        params=tuple(f"p{i}" for i in range(schema_n)),
        _schema_loader=lambda n=schema_n, w=words: {
            "type": "object",
            "properties": {f"p{i}": {"type": "string", "description": " ".join(w)} for i in range(n)},
        },
    ),
    st.from_regex(r"[a-z][a-z0-9_]{0,30}", fullmatch=True),
    st.lists(WORDS, min_size=1, max_size=80),
    st.sampled_from([f"cat{i}" for i in range(12)] + ["a_very_long_category_name_" * 3]),
    st.sampled_from(["tool", "skill", "workflow"]),
    st.integers(0, 40),
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    caps=st.lists(capability, min_size=0, max_size=60, unique_by=lambda d: d.id),
    query=st.lists(WORDS, min_size=0, max_size=6).map(" ".join),
    budgets=st.builds(Budgets, st.integers(0, 150), st.integers(0, 300), st.integers(0, 1000)),
    kind=st.sampled_from(["tool", "skill", "any"]),
    links=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59)), max_size=40),
)
def test_budgets_are_never_exceeded(caps, query, budgets, kind, links) -> None:
    needs: dict[int, set[str]] = {}
    for a, b in links:  # random dependencies, so pulled-in capabilities are exercised too
        if a < len(caps) and b < len(caps):
            needs.setdefault(a, set()).add(caps[b].id)
    caps = [replace(c, required_tools=tuple(sorted(needs.get(i, ())))) for i, c in enumerate(caps)]
    eng = DiscoveryEngine(caps, retriever=BM25Retriever(), budgets=budgets, top_k=20)
    res = eng.discover(query, kind=kind)
    assert tokens.count_text(res.tier0) <= budgets.tier0
    assert tokens.count_text(res.tier1_text) <= budgets.tier1
    assert tokens.count_text(res.tier2_text) <= budgets.tier2
    assert res.tokens["total"] <= budgets.tier0 + budgets.tier1 + budgets.tier2
    if caps and budgets.tier0 >= 60:
        assert res.tier0  # Tier 0 is present whenever something fits
