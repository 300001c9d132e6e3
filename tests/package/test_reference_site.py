"""The reference site (mkdocs.yml, docs/hooks.py) builds with warnings as errors, has a page per tool,
setting and error code computed from the code, and its generated examples are valid calls.

Its hand-written pages are README.md's sections and docs/*.md, whose examples
tests/notebooks/test_docs_examples.py runs as printed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ocnb
from ocnb.dispatch import schema_errors
from ocnb.errors import ERROR_CODES
from ocnb.registry import all_tooldefs
from ocnb.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _hooks():  # noqa: ANN202 - the docs hook module, loaded by path as MkDocs loads it
    spec = importlib.util.spec_from_file_location("ocnb_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--site-dir",
            str(out),
            "--config-file",
            str(ROOT / "mkdocs.yml"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    assert "WARNING" not in run.stderr, run.stderr[-5000:]
    return out


@pytest.mark.slow
def test_every_tool_setting_and_error_code_has_its_page(site: Path) -> None:
    tools = all_tooldefs()
    assert tools
    for t in tools:
        page = site / "reference" / "tools" / t.name / "index.html"
        assert page.is_file(), t.name
        html = page.read_text()
        assert t.summary.split(" ")[0] in html
        for name in t.input_schema.get("properties", {}):
            assert f"<code>{name}</code>" in html, (t.name, name)
    settings = (site / "reference" / "settings" / "index.html").read_text()
    import dataclasses

    for f in dataclasses.fields(Settings):
        assert f"<code>{f.name}</code>" in settings, f.name
    errors = (site / "reference" / "errors" / "index.html").read_text()
    assert all(f'id="{code.lower()}"' in errors for code in ERROR_CODES)
    api = (site / "reference" / "api" / "index.html").read_text()
    assert "ocnb.Session" in api and "configure" in api  # mkdocstrings rendered the docstrings


def test_the_generated_examples_are_valid_calls() -> None:
    hooks = _hooks()
    for t in all_tooldefs():
        args = hooks.example_args(t)
        assert schema_errors(t, args) == [], (t.name, args)


def test_each_tool_page_lists_the_codes_its_module_raises() -> None:
    hooks = _hooks()
    page = hooks.tool_page(next(t for t in all_tooldefs() if t.name == "navigate"))
    assert "BLOCKED_URL" in page and "INVALID_INTENT" in page and "TARGET_CLOSED" in page
    assert ocnb.__version__
