"""The skill store without a browser: strict artifacts, CORRUPT_FILE per domain, domain names."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import ocnb
from ocnb.errors import CorruptFile, InvalidArgument, OcnbError
from ocnb.skills.schema import SKILL_SCHEMA, skill_errors
from ocnb.skills.store import SkillStore, domain_of, skill_id_for
from tests.skills.helpers import art, click, fill, navigate

URL = "http://127.0.0.1:8000/form.html"
DOMAIN = "127.0.0.1:8000"


def steps() -> list[dict]:
    return [
        {"tool": "navigate", "args": {"url": URL}, "replay_artifact": art(URL, navigate(URL))},
        {"tool": "interact", "args": {}, "replay_artifact": art(URL, fill("Email", "#email", "${who}@example.com"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(URL, click("button", "Sign up"))},
    ]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(SKILL_SCHEMA)


def test_bad_artifact_is_refused_naming_every_error_and_never_stored(ocnb_home: Path) -> None:
    store = SkillStore(ocnb_home)
    bad = steps()
    bad[1]["replay_artifact"]["steps"][0]["kind"] = "teleport"
    bad[2]["replay_artifact"]["steps"][0]["selectors"][0]["type"] = "psychic"
    bad[0]["replay_artifact"]["schema_version"] = 99
    bad[0]["replay_artefact"] = None  # a typo would silently drop the artifact: refused
    with pytest.raises(InvalidArgument) as info:
        store.record(DOMAIN, "bad", bad)
    paths = {e["path"] for e in info.value.details["errors"]}
    assert {
        "$.steps[0]",
        "$.steps[0].replay_artifact.schema_version",
        "$.steps[1].replay_artifact.steps[0].kind",
        "$.steps[2].replay_artifact.steps[0].selectors[0].type",
    } <= paths
    for word in ("teleport", "psychic", "99", "replay_artefact"):
        assert word in info.value.message
    assert not store.path(DOMAIN).exists()
    # a good skill first, then a bad re-record: the file keeps the good one, byte for byte
    store.record(DOMAIN, "bad", steps())
    before = store.path(DOMAIN).read_bytes()
    with pytest.raises(InvalidArgument):
        store.record(DOMAIN, "bad", bad)
    assert store.path(DOMAIN).read_bytes() == before


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda s: s[1]["replay_artifact"]["steps"][0].update(selectors=[]),
            "$.steps[1].replay_artifact.steps[0].selectors",
        ),
        (lambda s: s[0]["replay_artifact"]["steps"][0]["args"].pop("url"), "$.steps[0].replay_artifact.steps[0].args"),
        (
            lambda s: s[1]["replay_artifact"]["steps"][0]["selectors"][0].pop("role"),
            "$.steps[1].replay_artifact.steps[0].selectors[0]",
        ),
        (
            lambda s: s[1]["replay_artifact"]["steps"][0]["selectors"][2].update(value=""),
            "$.steps[1].replay_artifact.steps[0].selectors[2].value",
        ),
        (
            lambda s: s[1]["replay_artifact"]["steps"][0].update(frame_ordinal=-1),
            "$.steps[1].replay_artifact.steps[0].frame_ordinal",
        ),
        (lambda s: s[1]["replay_artifact"]["steps"][0].update(risky="no"), "$.steps[1].replay_artifact.steps[0].risky"),
        (lambda s: s[1]["replay_artifact"].update(steps=[]), "$.steps[1].replay_artifact.steps"),
        (
            lambda s: s[2]["replay_artifact"]["steps"][0].update(post_assert={}),
            "$.steps[2].replay_artifact.steps[0].post_assert",
        ),
        (
            lambda s: s[1]["replay_artifact"]["steps"][0].update(fingerprint={"role": 3}),
            "$.steps[1].replay_artifact.steps[0].fingerprint.role",
        ),
        (lambda s: s.clear(), "$.steps"),
    ],
)
def test_each_rule_of_the_schema(ocnb_home: Path, mutate, path: str) -> None:
    bad = steps()
    mutate(bad)
    with pytest.raises(InvalidArgument) as info:
        SkillStore(ocnb_home).record(DOMAIN, "x", bad)
    assert path in {e["path"] for e in info.value.details["errors"]}, info.value.details


def test_fingerprints_and_old_artifacts_are_accepted(ocnb_home: Path) -> None:
    good = steps()
    low = good[1]["replay_artifact"]["steps"][0]
    low["fingerprint"] = {
        "role": "textbox",
        "name": "Email",
        "tag": "input",
        "type": "email",
        "name_attr": "email",
        "autocomplete": "email",
        "label": "Email",
        "frame": {"ordinal": 0},
        "twins": 1,
        "placeholder": None,  # further string/null fields are allowed inside a fingerprint
    }
    low["post_assert"] = {"contract_id": "c1"}
    good.append({"tool": "interact", "args": {}, "description": None, "replay_artifact": None})
    sk = SkillStore(ocnb_home).record(DOMAIN, "fp", good)
    assert SkillStore(ocnb_home).get(sk["id"]) == sk and skill_errors(sk) == []


def test_hand_edited_invalid_skill_is_refused_on_load_and_left_on_disk(ocnb_home: Path) -> None:
    store = SkillStore(ocnb_home)
    sid = store.record(DOMAIN, "edited", steps())["id"]
    other = store.record(DOMAIN, "fine", steps())["id"]
    path = store.path(DOMAIN)
    data = json.loads(path.read_text())
    data["skills"][sid]["steps"][1]["replay_artifact"]["steps"][0]["kind"] = "teleport"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidArgument) as info:
        store.get(sid)
    assert "teleport" in info.value.message and info.value.details["file"] == str(path)
    assert [s["id"] for s in store.recall()] == [other]
    assert store.problems[0]["skill_id"] == sid and store.problems[0]["code"] == "INVALID_ARGUMENT"
    store.record(DOMAIN, "fine", steps())  # another skill of the file: the edited one stays as it was
    assert json.loads(path.read_text())["skills"][sid] == data["skills"][sid]


@pytest.mark.parametrize(
    "content", ["{not json", "[1, 2]", '{"schema_version": 99, "skills": {}}', '{"schema_version": 2, "skills": 7}']
)
def test_corrupt_file_affects_only_its_own_domain(ocnb_home: Path, content: str) -> None:
    store = SkillStore(ocnb_home)
    good = store.record(DOMAIN, "signup", steps())["id"]
    bad_path = store.path("broken.example")
    bad_path.parent.mkdir(parents=True)
    bad_path.write_text(content)
    assert store.get(good)["name"] == "signup"
    assert [s["id"] for s in store.recall()] == [good] and [s["id"] for s in store.all()] == [good]
    assert store.problems == [
        {
            "domain": "broken.example",
            "file": str(bad_path),
            "code": "CORRUPT_FILE",
            "message": store.problems[0]["message"],
        }
    ]
    with pytest.raises(CorruptFile) as info:
        store.recall(domain="broken.example")
    assert info.value.code == "CORRUPT_FILE" and info.value.details["file"] == str(bad_path)
    with pytest.raises(CorruptFile):
        store.record("broken.example", "new", steps())
    assert bad_path.read_text() == content  # never overwritten
    store.record(DOMAIN, "another", steps())  # other domains still write


def test_a_skill_inside_a_corrupt_file_is_corrupt_file_and_an_unknown_one_names_the_unreadable(ocnb_home: Path) -> None:
    store = SkillStore(ocnb_home)
    sid = store.record("broken.example", "lost", steps())["id"]
    path = store.path("broken.example")
    path.write_text(path.read_text()[:-20])  # truncated by hand
    with pytest.raises(CorruptFile) as info:
        store.get(sid)
    assert info.value.details["file"] == str(path)
    with pytest.raises(OcnbError) as unknown:
        store.get("sk_0000000000000000")
    assert unknown.value.code == "INVALID_ARGUMENT" and unknown.value.details["unreadable"] == [str(path)]


@pytest.mark.browser
def test_corrupt_file_through_the_tools_names_the_file(ocnb_home: Path) -> None:
    store = SkillStore(ocnb_home)
    good = store.record(DOMAIN, "signup", steps())["id"]
    bad_path = store.path("broken.example")
    bad_path.parent.mkdir(parents=True)
    bad_path.write_text("{")
    with ocnb.Session(home=ocnb_home) as s:
        r = s.oc_skill_recall()
        assert r.ok and r.data["count"] == 1 and r.data["problems"][0]["file"] == str(bad_path)
        r = s.oc_skill_recall(domain="broken.example")
        assert r.error.code == "CORRUPT_FILE" and r.error.details["file"] == str(bad_path)
        r = s.oc_skill_export(skill_id=good, path=str(ocnb_home / "exports" / "signup.py"))
        assert r.ok, r


@pytest.mark.parametrize("domain", ["..", ".", "a/b", "../../etc", "a..b", "x y", "", "a\\b", "host/..", "a" * 254])
def test_domains_must_be_host_names(ocnb_home: Path, domain: str) -> None:
    store = SkillStore(ocnb_home)
    with pytest.raises(InvalidArgument):
        store.record(domain, "x", steps())
    if domain:  # recall(domain="") means every domain
        with pytest.raises(InvalidArgument):
            store.recall(domain=domain)
    assert not any(p.is_file() for p in ocnb_home.rglob("*"))


@pytest.mark.parametrize(
    "domain", ["example.com", "127.0.0.1:8000", "localhost", "[::1]:8080", "münchen.de", "my_host", "about"]
)
def test_host_names_are_domains(ocnb_home: Path, domain: str) -> None:
    store = SkillStore(ocnb_home)
    sid = store.record(domain, "x", steps())["id"]
    assert sid == skill_id_for(domain, "x") and store.domains() == [domain] and store.get(sid)["domain"] == domain


def test_domain_of_drops_credentials() -> None:
    assert domain_of("https://user:pw@shop.example:8443/x") == "shop.example:8443"
    assert domain_of("about:blank") == "about" and domain_of("https://[::1]:8080/") == "[::1]:8080"


def test_recorded_skill_round_trips_through_json(ocnb_home: Path) -> None:
    store = SkillStore(ocnb_home)
    sk = store.record(DOMAIN, 'na"""me\n', copy.deepcopy(steps()))
    assert json.loads(json.dumps(sk)) == sk == store.get(sk["id"])


@pytest.mark.parametrize("value", [float("nan"), {1, 2}, object(), "lone \ud800 surrogate"])
def test_values_json_cannot_hold_are_refused(ocnb_home: Path, value) -> None:
    bad = steps()
    bad[1]["replay_artifact"]["steps"][0]["args"]["value"] = value
    with pytest.raises(InvalidArgument, match="JSON"):
        SkillStore(ocnb_home).record(DOMAIN, "x", bad)
    assert not SkillStore(ocnb_home).path(DOMAIN).exists()


WRITER = """
import sys
from ocnb.skills.store import SkillStore
from tests.skills.test_store_strict import DOMAIN, steps
store = SkillStore(sys.argv[1])
for i in range(10):
    store.record(DOMAIN, f"{sys.argv[2]}-{i}", steps())
"""


@pytest.mark.slow
def test_two_processes_recording_at_once_lose_nothing_and_leave_no_temp_files(ocnb_home: Path) -> None:
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[2])
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(ocnb_home), tag], cwd=root, stderr=subprocess.PIPE)
        for tag in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    store = SkillStore(ocnb_home)
    assert sorted(s["name"] for s in store.all()) == sorted(f"{t}-{i}" for t in "ab" for i in range(10))
    assert store.problems == [] and not list(store.path(DOMAIN).parent.glob("*.tmp"))


def test_a_skill_remembered_by_get_is_read_again_once_its_file_changes(ocnb_home: Path) -> None:
    """``get`` answers from memory only while the skill's file is the same, unchanged, and settled."""
    import os
    import time

    store = SkillStore(ocnb_home)
    sid = store.record(DOMAIN, "kept", steps(), description="first")["id"]
    path = store.path(DOMAIN)
    old = time.time() - 10  # a file written a while ago: get may remember the skill
    os.utime(path, (old, old))
    assert store.get(sid)["description"] == "first"
    store.get(sid)["description"] = "changed by a caller"  # a caller's copy: what get remembers stays
    assert store.get(sid)["description"] == "first"
    text = path.read_text()
    path.write_text(text.replace('"first"', '"again"'))  # in place, the same size: a hand edit
    os.utime(path, (old, old + 1))
    assert store.get(sid)["description"] == "again"
    store.record(DOMAIN, "kept", steps(), description="third")  # a write replaces the file
    assert store.get(sid)["description"] == "third"
    path.unlink()
    with pytest.raises(OcnbError):
        store.get(sid)
