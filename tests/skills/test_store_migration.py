"""Skill files written before fingerprints (file schema v2, artifacts v1, steps without
``fingerprint``) are migrated in place when the store loads them: atomically, under the lock, the
original kept once as ``skills.json.bak``, no field lost. Files this ocnb writes say
``"fingerprints": true`` and are stored as given (tests/skills/test_schema_properties.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from ocnb.skills.store import SkillStore, skill_id_for

DOMAIN = "shop.example"
URL = "https://shop.example/signup"


def _old_skill(name: str, *, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A skill as ocnb stored it before fingerprints (7795fdd's store and capture)."""
    art = {
        "schema_version": 1,
        "recorded_at": "2026-11-01T10:00:00Z",
        "recorder": {"ocnb_version": "0.0.9"},
        "url": URL,
    }
    return {
        "id": skill_id_for(DOMAIN, name),
        "domain": DOMAIN,
        "name": name,
        "description": "sign up",
        "contract_id": None,
        "start_url": URL,
        "created_at": "2026-11-01T10:00:00Z",
        "updated_at": "2026-11-01T10:00:05Z",
        "steps": [
            {
                "tool": "navigate",
                "args": {"url": URL},
                "description": "navigate",
                "replay_artifact": {
                    **art,
                    "steps": [
                        {"kind": "navigate", "selectors": [], "frame_ordinal": 0, "args": {"url": URL}, "risky": False}
                    ],
                },
            },
            {
                "tool": "interact",
                "args": {"query": "Email", "action": "fill", "value": "${email}"},
                "description": "type the email",
                "replay_artifact": {
                    **art,
                    "steps": [
                        {
                            "kind": "fill",
                            "selectors": [
                                {"type": "role_name", "role": "textbox", "name": "Email"},
                                {"type": "accessible_name", "value": "Email"},
                                {"type": "css", "value": "#email"},
                                {"type": "xpath", "value": "//*[@id='f-email']/input"},
                            ],
                            "frame_ordinal": 0,
                            "args": {"action": "fill", "value": "${email}"},
                            "risky": False,
                            "target": {"role": "textbox", "name": "Email"},
                        }
                    ],
                },
            },
            {
                "tool": "interact",
                "args": {"query": "Sign up", "action": "click"},
                "description": "interact click",
                "replay_artifact": {
                    **art,
                    "steps": [
                        {
                            "kind": "click",
                            "selectors": [{"type": "role_name", "role": "button", "name": "Sign up"}],
                            "frame_ordinal": 0,
                            "args": {"action": "click"},
                            "risky": False,
                        }
                    ],
                },
            },
        ],
        **(extra or {}),
    }


def _write(home: Path, skills: dict[str, Any]) -> Path:
    path = home / "skill-memory" / DOMAIN / "skills.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema_version": 2, "domain": DOMAIN, "skills": skills}, indent=1), encoding="utf-8")
    return path


def _lost(old: Any, new: Any, at: str = "$") -> list[str]:
    """Paths of ``old`` missing or changed in ``new`` (artifact versions may only go up)."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [at]
        return [p for k, v in old.items() for p in ([f"{at}.{k}"] if k not in new else _lost(v, new[k], f"{at}.{k}"))]
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [at]
        return [p for i, (a, b) in enumerate(zip(old, new, strict=True)) for p in _lost(a, b, f"{at}[{i}]")]
    if at.endswith("replay_artifact.schema_version"):
        return [] if new == 2 and old == 1 else [at]
    return [] if old == new else [at]


def test_a_pre_fingerprint_file_is_migrated_in_place_on_load(tmp_path: Path) -> None:
    old = _old_skill("signup")
    invalid = {**_old_skill("broken"), "steps": [{"tool": "interact", "replay_artifact": {"schema_version": 1}}]}
    path = _write(tmp_path, {old["id"]: old, invalid["id"]: invalid})
    original = path.read_bytes()

    skill = SkillStore(tmp_path).get(old["id"])

    fill = skill["steps"][1]["replay_artifact"]["steps"][0]
    assert fill["fingerprint"] == {"role": "textbox", "name": "Email", "frame": {"ordinal": 0}}
    click = skill["steps"][2]["replay_artifact"]["steps"][0]
    assert click["fingerprint"] == {"role": "button", "name": "Sign up", "frame": {"ordinal": 0}}
    assert "fingerprint" not in skill["steps"][0]["replay_artifact"]["steps"][0]  # navigate: no element

    backup = path.with_name("skills.json.bak")
    assert backup.read_bytes() == original
    on_disk = json.loads(path.read_text(encoding="utf-8"))
    assert on_disk["schema_version"] == 2 and on_disk["domain"] == DOMAIN and on_disk["fingerprints"] is True
    stored = on_disk["skills"][old["id"]]
    assert _lost(old, stored) == []
    assert all(st["replay_artifact"]["schema_version"] == 2 for st in stored["steps"])
    assert stored["steps"][1]["replay_artifact"]["steps"][0]["fingerprint"]["name"] == "Email"
    assert on_disk["skills"][invalid["id"]] == invalid  # a skill the schema refuses is left as it was
    assert not list(path.parent.glob("*.tmp*"))


def test_migration_happens_once_and_the_first_original_is_kept(tmp_path: Path) -> None:
    old = _old_skill("signup")
    path = _write(tmp_path, {old["id"]: old})
    first = path.read_bytes()
    store = SkillStore(tmp_path)
    assert [s["id"] for s in store.recall(DOMAIN)] == [old["id"]]  # recall migrates too
    migrated = path.read_bytes()
    assert migrated != first
    store.get(old["id"])
    assert path.read_bytes() == migrated  # nothing left to migrate: not rewritten

    later = _old_skill("login", extra={"description": "log in"})
    data = json.loads(migrated)
    data["skills"][later["id"]] = copy.deepcopy(later)  # an older ocnb wrote another skill …
    del data["fingerprints"]  # … and its file, which never says "fingerprints"
    path.write_text(json.dumps(data), encoding="utf-8")
    got = store.get(later["id"])
    assert got["steps"][1]["replay_artifact"]["steps"][0]["fingerprint"]["role"] == "textbox"
    assert path.with_name("skills.json.bak").read_bytes() == first  # the .bak is the very first original
    assert _lost(later, json.loads(path.read_text(encoding="utf-8"))["skills"][later["id"]]) == []


def test_record_migrates_the_other_skills_of_the_file(tmp_path: Path) -> None:
    old = _old_skill("signup")
    path = _write(tmp_path, {old["id"]: old})
    new = _old_skill("other")
    SkillStore(tmp_path).record(DOMAIN, "other", new["steps"][:2])
    on_disk = json.loads(path.read_text(encoding="utf-8"))["skills"]
    assert set(on_disk) == {old["id"], new["id"]}
    assert on_disk[old["id"]]["steps"][1]["replay_artifact"]["steps"][0]["fingerprint"]["name"] == "Email"
    assert _lost(old, on_disk[old["id"]]) == []
    assert path.with_name("skills.json.bak").is_file()
