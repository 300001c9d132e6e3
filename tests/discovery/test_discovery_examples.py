"""Example requests beside descriptions (issue 17): fusion, manifests, @tool examples, learned
examples (opt-in, ok calls only, never secrets, capped, readable and deletable), per-query options."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

import ocnb
from ocnb.discovery import BM25Retriever, Budgets, CapabilityDescriptor, DiscoveryEngine, from_manifest
from ocnb.discovery.engine import fuse
from ocnb.discovery.learned import LEARNED_FILE, DiscoveryLearner, LearnedExamples
from ocnb.registry import Registry, capability_groups
from ocnb.results import ToolResult
from ocnb.tools.discovery import META_TOOLS


def cap(name: str, description: str, **kw) -> CapabilityDescriptor:
    return CapabilityDescriptor(
        id=f"tool:{name}", kind="tool", name=name, display_name=name, description=description, category="c", **kw
    )


CAPS = [
    cap("weather", "Forecast for a city."),
    cap("finance", "Stock prices and market data."),
    cap("travel", "Book flights and hotels."),
]


def test_fusion_only_raises_and_weight_one_is_the_maximum() -> None:
    desc, ex = np.array([0.9, 0.2, 0.5]), np.array([0.1, 0.8, 0.0])
    assert fuse(desc, ex, 0.5).tolist() == pytest.approx([0.9, 0.5, 0.5])
    assert fuse(desc, ex, 1.0).tolist() == pytest.approx(np.maximum(desc, ex).tolist())
    assert fuse(desc, ex, 0.0).tolist() == pytest.approx(desc.tolist())


def test_an_example_finds_a_capability_its_description_misses() -> None:
    query = "should I bring an umbrella tomorrow"
    plain = DiscoveryEngine(CAPS, retriever=BM25Retriever())
    assert plain.discover(query).tier1 == []
    caps = [
        cap("weather", "Forecast for a city.", examples=("do I need an umbrella tomorrow",)),
        *CAPS[1:],
    ]
    found = DiscoveryEngine(caps, retriever=BM25Retriever()).discover(query)
    assert found.tier1[0].name == "weather" and found.tier1[0].via == "example"


def test_a_learned_match_says_so_in_the_result_and_in_tier1() -> None:
    caps = [cap("weather", "Forecast for a city.", learned=("umbrella tomorrow in Oslo",)), *CAPS[1:]]
    res = DiscoveryEngine(caps, retriever=BM25Retriever()).discover("umbrella needed tomorrow?")
    assert res.tier1[0].via == "learned" and "[learned]" in res.tier1_text
    data = res.to_dict()
    assert data["results"][0]["via"] == "learned" and data["total_indexed"] == 3


def test_manifest_and_tool_examples_are_read(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "CAPABILITY.yaml").write_text(
        "name: weather\nkind: tool\ndescription: Forecast.\nexamples:\n  - will it rain\n  - umbrella today\n"
    )
    assert from_manifest(tmp_path / "w").examples == ("will it rain", "umbrella today")
    tools = [t for t in Registry(caps=capability_groups()) if t.name not in META_TOOLS]
    assert all(len(t.examples) >= 3 for t in tools), [t.name for t in tools if len(t.examples) < 3]
    assert all("examples" not in t.to_mcp() for t in tools)  # never in tools/list


def test_per_query_options_and_settings() -> None:
    caps = [*CAPS, cap("weather_pro", "Forecast for a city, paid.", available=False, group="pro")]
    eng = DiscoveryEngine(caps, retriever=BM25Retriever(), min_relevance=0.0)
    assert len(eng.discover("forecast city", top_k=1).tier1) == 1
    assert eng.discover("forecast city", min_relevance=1.01).tier1 == []
    assert all(e.name != "weather_pro" for e in eng.discover("forecast city", only_available=True).tier1)
    small = eng.discover("forecast city", budgets=Budgets(tier0=60, tier1=40, tier2=0))
    assert small.tokens["tier1"] <= 40 and small.tokens["tier2"] == 0 and small.tokens["tier0"] <= 60
    stats = eng.get_stats()
    assert stats["totalIndexed"] == 4 and stats["by_kind"] == {"tool": 4} and stats["by_source"] == {"manifest": 4}
    eng.discover("forecast city", top_k=1)
    assert eng.getStats()["cache_hits"] == 1 and eng.get_stats()["last_build_ms"] is not None
    off = DiscoveryEngine(caps, retriever=BM25Retriever(), use_graph_reranking=False, graph_boost_factor=0.5)
    assert off.get_stats()["use_graph_reranking"] is False and off.get_stats()["graph_boost_factor"] == 0.5


def test_tier0_ends_with_the_line_that_points_to_discover_capabilities() -> None:
    res = DiscoveryEngine(CAPS, retriever=BM25Retriever()).discover("anything")
    assert res.tier0.rstrip().endswith("Call discover_capabilities(query).")


class _Call:
    def __init__(self, learn: bool, intent: str | None, name: str = "navigate", args: dict | None = None) -> None:
        self.session = type("S", (), {"config": ocnb.Settings(discovery_learn=learn)})()
        self.intent, self.name, self.args, self.record, self.source = intent, name, args or {}, True, "python"


def _ok(ok: bool = True) -> ToolResult:
    return ToolResult(ok=ok, tool="navigate", data={})


def test_learning_is_opt_in_ok_only_and_never_secret(tmp_path: Path) -> None:
    learner = DiscoveryLearner(tmp_path, masks=lambda t: t.replace("hunter2", "${SECRET:PW}"))
    learner.after(_Call(False, "open the pricing page"), _ok())
    assert not (tmp_path / LEARNED_FILE).exists()  # off by default: nothing written
    learner.after(_Call(True, "open the pricing page"), _ok(False))  # failed: never
    learner.after(_Call(True, "log in with hunter2"), _ok())  # a secret value: never
    learner.after(_Call(True, "type ${SECRET:PW} in the box"), _ok())  # a placeholder: never
    learner.after(_Call(True, "open the pricing page"), _ok())
    learner.after(_Call(True, "run the checkout", "oc_skill_replay", {"skill_id": "s1"}), _ok())
    assert learner.examples.all() == {"skill:s1": ("run the checkout",), "tool:navigate": ("open the pricing page",)}
    path = tmp_path / LEARNED_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    rows = [json.loads(line) for line in path.read_text().splitlines()]  # readable by a person
    assert {r["example"] for r in rows} == {"open the pricing page", "run the checkout"}
    assert "hunter2" not in path.read_text()


def test_the_cap_keeps_the_most_recent_and_forget_deletes(tmp_path: Path) -> None:
    store = LearnedExamples(tmp_path, cap=3)
    for i in range(10):
        store.add("tool:navigate", f"request {i}")
    store.add("tool:find", "where is it")
    assert store.all()["tool:navigate"] == ("request 7", "request 8", "request 9")
    assert store.forget("tool:navigate") > 0 and "tool:navigate" not in store.all()
    assert store.all() == {"tool:find": ("where is it",)}
    store.forget()
    assert not store.path.exists() and store.all() == {}


def test_session_keyword_maps_onto_the_setting(tmp_path: Path) -> None:
    with ocnb.Session(home=tmp_path, discovery_learn=True) as s:
        assert s.settings.discovery_learn is True
        assert s.learner.after in s.pipeline.after
    with ocnb.Session(home=tmp_path) as s:
        assert s.settings.discovery_learn is False


def test_a_skill_replay_takes_the_intent_it_is_learned_under() -> None:
    """The learner files an ``oc_skill_replay`` intent under the replayed skill: the tool must accept one
    (it did not, so no skill ever learned an example)."""
    replay = Registry().get("oc_skill_replay")
    assert replay is not None and replay.accepts_intent
    assert DiscoveryLearner(".", masks=str).capability_of("oc_skill_replay", {"skill_id": "s1"}) == "skill:s1"


SEED_STYLE = """\
name: github-pr-review
kind: skill
displayName: GitHub PR Review
description: Review a pull request and leave comments.
category: development
tags: [github, code-review]
requiredSecrets: [GITHUB_TOKEN]
requiredTools: [navigate, read_page]
hasSideEffects: true
inputSchema:
  type: object
  properties:
    pr_url: {type: string}
  required: [pr_url]
skillContent: |
  1. Open the PR. 2. Read the diff. 3. Comment.
examples:
  - review my pull request
  - leave comments on PR 42
"""


def test_a_seed_style_manifest_loses_nothing(tmp_path: Path) -> None:
    (tmp_path / "pr").mkdir()
    (tmp_path / "pr" / "CAPABILITY.yaml").write_text(SEED_STYLE)
    d = from_manifest(tmp_path / "pr")
    assert (d.display_name, d.required_secrets, d.required_tools) == (
        "GitHub PR Review",
        ("GITHUB_TOKEN",),
        ("tool:navigate", "tool:read_page"),
    )
    assert d.has_side_effects is True and d.params == ("pr_url",)
    assert d.full_schema is not None and d.full_schema["required"] == ["pr_url"]
    assert d.full_content == "1. Open the PR. 2. Read the diff. 3. Comment.\n"
    assert d.examples == ("review my pull request", "leave comments on PR 42")


def test_unknown_and_invalid_fields_warn_naming_file_and_field(tmp_path: Path) -> None:
    from ocnb.discovery import ManifestWarning

    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "CAPABILITY.yaml").write_text(
        "name: x\nkind: tool\ndescription: X.\nhasSideEffect: true\nhasSideEffects: 'yes'\n"
    )
    with pytest.warns(ManifestWarning) as caught:
        d = from_manifest(tmp_path / "x")
    text = " ".join(str(w.message) for w in caught)
    assert "CAPABILITY.yaml" in text and "'hasSideEffect'" in text and "'hasSideEffects'" in text
    assert d.has_side_effects is True  # an unreadable safety fact is read on the safe side


#: The seed's CAPABILITY.yaml example, line for line in its shape — explicit ``id``, flow-style
#: lists and schema, ``skillContent`` naming a file beside the manifest — with values of our own.
SEED_EXAMPLE_SHAPE = """\
id: tool:intranet-lookup
kind: tool
name: intranet-lookup
displayName: Intranet Lookup
description: Looks up pages of the company intranet by keyword
category: information
tags: [search, intranet, pages]
requiredSecrets: [INTRANET_TOKEN]
hasSideEffects: false
inputSchema: { type: object, properties: { keyword: { type: string } } }
skillContent: ./SKILL.md
"""


def test_the_seed_example_shape_loads_every_field_and_its_skill_file(tmp_path: Path) -> None:
    import warnings

    folder = tmp_path / "intranet-lookup"
    folder.mkdir()
    (folder / "CAPABILITY.yaml").write_text(SEED_EXAMPLE_SHAPE)
    (folder / "SKILL.md").write_text("# Intranet Lookup\n\nSearch by one keyword.\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing in the seed's own format is unknown or dropped
        d = from_manifest(folder)
    assert (d.id, d.kind, d.name, d.display_name, d.category) == (
        "tool:intranet-lookup",
        "tool",
        "intranet-lookup",
        "Intranet Lookup",
        "information",
    )
    assert d.description == "Looks up pages of the company intranet by keyword"
    assert d.tags == ("search", "intranet", "pages") and d.required_secrets == ("INTRANET_TOKEN",)
    assert d.has_side_effects is False and d.params == ("keyword",)
    assert d.full_schema == {"type": "object", "properties": {"keyword": {"type": "string"}}}
    # `skillContent: ./SKILL.md` is the file's text, not the string "./SKILL.md"
    assert d.full_content == "# Intranet Lookup\n\nSearch by one keyword.\n"


@pytest.mark.parametrize(
    ("value", "says"),
    [("../../outside.md", "outside the capability's folder"), ("./MISSING.md", "does not exist")],
)
def test_a_skill_file_outside_the_folder_or_missing_warns_and_falls_back(tmp_path: Path, value: str, says: str) -> None:
    from ocnb.discovery import ManifestWarning

    (tmp_path / "outside.md").write_text("secret notes\n")
    folder = tmp_path / "caps" / "x"
    folder.mkdir(parents=True)
    (folder / "CAPABILITY.yaml").write_text(f"name: x\nkind: tool\ndescription: X.\nskillContent: {value}\n")
    (folder / "SKILL.md").write_text("the folder's own skill\n")
    with pytest.warns(ManifestWarning, match=says) as caught:
        d = from_manifest(folder)
    assert "'skillContent'" in str(caught[0].message) and "CAPABILITY.yaml" in str(caught[0].message)
    assert d.full_content == "the folder's own skill\n"


def test_an_input_schema_file_is_read_and_inline_text_stays_inline(tmp_path: Path) -> None:
    folder = tmp_path / "y"
    folder.mkdir()
    (folder / "CAPABILITY.yaml").write_text(
        "name: y\nkind: tool\ndescription: Y.\ninputSchema: ./input.json\nskillContent: Just call it.\n"
    )
    (folder / "input.json").write_text('{"type": "object", "properties": {"city": {"type": "string"}}}')
    d = from_manifest(folder)
    assert d.full_schema == {"type": "object", "properties": {"city": {"type": "string"}}}
    assert d.full_content == "Just call it."
