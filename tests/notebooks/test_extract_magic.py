"""%oc extract in a real IPython shell: the rows show as a DataFrame and `_` holds it."""

from __future__ import annotations

import builtins
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError

from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


def test_extract_shows_the_dataframe_and_leaves_it_in_underscore(
    ip: Any, site: DemoSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    ip.run_line_magic("oc", f"navigate {site.page('checkout.html')}")
    # IPython leaves `_` alone while builtins has one (gettext.install, run by another test in this process)
    monkeypatch.delattr(builtins, "_", raising=False)
    for name in ("_", "__", "___"):  # a user's own `_` (or `__`) keeps IPython from setting them
        ip.user_ns.pop(name, None)
    ran = ip.run_cell("%oc extract", store_history=True)
    assert ran.error_in_exec is None
    df = ran.result
    assert isinstance(df, pd.DataFrame) and ip.user_ns["_"] is df
    assert df.to_dict("list") == {  # the tfoot Total row is not a row; Qty is typed as read_html types it
        "Item": ["Notebook", "Fountain pen"],
        "Qty": [2, 1],
        "Price": ["$12.00", "$18.00"],
    }
    parsed = ip.run_line_magic("oc", "extract --numbers parse --footer")
    assert (parsed["Qty"] * parsed["Price ($)"]).sum() == parsed.attrs["footer"]["Price ($)"][0] == 42.0
    with pytest.raises(UsageError, match="NOT_FOUND"):  # a failure is one line, as for any tool
        ip.run_line_magic("oc", "extract --kind items")
