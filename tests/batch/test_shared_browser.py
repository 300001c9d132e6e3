"""Pool(browsers=K): sessions that share one browser keep their own cookies, storage and journal,
and the less-work-per-row options (block_resources, no second start_url load) keep every row right."""

from __future__ import annotations

import pytest

from ocnb.batch.pool import Pool
from tests.skills.helpers import form_skill

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_contexts_of_one_browser_are_isolated(site, ocnb_home) -> None:
    with Pool(size=2, browsers=1, home=ocnb_home) as pool:
        a, b = pool.sessions
        assert a.navigate(url=site.page("form.html")).ok and b.navigate(url=site.page("form.html")).ok
        sa, sb = a.browser_state(), b.browser_state()
        assert sa.browser is sb.browser and sa.context is not sb.context  # one browser, two contexts
        assert a.runtime is b.runtime  # one browser thread

        async def write(state, value: str) -> None:
            page = await state.page()
            await page.evaluate(f"document.cookie = 'who={value}; path=/'; localStorage.setItem('who', '{value}')")

        async def read(state) -> list[str]:
            page = await state.page()
            return await page.evaluate("[document.cookie, String(localStorage.getItem('who'))]")

        a.run(write(sa, "alice"))
        assert b.run(read(sb)) == ["", "null"]  # nothing of a's reaches b
        b.run(write(sb, "bob"))
        assert a.run(read(sa)) == ["who=alice", "alice"]
        ja, jb = a.journal_df(), b.journal_df()
        assert len(ja) == 1 and len(jb) == 1 and set(ja["session_id"]) == {a.id} and set(jb["session_id"]) == {b.id}
        a.close()  # closes a's context only: b's browser lives on
        assert b.navigate(url=site.page("form.html")).ok
        assert b.run(read(sb)) == ["who=bob", "bob"]


def test_block_resources_and_start_url_not_loaded_twice(site, ocnb_home) -> None:
    sid = form_skill(site, ocnb_home, "shared-signup")
    rows = [{"who": f"user{i}"} for i in range(6)]
    with Pool(size=3, browsers=2, home=ocnb_home) as pool:
        assert len({id(s.browser_state().browser) for s in (p.start() for p in pool.sessions)}) == 2
        df = pool.replay(sid, rows, start_url=site.page("form.html"), block_resources=True, progress=False)
        assert df["ok"].all(), df
        fetch = pool.sessions[0]
        assert fetch.run(_fetch(fetch, site.page("logo.png?v=1"))) == "blocked"  # aborted, not even a 404
        assert fetch.run(_fetch(fetch, site.page("fonts/x.woff2"))) == "blocked"
        assert fetch.run(_fetch(fetch, site.page("nothing.txt"))) == "status 404"  # other kinds pass
        tools = [t for s in pool.sessions for t in s.journal_df()["tool"].tolist()]
        assert tools.count("oc_skill_replay") == 6
        assert tools.count("navigate") == 0  # start_url is the skill's own first navigate: not loaded twice


async def _fetch(session, url: str) -> str:
    page = await session.browser_state().page()
    return await page.evaluate("url => fetch(url).then(r => 'status ' + r.status, () => 'blocked')", url)


def test_every_context_of_a_shared_browser_replays_in_one_call(site, ocnb_home) -> None:
    """Each session over a shared browser has the Playwright behind it — the first one started too —
    so its replays resolve, verify and act in one call (fused) rather than the slow path on every row."""
    sid = form_skill(site, ocnb_home, "fused-signup")
    with Pool(size=2, browsers=1, home=ocnb_home) as pool:
        for s in pool.sessions:
            s.start()
            assert s.browser_state().playwright is not None
        assert pool.replay(sid, [{"who": f"user{i}"} for i in range(4)], progress=False)["ok"].all()
        for s in pool.sessions:
            r = s.oc_skill_replay(skill_id=sid, params={"who": "last"})
            assert r.ok, r
            assert [st["fused"] for st in r.data["step_results"]] == [False, True, True, True], (s.id, r.data)
