"""Pool.replay over a table of inputs, a crashed browser replaced, and the same on a Dask cluster."""

from __future__ import annotations

import pandas as pd
import pytest

from ocnb.batch.pool import RESULT_COLUMNS, Pool
from ocnb.contracts import ContractStore
from tests.batch import assert_same_rows, dask_client
from tests.skills.helpers import form_skill

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAMES = [
    "Ada",
    "Grace",
    "",
    "Linus",
    "Guido",
    "Barbara",
    "",
    "Ken",
    "Dennis",
    "Margaret",
    "Alan",
    "Edsger",
    "",
    "Donald",
    "John",
    "Frances",
    "Radia",
    "Tim",
    "Brian",
    "Bjarne",
]


# The replays here keep the default step timeout (5 s). A pool's first rows run in browsers started
# cold, on a worker process started cold: on CI's loaded 2-core machine a first step once passed 2 s
# and a row that had to pass failed. The three rows with no name wait the timeout out on the contract.


@pytest.fixture
def signup(site, ocnb_home) -> str:
    ContractStore(ocnb_home).define("signup-ok", {"kind": "dom_text", "selector": "#result", "contains": "Thanks"})
    return form_skill(site, ocnb_home, "pool-signup", contract_id="signup-ok")


def test_pool_replay_twenty_rows_with_failures(signup, ocnb_home) -> None:
    rows = pd.DataFrame({"who": NAMES})
    with Pool(size=2, home=ocnb_home) as pool:
        df = pool.replay(signup, rows, progress=False)
        # a page's title is not read at each load in a pool (nobody calls tabs_context there)
        assert [s.config.titles_on_load for s in pool.sessions] == [False, False]
        assert all(t.title == "" for s in pool.sessions for t in s.browser_state().tabs.values())
    assert list(df.columns) == RESULT_COLUMNS and len(df) == 20
    failed = df[~df["ok"]]
    assert sorted(failed["row"].tolist()) == [2, 6, 12]
    assert set(failed["failure_code"]) == {"CONTRACT_FAILED"}
    # they clicked Sign up before the contract found no "Thanks": the site may have them, and says so
    assert df["acted"].all() and str(df["acted"].dtype) == "boolean"
    assert all(p and str(p) for p in failed["evidence_path"])
    assert df[df["ok"]]["step_reached"].eq(4).all()
    assert str(df["ok"].dtype) == "boolean" and str(df["failure_code"].dtype) == "string"


def test_crashed_browser_is_replaced_and_row_retried(signup, ocnb_home) -> None:
    with Pool(size=1, home=ocnb_home) as pool:
        victim = pool.sessions[0]
        victim.start()
        victim.run(victim._state.browser.close())
        df = pool.replay(signup, [{"who": "Ada"}, {"who": "Grace"}], progress=False)
        assert df["ok"].all()
        assert df.loc[0, "retried"]
        assert pool.sessions[0] is not victim


def test_dask_cluster_gives_the_same_frame_as_the_local_pool(signup, ocnb_home) -> None:
    rows = [{"who": n} for n in NAMES[:6]]
    with Pool(size=2, home=ocnb_home) as pool:
        local = pool.replay(signup, rows, progress=False)
        with (
            dask_client(2) as client,
        ):
            remote = pool.replay(signup, rows, client=client, rows_per_task=2, progress=False)
    cols = ["row", "ok", "failure_code", "step_reached", "steps_total"]
    assert_same_rows(local, remote, cols)
    # each worker journals in files of its own (home/workers/<address>/); journal_df reads them together
    from ocnb.batch.dask import journal_df, worker_home

    journal = journal_df(ocnb_home)
    replays = journal[journal["tool"] == "oc_skill_replay"]
    assert replays["worker"].isna().sum() == 6  # the local pool's rows, in the home itself
    assert set(replays["worker"].dropna()) == {worker_home(ocnb_home, w).name for w in remote["worker"]}
    assert replays["worker"].notna().sum() == 6


def test_each_dask_worker_runs_its_tasks_on_a_pool_of_two(signup, ocnb_home) -> None:
    """``Pool(size=2)`` on 2 workers: each worker holds a pool of 2 sessions and a task's rows (2 by
    default) run on both at once; the frame is the local pool's, failures and outcomes included."""
    rows = pd.DataFrame({"who": NAMES})
    with Pool(size=2, home=ocnb_home) as pool:
        local = pool.replay(signup, rows, progress=False)
        with (
            dask_client(2) as client,
        ):
            remote = pool.replay(signup, rows, client=client, progress=False)
            sizes = client.run(
                lambda: {a: p.size for a, (_, p) in __import__("ocnb.batch.dask").batch.dask._POOLS.items()}
            )
    cols = ["row", "ok", "failure_code", "step_reached", "steps_total", "outcome"]
    assert_same_rows(local, remote, cols)
    assert sorted(remote.loc[~remote["ok"], "row"].tolist()) == [2, 6, 12]
    assert remote["worker"].notna().all() and remote["browser"].eq("browser 0").all()
    assert sorted(s for per in sizes.values() for s in per.values()) == [2, 2]  # one pool of 2 per worker
    from ocnb.batch.dask import journal_df, worker_home

    journal = journal_df(ocnb_home)
    replays = journal[(journal["tool"] == "oc_skill_replay") & journal["worker"].notna()]
    assert len(replays) == 20
    for worker in set(remote["worker"]):
        mine = replays[replays["worker"] == worker_home(ocnb_home, worker).name]
        assert mine["session_id"].nunique() == 2, mine[["ts", "session_id"]]  # both contexts of its pool
        # and at the same time: some replay of one session overlaps in time a replay of the other
        end = mine["ts"]
        start = end - pd.to_timedelta(mine["duration_ms"].astype(float), unit="ms")
        spans = list(zip(start, end, mine["session_id"], strict=True))
        assert any(a0 < b1 and b0 < a1 for a0, a1, sa in spans for b0, b1, sb in spans if sa != sb), spans
