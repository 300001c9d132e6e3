"""The audit trail: journal, trace, secrets and argument sanitizing (DESIGN §4, §7).

Plain modules, testable without a browser; :mod:`ocnb.audit.hooks` plugs them into dispatch.
"""

from ocnb.audit.journal import Journal
from ocnb.audit.sanitize import sanitize_args
from ocnb.audit.secrets import SecretStore
from ocnb.audit.trace import TraceEvent, TraceWriter

__all__ = ["Journal", "SecretStore", "TraceEvent", "TraceWriter", "sanitize_args"]
