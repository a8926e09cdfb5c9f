"""A handler's failure across the isolation boundary: JSON data out, type-checked stand-ins back."""

from __future__ import annotations

import errno
import functools
import itertools
from typing import Any

import orjson

from control_plane._features.libraries.grpc import mark_status
from control_plane._kernel.bounds import MAX_TEXT, json_safe, safe_text
from control_plane._kernel.classifiers._frames import mark_origin
from control_plane._kernel.classify import (
    Classification,
    ClassifiedError,
    Classifier,
    classify,
    iter_chain,
)
from control_plane._kernel.errors import FieldViolation
from control_plane._kernel.incidents import format_exception
from control_plane._kernel.vocabulary import NOT_PERMITTED

#: Exceptions of a chain that travel (outermost first).
_MAX_CHAIN = 16

__all__ = [
    "MAX_REPLY_BYTES",
    "RemoteError",
    "confinement_refusal",
    "describe_exception",
    "freeze_exception",
    "mark_confined",
    "thaw_exception",
]


#: Longest text of one exception in the chain sent back (characters).
_MAX_EXC_TEXT = 8 * 1024
#: Largest reply the parent reads from a worker (bytes); a longer one retires the worker.
MAX_REPLY_BYTES = 64 * 1024 * 1024


class RemoteError(ClassifiedError):
    """Stands in, in the parent, for one exception raised in a worker: its type's name and
    text (never the object: only data crosses the boundary). The outermost one carries
    the worker's classification (see :class:`~control_plane._kernel.classify.ClassifiedError`)."""

    def __init__(
        self, type_name: str, text: str, classification: Classification | None = None
    ) -> None:
        super().__init__(f"{type_name}: {text}" if text else type_name, classification)
        self.type_name = type_name


def _chain(exc: BaseException) -> list[BaseException]:
    order: list[BaseException] = []
    seen: set[int] = set()
    stack = [exc]
    while stack and len(order) < _MAX_CHAIN:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        order.append(current)
        for linked in (current.__context__, current.__cause__):
            if linked is not None:
                stack.append(linked)
    return order


@functools.cache
def _builtin_classifiers() -> tuple[Classifier, ...]:
    """The built-in classifier plugins, as the worker's classification uses them: what only
    live objects answer (a gRPC call's status, a subprocess's frames) is known only here."""
    from control_plane._runtime import plugins

    pm = plugins.get_plugin_manager(builtins=False, entry_points_=False)
    return tuple(plugins.classifiers_of(pm))


class _Worker:
    #: Set once this process is confined (:func:`mark_confined`): the kernel refuses what
    #: the pack's grant does not allow.
    confined = False


def mark_confined() -> None:
    """This worker is confined (Landlock, seccomp): an ``EACCES``/``EPERM`` the system
    raises here is a refusal by the pack's grant (:func:`confinement_refusal`)."""
    _Worker.confined = True


#: errnos with which the kernel refuses a confined worker (Landlock and seccomp: EACCES;
#: a refused capability or namespace: EPERM).
_REFUSED = frozenset({errno.EACCES, errno.EPERM})


def confinement_refusal(exc: BaseException, found: Classification | None) -> bool:
    """Whether ``found`` (an ``auth_failed``) is the system refusing a confined worker: an
    ``OSError`` of the system's own (a builtin type, not a library's) with ``EACCES`` or
    ``EPERM`` in the chain -- ``socket()``, ``connect()``, ``open()`` outside the grant.
    A server's refusal (a 403, a rejected login) raises no such error: it stays
    ``auth_failed``."""
    if not _Worker.confined or found is None or found.code != "auth_failed":
        return False
    return any(
        isinstance(e, OSError) and type(e).__module__ == "builtins" and e.errno in _REFUSED
        for e in iter_chain(exc)
    )


def _classification_data(exc: BaseException) -> dict[str, Any] | None:
    try:
        for current in iter_chain(exc):
            # What frames and live objects show, recorded as data on the exception.
            mark_status(current)
            mark_origin(current)
        found = classify(exc, _builtin_classifiers())
        if confinement_refusal(exc, found):
            found = Classification(
                code=NOT_PERMITTED,
                message="the pack's confinement refused the operation (outside its grant)",
                rule="confinement",
            )
    # Worker side of the boundary: a hostile exception's attributes may raise anything;
    # the parent then classifies from the chain's data.
    except BaseException:  # noqa: BLE001
        return None
    if found is None:
        return None
    return {
        "code": safe_text(found.code, 256),
        "message": safe_text(found.message),
        "retry_after": found.retry_after,
        "partial_result": (
            json_safe(dict(found.partial_result)) if found.partial_result is not None else None
        ),
        "violations": [
            {"field": safe_text(v.field, 1024), "description": safe_text(v.description, 4096)}
            for v in found.violations[:1000]
        ],
        "rule": safe_text(found.rule, 64),
        "typed": bool(found.typed),
    }


def describe_exception(exc: BaseException) -> dict[str, Any]:
    """``exc`` as JSON data: the worker's classification of it, the chain's type names
    and (bounded) texts, and the traceback text. Never raises."""
    chain = [
        {
            "type": safe_text(type(e).__qualname__, 256),
            "module": safe_text(type(e).__module__, 256),
            "text": safe_text(e, _MAX_EXC_TEXT),
        }
        for e in _chain(exc)
    ]
    return {
        "classification": _classification_data(exc),
        "chain": chain,
        "traceback": format_exception(exc),
    }


def freeze_exception(exc: BaseException) -> bytes:
    """:func:`describe_exception` as JSON bytes, for :func:`thaw_exception`."""
    return _dumps(describe_exception(exc))


def _str(value: Any, limit: int = _MAX_EXC_TEXT) -> str:
    return safe_text(value, limit) if isinstance(value, str) else ""


def _classification_from(data: Any) -> Classification | None:
    """A worker's classification, from untrusted data: every field type-checked."""
    if not isinstance(data, dict) or not isinstance(data.get("code"), str):
        return None
    retry_after = data.get("retry_after")
    partial = data.get("partial_result")
    violations = data.get("violations")
    return Classification(
        code=_str(data["code"], 256),
        message=_str(data.get("message")),
        retry_after=(
            float(retry_after)
            if isinstance(retry_after, int | float) and not isinstance(retry_after, bool)
            else None
        ),
        partial_result=partial if isinstance(partial, dict) else None,
        violations=tuple(
            FieldViolation(_str(v.get("field"), 1024), _str(v.get("description"), 4096))
            for v in (violations if isinstance(violations, list) else [])[:1000]
            if isinstance(v, dict)
        ),
        rule=_str(data.get("rule"), 64) or "worker",
        typed=data.get("typed") is True,
    )


def thaw_exception(data: bytes | dict[str, Any], pid: int | None = None) -> BaseException:
    """The stand-in for what :func:`freeze_exception` described: a :class:`RemoteError`
    per exception of the chain (outermost first, each the ``__cause__`` of the one
    before), the outermost carrying the classification, the worker's traceback as a note.
    Malformed data gives a plain :class:`RemoteError`."""
    try:
        info = orjson.loads(data) if isinstance(data, bytes) else data
    except orjson.JSONDecodeError:
        info = None
    if not isinstance(info, dict):
        return RemoteError("WorkerProtocolError", "the worker sent a malformed failure")
    items = info.get("chain")
    chain = (
        [i for i in items if isinstance(i, dict)][:_MAX_CHAIN] if isinstance(items, list) else []
    )
    if not chain:
        chain = [{"type": "Exception", "text": ""}]
    rebuilt = [
        RemoteError(_str(item.get("type"), 256) or "Exception", _str(item.get("text")))
        for item in chain
    ]
    rebuilt[0].classification = _classification_from(info.get("classification"))
    for outer, inner in itertools.pairwise(rebuilt):
        outer.__cause__ = inner
    text = _str(info.get("traceback"), MAX_TEXT)
    rebuilt[0].add_note(f"--- traceback in isolated worker (pid {pid}) ---\n{text.rstrip()}")
    return rebuilt[0]


def _dumps(data: Any) -> bytes:
    """JSON bytes of ``data``; what JSON cannot carry is made encodable first."""
    try:
        return orjson.dumps(data)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return orjson.dumps(json_safe(data))
