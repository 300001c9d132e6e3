"""Skill memory: record a flow once, replay it deterministically from selector chains, export it.

- :mod:`.store` — ``OCNB_HOME/skill-memory/<domain>/skills.json`` (schema v2; v1 read-compatible).
- :mod:`.schema` — the JSON Schema every stored skill passes when recorded and when loaded.
- :mod:`.capture` — the per-tab capture buffer fed by ``capture_artifact: true``.
- :mod:`.replay` — replay without an LLM, without read_page/find, each element checked against its
  recorded fingerprint before acting, with precise failure codes.
- :mod:`.export` — a standalone Playwright script from a skill.
"""

from .export import export_script
from .replay import replay_skill
from .store import SkillStore, skill_id_for

__all__ = ["SkillStore", "export_script", "replay_skill", "skill_id_for"]
