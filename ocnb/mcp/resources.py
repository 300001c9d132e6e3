"""What the MCP face offers as resources: documents under ``OCNB_HOME`` an agent reads by reference.

::

    ocnb://capability-map                    the capability map of the session's tools (Markdown)
    ocnb://journal/{session_id}              a session's journal entries (JSON Lines)
    ocnb://traces/{session_id}               a session's trace events (JSON Lines)
    ocnb://skills/{skill_id}                 a recorded skill (JSON)
    ocnb://screenshots/{session_id}/{name}   a screenshot (PNG)
    ocnb://evidence/{bundle_id}/{name}       a file of an evidence bundle
    ocnb://files/{+path}                     any other file under OCNB_HOME (a PDF, a saved response …)

Only files under ``OCNB_HOME`` are read: a URI whose path leaves it (``..``, a symbolic link pointing
out) is refused before anything is opened. Tools that write such files get a ``resource_link`` per file
in their MCP result (:func:`links_for`).
"""

from __future__ import annotations

import base64
import json
import mimetypes
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..audit.journal import read_journal
from ..audit.trace import read_events
from ..errors import OcnbError
from ..skills.store import SkillStore

__all__ = [
    "SCHEME",
    "ResourceRefused",
    "complete",
    "links_for",
    "list_resources",
    "read_resource",
    "templates",
    "uri_for",
]

SCHEME = "ocnb://"
#: JSON-RPC code for an unknown resource (the spec's "Resource not found").
RESOURCE_NOT_FOUND = -32002
#: At most this many files are linked from one result, or listed per kind.
MAX_LINKS = 20
MAX_LISTED = 50
_TEXT_SUFFIXES = {".json", ".jsonl", ".txt", ".md", ".html", ".htm", ".csv", ".yaml", ".yml", ".py", ".js", ".xml"}
_NAME = r"[A-Za-z0-9._-]+"
_ROUTES = [
    (re.compile(rf"^journal/({_NAME})$"), "journal"),
    (re.compile(rf"^traces/({_NAME})$"), "trace"),
    (re.compile(r"^skills/(.+)$"), "skill"),
    (re.compile(rf"^screenshots/({_NAME})/({_NAME})$"), "screenshots"),
    (re.compile(rf"^evidence/({_NAME})/({_NAME})$"), "evidence"),
    (re.compile(r"^files/(.+)$"), "file"),
]


class ResourceRefused(MCPError):
    """A URI that names nothing ocnb serves, or a path outside ``OCNB_HOME``."""

    def __init__(self, message: str, uri: str) -> None:
        super().__init__(code=RESOURCE_NOT_FOUND, message=message, data={"uri": uri})


def templates() -> list[types.ResourceTemplate]:
    """The resource templates, as ``resources/templates/list`` shows them."""

    def t(uri: str, name: str, description: str, mime: str | None = None) -> types.ResourceTemplate:
        return types.ResourceTemplate(uri_template=uri, name=name, description=description, mime_type=mime)

    return [
        t(
            "ocnb://journal/{session_id}",
            "journal",
            "A session's journal: one JSON line per call.",
            "application/jsonl",
        ),
        t("ocnb://traces/{session_id}", "trace", "A session's trace events, one JSON line each.", "application/jsonl"),
        t("ocnb://skills/{skill_id}", "skill", "A recorded skill (steps and replay artifacts).", "application/json"),
        t("ocnb://screenshots/{session_id}/{name}", "screenshot", "A screenshot a call took.", "image/png"),
        t("ocnb://evidence/{bundle_id}/{name}", "evidence", "A file of an evidence bundle (DOM, screenshot …)."),
        t("ocnb://files/{+path}", "file", "Any file under OCNB_HOME, by its path relative to it."),
    ]


def uri_for(home: Path, path: Path) -> str | None:
    """The URI of a file under ``home`` (the most specific template), or None outside it."""
    try:
        rel = Path(os.path.realpath(path)).relative_to(os.path.realpath(home))
    except ValueError:
        return None
    parts = rel.parts
    if len(parts) == 3 and parts[0] in ("screenshots", "evidence") and all(re.fullmatch(_NAME, p) for p in parts[1:]):
        return f"{SCHEME}{parts[0]}/{parts[1]}/{parts[2]}"
    return SCHEME + "files/" + quote(rel.as_posix(), safe="/")


def _mime(path: Path) -> str:
    if path.suffix == ".jsonl":
        return "application/jsonl"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _link(home: Path, path: Path) -> types.ResourceLink | None:
    uri = uri_for(home, path)
    if uri is None or not path.is_file():
        return None
    return types.ResourceLink(uri=uri, name=path.name, mime_type=_mime(path), size=path.stat().st_size)


def _paths(data: Any, depth: int = 0) -> list[str]:
    """Absolute path strings in a result's data (its values, one level of nesting)."""
    found: list[str] = []
    values = data.values() if isinstance(data, dict) else data if isinstance(data, list) else [data]
    for value in values:
        if isinstance(value, str) and os.path.isabs(value) and len(value) < 4096:
            found.append(value)
        elif isinstance(value, dict | list) and depth < 1:
            found.extend(_paths(value, depth + 1))
    return found


def links_for(home: Path, data: Any) -> list[types.ResourceLink]:
    """A ``resource_link`` for every file under ``home`` a result names (a folder: the files in it)."""
    links: list[types.ResourceLink] = []
    seen: set[str] = set()
    for text in _paths(data):
        try:
            path = Path(text)
            files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        except (OSError, ValueError):
            continue
        for file in files:
            link = _link(home, file)
            if link is not None and link.uri not in seen:
                seen.add(link.uri)
                links.append(link)
            if len(links) >= MAX_LINKS:
                return links
    return links


def list_resources(home: Path, session_id: str, registry: Any) -> list[types.Resource]:
    """The documents worth listing: the capability map, this session's journal and trace, the
    recorded skills, and this session's screenshots and evidence files (the newest first)."""
    del registry  # the map is computed on read
    out = [
        types.Resource(
            uri=f"{SCHEME}capability-map",
            name="capability-map",
            description="The session's tools in one compact page.",
            mime_type="text/markdown",
        ),
        types.Resource(
            uri=f"{SCHEME}journal/{session_id}",
            name=f"journal {session_id}",
            description="This session's journal.",
            mime_type="application/jsonl",
        ),
        types.Resource(
            uri=f"{SCHEME}traces/{session_id}",
            name=f"trace {session_id}",
            description="This session's trace.",
            mime_type="application/jsonl",
        ),
    ]
    try:
        skills = SkillStore(home).recall(limit=MAX_LISTED)
    except OcnbError:
        skills = []
    for skill in skills:
        uri = f"{SCHEME}skills/{quote(str(skill['id']), safe='')}"
        out.append(types.Resource(uri=uri, name=str(skill.get("name") or skill["id"]), mime_type="application/json"))
    files: list[Path] = []
    for folder in (home / "screenshots" / session_id, home / "evidence"):
        if folder.is_dir():
            files.extend(p for p in folder.rglob("*") if p.is_file())
    files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for file in files[:MAX_LISTED]:
        link = _link(home, file)
        if link is not None:
            out.append(types.Resource(uri=link.uri, name=link.name, mime_type=link.mime_type, size=link.size))
    return out


def _folders(folder: Path) -> list[str]:
    """The names of the folders in ``folder``, newest first."""
    if not folder.is_dir():
        return []
    found = sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    return [p.name for p in found]


def complete(home: Path, template: str, argument: str, prefix: str) -> list[str]:
    """Values of a template's argument that start with ``prefix`` (``completion/complete``), at most 100:
    session ids (from the traces), skill ids, evidence bundle ids, and the file names of a screenshot folder."""
    if not template.startswith(SCHEME):
        return []
    if argument == "session_id":
        values = _folders(home / "traces") + _folders(home / "screenshots")
    elif argument == "skill_id":
        try:
            values = [str(s["id"]) for s in SkillStore(home).recall(limit=1000)]
        except OcnbError:
            values = []
    elif argument == "bundle_id":
        values = _folders(home / "evidence")
    else:
        return []
    return list(dict.fromkeys(v for v in values if v.startswith(prefix)))[:100]


def _under_home(home: Path, rel: str, uri: str) -> Path:
    """``home/rel``, refused unless it is (after resolving links) a file inside ``home``."""
    if "\x00" in rel:
        raise ResourceRefused("not a path", uri)
    root = Path(os.path.realpath(home))
    path = Path(os.path.realpath(root / rel))
    if path != root and root not in path.parents:
        raise ResourceRefused("only files under OCNB_HOME are served", uri)
    if not path.is_file():
        raise ResourceRefused("no such file under OCNB_HOME", uri)
    return path


def _text(uri: str, text: str, mime: str) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=text, mime_type=mime)])


def _jsonl(rows: Any) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def read_resource(home: Path, uri: str, capability_map: Any) -> types.ReadResourceResult:
    """The contents behind ``uri`` (text, or base64 for binary files); :class:`ResourceRefused` otherwise.

    ``capability_map`` is a callable giving the capability map's text.
    """
    if not uri.startswith(SCHEME):
        raise ResourceRefused("not an ocnb:// resource", uri)
    rest = uri[len(SCHEME) :]
    if rest == "capability-map":
        return _text(uri, capability_map(), "text/markdown")
    for pattern, kind in _ROUTES:
        m = pattern.match(rest)
        if m is None:
            continue
        if kind == "journal":
            return _text(uri, _jsonl(read_journal(home, session_id=m.group(1))), "application/jsonl")
        if kind == "trace":
            try:
                return _text(uri, _jsonl(read_events(home, m.group(1))), "application/jsonl")
            except ValueError:
                raise ResourceRefused("not a session id", uri) from None
        if kind == "skill":
            try:
                skill = SkillStore(home).get(unquote(m.group(1)))
            except OcnbError as exc:
                raise ResourceRefused(exc.message, uri) from None
            return _text(uri, json.dumps(skill, ensure_ascii=False, indent=1), "application/json")
        rel = "/".join(m.groups()) if kind != "file" else unquote(m.group(1))
        if kind != "file":
            rel = f"{kind}/{rel}"
        path = _under_home(home, rel, uri)
        mime = _mime(path)
        raw = path.read_bytes()
        if path.suffix.lower() in _TEXT_SUFFIXES:
            try:
                return _text(uri, raw.decode("utf-8"), mime)
            except UnicodeDecodeError:
                pass
        blob = base64.b64encode(raw).decode("ascii")
        return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, blob=blob, mime_type=mime)])
    raise ResourceRefused("no such ocnb resource", uri)
