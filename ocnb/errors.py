"""Errors of ocnb: one tree under :class:`OcnbError`, each with a stable ``code``.

::

    OcnbError (code INTERNAL)
    ├── InvalidArgument          INVALID_ARGUMENT    schema errors (all at once, in details["errors"])
    ├── InvalidIntent            INVALID_INTENT      intent "" or longer than 120 characters
    ├── UnknownTool              UNKNOWN_TOOL
    ├── TargetError
    │   ├── StaleRef             STALE_REF           the ref's element is gone (removed, navigated away)
    │   ├── ElementNotFound      ELEMENT_NOT_FOUND   with the nearest candidates
    │   └── AmbiguousTarget      AMBIGUOUS_TARGET    with the candidates
    ├── Timeout                  TIMEOUT
    ├── NavigationFailed         NAVIGATION_FAILED
    ├── TargetClosed             TARGET_CLOSED       page, context or browser closed / connection dropped
    ├── BlockedUrl               BLOCKED_URL
    ├── FileNotAllowed           FILE_NOT_ALLOWED
    ├── MissingSecret            MISSING_SECRET
    ├── DisallowedTool           DISALLOWED_TOOL
    ├── BudgetExhausted          BUDGET_EXHAUSTED
    ├── NeedsHuman               NEEDS_HUMAN
    ├── Disabled                 DISABLED
    ├── BrowserUnavailable       BROWSER_UNAVAILABLE
    ├── CorruptFile              CORRUPT_FILE        a stored file cannot be read (details["file"]); left untouched
    └── SessionClosed            SESSION_CLOSED

Skill replay adds its own codes (``ARTIFACT_MISSING``, ``ARTIFACT_RESOLUTION_FAILED``,
``CONTRACT_FAILED``, ``STEP_TIMEOUT``, ``TARGET_NAVIGATED_AWAY``, ``PAGE_MISMATCH``,
``RISKY_STEP_BLOCKED``); raise ``OcnbError(msg, code=...)`` for those.

Playwright's exceptions are translated at one seam, :func:`from_playwright`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ERROR_CODES",
    "AmbiguousTarget",
    "BlockedUrl",
    "BrowserUnavailable",
    "BudgetExhausted",
    "CorruptFile",
    "Disabled",
    "DisallowedTool",
    "ElementNotFound",
    "FileNotAllowed",
    "InvalidArgument",
    "InvalidIntent",
    "MissingSecret",
    "NavigationFailed",
    "NeedsHuman",
    "OcnbError",
    "SessionClosed",
    "StaleRef",
    "TargetClosed",
    "TargetError",
    "Timeout",
    "UnknownTool",
    "from_playwright",
]

#: Every stable error code with its one-line human message.
ERROR_CODES: dict[str, str] = {
    "INVALID_ARGUMENT": "The arguments do not match the tool's schema.",
    "INVALID_INTENT": "intent must be 1 to 120 characters.",
    "UNKNOWN_TOOL": "No tool of that name is registered.",
    "STALE_REF": "The element behind this ref is gone; read the page again.",
    "ELEMENT_NOT_FOUND": "No element matches the target.",
    "AMBIGUOUS_TARGET": "More than one element matches the target.",
    "TIMEOUT": "The operation did not finish in time.",
    "NAVIGATION_FAILED": "The page could not be loaded.",
    "TARGET_CLOSED": "The page, context or browser is closed.",
    "BLOCKED_URL": "This URL scheme is not allowed.",
    "FILE_NOT_ALLOWED": "The file is outside the upload root.",
    "MISSING_SECRET": "A ${SECRET:NAME} placeholder names an unknown secret.",
    "DISALLOWED_TOOL": "The bound task signature does not allow this tool.",
    "BUDGET_EXHAUSTED": "The bound task signature's budget is spent.",
    "NEEDS_HUMAN": "A person has to pick the element.",
    "ARTIFACT_MISSING": "The skill was recorded without replay artifacts.",
    "ARTIFACT_RESOLUTION_FAILED": "No selector in the step's chain resolves.",
    "CONTRACT_FAILED": "An outcome contract failed.",
    "STEP_TIMEOUT": "A replay step did not finish in time.",
    "TARGET_NAVIGATED_AWAY": "The page left the expected origin during replay.",
    "PAGE_MISMATCH": "The start page does not match the recorded page.",
    "RISKY_STEP_BLOCKED": "The skill has a risky step and allow_risky is false.",
    "SCRIPT_ERROR": "The JavaScript expression threw an error in the page.",
    "DISABLED": "This feature is switched off by configuration.",
    "BROWSER_UNAVAILABLE": "No Chromium could be found or launched.",
    "CORRUPT_FILE": "A stored file cannot be read; ocnb leaves it untouched until it is fixed or moved.",
    "SESSION_CLOSED": "The session is closed.",
    "INTERNAL": "An unexpected internal error.",
}


class OcnbError(Exception):
    """Base of every ocnb error: a stable ``code``, a message and JSON-able ``details``."""

    code = "INTERNAL"

    def __init__(
        self, message: str = "", *, code: str | None = None, details: dict[str, Any] | None = None, data: Any = None
    ):
        if code is not None:
            self.code = code
        self.message = message or ERROR_CODES.get(self.code, self.code)
        self.details: dict[str, Any] = details or {}
        #: What the failed call still returns as its result's ``data`` (e.g. a replay report), or None.
        self.data = data
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvalidArgument(OcnbError):
    code = "INVALID_ARGUMENT"


class InvalidIntent(OcnbError):
    code = "INVALID_INTENT"


class UnknownTool(OcnbError):
    code = "UNKNOWN_TOOL"


class TargetError(OcnbError):
    """A target (ref or query) could not be turned into exactly one live element."""


class StaleRef(TargetError):
    code = "STALE_REF"


class ElementNotFound(TargetError):
    code = "ELEMENT_NOT_FOUND"


class AmbiguousTarget(TargetError):
    code = "AMBIGUOUS_TARGET"


class Timeout(OcnbError):
    code = "TIMEOUT"


class NavigationFailed(OcnbError):
    code = "NAVIGATION_FAILED"


class TargetClosed(OcnbError):
    code = "TARGET_CLOSED"


class BlockedUrl(OcnbError):
    code = "BLOCKED_URL"


class FileNotAllowed(OcnbError):
    code = "FILE_NOT_ALLOWED"


class MissingSecret(OcnbError):
    code = "MISSING_SECRET"


class DisallowedTool(OcnbError):
    code = "DISALLOWED_TOOL"


class BudgetExhausted(OcnbError):
    code = "BUDGET_EXHAUSTED"


class NeedsHuman(OcnbError):
    code = "NEEDS_HUMAN"


class Disabled(OcnbError):
    code = "DISABLED"


class BrowserUnavailable(OcnbError):
    code = "BROWSER_UNAVAILABLE"


class CorruptFile(OcnbError):
    """A stored file exists but cannot be read (not JSON, wrong shape, unknown schema_version).

    ``details["file"]`` names it. The file is never overwritten; other files are not affected.
    """

    code = "CORRUPT_FILE"

    def __init__(self, message: str = "", *, file: Any = None, details: dict[str, Any] | None = None):
        details = dict(details or {})
        if file is not None:
            details.setdefault("file", str(file))
        super().__init__(message, details=details)


class SessionClosed(OcnbError):
    code = "SESSION_CLOSED"


def from_playwright(exc: BaseException) -> OcnbError:
    """Translate a Playwright (or asyncio) exception into the matching :class:`OcnbError`."""
    import asyncio

    if isinstance(exc, OcnbError):
        return exc
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    name = type(exc).__name__
    if isinstance(exc, asyncio.TimeoutError) or name == "TimeoutError":
        return Timeout(first)
    if (
        name == "TargetClosedError"
        or "Target page, context or browser has been closed" in text
        or ("has been closed" in text)
    ):
        return TargetClosed(first)
    if "net::ERR_" in text or "NS_ERROR" in text:
        return NavigationFailed(first)
    if "Connection closed" in text or "Browser closed" in text or "browser has disconnected" in text:
        return TargetClosed(first)
    return OcnbError(f"{name}: {first}")
