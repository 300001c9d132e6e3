"""The suite's own arrangement: the module lists tests/conftest.py schedules by name still name modules."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONGEST, SPREAD

ROOT = Path(__file__).resolve().parents[2]


def test_the_scheduled_modules_exist() -> None:
    """A module renamed or removed would silently drop out of ``SPREAD`` / ``LONGEST`` (and run last)."""
    gone = sorted(p for p in SPREAD | set(LONGEST) if not (ROOT / p).is_file())
    assert not gone, f"tests/conftest.py names modules that are not there: {gone}"
    assert len(set(LONGEST)) == len(LONGEST)


def test_make_test_runs_on_workers_grouped_by_module() -> None:
    """CI's command spreads the suite over workers with the groups conftest.py sets (``loadgroup``), in
    the order it sets (no reordering by xdist)."""
    recipe = (ROOT / "Makefile").read_text().split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "-n $(JOBS) --dist loadgroup --no-loadscope-reorder" in recipe, recipe
