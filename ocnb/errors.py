"""Errors of ocnb: one tree under :class:`OcnbError`, each with a stable ``code``.

::

    OcnbError (code INTERNAL)
    ├── InvalidArgument          INVALID_ARGUMENT    schema errors (all at once, in details["errors"])
    ├── InvalidIntent            INVALID_INTENT      intent "" or longer than 120 characters
    ├── UnknownTool              UNKNOWN_TOOL
    ├── TargetError
    │   ├── StaleRef             STALE_REF           the ref's element is gone (removed, navigated away)
    │   ├── UnknownRef           UNKNOWN_REF         the ref was never issued on this tab
    │   ├── ElementNotFound      ELEMENT_NOT_FOUND   with the nearest candidates
    │   └── AmbiguousTarget      AMBIGUOUS_TARGET    with the candidates
    ├── InvalidValue             INVALID_VALUE       a field did not take the value (details: expected format, holds)
    ├── Timeout                  TIMEOUT
    ├── NavigationFailed         NAVIGATION_FAILED
    ├── TargetClosed             TARGET_CLOSED       page, context or browser closed by a call
    ├── BrowserCrashed           BROWSER_CRASHED     the browser died under a live session (once; the next call relaunches)
    ├── PageCrashed              PAGE_CRASHED        the tab's renderer died; close the tab
    ├── BlockedUrl               BLOCKED_URL
    ├── FileNotAllowed           FILE_NOT_ALLOWED
    ├── MissingSecret            MISSING_SECRET
    ├── SecretNotAllowed         SECRET_NOT_ALLOWED  a secret bound to origins would reach another origin (nothing sent)
    ├── DisallowedTool           DISALLOWED_TOOL
    ├── BudgetExhausted          BUDGET_EXHAUSTED
    ├── NeedsHuman               NEEDS_HUMAN
    ├── ApprovalRequired         APPROVAL_REQUIRED   a risky action needs a person's yes and nobody was asked (details: the request)
    ├── ApprovalDenied           APPROVAL_DENIED     the person (or the approve callable) said no; nothing happened
    ├── ApprovalTimeout          APPROVAL_TIMEOUT    an agent's call waited approval_timeout_s and nobody answered; nothing happened
    ├── Paused                   PAUSED              the person paused the agent: its calls do nothing until resumed
    ├── Disabled                 DISABLED
    ├── BrowserUnavailable       BROWSER_UNAVAILABLE
    ├── CorruptFile              CORRUPT_FILE        a stored file cannot be read (details["file"]); left untouched
    ├── DialogOpen               DIALOG_OPEN         a dialog waits on the tab (dialog_policy "manual"): answer it first
    ├── NotFound                 NOT_FOUND           no such entry (a request id), or no such data on the page (extract)
    ├── Cancelled                CANCELLED           the caller cancelled the call (or went away) before it finished
    ├── SessionClosed            SESSION_CLOSED
    ├── ScriptError              SCRIPT_ERROR        the page's JavaScript threw
    ├── ReplayError                                  skill replay's own codes
    │   ├── ArtifactMissing              ARTIFACT_MISSING
    │   ├── ArtifactResolutionFailed     ARTIFACT_RESOLUTION_FAILED
    │   ├── ContractFailed               CONTRACT_FAILED
    │   ├── StepTimeout                  STEP_TIMEOUT
    │   ├── TargetNavigatedAway          TARGET_NAVIGATED_AWAY
    │   ├── PageMismatch                 PAGE_MISMATCH
    │   └── RiskyStepBlocked             RISKY_STEP_BLOCKED
    └── UnknownOutcome           UNKNOWN_OUTCOME     a batch row (never a tool call): see :mod:`ocnb.batch.row`

    KeyboardInterrupt
    └── Interrupted              (journal: CANCELLED) a person's Ctrl-C or Jupyter ■ stopped the call; the browser lives on

``OcnbError`` itself is ``INTERNAL``. Every code of :data:`ERROR_CODES` has exactly one class here (a
test checks it); :func:`error_class` finds it by code. ``InvalidArgument`` is also a
:class:`ValueError`, so ``except ValueError`` around a public call given a bad value keeps working.

Playwright's exceptions are translated at one seam, :func:`from_playwright`: by type first
(Playwright's ``TimeoutError``, ``TargetClosedError``), then by the few messages Playwright has no type
for (``net::ERR_…``, "Execution context was destroyed", an invalid selector, "Target crashed").
A tool that knows what it was doing when something failed (which field of a form) raises
:class:`InContext` around the failure and leaves the translation to the seam.
"""

from __future__ import annotations

import errno as errno_mod
from typing import Any

__all__ = [
    "ERROR_CODES",
    "AmbiguousTarget",
    "ApprovalDenied",
    "ApprovalRequired",
    "ApprovalTimeout",
    "ArtifactMissing",
    "ArtifactResolutionFailed",
    "BlockedUrl",
    "BrowserCrashed",
    "BrowserUnavailable",
    "BudgetExhausted",
    "Cancelled",
    "ContractFailed",
    "CorruptFile",
    "DialogOpen",
    "Disabled",
    "DisallowedTool",
    "ElementNotFound",
    "FileNotAllowed",
    "InContext",
    "InvalidArgument",
    "Interrupted",
    "InvalidIntent",
    "InvalidValue",
    "MissingSecret",
    "SecretNotAllowed",
    "NavigationFailed",
    "NeedsHuman",
    "NotFound",
    "OcnbError",
    "PageCrashed",
    "PageMismatch",
    "Paused",
    "ReplayError",
    "RiskyStepBlocked",
    "ScriptError",
    "SessionClosed",
    "StaleRef",
    "StepTimeout",
    "TargetClosed",
    "TargetError",
    "TargetNavigatedAway",
    "Timeout",
    "UnknownOutcome",
    "UnknownRef",
    "UnknownTool",
    "error_class",
    "from_playwright",
]

#: Every stable error code with its one-line human message.
ERROR_CODES: dict[str, str] = {
    "INVALID_ARGUMENT": "The arguments do not match the tool's schema.",
    "INVALID_INTENT": "intent must be 1 to 120 characters.",
    "UNKNOWN_TOOL": "No tool of that name is registered.",
    "STALE_REF": "The element behind this ref is gone; read the page again.",
    "UNKNOWN_REF": "This ref was never issued on this tab; take refs from read_page, find or query_dom.",
    "INVALID_VALUE": "The field does not hold the value asked; details say the format it expects and what it holds.",
    "ELEMENT_NOT_FOUND": "No element matches the target.",
    "AMBIGUOUS_TARGET": "More than one element matches the target.",
    "TIMEOUT": "The operation did not finish in time.",
    "NAVIGATION_FAILED": "The page could not be loaded.",
    "TARGET_CLOSED": "The page, context or browser is closed.",
    "BROWSER_CRASHED": "The browser died; its tabs are lost and the next call starts a new one.",
    "PAGE_CRASHED": "The tab's page crashed; close it with tabs_close and open a new one.",
    "BLOCKED_URL": "This URL scheme is not allowed.",
    "FILE_NOT_ALLOWED": "The file is outside the upload root.",
    "MISSING_SECRET": "A ${SECRET:NAME} placeholder names an unknown secret.",
    "SECRET_NOT_ALLOWED": "A secret bound to origins would reach an origin it is not bound to; nothing was sent.",
    "DISALLOWED_TOOL": "The bound task signature does not allow this tool.",
    "BUDGET_EXHAUSTED": "The bound task signature's budget is spent.",
    "NEEDS_HUMAN": "A person has to pick the element.",
    "APPROVAL_REQUIRED": "This action needs a person's approval and nobody could be asked; nothing happened.",
    "APPROVAL_DENIED": "The action was not approved; nothing happened.",
    "APPROVAL_TIMEOUT": "Nobody answered the approval request in time; nothing happened.",
    "PAUSED": "The person paused the agent; nothing was done (the notebook's %oc mcp resume lets it go on).",
    "ARTIFACT_MISSING": "The skill was recorded without replay artifacts.",
    "ARTIFACT_RESOLUTION_FAILED": "No selector in the step's chain resolves.",
    "CONTRACT_FAILED": "An outcome contract failed.",
    "STEP_TIMEOUT": "A replay step did not finish in time.",
    "TARGET_NAVIGATED_AWAY": "The page navigated away mid-call (in replay: outside the expected origin).",
    "PAGE_MISMATCH": "The start page does not match the recorded page.",
    "RISKY_STEP_BLOCKED": "The skill has a risky step and allow_risky is false.",
    "SCRIPT_ERROR": "The JavaScript expression threw an error in the page.",
    "DISABLED": "This feature is switched off by configuration.",
    "BROWSER_UNAVAILABLE": "No Chromium could be found or launched.",
    "CORRUPT_FILE": "A stored file cannot be read; ocnb leaves it untouched until it is fixed or moved.",
    "SESSION_CLOSED": "The session is closed.",
    "DIALOG_OPEN": "A dialog waits on the tab; answer it with dialog_answer or close the tab.",
    "NOT_FOUND": "No such entry: the id is unknown or rolled off its buffer, or the page holds no such data.",
    "CANCELLED": "The call was cancelled before it finished; the browser may have acted in part.",
    "UNKNOWN_OUTCOME": "A batch row's browser was lost after the row began acting on the site; check the site.",
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


class InvalidArgument(OcnbError, ValueError):
    code = "INVALID_ARGUMENT"


class InvalidIntent(OcnbError):
    code = "INVALID_INTENT"


class UnknownTool(OcnbError):
    code = "UNKNOWN_TOOL"


class TargetError(OcnbError):
    """A target (ref or query) could not be turned into exactly one live element."""


class StaleRef(TargetError):
    code = "STALE_REF"


class UnknownRef(TargetError):
    """A well-formed ref that this tab never issued (a typo, another tab's ref, a made-up number)."""

    code = "UNKNOWN_REF"


class ElementNotFound(TargetError):
    code = "ELEMENT_NOT_FOUND"


class AmbiguousTarget(TargetError):
    code = "AMBIGUOUS_TARGET"


class InvalidValue(OcnbError):
    """A fill, type, select or check whose field does not hold what was asked afterwards (a date in the
    wrong format, a number out of range, a value cut by ``maxlength``, an option that does not exist).

    ``details``: ``expected`` (the format the field takes, e.g. ``YYYY-MM-DD``), ``asked`` and ``holds``.
    """

    code = "INVALID_VALUE"


class Timeout(OcnbError):
    code = "TIMEOUT"


class NavigationFailed(OcnbError):
    code = "NAVIGATION_FAILED"


class TargetClosed(OcnbError):
    code = "TARGET_CLOSED"


class BrowserCrashed(TargetClosed):
    """The browser process died (or the connection to a remote one dropped) under a live session.

    Reported once, with what was lost in ``details["lost_tabs"]`` (tab ids and URLs); the next call
    starts a new browser (``oc_connection_health`` with ``relaunch: true`` does it at once).
    """

    code = "BROWSER_CRASHED"


class PageCrashed(TargetClosed):
    """A tab's renderer died (out of memory, a crash). The tab cannot be used again: close it."""

    code = "PAGE_CRASHED"


class BlockedUrl(OcnbError):
    code = "BLOCKED_URL"


class FileNotAllowed(OcnbError):
    code = "FILE_NOT_ALLOWED"


class MissingSecret(OcnbError):
    code = "MISSING_SECRET"


class SecretNotAllowed(OcnbError):
    """A secret bound to origins would reach another origin: nothing was typed or sent."""

    code = "SECRET_NOT_ALLOWED"


class DisallowedTool(OcnbError):
    code = "DISALLOWED_TOOL"


class BudgetExhausted(OcnbError):
    code = "BUDGET_EXHAUSTED"


class NeedsHuman(OcnbError):
    code = "NEEDS_HUMAN"


class ApprovalRequired(OcnbError):
    """A risky (or, with ``confirm="acting"``, any acting) call met nobody to approve it; ``details``
    hold the request (with its ``approval_id``, which the widget or MCP elicitation settles)."""

    code = "APPROVAL_REQUIRED"


class ApprovalDenied(OcnbError):
    """The approver said no; ``details["decided_by"]`` names who (callable, widget, notebook, python, mcp-client …)."""

    code = "APPROVAL_DENIED"


class ApprovalTimeout(OcnbError):
    """An agent's call waited ``approval_timeout_s`` at the approval desk and nobody answered."""

    code = "APPROVAL_TIMEOUT"


class Paused(OcnbError):
    """The person paused the agent (``%oc mcp pause``): an agent's call ends here, nothing done."""

    code = "PAUSED"


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


class DialogOpen(OcnbError):
    """A JavaScript dialog waits on the tab (``dialog_policy="manual"``): the page is frozen until it is
    answered. ``details["pending_dialog"]`` says which; ``dialog_answer`` answers it."""

    code = "DIALOG_OPEN"


class Cancelled(OcnbError):
    """The call was stopped before it finished (the client cancelled or timed out, the server shut down).

    Only the journal sees it: dispatch records the call with this code, then lets the cancellation go on.
    """

    code = "CANCELLED"


class Interrupted(KeyboardInterrupt):  # noqa: N818 - it is an interrupt, not an error of the call
    """A person's interrupt (Ctrl-C, Jupyter's ■) stopped the call in progress; the browser lives on.

    A ``KeyboardInterrupt``, so a loop or a cell stops as it would. The call was cancelled on the
    browser thread and journaled ``CANCELLED``; the next call finds the same page, tabs and values.
    IPython shows it as its one line (``_render_traceback_``), not as a traceback.
    """

    def __init__(self, what: str = "the call", seconds: float = 0.0) -> None:
        self.what, self.seconds = what, seconds
        super().__init__(f"interrupted: {what} cancelled after {seconds:.1f} s")

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


class NotFound(OcnbError):
    """An id (a request's) that names nothing kept: never seen, or rolled off its bounded buffer; or data
    that is not on the page (``extract``: no table, no repeated items)."""

    code = "NOT_FOUND"


_NAV_GONE = ("Execution context was destroyed", "Cannot find context with specified id", "frame was detached")
_BAD_SELECTOR = (
    "is not a valid selector",
    "is not a valid XPath expression",
    "while parsing selector",
    "while parsing css selector",
    "InvalidSelectorError",
)


_PATH_ERRNOS = {
    getattr(errno_mod, name): name
    for name in ("ENAMETOOLONG", "ENOENT", "ENOTDIR", "EISDIR", "EACCES", "EPERM", "ELOOP", "EEXIST")
    if hasattr(errno_mod, name)
}


class ScriptError(OcnbError):
    """The page's JavaScript threw (``javascript_tool``): the message is the page's."""

    code = "SCRIPT_ERROR"


class ReplayError(OcnbError):
    """A skill replay stopped for a reason of its own (its report says which step)."""


class ArtifactMissing(ReplayError):
    code = "ARTIFACT_MISSING"


class ArtifactResolutionFailed(ReplayError):
    code = "ARTIFACT_RESOLUTION_FAILED"


class ContractFailed(ReplayError):
    code = "CONTRACT_FAILED"


class StepTimeout(ReplayError):
    code = "STEP_TIMEOUT"


class TargetNavigatedAway(ReplayError):
    code = "TARGET_NAVIGATED_AWAY"


class PageMismatch(ReplayError):
    code = "PAGE_MISMATCH"


class RiskyStepBlocked(ReplayError):
    code = "RISKY_STEP_BLOCKED"


class UnknownOutcome(OcnbError):
    """A batch row's browser was lost after the row began acting on the site (a row, never a call)."""

    code = "UNKNOWN_OUTCOME"


class InContext(Exception):
    """A failure (Playwright's, or already an :class:`OcnbError`) and what the caller was doing when it
    happened: :func:`from_playwright` (in dispatch) translates ``cause`` as always, then puts ``prefix``
    before its message and ``details`` into its details. A tool raises it instead of translating itself."""

    def __init__(self, cause: BaseException, prefix: str, **details: Any) -> None:
        super().__init__(f"{prefix}: {cause}")
        self.cause = cause
        self.prefix = prefix
        self.details = details


def error_class(code: str) -> type[OcnbError]:
    """The class of ``code`` (``OcnbError`` itself for ``INTERNAL``); ``KeyError`` for an unknown code."""
    if code not in ERROR_CODES:
        raise KeyError(code)
    found = [c for c in _all_classes(OcnbError) if c.__dict__.get("code") == code]
    return found[0] if found else OcnbError


def _all_classes(base: type[OcnbError]) -> list[type[OcnbError]]:
    out = []
    for sub in base.__subclasses__():
        out += [sub, *_all_classes(sub)]
    return out


def from_playwright(exc: BaseException) -> OcnbError:
    """Translate a Playwright (or asyncio, or OS) exception into the matching :class:`OcnbError`.

    The one place that knows Playwright's errors: tools let them propagate (dispatch translates) or
    call this to add context (the URL of a failed navigation).
    """
    import asyncio

    if isinstance(exc, OcnbError):
        return exc
    if isinstance(exc, InContext):
        err = from_playwright(exc.cause)
        err.details = {**err.details, **exc.details}
        err.message = f"{exc.prefix}: {err.message}"
        return err
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    from playwright._impl._errors import TargetClosedError
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    if "Target crashed" in text or "Page crashed" in text:
        return PageCrashed(f"the page crashed ({first}); close the tab with tabs_close and open a new one")
    if isinstance(exc, PlaywrightTimeout | asyncio.TimeoutError | TimeoutError):
        return Timeout(first)
    if isinstance(exc, TargetClosedError):
        return TargetClosed(first)
    if isinstance(exc, ValueError) and "null byte" in text:
        return InvalidArgument("a path or string argument contains a NUL byte (\\x00), which no file name can hold")
    if isinstance(exc, RecursionError):
        return InvalidArgument("the arguments are nested too deeply")
    if isinstance(exc, OSError) and exc.errno in _PATH_ERRNOS:  # a path the caller gave cannot be used
        name = str(exc.filename)[:120] if exc.filename is not None else "the path"
        return InvalidArgument(f"{name}: {exc.strerror}", details={"errno": _PATH_ERRNOS[exc.errno]})
    if "net::ERR_" in text or "NS_ERROR" in text:
        return NavigationFailed(first)
    if any(m in text for m in _NAV_GONE):
        return OcnbError(
            f"the page navigated away while the call was running ({first}); read the page again",
            code="TARGET_NAVIGATED_AWAY",
        )
    if first.endswith("Invalid URL") or ": Invalid URL" in first:  # a URL argument Playwright cannot parse
        return InvalidArgument(f"invalid URL: {first}", details={"reason": first})
    if any(m in text for m in _BAD_SELECTOR):
        return InvalidArgument(f"invalid selector: {first}", details={"reason": first})
    if (
        "Target page, context or browser has been closed" in text
        or "Connection closed" in text
        or "Browser closed" in text
        or "browser has disconnected" in text
    ):
        return TargetClosed(first)
    return OcnbError(f"{type(exc).__name__}: {first}")
