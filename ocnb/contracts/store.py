"""Id-keyed JSON files under ``OCNB_HOME``: outcome contracts here, task signatures reuse the same store.

One record per file (``<folder>/<id>.json``), written atomically under an inter-process lock with
stable bytes (sorted keys, 2-space indent, trailing newline) so that a person can diff and commit
them. A file that does not parse, is not an object, or carries a version this ocnb does not know is
reported with :class:`~ocnb.files.CorruptFile` and never overwritten.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocnb.errors import InvalidArgument
from ocnb.files import CorruptFile, atomic_write_text, file_lock, ocnb_home, read_json

from .assertions import ASSERTION_DEFS, assertion_checks, validate_assertion
from .validation import (
    ValidationError,
    dumps_canonical,
    raise_if_invalid,
    schema_errors,
    schema_validator,
    sort_errors,
)

__all__ = [
    "CONTRACT_SCHEMA",
    "CONTRACT_SCHEMA_VERSION",
    "ID_RE",
    "Contract",
    "ContractStore",
    "RecordNotFound",
    "RecordStore",
    "check_id",
]

#: Ids of contracts and signatures: 1-64 of letters, digits, ``_``, ``.``, ``-``.
ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
CONTRACT_SCHEMA_VERSION = 1


class RecordNotFound(InvalidArgument):
    """No stored record has that id (``INVALID_ARGUMENT``: the caller named something that is not there)."""


def check_id(value: Any, what: str = "id") -> str:
    """Return ``value`` if it is a valid id, else raise ``INVALID_ARGUMENT`` saying what ids look like."""
    if not isinstance(value, str) or not ID_RE.fullmatch(value):
        raise InvalidArgument(
            f"invalid {what} {value!r}: use 1-64 characters from A-Z a-z 0-9 _ . -",
            details={"errors": [{"path": "$", "message": "id must match [A-Za-z0-9_.-]{1,64}"}]},
        )
    return value


class RecordStore:
    """JSON records by id in one folder; ``version_key`` must equal ``version`` in every file."""

    def __init__(self, folder: str | os.PathLike[str], *, kind: str, version_key: str, version: int) -> None:
        self.folder = Path(folder)
        self.kind = kind
        self.version_key = version_key
        self.version = version

    def path(self, record_id: str) -> Path:
        """Where the record with this id lives (the id is checked first)."""
        return self.folder / f"{check_id(record_id, f'{self.kind} id')}.json"

    def read(self, record_id: str) -> dict[str, Any] | None:
        """The stored record, or ``None`` when there is none; ``CorruptFile`` when unreadable."""
        path = self.path(record_id)
        data = read_json(path)
        if data is None and not path.exists():
            return None
        if not isinstance(data, dict):
            raise CorruptFile(
                f"{path} does not hold a JSON object; fix or move it — ocnb will not overwrite it", file=path
            )
        found = data.get(self.version_key)
        if found != self.version:
            raise CorruptFile(
                f"{path} has {self.version_key} {found!r}, this ocnb reads {self.version}; "
                "fix or move it — ocnb will not overwrite it",
                file=path,
            )
        return data

    def get(self, record_id: str) -> dict[str, Any]:
        """The stored record; ``RecordNotFound`` when there is none."""
        data = self.read(record_id)
        if data is None:
            raise RecordNotFound(f"no {self.kind} with id {record_id!r} in {self.folder}", details={"id": record_id})
        return data

    def write(self, record_id: str, text: str) -> Path:
        """Replace the record's file with ``text`` atomically, under the lock.

        The existing file is read first: if it is corrupt, ``CorruptFile`` is raised and it stays.
        """
        path = self.path(record_id)
        with file_lock(path):
            self.read(record_id)
            atomic_write_text(path, text, locked=True)  # under the lock: leftovers of killed writers go
        return path

    def ids(self) -> list[str]:
        """Every stored id, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json") if ID_RE.fullmatch(p.stem) and p.is_file())

    def delete(self, record_id: str) -> bool:
        """Remove the record; ``False`` when there was none."""
        path = self.path(record_id)
        with file_lock(path):
            try:
                path.unlink()
            except FileNotFoundError:
                return False
        return True


@dataclass(frozen=True)
class Contract:
    """A named outcome contract: an assertion stored under an id."""

    id: str
    assertion: dict[str, Any]
    description: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The file form: ``schema_version``, ``id``, ``assertion`` and ``description`` when set."""
        out: dict[str, Any] = {"schema_version": CONTRACT_SCHEMA_VERSION, "id": self.id, "assertion": self.assertion}
        if self.description:
            out["description"] = self.description
        return out


#: The JSON Schema (Draft 2020-12) of a contract file (its ``schema_version`` is checked on reading).
CONTRACT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "contract",
    "type": "object",
    "properties": {
        "schema_version": True,
        "id": True,
        "assertion": {"$ref": "#/$defs/assertion"},
        "description": {"type": "string"},
    },
    "required": ["assertion"],
    "additionalProperties": False,
    "$defs": ASSERTION_DEFS,
}


@functools.cache
def _validator() -> Any:
    return schema_validator(CONTRACT_SCHEMA)


def _contract_errors(data: Mapping[str, Any]) -> list[ValidationError]:
    errors: list[ValidationError] = []
    if "assertion" in data:
        data = {**data, "assertion": assertion_checks(data["assertion"], "$.assertion", 0, errors)}
    return sort_errors(schema_errors(_validator(), data) + errors)


class ContractStore:
    """Outcome contracts under ``OCNB_HOME/contracts/<id>.json`` (``schema_version: 1``)."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.records = RecordStore(
            ocnb_home(home) / "contracts",
            kind="contract",
            version_key="schema_version",
            version=CONTRACT_SCHEMA_VERSION,
        )

    def define(self, contract_id: str, assertion: Mapping[str, Any], *, description: str | None = None) -> Contract:
        """Store (or replace) a contract; ``INVALID_ARGUMENT`` with every error if the assertion is invalid."""
        check_id(contract_id, "contract id")
        errors = validate_assertion(assertion, "$.assertion")
        raise_if_invalid(errors, f"assertion for contract {contract_id!r}")
        contract = Contract(contract_id, dict(assertion), description or None)
        self.records.write(contract_id, dumps_canonical(contract.to_dict()))
        return contract

    def get(self, contract_id: str) -> Contract:
        """The stored contract; ``RecordNotFound`` / ``CorruptFile`` / ``INVALID_ARGUMENT`` (hand-edited, invalid)."""
        data = self.records.get(contract_id)
        raise_if_invalid(_contract_errors(data), f"contract file {self.records.path(contract_id)}")
        return Contract(contract_id, data["assertion"], data.get("description"))

    def ids(self) -> list[str]:
        """Ids of every stored contract, sorted."""
        return self.records.ids()

    def delete(self, contract_id: str) -> bool:
        """Remove a contract; ``False`` when there was none."""
        return self.records.delete(contract_id)
