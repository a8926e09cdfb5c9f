"""Extraction: the provider-blind facts an exception carries, read without running its code,
bounded.
"""

from __future__ import annotations

import datetime
import email.utils
import functools
import itertools
import json
import math
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

from control_plane._kernel.classifiers._frames import locals_of
from control_plane._kernel.fact_rules import DATA, type_cache

__all__ = [
    "CODE_FIELDS",
    "DELAY_FIELDS",
    "DELAY_HEADERS",
    "HEADER_FIELDS",
    "HTTP_ONLY_FIELDS",
    "LINK_FIELDS",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_NODES",
    "MAX_STRING",
    "MESSAGE_FIELDS",
    "NUMBER_FIELDS",
    "PROTOCOL_WORDS",
    "SQLSTATE_FIELDS",
    "STATUS_FIELDS",
    "STATUS_SAID",
    "Facts",
    "extract",
    "header_delay",
    "header_reset",
    "parse_retry_after",
    "peek",
    "protocol_of",
    "reply_facts",
]

#: Nested objects followed from the exception (``exc.response.body.error``: 3).
MAX_DEPTH = 5
#: Entries read from one container (mapping, list, headers).
MAX_ITEMS = 64
#: Objects visited in all, per exception.
MAX_NODES = 128
#: Characters kept of any string read (codes, header values, message text).
MAX_STRING = 2048
#: Bytes of a body parsed as JSON (a larger body is not parsed).
MAX_JSON = 16 * 1024

_MISSING = object()
_FIELDS: Mapping[str, list[str]] = DATA["fields"]
_TYPE_DICT: Any = type.__dict__["__dict__"]
_TYPE_MRO: Any = type.__dict__["__mro__"]
_TYPE_NAME: Any = type.__dict__["__name__"]
_TYPE_MODULE: Any = type.__dict__["__module__"]
#: C-level data descriptors: a getset (``BaseException.args``) and a member (``OSError.errno``).
_SAFE_DESCRIPTORS: tuple[type[Any], ...] = (
    type(BaseException.__dict__["args"]),
    type(OSError.__dict__["errno"]),
)
_SCALARS = (str, bytes, int, float, bool, type(None))


def _mro(klass: type) -> tuple[type, ...]:
    try:
        found = _TYPE_MRO.__get__(klass)
    except (TypeError, AttributeError):
        return ()
    return found if isinstance(found, tuple) else ()


def _class_dict(klass: type) -> Mapping[str, Any]:
    try:
        found = _TYPE_DICT.__get__(klass)
    except (TypeError, AttributeError):
        return {}
    return found if isinstance(found, Mapping) else {}


@type_cache()
def _dict_slot(klass: type) -> Any:
    """The C-level ``__dict__`` descriptor instances of ``klass`` have, or ``None`` (none,
    or a class that defines ``__dict__`` itself: not read). Cached per type."""
    for k in _mro(klass):
        slot = _class_dict(k).get("__dict__")
        if slot is not None:
            return slot if isinstance(slot, _SAFE_DESCRIPTORS) else None
    return None


@type_cache(("missing", None, None))
def _resolve(klass: type, name: str) -> tuple[str, Any, Any]:
    """What ``name`` is on ``klass`` (cached per type): ``("slot", descriptor, owner)`` for
    a C-level field, ``("property", None, owner)`` for a property or another descriptor
    that is no method, ``("code", None, owner)`` for a method, ``("plain", value, owner)``,
    or ``("missing", None, None)``."""
    for k in _mro(klass):
        attr = _class_dict(k).get(name, _MISSING)
        if attr is _MISSING:
            continue
        if isinstance(attr, _SAFE_DESCRIPTORS):
            return "slot", attr, k
        if isinstance(attr, property) or (not callable(attr) and hasattr(type(attr), "__get__")):
            return "property", None, k  # also a cached one (functools.cached_property, reify)
        if callable(attr):
            return "code", None, k
        return "plain", attr, k
    return "missing", None, None


def _instance_dict(obj: Any) -> dict[str, Any] | None:
    slot = _dict_slot(type(obj))
    if slot is None:
        return None
    try:
        found = slot.__get__(obj, type(obj))
    except (TypeError, AttributeError):
        return None
    return found if type(found) is dict else None


def peek(obj: Any, name: str) -> Any:
    """``obj.name`` read as data, or ``None``: from a ``dict`` by key, else the instance
    ``__dict__``, a slot or C-level field (``args``, ``errno``) or a plain class attribute;
    a property ``name`` is read from the instance's ``_name`` (its usual backing field).
    No ``__getattr__``, no property and no other code of ``obj``'s runs."""
    if isinstance(obj, dict):
        try:
            return dict.get(obj, name)
        except TypeError:
            return None
    if isinstance(obj, _SCALARS):
        return None
    kind, value, owner = _resolve(type(obj), name)
    if kind == "slot":
        try:
            return value.__get__(obj, type(obj))
        except (TypeError, AttributeError, ValueError):
            return None
    inst = _instance_dict(obj)
    if kind == "property":
        return _backing(obj, inst, owner, name)
    if inst is not None and name in inst:
        return dict.get(inst, name)
    if kind != "plain":
        return None
    # the class attribute as it is now: a library may set it on each raise
    # (``cls.code = code; return cls``), so only where it lives is cached, not its value
    return _class_dict(owner).get(name, value)


def _backing(obj: Any, inst: dict[str, Any] | None, klass: type, name: str) -> Any:
    """The field a property ``name`` of ``klass`` conventionally reads: ``_name`` (in the
    instance ``__dict__`` or a slot), or the private ``__name`` (stored as ``_Class__name``)."""
    kind, slot, _ = _resolve(type(obj), "_" + name)
    if kind == "slot":
        try:
            return slot.__get__(obj, type(obj))
        except (TypeError, AttributeError, ValueError):
            return None
    if inst is None:
        return None
    if "_" + name in inst:
        return dict.get(inst, "_" + name)
    try:
        owner = _TYPE_NAME.__get__(klass)
    except (TypeError, AttributeError):
        return None
    return dict.get(inst, f"_{owner.lstrip('_')}__{name}")


def _string(value: Any) -> str | None:
    if isinstance(value, bytes):
        value = value[:MAX_STRING].decode("utf-8", "replace")
    if isinstance(value, str):
        return str.__str__(value)[:MAX_STRING]
    return None


def _items(container: Any) -> Iterator[tuple[Any, Any]]:
    """Up to :data:`MAX_ITEMS` ``(key, value)`` pairs of a dict, or of a list of pairs."""
    if isinstance(container, dict):
        try:
            pairs = list(itertools.islice(dict.items(container), MAX_ITEMS))
        except (TypeError, RuntimeError):
            return
        yield from pairs
    elif isinstance(container, list | tuple):
        for item in _head(container):
            if isinstance(item, list | tuple) and len(item) >= 2:
                yield item[0], item[-1]


def _head(seq: list[Any] | tuple[Any, ...]) -> list[Any] | tuple[Any, ...]:
    """The first :data:`MAX_ITEMS` items, by the builtin slice (no ``__iter__`` or
    ``__getitem__`` of a subclass runs; no copy of the rest)."""
    if isinstance(seq, list):
        return list.__getitem__(seq, slice(0, MAX_ITEMS))
    return tuple.__getitem__(seq, slice(0, MAX_ITEMS))


@type_cache((), maxsize=1024)
def _slot_names(klass: type) -> tuple[str, ...]:
    """The ``__slots__`` names of ``klass`` and its bases (cached per type)."""
    names: list[str] = []
    for k in _mro(klass):
        slots = _class_dict(k).get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if isinstance(name, str) and name not in names:
                names.append(name)
    return tuple(names[:MAX_ITEMS])


def _stores(obj: Any) -> Iterator[Any]:
    """The containers (dicts, lists) a headers object keeps its entries in, under any name
    (httpx's ``_list``, requests' ``_store``, urllib3's ``_container``, a slot
    ``_internal``), read as data: its instance fields and slots."""
    inst = _instance_dict(obj)
    values = list(itertools.islice(dict.values(inst), MAX_ITEMS)) if inst else []
    values += [peek(obj, name) for name in _slot_names(type(obj))]
    return (v for v in values if isinstance(v, dict | list | tuple))


def _header_map(headers: Any, depth: int = 0) -> dict[str, str]:
    """Lower-cased header name -> value, read as data from ``headers`` (bounded)."""
    found: dict[str, str] = {}
    if headers is None or depth > 2:
        return found
    if isinstance(headers, dict | list | tuple):
        for key, raw in _items(headers):
            value = raw[-1] if isinstance(raw, list | tuple) and raw else raw  # urllib3
            name, text = _string(key), _string(value)
            if name is not None and text is not None:
                # X-Rate-Limit-Reset is x-ratelimit-reset: "rate limit", hyphenated or not
                found.setdefault(name.lower().replace("rate-limit", "ratelimit"), text)
        return found
    if isinstance(headers, Mapping):
        getter = _class_get(headers)
        if getter is not None:  # a C-level mapping (multidict): its get runs no Python code
            for name, spelled in _SPELLED:
                try:
                    value = getter(headers, name)
                    value = getter(headers, spelled) if value is None else value
                except (TypeError, KeyError, ValueError):
                    value = None
                text = _string(value)
                if text is not None:
                    found[name] = text
            return found
    for inner in _stores(headers):
        found.update(_header_map(inner, depth + 1))
    return found


def _class_get(mapping: Any) -> Any:
    for klass in _mro(type(mapping)):
        attr = _class_dict(klass).get("get", _MISSING)
        if attr is _MISSING:
            continue
        # A method of a C type (method_descriptor): no Python code of the library's runs.
        return attr if type(attr).__name__ == "method_descriptor" else None
    return None


def parse_retry_after(value: Any, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` value: delta-seconds or an HTTP-date; None if neither.

    Negative values and dates in the past give ``0.0``; non-finite numbers give None.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:
            return None
        return max(0.0, seconds) if math.isfinite(seconds) else None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    text = str(value).strip()[:MAX_STRING]
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # "-0000": HTTP-dates are always GMT
        when = when.replace(tzinfo=datetime.UTC)
    current = time.time() if now is None else now
    return float(max(0, math.ceil(when.timestamp() - current)))  # whole seconds: until it began


_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?$")
_MS = re.compile(r"^(\d+(?:\.\d+)?)ms$")
#: A bare number of ``x-ratelimit-reset`` above this is a Unix time, not a delay.
_EPOCH = 1_000_000_000
#: Above this, a reset is a Unix time in milliseconds (2001 in ms; year 33658 in seconds).
_EPOCH_MS = 1_000_000_000_000


#: The reset of the IETF draft's ``RateLimit: "api";r=0;t=120`` (``t``: seconds).
_IETF_RESET = re.compile(r";\s*t=(\d+(?:\.\d+)?)\b")


#: A wait a message states in words: "retry after 5", "Retry in 4 seconds", "Please try
#: again in 1.5s", "wait 30 seconds before retrying" (a bare number after "retry after" is
#: seconds, as ``Retry-After``'s is).
_STATED = re.compile(
    r"\b(?:retry(?:ing)?|try(?:ing)? again|wait)\s+(?:(in|after|for)\s+)?"
    r"(\d{1,7}(?:\.\d{1,3})?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b",
    re.IGNORECASE,
)


def stated_delay(text: str) -> float | None:
    """Seconds of a wait ``text`` states in words (:data:`_STATED`), or ``None``."""
    for m in _STATED.finditer(text[:MAX_STRING]):
        unit = (m.group(3) or "").lower()
        if not unit and (m.group(1) or "").lower() != "after":
            continue  # "wait 30" or "retry 3 times" says no unit: no wait
        number = float(m.group(2))
        if unit.startswith("ms") or unit.startswith("milli"):
            return number / 1000
        if unit.startswith("h"):
            return number * 3600
        if unit.startswith("m"):
            return number * 60
        return number
    return None


def _duration(text: str, now: float | None) -> float | None:
    """Seconds from ``x-ratelimit-reset*``: ``1.5``, ``20ms``, ``6m0s``, a Unix time, the
    ``t`` of an IETF ``RateLimit`` field."""
    text = text.strip()
    ietf = _IETF_RESET.search(text)
    if ietf:
        return float(ietf.group(1))
    found = _MS.match(text)
    if found:
        return float(found.group(1)) / 1000
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(number):
            return None
        if number > _EPOCH_MS:  # a Unix time in milliseconds
            return max(0.0, number / 1000 - (time.time() if now is None else now))
        if number > _EPOCH:  # in whole seconds: the wait until that second has begun
            return float(max(0, math.ceil(number - (time.time() if now is None else now))))
        return max(0.0, number)
    if "," in text:  # an HTTP-date, as Retry-After's (RateLimit-Reset: Thu, 01 May ...)
        return parse_retry_after(text, now)
    found = _DURATION.match(text)
    if found and any(found.groups()):
        hours, minutes, seconds = (float(g) if g else 0.0 for g in found.groups())
        return hours * 3600 + minutes * 60 + seconds
    return None


#: Headers that state a delay, in the order they are believed: the precise millisecond
#: form the LLM SDKs read first, the standard one, then the rate-limit reset family.
DELAY_HEADERS: tuple[str, ...] = tuple(_FIELDS["delay_headers"])
#: The delay headers' names, each with "ratelimit" also spelled "rate-limit".
_SPELLED = tuple((n, n.replace("ratelimit", "rate-limit")) for n in DELAY_HEADERS)


def header_delay(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The delay (seconds) the headers ask for (``retry-after-ms``, ``Retry-After``), or
    ``None``."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms)
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value / 1000)
    return parse_retry_after(headers.get("retry-after"), now)


def header_reset(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds until a rate limit resets (``x-ratelimit-reset*``: ``1.5``, ``20ms``,
    ``6m0s``, a Unix time), or ``None``. Sent on every reply by some APIs, so it is a
    delay only for a reply that is throttled."""
    for name in DELAY_HEADERS[2:]:
        value_text = headers.get(name)
        if value_text is not None:
            delay = _duration(value_text, now)
            if delay is not None:
                return delay
    for name, value_text in headers.items():  # a vendor's: x-contentful-ratelimit-reset
        if _VENDOR_RESET.search(name):
            delay = _duration(value_text, now)
            if delay is not None:
                return delay
    return None


#: A rate limit's reset header under a vendor's prefix or of one limit
#: (``x-contentful-ratelimit-reset``, ``x-ratelimit-auth-token-reset``).
_VENDOR_RESET = re.compile(r"ratelimit(?:-[a-z]+)*-reset(?:-after)?$")


@dataclass(frozen=True, slots=True)
class Facts:
    """What an exception says about its failure, provider-blind."""

    #: The HTTP status (100-599) found first: on the exception, then in what it holds.
    status: int | None = None
    #: The delay asked for by headers (``Retry-After``, ``retry-after-ms``), seconds.
    delay: float | None = None
    #: Seconds until a rate limit resets (``x-ratelimit-reset*``), if sent.
    reset: float | None = None
    #: Error-code strings (``NoSuchKey``, ``insufficient_quota``, ``rate_limit_error``).
    codes: tuple[str, ...] = ()
    #: The SQLSTATE (five characters), if any.
    sqlstate: str | None = None
    #: errnos on the exception and on exceptions it holds in containers.
    errnos: tuple[int, ...] = ()
    #: The text of the exception's ``args`` and of ``message`` fields (bounded).
    text: str = ""
    #: Class names along the exception's MRO, outside the standard library's builtins.
    type_names: tuple[str, ...] = ()
    #: ``(protocol, number)``: a reply or error number of a wire protocol (SMTP, FTP, LDAP,
    #: MySQL, ...), read only from an exception of that protocol's library
    #: (:data:`PROTOCOL_WORDS`): never an HTTP status, whatever its size.
    numbers: tuple[tuple[str, int], ...] = ()
    #: Response codes a reply quotes in brackets (IMAP ``[AUTHENTICATIONFAILED]``, POP3
    #: ``-ERR [IN-USE]``), from the exception's own text.
    replies: tuple[str, ...] = ()


#: Where the extractor looks (``[fields]`` of ``evidence.toml``): the names libraries keep
#: each fact under. An HTTP status (an int 100-599, or its digits):
STATUS_FIELDS: tuple[str, ...] = tuple(_FIELDS["status"])
#: Fields that hold an HTTP status only on an HTTP object (one holding headers or a
#: response, or named for HTTP, or data inside one): elsewhere they are a protocol's own
#: numbers (a mail server's 535, a column store's 516) that overlap 100-599.
HTTP_ONLY_FIELDS: tuple[str, ...] = tuple(_FIELDS["http_only"])
#: A protocol's reply or error number, on that protocol's exceptions.
NUMBER_FIELDS: tuple[str, ...] = tuple(_FIELDS["number"])
#: A delay the server asked for, under the names libraries keep it (seconds; a name ending
#: in ``ms`` holds milliseconds; ``"30s"``-style durations are read too).
DELAY_FIELDS: tuple[str, ...] = tuple(_FIELDS["delay"])
#: Words of a library's module or class names -> the protocol whose numbers it raises.
PROTOCOL_WORDS: Mapping[str, str] = DATA["protocol_words"]
#: Protocols whose replies quote response codes in brackets (``Facts.replies``).
_BRACKETING = frozenset({"imap", "pop3"})
#: Headers, error-code strings, SQLSTATEs, message text, and the fields followed to nested
#: data (a response, a body, an error object, containers of errors).
HEADER_FIELDS: tuple[str, ...] = tuple(_FIELDS["header"])
CODE_FIELDS: tuple[str, ...] = tuple(_FIELDS["code"])
SQLSTATE_FIELDS: tuple[str, ...] = tuple(_FIELDS["sqlstate"])
MESSAGE_FIELDS: tuple[str, ...] = tuple(_FIELDS["message"])
LINK_FIELDS: tuple[str, ...] = tuple(_FIELDS["link"])

_BUILTIN_MODULES = frozenset({"builtins", "socket", "ssl", "asyncio", "concurrent", "subprocess"})
_SQLSTATE = re.compile(r"^[0-9A-Z]{5}$")
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:\-]{1,80}$")


def _status(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 100 <= value <= 599:
        return int(value)
    if isinstance(value, str) and len(value) == 3 and value.isdigit():
        number = int(value)
        return number if 100 <= number <= 599 else None
    return None


def _json(value: Any) -> Any:
    """A JSON object parsed from a body's bytes or text, bounded; else ``None``."""
    if isinstance(value, bytes | bytearray):
        if len(value) > MAX_JSON:
            return None
        value = bytes(value).decode("utf-8", "replace")
    if not isinstance(value, str) or len(value) > MAX_JSON:
        return None
    text = value.strip()
    if not text.startswith("{"):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _delay_value(name: str, value: Any) -> float | None:
    """Seconds from a delay field's value (a number, digits, ``"30s"``, an HTTP-date, a
    ``timedelta``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, datetime.timedelta):
        value = datetime.timedelta.total_seconds(value)
        return parse_retry_after(value) if math.isfinite(value) else None
    scale = 1000.0 if name.lower().endswith("ms") else 1.0
    if isinstance(value, int | float):
        seconds = parse_retry_after(value)
        return None if seconds is None else seconds / scale
    text = _string(value)
    if text is None:
        return None
    seconds = _duration(text, None)
    if seconds is None:
        seconds = parse_retry_after(text)
    return None if seconds is None else seconds / scale


_HTTP_LINKS = frozenset({"response", "resp", "resp_body", "_content"})
_HTTP_WORDS = frozenset({"http", "https", "response", "httpx", "aiohttp", "urllib", "requests"})
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@type_cache(frozenset())
def _words_of_type(klass: type) -> frozenset[str]:
    """Lower-cased words of the modules and names of ``klass``'s MRO (cached per type)."""
    found: set[str] = set()
    for k in _mro(klass):
        try:
            name = _TYPE_NAME.__get__(k)
            module = _TYPE_MODULE.__get__(k)  # an extension type's too (no __module__ key)
        except (TypeError, AttributeError):
            continue
        if module == "builtins":
            module = None
        for part in (module, name):
            if isinstance(part, str):
                found.update(w.lower() for w in _WORD.findall(part[:200]))
                found.update(p.lower() for p in part[:200].split("."))
    return frozenset(found)


def protocol_of(exc: BaseException) -> str | None:
    """The wire protocol whose numbers ``exc``'s library raises (:data:`PROTOCOL_WORDS`)."""
    return _protocol_of_type(type(exc))


@type_cache()
def _protocol_of_type(klass: type) -> str | None:
    words = _words_of_type(klass)
    for word, protocol in PROTOCOL_WORDS.items():
        if word in words:
            return protocol
    return None


class _Gather:
    __slots__ = (
        "codes",
        "delay",
        "errnos",
        "nodes",
        "numbers",
        "protocol",
        "reset",
        "sqlstate",
        "status",
        "text",
    )

    def __init__(self, protocol: str | None) -> None:
        self.status: int | None = None
        self.delay: float | None = None
        self.reset: float | None = None
        self.codes: list[str] = []
        self.sqlstate: str | None = None
        self.errnos: list[int] = []
        self.numbers: list[tuple[str, int]] = []
        self.text: list[str] = []
        self.nodes = 0
        self.protocol = protocol

    def visit(self, node: Any, depth: int, root: bool = False, http: bool = False) -> None:
        if node is None or isinstance(node, bool | int | float) or depth > MAX_DEPTH:
            return
        if self.nodes >= MAX_NODES:
            return
        self.nodes += 1
        if isinstance(node, str | bytes | bytearray):
            parsed = _json(node)
            if parsed is not None:
                self.visit(parsed, depth + 1, http=http)
            return
        if isinstance(node, list | tuple):
            for item in _head(node):
                self.visit(item, depth + 1, http=http)
            return
        if isinstance(node, BaseException) and not root:
            self.exception(node, depth)
            return
        self.holder(node, depth, http)

    def exception(self, exc: BaseException, depth: int) -> None:
        """An exception held in data (``errors``): only its errno and code are facts."""
        err = peek(exc, "errno")
        if isinstance(err, int) and not isinstance(err, bool):
            self.errnos.append(err)

    def holder(self, node: Any, depth: int, http: bool) -> None:
        """An object's or a dict's fields, then the bodies it keeps under names of its own
        (after its own fields: the object's status is the transport's, a body's is the
        product's own number)."""
        for value in self.own_fields(node, depth, http):
            self.visit(value, depth + 1, http=http)

    def own_fields(self, node: Any, depth: int, http: bool) -> list[Any]:
        private: dict[str, Any] = {}
        bodies: list[Any] = []
        if isinstance(node, dict):
            present: frozenset[str] | set[str] = _ALL_FIELDS
        else:
            inst = _instance_dict(node)
            if inst:  # self.__response: _Resource__response; detail_text, raw_body: a body
                private, bodies = _kept(inst)
            present = _present(node, inst) | private.keys()  # only the fields this object has
            if not present or (self.protocol is None and present <= _NUMBER_ONLY):
                if self.protocol is not None and depth == 0:  # its arguments may say it
                    self.number(
                        node, lambda obj, name: _peek(obj, name) if name in present else None
                    )
                return bodies  # nothing else to read (an OSError's errno is extract's)
            http = http or bool(_words_of_type(type(node)) & _HTTP_WORDS)

        def peek(obj: Any, name: str) -> Any:
            if obj is node and name in private:
                return private[name]
            return _peek(obj, name) if name in present else None

        def fields(names: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
            """``(name, value)`` of the fields of ``names`` this holder has, set."""
            for name in names:
                if name in present:
                    value = private[name] if name in private else _peek(node, name)
                    if value is not None:
                        yield name, value

        headers_seen = False
        for _, headers in fields(HEADER_FIELDS):
            headers_seen = True
            if self.delay is None or self.reset is None:
                found = _header_map(headers)
                if self.delay is None:
                    self.delay = header_delay(found)
                if self.reset is None:
                    self.reset = header_reset(found)
        http = http or headers_seen or peek(node, "response") is not None
        if self.protocol is not None and depth == 0:
            self.number(node, peek)
        elif self.status is None:
            for _, value in fields(STATUS_FIELDS + HTTP_ONLY_FIELDS if http else STATUS_FIELDS):
                self.status = _status(value)
                if self.status is not None:
                    break
        if self.delay is None:
            for name, value in fields(DELAY_FIELDS):
                self.delay = _delay_value(name, value)
                if self.delay is not None:
                    break
        for _, raw in fields(CODE_FIELDS):
            self.said(raw)
        if self.sqlstate is None:
            for _, raw in fields(SQLSTATE_FIELDS):
                value = _string(raw)
                if value is not None and _SQLSTATE.match(value):
                    self.sqlstate = value
                    break
        for _, raw in fields(MESSAGE_FIELDS):
            value = _string(raw)
            if value:
                self.text.append(value)
        if isinstance(node, dict):
            for key, value in _items(node):
                if isinstance(value, BaseException):  # {(host, port): ConnectionRefusedError}
                    self.exception(value, depth)
                elif key in _ERROR_KEYS and isinstance(value, str):
                    self.said(value)  # {"ok": false, "error": "ratelimited"}
                elif key == "name" and _error_name(node, value):
                    self.said(value)  # {"name": "Unknown_Subaccount", "message": "..."}
                elif isinstance(value, str) and _message_key(key):
                    self.text.append(value)  # {"status_message": "Access denied ..."}
                elif key == "status" and isinstance(value, dict):
                    self.visit(value, depth + 1, http=http)  # {"status": {"error": ...}}
                elif isinstance(key, str) and key in LINK_FIELDS:
                    self.visit(value, depth + 1, http=http)
                elif self.delay is None and isinstance(value, dict):
                    self.delay = _nested_delay(value)  # {"error_extra": {"retry_after": 5}}
                elif depth and isinstance(value, list):
                    self.field_errors(value, depth)  # {"errors": {"email": ["is taken"]}}
            return bodies
        for name, value in fields(LINK_FIELDS):
            if value is not node:
                linked_http = http or name in _HTTP_LINKS
                self.visit(value, depth + 1, http=linked_http)
        return bodies

    def field_errors(self, items: list[Any], depth: int) -> None:
        """A field's list of errors in an error body (``{"email": ["has already been
        taken"]}``, ``{"email": [{"error": "DuplicateValue", ...}]}``): its messages and
        error objects."""
        for item in _head(items):
            text = _string(item)
            if text is not None and " " in text.strip():
                self.text.append(text)
            elif isinstance(item, dict):
                self.visit(item, depth + 1)

    def said(self, raw: Any) -> None:
        """A code field's value: a code word, or a sentence where a code may be
        (``{"reason": "..."}``, ``{"error": "Collection `x` already exists!"}``): text."""
        value = _string(raw)
        if value is not None and _CODE.match(value):
            if value not in self.codes:
                self.codes.append(value)
        elif value is not None and " " in value.strip():
            self.text.append(value)

    def response(self, node: Any, known: int | None = None) -> bool:
        """Read ``node``'s status and delay if it is an HTTP response (an object holding
        headers and a status) -- of status ``known``, when one is known --; whether it is."""
        if isinstance(node, (*_SCALARS, dict, list, tuple, type, BaseException)):
            return False
        present = _present(node, _instance_dict(node))
        headers = next((_peek(node, n) for n in HEADER_FIELDS if n in present), None)
        status = next(
            (s for s in (_status(_peek(node, n)) for n in STATUS_FIELDS if n in present) if s),
            None,
        )
        if headers is None or status is None or known not in (None, status):
            return False
        found = _header_map(headers)
        self.status, self.delay, self.reset = status, header_delay(found), header_reset(found)
        return True

    def number(self, node: Any, peek: Any) -> None:
        """The protocol's own number: a field, the first argument, or a reply's digits."""
        protocol = self.protocol
        assert protocol is not None
        candidates = [peek(node, name) for name in NUMBER_FIELDS]
        args = _peek(node, "args")
        if isinstance(args, tuple) and args:
            first = args[0]
            candidates.append(first)
            if isinstance(first, dict):  # python-ldap: ({"result": 49, "desc": ...},)
                candidates.append(dict.get(first, "result"))
            text = _string(first)
            if text is not None and _REPLY.match(text):
                candidates.append(int(text[:3]))
        for value in candidates:
            if isinstance(value, int) and not isinstance(value, bool):
                # SQLite's extended result codes keep the primary one in the low byte
                number = int(value) & 0xFF if protocol == "sqlite" else int(value)
                self.numbers.append((protocol, number))
                return
        # smtplib's SMTPRecipientsRefused: {recipient: (code, reply)}, one number each
        recipients = peek(node, "recipients")
        for _, reply in _items(recipients):
            if isinstance(reply, tuple) and reply and isinstance(reply[0], int):
                self.numbers.append((protocol, int(reply[0])))
                self.text.extend(t for t in map(_string, reply[1:2]) if t)
        if isinstance(recipients, list | tuple):  # aiosmtplib: [SMTPRecipientRefused, ...]
            for held in _head(recipients):
                if isinstance(held, BaseException):
                    self.number(held, _peek)
                    self.text.extend(t for t in map(_string, (_peek(held, "message"),)) if t)


#: Keys of a decoded body whose string value is an error-code word (an API answering
#: errors with HTTP 200: ``{"ok": false, "error": "invalid_auth"}``).
_ERROR_KEYS = frozenset({"error", "Error", "error_type", "errorType"})
#: An error's name as JavaScript and many APIs write it (``ValidationError``, ``Invalid_Key``).
_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*(?:_[A-Z][A-Za-z0-9]*)*$")


def _error_name(node: dict[Any, Any], value: Any) -> bool:
    """``value`` under ``"name"`` names the error: an error object's (one with a message
    field), capitalised as a type is, not a resource's name (``"orders-2024"``)."""
    return (
        isinstance(value, str)
        and _NAME.match(value) is not None
        and any(f in node for f in MESSAGE_FIELDS)
    )


_NUMBER_ONLY = frozenset(NUMBER_FIELDS) - {"code", "error_code"}
#: A response code quoted in brackets: upper case, digits, ``/`` and ``-`` only.
_BRACKETED = re.compile(r"\[([A-Z][A-Z0-9/-]{1,40})\]")
_REPLY = re.compile(r"^[1-5][0-9]{2}[ -]")
#: An SMTP enhanced status code (RFC 3463): class.subject.detail, quoted in a reply.
ENHANCED = re.compile(r"(?<![\d.])([245]\.\d{1,3}\.\d{1,3})(?![\d.])")
#: Frames of a traceback looked at for the response a library raised about.
MAX_FRAMES = 8


_ALL_FIELDS = frozenset(
    (
        *STATUS_FIELDS,
        *HEADER_FIELDS,
        *CODE_FIELDS,
        *SQLSTATE_FIELDS,
        *MESSAGE_FIELDS,
        *LINK_FIELDS,
        *HTTP_ONLY_FIELDS,
        *NUMBER_FIELDS,
        *DELAY_FIELDS,
    )
)
_peek = peek


@type_cache(_ALL_FIELDS)
def _class_fields(klass: type) -> frozenset[str]:
    """The fields of :data:`_ALL_FIELDS` that ``klass`` defines (cached per type)."""
    return frozenset(name for name in _ALL_FIELDS if _resolve(klass, name)[0] != "missing")


def _nested_delay(node: dict[Any, Any]) -> float | None:
    """A delay field directly inside an object nested in an error body (its ``extra`` or
    ``parameters``): the name says what it is wherever the body keeps it."""
    for name in DELAY_FIELDS:
        value = dict.get(node, name)
        if value is not None:
            return _delay_value(name, value)
    return None


#: The last word of an attribute's name that says it keeps a reply's body or text.
_BODY_WORDS = frozenset({"text", "body", "content", "payload"})
#: The last word of a name that holds a decoded body, and the words that say whose.
_DECODED = frozenset({"dict", "json", "data", "obj"})
_REPLY_WORDS = frozenset({"response", "reply", "error", "body", "result"})
#: The last words of a key that holds a message (the message fields' own, lower-cased).
_MESSAGE_WORDS = frozenset(n.lower() for n in MESSAGE_FIELDS)
#: A private attribute's name as its class mangles it (``self.__response`` in class
#: ``Resource`` is ``_Resource__response``): the same field, kept privately.
_MANGLED = re.compile(r"^_[A-Za-z]\w*?__([A-Za-z]\w*)$")


@functools.lru_cache(maxsize=4096)
def _attribute_role(key: str) -> str | None:
    """What an instance attribute's name says it keeps: a field of :data:`_ALL_FIELDS` under
    a mangled private name (that field's name), an HTTP status under a name of its own
    (``http_status_code``, ``httpCode``: ``http_status``), a body or text the field lists do
    not name (``detail_text``, ``raw_body``, ``responseBody``, ``api_response_dict``:
    ``""``), or nothing (``None``)."""
    if key[:1] == "_" and "__" in key[1:]:
        named = _MANGLED.match(key)
        return named.group(1) if named is not None and named.group(1) in _ALL_FIELDS else None
    if key in _ALL_FIELDS or key[:2] == "__":
        return None
    words = [w.lower() for w in _WORD.findall(key[:80])]
    if len(words) > 1 and words[0] == "http" and words[-1] in ("status", "code"):
        return "http_status"  # http_status_code, httpStatusCode, HTTPCode: what it says
    if len(words) < 2:
        return None  # "_", "x": a name too short to say what it keeps
    # a body under a name of its own: raw_body; decoded: api_response_dict, errorJson
    held = words[-1] in _DECODED and not _REPLY_WORDS.isdisjoint(words[:-1])
    return "" if words[-1] in _BODY_WORDS or held else None


def _message_key(key: Any) -> bool:
    """Whether a body's key names a message under a name of its own: its last word is a
    message field's (``status_message``, ``errorMessage``, ``response_msg``)."""
    if type(key) is not str or key in _ALL_FIELDS:
        return False
    words = _WORD.findall(key[:80])
    return len(words) > 1 and words[-1].lower() in _MESSAGE_WORDS


def _kept(inst: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """One pass over an instance's attributes (bounded): the fields it keeps under a
    mangled private name, and the bodies it keeps under names of its own (a library's
    exception keeping the server's reply its own way)."""
    private: dict[str, Any] = {}
    bodies: list[Any] = []
    for key, value in itertools.islice(dict.items(inst), 64):
        if type(key) is not str or value is None:
            continue
        role = _attribute_role(key[:120])  # a field's name is short; the memo stays small
        if role:
            private.setdefault(role, value)
        elif role == "" and isinstance(value, str | bytes | bytearray | dict):
            bodies.append(value)
    return private, bodies


def _present(node: Any, inst: dict[str, Any] | None) -> frozenset[str]:
    """The fields of :data:`_ALL_FIELDS` an object has: at class level or in its ``__dict__``
    (``inst``: :func:`_instance_dict`)."""
    fields = _class_fields(type(node))
    return fields | (_ALL_FIELDS & inst.keys()) if inst else fields


@type_cache(())
def _type_names(klass: type) -> tuple[str, ...]:
    names = []
    for k in _mro(klass):
        try:
            name = _TYPE_NAME.__get__(k)
            module = _TYPE_MODULE.__get__(k)
        except (TypeError, AttributeError):
            continue
        if isinstance(module, str) and module.partition(".")[0] in _BUILTIN_MODULES:
            continue
        if isinstance(name, str):
            names.append(name[:200])
    return tuple(names)


def _raised_about(exc: BaseException, gather: _Gather) -> None:
    """The HTTP response a library raised an exception about without keeping it on the
    exception (a status turned into a class, its ``Retry-After`` dropped): the first
    response (an object holding headers and a status) among the locals of the innermost
    frames that belong to the exception's own package. Frames of other code (the pack's)
    are never read: a response they hold may be another call's. When the exception kept
    its status but not the delay, only a response of that same status is read (for its
    delay)."""
    package = _package(type(exc))
    if package is None:
        return
    tb = BaseException.__dict__["__traceback__"].__get__(exc)
    frames: list[FrameType] = []
    while tb is not None and len(frames) < 64:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames[-MAX_FRAMES:]):
        name = frame.f_globals.get("__name__")
        if not isinstance(name, str) or name.partition(".")[0] != package:
            continue
        for value in itertools.islice(locals_of(frame).values(), MAX_ITEMS):
            if gather.response(value, gather.status):
                return


def _package(klass: type) -> str | None:
    """The top-level package of a library's exception class (``None`` for a builtin's)."""
    try:
        module = _TYPE_MODULE.__get__(klass)
    except (TypeError, AttributeError):
        return None
    if not isinstance(module, str):
        return None
    top = module.partition(".")[0]
    return None if top in _BUILTIN_MODULES or top == "__main__" else top


def _error_fields(fields: dict[Any, Any], gather: _Gather) -> None:
    """A wire protocol's error kept by its one-letter field codes (every key one letter:
    PostgreSQL's ErrorResponse, ``{"S": "FATAL", "C": "28P01", "M": "..."}``): ``C`` is the
    SQLSTATE, ``M`` the message, ``D`` its detail."""
    keys = list(itertools.islice(dict.keys(fields), MAX_ITEMS + 1))
    if (
        not keys
        or len(keys) > MAX_ITEMS
        or not all(isinstance(k, str) and len(k) == 1 for k in keys)
    ):
        return
    state = _string(dict.get(fields, "C"))
    if state is not None and _SQLSTATE.match(state) and gather.sqlstate is None:
        gather.sqlstate = state
    gather.text.extend(t for t in map(_string, (dict.get(fields, "M"), dict.get(fields, "D"))) if t)


def quoted_replies(protocol: str | None, texts: list[str]) -> tuple[str, ...]:
    """The response codes ``texts`` quote in ``protocol``'s own form: an IMAP or POP3 code
    in brackets (in the first text), an SMTP enhanced status code."""
    if protocol in _BRACKETING and texts:
        return tuple(_BRACKETED.findall(texts[0])[:4])
    if protocol == "smtp":
        return tuple(ENHANCED.findall("\n".join(texts)[:MAX_STRING])[:4])
    return ()


def extract(exc: BaseException) -> Facts:
    """The facts ``exc`` carries (see the module docs); bounded, runs none of its code."""
    gather = _Gather(protocol_of(exc))
    gather.visit(exc, 0, root=True)
    err = peek(exc, "errno")
    if isinstance(err, int) and not isinstance(err, bool) and gather.protocol is None:
        gather.errnos.insert(0, err)
    args = peek(exc, "args")
    if isinstance(args, tuple):
        for arg in args[:4]:
            text = _string(arg)
            if text:
                gather.text.insert(0, text)
            elif isinstance(arg, dict):  # a decoded body passed as an argument
                _error_fields(arg, gather)
                gather.visit(arg, 1)
    if gather.status is None and gather.protocol is None and gather.text:
        _stated_status(gather.text[0], gather)
    for said in _ASSIGNED_CODE.finditer(gather.text[0][:MAX_STRING] if gather.text else ""):
        gather.said(said.group(2))  # a model's repr: AlreadyCanceled(error='AlreadyCanceled')
    replies = quoted_replies(gather.protocol, gather.text)
    names = _type_names(type(exc))
    status = gather.status  # a delay matters for none known, a 429 or a 5xx
    may_wait = status is None or status == 429 or status >= 500
    if names and gather.delay is None and gather.protocol is None and may_wait:
        _raised_about(exc, gather)  # a library's exception (a builtin's has no names)
    return Facts(
        replies=replies,
        status=gather.status,
        delay=gather.delay,
        reset=gather.reset,
        codes=tuple(gather.codes[:MAX_ITEMS]),
        sqlstate=gather.sqlstate,
        errnos=tuple(dict.fromkeys(gather.errnos[:MAX_ITEMS])),
        text="\n".join(gather.text)[: MAX_STRING * 2],
        type_names=names,
        numbers=tuple(gather.numbers[:MAX_ITEMS]),
    )


#: A code word a model's repr assigns to an error-code field (``error='NotPermitted'``).
_ASSIGNED_CODE = re.compile(
    r"\b(?:error|error_code|errorCode|code|reason)=(['\"])([A-Za-z][\w.:-]{1,80})\1"
)

#: A message that states an error status as one and may quote the body it came with
#: (``Request failed with status code 403: {"error": ...}``): the word says HTTP status,
#: 4xx or 5xx only (an exit status never reaches 400).
STATUS_SAID = re.compile(r"\bstatus(?:[ _]code)?\s*[=:]?\s*([45]\d\d)\b[\s:,.-]{0,4}", re.I)
_JSON = json.JSONDecoder()


def _stated_status(text: str, gather: _Gather) -> None:
    """The status a message states (:data:`STATUS_SAID`) and the JSON body after it."""
    found = STATUS_SAID.search(text[:MAX_STRING])
    if found is None:
        return
    gather.status = int(found.group(1))
    rest = text[found.end() : found.end() + MAX_JSON]
    if rest.startswith("{"):
        try:
            body, _ = _JSON.raw_decode(rest)
        except (ValueError, RecursionError):
            return
        gather.visit(body, 1, http=True)


#: A tool's output that is an HTTP reply: a status line first, its headers, its body.
_STATUS_LINE = re.compile(r"\AHTTP/\d(?:\.\d)? ([1-5]\d\d)\b[^\n]*\n(.*?)(?:\r?\n\r?\n|\Z)", re.S)
#: What an HTML error page says of its error: its title and first heading.
_HTML_TITLE = re.compile(r"<(title|h1)\b[^>]*>([^<]{1,300})</\1>", re.I)
#: Top-level keys that make a failed tool's JSON output an error body.
_ERROR_BODY = frozenset({"error", "errors", "Error"})


def reply_facts(output: str) -> Facts | None:
    """The facts of a failed tool's output read as the HTTP reply it prints (a status line,
    headers, a JSON or HTML body) or as a JSON error body alone (a top-level ``error`` or
    ``errors``); ``None`` for any other output, or a reply that is no error (< 400)."""
    text = output.lstrip()[:MAX_JSON]
    gather = _Gather(None)
    line = _STATUS_LINE.match(text)
    if line is not None:
        status = int(line.group(1))
        if status < 400:
            return None
        headers = dict(
            (k.strip().lower(), v.strip())
            for k, _, v in (h.partition(":") for h in line.group(2).splitlines())
        )
        body = text[line.end() :]
        titles = [m.group(2).strip() for m in _HTML_TITLE.finditer(body)]
        gather.visit({"status": status, "headers": headers, "body": body}, 0, http=True)
        gather.text.extend(titles[:2])
    else:
        body = _json(text)
        if not isinstance(body, dict) or not _ERROR_BODY & body.keys():
            return None
        gather.visit(body, 0, http=True)
    return Facts(
        status=gather.status,
        delay=gather.delay,
        reset=gather.reset,
        codes=tuple(gather.codes[:MAX_ITEMS]),
        text="\n".join(gather.text)[:MAX_STRING],
    )
