"""What a pack author writes: a :class:`Pack` declaration, a handler, typed results."""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

from control_plane._kernel.reach import Grant, Grants, PackReach, Reach, Reaches

__all__ = [
    "Check",
    "CodeDoc",
    "Context",
    "Handler",
    "Pack",
    "Reach",
    "Result",
    "Severity",
    "error_schema",
    "reset_traceparent",
    "schema_of",
    "set_traceparent",
]

Severity: TypeAlias = Literal["pass", "warn", "fail"]
SchemaLike: TypeAlias = Mapping[str, Any] | type[BaseModel]


@dataclass(frozen=True, slots=True)
class CodeDoc:
    """Documentation for one pack-specific code.

    ``absorbs`` names baseline codes this code stands in for when the pack does not
    declare them itself (e.g. ``download_failed`` absorbing ``network_error``).
    """

    description: str
    retryable: bool = False
    recovery_hint: str = ""
    absorbs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "retryable": self.retryable,
            "recovery_hint": self.recovery_hint,
            "absorbs": list(self.absorbs),
        }


@dataclass(frozen=True, slots=True)
class Check:
    """One validation finding. ``severity`` is ``pass``, ``warn`` or ``fail``."""

    id: str
    severity: Severity
    message: str
    expected: Any = None
    actual: Any = None
    location: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "severity": self.severity, "message": self.message}
        if self.expected is not None:
            out["expected"] = self.expected
        if self.actual is not None:
            out["actual"] = self.actual
        if self.location is not None:
            out["location"] = self.location
        return out


@dataclass(frozen=True, slots=True)
class Result:
    """A handler's successful output plus optional validation findings."""

    output: Mapping[str, Any]
    checks: Sequence[Check] = ()


#: The W3C ``traceparent`` of the call being served (set by the tracing layer around the
#: invocation, read when the handler's :class:`Context` is made).
_TRACEPARENT: ContextVar[str | None] = ContextVar("capability_packs_traceparent", default=None)


def set_traceparent(value: str | None) -> Token[str | None]:
    """Make ``value`` the running call's ``traceparent``; pass the token to
    :func:`reset_traceparent`."""
    return _TRACEPARENT.set(value)


def reset_traceparent(token: Token[str | None]) -> None:
    """Undo :func:`set_traceparent`."""
    _TRACEPARENT.reset(token)


class Context:
    """Per-call facts a handler may use: deadline, request id, cancellation, the W3C
    ``traceparent`` to continue the caller's trace downstream, and what the pack may reach.

    ``reaches``: the runtime's grant table (the invoker hands in its own); without one (a
    handler called directly, outside any runtime) the pack reaches nothing: no path, no
    destination, no program, no credentials (a test hands in ``Reaches(grants, declared)``
    for more)."""

    __slots__ = ("_cancelled", "_deadline", "_pack", "_reaches", "_request_id", "traceparent")

    def __init__(
        self,
        pack: str,
        request_id: str,
        deadline: float | None,
        reaches: Reaches | None = None,
    ) -> None:
        self._pack = pack
        self._reaches = reaches
        self._request_id = request_id
        #: W3C ``traceparent`` of the control plane's span for this call (a child of the
        #: caller's trace) when tracing is on (``packctl serve --otel-endpoint``), else
        #: ``None``. Send it as the ``traceparent`` header of downstream requests.
        self.traceparent: str | None = _TRACEPARENT.get()
        self._deadline = deadline
        # A plain flag, not a threading.Event (3 us per call): nothing waits on it, and a
        # bool assignment is seen at once by the handler's thread.
        self._cancelled = False

    @property
    def pack(self) -> str:
        """The name of the pack called."""
        return self._pack

    @property
    def request_id(self) -> str:
        """The call's request id (the caller's, or one the control plane made). Read-only:
        the control plane records the failure of the call under it."""
        return self._request_id

    @property
    def deadline(self) -> float | None:
        """``time.monotonic()`` value after which the call is late, or ``None``."""
        return self._deadline

    def remaining(self, default: float = 60.0) -> float:
        """Seconds left before the deadline (``default`` when the call has none)."""
        if self.deadline is None:
            return default
        return max(0.0, self.deadline - time.monotonic())

    @property
    def cancelled(self) -> bool:
        """True once the control plane gave up on this call (deadline passed, or the
        caller cancelled it)."""
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True

    @property
    def reach(self) -> PackReach:
        """What this pack may reach on this server, and the means to reach it: resolve a
        path to read (``readable``, ``open_read``), make a destination, run a program
        (``run``). Built once per pack by the runtime; nothing is looked up until a handler
        asks."""
        if self._reaches is None:  # no runtime's table: nothing, never unconfined
            self._reaches = Reaches(Grants(default=Grant.nothing()))
        return self._reaches.reach_for(self._pack)


Handler: TypeAlias = Callable[
    [dict[str, Any], Context],
    Mapping[str, Any] | Result | Awaitable[Mapping[str, Any] | Result],
]


def schema_of(schema: SchemaLike) -> dict[str, Any]:
    """A JSON Schema dict from a dict or a pydantic model class."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return dict(schema)


@dataclass(frozen=True)
class Pack:
    """A capability pack declaration.

    ``codes`` is the one declaration of the pack's codes, in order: a pack-specific code
    maps to its :class:`CodeDoc`, a baseline code to ``None`` (documented by the
    vocabulary) or to a :class:`CodeDoc` in the pack's own words. The closed ``enum`` at
    ``output_schema``'s ``properties.error.properties.code`` is derived from it
    (:func:`error_schema`, or added by the registry when the output schema has no
    ``error``). A pack written the old way (the enum in the schema, ``codes`` documenting
    only its own codes) loads as before. ``validates`` (default: whether the
    output schema has a ``validation`` property) adds ``artifact_failed`` to the effective
    vocabulary.
    """

    name: str
    version: str
    summary: str
    input_schema: SchemaLike
    output_schema: SchemaLike
    handler: Handler
    codes: Mapping[str, CodeDoc | str | None] = field(default_factory=dict)
    validates: bool | None = None
    #: Free-form documentation shown by ``describe`` (Markdown).
    docs: str = ""
    #: Run the handler in worker processes (:mod:`control_plane._features.isolation.isolation`), as
    #: ``packctl serve --isolate NAME`` does; the handler must be importable there.
    isolated: bool = False
    #: Scrub the successful ``result`` of secrets too (every string in it, keys included).
    #: Off by default: a result is the pack's own data and travels as the pack returned
    #: it. Turn it on for packs that echo downstream text (a fetched body, a tool's output).
    scrub_output: bool = False
    #: What the pack reaches outside itself (:class:`~control_plane._kernel.reach.Reach`):
    #: filesystem roots, egress, programs, ambient credentials. The operator grants or
    #: narrows it per pack (docs/grants.md). ``None`` (a pack written before reach
    #: existed): unconfined unless the operator grants it something.
    reach: Reach | None = None

    @functools.cached_property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function (looked up once, then cached)."""
        return inspect.iscoroutinefunction(self.handler)

    def code_docs(self) -> dict[str, CodeDoc]:
        """``codes`` with bare strings promoted to :class:`CodeDoc` (``None``: left out)."""
        return {
            code: doc if isinstance(doc, CodeDoc) else CodeDoc(description=str(doc))
            for code, doc in self.codes.items()
            if doc is not None
        }


def error_schema(codes: Iterable[str], **properties: Any) -> dict[str, Any]:
    """The output schema's ``error`` object: ``code`` closed to ``codes`` (the keys of a
    pack's ``codes`` table, in order), ``message``, and any further ``properties``."""
    return {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {"enum": list(codes)},
            "message": {"type": "string"},
            **properties,
        },
    }
