"""Pool.replay(commit_step=...): checked against the skill's low-level steps before any row runs, and
handed to the rows (and to a Dask cluster) in the options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ocnb.batch.pool import Pool
from ocnb.contracts import ContractStore
from ocnb.skills.store import SkillStore
from tests.skills.helpers import art, click, fill, navigate

URL = "http://127.0.0.1:9/form"


def _skill(home: Path) -> str:
    ContractStore(home).define("thanks", {"kind": "dom_text", "selector": "#result", "contains": "Thanks"})
    steps = [
        {"tool": "navigate", "args": {"url": URL}, "replay_artifact": art(URL, navigate(URL))},
        {"tool": "interact", "args": {}, "replay_artifact": art(URL, fill("Key", "#key", "${key}"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(URL, click("button", "Send"))},
    ]
    return SkillStore(home).record("127.0.0.1", "send", steps, contract_id="thanks")["id"]


def test_a_commit_step_outside_the_skill_is_refused_before_any_row(ocnb_home: Path, monkeypatch) -> None:
    sid = _skill(ocnb_home)
    ran: list[Any] = []
    with Pool(size=1, home=ocnb_home) as pool:
        monkeypatch.setattr(pool, "_replay_local", lambda *a: ran.append(a) or [])
        for bad in (3, -1, True, "1", 1.0):
            with pytest.raises(ValueError, match=r"commit_step must be the index of one of the skill's 3 low-level"):
                pool.replay(sid, [{"key": "x"}], commit_step=bad, progress=False)
        assert not ran
        pool.replay(sid, [{"key": "x"}], commit_step=1, progress=False)
    assert ran and ran[0][2]["commit_step"] == 1  # (skill, rows, options, progress, check)


def test_commit_step_goes_to_a_dask_cluster_in_the_options(ocnb_home: Path, monkeypatch) -> None:
    pytest.importorskip("distributed")
    import ocnb.batch.dask

    seen: list[dict[str, Any]] = []

    def fake(client: Any, skill: Any, rows: Any, options: dict[str, Any], **kw: Any) -> list[dict[str, Any]]:
        seen.append(dict(options))
        return []

    monkeypatch.setattr(ocnb.batch.dask, "replay_on_cluster", fake)
    with Pool(size=1, home=ocnb_home) as pool:
        pool.replay(_skill(ocnb_home), [{"key": "x"}], client=object(), commit_step=2, progress=False)
        pool.replay(_skill(ocnb_home), [{"key": "y"}], client=object(), progress=False)
    assert seen[0]["commit_step"] == 2 and "commit_step" not in seen[1]  # none given: judged by step kinds
