"""Outcome contracts: oc_contract_define and oc_assert.

The library under these tools is :mod:`ocnb.contracts`; the handlers only parse arguments, reach the
tab (its page and the observations the browser layer keeps for it) and shape the result.
"""

from __future__ import annotations

import time
from typing import Any

from ..contracts.assertions import (
    ASSERTION_KINDS,
    PageObservations,
    describe_assertion,
    evaluate_until,
    validate_assertion,
)
from ..contracts.evidence import create_bundle
from ..contracts.store import ContractStore
from ..contracts.validation import raise_if_invalid
from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..registry import tool

__all__ = ["oc_assert", "oc_contract_define"]

_ASSERTION_ARG = {
    "type": "object",
    "description": "Assertion {kind, ...}; kinds: " + ", ".join(ASSERTION_KINDS) + ".",
}
_ID_ARG = {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}$"}


@tool(
    name="oc_contract_define",
    examples=(
        "save a rule for what a successful login looks like",
        "define what done means for this checkout",
        "remember the expected outcome so I can check it later",
    ),
    category="contracts",
    side_effects=True,
    uses_page=False,
    description="Store a named outcome contract. "
    "The contract is an assertion; it replaces any earlier one with that contract_id. Every structural error of the assertion is reported at once, with its JSON path.",
    properties={"contract_id": _ID_ARG, "assertion": _ASSERTION_ARG, "description": {"type": "string"}},
    required=["contract_id", "assertion"],
)
async def oc_contract_define(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    # Stored as the caller gave it: ${SECRET:…} placeholders, substituted again by oc_assert.
    args = {**args, **{k: v for k, v in ctx.call.args.items() if k in ("assertion", "description")}}
    store = ContractStore(ctx.home)
    contract = store.define(args["contract_id"], args["assertion"], description=args.get("description"))
    return {
        "contract_id": contract.id,
        "summary": describe_assertion(contract.assertion),
        "path": str(store.records.path(contract.id)),
    }


@tool(
    name="oc_assert",
    page_text=("*", "error.details"),
    examples=(
        "check that the page now says order confirmed",
        "verify the checkout really succeeded",
        "make sure the title is right before going on",
    ),
    category="contracts",
    description="Check a contract or assertion. "
    "It reads the tab, polling up to timeout_ms. Returns verdict pass|fail, each failed check with expected and actual, and on fail an evidence "
    "bundle. Dialogs and network responses count since the current page loaded, or within since_ms.",
    properties={
        "contract_id": _ID_ARG,
        "assertion": _ASSERTION_ARG,
        "since_ms": {"type": "integer", "minimum": 0},
        "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 120000, "default": 0},
        "evidence": {"type": "boolean", "default": True, "description": "Write an evidence bundle on fail."},
    },
)
async def oc_assert(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    has_id, has_inline = "contract_id" in args, "assertion" in args
    if has_id == has_inline:
        raise InvalidArgument(
            "give exactly one of contract_id or assertion",
            details={"errors": [{"path": "$", "message": "exactly one of contract_id, assertion is required"}]},
        )
    if has_id:
        assertion = ContractStore(ctx.home).get(args["contract_id"]).assertion
        assertion = ctx.session.secrets.substitute(assertion)  # a stored contract holds placeholders, never values
    else:
        assertion = args["assertion"]
        raise_if_invalid(validate_assertion(assertion, "$.assertion"), "assertion")
    page = await ctx.page(args.get("tab_id"))
    tab = ctx.browser.tab_of(page)
    since_ms = args.get("since_ms")
    started = time.time()

    def observe() -> PageObservations:
        if tab is None:
            return PageObservations()
        # a fixed window, or since the document that was current when the check began
        return PageObservations.from_tab(
            tab, since_ms + int((time.time() - started) * 1000) if since_ms is not None else None
        )

    outcome = await evaluate_until(assertion, page, observe, timeout_ms=args.get("timeout_ms", 0))
    obs = observe()
    result: dict[str, Any] = {
        "verdict": "pass" if outcome.passed else "fail",
        "summary": describe_assertion(assertion),
        "failures": outcome.failures,
        "evidence": None,
    }
    if has_id:
        result["contract_id"] = args["contract_id"]
    if not outcome.passed and args.get("evidence", True):
        what = f"contract {args['contract_id']!r}" if has_id else "inline assertion"
        folder = await create_bundle(
            page,
            obs,
            home=ctx.home,
            reason=f"{what} failed",
            secrets=ctx.session.secrets,
            extra={"assertion": assertion, "failures": outcome.failures},
        )
        result["evidence"] = {"bundle_id": folder.name, "path": str(folder)}
    return result
