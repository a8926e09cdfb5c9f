"""Classification: any exception to a baseline or pack code, walking its chain once
(docs/classification.md).
"""

from __future__ import annotations

import builtins
import errno
import functools
import importlib
import math
import socket
import ssl
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from control_plane._kernel import evidence
from control_plane._kernel.bounds import MAX_TEXT, safe_text
from control_plane._kernel.errors import FieldViolation, PackError
from control_plane._kernel.evidence import Proposal, decide, name_proposal, weigh
from control_plane._kernel.fact_rules import DATA, Verdict, type_cache
from control_plane._kernel.facts import (
    Facts,
    extract,
    header_delay,
    parse_retry_after,
    protocol_of,
    quoted_replies,
    stated_delay,
)
from control_plane._kernel.redact import scrub

__all__ = [
    "BUG_TYPES",
    "GROUP_PRECEDENCE",
    "NAMED_TYPE_CODES",
    "TYPE_CODES",
    "Classification",
    "ClassifiedError",
    "Classifier",
    "TypeRule",
    "class_names",
    "classify",
    "exception_text",
    "from_verdict",
    "header_delay",
    "iter_chain",
    "match_type_rules",
    "parse_retry_after",
    "safe_attr",
]

MAX_CHAIN = 32
DEFAULT_RETRY_AFTER = 1.0
MAX_MESSAGE = 200


@dataclass(frozen=True, slots=True)
class Classification:
    """The code an exception stands for, with the payload its code needs.

    ``rate_limited`` always carries a ``retry_after``: when none is given (a 429 without
    ``Retry-After``, a throttling reply that states no delay), :data:`DEFAULT_RETRY_AFTER`.
    One given explicitly (a parsed ``Retry-After``, a gRPC ``RetryInfo``) is kept as it is;
    the wire clamps it (``enforce``).
    """

    code: str
    message: str
    #: Seconds to wait before retrying; set for ``rate_limited`` (default filled in).
    retry_after: float | None = None
    partial_result: Mapping[str, Any] | None = None
    violations: tuple[FieldViolation, ...] = ()
    #: Which rule matched (``pack_error``, ``plugin``, ``http_status``, ``type``, ``errno``).
    rule: str = "pack_error"
    #: True when the pack's own handler raised the typed error (origin ``pack:<name>``).
    typed: bool = False
    #: A generic wrapper's guess: used only if nothing deeper in the chain classifies.
    weak: bool = False

    def __post_init__(self) -> None:
        if self.retry_after is None and self.code == "rate_limited":
            object.__setattr__(self, "retry_after", DEFAULT_RETRY_AFTER)

    def for_plugin(self, plugin: str) -> Classification:
        """The same answer given by the plugin ``plugin``: rule ``<plugin>:<rule>`` (a
        tool table's match reported by the subprocess or GitPython classifier)."""
        return replace(self, rule=f"{plugin}:{self.rule}")


Classifier = Callable[[BaseException], Classification | None]


class ClassifiedError(Exception):
    """A failure classified where it happened and carried here as data (an isolated
    worker's exception): :func:`classify` returns its :attr:`classification` as it is.
    Enforcement (vocabulary, scrubbing, bounds) still runs on it here, as for any
    classification. ``classification`` is ``None`` when no rule matched there; the
    plugin classifiers then see it (and its chain of :class:`RemoteError`-like stand-ins)."""

    def __init__(self, text: str, classification: Classification | None) -> None:
        super().__init__(text)
        self.classification = classification


def _imported(name: str) -> Any:
    """The object ``module.name`` names (a type of a ``[types]`` row), imported."""
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


#: ``(module, class name)`` -> baseline code, tried before :data:`TYPE_CODES`: types of
#: modules core does not import (``subprocess``: core starts no process); subclasses match
#: (``named`` of ``[types]`` in ``evidence.toml``).
NAMED_TYPE_CODES: Sequence[tuple[tuple[str, str], str]] = tuple(
    (tuple(name.rsplit(".", 1)), code) for name, code in DATA["types"]["named"]
)

#: Exception type -> baseline code; subclasses match, the first matching entry wins
#: (``codes`` of ``[types]`` in ``evidence.toml``, each ``module.Class`` imported).
TYPE_CODES: Sequence[tuple[type[BaseException], str]] = tuple(
    (_imported(name), code) for name, code in DATA["types"]["codes"]
)


def iter_chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and everything it wraps, outermost first; each at most once."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack and len(seen) < MAX_CHAIN:
        current = stack.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        nested: list[BaseException] = []
        if current.__cause__ is not None:
            nested.append(current.__cause__)
        if current.__context__ is not None and not current.__suppress_context__:
            nested.append(current.__context__)
        for attr in _linked_attrs(type(current)):
            value = _attr(current, attr)
            if isinstance(value, BaseException):
                nested.append(value)
        args = _attr(current, "args")
        if isinstance(args, tuple):
            nested.extend(a for a in args[:4] if isinstance(a, BaseException))
        if isinstance(current, BaseExceptionGroup):
            nested.extend(current.exceptions)
        stack[0:0] = nested


_LINKED = ("reason", "original", "inner")


@type_cache(_LINKED, maxsize=2048)
def _linked_attrs(klass: Any) -> tuple[str, ...]:
    """Which of ``reason``, ``original``, ``inner`` may hold a wrapped exception on instances
    of ``klass``: not those that are properties of the class -- computed views, not stored
    exceptions (websockets' ``ConnectionClosed.reason`` is a deprecated one that warns)."""
    return tuple(attr for attr in _LINKED if not isinstance(_attr(klass, attr), property))


@dataclass(frozen=True, slots=True)
class TypeRule:
    """One row of a classifier plugin's table: an exception type, named, not imported.

    ``type_name`` is ``"package.ClassName"``: it matches a class of that name anywhere in
    the exception's MRO whose module is ``package`` or inside it (``httpx.ConnectError``
    matches ``httpx._exceptions.ConnectError``), so a plugin recognises a library's
    exceptions without importing the library. ``message`` is fixed text and must be true
    of every exception the row matches.
    """

    type_name: str
    code: str
    message: str
    weak: bool = False

    def matches(self, mro: Iterable[tuple[str, str]]) -> bool:
        """True if a class ``(module, name)`` of ``mro`` is the one this row names.

        A top-level package named like the row's with a number after it is the same family
        (``httpx2``/``httpcore2``, the forks the OpenAI and Anthropic SDKs ship, are httpx
        and httpcore): the library is recognised by its structure, not its exact name."""
        package, _, name = self.type_name.rpartition(".")
        return any(cls_name == name and _same_package(module, package) for module, cls_name in mro)

    def classification(self, plugin: str) -> Classification:
        """This row's answer, with the rule id ``<plugin>:<type_name>``."""
        return Classification(
            code=self.code,
            message=self.message,
            rule=f"{plugin}:{self.type_name}",
            weak=self.weak,
        )


def _same_package(module: str, package: str) -> bool:
    """``module`` is ``package`` or inside it, allowing a numbered fork of its top level."""
    if module == package or module.startswith(package + "."):
        return True
    top, dot, rest = module.partition(".")
    want_top = package.partition(".")[0]
    if top == want_top or not top.startswith(want_top) or not top[len(want_top) :].isdigit():
        return False
    return _same_package(want_top + dot + rest, package)


@functools.lru_cache(maxsize=4096)
def _first_row(klass: Any, rules: tuple[TypeRule, ...]) -> int:
    """Index of the first row of ``rules`` naming a class of ``klass``'s MRO, or -1: a
    function of the type and the table alone (the built-in tables are
    :class:`~control_plane._kernel.fact_rules.Rows`, hashed once)."""
    mro = class_names(klass)
    for index, row in enumerate(rules):
        if row.matches(mro):
            return index
    return -1


def match_type_rules(
    exc: BaseException, rules: Sequence[TypeRule], plugin: str
) -> Classification | None:
    """The first row of ``rules`` naming a class in ``exc``'s MRO, as a classification."""
    table = rules if isinstance(rules, tuple) else tuple(rules)
    klass: type = type(exc)
    index = _first_row(klass, table)
    return table[index].classification(plugin) if index >= 0 else None


@type_cache(recompute=True, maxsize=2048)
def class_names(klass: type) -> frozenset[tuple[str, str]]:
    """``(module, name)`` of every class in ``klass``'s MRO (cached per type)."""
    return frozenset(
        (getattr(k, "__module__", "") or "", getattr(k, "__name__", "")) for k in klass.__mro__
    )


def safe_attr(obj: Any, name: str) -> Any:
    """``getattr(obj, name, None)`` that also survives properties raising anything."""
    try:
        return getattr(obj, name, None)
    # Hostile input: a property of a third-party exception may raise anything.
    except Exception:  # noqa: BLE001
        return None


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or ``""`` when the exception cannot even render itself."""
    try:
        text = str(exc)
    # Hostile input: a broken ``__str__`` must not break classification.
    except Exception:  # noqa: BLE001
        return ""
    # Bounded before anything scrubs it: a multi-megabyte text must not stall the loop.
    return text if type(text) is str and len(text) <= MAX_TEXT else safe_text(text)


_attr, _text = safe_attr, exception_text


def from_verdict(verdict: Verdict) -> Classification:
    return Classification(
        code=verdict.code,
        message=verdict.message,
        retry_after=verdict.retry_after,  # rate_limited without one: the default
        rule=verdict.rule,
        weak=verdict.weak,
    )


#: ``type``'s own descriptors: a class's real name and module, whatever its metaclass says.
_TYPE_NAME = type.__dict__["__name__"].__get__
_TYPE_MODULE = type.__dict__["__module__"].__get__


def _named_type_code_of(klass: type) -> str | None:
    """The :data:`NAMED_TYPE_CODES` code of ``klass`` or a base (the classes' real names,
    read through ``type``'s descriptors: a hostile metaclass cannot answer for them)."""
    for base in klass.__mro__:
        name = _TYPE_NAME(base)
        for (module, named), code in NAMED_TYPE_CODES:
            if name == named:
                found = _TYPE_MODULE(base)  # any object a class body set: compared as a str only
                if type(found) is str and found == module:
                    return code
    return None


def _short_of(klass: type, rendered: str) -> str:
    """Type and first line of the message, scrubbed *before* it is cut short (a secret cut
    in half would no longer match the scrubber)."""
    full = rendered.strip()
    text = scrub(full.splitlines()[0]) if full else ""
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "..."
    name = klass.__name__
    return f"{name}: {text}" if text else name


def _classify_one(exc: BaseException, classifiers: Sequence[Classifier]) -> Classification | None:
    if isinstance(exc, PackError):
        return Classification(
            code=exc.code,
            message=exc.message,
            retry_after=exc.retry_after,  # rate_limited without one: the default
            partial_result=exc.partial_result,
            violations=exc.violations,
            rule="pack_error",
            typed=True,
        )
    weak: Classification | None = None
    for classifier in classifiers:
        result = classifier(exc)
        if result is not None:
            if not result.weak:
                return result
            weak = weak or result
    if weak is not None:
        return weak
    # Only failures reach here: the facts are extracted once, on the error path.
    facts = _facts(exc)
    if facts is None:
        return None
    if facts.text and type(exc) in _BUILTIN_TYPES and isinstance(exc, _WORDLESS):
        # a bug's own words ("expected code to be unreachable", "timeout must be > 0") and
        # a missing module's ("libpq library not found") describe this host, not a downstream
        facts = replace(facts, text="")
    err = None if isinstance(exc, ssl.SSLError) else _attr(exc, "errno")
    own_errno = err if type(err) is int else None  # an OpenSSL number is no errno
    if _plain(facts):
        plain = _plain_verdict(type(exc), facts, _text(exc), own_errno)
        return from_verdict(plain) if plain is not None else None
    found = _readings(type(exc), facts, _text(exc), own_errno)
    if not found:
        return None
    verdict = decide(found, facts)
    if verdict is not None and facts.delay is None and _may_wait(verdict):
        delay = _chain_delay(exc)  # the server's delay, kept by an exception this one wraps
        if delay is None and verdict.code == "rate_limited":
            delay = _hidden_delay(exc)
        if delay is None and verdict.code == "rate_limited":
            delay = _said_delay(exc)  # last: a wait the message states in words
        if delay is not None:
            verdict = decide(found, facts, delay)
    return from_verdict(verdict) if verdict is not None else None


#: Rules of a server's own answer (a status, a code word, a protocol number): a delay the
#: server stated elsewhere in the chain turns its "unavailable" into ``rate_limited``. A
#: connection refused or a type says no server answered: no delay is looked for.
_ANSWERED = ("http_status", "words:code:", "protocol:", "reply:", "facts:sqlstate:")


def _may_wait(verdict: Verdict) -> bool:
    if verdict.code == "rate_limited":
        return True
    return verdict.code == "network_error" and verdict.rule.startswith(_ANSWERED)


@type_cache(recompute=True, maxsize=2048)
def _type_code(klass: type) -> str | None:
    """The code of ``klass`` by :data:`NAMED_TYPE_CODES`, else :data:`TYPE_CODES`."""
    named = _named_type_code_of(klass)
    if named is not None:
        return named
    for exc_type, code in TYPE_CODES:
        if issubclass(klass, exc_type):
            return code
    return None


def _readings(klass: type, facts: Facts, rendered: str, err: int | None) -> list[Proposal]:
    """Every reading of an exception: its facts' (:func:`~control_plane._kernel.evidence.weigh`),
    its class names', and how its built-in type and errno say it failed; from the class,
    the facts, ``str(exc)`` and its own errno (``None`` for an ``ssl.SSLError``)."""
    found = weigh(facts)
    short = ""
    typed = _type_code(klass)
    if typed is not None:
        short = _short_of(klass, rendered)
        found.append(Proposal(typed, "how", "type", short))
    name = name_proposal(facts.type_names, facts.status)
    if name is not None:
        found.append(name)
    errnos = () if issubclass(klass, ssl.SSLError) else facts.errnos
    for number in errnos:
        errno_code = evidence.ERRNO_CODES.get(number)
        if errno_code is not None:
            own = number == err
            message = (
                (short or _short_of(klass, rendered))
                if own
                else f"the operation failed with errno {number}"
            )
            found.append(Proposal(errno_code, "how", "errno", message))
            break
    return found


@type_cache(recompute=True, maxsize=1024)
def _plain_verdict(klass: type, facts: Facts, rendered: str, err: int | None) -> Verdict | None:
    """The verdict of an exception whose facts hold no data (no status, code word,
    SQLSTATE, protocol number, delay nor class name of a library): a pure function of its
    class, text and errno, computed once (a refused connection fails the same way often)."""
    found = _readings(klass, facts, rendered, err)
    return decide(found, facts) if found else None


def _plain(facts: Facts) -> bool:
    return (
        facts.status is None
        and not facts.codes
        and facts.sqlstate is None
        and not facts.numbers
        and not facts.replies
        and facts.delay is None
        and facts.reset is None
        and not facts.type_names
    )


def _chain_delay(exc: BaseException) -> float | None:
    """A delay stated by an exception ``exc`` wraps (a cause's response, a decoded error)."""
    args = _attr(exc, "args")
    held = isinstance(args, tuple) and any(isinstance(a, BaseException) for a in args[:4])
    if exc.__cause__ is None and exc.__context__ is None and not held:
        return None  # wraps nothing (the common case): no chain to read
    return _delay_in(list(iter_chain(exc))[1:])


def _hidden_delay(exc: BaseException) -> float | None:
    """The delay of a context the wrapper suppressed (``raise ... from None``): it hides a
    traceback, not the server's answer. Read only for a verdict already ``rate_limited``
    (it fills the wait, never changes the code)."""
    hidden = exc.__context__
    suppressed = hidden is not None and exc.__suppress_context__
    return _delay_in(iter_chain(hidden)) if hidden is not None and suppressed else None


def _said_delay(exc: BaseException) -> float | None:
    """A wait the texts of ``exc``'s chain state in words ("Retry in 4 seconds")."""
    found = (
        stated_delay(extract(e).text) for e in iter_chain(exc) if not isinstance(e, SystemExit)
    )
    return next((delay for delay in found if delay is not None), None)


def _delay_in(chain: Iterable[BaseException]) -> float | None:
    """The first delay an exception of ``chain`` states (``SystemExit``'s code is none)."""
    found = (extract(e).delay for e in chain if not isinstance(e, SystemExit))
    return next((delay for delay in found if delay is not None), None)


def _facts(exc: BaseException) -> Facts | None:
    """The facts of ``exc`` (``None`` for ``SystemExit``, whose ``code`` is an exit status).
    An exception raised with no arguments and no message field says its message only by
    rendering itself (a class that formats its own text): that text is read."""
    if isinstance(exc, SystemExit):
        return None
    facts = extract(exc)
    if not facts.text and _attr(exc, "args") == ():
        rendered = _text(exc)
        if rendered:
            replies = facts.replies or quoted_replies(protocol_of(exc), [rendered])
            facts = replace(facts, text=rendered[:MAX_TEXT], replies=replies)
    return facts


#: Exception types that mean a bug in the code that raised them, never a condition of the
#: world: in an exception group, such a member that no rule classifies makes the whole
#: group ``internal_error`` (see :func:`classify`). ``ValueError``, ``RuntimeError`` and
#: ``OSError`` are not here: libraries raise them for bad data and failed operations.
BUG_TYPES: tuple[type[BaseException], ...] = tuple(
    _imported(f"builtins.{name}") for name in DATA["types"]["bugs"]
)


#: Built-in types whose words say nothing of a downstream: bugs, and imports that failed.
_WORDLESS: tuple[type[BaseException], ...] = (*BUG_TYPES, ImportError)
_BUILTIN_TYPES = frozenset(t for t in vars(builtins).values() if isinstance(t, type))


def _bug_while_handling(exc: BaseException) -> Classification | None:
    """``internal_error`` when ``exc`` is a programming error (:data:`BUG_TYPES`) raised
    while another failure was being handled, linked to it only implicitly.

    ``except ConnectionError: fallbacks["mirror"]`` chains a ``KeyError`` to the refused
    connection through ``__context__``: a bug in the recovery code, which retrying runs into
    again. An explicit wrapper (``from exc``, or the cause held in ``args``/``reason``/...)
    keeps the cause's classification. Call only for an exception no rule classified."""
    if not isinstance(exc, BUG_TYPES):
        return None
    if exc.__cause__ is not None or exc.__context__ is None or exc.__suppress_context__:
        return None
    for attr in _LINKED:
        if isinstance(_attr(exc, attr), BaseException):
            return None
    args = _attr(exc, "args")
    if isinstance(args, tuple) and any(isinstance(a, BaseException) for a in args[:4]):
        return None
    return Classification(
        code="internal_error",
        message=(
            f"a programming error ({type(exc).__name__}) was raised while handling "
            f"another failure ({type(exc.__context__).__name__})"
        ),
        rule="bug_while_handling",
    )


def _own(exc: BaseException, classifiers: Sequence[Classifier]) -> Classification | None:
    """``exc``'s own classification, apart from its chain: a rule's answer, else
    :func:`_bug_while_handling`'s, else ``None``."""
    found = _classify_one(exc, classifiers)
    return found if found is not None else _bug_while_handling(exc)


#: Which member's code an exception group takes when its members classify to different
#: codes, the most decisive first (after ``internal_error``, which any member imposes): a
#: permanent code before a retryable one -- retrying the whole operation cannot succeed
#: while one part of it fails for good; among permanent codes, what must be fixed first (a
#: missing program, then the credentials: a ``not_found`` next to a refused credential may
#: only be the resource hidden from it); codes not listed here (a plugin's own) after the
#: permanent ones, their retryability unknown; among retryable codes, the wait a throttled
#: member asks for (the longest ``retry_after`` of them), then ``timeout`` over the less
#: specific ``network_error``. The answer does not depend on the order the members failed
#: in (a task group lists them as they finished).
GROUP_PRECEDENCE: tuple[str, ...] = tuple(DATA["types"]["group_precedence"])
_RANK = MappingProxyType({code: rank for rank, code in enumerate(GROUP_PRECEDENCE)})


def _decisive(found: Sequence[Classification]) -> Classification:
    """The member classification that decides for the group (:data:`GROUP_PRECEDENCE`; the
    longest ``retry_after`` among equals, then the first)."""
    other = _RANK["*"]

    def key(c: Classification) -> tuple[int, float]:
        wait = c.retry_after
        wait = wait if isinstance(wait, int | float) and not math.isnan(wait) else 0.0
        return _RANK.get(c.code, other), -wait

    return min(found, key=key)


#: Members of one exception group judged (the first ones), nested groups judged (depth),
#: and members plus exceptions classified for that, in all, per :func:`classify` call.
MAX_GROUP_MEMBERS = 16
MAX_GROUP_DEPTH = 4
MAX_GROUP_WORK = 256


class _Walk:
    """One :func:`classify` call's state: each exception's own classification, computed
    once (the members of a group are classified alone, then walked again as part of the
    chain), and what is left of the work allowed for judging group members."""

    __slots__ = ("classifiers", "left", "results")

    def __init__(self, classifiers: Sequence[Classifier]) -> None:
        self.classifiers = classifiers
        self.results: dict[int, Classification | None] = {}
        self.left = MAX_GROUP_WORK

    def one(self, exc: BaseException) -> Classification | None:
        key = id(exc)  # every exception stays alive (held by the chain) during the call
        if key not in self.results:
            self.left -= 1
            self.results[key] = _own(exc, self.classifiers)
        return self.results[key]


def _bug(member: BaseException) -> Classification:
    return Classification(
        code="internal_error",
        message=f"a member of an exception group is a programming error ({type(member).__name__})",
        rule="group:bug",
    )


def _group_verdict(
    group: BaseExceptionGroup[BaseException], walk: _Walk, depth: int
) -> Classification | None:
    """``internal_error`` when a member of ``group``, classified alone, is recognised as
    ``internal_error`` or is a programming error (:data:`BUG_TYPES`) no rule classifies;
    else the most decisive strong classification of its members
    (:data:`GROUP_PRECEDENCE`); else ``None`` (the walk goes on: weak answers)."""
    strong: list[Classification] = []
    for member in group.exceptions[:MAX_GROUP_MEMBERS]:
        if walk.left <= 0:
            break
        walk.left -= 1
        found = _walk(member, walk, depth)
        if found is None:
            if isinstance(member, BUG_TYPES):
                return _bug(member)
        elif found.code == "internal_error":
            return found
        elif not found.weak:
            strong.append(found)
    return _decisive(strong) if strong else None


def _walk(
    exc: BaseException,
    walk: _Walk,
    depth: int,
    chain: Sequence[BaseException] | None = None,
) -> Classification | None:
    """The first strong classification along ``exc``'s chain (``chain``, when already
    listed), else the first weak one; exception groups judged on the way."""
    if isinstance(exc, ClassifiedError) and exc.classification is not None:
        return exc.classification
    weak: Classification | None = None
    listed = list(iter_chain(exc)) if chain is None else chain
    for index, current in enumerate(listed):
        if isinstance(current, BaseExceptionGroup) and depth < MAX_GROUP_DEPTH:
            verdict = _group_verdict(current, walk, depth + 1)
            if verdict is not None:
                return verdict
        result = walk.one(current)
        if result is None:
            continue
        if result.rule.startswith(_GUESSES):
            cause = _unreached(listed[index + 1 :])
            if cause is not None:
                result = walk.one(cause) or result
        if not result.weak:
            return result
        weak = weak or result
    return weak


def classify(exc: BaseException, classifiers: Sequence[Classifier] = ()) -> Classification | None:
    """The classification of ``exc`` or of the first exception it wraps that has one.

    A typed :class:`PackError` anywhere in the chain wins over every other rule. An
    exception group is ``internal_error`` when a member is (or is an unclassified
    :data:`BUG_TYPES` error); otherwise :data:`GROUP_PRECEDENCE` ranks its members' codes
    (docs/classification.md, "The walk").
    """
    if isinstance(exc, ClassifiedError) and exc.classification is not None:
        return exc.classification
    chain = list(iter_chain(exc))
    for current in chain:
        if isinstance(current, PackError):
            return _classify_one(current, ())
    return _walk(exc, _Walk(classifiers), 0, chain)


#: Rules that read a wrapper's own words (its text, its class name), not a server's answer.
_GUESSES = ("words:text:", "name:")
#: errnos of a connection never made: no server answered, so none said anything.
_UNREACHED = frozenset({errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH})


def _unreached(causes: Sequence[BaseException]) -> BaseException | None:
    """The first of ``causes`` that is a connection never made (refused, unreachable, a
    name not resolved): a wrapper's words above it ("not found locally") are a guess."""
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError | socket.gaierror):
            return cause
        if isinstance(cause, OSError) and _attr(cause, "errno") in _UNREACHED:
            return cause
    return None
