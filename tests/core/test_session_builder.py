"""One builder of a Session from face options (issue 35 §6): the same option given through each face —
the environment, ``Session(...)``, ``%config OcMagics.*``, an ``ocnb mcp`` flag, ``Pool(...)`` — ends
up as the same setting of the session that face builds; a malformed value is ``INVALID_ARGUMENT``
naming it as that face spells it, before any browser starts.

No browser starts here: a session launches its browser on its first call, and none is made.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from traitlets import TraitError
from traitlets.config import Config

import ocnb
from ocnb.magics import OcMagics
from ocnb.mcp.cli import build_parser, session_options
from ocnb.mcp.cli import main as mcp_main
from ocnb.settings import SessionOptions, Settings

ORIGINS = ("http://127.0.0.1:*", "https://*.example.org")


@dataclass(frozen=True)
class Option:
    """One option as each face spells it (None: the face has no way to say it) and what it must become."""

    name: str
    expect: Callable[[SessionOptions], bool]
    env: dict[str, str] | None = None
    api: dict[str, Any] | None = None
    trait: dict[str, Any] | None = None
    flags: list[str] | None = None
    pool: dict[str, Any] | None = None


def table(tmp: Path) -> list[Option]:
    home, secrets = tmp / "h", tmp / "face.env"  # the secrets file is written by the test
    return [
        Option(
            "allowed_origins",
            lambda o: o.settings.allowed_origins == ORIGINS,
            env={"OCNB_ALLOWED_ORIGINS": ";".join(ORIGINS)},
            api={"allowed_origins": list(ORIGINS)},
            trait={"allowed_origins": list(ORIGINS)},
            flags=["--allowed-origins", ";".join(ORIGINS)],
            pool={"allowed_origins": ";".join(ORIGINS)},
        ),
        Option(
            "blocked_origins",
            lambda o: o.settings.blocked_origins == ("http://localhost:*",),
            env={"OCNB_BLOCKED_ORIGINS": "http://localhost:*"},
            api={"blocked_origins": ["http://localhost:*"]},
            trait={"blocked_origins": ["http://localhost:*"]},
            flags=["--blocked-origins", "http://localhost:*"],
            pool={"blocked_origins": ["http://localhost:*"]},
        ),
        Option(  # a person's calls (issue 42: ocnb mcp's --confirm is the agent's policy, below)
            "confirm",
            lambda o: o.settings.confirm == "acting",
            env={"OCNB_CONFIRM": "acting"},
            api={"confirm": "acting"},
            trait={"confirm": "Acting "},
            pool={"confirm": "acting"},
        ),
        Option(  # an agent's calls (issue 42)
            "agent_confirm",
            lambda o: o.settings.agent_confirm == "acting",
            env={"OCNB_AGENT_CONFIRM": "acting"},
            api={"agent_confirm": "acting"},
            flags=["--confirm", "acting"],
            pool={"agent_confirm": "acting"},
        ),
        Option(
            "approval_timeout_s",
            lambda o: o.settings.approval_timeout_s == 45.0,
            env={"OCNB_APPROVAL_TIMEOUT": "45"},
            api={"approval_timeout_s": 45},
            flags=["--approval-timeout", "45"],
            pool={"approval_timeout_s": "45"},
        ),
        Option(
            "dialog_policy",
            lambda o: o.settings.dialog_policy == "manual" and "dialogs" in o.settings.caps,
            env={"OCNB_DIALOG_POLICY": "manual"},
            api={"dialog_policy": "manual"},
            trait={"dialog_policy": "manual"},
            flags=["--dialogs", "manual"],
            pool={"dialog_policy": "manual"},
        ),
        Option(
            "headless",
            lambda o: o.settings.headless is False,
            api={"headless": False},
            trait={"headless": False},
            flags=["--headed"],
            pool={"headless": False},
        ),
        Option(
            "caps",
            lambda o: o.settings.caps == ("network", "pdf"),
            env={"OCNB_CAPS": "pdf,network"},
            api={"caps": ["pdf", "network"]},
            trait={"caps": ["pdf", "network"]},
            flags=["--caps", "pdf,network"],
            pool={"caps": "pdf,network"},
        ),
        Option(
            "secrets",
            lambda o: o.secrets == secrets,
            api={"secrets": str(secrets)},
            trait={"secrets": str(secrets)},
            flags=["--secrets", str(secrets)],
            pool={"secrets": secrets},
        ),
        Option(
            "home",
            lambda o: o.settings.home_path == home,
            env={"OCNB_HOME": str(home)},
            api={"home": home},
            flags=["--home", str(home)],
            pool={"home": str(home)},
        ),
        Option(
            "default_timeout_ms",
            lambda o: o.settings.default_timeout_ms == 4321,
            api={"default_timeout_ms": 4321},
            trait={"default_timeout_ms": 4321},
            pool={"default_timeout_ms": 4321},
        ),
        Option(
            "risky_words",
            lambda o: o.settings.risky_words == ("nuke", "wipe out"),
            env={"OCNB_RISKY_WORDS": "Nuke, wipe  out"},
            api={"risky_words": ["Nuke", "wipe  out"]},
            trait={"risky_words": ["nuke", "Wipe Out"]},
            pool={"risky_words": "nuke,wipe out"},
        ),
        Option(
            "discovery_learn",
            lambda o: o.settings.discovery_learn is True,
            env={"OCNB_DISCOVERY_LEARN": "1"},
            api={"discovery_learn": True},
            trait={"discovery_learn": True},
            pool={"discovery_learn": True},
        ),
        Option(
            "handoff",
            lambda o: o.settings.handoff is True,
            api={"handoff": True},
            trait={"handoff": True},
            pool={"handoff": True},
        ),
        Option(
            "storage_state",
            lambda o: o.settings.storage_state == "github",
            api={"storage_state": "github"},
            flags=["--storage-state", "github"],
            pool={"storage_state": "github"},
        ),
        Option(
            "user_data_dir",
            lambda o: o.settings.user_data_dir == tmp / "profile",
            api={"user_data_dir": tmp / "profile"},
            flags=["--user-data-dir", str(tmp / "profile")],
            pool={"user_data_dir": str(tmp / "profile")},
        ),
        Option(
            "executable_path",
            lambda o: o.executable_path == "/opt/chrome/chrome",
            api={"executable_path": "/opt/chrome/chrome"},
            flags=["--chromium", "/opt/chrome/chrome"],
            pool={"executable_path": "/opt/chrome/chrome"},
        ),
    ]


NAMES = [o.name for o in table(Path("/x"))]


@pytest.fixture
def no_default_session(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The magics' observer configures the shared default session: there is none here."""
    monkeypatch.setattr(importlib.import_module("ocnb.session"), "_DEFAULT", None)
    yield


def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ocnb.settings.ENV:
        monkeypatch.delenv(var, raising=False)


# -- what each face builds --------------------------------------------------------------------------


def via_env(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> SessionOptions:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with ocnb.Session() as s:  # the Python API with nothing given reads OCNB_*
        return SessionOptions(settings=s.settings)


def via_api(kwargs: dict[str, Any]) -> SessionOptions:
    secrets = kwargs.get("secrets")
    with ocnb.Session(**kwargs) as s:
        assert secrets is None or s.secrets.names == ["FACE_TOKEN"]
        return SessionOptions(
            settings=s.settings, secrets=Path(secrets) if secrets else None, executable_path=s.executable_path
        )


def via_magics(traits: dict[str, Any]) -> SessionOptions:
    magics = OcMagics(shell=None, config=Config({"OcMagics": traits}))  # what %config / a profile sets
    return magics.session_options()


def via_mcp(flags: list[str]) -> SessionOptions:
    return session_options(build_parser().parse_args(flags))


def via_pool(kwargs: dict[str, Any]) -> SessionOptions:
    pool = ocnb.Pool(size=1, **kwargs)
    try:
        s = pool.sessions[0]
        assert pool.browsers[0].config == s.settings  # the shared browser launches as its sessions say
        assert not s.started
        if kwargs.get("secrets"):
            assert s.secrets.names == ["FACE_TOKEN"]
        return SessionOptions(
            settings=s.settings, secrets=pool.options.secrets, executable_path=pool.browsers[0].executable_path
        )
    finally:
        pool.close()


@pytest.mark.parametrize("name", NAMES)
def test_an_option_means_the_same_through_every_face(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_default_session: None
) -> None:
    _clean_env(monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "face.env").write_text("FACE_TOKEN=s3cret-value\n", encoding="utf-8")
    option = next(o for o in table(tmp_path) if o.name == name)
    built: dict[str, SessionOptions] = {}
    if option.api is not None:
        built["api"] = via_api(option.api)
    if option.trait is not None:
        built["magics"] = via_magics(option.trait)
    if option.flags is not None:
        built["mcp"] = via_mcp(option.flags)
    if option.pool is not None:
        built["pool"] = via_pool(option.pool)
    if option.env is not None:
        built["env"] = via_env(option.env, monkeypatch)
    assert len(built) >= 3
    wrong = {face: o for face, o in built.items() if not option.expect(o)}
    assert not wrong, f"{name} through {sorted(wrong)}: {wrong}"
    # and nothing else differs but what a face decides for itself (a pool turns off screenshots in
    # evidence and titles on load)
    own = {"evidence_screenshots": True, "titles_on_load": True}
    settled = {face: o.settings.with_changes(**own) for face, o in built.items()}
    assert len(set(settled.values())) == 1, settled


def test_each_face_keeps_its_own_defaults(monkeypatch: pytest.MonkeyPatch, no_default_session: None) -> None:
    _clean_env(monkeypatch)
    # issue 42: authority by caller — an agent's calls ask first, whichever face serves them
    assert via_mcp([]).settings.agent_confirm == "risky" and via_magics({}).settings.agent_confirm == "risky"
    assert via_magics({}).settings.confirm == "never"  # the person typed the call
    monkeypatch.setenv("OCNB_AGENT_CONFIRM", "never")
    assert via_mcp([]).settings.agent_confirm == "never"  # the environment wins over the default
    assert via_mcp(["--confirm", "acting"]).settings.agent_confirm == "acting"  # and a flag over the environment


# -- a malformed value: INVALID_ARGUMENT naming it, nothing started ----------------------------------

BAD = [
    ("dialog_policy", "sometimes", "--dialogs"),
    ("allowed_origins", "example.com/path", "--allowed-origins"),
    ("blocked_origins", "http://*.localhost:99999", "--blocked-origins"),
    ("confirm", "sometimes", "--confirm"),
    ("default_timeout_ms", 0, None),
]


@pytest.mark.parametrize(("name", "value", "flag"), BAD)
def test_a_malformed_value_is_refused_by_every_face_naming_it(
    name: str,
    value: Any,
    flag: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_default_session: None,
) -> None:
    _clean_env(monkeypatch)
    before = set(importlib.import_module("ocnb.session")._LIVE)
    with pytest.raises(ocnb.OcnbError) as err:
        SessionOptions.resolve({name: value})
    assert err.value.code == "INVALID_ARGUMENT" and name in err.value.message
    with pytest.raises(ocnb.OcnbError) as err:
        ocnb.Pool(size=1, home=tmp_path, **{name: value})
    assert err.value.code == "INVALID_ARGUMENT" and name in err.value.message
    with pytest.raises(TraitError, match=f"OcMagics.{name}"):
        OcMagics(shell=None).set_trait(name, value)
    if flag is not None and name != "dialog_policy" and name != "confirm":  # argparse's choices refuse those two
        assert mcp_main([flag, str(value), "--home", str(tmp_path)]) == 2
        err_text = capsys.readouterr().err
        assert "INVALID_ARGUMENT" in err_text and flag in err_text and str(value) in err_text
    if name in ("dialog_policy", "allowed_origins", "confirm"):
        monkeypatch.setenv(f"OCNB_{name.upper()}", str(value))
        with pytest.raises(ocnb.OcnbError) as err:
            SessionOptions.resolve()
        assert err.value.code == "INVALID_ARGUMENT" and f"OCNB_{name.upper()}" in err.value.message
    assert set(importlib.import_module("ocnb.session")._LIVE) == before  # no session (no browser) was made


def test_an_unknown_option_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="unknown setting 'hedless'"):
        SessionOptions.resolve({"hedless": False})
    with pytest.raises(TypeError, match="unknown setting 'hedless'"):
        ocnb.Pool(size=1, home=tmp_path, hedless=False)


def test_options_are_frozen_and_picklable(tmp_path: Path) -> None:
    import pickle

    options = SessionOptions.resolve({"allowed_origins": list(ORIGINS), "secrets": tmp_path / "x.env"}, environ={})
    assert pickle.loads(pickle.dumps(options)) == options
    assert options.settings == Settings(allowed_origins=ORIGINS).with_changes(upload_root=options.settings.upload_root)
