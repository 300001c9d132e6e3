"""Hand-written replay artifacts for the demo form (so skill tests need no recording step)."""

from __future__ import annotations

from pathlib import Path

from ocnb.skills.store import SkillStore


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
