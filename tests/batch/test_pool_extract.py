"""A batch that ends with extract: Pool.replay(extract=...) reads each row's data from its own page."""

from __future__ import annotations

import pandas as pd
import pytest

from ocnb.batch.pool import RESULT_COLUMNS, Pool
from ocnb.contracts import ContractStore
from tests.skills.helpers import form_skill

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def signup(site, ocnb_home) -> str:
    ContractStore(ocnb_home).define("signup-ok", {"kind": "dom_text", "selector": "#result", "contains": "Thanks"})
    return form_skill(site, ocnb_home, "pool-extract", contract_id="signup-ok")


def test_each_row_carries_the_rows_extracted_from_its_page(signup, ocnb_home) -> None:
    rows = pd.DataFrame({"who": ["Ada", "", "Grace"]})
    with Pool(size=2, home=ocnb_home) as pool:
        df = pool.replay(signup, rows, progress=False, extract={"fields": {"said": "#result"}})
        bad = pool.replay(signup, rows.head(1), progress=False, extract={"fields": {"said": "#no-such-thing"}})
    assert list(df.columns) == [*RESULT_COLUMNS, "extracted"]
    assert df["ok"].tolist() == [True, False, True]
    assert [r[0]["said"].split("!")[0] for r in df["extracted"][[0, 2]]] == ["Thanks, Ada", "Thanks, Grace"]
    assert df["extracted"][1] is None  # the row's replay failed: nothing read
    assert bad["ok"].tolist() == [False] and bad["failure_code"].tolist() == ["INVALID_ARGUMENT"]
