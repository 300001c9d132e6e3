"""The skill store: one JSON file per domain, ``schema_version: 2``, atomic writes under a lock.

A skill is keyed by a stable id derived from (domain, name); re-recording keeps the id. Each step
may carry a ``replay_artifact``::

    {"schema_version": 1, "recorded_at": ISO, "recorder": {"ocnb_version": "…"}, "url": …,
     "steps": [{"kind": "click|fill|navigate|press|select|submit|scroll",
                "selectors": [{"type": "role_name|accessible_name|css|xpath|text|node_ref", …}],
                "frame_ordinal": 0, "args": {…}, "post_assert"?: {"contract_id": …}, "risky": false,
                "target"?: {…}, "fingerprint"?: {…}}]}

Every skill is checked against :data:`~ocnb.skills.schema.SKILL_SCHEMA` when recorded (a bad one is
refused with ``INVALID_ARGUMENT`` naming every error, and nothing is written) and when loaded (a
hand-edited skill that no longer passes is refused the same way, and left as it is on disk).

Files of schema_version 1 (no artifacts) load read-only: recall shows ``replay_artifact: null`` and
replay answers ``ARTIFACT_MISSING``; the file is upgraded in place on the next record, never lost.

A file that cannot be read (not JSON, not a skills file, an unknown schema_version) is
``CORRUPT_FILE`` naming it, for its own domain only: the other domains keep working, recall lists
the file under :attr:`SkillStore.problems`, and the file is never overwritten. Domains are host
names (``domain_problem``); temp files left by a killed writer are removed on the next write.

Files of schema_version 2 written before fingerprints (artifacts of ``schema_version: 1``, steps
without ``fingerprint``) are migrated in place when the store loads them: each element step gets the
fingerprint replay would derive for it anyway (its recorded role and name, its frame), its chain is
spelled in the stored form and its artifact becomes ``schema_version: 2``; every other field stays.
The rewrite is atomic and under the file's lock; the original is kept once as ``skills.json.bak``.
A skill that would not pass the schema after migration is left as it is. Files this ocnb writes say
``"fingerprints": true``; only files without it are migrated, so steps recorded now in the older form
(hand-written artifacts of ``schema_version: 1``) are stored as given.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from ..errors import CorruptFile, InvalidArgument, OcnbError
from ..files import atomic_write_bytes, atomic_write_json, file_lock, ocnb_home, read_json
from ..perception.selectors import step_fingerprint, stored_chain
from .schema import FILE_SCHEMA_VERSIONS, SELECTOR_TYPES, STEP_KINDS, domain_problem, ensure_valid_skill, skill_errors

__all__ = ["SCHEMA_VERSION", "SELECTOR_TYPES", "STEP_KINDS", "SkillStore", "domain_of", "skill_id_for"]

SCHEMA_VERSION = 2
#: File key of files written since steps carry fingerprints (files without it are migrated on load).
FINGERPRINTS = "fingerprints"


#: Skills :meth:`SkillStore.get` found, by (store root, skill id): the file that held it, that file's
#: identity when it was read (device, inode, size, modification time) and the skill as JSON text. A batch
#: looks its skill up once per row; while the file is the same one, unchanged, a lookup is one ``stat``
#: instead of listing the domains and reading and validating the file (every write replaces the file).
_FOUND: dict[tuple[str, str], tuple[Path, tuple[int, ...], str]] = {}
#: A file written less than this long before it is read is not remembered: a write within the clock's
#: granularity of that read could leave the same size and times (git's "racily clean" rule).
_SETTLED_NS = 2_000_000_000


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def skill_id_for(domain: str, name: str) -> str:
    """The stable id of the skill ``name`` on ``domain``."""
    return "sk_" + hashlib.sha256(f"{domain}\n{name}".encode()).hexdigest()[:16]


def domain_of(url: str) -> str:
    """The domain key of a URL: host[:port] (never the user name or password), else its scheme."""
    parts = urlsplit(url)
    if parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        return host or "local"
    return parts.scheme or "local"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _migrated_step(low: Any) -> Any:
    """A low-level step in the current form (fingerprint, stored chain); anything else as it is."""
    if not isinstance(low, dict):
        return low
    out = dict(low)
    if isinstance(low.get("selectors"), list):
        out["selectors"] = [(stored_chain([e]) or [e])[0] for e in low["selectors"]]
    if low.get("kind") != "navigate" and not low.get("fingerprint"):
        fp = step_fingerprint(out)
        if fp:
            out["fingerprint"] = fp
    return out


def _migrated_skill(skill: Any) -> Any:
    """A stored skill with every artifact of schema_version 1 brought to the current form."""
    if not isinstance(skill, dict) or not isinstance(skill.get("steps"), list):
        return skill
    steps = []
    for st in skill["steps"]:
        art = st.get("replay_artifact") if isinstance(st, dict) else None
        if isinstance(art, dict) and art.get("schema_version") == 1 and isinstance(art.get("steps"), list):
            art = {**art, "schema_version": 2, "steps": [_migrated_step(low) for low in art["steps"]]}
            st = {**st, "replay_artifact": art}
        steps.append(st)
    return {**skill, "steps": steps}


def migrate_file(data: dict[str, Any], domain: str) -> dict[str, Any] | None:
    """The v2 skills file ``data`` with its pre-fingerprint skills migrated; None when nothing changes."""
    raw = data.get("skills")
    if data.get("schema_version") != 2 or data.get(FINGERPRINTS) is True or not isinstance(raw, dict):
        return None
    skills: dict[str, Any] = {}
    changed = False
    for key, sk in raw.items():
        new = _migrated_skill(sk)
        if new != sk:
            normalized = {**new, "domain": new.get("domain", domain), "id": new.get("id", key)}
            if not skill_errors(normalized):
                skills[key] = new
                changed = True
                continue
        skills[key] = sk
    return {**data, FINGERPRINTS: True, "skills": skills} if changed else None


class SkillStore:
    """Skills under ``<home>/skill-memory/``. Safe across threads and processes.

    :attr:`problems` collects, for the last :meth:`recall` or :meth:`all`, what could
    not be read: ``{"domain", "file", "code", "message"}`` per unreadable file or invalid skill.
    """

    def __init__(self, home: str | Path | None = None) -> None:
        self.root = ocnb_home(home) / "skill-memory"
        self.problems: list[dict[str, Any]] = []

    def path(self, domain: str) -> Path:
        """The skills file of ``domain``; ``INVALID_ARGUMENT`` unless ``domain`` is a host name."""
        problem = domain_problem(domain)
        if problem:
            raise InvalidArgument(problem, details={"errors": [{"path": "$.domain", "message": problem}]})
        return self.root / quote(domain, safe="") / "skills.json"

    def _load(self, domain: str, *, locked: bool = False) -> dict[str, Any]:
        """The skills file of ``domain`` (migrated in place first when it predates fingerprints;
        ``locked``: the caller already holds the file's lock)."""
        data = self._read(domain)
        if isinstance(data, dict) and migrate_file(data, domain) is not None:
            if locked:
                return self._migrate(domain, data)
            with file_lock(self.path(domain)):
                return self._migrate(domain, self._read(domain))
        return data

    def _migrate(self, domain: str, data: dict[str, Any]) -> dict[str, Any]:
        """Rewrite a pre-fingerprint file in the current form, keeping the original once as ``.bak``."""
        new = migrate_file(data, domain)
        if new is None:
            return data
        path = self.path(domain)
        backup = path.with_name(path.name + ".bak")
        try:
            if not backup.exists():
                atomic_write_bytes(backup, path.read_bytes(), locked=True)
            atomic_write_json(path, new, locked=True)
        except OSError:
            pass  # a read-only store still reads compatibly: the migrated form in memory only
        return new

    def _read(self, domain: str) -> dict[str, Any]:
        path = self.path(domain)
        try:
            data = read_json(path, default=None)
        except CorruptFile as exc:
            exc.details.setdefault("domain", domain)
            raise
        if data is None:
            return {"schema_version": SCHEMA_VERSION, "domain": domain, "skills": {}}
        problem = None
        if not isinstance(data, dict):
            problem = "does not hold a skills object"
        elif data.get("schema_version") not in FILE_SCHEMA_VERSIONS:
            versions = ", ".join(map(str, FILE_SCHEMA_VERSIONS))
            problem = f"has an unknown schema_version {data.get('schema_version')!r} (this ocnb reads {versions})"
        elif not isinstance(data.get("skills", {}), dict | list):
            problem = "has 'skills' that is neither an object nor a list"
        if problem:
            raise CorruptFile(
                f"{path} {problem}; fix or move it — ocnb will not overwrite it", file=path, details={"domain": domain}
            )
        return data

    @staticmethod
    def _entries(data: dict[str, Any], domain: str) -> dict[str, tuple[Any, dict[str, Any] | None]]:
        """Skills of a file as {id: (as stored, normalized or None)}; v1 files may hold a list and no ids.

        The normalized form fills in what v1 files lack (``id``, ``domain``, ``replay_artifact: null``);
        it is None for an entry that is not even an object with a name.
        """
        raw = data.get("skills", {})
        pairs = list(raw.items()) if isinstance(raw, dict) else [(None, sk) for sk in raw]
        out: dict[str, tuple[Any, dict[str, Any] | None]] = {}
        for n, (key, sk) in enumerate(pairs):
            if not isinstance(sk, dict) or not isinstance(sk.get("name"), str):
                out[str(key) if key is not None else f"#{n}"] = (sk, None)
                continue
            skill = dict(sk)
            skill.setdefault("domain", domain)
            skill.setdefault("id", skill_id_for(domain, skill["name"]))
            steps = skill.get("steps", [])
            if isinstance(steps, list):
                skill["steps"] = [
                    {**st, "replay_artifact": st.get("replay_artifact")} if isinstance(st, dict) else st for st in steps
                ]
            sid = key if isinstance(key, str) else skill["id"]
            out[sid] = (sk, skill)
        return out

    def _valid(self, domain: str, sid: str, skill: dict[str, Any] | None) -> dict[str, Any] | None:
        """``skill`` when it passes the schema; else None, noted in :attr:`problems`."""
        errors = skill_errors(skill) if skill is not None else [{"path": "$", "message": "not a skill object"}]
        if not errors:
            return skill
        self.problems.append(
            {
                "domain": domain,
                "file": str(self.path(domain)),
                "skill_id": sid,
                "code": "INVALID_ARGUMENT",
                "message": f"skill {sid} does not match the skill schema: {errors[0]['path']}: {errors[0]['message']}",
                "errors": errors,
            }
        )
        return None

    def domains(self) -> list[str]:
        """Domains with a skills file (directories whose names are not host names are ignored)."""
        if not self.root.is_dir():
            return []
        found = (unquote(p.parent.name) for p in self.root.glob("*/skills.json"))
        return sorted(d for d in found if domain_problem(d) is None)

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
        """Create or update (same id) the skill ``name``; upgrades a v1 file to v2 in place.

        The skill is checked against the schema first: any error refuses it with ``INVALID_ARGUMENT``
        naming every problem, and the file is not touched.
        """
        path = self.path(domain)
        sid = skill_id_for(domain, name) if isinstance(name, str) else "sk_" + "0" * 16
        candidate: dict[str, Any] = {
            "id": sid,
            "domain": domain,
            "name": name,
            "description": description if description is not None else "",
            "contract_id": contract_id,
            "start_url": start_url,
            "created_at": _now(),
            "updated_at": _now(),
            "steps": steps,
        }
        ensure_valid_skill(candidate)
        with file_lock(path):
            data = self._load(domain, locked=True)
            entries = self._entries(data, domain)
            old = (entries.get(sid) or ({}, None))[1] or {}
            skill = {
                **candidate,
                "description": description if description is not None else old.get("description", ""),
                "contract_id": contract_id if contract_id is not None else old.get("contract_id"),
                "start_url": start_url or old.get("start_url"),
                "created_at": old.get("created_at", candidate["created_at"]),
            }
            ensure_valid_skill(skill)
            skills: dict[str, Any] = {}
            for key, (stored, normalized) in entries.items():
                # Other skills stay as they are (even a hand-edited invalid one); v1 entries get their id.
                skills[key] = normalized if data.get("schema_version") == 1 and normalized is not None else stored
            skills[sid] = skill
            atomic_write_json(
                path,
                {"schema_version": SCHEMA_VERSION, "domain": domain, FINGERPRINTS: True, "skills": skills},
                locked=True,
            )
        return skill

    def get(self, skill_id: str) -> dict[str, Any]:
        """The skill ``skill_id``; ``INVALID_ARGUMENT`` when unknown or invalid on disk.

        A corrupt file of another domain does not matter; a corrupt file that holds ``skill_id``
        (judged from its raw text) is ``CORRUPT_FILE`` naming it.
        """
        self.problems = []
        key = (str(self.root), skill_id)
        found = _FOUND.get(key)
        if found is not None and _identity(found[0]) == found[1]:
            return dict(json.loads(found[2]))
        unreadable: list[CorruptFile] = []
        for domain in self.domains():
            identity = _identity(self.path(domain))  # before reading: a file written meanwhile is read again
            try:
                entries = self._entries(self._load(domain), domain)
            except CorruptFile as exc:
                unreadable.append(exc)
                continue
            if skill_id in entries:
                skill = entries[skill_id][1]
                if skill is None:
                    errors = [{"path": "$", "message": "not a skill object"}]
                    raise InvalidArgument(
                        f"skill {skill_id} in {self.path(domain)} is not a skill object",
                        details={"skill_id": skill_id, "file": str(self.path(domain)), "errors": errors},
                    )
                try:
                    ensure_valid_skill(skill, f"skill {skill_id} in {self.path(domain)}")
                except InvalidArgument as exc:
                    exc.details.update({"skill_id": skill_id, "file": str(self.path(domain))})
                    raise
                if identity is not None and time.time_ns() - identity[3] > _SETTLED_NS:
                    _FOUND[key] = (self.path(domain), identity, json.dumps(skill))
                return skill
        for corrupt in unreadable:
            try:
                holds = skill_id in Path(corrupt.details["file"]).read_text(encoding="utf-8", errors="replace")
            except OSError:
                holds = False
            if holds:
                raise corrupt
        details: dict[str, Any] = {"skill_id": skill_id}
        hint = "see oc_skill_recall"
        if unreadable:
            details["unreadable"] = [c.details["file"] for c in unreadable]
            hint += f"; {len(unreadable)} skills file(s) could not be read: {', '.join(details['unreadable'])}"
        raise OcnbError(f"no skill {skill_id!r}; {hint}", code="INVALID_ARGUMENT", details=details)

    def file_version(self, domain: str) -> int:
        return int(self._load(domain).get("schema_version", SCHEMA_VERSION))

    def recall(
        self, domain: str | None = None, name: str | None = None, query: str | None = None, limit: int = 10
    ) -> list[dict[str, Any]]:
        """Skills, most recently updated first, filtered by domain, exact name or words of a query.

        With a ``domain`` whose file is corrupt: ``CORRUPT_FILE``. Without one, unreadable files and
        invalid skills are skipped and listed in :attr:`problems`.
        """
        self.problems = []
        out: list[dict[str, Any]] = []
        for d in [domain] if domain else self.domains():
            try:
                entries = self._entries(self._load(d), d)
            except CorruptFile as exc:
                if domain:
                    raise
                self.problems.append(
                    {"domain": d, "file": exc.details.get("file"), "code": exc.code, "message": exc.message}
                )
                continue
            for sid, (_, skill) in entries.items():
                valid = self._valid(d, sid, skill)
                if valid is not None:
                    out.append(valid)
        if name:
            out = [s for s in out if s["name"] == name]
        if query:
            words = [w for w in query.lower().split() if w]
            out = [s for s in out if all(w in (s["name"] + " " + str(s.get("description", ""))).lower() for w in words)]
        out.sort(key=lambda s: (s.get("updated_at", ""), s["id"]), reverse=True)
        return out[:limit]

    def all(self) -> list[dict[str, Any]]:
        """Every readable, valid skill of every domain (for capability discovery)."""
        return self.recall(limit=10**9)
