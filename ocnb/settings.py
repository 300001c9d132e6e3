"""Settings: everything a session may do and how, as one frozen value.

:func:`env_values` is the only reader of ``OCNB_*`` environment variables in ocnb (through
:meth:`Settings.from_env` and :meth:`SessionOptions.resolve`). Every other way to set something maps
onto a :class:`Settings`: ``Session(**overrides)`` and ``Session(settings=...)``; and a face's options —
the ``%config OcMagics.*`` traitlets, the ``ocnb mcp`` flags, a ``Pool``'s keywords — through one
builder, :meth:`SessionOptions.resolve` (each value checked once, by :func:`check_setting`) and
:func:`ocnb.session.build_session`. Change one with
:func:`dataclasses.replace` (or :meth:`ocnb.Session.configure` on a live session)::

    >>> from dataclasses import replace
    >>> s = Settings.from_env({"OCNB_JAVASCRIPT": "0"})
    >>> s.allow_javascript, replace(s, handoff=True).handoff
    (False, True)

Defaults are safe (DESIGN §6): no ``file:`` URLs, uploads only from the working directory, the human
hand-off off.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import InvalidArgument, OcnbError
from .origins import OriginPolicy, split_patterns

__all__ = [
    "CONFIRM_MODES",
    "DIALOG_POLICIES",
    "ENV",
    "SESSION_ARGS",
    "SessionOptions",
    "Settings",
    "check_setting",
    "confirm_for_face",
    "env_flag",
    "env_values",
]

#: Every environment variable ocnb reads, and what it sets.
ENV: dict[str, str] = {
    "OCNB_HOME": "home: the storage root (default ~/.ocnb)",
    "OCNB_CHROMIUM": "chromium: the browser executable to launch",
    "OCNB_JAVASCRIPT": "allow_javascript: 0 disables javascript_tool",
    "OCNB_ALLOW_FILE_URLS": "allowed_schemes: 1 lets navigate open file: URLs",
    "OCNB_SKILL_REPLAY": "skill_replay: 0 turns skill replay off",
    "OCNB_CAPABILITY_DIRS": "capability_dirs: extra capability-manifest folders (os.pathsep-separated)",
    "OCNB_O200K_FILE": "o200k_file: a local o200k_base BPE file for token counts",
    "OCNB_MCP_TOKEN": "mcp_token: the bearer token `ocnb mcp --http` requires",
    "OCNB_CAPS": "caps: opt-in capability groups of tools, comma-separated",
    "OCNB_DIALOG_POLICY": "dialog_policy: accept, dismiss or manual",
    "OCNB_DISCOVERY_LEARN": "discovery_learn: 1 learns successful calls' intents as discovery examples",
    "OCNB_CONFIRM": "confirm: never, risky or acting (which of a person's own calls need approval)",
    "OCNB_AGENT_CONFIRM": "agent_confirm: never, risky or acting (which of an MCP client's calls need approval)",
    "OCNB_APPROVAL_TIMEOUT": "approval_timeout_s: seconds an agent's call waits for an approval (default 120)",
    "OCNB_RISKY_WORDS": "risky_words: words added to the risky vocabulary, comma-separated",
    "OCNB_ALLOWED_ORIGINS": "allowed_origins: origin patterns the browser may reach, ;-separated",
    "OCNB_BLOCKED_ORIGINS": "blocked_origins: origin patterns the browser may not reach, ;-separated",
}

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})
DIALOG_POLICIES = ("accept", "dismiss", "manual")
#: Which calls need a person's approval (:mod:`ocnb.audit.approval`): none, the risky ones, every acting one.
CONFIRM_MODES = ("never", "risky", "acting")


def env_flag(name: str, value: str) -> bool:
    """``value`` of environment variable ``name`` as a flag; anything but a yes/no spelling is an error."""
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{name}={value!r} is not a flag: use 1/0, true/false, yes/no or on/off")


@functools.lru_cache(maxsize=64)
def _policy_of(allowed: tuple[str, ...], blocked: tuple[str, ...]) -> OriginPolicy:
    return OriginPolicy(allowed, blocked)


@dataclass(frozen=True)
class Settings:
    """What a session may do and how.

    - ``headless``: run Chromium without a window.
    - ``default_timeout_ms``: per-call timeout when the call gives none.
    - ``allow_javascript``: ``javascript_tool`` answers ``DISABLED`` when false (``OCNB_JAVASCRIPT=0``).
    - ``allowed_schemes``: URL schemes ``navigate`` accepts besides http(s), about:blank and data:
      (``("file",)`` allows local files; ``OCNB_ALLOW_FILE_URLS=1`` does the same).
    - ``upload_root``: ``file_upload`` takes only files under this folder (default: working directory).
    - ``dialog_policy``: ``accept`` (alert/confirm accepted, prompt answered with its default), ``dismiss``, or
      ``manual`` (the dialog waits; results show ``pending_dialog``; ``dialog_answer`` answers it, and
      its group ``dialogs`` is offered with it) — ``OCNB_DIALOG_POLICY``.
    - ``handoff``: when true, a target that cannot be resolved returns ``NEEDS_HUMAN`` with a payload.
    - ``confirm``: which of a person's own calls (cells, widgets, Python) need approval before they
      act — ``never`` (the default), ``risky`` or ``acting`` (``OCNB_CONFIRM``; :mod:`ocnb.audit.approval`).
    - ``agent_confirm``: the same for an MCP client's calls (the kernel's ``%oc mcp start`` server
      and ``ocnb mcp``) — ``risky`` by default (``OCNB_AGENT_CONFIRM``): authority by caller.
    - ``approval_timeout_s``: how long an agent's call waits at the approval desk for an answer
      before it ends ``APPROVAL_TIMEOUT`` (``OCNB_APPROVAL_TIMEOUT``; default 120).
    - ``risky_words``: words added to the risky vocabulary (``OCNB_RISKY_WORDS``, comma-separated).
    - ``viewport``: the page size in CSS pixels.
    - ``skill_replay``: whether recorded skills carry selector chains and can be replayed.
    - ``home``: the storage root (``OCNB_HOME``; ``None`` means ``~/.ocnb``).
    - ``chromium``: a browser executable tried before Playwright's own (``OCNB_CHROMIUM``).
    - ``capability_dirs``: extra capability-manifest folders (``OCNB_CAPABILITY_DIRS``).
    - ``o200k_file``: a local ``o200k_base`` file for token counts (``OCNB_O200K_FILE``).
    - ``mcp_token``: the bearer token ``ocnb mcp --http`` requires (``OCNB_MCP_TOKEN``; never shown).
    - ``caps``: opt-in capability groups of tools offered besides the default set (``OCNB_CAPS``).
    - ``console_buffer``, ``network_buffer``: console messages and requests kept per tab (older ones
      roll off and are counted as dropped); ``network_bodies``: responses whose body can still be read.
    - ``storage_state``: a saved login (cookies, localStorage, IndexedDB) the browser starts with: a
      bare name is ``OCNB_HOME/state/<name>.json``, a path must lie under ``OCNB_HOME/state`` or the
      upload root (:mod:`ocnb.browser.saved_logins`).
    - ``user_data_dir``: a persistent Chromium profile folder (logins survive restarts; one session at a time).
    - ``download_max_bytes``: a larger download is refused (not kept) and reported as such.
    - ``discovery_learn``: successful calls' intents become example requests of the capability that
      served them, and discovery uses them (``OCNB_DISCOVERY_LEARN``; :mod:`ocnb.discovery.learned`).
    - ``evidence_screenshots``: evidence bundles of failed replays and contracts include a screenshot
      (a batch pool turns it off unless asked: the DOM and the console say what failed, for less work).
    - ``titles_on_load``: also read each page's title when it loads (off by default: a round trip to
      the page per load, measured at 6-10 ms of a 190 ms skill replay). ``tabs_context`` does not need
      it: a page that does not answer shows the title the browser holds for it.
    - ``allowed_origins``, ``blocked_origins``: origin patterns (:mod:`ocnb.origins`) every request of
      the session's browser context is checked against, in the browser; a blocked match wins, an empty
      allow-list allows every origin not blocked (``OCNB_ALLOWED_ORIGINS``, ``OCNB_BLOCKED_ORIGINS``,
      ``;``-separated). A malformed pattern is ``INVALID_ARGUMENT``.
    """

    headless: bool = True
    default_timeout_ms: int = 30_000
    allow_javascript: bool = True
    allowed_schemes: tuple[str, ...] = ()
    upload_root: Path = field(default_factory=Path.cwd)
    dialog_policy: str = "accept"
    handoff: bool = False
    confirm: str = "never"
    agent_confirm: str = "risky"
    approval_timeout_s: float = 120.0
    risky_words: tuple[str, ...] = ()
    viewport: tuple[int, int] = (1280, 800)
    skill_replay: bool = True
    home: Path | None = None
    chromium: str | None = None
    capability_dirs: tuple[Path, ...] = ()
    o200k_file: Path | None = None
    mcp_token: str | None = field(default=None, repr=False)
    caps: tuple[str, ...] = ()
    console_buffer: int = 200
    network_buffer: int = 500
    network_bodies: int = 50
    storage_state: str | None = None
    user_data_dir: Path | None = None
    download_max_bytes: int = 100 * 1024 * 1024
    discovery_learn: bool = False
    evidence_screenshots: bool = True
    titles_on_load: bool = False
    allowed_origins: tuple[str, ...] = ()
    blocked_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.default_timeout_ms, bool) or not isinstance(self.default_timeout_ms, int):
            raise TypeError(f"default_timeout_ms must be an int of milliseconds, not {self.default_timeout_ms!r}")
        if self.default_timeout_ms <= 0:
            raise ValueError(f"default_timeout_ms must be positive, not {self.default_timeout_ms}")
        for name in ("console_buffer", "network_buffer", "network_bodies", "download_max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        if self.dialog_policy not in DIALOG_POLICIES:
            raise ValueError(f"dialog_policy must be one of {', '.join(DIALOG_POLICIES)}, not {self.dialog_policy!r}")
        for name in ("confirm", "agent_confirm"):
            if getattr(self, name) not in CONFIRM_MODES:
                raise ValueError(f"{name} must be one of {', '.join(CONFIRM_MODES)}, not {getattr(self, name)!r}")
        timeout = self.approval_timeout_s
        if isinstance(timeout, str):
            try:
                timeout = float(timeout.strip())
            except ValueError:
                raise ValueError(f"approval_timeout_s must be a number of seconds, not {timeout!r}") from None
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 86_400:
            raise ValueError(f"approval_timeout_s must be seconds between 0 and 86400, not {timeout!r}")
        object.__setattr__(self, "approval_timeout_s", float(timeout))
        words = self.risky_words.split(",") if isinstance(self.risky_words, str) else self.risky_words
        object.__setattr__(
            self, "risky_words", tuple(w for w in (" ".join(str(x).split()).lower() for x in words) if w)
        )
        # Normalise the forms a person types (a list of schemes, a str path) so equal settings compare equal.
        object.__setattr__(self, "allowed_schemes", tuple(s.lower() for s in self.allowed_schemes))
        object.__setattr__(self, "upload_root", Path(self.upload_root))
        object.__setattr__(self, "viewport", tuple(self.viewport))
        object.__setattr__(self, "capability_dirs", tuple(Path(p) for p in self.capability_dirs))
        caps = self.caps.split(",") if isinstance(self.caps, str) else self.caps
        wanted = {str(c).strip() for c in caps} - {""}
        if self.dialog_policy == "manual":
            wanted.add("dialogs")  # a dialog that waits needs the tool that answers it
        object.__setattr__(self, "caps", tuple(sorted(wanted)))
        if self.home is not None:
            object.__setattr__(self, "home", Path(self.home).expanduser())
        if self.o200k_file is not None:
            object.__setattr__(self, "o200k_file", Path(self.o200k_file))
        if self.storage_state is not None:  # kept as typed: "name" and "./name" mean different files
            object.__setattr__(self, "storage_state", os.fspath(self.storage_state) or None)
        if self.user_data_dir is not None:
            object.__setattr__(self, "user_data_dir", Path(self.user_data_dir).expanduser())
        for name in ("allowed_origins", "blocked_origins"):  # a ;-separated string or a list of patterns
            object.__setattr__(self, name, split_patterns(getattr(self, name)))
        self.origin_policy()  # a malformed pattern is INVALID_ARGUMENT now, naming it

    def origin_policy(self) -> OriginPolicy:
        """The :class:`~ocnb.origins.OriginPolicy` of ``allowed_origins`` and ``blocked_origins`` (parsed
        once per pair of lists: ``navigate`` asks for it on every call, and 600 patterns take 6 ms)."""
        return _policy_of(self.allowed_origins, self.blocked_origins)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then the ``OCNB_*`` variables of ``environ`` (default ``os.environ``), then ``overrides``.

        An unknown override is a ``TypeError``; a variable that is not a valid value a ``ValueError``
        naming it.
        """
        values = env_values(environ)
        return replace(cls(**values), **_checked(overrides)) if overrides else cls(**values)

    def with_changes(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (``dataclasses.replace`` that names an unknown setting clearly)."""
        return replace(self, **_checked(changes)) if changes else self

    @property
    def home_path(self) -> Path:
        """The storage root: ``home``, or ``~/.ocnb``."""
        return self.home if self.home is not None else Path.home() / ".ocnb"


#: What a face may give a Session besides its settings (``ocnb mcp --secrets/--chromium/--connect/--cdp-endpoint``).
SESSION_ARGS = ("secrets", "executable_path", "connect", "cdp")
#: The variable that sets each field (the other way round from :data:`ENV`), to name it in an error.
_ENV_OF = {text.split(":")[0]: var for var, text in ENV.items()}
#: Settings whose value a person types in any case: compared lower-case, without surrounding space.
_WORDS = ("dialog_policy", "confirm", "agent_confirm")


def check_setting(name: str, value: Any, label: str | None = None) -> Any:
    """``value`` for setting ``name`` as :class:`Settings` holds it, or ``INVALID_ARGUMENT`` naming ``label``.

    The one validation of a value a face was given (a ``%config OcMagics.*`` trait, an ``ocnb mcp``
    flag, a ``Pool`` keyword): :class:`Settings` itself checks it; this names where it came from.
    An unknown ``name`` is a ``TypeError``.
    """
    _checked({name: value})
    if name in _WORDS and isinstance(value, str):
        value = value.strip().lower()
    try:
        return getattr(Settings(**{name: value}), name)
    except (ValueError, TypeError) as exc:
        text = exc.message if isinstance(exc, OcnbError) else str(exc)
        raise InvalidArgument(f"{label or name}: {text}", details={"option": label or name}) from None


@dataclass(frozen=True)
class SessionOptions:
    """What a face says about the Session it builds: its :class:`Settings` and the rest of :data:`SESSION_ARGS`.

    Built by :meth:`resolve` — the magics, ``ocnb mcp`` and a batch pool all do — and turned into a
    session by :func:`ocnb.session.build_session`. Frozen and picklable (it holds no callable).
    """

    settings: Settings = field(default_factory=Settings)
    secrets: Path | None = None
    executable_path: str | None = None
    connect: str | None = None
    cdp: str | None = None

    @classmethod
    def resolve(
        cls,
        values: Mapping[str, Any] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        defaults: Mapping[str, Any] | None = None,
        base: Settings | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> SessionOptions:
        """A face's ``values`` (settings by field name, and :data:`SESSION_ARGS`; ``None`` = not given)
        over the ``OCNB_*`` variables of ``environ`` over the face's own ``defaults`` (``ocnb mcp``:
        ``confirm="risky"``) — or over ``base`` settings, when given, instead of the last two.

        Every value is checked before anything starts: a malformed one (or variable) is
        ``INVALID_ARGUMENT`` naming it as the face spells it (``labels``: ``{"dialog_policy": "--dialogs"}``);
        an unknown name is a ``TypeError``.
        """
        given = {k: v for k, v in (values or {}).items() if v is not None}
        args = {k: given.pop(k) for k in SESSION_ARGS if k in given}
        named = labels or {}
        checked = {k: check_setting(k, v, named.get(k)) for k, v in given.items()}
        if base is None:
            try:
                start = {**_checked(defaults or {}), **env_values(environ)}
            except ValueError as exc:  # an OCNB_* variable that is not a flag: named in the message
                raise InvalidArgument(str(exc), details={"option": "environment"}) from None
            base = Settings(**{k: check_setting(k, v, _ENV_OF.get(k)) for k, v in start.items()})
        secrets = args.get("secrets")
        return cls(
            settings=base.with_changes(**checked),
            secrets=Path(secrets) if secrets is not None else None,
            executable_path=str(args["executable_path"]) if args.get("executable_path") else None,
            connect=args.get("connect"),
            cdp=args.get("cdp"),
        )

    def session_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :class:`ocnb.Session` these options stand for."""
        return {
            "settings": self.settings,
            "secrets": self.secrets,
            "executable_path": self.executable_path,
            "connect": self.connect,
            "cdp": self.cdp,
        }


def confirm_for_face(face_default: str, environ: Mapping[str, str] | None = None) -> str:
    """The ``confirm`` mode of a face whose own default differs from the API's (``ocnb mcp``: risky):
    ``OCNB_CONFIRM`` when set, else ``face_default``."""
    return str(env_values(environ).get("confirm", face_default))


def env_values(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings the ``OCNB_*`` variables of ``environ`` (default ``os.environ``) give, by field name.

    The one reader of those variables: :meth:`Settings.from_env` and :meth:`SessionOptions.resolve`
    both start from it. A variable that is not a valid flag is a ``ValueError`` naming it.
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    if env.get("OCNB_JAVASCRIPT") is not None:
        values["allow_javascript"] = env_flag("OCNB_JAVASCRIPT", env["OCNB_JAVASCRIPT"])
    if env.get("OCNB_ALLOW_FILE_URLS") is not None and env_flag("OCNB_ALLOW_FILE_URLS", env["OCNB_ALLOW_FILE_URLS"]):
        values["allowed_schemes"] = ("file",)
    if env.get("OCNB_SKILL_REPLAY") is not None:
        values["skill_replay"] = env_flag("OCNB_SKILL_REPLAY", env["OCNB_SKILL_REPLAY"])
    if env.get("OCNB_HOME"):
        values["home"] = Path(env["OCNB_HOME"])
    if env.get("OCNB_CHROMIUM"):
        values["chromium"] = env["OCNB_CHROMIUM"]
    if env.get("OCNB_CAPABILITY_DIRS"):
        values["capability_dirs"] = tuple(Path(p) for p in env["OCNB_CAPABILITY_DIRS"].split(os.pathsep) if p)
    if env.get("OCNB_O200K_FILE"):
        values["o200k_file"] = Path(env["OCNB_O200K_FILE"])
    if env.get("OCNB_DIALOG_POLICY", "").strip():
        values["dialog_policy"] = env["OCNB_DIALOG_POLICY"].strip().lower()
    if env.get("OCNB_DISCOVERY_LEARN") is not None:
        values["discovery_learn"] = env_flag("OCNB_DISCOVERY_LEARN", env["OCNB_DISCOVERY_LEARN"])
    if env.get("OCNB_CONFIRM", "").strip():
        values["confirm"] = env["OCNB_CONFIRM"].strip().lower()
    if env.get("OCNB_AGENT_CONFIRM", "").strip():
        values["agent_confirm"] = env["OCNB_AGENT_CONFIRM"].strip().lower()
    if env.get("OCNB_APPROVAL_TIMEOUT", "").strip():
        values["approval_timeout_s"] = env["OCNB_APPROVAL_TIMEOUT"].strip()
    if env.get("OCNB_RISKY_WORDS", "").strip():
        values["risky_words"] = env["OCNB_RISKY_WORDS"]
    if env.get("OCNB_CAPS", "").strip():
        values["caps"] = env["OCNB_CAPS"]
    for name in ("allowed_origins", "blocked_origins"):
        if env.get(f"OCNB_{name.upper()}", "").strip():
            values[name] = env[f"OCNB_{name.upper()}"]
    if env.get("OCNB_MCP_TOKEN", "").strip():
        values["mcp_token"] = env["OCNB_MCP_TOKEN"].strip()
    return values


def _checked(changes: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(Settings)}
    unknown = sorted(set(changes) - names)
    if unknown:
        raise TypeError(f"unknown setting {unknown[0]!r}; settings: {', '.join(sorted(names))}")
    return dict(changes)
