"""The exception tree of spreadwatch.

Every error a user can cause is a :class:`SpreadwatchError`; the CLI prints its message as one line on
stderr and exits with code 2. Anything else is a bug.

    SpreadwatchError                 base class; ``str(err)`` is the one line shown to the user
    ├── InputError                   unusable input (exit code 2)
    │   ├── SnapshotError            a file or directory cannot be read or parsed (missing, unreadable, bad YAML/JSON,
    │   │                            nothing spreadwatch reads in it, absurd nesting or alias expansion)
    │   ├── DecodeError              bytes that are not well-formed JSON for the typed decoder (not UTF-8, malformed,
    │   │                            nested deeper than the decoders' limit, a number out of range); what
    │   │                            ``spreadwatch.decode``'s entry points raise for any bytes, besides ObjectError
    │   ├── ObjectError              one Kubernetes object is malformed (wrong kind, wrongly typed field)
    │   ├── ProfileError             unknown scoring profile name
    │   ├── WorkloadNotFoundError    ``explain`` was asked about a workload that is not in the snapshot
    │   ├── SelectorError            a label selector is invalid (bad operator, key or value); from a CLI flag it
    │   │                            is input like the others, but a *workload* with an invalid selector only
    │   │                            turns that workload's report into health ``Error``
    │   └── ConstraintError          a topologySpreadConstraints entry the API server would refuse (maxSkew < 1, an
    │                                unknown whenUnsatisfiable or node inclusion policy, minDomains < 1 or with
    │                                ScheduleAnyway); like SelectorError it turns only that workload into ``Error``
    └── KubeApiError                 the Kubernetes API could not be reached or refused a request (after the
                                     retries); ``status`` is the HTTP status (None: no answer), ``reason`` the
                                     API's reason (``NotFound``, ``AlreadyExists``, ...)
"""

from __future__ import annotations

__all__ = [
    "ConstraintError",
    "DecodeError",
    "InputError",
    "KubeApiError",
    "ObjectError",
    "ProfileError",
    "SelectorError",
    "SnapshotError",
    "SpreadwatchError",
    "WorkloadNotFoundError",
]


class SpreadwatchError(Exception):
    """Base class of every error spreadwatch raises on purpose."""


class InputError(SpreadwatchError):
    """Input that spreadwatch cannot use; the CLI exits with code 2."""


class SnapshotError(InputError):
    """A snapshot file or directory cannot be read or parsed."""


class DecodeError(InputError):
    """Bytes the JSON decoders refuse: the message says why (msgspec's or orjson's words, with the byte offset
    where they give one). Callers that know the file name wrap it in a SnapshotError."""


class ObjectError(InputError):
    """A Kubernetes object is malformed: wrong kind, or a field of the wrong type.

    The message names the object (``Kind namespace/name``) and the field path.
    """

    def __init__(self, ref: str, path: str, problem: str) -> None:
        self.ref = ref
        self.path = path
        self.problem = problem
        where = f"{ref}: {path}: " if path else f"{ref}: "
        super().__init__(where + problem)


class ProfileError(InputError):
    """The requested scoring profile does not exist."""


class WorkloadNotFoundError(InputError):
    """The workload named on the command line is not in the snapshot."""


class SelectorError(InputError):
    """A label selector (structured or string form) is invalid."""


class ConstraintError(InputError):
    """A topology spread constraint the API server's validation would refuse (the message names it)."""


class KubeApiError(SpreadwatchError):
    """The API could not be reached or refused a request (after retries); one line for the user."""

    def __init__(self, message: str, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
