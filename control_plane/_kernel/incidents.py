"""Incidents: the scrubbed story behind an ``internal_error``'s reference id."""

from __future__ import annotations

import linecache
import logging
import secrets
import threading
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from control_plane._kernel.bounds import valid_text
from control_plane._kernel.redact import scrub, scrub_head, scrub_tail

if TYPE_CHECKING:
    from control_plane._kernel.call_hooks import CallHooks

__all__ = ["Incident", "Incidents", "format_exception", "new_reference_id"]

logger = logging.getLogger("capability_packs.incidents")


#: Identical consecutive frames shown before "[Previous line repeated N more times]" (as
#: the standard library does).
_RECURSIVE_CUTOFF = 3


def _format_fast(exc: BaseException) -> str:
    """``traceback.format_exception(exc)`` without the column carets, at a third of the cost.

    The same text operators know -- the chain (``__cause__`` / ``__context__``, guarded
    against cycles), ``Traceback (most recent call last):``, one ``File ..., line N, in f``
    and its source line per frame, repeated frames collapsed, the exception line and its
    notes, exception groups drawn as the standard library draws them -- minus the ``^^^^``
    markers, which cost a ``compile`` of every source line (3.11+), and minus the per-file
    ``stat`` that checks whether a source file changed since it was read. Unlike the
    standard library, an exception group's members past the fifteen shown are counted,
    never read (:func:`_format_group`).
    """
    ctx = _Context()
    _format_chain(exc, ctx, set())
    return "".join(ctx.parts)


#: Members of an exception group shown, and group nesting followed (the standard
#: library's ``max_group_width`` and ``max_group_depth``); the rest is counted, not walked.
_GROUP_WIDTH = 15
_GROUP_DEPTH = 10
_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"


class _Context:
    """Where the text goes, indented as the standard library indents group members."""

    __slots__ = ("depth", "need_close", "parts")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.depth = 0
        self.need_close = False

    def indent(self) -> str:
        return " " * (2 * self.depth)

    def emit(self, texts: list[str], margin: str = "|") -> None:
        if not self.depth:
            self.parts.extend(texts)
            return
        prefix = f"{self.indent()}{margin} "
        for text in texts:
            self.parts.append("".join(prefix + line for line in text.splitlines(True)))


def _format_chain(exc: BaseException, ctx: _Context, seen: set[int]) -> None:
    """``exc`` and its chain, oldest first (``TracebackException.format``)."""
    chain: list[tuple[str | None, BaseException]] = []
    current: BaseException | None = exc
    message: str | None = None
    while current is not None:
        seen.add(id(current))
        chain.append((message, current))
        cause, context = current.__cause__, current.__context__
        if cause is not None:
            current, message = (cause, _CAUSE) if id(cause) not in seen else (None, None)
        elif context is not None and not current.__suppress_context__:
            current, message = (context, _CONTEXT) if id(context) not in seen else (None, None)
        else:
            current = None
    # Each link's message precedes the *older* exception's text in the chain's order.
    ordered = list(reversed(chain))
    for index, (_, link) in enumerate(ordered):
        if index:
            ctx.emit([ordered[index - 1][0] or ""])
        if isinstance(link, BaseExceptionGroup):
            _format_group(link, ctx, seen)
            continue
        frames: list[str] = []
        _format_frames(link, frames)
        ctx.emit(frames)
        ctx.emit(traceback.format_exception_only(link))


def _format_group(exc: BaseExceptionGroup[Any], ctx: _Context, seen: set[int]) -> None:
    """A group as the standard library draws it, its first :data:`_GROUP_WIDTH` members
    only: the standard library builds a ``TracebackException`` of *every* member before it
    shows fifteen (a 200,000-member group took 1.4 s)."""
    if ctx.depth > _GROUP_DEPTH:
        ctx.emit([f"... (max_group_depth is {_GROUP_DEPTH})\n"])
        return
    toplevel = ctx.depth == 0
    if toplevel:
        ctx.depth += 1
    if exc.__traceback__ is not None:
        frames: list[str] = []
        _format_frames(exc, frames)
        frames[0] = "Exception Group Traceback (most recent call last):\n"
        ctx.emit(frames[:1], margin="+" if toplevel else "|")
        ctx.emit(frames[1:])
    ctx.emit(_group_line(exc))
    members = exc.exceptions
    count = len(members)
    shown = count if count <= _GROUP_WIDTH else _GROUP_WIDTH + 1
    ctx.need_close = False
    for index in range(shown):
        last = index == shown - 1
        if last:
            ctx.need_close = True  # the closing line may be drawn by a nested group
        truncated = index >= _GROUP_WIDTH
        title = "..." if truncated else str(index + 1)
        corner = "+-" if index == 0 else "  "
        ctx.parts.append(f"{ctx.indent()}{corner}+---------------- {title} ----------------\n")
        ctx.depth += 1
        if truncated:
            more = count - _GROUP_WIDTH
            ctx.emit([f"and {more} more exception{'s' if more > 1 else ''}\n"])
        else:
            _format_chain(members[index], ctx, seen)
        if last and ctx.need_close:
            ctx.parts.append(f"{ctx.indent()}+------------------------------------\n")
            ctx.need_close = False
        ctx.depth -= 1
    if toplevel:
        ctx.depth = 0


def _group_line(exc: BaseExceptionGroup[Any]) -> list[str]:
    """The group's own line and notes (``format_exception_only`` without its members)."""
    cls = type(exc)
    name = cls.__qualname__
    if cls.__module__ not in ("builtins", "__main__"):
        name = f"{cls.__module__}.{name}"
    text = str(exc)
    lines = [f"{name}: {text}\n" if text else f"{name}\n"]
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list | tuple):
        lines.extend(f"{line}\n" for note in notes[:_GROUP_WIDTH] for line in str(note).split("\n"))
        if len(notes) > _GROUP_WIDTH:
            lines.append(f"[{len(notes) - _GROUP_WIDTH} more notes]\n")
    elif notes is not None:
        lines.append(f"{notes!r}\n")
    return lines


def _format_frames(exc: BaseException, parts: list[str]) -> None:
    if exc.__traceback__ is not None:
        parts.append("Traceback (most recent call last):\n")
        last: tuple[str, int, str] | None = None
        repeats = 0
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            code = frame.f_code
            key = (code.co_filename, lineno, code.co_name)
            if key == last:
                repeats += 1
                if repeats >= _RECURSIVE_CUTOFF:
                    continue
            else:
                _repeated(parts, repeats)
                last, repeats = key, 0
            parts.append(f'  File "{code.co_filename}", line {lineno}, in {code.co_name}\n')
            line = linecache.getline(code.co_filename, lineno, frame.f_globals).strip()
            if line:
                parts.append(f"    {line}\n")
        _repeated(parts, repeats)


def _repeated(parts: list[str], repeats: int) -> None:
    if repeats >= _RECURSIVE_CUTOFF:
        more = repeats - _RECURSIVE_CUTOFF + 1
        parts.append(f"  [Previous line repeated {more} more time{'s' if more > 1 else ''}]\n")


def new_reference_id() -> str:
    """A fresh, unguessable reference id, e.g. ``ref_3f9c0a61d2b84e07``."""
    return "ref_" + secrets.token_hex(8)


#: Bounds of what an incident keeps (each scrubbed before it is cut).
MAX_INCIDENT_NAME = 256
MAX_INCIDENT_SUMMARY = 4096
MAX_INCIDENT_TRACEBACK = 16384


def _bounded_traceback(text: str) -> str:
    """A traceback scrubbed and kept to :data:`MAX_INCIDENT_TRACEBACK` characters: its head
    and its tail (where the last exception is), each scrubbed with a window past its cut,
    so recording an incident costs bounded time whatever the exception's text."""
    half = MAX_INCIDENT_TRACEBACK // 2
    if len(text) <= MAX_INCIDENT_TRACEBACK:
        return scrub(text)
    head = scrub_head(text, half)
    tail = scrub_tail(text, half)
    return f"{head}\n...[cut: about {len(text) - len(head) - len(tail)} characters]...\n{tail}"


@dataclass(frozen=True, slots=True)
class Incident:
    """What operators can recover behind a reference id. Scrubbed at rest."""

    reference_id: str
    pack: str
    request_id: str
    kind: str
    summary: str
    traceback: str
    created_at: float
    #: Every text field already passed :func:`scrub` (set by :meth:`Incidents.record`, which
    #: builds it): a store writes it as it is instead of scrubbing the traceback again.
    #: Incidents built anywhere else are scrubbed on the way in.
    scrubbed: bool = field(default=False, compare=False, repr=False)

    def row(self) -> tuple[str, str, str, str, str, str, float]:
        """Its fields, in the order the incident store and its journal keep them."""
        return (
            self.reference_id,
            self.pack,
            self.request_id,
            self.kind,
            self.summary,
            self.traceback,
            float(self.created_at),
        )


def format_exception(exc: BaseException | None) -> str:
    """``exc`` with its chain and traceback as text (valid UTF-8); never raises, whatever
    the exception's ``__str__`` does. Callers bound it (:func:`_bounded_traceback`)."""
    if exc is None:
        return ""
    try:
        text = _format_fast(exc)
    # A hostile __str__/__repr__ may raise anything, SystemExit included: the record
    # keeps what can be known (the type) rather than failing the call.
    except BaseException:  # noqa: BLE001
        name = valid_text(str.__str__(type(exc).__qualname__))[:256]
        text = f"{name}: <the exception could not be formatted>"
    return valid_text(text)


class Incidents:
    """Bounded in-memory incident record, logged as it is written.

    Every incident goes to the ``incident_recorded`` hook of :attr:`hooks` (the invoker's
    plugins), e.g. the persistent store.
    """

    def __init__(self, capacity: int = 1000) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, Incident] = OrderedDict()
        self._lock = threading.Lock()
        #: The plugins told of each incident (set by the :class:`Invoker` using this record).
        self.hooks: CallHooks | None = None

    def record(
        self, exc: BaseException | None, *, pack: str, request_id: str, kind: str, summary: str
    ) -> str:
        """Keep ``exc`` (with its chain and traceback) under a new reference id."""
        ref = new_reference_id()
        incident = Incident(
            reference_id=ref,
            pack=scrub(pack, MAX_INCIDENT_NAME),
            request_id=scrub(request_id, MAX_INCIDENT_NAME),
            kind=scrub(kind, MAX_INCIDENT_NAME),
            summary=scrub(summary, MAX_INCIDENT_SUMMARY),
            traceback=_bounded_traceback(format_exception(exc)),
            created_at=time.time(),
            scrubbed=True,
        )
        with self._lock:
            self._items[ref] = incident
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        logger.error(
            "incident %s pack=%s request_id=%s kind=%s: %s",
            ref,
            incident.pack,
            incident.request_id,
            kind,
            incident.summary,
            extra={"reference_id": ref, "pack": incident.pack, "request_id": incident.request_id},
        )
        if self.hooks is not None and self.hooks.incident:
            self.hooks.notify(self.hooks.incident, incident)
        return ref

    def get(self, reference_id: str) -> Incident | None:
        with self._lock:
            return self._items.get(reference_id)

    def __len__(self) -> int:
        return len(self._items)
