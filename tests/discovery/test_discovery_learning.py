"""Learning from use, end to end (issue 17): real Session calls with intents, on real Chromium, make a
later discover_capabilities find the tool that served them for a paraphrase; failed calls and
intents holding a secret are never learned.

``test_held_out_requests_rank_higher_after_their_neighbours_were_served`` is the acceptance test: the
requests of ``tests/fixtures/discovery/learning_requests.yaml`` are split per tool into ``served``
(the intent of a real, successful call) and ``held_out`` (only ever scored). Run it with ``-s`` for
the before/after figures.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

import ocnb
from ocnb.audit.secrets import spellings
from ocnb.discovery.learned import LEARNED_FILE, MAX_PER_CAPABILITY, LearnedExamples
from ocnb.dispatch import dispatch_async

pytestmark = pytest.mark.browser

QUERY = "tidy my inbox: archive all the mail in it"
DATA = Path(__file__).parents[1] / "fixtures" / "discovery" / "learning_requests.yaml"
#: A secret long enough that every spelling the masking knows (case, reversed, base64 …) applies.
SECRET = "7391-quartz-Lantern"
#: Every entry, no relevance floor, Tier 1 big enough to hold them all: the rank of any capability.
ALL = {"top_k": 50, "min_relevance": 0.0, "budgets": {"tier1": 100_000, "tier2": 0}}


def _rank(s: ocnb.Session, query: str) -> tuple[int | None, dict]:
    data = s.call("discover_capabilities", query=query, kind="tool").data
    ids = [r["id"] for r in data["results"]]
    rank = ids.index("tool:interact") if "tool:interact" in ids else None
    return rank, next((r for r in data["results"] if r["id"] == "tool:interact"), {})


def test_a_served_intent_makes_a_paraphrase_find_its_tool(site, tmp_path: Path) -> None:
    env = tmp_path / "secrets.env"
    env.write_text("BOARD_PIN=7391-quartz\n")
    with ocnb.Session(headless=True, home=tmp_path / "home", discovery_learn=True, secrets=str(env)) as s:
        before, entry = _rank(s, QUERY)
        assert entry.get("via") != "learned"
        assert s.call("navigate", url=site.url + "ambiguous.html").ok
        served = s.call("interact", action="click", query="Archive all", intent="tidy up the inbox, archive all mail")
        assert served.ok
        failed = s.call("interact", action="click", query="Unsubscribe everywhere", intent="leave every mailing list")
        assert not failed.ok  # ELEMENT_NOT_FOUND: never learned
        secret = s.call("interact", action="click", query="Archive all", intent="archive all with pin 7391-quartz")
        assert secret.ok  # a secret value in the intent: never learned
        after, learned = _rank(s, QUERY)
        assert after == 0 and learned["via"] == "learned", s.call("discover_capabilities", query=QUERY).data
        assert before is None or before > 0 or learned["relevance"] > entry["relevance"]
        path = s.home / LEARNED_FILE
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert rows == [
            {
                "capability": "tool:interact",
                "example": "tidy up the inbox, archive all mail",
                "ts": rows[0]["ts"],
            }
        ]
        assert "7391-quartz" not in path.read_text()


# -- the acceptance test: held-out requests, before and after their neighbours were served ---------


@dataclass(frozen=True)
class Capability:
    id: str
    kind: str
    page: str
    served: tuple[tuple[str, str, dict[str, Any]], ...]  # (intent, tool, args)
    held_out: tuple[str, ...]
    record: dict[str, Any] | None = None  # a skill: how to record it (see the data file)
    before: dict[str, dict[str, Any]] = field(default_factory=dict)  # intent -> the call it needs first


def load_requests() -> tuple[list[Capability], list[Capability]]:
    """The served/held-out capabilities, and the controls (held-out requests of tools never served)."""
    doc = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    assert doc["schema_version"] == 1
    caps = [
        Capability(
            id=c["id"],
            kind=c["kind"],
            page=c["page"],
            served=tuple((s["intent"], s["call"]["tool"], s["call"]["args"]) for s in c["served"]),
            before={s["intent"]: s["before"] for s in c["served"] if "before" in s},
            held_out=tuple(c["held_out"]),
            record=c.get("record"),
        )
        for c in doc["capabilities"]
    ]
    controls = [Capability(c["id"], c["kind"], "", (), tuple(c["requests"])) for c in doc["controls"]]
    return caps, controls


@dataclass(frozen=True)
class Scored:
    rank: int | None  # 1-based; None: not listed at all
    relevance: float
    via: str | None


def score(s: ocnb.Session, caps: list[Capability]) -> dict[tuple[str, str], Scored]:
    """The rank, relevance and ``via`` of the right capability for every held-out request."""
    out = {}
    for cap in caps:
        for query in cap.held_out:
            r = s.call("discover_capabilities", query=query, kind=cap.kind, **ALL)
            assert r.ok, r.error
            ids = [e["id"] for e in r.data["results"]]
            entry = next((e for e in r.data["results"] if e["id"] == cap.id), None)
            out[cap.id, query] = Scored(
                rank=ids.index(cap.id) + 1 if entry else None,
                relevance=float(entry["relevance"]) if entry else 0.0,
                via=entry.get("via") if entry else None,
            )
    return out


def figures(scores: dict[tuple[str, str], Scored]) -> dict[str, float]:
    n = len(scores)
    return {
        "mrr": sum(1 / v.rank for v in scores.values() if v.rank) / n,
        "top1": sum(v.rank == 1 for v in scores.values()),
        "top5": sum(v.rank is not None and v.rank <= 5 for v in scores.values()),
        "mean_relevance": sum(v.relevance for v in scores.values()) / n,
        "n": n,
    }


def show(label: str, scores: dict[tuple[str, str], Scored]) -> str:
    f = figures(scores)
    return (
        f"{label:<28} MRR {f['mrr']:.3f}  top-1 {f['top1']:>2}/{f['n']}  top-5 {f['top5']:>2}/{f['n']}"
        f"  mean relevance {f['mean_relevance']:.3f}"
    )


@pytest.fixture
def learning(site: Any, tmp_path: Path) -> Iterator[tuple[ocnb.Session, Path]]:
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    for name in ("notes.txt", "report.txt"):
        (uploads / name).write_text(f"{name}\n")
    env = tmp_path / "secrets.env"
    env.write_text(f"BOARD_PIN={SECRET}\n")
    home = tmp_path / "home"
    with ocnb.Session(
        headless=True,
        home=home,
        discovery_learn=True,
        secrets=str(env),
        upload_root=uploads,
        caps=["dialogs"],
        dialog_policy="manual",
    ) as s:
        yield s, home


def learned_rows(home: Path) -> list[dict[str, Any]]:
    path = home / LEARNED_FILE
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def never_learned(s: ocnb.Session, site: Any, caps: list[Capability]) -> None:
    """Calls that must leave nothing behind, each labelled with a held-out request word for word (were
    one learned, that request would jump to rank 1): failures, a refusal, a cancel, and successful
    calls whose intent holds the secret in every spelling the masking knows, or its placeholder."""
    interact = next(c for c in caps if c.id == "tool:interact")
    upload = next(c for c in caps if c.id == "tool:file_upload")
    form = next(c for c in caps if c.id == "tool:form_input")
    skill = next(c for c in caps if c.record is not None)
    skill_id = skill.id.removeprefix("skill:")
    assert s.call("navigate", url=site.page("form.html")).ok
    failures = [
        # ELEMENT_NOT_FOUND
        ("interact", {"action": "click", "query": "Delete my account"}, interact.held_out[2], "ELEMENT_NOT_FOUND"),
        # INVALID_ARGUMENT: from the schema (form_input needs value) and from the tool (select needs value)
        ("form_input", {"query": "Full name"}, form.held_out[0], "INVALID_ARGUMENT"),
        ("interact", {"action": "select", "query": "Country"}, interact.held_out[1], "INVALID_ARGUMENT"),
        # refused: a file outside the upload root
        ("file_upload", {"query": "Attachment", "paths": ["/etc/hostname"]}, upload.held_out[0], "FILE_NOT_ALLOWED"),
        # replays of the skill refused before acting: no step in that range; no such skill
        ("oc_skill_replay", {"skill_id": skill_id, "step_range": {"from": 7}}, skill.held_out[0], "INVALID_ARGUMENT"),
        ("oc_skill_replay", {"skill_id": "sk_0000000000000000"}, skill.held_out[1], "INVALID_ARGUMENT"),
    ]
    for tool, args, intent, code in failures:
        r = s.call(tool, intent=intent, **args)
        assert not r.ok and r.error.code == code, (tool, args, r.error)
    # a replay that fails on the page: from its second step, on a page without the form
    assert s.call("navigate", url=site.page("dragdrop.html")).ok
    r = s.call("oc_skill_replay", skill_id=skill_id, step_range={"from": 1}, intent=skill.held_out[2])
    assert not r.ok and r.data["failure"]["step_index"] == 1, r
    assert r.error.code == "PAGE_MISMATCH", r.error
    assert s.call("navigate", url=site.page("form.html")).ok
    # cancelled: a click that waits (an overlay covers the button) is cancelled by its caller
    cover = "document.body.insertAdjacentHTML('beforeend', '<div id=cover style=\"position:fixed;inset:0\"></div>')"
    assert s.call("javascript_tool", expression=cover).ok
    future = s.runtime.submit(
        dispatch_async(s, "interact", {"query": "Sign up", "intent": interact.held_out[2]}, source="api")
    )
    time.sleep(0.7)
    assert future.cancel()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(
        e.get("error_code") == "CANCELLED" for e in s.journal_df().to_dict("records")
    ):
        time.sleep(0.05)
    assert any(e.get("error_code") == "CANCELLED" for e in s.journal_df().to_dict("records"))
    assert s.call("javascript_tool", expression="document.getElementById('cover').remove()").ok
    # a secret in the intent of a successful call, in every spelling, and as its placeholder
    for i, spelled in enumerate([*spellings(SECRET), "${SECRET:BOARD_PIN}"]):
        query = interact.held_out[i % len(interact.held_out)]
        r = s.call("interact", action="check", query="I accept the terms", intent=f"{query} (pin {spelled})")
        assert r.ok, (spelled, r.error)


def record_skills(s: ocnb.Session, site: Any, caps: list[Capability]) -> list[Capability]:
    """Record each skill of the data set (calls without intents: they teach nothing); its real id."""
    out = []
    for cap in caps:
        if cap.record is not None:
            for step in cap.record["steps"]:
                args = {**step["args"], "capture_artifact": True}
                if step["tool"] == "navigate":
                    args["url"] = site.page(args["url"])
                assert s.call(step["tool"], **args).ok, step
            r = s.call("oc_skill_record", name=cap.record["name"], description=cap.record["description"])
            assert r.ok, r.error
            skill_id = r.data["skill_id"]
            cap = replace(
                cap,
                id=f"skill:{skill_id}",
                served=tuple((i, t, {**a, "skill_id": skill_id}) for i, t, a in cap.served),
            )
        out.append(cap)
    return out


def serve(s: ocnb.Session, site: Any, caps: list[Capability]) -> None:
    for cap in caps:
        assert s.call("navigate", url=site.page(cap.page)).ok
        for intent, tool, args in cap.served:
            if intent in cap.before:
                first = cap.before[intent]
                assert s.call(first["tool"], **first["args"]).ok, first
            r = s.call(tool, intent=intent, **args)
            assert r.ok, (intent, r.error)


def test_held_out_requests_rank_higher_after_their_neighbours_were_served(learning, site: Any) -> None:
    s, home = learning
    caps, controls = load_requests()
    caps = record_skills(s, site, caps)
    served = {intent for c in caps for intent, _, _ in c.served}
    assert not served & {q for c in caps for q in c.held_out}  # held out means held out
    assert not {c.id for c in caps} & {c.id for c in controls}
    before, control_before = score(s, caps), score(s, controls)
    assert not any(v.via == "learned" for v in [*before.values(), *control_before.values()])

    never_learned(s, site, caps)
    assert learned_rows(home) == []  # nothing written: not a line, not a file
    assert score(s, caps) == before  # and nothing changed a ranking

    serve(s, site, caps)
    after, control_after = score(s, caps), score(s, controls)
    with ocnb.Session(headless=True, home=home, discovery_learn=True) as fresh:  # learned.jsonl read back
        reread = score(fresh, caps)

    retriever = s.call("discover_capabilities", query="anything").data["retriever"]
    lines = [
        f"retriever: {retriever}",
        show("before serving", before),
        show("after, same session", after),
        show("after, fresh session", reread),
    ]
    for label, old_scores, new_scores in (("", before, after), ("control ", control_before, control_after)):
        for (cap_id, query), old in old_scores.items():
            new = new_scores[cap_id, query]
            lines.append(
                f"  {label}{cap_id:<16} rank {old.rank!s:>4} -> {new.rank!s:<4}"
                f" relevance {old.relevance:.2f} -> {new.relevance:.2f}  {new.via or '-':<8} {query}"
            )
    print("\n" + "\n".join(lines))

    assert reread == after  # the file is the whole state: a fresh session ranks the same
    b, a = figures(before), figures(after)
    assert a["mrr"] > b["mrr"] and a["top1"] > b["top1"] and a["mean_relevance"] > b["mean_relevance"]
    for key, old in before.items():  # no held-out request lost its right tool from the first five
        assert old.rank is None or old.rank > 5 or (after[key].rank or 99) <= 5, (key, old, after[key])
    # what learning lifted says so: an example lifted every request that rose (``via`` names the
    # origin of the best-matching example, which for a few can be one of the tool's declared ones),
    # and most of them name a learned one
    lifted = [v for k, v in after.items() if (v.rank or 99) < (before[k].rank or 99)]
    assert lifted and all(v.via in ("learned", "example") for v in lifted), lifted
    assert sum(v.via == "learned" for v in after.values()) > len(after) / 2, after
    for key, old in control_before.items():  # tools never served: not claimed, not pushed out
        new = control_after[key]
        assert new.via != "learned" and (old.rank is None or old.rank > 5 or (new.rank or 99) <= 5), (key, old, new)

    # the file: exactly the served intents, of the tools that served them, readable, 0600, no secret
    path = home / LEARNED_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    rows = learned_rows(home)
    assert sorted((r["capability"], r["example"]) for r in rows) == sorted(
        (c.id, intent) for c in caps for intent, _, _ in c.served
    )
    text = path.read_text()
    assert not any(spelled in text for spelled in spellings(SECRET)) and "SECRET" not in text

    # the journal says the same: learned are exactly the intents of its successful calls that hold no
    # secret; the intents of its failed calls (held-out requests, word for word) are not
    journal = s.journal_df().to_dict("records")
    labelled = [(bool(e["ok"]), e["intent"]) for e in journal if isinstance(e.get("intent"), str)]
    assert {r["example"] for r in rows} == {i for ok, i in labelled if ok and "${SECRET:" not in i}
    failed = {i for ok, i in labelled if not ok}
    assert len(failed) >= 7 and not failed & {r["example"] for r in rows}

    # the cap: the most recent MAX_PER_CAPABILITY distinct requests of a capability are kept
    assert s.call("navigate", url=site.page("form.html")).ok
    more = [f"write note number {i} in the message box" for i in range(MAX_PER_CAPABILITY)]
    for i, intent in enumerate([*more, more[0]]):  # the first again, last: it is the most recent now
        assert s.call("form_input", query="Message", value=f"note {i}", intent=intent).ok
    kept = LearnedExamples(home).all()
    assert kept["tool:form_input"] == (*more[1:], more[0])  # the four served earlier are gone
    assert {k: len(v) for k, v in kept.items() if k != "tool:form_input"} == {
        c.id: len(c.served) for c in caps if c.id != "tool:form_input"
    }
