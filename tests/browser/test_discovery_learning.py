"""Learning from use, end to end (issue 17): real Session calls with intents, on real Chromium, make a
later discover_capabilities find the tool that served them for a paraphrase; failed calls and
intents holding a secret are never learned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ocnb
from ocnb.discovery.learned import LEARNED_FILE

pytestmark = pytest.mark.browser

QUERY = "tidy my inbox: archive all the mail in it"


def _rank(s: ocnb.Session, query: str) -> tuple[int | None, dict]:
    data = s.call("discover_capabilities", query=query, kind="tool").data
    ids = [r["id"] for r in data["results"]]
    rank = ids.index("tool:interact") if "tool:interact" in ids else None
    return rank, next((r for r in data["results"] if r["id"] == "tool:interact"), {})


def test_a_served_intent_makes_a_paraphrase_find_its_tool(site, tmp_path: Path) -> None:
    env = tmp_path / "secrets.env"
    env.write_text("BOARD_PIN=7391-quartz\n")
    with ocnb.Session(headless=True, home=tmp_path / "home", discovery_learn=True, secrets=str(env)) as s:
        before, entry = _rank(s, QUERY)
        assert entry.get("via") != "learned"
        assert s.call("navigate", url=site.url + "ambiguous.html").ok
        served = s.call("interact", action="click", query="Archive all", intent="tidy up the inbox, archive all mail")
        assert served.ok
        failed = s.call("interact", action="click", query="Unsubscribe everywhere", intent="leave every mailing list")
        assert not failed.ok  # ELEMENT_NOT_FOUND: never learned
        secret = s.call("interact", action="click", query="Archive all", intent="archive all with pin 7391-quartz")
        assert secret.ok  # a secret value in the intent: never learned
        after, learned = _rank(s, QUERY)
        assert after == 0 and learned["via"] == "learned", s.call("discover_capabilities", query=QUERY).data
        assert before is None or before > 0 or learned["relevance"] > entry["relevance"]
        path = s.home / LEARNED_FILE
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert rows == [
            {
                "capability": "tool:interact",
                "example": "tidy up the inbox, archive all mail",
                "ts": rows[0]["ts"],
            }
        ]
        assert "7391-quartz" not in path.read_text()
