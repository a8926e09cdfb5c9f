"""Classification by evidence: Extract -> Weigh -> Decide (the whole account, with every
rule, is docs/classification.md).

*Extract* (:func:`control_plane._kernel.facts.extract`): the facts an exception carries,
each with its provenance (an HTTP status only from an HTTP object, a protocol's number with
its protocol, code words, a delay under any name, class names, errnos, text). *Weigh*
(:func:`weigh`): each fact proposes a code with a strength (:data:`STRENGTH`); what says
*what* failed outweighs what says only *how*. *Decide* (:func:`decide`): the strongest
proposals decide; equal ones that disagree are settled only by :data:`SETTLED`, else
``internal_error``, never a guess; vetoes, a server's delay and a quota's window
(:data:`WINDOWS`) then set retryability. A tool's output (:func:`read_tool`) is read by the
same engine. The vocabulary, number spaces and field names are data (``evidence.toml``),
written into the docs by ``scripts/gen_docs.py``.
"""

from __future__ import annotations

import errno
import functools
import http
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import NamedTuple

from control_plane._kernel import fact_rules
from control_plane._kernel.fact_rules import (
    DATA,
    GENERIC_PHRASES,
    PHRASE_RULES,
    QUOTA_CODE,
    QUOTA_RULES,
    SQLSTATE_RULES,
    STATUS_5XX_CODE,
    STATUS_CODES,
    FactRule,
    Verdict,
    search,
)
from control_plane._kernel.facts import (
    MESSAGE_FIELDS,
    STATUS_SAID,
    Facts,
    reply_facts,
    stated_delay,
)

__all__ = [
    "ANSWERED",
    "CALLER_INPUT",
    "ENHANCED_STATUS",
    "ERRNO_CODES",
    "HOW_NAMES",
    "INPUT_PHRASES",
    "PROTOCOL_CLASSES",
    "PROTOCOL_CODES",
    "QUALIFIED_CODES",
    "RESPONSE_CODES",
    "SETTLED",
    "STRENGTH",
    "VETOES",
    "WINDOWS",
    "WORDS",
    "Proposal",
    "decide",
    "name_proposal",
    "protocol_code",
    "read_lines",
    "read_tool",
    "tokens",
    "weigh",
    "words_code",
]

_message = fact_rules.message  # "@name": a message of [messages]
_DOWN, _MISSING, _THROTTLED = _message("@down"), _message("@missing"), _message("@throttled")
#: The message of a code a status or a delay overrules a reading with.
_OVERRULED = MappingProxyType({"rate_limited": _THROTTLED, "auth_failed": _message("@denied")})

#: How much a kind of evidence weighs. What (a server's code word, a protocol's number, a
#: SQLSTATE) over a library's name for it over a phrase of its text over how (a bare HTTP
#: status, then a built-in type or an errno); ``[strength]`` of ``evidence.toml``.
STRENGTH: Mapping[str, int] = MappingProxyType(DATA["strength"])


class Proposal(NamedTuple):
    """One fact's reading: ``code`` with the strength of its ``kind`` (:data:`STRENGTH`)."""

    code: str
    kind: str
    rule: str
    message: str
    #: A wrapper's guess (a class name): used only if nothing deeper in the chain decides.
    weak: bool = False

    @property
    def strength(self) -> int:
        return STRENGTH[self.kind]


# -- the vocabulary ------------------------------------------------------------------------

_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@functools.lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-cased words of ``text``, split across ``snake_case``, ``camelCase``,
    ``SCREAMING_CASE``, spaces and punctuation (``TooManyRequests`` -> too many requests)."""
    return tuple(t.lower() for t in _SPLIT.findall(text[:512]))


#: Words engineers write for a failure, in any message or code, tokenised (:func:`tokens`):
#: ``(code, message, phrase)`` rows of ``evidence.toml``'s ``[[words]]``, in order. The
#: first phrase found decides for one text; a phrase ending in ``*`` matches a word
#: prefix. Rows of ``internal_error`` are recognised conditions no baseline code fits (a
#: read-only cluster, a request too large, a declined payment): they keep a generic fact
#: (a 403, a 402) from deciding.
_ROWS = tuple(
    (g["code"], _message(g["message"]), tuple(p.split()))
    for g in DATA["words"]
    for p in g["phrases"]
)
#: Phrases of rows of kind ``input`` (the caller's input refused, a feature the plan lacks):
#: they weigh as a bare status, whatever says them.
INPUT_PHRASES = frozenset(
    p for g in DATA["words"] if g.get("kind") == "input" for p in g["phrases"]
)
#: Phrases of the input rows that say the caller's own input was refused (not a plan's lack).
CALLER_INPUT = frozenset(
    p
    for g in DATA["words"]
    if g.get("kind") == "input" and g["message"] == "@invalid"
    for p in g["phrases"]
)
#: Phrases of a limit that does not say its kind ("limit exceeded"): a 429 says it.
KINDLESS_PHRASES = frozenset(p for g in DATA["words"] if g.get("kindless") for p in g["phrases"])
#: Phrases of rows with ``answered`` -> (code, message) when a server answered the call (an
#: HTTP status): a host name that does not resolve is then one the server looked up.
ANSWERED: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        p: (g["answered"][0], _message(g["answered"][1]))
        for g in DATA["words"]
        if "answered" in g
        for p in g["phrases"]
    }
)


def _kind(phrase: str, kind: str) -> str:
    return "input" if phrase in INPUT_PHRASES else kind


def _within(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    n = len(short)
    return n < len(long) and any(long[i : i + n] == short for i in range(len(long) - n + 1))


#: A phrase holding another code's phrase (``no such host``, ``no such``) is looked for first.
WORDS: tuple[tuple[str, str, tuple[str, ...]], ...] = tuple(
    sorted(_ROWS, key=lambda r: not any(c != r[0] and _within(p, r[2]) for c, _, p in _ROWS))
)


#: How many words a ``**`` of a phrase stands for, at most ("exceeds your plan's usage limit").
_GAP = 4


def _found(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """Whether ``phrase`` is in ``words``: a word ending in ``*`` matches a prefix, ``*``
    any one word, ``**`` up to :data:`_GAP` words."""

    def at(i: int, k: int) -> bool:
        if k == len(phrase):
            return True
        w = phrase[k]
        if w == "**":
            return any(at(j, k + 1) for j in range(i, min(i + _GAP, len(words)) + 1))
        if i >= len(words):
            return False
        hit = words[i].startswith(w[:-1]) if w.endswith("*") else words[i] == w
        return hit and at(i + 1, k + 1)

    return any(at(i, 0) for i in range(len(words)))


def singular(word: str) -> str:
    """``word`` without a plural's ``s`` (``keys`` -> key, not ``access``), as phrases and
    texts are both read: "invalid API keys" says "invalid api key"."""
    return word[:-1] if len(word) > 3 and word[-1] == "s" and word[-2] not in "su" else word


class _Phrase(NamedTuple):
    """A phrase of :data:`WORDS` made ready to look for: its exact words (all must be among
    a text's words) and its starred prefixes (each must open a word of the text), checked
    before the phrase is looked for word by word (:func:`_found`)."""

    phrase: tuple[str, ...]
    exact: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def of(cls, phrase: tuple[str, ...]) -> _Phrase:
        phrase = tuple(w if w.endswith("*") else singular(w) for w in phrase)
        exact = frozenset(w for w in phrase if not w.endswith("*"))
        prefixes = tuple(" " + w.rstrip("*") for w in phrase if w.strip("*") and w[-1] == "*")
        return cls(phrase, exact, prefixes)

    def found(self, words: tuple[str, ...], present: frozenset[str], joined: str) -> bool:
        return (
            self.exact <= present
            and all(p in joined for p in self.prefixes)
            and _found(words, self.phrase)
        )


#: Short words only ever read where a single word is written on its own (an error-code
#: field, a class name): ``declined`` and ``unavailable`` in a sentence say too little, and
#: ``forbidden`` in a sentence states a rule of the input ("'..' is forbidden in a name").
_CODE_ONLY = frozenset({("declined",), ("unavailable",), ("forbidden",), ("invalid", "response")})
#: The last words of a class or code name that say only that it is one.
_SUFFIXES = frozenset({"error", "exception", "err", "exc"})


#: Auxiliary verbs are left out of a text's words: "the connection was lost" says
#: "connection lost", "has not been found" says "not found".
_FILLER = frozenset({"is", "are", "was", "were", "be", "been", "being", "has", "have"})


def _split_word(word: str) -> tuple[str, ...]:
    """A phrase's word split as a text's words are, its wildcards kept: ``*`` and ``**``
    stand as they are, a starred prefix keeps its star (``doesn't`` -> doesn, t)."""
    if not word.strip("*"):
        return (word,)
    split = tokens(word.rstrip("*"))
    return (*split[:-1], split[-1] + "*") if word.endswith("*") and split else split


#: :data:`WORDS` made ready to look for (:class:`_Phrase`): ``(code, message, phrase,
#: forms)``. "doesn't" splits into doesn + t: a phrase is looked for in two forms, without
#: its apostrophes and split as a text's words are.
_READY: tuple[tuple[str, str, tuple[str, ...], tuple[_Phrase, ...]], ...] = tuple(
    (
        code,
        message,
        phrase,
        (
            _Phrase.of(tuple(w.replace("'", "") for w in phrase)),
            _Phrase.of(tuple(t for w in phrase for t in _split_word(w))),
        ),
    )
    for code, message, phrase in WORDS
)


@functools.lru_cache(maxsize=4096)
def _words_row(text: str, whole: bool) -> tuple[str, str, str] | None:
    """The first :data:`WORDS` row found in ``text``: each phrase is first checked against
    the set of the text's words and their space-joined string (one look-up per word of the
    phrase), and looked for word by word only when all its words are there, so a long text
    costs about its length, not its length times the vocabulary's."""
    words = tuple(singular(w) for w in tokens(text) if w not in _FILLER)
    if not words:
        return None
    present, joined = frozenset(words), " " + " ".join(words)
    head = words[:-1] if len(words) > 1 and words[-1] in _SUFFIXES else words
    for code, message, phrase, forms in _READY:
        if phrase in _CODE_ONLY and (not whole or head[-len(phrase) :] != phrase):
            continue  # on its own, or the head of a name ("Unavailable", "CardDeclined")
        if any(form.found(words, present, joined) for form in forms):
            return code, message, " ".join(phrase)
    return None


#: What a text quotes rather than says: URLs, quoted values (an apostrophe inside a word,
#: "can't", opens no quote), paths, dotted names (hosts, addresses, files), lower
#: snake_case identifiers a program wrote (a field, a parameter, a setting: "spend_limit:
#: must be >= 0", "write_timeout should be > 0"). Not read for words (a path
#: "/srv/not-found/x", a host "no-such-host.invalid" or a name 'timeout' says nothing of
#: the failure); a code word in SCREAMING_CASE (NOT_FOUND) and a code field still are.
_QUOTED = re.compile(
    r"\S+://\S*|(?<![A-Za-z])'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|(?:^|\s)[~.]?/\S*"
    r"|\b[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9_-]+)+|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"
)


#: A quoted sentence (two or more plain words) standing alone -- after a ``prefix:``, as an
#: item of a list or tuple (``nats: 'Authorization Violation'``, ``[' Not enough
#: privileges.']``) -- is a message passed on, not a name: it is read. Inside a sentence
#: (``column "does not exist" is a literal``) it is a literal.
_SENTENCE = re.compile(r"\s*[A-Za-z]+(?: [A-Za-z]+)+[.!]?\s*")


#: A message quoted after a label (``Got error: 1049: "Unknown database 'x'" when ...``)
#: or assigned to a message field in a model's repr (``message='user ... already exists'``):
#: it opens with two words.
_WORDY = re.compile(r"\s*[A-Za-z']+[ ,]+[A-Za-z']+")
_MESSAGE_NAMES = "|".join(sorted({*map(re.escape, MESSAGE_FIELDS), "error"}))
_MESSAGE_FIELD = re.compile(rf"\b(?:{_MESSAGE_NAMES})\s*=\s*$", re.I)


def _unquote(m: re.Match[str]) -> str:
    quoted, text = m.group(0), m.string
    head = text[: m.start()]
    if head.endswith("b") and not head[-2:-1].isalnum():
        head = head[:-1]  # a bytes literal: [b"Mailbox doesn't exist: x"]
    before, after = head.rstrip()[-1:], text[m.end() :].lstrip()[:1]
    alone = before in ":([," and after in ")],;"  # "" (an end) is in both
    if quoted[0] in "'\"`":
        inner = quoted[1:-1]
        if alone and _SENTENCE.fullmatch(inner):
            return inner
        said = before == ":" or _MESSAGE_FIELD.search(head[-24:]) is not None
        if (alone or said) and _WORDY.match(inner):  # error: "Access denied, ...", message='...'
            return _QUOTED.sub(" quoted ", inner)
    return " quoted "  # a value stands where it was: "file '/x' exists" says no "file exists"


def words_code(text: str, *, whole: bool = False) -> tuple[str, str, str] | None:
    """``(code, message, phrase)`` of the first :data:`WORDS` phrase in ``text``, or ``None``.

    ``whole`` is for a code word standing alone (``declined``, ``UNAVAILABLE``); otherwise
    what the text quotes (:data:`_QUOTED`) is left out, but for a quoted sentence."""
    return _words_row(text if whole else _QUOTED.sub(_unquote, text[:2048]), whole)


# -- protocol number spaces ---------------------------------------------------------------


def _pair(row: list[str]) -> tuple[str, str]:
    return row[0], _message(row[1])


#: A protocol's own numbers (read only from an exception of that protocol's library, never
#: as an HTTP status): protocol -> number -> (code, message). SMTP and FTP 4xx replies are
#: transient by definition (RFC 5321 4.2.1, RFC 959 4.2): ``network_error``.
PROTOCOL_CODES: Mapping[str, Mapping[int, tuple[str, str]]] = MappingProxyType(
    {
        protocol: MappingProxyType({int(number): _pair(row) for number, row in rows.items()})
        for protocol, rows in DATA["protocol_codes"].items()
    }
)
#: A protocol's number no row of :data:`PROTOCOL_CODES` names, by its class: SMTP and FTP
#: 4xx replies are transient by definition (``network_error``, retryable); their other 5xx
#: replies are a command or policy the server will not accept (no baseline code fits).
PROTOCOL_CLASSES: Mapping[str, tuple[tuple[int, int, str, str], ...]] = MappingProxyType(
    {
        protocol: tuple((low, high, code, _message(msg)) for low, high, code, msg in rows)
        for protocol, rows in DATA["protocol_classes"].items()
    }
)


def protocol_code(protocol: str, number: int) -> tuple[str, str, bool] | None:
    """``(code, message, by_class)`` of a protocol's number: its row, else its class
    (``by_class``: it says only how, as a bare HTTP status does), else ``None``."""
    hit = PROTOCOL_CODES.get(protocol, {}).get(number)
    if hit is not None:
        return hit[0], hit[1], False
    for low, high, code, message in PROTOCOL_CLASSES.get(protocol, ()):
        if low <= number <= high:
            return code, message, True
    return None


#: SMTP enhanced status codes (RFC 3463) by ``subject.detail`` -> (code, message).
ENHANCED_STATUS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {key: _pair(row) for key, row in DATA["enhanced_status"].items()}
)


#: Response codes replies quote in brackets (IMAP, RFC 5530; POP3, RFC 2449/3206) -> code.
#: Read only in brackets: ``AUTH`` or ``EXPIRED`` alone in a field says too little.
RESPONSE_CODES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {key: _pair(row) for key, row in DATA["response_codes"].items()}
)
#: Response codes that say only how (``"how"`` in the table): their reply's words say what.
_HOW_REPLIES = frozenset(k for k, row in DATA["response_codes"].items() if row[2:] == ["how"])


# -- weigh -----------------------------------------------------------------------------------


def _row(row: FactRule, kind: str) -> Proposal:
    return Proposal(row.code, kind, f"facts:{row.kind}:{row.pattern}", row.message)


#: HTTP reason phrases (``Forbidden``, ``TooManyRequests``): a code word that is one says
#: what the status says, no more; it weighs as the status.
_REASONS = frozenset(tokens(s.phrase) for s in http.HTTPStatus)
#: 4xx reason phrases no code fits (``BadRequest``): a class so named says the server answered.
_CLIENT_REASONS = frozenset(
    tokens(s.phrase)
    for s in http.HTTPStatus
    if 400 <= s < 500 and STATUS_CODES.get(s, "internal_error") == "internal_error"
)


#: The local part of a namespace-qualified fault code (``soap:Client``) -> (code, kind).
QUALIFIED_CODES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {local: (row[0], row[1]) for local, row in DATA["qualified_codes"].items()}
)
_QUALIFIED = re.compile(r"^[A-Za-z][\w-]*:([A-Za-z]+)\b")
_SENDER: Mapping[str, str] = MappingProxyType(
    {"internal_error": _message("@invalid"), "network_error": _DOWN}
)


def _code_words(codes: Sequence[str]) -> Iterable[Proposal]:
    for code in codes:
        qualified = _QUALIFIED.match(code)
        fault = QUALIFIED_CODES.get(qualified.group(1)) if qualified else None
        if fault is not None:
            yield Proposal(fault[0], fault[1], f"fault:{code}", _SENDER[fault[0]])
            continue
        found = words_code(code, whole=True)
        if found is not None:
            kind = "status" if tokens(code) in _REASONS else _kind(found[2], "code")
            yield Proposal(found[0], kind, f"words:code:{found[2]}", found[1])


def _status(status: int) -> Proposal | None:
    code = STATUS_CODES.get(status)
    if code is None and 500 <= status <= 599:
        code = STATUS_5XX_CODE
    if code is None:
        return None
    if code == "internal_error":
        # A refusal no code fits (a 400, a 422) says that, not what: any reading that says
        # what decides, and a wrapper's words may know better; it outweighs only how.
        return Proposal(code, "refused", "http_status", f"downstream answered HTTP {status}", True)
    return Proposal(code, "status", "http_status", f"downstream answered HTTP {status}")


@functools.lru_cache(maxsize=1024)
def _text(text: str, answered: bool = False) -> tuple[Proposal, ...]:
    """A text's reading: a driver's or server's own phrase (:data:`PHRASE_RULES`), else the
    vocabulary's first hit on a line -- weak (a wrapper's words) unless a generic phrase of
    the same code is found too --, else a generic phrase (a timeout, a connection cut). A
    clause that guesses (:data:`_HEDGED`) is not read."""
    text = _HEDGED.sub(" ", text)
    quota = search(QUOTA_RULES, [text])
    if quota is not None and quota.kind == "reason":  # the server says why: a code word
        return (_row(quota, "code"),)
    driver = quota or search(PHRASE_RULES, [text])
    if driver is not None:
        return (_row(driver, "driver_phrase"),)
    generic = search(GENERIC_PHRASES, [text])
    how = _STRERRORS.get(m.group(0).lower()) if (m := _STRERROR.search(text)) else None
    for line in text.splitlines()[:16]:
        if answered and _reason_line(line):
            continue  # "402 Payment Required": what the status says, no more
        hit = words_code(_STRERROR.sub(" ", line))
        if hit is not None:
            weak = generic is None or generic.code != hit[0]
            kind = _kind(hit[2], "phrase")
            return (Proposal(hit[0], kind, f"words:text:{hit[2]}", hit[1], weak=weak),)
    if generic is not None:
        return (_row(generic, "phrase"),)
    if how is not None:  # only an errno's text: as much as an errno says
        return (Proposal(how, "how", "words:strerror", _MISSING, weak=True),)
    return ()


#: A clause a wrapper writes as a guess ("Error in request. Possibly authentication failed
#: [500]"): up to the end of its clause, it says what the wrapper does not know.
_HEDGED = re.compile(
    r"\b(?:possibly|perhaps|probably|presumably|maybe)\b[^.;:\n\[(]*", re.IGNORECASE
)


def _reason_line(line: str) -> bool:
    """A line that is an HTTP reason phrase, its status number before it or not."""
    return tuple(w for w in tokens(line) if not w.isdigit()) in _REASONS


#: An errno's own text (``strerror(ENOENT)``) says how, not what: a missing socket file is
#: a server not running, a missing program a dependency. Read as an errno, not as words.
#: ``EAGAIN``'s ("Resource temporarily unavailable": a lock another process holds, a full
#: non-blocking buffer) says only "not now", and no code.
_STRERRORS: Mapping[str, str | None] = MappingProxyType(
    {"no such file or directory": "not_found", "resource temporarily unavailable": None}
)
_STRERROR = re.compile("|".join(_STRERRORS), re.IGNORECASE)


def weigh(facts: Facts) -> list[Proposal]:
    """Every proposal the facts make (errnos and built-in types are ``classify``'s)."""
    found: list[Proposal] = list(_code_words(facts.codes))
    for reply in facts.replies:
        known = RESPONSE_CODES.get(reply)
        if known is None and reply[:1].isdigit():  # "5.1.1": subject.detail
            known = ENHANCED_STATUS.get(reply.partition(".")[2])
        if known is not None:
            kind = "status" if reply in _HOW_REPLIES else "code"
            found.append(Proposal(known[0], kind, f"reply:{reply}", known[1]))
    for protocol, number in facts.numbers:
        hit = protocol_code(protocol, number)
        if hit is not None:
            kind = "status" if hit[2] else "protocol"
            found.append(Proposal(hit[0], kind, f"protocol:{protocol}:{number}", hit[1]))
    if facts.sqlstate is not None:
        for row in SQLSTATE_RULES:
            if facts.sqlstate.upper().startswith(row.pattern):
                found.append(_row(row, "sqlstate"))
                break
    if facts.text:
        found.extend(_text(facts.text, facts.status is not None))
        quoted = _TEXT_ERRNO.search(facts.text)  # "system error: 110": the errno, as text
        number = int(quoted.group(1)) if quoted else -1
        if number in ERRNO_CODES:
            found.append(Proposal(ERRNO_CODES[number], "how", "errno:text", f"errno {number}"))
    if facts.status is not None:
        status = _status(facts.status)
        if status is not None:
            found.append(status)
    return found


#: Words of a class name that say only *how* a call failed (a connection): weak, and weaker
#: than any other evidence (``AuthenticationError(ConnectionError)`` is ``auth_failed``).
HOW_NAMES: tuple[tuple[str, ...], ...] = tuple(tuple(p.split()) for p in DATA["how_names"])


def _reason_name(name: str) -> bool:
    """A class named for an HTTP reason phrase (``ForbiddenError``): a library's class per
    status, whatever status it holds; it says what a status says."""
    words = tokens(name)
    return (words[:-1] if words[-1:] and words[-1] in _SUFFIXES else words) in _REASONS


def _exists_name(words: tuple[str, ...]) -> bool:
    """A class named for a thing that exists (``NodeExistsError``, ``NodeExists``), not for
    one that does not (``NotExistsError``)."""
    head = words[:-1] if words[-1:] and words[-1] in ("error", "exception") else words
    return len(head) >= 2 and head[-1] == "exists" and not {"not", "no"} & set(words)


_EXISTS = _message("@exists")


@functools.lru_cache(maxsize=1024)
def name_proposal(type_names: tuple[str, ...], status: int | None = None) -> Proposal | None:
    """What a class name says: the first class of the MRO whose words are in :data:`WORDS`
    (weak: a library's summary, the exception it wraps may know better); a name that says
    only how (:data:`HOW_NAMES`) is weaker still. A name that restates the HTTP ``status``
    the exception holds (an SDK's ``PermissionDeniedError`` for each 403) is no evidence
    of its own: it weighs as the status."""
    answered = False
    said = _status(status) if status is not None else None
    for name in type_names:
        hit = words_code(name, whole=True)
        if hit is not None and hit[0] != "network_error":  # SlowDown: slow down, not down
            restated = said is not None and said.code == hit[0]
            kind = "status" if restated or _reason_name(name) else "name"
            return Proposal(hit[0], _kind(hit[2], kind), f"name:{name}", hit[1], weak=True)
        words = tokens(name)
        if hit is None and words in _CLIENT_REASONS:
            answered = True  # its bases' names (NetworkError) say how a call may fail: not so
        if hit is None and _exists_name(words):
            return Proposal("already_exists", "name", f"name:{name}", _EXISTS, weak=True)
        if answered:
            continue
        if hit is not None or any(_found(words, phrase) for phrase in HOW_NAMES):
            return Proposal("network_error", "how", f"name:{name}", _DOWN, weak=True)
    return None


#: Pairs of codes one rule settles at equal strength: quota over throttling (an exhausted
#: quota is also "too many") and over a refusal (an account refused *because* its quota,
#: credits or billing ran out), a timeout over the connection it happened on
#: (``[settled]`` of ``evidence.toml``).
SETTLED: Mapping[frozenset[str], str] = MappingProxyType(
    {frozenset(row[:2]): row[2] for row in DATA["settled"]["rows"]}
)

#: HTTP statuses that veto codes whatever else is said: a 413 or a 402 request never passes
#: by waiting (not ``rate_limited``); ``[vetoes]`` of ``evidence.toml``.
VETOES: Mapping[int, frozenset[str]] = MappingProxyType(
    {int(status): frozenset(codes) for status, codes in DATA["vetoes"].items()}
)


#: Words of a quota's window (``[windows]``): ``short`` (an hour or less), ``long``.
WINDOWS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {size: tuple(phrases) for size, phrases in DATA["windows"].items()}
)
_SHORT = tuple(_Phrase.of(tuple(p.split())) for p in WINDOWS["short"])
_LONG = tuple(_Phrase.of(tuple(p.split())) for p in WINDOWS["long"])


#: The longest wait a server may ask for a quota it still calls a rate limit (an hour).
_SOON = 3600.0


def _refills_soon(facts: Facts, delay: float | None, kind: str) -> bool:
    """A quota the server says refills within the hour: its text or codes name a window of
    an hour or less (``[windows]``) and none longer (a day, a month, a credit); or, named
    by no window and said in words rather than a code (``insufficient_quota`` is
    exhausted whatever the wait), it asks for a delay that short."""
    window = _window(facts.text[:2048], facts.codes)
    if window is not None:
        return window == "short"
    delay = delay if delay is not None else facts.delay
    return kind != "code" and delay is not None and delay <= _SOON


@functools.lru_cache(maxsize=256)
def _window(text: str, codes: tuple[str, ...]) -> str | None:
    """The window of a quota that a text or its code words name (``[windows]``): ``long``
    when any longer than an hour is named, else ``short`` when one is, else ``None``."""
    words = tuple(singular(w) for t in (text, *codes) for w in tokens(t))
    present, joined = frozenset(words), " " + " ".join(words)
    for size, phrases in (("long", _LONG), ("short", _SHORT)):
        if any(p.found(words, present, joined) for p in phrases):
            return size
    return None


#: A database server's answer to a statement, quoted (PostgreSQL's severity ``ERROR:``; a
#: session that ends is ``FATAL:``): the statement failed, its connection did not.
_STATEMENT = re.compile(r"(?:^|[\s:])ERROR:\s")

#: Kinds of reading that may say only how a call failed, not what the server answered.
_HOW_KINDS = frozenset({"phrase", "how", "name"})


def _event(p: Proposal) -> bool:
    return not p.weak and not p.rule.endswith(":timeout")  # the noun, in a text or a tool's


def _under_429(p: Proposal) -> bool:
    """A reading a 429 overrules: the server itself says the call was throttled. A busy or
    overloaded server's words ("capacity exceeded"), and a condition no code fits said
    only in free text ("data too large"), do not say otherwise; a code word or a name
    that says what (a quota, a refused credential) does."""
    return p.code == "network_error" or (p.code == "internal_error" and p.kind == "phrase")


#: Statuses servers answer for many reasons (``[overloaded]``: a 403 is a refused
#: credential, a plan's quota, a read-only token, a region...): beside a code word that says
#: something specific no table reads, such a status alone decides nothing.
_OVERLOADED = frozenset(DATA["overloaded"]["statuses"])
_GENERIC_CODE_WORDS = frozenset(DATA["overloaded"]["generic_words"])


def _phrase(p: Proposal) -> str:
    """The :data:`WORDS` phrase a reading found (a class name's, a text's, a code word's),
    else ``""``."""
    if p.rule.startswith("name:"):
        hit = words_code(p.rule[5:], whole=True)
        return hit[2] if hit is not None else ""
    return p.rule.rpartition(":")[2] if p.rule.startswith("words:") else ""


def _unread(found: Sequence[Proposal], facts: Facts) -> bool:
    """Whether the facts hold a specific code word (not only generic words: "error",
    "invalid request") that no proposal of ``found`` reads."""
    read = any(p.rule.startswith(("words:code:", "fault:", "reply:")) for p in found)
    specific = any(set(tokens(c)) - _GENERIC_CODE_WORDS for c in facts.codes)
    return specific and not read


def decide(found: Sequence[Proposal], facts: Facts, delay: float | None = None) -> Verdict | None:
    """The code the strongest proposals agree on (:data:`SETTLED` for a known pair), else
    ``internal_error``; ``None`` when nothing was proposed. ``delay`` is the server's own
    (from the facts or the chain): it turns an unavailable service into ``rate_limited``."""
    if facts.status is not None and 400 <= facts.status < 500 and facts.status != 429:
        # The server answered: a connection's failure said in words or by a type is not it.
        found = [p for p in found if p.code != "network_error" or p.kind not in _HOW_KINDS]
    elif _STATEMENT.search(facts.text):
        # The server answered the statement: a class named for the connection object, or
        # an errno, says how calls on it may fail, not that this one did.
        found = [p for p in found if p.code != "network_error" or p.kind != "how"]
    if not found:
        return None
    if len(found) == 1:
        strongest = list(found)
        codes = {found[0].code}
    else:
        weights = [STRENGTH[p.kind] for p in found]
        top = max(weights)
        strongest = [p for p, w in zip(found, weights, strict=True) if w == top]
        codes = {p.code for p in strongest}
    if len(codes) > 1:
        settled = SETTLED.get(frozenset(codes))
        if settled is None:
            named = ", ".join(sorted(codes))
            return Verdict(
                "internal_error",
                f"the failure's evidence conflicts ({named}); no code is guessed",
                "conflict:" + "|".join(sorted(p.rule for p in strongest)),
            )
        strongest = [p for p in strongest if p.code == settled]
    chosen = strongest[0]
    if chosen.code == "network_error":
        # A connection lost *because* it timed out ("Lost connection (timed out)", an
        # ETIMEDOUT): the timeout, said as an event by any evidence not a guess, is the
        # what. The noun alone ("timeout setting 5") may name a setting: it decides nothing.
        chosen = next((p for p in found if p.code == "timeout" and _event(p)), chosen)
    if chosen.code == "internal_error" and facts.status == 503 and chosen.rule.startswith("words:"):
        # a condition no code fits, said under 503: the server itself calls it temporary
        chosen = next((p for p in found if p.rule == "http_status"), chosen)
    if chosen.rule == "http_status" and facts.status in _OVERLOADED and _unread(found, facts):
        return Verdict(
            "internal_error",
            f"the downstream answered HTTP {facts.status} with a code no table reads",
            f"unread:http_{facts.status}",
        )
    answered = ANSWERED.get(_phrase(chosen)) if facts.status is not None else None
    if answered is not None:  # "name not resolved" in a 500's body: a name it looked up
        return Verdict(answered[0], answered[1], f"answered:{facts.status}:{chosen.rule}")
    code = chosen.code
    if code == QUOTA_CODE and _refills_soon(facts, delay, chosen.kind):
        code = "rate_limited"  # tokens per minute: a quota of a window waited out
    vetoed = VETOES.get(facts.status or 0, frozenset())
    if code in vetoed:
        return Verdict(
            "internal_error",
            f"the downstream answered HTTP {facts.status}: the request cannot pass as it is",
            f"veto:http_{facts.status}:{chosen.rule}",
        )
    if delay is None:
        delay = facts.delay
    wait = delay if delay is not None else facts.reset
    if code == "network_error" and delay is not None:
        code = "rate_limited"  # "unavailable, come back in N s", wherever it is said
    elif facts.status == 429 and _under_429(chosen):
        code = "rate_limited"
    elif (
        facts.status == 429
        and _phrase(chosen) in KINDLESS_PHRASES
        and _window(facts.text[:2048], facts.codes) != "long"
    ):
        code = "rate_limited"  # a limit said with no kind: the 429's, but for a month's
    elif facts.status == 401 and code == "not_found" and chosen.kind in ("phrase", "code"):
        # "the access token could not be found", access_token_not_found: under a 401, what
        # a sentence or a code word says is missing is the credential the server asked
        # for (a library's class named for a missing repository says what)
        code = "auth_failed"
    return Verdict(
        code=code,
        message=chosen.message if code == chosen.code else _OVERRULED.get(code, chosen.message),
        rule=chosen.rule,
        retry_after=wait if code == "rate_limited" else None,
        weak=chosen.weak and all(p.weak for p in found if p.code == chosen.code),
    )


# -- lines of a tool's output ----------------------------------------------------------------

#: errno -> baseline code (``[errno]`` of ``evidence.toml``, by name).
ERRNO_CODES: Mapping[int, str] = MappingProxyType(
    {getattr(errno, name): code for name, code in DATA["errno"].items()}
)

#: A tool's line quoting a protocol's reply in that protocol's own format: an SMTP reply
#: with its enhanced status code of the same class (``<** 550 5.1.1 ...``, after the tool's
#: name and a label of up to two words, ``msmtp: server message: 550 5.1.1``: the pair
#: says SMTP, whatever the tool); a tool named for a protocol (``mariadb``: MySQL) printing
#: ``ERROR 1049 (42000): ...``; an errno a line quotes (``system error: 110``,
#: ``errno 111``, ``os error 111``).
_SMTP_LINE = re.compile(
    r"^(?:[\w-]+:(?: [A-Za-z]+){0,2}:\s+)?\W*([245])(\d\d)[ -]([245]\.\d{1,3}\.\d{1,3})\b",
    re.MULTILINE,
)
_ERROR_LINE = re.compile(r"^\W*error\s+(\d{1,5})\b(?:\s*\((\w{5})\))?", re.I | re.MULTILINE)
_TEXT_ERRNO = re.compile(r"\b(?:errno|system error|os error)\W{0,3}(\d{1,4})\b", re.I)


def read_tool(text: str, replies: str = "", protocol: str | None = None) -> Verdict | None:
    """A failed tool's verdict: ``text`` (its stderr, or its only output) read with the
    vocabulary (:func:`read_lines`), else with the phrases of drivers and servers it passes
    on (:data:`PHRASE_RULES`, the generic ones), the replies quoted in ``text`` or ``replies`` (its
    other output) read as their protocol's numbers, the errnos ``text`` quotes, weighed
    and decided as any exception's facts are."""
    if _USAGE.search(_ANSI.sub("", text[:MAX_TOOL_TEXT])):
        refused = "the tool refused its own command line (it printed its usage)"
        return Verdict("internal_error", refused, "usage")
    numbers: list[tuple[str, int]] = []
    quoted: list[str] = []
    sqlstate = None
    for both in (text, replies):
        for m in _SMTP_LINE.finditer(both[:MAX_TOOL_TEXT]):
            if m.group(1) == m.group(3)[0]:
                numbers.append(("smtp", int(m.group(1) + m.group(2))))
                quoted.append(m.group(3))
        if protocol is not None:
            for m in _ERROR_LINE.finditer(both[:MAX_TOOL_TEXT]):
                numbers.append((protocol, int(m.group(1))))
                sqlstate = sqlstate or m.group(2)
        quoted += [c for c in _RESPONSE_LINE.findall(both[:MAX_TOOL_TEXT]) if c in RESPONSE_CODES]
    reply = reply_facts(replies) or Facts()
    if reply.status is None:
        reply = replace(reply, status=_quoted_status(text[:MAX_TOOL_TEXT]))
    facts = replace(reply, numbers=tuple(numbers[:8]), replies=tuple(quoted[:8]), sqlstate=sqlstate)
    found = weigh(facts)
    for raised in _RAISED.findall(text[:MAX_TOOL_TEXT]):
        named = name_proposal((raised,))
        if named is not None and named.kind == "how":  # what a name says, the words say
            found.append(named)
            break
    words = read_lines(text)
    if words is not None:
        found.append(Proposal(words[0], "phrase", f"words:{words[2]}", words[1]))
        brief = 0 < len(replies) <= 512 and replies.count("\n") <= 4  # a message, no listing
        other = read_lines(replies) if brief else None
        if other is not None and other[0] != words[0]:
            # a brief other output is the server's own message (an FTP client prints its
            # replies): what it says weighs as much as the tool's summary ("Login failed"
            # over "the maximum number of clients for this user are already connected")
            found.append(Proposal(other[0], "phrase", f"words:output:{other[2]}", other[1]))
    else:  # a driver's or server's phrase the tool passes on ("too many connections")
        rules = (QUOTA_RULES, PHRASE_RULES, GENERIC_PHRASES)
        said = next((hit for r in rules if (hit := search(r, [text[:MAX_TOOL_TEXT]]))), None)
        if said is not None:
            found.append(_row(said, "phrase"))
    for m in _TEXT_ERRNO.finditer(text[:MAX_TOOL_TEXT]):
        code = ERRNO_CODES.get(int(m.group(1)))
        if code in _CONNECTION_CODES:  # how a connection failed; ENOENT may be anything
            found.append(Proposal(code, "how", "errno", f"the tool failed with errno {m.group(1)}"))
            break
    verdict = decide(found, facts)
    if verdict is not None and verdict.code == "rate_limited" and verdict.retry_after is None:
        verdict = replace(verdict, retry_after=stated_delay(text))  # "retry after 5"
    return verdict


_CONNECTION_CODES = frozenset({"network_error", "timeout"})
#: A tool's usage line (click's ``Usage: tool [OPTIONS]``, argparse's ``usage: tool [-h]``):
#: it refused its own command line before it looked anything up.
#: Its hint to read its help (``Try "pg_waldump --help" for more information``), or a
#: ``Usage`` heading on a line of its own, says the same.
_USAGE = re.compile(
    r"^\s*usage:\s+\S|^\s*usage:?\s*$|\btry\s+[\"'`]?[\w.-]+\s+--help\b",
    re.IGNORECASE | re.MULTILINE,
)
#: A terminal's escape sequences (bold, colour) a tool prints around its words.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: An HTTP status a tool's line quotes with its own reason phrase (``403 (Forbidden)``,
#: ``404 Not Found``): the pair says HTTP, whatever the tool.
_STATUS_PAIR = re.compile(r"\b([1-5]\d\d) \(?([A-Z][A-Za-z' -]{1,40}?)(?=\)|$|[:.,;\n])", re.M)


def _quoted_status(text: str) -> int | None:
    for m in _STATUS_PAIR.finditer(text):
        number = int(m.group(1))
        if number in _PHRASES and _PHRASES[number] == m.group(2).strip().lower():
            return number
    named = STATUS_SAID.search(text)  # status=504, status code: 403
    return int(named.group(1)) if named is not None else None


_PHRASES: Mapping[int, str] = MappingProxyType({int(s): s.phrase.lower() for s in http.HTTPStatus})
#: A response code (RFC 2449/3206, RFC 5530) opening a tool's line, after its name, or after
#: a POP3 ``-ERR`` or an IMAP ``NO``/``BAD`` anywhere in it: ``fetch: [IN-USE] Mailbox is
#: locked``, ``LOGIN returned an error: NO [CONTACTADMIN] Suspended``.
_RESPONSE_LINE = re.compile(
    r"(?:^(?:[\w.-]+:\s*)?|(?:-ERR|\bNO|\bBAD)\s+)\[([A-Z][A-Z0-9/-]{1,40})\]", re.M
)
#: An exception a tool's line quotes by its class name, raised (``ConnectionError: ...``,
#: ``RemoteDisconnected(...)``): a name that says how is read as a class name is.
_RAISED = re.compile(r"\b([A-Z][a-z]+(?:[A-Z][a-z]+)+)(?::\s|\()")
#: Characters of a tool's output read for replies and errnos.
MAX_TOOL_TEXT = 16 * 1024

#: Lines that summarise an earlier error (``no matching distribution``, ``exit status 1``,
#: ``see the log``) or are an aside, labelled so after the tool's name or not (a notice, a
#: warning, a detail: ``NOTICE: table "x" does not exist, skipping``, ``*** IMAP Warning
#: ***``): read only when no other line says anything.
_SUMMARY = re.compile(
    r"no matching distribution|could not find a version|exit (status|code)|see (the )?log|"
    r"for more information|^\s*at\s|^\W*(?:(?:hint|note|notice|info|warning|warn|detail)\b"
    r"|[\w.-]+:\s*(?:hint|note|notice|info|warning|warn|detail)\s*:)|^\W*\*+[^*\n]*\bwarning\b",
    re.IGNORECASE,
)


#: A line that opens a list of what may have caused the failure ("Most common reasons for
#: this are:", "possible causes:"), or a tool's suggestion: its items are guesses, never
#: what happened; when nothing else says something, they make the cause unknown.
_GUESSES = re.compile(
    r"\b(?:common|possible|likely|probable)\s+(?:reasons?|causes?)\b|^\W*suggestions?\b",
    re.IGNORECASE,
)
#: An item of a list (``* Target node is unreachable``, ``- the cookie differs``).
_ITEM = re.compile(r"^\s*(?:[*\u2022-]|\d+[.)])\s")
_GUESSED = "the tool lists possible causes of the failure; which one is not known"
#: A line that is one code word on its own (``not_found`` under ``Error:``): read whole.
_CODE_LINE = re.compile(r"\s*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\s*")


#: A line quoting the server's own message (``mpop: POP3 server message: -ERR ...``,
#: ``server replied: ...``): the text after the label.
_SERVER_SAID = re.compile(
    r"\b(?:server|remote host|peer)\s+(?:message|said|says|replied|reply|response|answered)"
    r"\s*:\s*(.+)$",
    re.IGNORECASE | re.MULTILINE,
)


def read_lines(text: str) -> tuple[str, str, str] | None:
    """``(code, message, phrase)`` for a tool's output read with :data:`WORDS`: what a line
    quotes the server saying (:data:`_SERVER_SAID`), else the first line that says
    something, lines summarising an earlier error last. A line that says
    only that the connection failed (``Unable to connect to a repository``) gives way to a
    later line that says what (``Authentication error from server``)."""
    later: list[str] = []
    how: tuple[str, str, str] | None = None
    for line in _SERVER_SAID.findall(text[:MAX_TOOL_TEXT])[:8]:
        found = words_code(line)
        if found is not None:  # what the server said, over the tool's own summary of it
            return found
    guesses: list[str] = []
    guessing = False
    for line in text.splitlines()[:400]:
        if not line.strip():
            continue
        if _GUESSES.search(line):
            guessing = True  # the causes it may have, listed below: not what happened
            continue
        guessing = guessing and _ITEM.match(line) is not None
        if guessing:
            guesses.append(line)
            continue
        if _SUMMARY.search(line):
            later.append(line)
            continue
        found = words_code(line, whole=_CODE_LINE.fullmatch(line) is not None)
        if found is not None and found[0] != "network_error":
            return found
        how = how or found
    if how is not None:
        return how
    for line in later:
        found = words_code(line)
        if found is not None:
            return found
    if any(words_code(line) is not None for line in guesses[:16]):
        return ("internal_error", _GUESSED, "possible causes")  # a guess decides nothing
    return None
