"""The README's example runs as written and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_starts_with_exactly_two_commands() -> None:
    text = README.read_text()
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    assert text.index("```bash") < text.index("```python")


def test_readme_python_example_runs_and_prints_its_comments() -> None:
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    expected = [m.group(1).strip() for m in re.finditer(r"#\s*(.+)$", block, re.M)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    assert out.getvalue().splitlines() == expected
