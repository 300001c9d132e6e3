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


def _text_fill(label: str, css: str, value: str) -> dict[str, Any]:
    """A fill step with the fingerprint a recording gives a plain text input (so replay fuses it)."""
    step = fill(label, css, value)
    step["fingerprint"] = {"role": "textbox", "name": label, "tag": "input", "type": "text", "frame": {"ordinal": 0}}
    return step


def field(session: Any, css: str) -> str:
    r = session.call("javascript_tool", expression=f"() => document.querySelector('{css}').value")
    assert r.ok, r.error
    return str(r.data.get("result", r.data))


def test_a_replayed_text_fill_is_fused_and_still_read_back(
    session: Any, module_home: Path, perception_site: DemoSite
) -> None:
    """A plain text field is filled through the fused locator and read back: a value cut by maxlength
    fails the step with INVALID_VALUE (said as lengths), a formatter's upper-casing is not a refusal."""
    url = perception_site.page("fields.html")
    steps = [
        {"tool": "interact", "args": {}, "replay_artifact": art(url, _text_fill("Zip", "#zip", "${zip}"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, _text_fill("Shouting", "#upper", "${loud}"))},
    ]
    skill = SkillStore(module_home).record(url.split("/")[2], "zip-and-loud", steps)["id"]
    assert session.navigate(url=url).ok
    ok = session.oc_skill_replay(skill_id=skill, params={"zip": "10115", "loud": "hello"})
    assert ok.ok, ok.error
    assert [st["fused"] for st in ok.data["step_results"]] == [True, True]
    assert (field(session, "#zip"), field(session, "#upper")) == ("10115", "HELLO")

    assert session.navigate(url=url).ok
    cut = session.oc_skill_replay(skill_id=skill, params={"zip": "1011599", "loud": "x"})
    assert not cut.ok and cut.data["failure"]["code"] == "INVALID_VALUE", cut
    assert cut.data["failure"]["step_index"] == 0
    assert "maxlength" in cut.data["failure"]["detail"] and "1011599" not in cut.data["failure"]["detail"]
    assert field(session, "#upper") == ""  # the replay stopped at the refused step
    assert field(session, "#zip") == ""  # and the refused value was not left in the field (issue 44 §4)


def test_a_replayed_fill_of_a_read_only_text_field_is_refused_not_timed_out(
    session: Any, module_home: Path, perception_site: DemoSite
) -> None:
    """The fused locator declines a read-only field before acting; the step is refused with INVALID_VALUE
    (as a live fill is), not left to wait for an editable field until STEP_TIMEOUT, and the field keeps its value."""
    url = perception_site.page("fields.html")
    steps = [{"tool": "interact", "args": {}, "replay_artifact": art(url, _text_fill("Nickname", "#nick", "bob"))}]
    skill = SkillStore(module_home).record(url.split("/")[2], "nickname", steps)["id"]
    assert session.navigate(url=url).ok
    r = session.oc_skill_replay(skill_id=skill, step_timeout_ms=3000)
    assert not r.ok and r.data["failure"]["code"] == "INVALID_VALUE", r
    assert "read-only" in r.data["failure"]["detail"]
    assert field(session, "#nick") == "ada"


def test_a_field_the_page_locks_once_filled_still_reads_back(
    session: Any, module_home: Path, perception_site: DemoSite
) -> None:
    """The fused fill vouches that the field is editable before it acts, not after: a page that makes the
    field read-only on input still has the replay read the value back and succeed (filled once)."""
    url = perception_site.page("fields.html")
    steps = [{"tool": "interact", "args": {}, "replay_artifact": art(url, _text_fill("Zip", "#zip", "${zip}"))}]
    skill = SkillStore(module_home).record(url.split("/")[2], "zip-locked", steps)["id"]
    assert session.navigate(url=url).ok
    lock = "() => { const z = document.getElementById('zip'); window.inputs = 0; z.addEventListener('input', () => { window.inputs++; z.readOnly = true; }); }"
    assert session.call("javascript_tool", expression=lock).ok
    r = session.oc_skill_replay(skill_id=skill, params={"zip": "10115"})
    assert r.ok, r.error
    assert r.data["step_results"][0]["fused"] is True
    assert field(session, "#zip") == "10115"
    inputs = session.call("javascript_tool", expression="() => window.inputs")
    assert inputs.ok and inputs.data.get("result", inputs.data) == 1


def test_a_replayed_fill_its_pattern_refuses_is_undone_to_what_the_field_held(
    session: Any, module_home: Path, perception_site: DemoSite
) -> None:
    """The fused fill checks the field's pattern in its read-back: a value the pattern refuses fails the
    step with INVALID_VALUE naming the pattern, and the field is put back to the value it held before
    (kept by the fill's own query, not read in a round trip of its own); a value it takes passes."""
    url = perception_site.page("refusals.html")
    steps = [
        {"tool": "interact", "args": {}, "replay_artifact": art(url, _text_fill("Postcode", "#postcode", "${pc}"))}
    ]
    skill = SkillStore(module_home).record(url.split("/")[2], "postcode", steps)["id"]
    assert session.navigate(url=url).ok
    bad = session.oc_skill_replay(skill_id=skill, params={"pc": "abc"})
    assert not bad.ok and bad.data["failure"]["code"] == "INVALID_VALUE", bad
    assert "pattern" in bad.data["failure"]["detail"]
    assert field(session, "#postcode") == "10115"  # as it was before the refused fill

    good = session.oc_skill_replay(skill_id=skill, params={"pc": "20095"})
    assert good.ok, good.error
    assert good.data["step_results"][0]["fused"] is True
    assert field(session, "#postcode") == "20095"
