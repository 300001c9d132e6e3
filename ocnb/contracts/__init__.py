"""Deterministic checks: outcome assertions and contracts, evidence bundles, task signatures.

Everything here decides without an LLM: an assertion passes or fails on the page, a signature's
evaluator turns a list of calls and assertion outcomes into a status.
"""

from .assertions import (
    ASSERTION_KINDS,
    ASSERTION_SCHEMA,
    AssertionOutcome,
    PageObservations,
    describe_assertion,
    evaluate,
    evaluate_until,
    match_pattern,
    validate_assertion,
)
from .evaluator import (
    CONTROL_TOOLS,
    OBSERVATION_TOOLS,
    CallInfo,
    Evaluation,
    PageState,
    Refusal,
    evaluate_signature,
    evaluate_signature_on_page,
    guard_call,
    guard_status,
    is_progress,
    observe_page_state,
    preflight,
)
from .evidence import create_bundle, read_bundle
from .signatures import (
    SIGNATURE_SCHEMA,
    BrowserTaskSignature,
    SignatureStore,
    check_inputs,
    load_signature,
    parse_signature,
    redact_inputs,
    require_inputs,
    secret_input_masks,
    secret_values,
    validate_signature,
)
from .store import CONTRACT_SCHEMA, Contract, ContractStore, RecordNotFound
from .validation import ValidationError

__all__ = [
    "ASSERTION_KINDS",
    "ASSERTION_SCHEMA",
    "CONTRACT_SCHEMA",
    "CONTROL_TOOLS",
    "OBSERVATION_TOOLS",
    "SIGNATURE_SCHEMA",
    "AssertionOutcome",
    "BrowserTaskSignature",
    "CallInfo",
    "Contract",
    "ContractStore",
    "Evaluation",
    "PageObservations",
    "PageState",
    "RecordNotFound",
    "Refusal",
    "SignatureStore",
    "ValidationError",
    "check_inputs",
    "create_bundle",
    "describe_assertion",
    "evaluate",
    "evaluate_signature",
    "evaluate_until",
    "evaluate_signature_on_page",
    "guard_call",
    "guard_status",
    "is_progress",
    "load_signature",
    "match_pattern",
    "observe_page_state",
    "parse_signature",
    "preflight",
    "read_bundle",
    "redact_inputs",
    "require_inputs",
    "secret_input_masks",
    "secret_values",
    "validate_assertion",
    "validate_signature",
]
