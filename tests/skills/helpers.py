"""Hand-written replay artifacts for the demo form (so skill tests need no recording step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ocnb.skills.store import SkillStore

#: The drift fixture site (served by the ``drift`` fixture of tests/skills/conftest.py).
DRIFT = Path(__file__).resolve().parents[1] / "fixtures" / "sites" / "drift"
#: The step timeout of a replay that must pass some steps and then be refused (or time out) at a later
#: one. Replay has one timeout for all its steps: the passing ones must finish inside it on CI's loaded
#: machine (a plain fill timed out at 500 ms there, a tolerant one took 1.66 s), and the refused step
#: waits it out, since resolution keeps polling while nothing agrees.
LATE_REFUSAL_STEP_MS = 2500
#: The step timeout of a replay that must go through: every element is there, so it only bounds a slow
#: machine (on CI's loaded one a tolerant fill once took 1.66 s, and a click timed out at 1 s).
PASSING_STEP_MS = 8000
#: The sign-up flow of drift/signup.html, as interact calls (recorded after a navigate).
SIGNUP_FLOW: tuple[dict[str, Any], ...] = (
    {"query": 'button "Accept cookies"', "action": "click"},
    {"query": "First name", "action": "fill", "value": "${first}"},
    {"query": "Email", "action": "fill", "value": "${email}"},
    {"query": "I accept the terms", "action": "check"},
    {"query": 'button "Sign up"', "action": "click"},
)


def art(url: str, *steps: dict) -> dict:
    return {
        "schema_version": 1,
        "recorded_at": "2026-11-22T00:00:00Z",
        "recorder": {"ocnb_version": "0.1.0"},
        "url": url,
        "steps": list(steps),
    }


def fill(label: str, css: str, value: str) -> dict:
    return {
        "kind": "fill",
        "selectors": [
            {"type": "role_name", "role": "textbox", "name": label},
            {"type": "accessible_name", "value": label},
            {"type": "css", "value": css},
        ],
        "frame_ordinal": 0,
        "args": {"action": "fill", "value": value},
        "risky": False,
        "target": {"role": "textbox", "name": label},
    }


def click(role: str, name: str, *, risky: bool = False) -> dict:
    return {
        "kind": "click",
        "selectors": [{"type": "role_name", "role": role, "name": name}, {"type": "text", "value": name}],
        "frame_ordinal": 0,
        "args": {"action": "click"},
        "risky": risky,
    }


def navigate(url: str) -> dict:
    return {"kind": "navigate", "selectors": [], "frame_ordinal": 0, "args": {"url": url}, "risky": False}


def form_skill(site, home: Path, name: str = "signup", contract_id: str | None = None) -> str:
    """A 4-step signup skill: open the form, fill name and email from ${who}, press Sign up."""
    url = site.page("form.html")
    steps = [
        {"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Full name", "#full-name", "${who}"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Email", "#email", "${who}@example.com"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, click("button", "Sign up"))},
    ]
    return SkillStore(home).record(url.split("/")[2], name, steps, contract_id=contract_id)["id"]


def record_flow(s: Any, url: str, name: str, flow: tuple[dict[str, Any], ...] = SIGNUP_FLOW) -> str:
    """Record ``flow`` on ``url`` through capture_artifact (the real path); the skill's id."""
    assert s.navigate(url=url, capture_artifact=True).ok
    for args in flow:
        r = s.interact(**args, capture_artifact=True)
        assert r.ok and r.data["fingerprint"]["role"], r
    rec = s.oc_skill_record(name=name)
    assert rec.ok and rec.data["steps"] == len(flow) + 1 and rec.data["with_artifacts"], rec
    return rec.data["skill_id"]


def page_states(session: Any) -> dict[str, dict[str, Any]]:
    """``window.__state()`` of every frame, by the frame's file name."""

    async def read() -> dict[str, dict[str, Any]]:
        page = await session.browser_state().page()
        out = {}
        for frame in page.frames:
            name = urlsplit(frame.url).path.rsplit("/", 1)[-1]
            out[name] = await frame.evaluate("() => window.__state ? window.__state() : null")
        return out

    return session.run(read())
