"""The skill store: one JSON file per domain, ``schema_version: 2``, atomic writes under a lock.

A skill is keyed by a stable id derived from (domain, name); re-recording keeps the id. Each step
may carry a ``replay_artifact``::

    {"schema_version": 1, "recorded_at": ISO, "recorder": {"ocnb_version": "…"},
     "steps": [{"kind": "click|fill|navigate|press|select|submit|scroll",
                "selectors": [{"type": "role_name|accessible_name|css|xpath|text|node_ref", …}],
                "frame_ordinal": 0, "args": {…}, "post_assert"?: {"contract_id": …}, "risky": false}]}

Files of schema_version 1 (no artifacts) load read-only: recall shows ``replay_artifact: null`` and
replay answers ``ARTIFACT_MISSING``; the file is upgraded in place on the next record, never lost.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from ..errors import InvalidArgument, OcnbError
from ..storage import CorruptFile, atomic_write_json, file_lock, ocnb_home, read_json

__all__ = ["SCHEMA_VERSION", "SkillStore", "domain_of", "skill_id_for"]

SCHEMA_VERSION = 2
STEP_KINDS = ("click", "fill", "navigate", "press", "select", "submit", "scroll")
SELECTOR_TYPES = ("node_ref", "role_name", "accessible_name", "css", "xpath", "text")


def skill_id_for(domain: str, name: str) -> str:
    """The stable id of the skill ``name`` on ``domain``."""
    return "sk_" + hashlib.sha256(f"{domain}\n{name}".encode()).hexdigest()[:16]


def domain_of(url: str) -> str:
    """The domain key of a URL (host[:port])."""
    parts = urlsplit(url)
    return parts.netloc or parts.scheme or "local"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class SkillStore:
    """Skills under ``<home>/skill-memory/``. Safe across threads and processes."""

    def __init__(self, home: str | Path | None = None) -> None:
        self.root = ocnb_home(home) / "skill-memory"

    def path(self, domain: str) -> Path:
        if not domain or len(domain) > 253:
            raise InvalidArgument("domain must be 1 to 253 characters")
        return self.root / quote(domain, safe="") / "skills.json"

    def _load(self, domain: str) -> dict[str, Any]:
        data = read_json(self.path(domain), default=None)
        if data is None:
            return {"schema_version": SCHEMA_VERSION, "domain": domain, "skills": {}}
        if not isinstance(data, dict) or data.get("schema_version") not in (1, SCHEMA_VERSION):
            raise CorruptFile(f"{self.path(domain)} has an unknown schema_version; ocnb will not overwrite it")
        return data

    @staticmethod
    def _skills(data: dict[str, Any], domain: str) -> dict[str, dict[str, Any]]:
        """Skills of a file as {id: skill}; v1 files may hold a list and no ids."""
        raw = data.get("skills", {})
        items = raw.values() if isinstance(raw, dict) else raw
        out: dict[str, dict[str, Any]] = {}
        for sk in items:
            skill = dict(sk)
            skill.setdefault("domain", domain)
            skill.setdefault("id", skill_id_for(domain, skill["name"]))
            skill["steps"] = [{**st, "replay_artifact": st.get("replay_artifact")} for st in skill.get("steps", [])]
            out[skill["id"]] = skill
        return out

    def domains(self) -> list[str]:
        from urllib.parse import unquote

        if not self.root.is_dir():
            return []
        return sorted(unquote(p.parent.name) for p in self.root.glob("*/skills.json"))

    def record(
        self,
        domain: str,
        name: str,
        steps: list[dict[str, Any]],
        *,
        description: str | None = None,
        contract_id: str | None = None,
        start_url: str | None = None,
    ) -> dict[str, Any]:
        """Create or update (same id) the skill ``name``; upgrades a v1 file to v2 in place."""
        if not name or len(name) > 120:
            raise InvalidArgument("name must be 1 to 120 characters")
        if not steps:
            raise InvalidArgument("a skill needs at least one step (capture some with capture_artifact: true)")
        sid = skill_id_for(domain, name)
        path = self.path(domain)
        with file_lock(path):
            data = self._load(domain)
            skills = self._skills(data, domain)
            old = skills.get(sid, {})
            skill = {
                "id": sid,
                "domain": domain,
                "name": name,
                "description": description if description is not None else old.get("description", ""),
                "contract_id": contract_id if contract_id is not None else old.get("contract_id"),
                "start_url": start_url or old.get("start_url"),
                "created_at": old.get("created_at", _now()),
                "updated_at": _now(),
                "steps": steps,
            }
            skills[sid] = skill
            atomic_write_json(path, {"schema_version": SCHEMA_VERSION, "domain": domain, "skills": skills})
        return skill

    def get(self, skill_id: str) -> dict[str, Any]:
        for domain in self.domains():
            skills = self._skills(self._load(domain), domain)
            if skill_id in skills:
                return skills[skill_id]
        raise OcnbError(
            f"no skill {skill_id!r}; see oc_skill_recall", code="INVALID_ARGUMENT", details={"skill_id": skill_id}
        )

    def file_version(self, domain: str) -> int:
        return int(self._load(domain).get("schema_version", SCHEMA_VERSION))

    def recall(
        self, domain: str | None = None, name: str | None = None, query: str | None = None, limit: int = 10
    ) -> list[dict[str, Any]]:
        """Skills, most recently updated first, filtered by domain, exact name or words of a query."""
        out: list[dict[str, Any]] = []
        for d in [domain] if domain else self.domains():
            out.extend(self._skills(self._load(d), d).values())
        if name:
            out = [s for s in out if s["name"] == name]
        if query:
            words = [w for w in query.lower().split() if w]
            out = [s for s in out if all(w in (s["name"] + " " + str(s.get("description", ""))).lower() for w in words)]
        out.sort(key=lambda s: (s.get("updated_at", ""), s["id"]), reverse=True)
        return out[:limit]

    def all(self) -> list[dict[str, Any]]:
        """Every skill of every domain (for capability discovery)."""
        return self.recall(limit=10**9)
