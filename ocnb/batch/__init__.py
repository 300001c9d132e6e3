"""Replaying a recorded skill over many rows: one row, the runner, the pool, the ledger, and Dask.

- :mod:`~ocnb.batch.row` — one row's replay, its result columns and commit step;
- :mod:`~ocnb.batch.options` — :class:`~ocnb.batch.options.RowOptions`, how a batch's rows are replayed;
- :mod:`~ocnb.batch.runner` — :class:`~ocnb.batch.runner.ReplayPool`, N sessions over shared browsers;
- :mod:`~ocnb.batch.pool` — :class:`~ocnb.batch.pool.Pool` (``ocnb.Pool``), the batch API;
- :mod:`~ocnb.batch.ledger` — exactly once when a worker or the caller dies;
- :mod:`~ocnb.batch.dask` — the same on a Dask cluster (``ocnb.dask`` before), and a batch's journal.

Before issue 35 :mod:`ocnb.batch` was the row module: its names are still found here.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """``from ocnb.batch import replay_row``: the names of the row module, which ``ocnb.batch`` was before issue 35."""
    if name.startswith("__"):
        raise AttributeError(name)
    from . import row

    try:
        return getattr(row, name)
    except AttributeError:
        raise AttributeError(f"module 'ocnb.batch.row' has no attribute {name!r}") from None
