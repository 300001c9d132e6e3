"""Reference over value (issue 23: 7): read_page and javascript_tool write large output to a file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

import ocnb

pytestmark = pytest.mark.browser


def test_read_page_and_a_script_value_go_to_files_masked_and_private(site, tmp_path: Path) -> None:
    secrets = tmp_path / "s.env"
    secrets.write_text("TOKEN=hunter2-very-secret\n")
    s = ocnb.Session(home=tmp_path / "home", secrets=secrets)
    try:
        assert s.navigate(url=site.page("long.html")).ok
        inline = s.read_page().data["content"]
        r = s.read_page(to_file=True)
        assert r.ok and "content" not in r.data, r.data
        f = r.data["file"]
        path = Path(f["path"])
        assert path.read_text(encoding="utf-8") == inline  # the same outline, by reference
        assert f["bytes"] == path.stat().st_size and inline.startswith(f["preview"].rstrip("…"))
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.is_relative_to(tmp_path / "home" / "outputs")
        js = s.javascript_tool(expression="() => ({n: 3, list: [1, 2], t: '${SECRET:TOKEN}'})", to_file=True)
        assert js.ok and "result" not in js.data
        written = Path(js.data["file"]["path"]).read_text(encoding="utf-8")
        assert json.loads(written) == {"n": 3, "list": [1, 2], "t": "${SECRET:TOKEN}"}  # masked in the file
        assert "hunter2" not in written and "hunter2" not in json.dumps(js.data)
    finally:
        s.close()
