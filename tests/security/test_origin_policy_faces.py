"""A policy set from each face is in force: environment, ``ocnb mcp`` flags, ``%config``, ``Pool``.

Each test opens a page on the allowed origin (``127.0.0.1``) holding an image on the refused one
(``localhost``) and reads the server's log: the page ran, the image never arrived.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import ocnb
from ocnb.mcp.cli import _session, build_parser
from ocnb.mcp.cli import main as mcp_main
from tests.notebooks import magics_shell

from .origin_site import OriginSite

pytestmark = pytest.mark.browser


def page_with_refused_image(site: OriginSite, name: str) -> str:
    site.pages[f"/f/{name}"] = ("text/html", f"<img src='{{A}}/ok/{name}'><img src='{{B}}/hit/{name}'>")
    return f"{site.allowed}/f/{name}"


def assert_in_force(s: ocnb.Session, site: OriginSite, name: str) -> None:
    result = s.call("navigate", url=page_with_refused_image(site, name))
    assert result.ok, result
    assert site.wait_for("127.0.0.1:", f"/ok/{name}")
    time.sleep(0.5)
    assert site.refused_hits(f"/hit/{name}") == []
    assert [b["url"] for b in result.data["blocked"]] == [f"{site.refused}/hit/{name}"]
    refused = s.call("navigate", url=f"{site.refused}/hit/{name}-typed")
    assert refused.error is not None and refused.error.code == "BLOCKED_URL"


def test_environment(origin_site: OriginSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCNB_BLOCKED_ORIGINS", "https://example.com; http://localhost:*")
    with ocnb.Session() as s:
        assert s.settings.blocked_origins == ("https://example.com", "http://localhost:*")
        assert_in_force(s, origin_site, "env")


def test_a_malformed_environment_pattern_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCNB_ALLOWED_ORIGINS", "http://127.0.0.1:*;example.com/path")
    with pytest.raises(ocnb.OcnbError) as err:
        ocnb.Session()
    assert err.value.code == "INVALID_ARGUMENT" and "example.com/path" in err.value.message


def test_mcp_flags(origin_site: OriginSite, tmp_path: Path) -> None:
    opts = build_parser().parse_args(
        ["--allowed-origins", "http://127.0.0.1:*;https://*.example.org", "--home", str(tmp_path)]
    )
    s = _session(opts)
    try:
        assert s.settings.allowed_origins == ("http://127.0.0.1:*", "https://*.example.org")
        assert_in_force(s, origin_site, "mcp")
    finally:
        s.close()


def test_mcp_malformed_flag_is_one_line_before_any_browser(capsys: pytest.CaptureFixture[str]) -> None:
    assert mcp_main(["--blocked-origins", "http://*.localhost:99999"]) != 0
    err = capsys.readouterr().err
    assert "INVALID_ARGUMENT" in err and "http://*.localhost:99999" in err and "Traceback" not in err


def test_config_magic(origin_site: OriginSite, ocnb_home: Path) -> None:
    from traitlets import TraitError

    # from_magics: the session is only made, not started (closed at once below); the settings are the
    # defaults again after
    with magics_shell(ocnb_home, from_magics=True) as shell:
        ocnb.session().close()  # the next %oc call starts the default session from the magics' settings
        magics = shell.magics_manager.registry["OcMagics"]
        with pytest.raises(TraitError, match="nope"):
            magics.blocked_origins = ["nope"]
        shell.run_line_magic("config", "OcMagics.blocked_origins = ['http://localhost:*']")
        assert_in_force(magics.session(), origin_site, "magic")


def test_pool(origin_site: OriginSite, tmp_path: Path) -> None:
    pool = ocnb.Pool(size=1, home=tmp_path, allowed_origins=["http://127.0.0.1:*"])
    try:
        assert_in_force(pool.sessions[0], origin_site, "pool")
    finally:
        pool.close()
