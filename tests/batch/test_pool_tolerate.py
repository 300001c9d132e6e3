"""Pool.replay(…, tolerate=[…]) reaches every row's replay, locally and on a Dask cluster.

The skill is the drift sign-up flow (tests/fixtures/sites/drift/signup.html) recorded without its
navigate step, so each row starts on the page ``start_url`` opens: the ``label-renamed`` variant,
where the Email field's label reads "Email address". Without ``tolerate`` every row is refused at
the email step; with ``tolerate=["name"]`` every row replays.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.batch.pool import Pool
from ocnb.commands.demosite import DemoSite, serve
from tests.batch import dask_client
from tests.skills.helpers import DRIFT, LATE_REFUSAL_STEP_MS, PASSING_STEP_MS, SIGNUP_FLOW

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROWS = [{"first": "Ada", "email": "ada@example.com"}, {"first": "Grace", "email": "grace@example.com"}]


@pytest.fixture(scope="module")
def drift() -> Iterator[DemoSite]:
    with serve(root=DRIFT) as s:
        yield s


@pytest.fixture
def skill(drift: DemoSite, ocnb_home: Path) -> str:
    with ocnb.Session(headless=True, home=ocnb_home) as s:
        assert s.navigate(url=drift.page("signup.html")).ok  # not captured: rows start where start_url puts them
        for args in SIGNUP_FLOW:
            assert s.interact(**args, capture_artifact=True).ok
        rec = s.oc_skill_record(name="pool-tolerate")
        assert rec.ok and rec.data["with_artifacts"], rec
        return str(rec.data["skill_id"])


def _check(df: Any, *, ok: bool) -> None:
    assert len(df) == len(ROWS)
    if ok:
        assert df["ok"].all() and df["step_reached"].eq(5).all(), df
    else:
        assert not df["ok"].any(), df
        assert set(df["failure_code"]) == {"ARTIFACT_RESOLUTION_FAILED"}
        assert df["step_reached"].eq(2).all(), df  # cookies and first name done, email refused


def test_pool_passes_tolerate_to_every_row(drift: DemoSite, skill: str, ocnb_home: Path) -> None:
    url = drift.page("signup.html") + "?v=label-renamed"
    with Pool(size=2, home=ocnb_home) as pool:
        _check(pool.replay(skill, ROWS, start_url=url, step_timeout_ms=LATE_REFUSAL_STEP_MS, progress=False), ok=False)
        _check(
            pool.replay(skill, ROWS, start_url=url, step_timeout_ms=PASSING_STEP_MS, tolerate=["name"], progress=False),
            ok=True,
        )


def test_dask_path_passes_tolerate_too(drift: DemoSite, skill: str, ocnb_home: Path) -> None:
    url = drift.page("signup.html") + "?v=label-renamed"
    with (
        Pool(size=1, home=ocnb_home) as pool,
        dask_client(1, processes=False) as client,
    ):
        try:
            strict = pool.replay(
                skill, ROWS, client=client, start_url=url, step_timeout_ms=LATE_REFUSAL_STEP_MS, progress=False
            )
            tolerant = pool.replay(
                skill,
                ROWS,
                client=client,
                start_url=url,
                step_timeout_ms=PASSING_STEP_MS,
                tolerate=["name"],
                progress=False,
            )
        finally:
            client.run(lambda: __import__("ocnb.batch.dask", fromlist=["x"])._close_worker_session())
    _check(strict, ok=False)
    _check(tolerant, ok=True)
