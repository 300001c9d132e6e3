"""A replayed fill is checked like a live one (issue 31 §4): a skill recorded on a date field replays a
person's date converted into the field's format, and a value the field cannot take fails the step with
INVALID_VALUE — the field left empty, never a replay that reports success.

Fixture: tests/fixtures/sites/perception/fields.html; the field's value is read from the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ocnb.commands.demosite import DemoSite
from ocnb.skills.store import SkillStore
from tests.skills.helpers import art, fill, navigate

pytestmark = pytest.mark.browser


def departure(session: Any) -> str:
    r = session.call("javascript_tool", expression="() => document.getElementById('date').value")
    assert r.ok, r.error
    return str(r.data.get("result", r.data))


def test_a_replayed_date_is_converted_or_refused(session: Any, module_home: Path, perception_site: DemoSite) -> None:
    url = perception_site.page("fields.html")
    steps = [
        {"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Departure", "#date", "${day}"))},
    ]
    skill = SkillStore(module_home).record(url.split("/")[2], "departure", steps)["id"]
    assert session.navigate(url=url).ok
    ok = session.oc_skill_replay(skill_id=skill, params={"day": "10/11/2011"}, step_range={"from": 1, "to": 1})
    assert ok.ok, ok.error
    assert departure(session) == "2011-10-11"

    assert session.navigate(url=url).ok
    bad = session.oc_skill_replay(skill_id=skill, params={"day": "someday"}, step_range={"from": 1, "to": 1})
    assert not bad.ok and bad.data["failure"]["code"] == "INVALID_VALUE", bad
    assert "YYYY-MM-DD" in bad.data["failure"]["detail"]
    assert departure(session) == ""
