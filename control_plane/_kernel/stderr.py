"""Classifying a tool's failure: ordered ``(regex, code)`` stderr rules and exit-status tables.

The rules are data (``stderr_tables.toml``), only where the general vocabulary
(:func:`control_plane._kernel.evidence.read_lines`) is not enough. The first matching rule
wins and its message is fixed text, never the stderr. Tables are
picked by the tool ``argv`` runs and by the lines its stderr holds (:func:`classify_tool`).
Running tools is ``_features/grants/tool_process.py``'s.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from control_plane._kernel.classify import Classification, from_verdict
from control_plane._kernel.errors import PackError
from control_plane._kernel.evidence import read_tool
from control_plane._kernel.fact_rules import load, message
from control_plane._kernel.facts import PROTOCOL_WORDS
from control_plane._kernel.redact import scrub_tail

__all__ = [
    "CONTENT_TABLES",
    "CURL",
    "CURL_EXITS",
    "CURL_RULES",
    "FFMPEG",
    "FFMPEG_RULES",
    "GIT",
    "GIT_RULES",
    "SSH",
    "SSH_RULES",
    "TLS_RULES",
    "TOOL_TABLES",
    "WGET",
    "WGET_EXITS",
    "WGET_RULES",
    "ExitRule",
    "StderrClassifier",
    "StderrRule",
    "ToolFailed",
    "ToolRun",
    "ToolTable",
    "classify_tool",
    "http_status_rules",
    "raise_for_failure",
    "resolve_binary",
    "rule",
    "stderr_text",
    "table_for",
    "tables_for",
    "tool_name",
]

#: How much of a tool's stderr is kept (the tail, where the ``fatal:`` line is).
MAX_STDERR = 64 * 1024


@dataclass(frozen=True, slots=True)
class StderrRule:
    """One row of a table: if ``pattern`` occurs in stderr, the failure is ``code``.

    ``message`` is what the caller reads; it is fixed text, so nothing from the stderr
    (URLs, user names, tokens, paths) can leak through it. ``name`` is a stable id for
    tests, logs and docs.
    """

    name: str
    code: str
    pattern: re.Pattern[str]
    message: str
    retry_after: float | None = None

    def error(self) -> PackError:
        """The typed error this rule stands for."""
        found = Classification(self.code, self.message, retry_after=self.retry_after)
        return PackError(found.code, found.message, retry_after=found.retry_after)


def rule(
    name: str,
    code: str,
    regex: str,
    message: str,
    *,
    retry_after: float | None = None,
    flags: int = re.IGNORECASE | re.MULTILINE,
) -> StderrRule:
    """A :class:`StderrRule` from a regex string (case-insensitive, multi-line)."""
    return StderrRule(name, code, re.compile(regex, flags), message, retry_after)


def stderr_text(stderr: str | bytes) -> str:
    """The tail of ``stderr`` the tables read (:data:`MAX_STDERR`), as text with ``\\n`` lines."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    return stderr[-MAX_STDERR:].replace("\r\n", "\n").replace("\r", "\n")


class StderrClassifier:
    """An ordered table of :class:`StderrRule`; the first match wins."""

    __slots__ = ("name", "rules")

    def __init__(self, rules: Iterable[StderrRule], *, name: str = "stderr") -> None:
        self.rules: tuple[StderrRule, ...] = tuple(rules)
        self.name = name
        seen: set[str] = set()
        for item in self.rules:
            if item.name in seen:
                raise ValueError(f"duplicate stderr rule name {item.name!r}")
            seen.add(item.name)

    def match(self, stderr: str | bytes) -> StderrRule | None:
        """The first rule whose pattern occurs in ``stderr``, or ``None``."""
        text = stderr_text(stderr)
        for item in self.rules:
            if item.pattern.search(text):
                return item
        return None

    def error(self, stderr: str | bytes) -> PackError | None:
        """A :class:`PackError` with the matching rule's code and fixed message."""
        return _error(self.classify(stderr))

    def classify(self, stderr: str | bytes) -> Classification | None:
        """A :class:`Classification` (for ``classify_exception`` hooks), or ``None``."""
        found = self.match(stderr)
        if found is None:
            return None
        retry = found.retry_after
        rule = f"stderr:{self.name}:{found.name}"
        return Classification(found.code, found.message, retry_after=retry, rule=rule)

    def extend(
        self, rules: Iterable[StderrRule], *, first: bool = True, name: str | None = None
    ) -> StderrClassifier:
        """A new classifier with ``rules`` tried before (or after) this one's."""
        extra = tuple(rules)
        ordered = (*extra, *self.rules) if first else (*self.rules, *extra)
        return StderrClassifier(ordered, name=name or self.name)

    def __len__(self) -> int:
        return len(self.rules)


@dataclass(frozen=True, slots=True)
class ExitRule:
    """A documented exit status of a tool: the failure it stands for, in fixed words."""

    status: int
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ToolTable:
    """What one tool's failures mean: stderr rules first, then its exit statuses."""

    name: str
    stderr: StderrClassifier
    exits: Mapping[int, ExitRule] = field(default_factory=lambda: MappingProxyType({}))
    #: Lines that show this tool's messages inside another's stderr (ssh's in scp's,
    #: rsync's, git's): the table is then tried after the named tool's (:func:`classify_tool`).
    marks: re.Pattern[str] | None = None

    def classify(self, returncode: int | None, stderr: str | bytes | None) -> Classification | None:
        """The failure's classification, or ``None`` when neither table knows it."""
        if stderr:
            found = self.stderr.classify(stderr)
            if found is not None:
                return found
        exit_rule = self.exits.get(returncode) if isinstance(returncode, int) else None
        if exit_rule is None:
            return None
        return Classification(
            code=exit_rule.code,
            message=exit_rule.message,
            rule=f"exit:{self.name}:{exit_rule.status}",
        )

    def error(self, returncode: int | None, stderr: str | bytes | None) -> PackError | None:
        """A :class:`PackError` for the failure, or ``None``."""
        return _error(self.classify(returncode, stderr))


def _error(found: Classification | None) -> PackError | None:
    """The typed error of a classification (``rate_limited`` has its default delay)."""
    if found is None:
        return None
    return PackError(found.code, found.message, retry_after=found.retry_after)


# -- the tables: data (stderr_tables.toml) -------------------------------------------

_Row = list[Any]
_DATA = load(Path(__file__).with_name("stderr_tables.toml"))


def http_status_rules(prefix: str, regex: str) -> tuple[StderrRule, ...]:
    """Rules for an HTTP status a tool prints: ``regex`` has one ``{status}`` slot; the
    statuses, codes and messages are the ``[http]`` rows of ``stderr_tables.toml``."""
    return tuple(
        rule(
            f"{prefix}_http_{name}", code, regex.format(status=f"({statuses})"), message(msg, _DATA)
        )
        for name, code, statuses, msg in _DATA["http"]["rows"]
    )


def _rules(name: str, built: dict[str, tuple[StderrRule, ...]]) -> tuple[StderrRule, ...]:
    """The rows of table ``name``: ``["@other"]`` includes another table's rows,
    ``["@http", prefix, regex]`` the HTTP-status rows, else ``[name, code, regex, message]``."""
    if name not in built:
        found: list[StderrRule] = []
        for row in _DATA["rules"][name]["rows"]:
            if row[0] == "@http":
                found += http_status_rules(row[1], row[2])
            elif row[0].startswith("@"):
                found += _rules(row[0][1:], built)
            else:
                found.append(rule(row[0], row[1], row[2], message(row[3], _DATA)))
        built[name] = tuple(found)
    return built[name]


def _all_rules() -> Mapping[str, tuple[StderrRule, ...]]:
    """Every table of the data file, each built once (a table may include another)."""
    built: dict[str, tuple[StderrRule, ...]] = {}
    for name in _DATA["rules"]:
        _rules(name, built)
    return MappingProxyType(built)


_BUILT = _all_rules()
#: OpenSSL/GnuTLS messages as curl, wget and git print them, in order.
TLS_RULES = _BUILT["tls"]
#: OpenSSH client messages (``ssh``, and git's ssh transport).
SSH_RULES = _BUILT["ssh"]
#: git CLI messages (local, ``file://``, ``git://``, smart HTTP via curl, ssh), in order.
GIT_RULES = _BUILT["git"]
#: curl messages (with ``-sS``), tried before its exit status.
CURL_RULES = _BUILT["curl"]
#: wget messages, tried before its exit status (run it with ``--tries=1``).
WGET_RULES = _BUILT["wget"]
#: ffmpeg / ffprobe messages for network inputs and missing files.
FFMPEG_RULES = _BUILT["ffmpeg"]
_CLASSIFIERS = MappingProxyType(
    {name: StderrClassifier(rules, name=name) for name, rules in _BUILT.items()}
)
SSH, GIT, CURL = _CLASSIFIERS["ssh"], _CLASSIFIERS["git"], _CLASSIFIERS["curl"]
WGET, FFMPEG = _CLASSIFIERS["wget"], _CLASSIFIERS["ffmpeg"]


def _exits(name: str) -> Mapping[int, ExitRule]:
    rows: list[_Row] = _DATA["exits"][name]["rows"]
    return MappingProxyType({s: ExitRule(s, code, message(msg, _DATA)) for s, code, msg in rows})


#: curl's documented exit statuses (``man curl``, EXIT CODES) that name one failure.
CURL_EXITS = _exits("curl")
#: wget's documented exit statuses (``man wget``, EXIT STATUS).
WGET_EXITS = _exits("wget")


def _tools() -> dict[str, ToolTable]:
    found: dict[str, ToolTable] = {}
    for tool, spec in _DATA["tools"].items():
        if "same" in spec:
            found[tool] = found[spec["same"]]
            continue
        marks = spec.get("marks")
        found[tool] = ToolTable(
            tool,
            _CLASSIFIERS[spec["rules"]],
            _exits(spec["exits"]) if "exits" in spec else MappingProxyType({}),
            re.compile(marks, re.MULTILINE) if marks is not None else None,
        )
    return found


#: Tool name (``argv[0]``'s base name) -> its table; :func:`table_for` picks one.
TOOL_TABLES: Mapping[str, ToolTable] = MappingProxyType(_tools())

#: The tables picked by content: each whose ``marks`` occur in a stderr is tried, in this
#: order, after the table of the tool named by ``argv`` (:func:`classify_tool`).
CONTENT_TABLES: tuple[ToolTable, ...] = tuple(
    table for name, table in TOOL_TABLES.items() if table.marks is not None and table.name == name
)


#: Programs that run another program (``env LC_ALL=C curl ...``): the tool is the one they
#: run, past their options (``[wrappers]`` of the data file: each with its options that take
#: a separate value, ``env -u NAME``), ``env``'s ``VAR=value`` and ``timeout``'s duration.
_WRAPPER_VALUE_OPTIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {name: frozenset(options) for name, options in _DATA["wrappers"].items()}
)
_WRAPPERS = frozenset(_WRAPPER_VALUE_OPTIONS)
#: Shells whose ``-c SCRIPT`` runs the script's first word.
_SHELLS = frozenset(_DATA["shells"])
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: Wrappers unwrapped at most (``env ... timeout 10 sh -c 'curl ...'`` is three).
_MAX_UNWRAP = 4


def _words(argv: Sequence[str] | str | bytes | None) -> list[str] | None:
    if isinstance(argv, bytes):
        argv = argv.decode("utf-8", "replace")
    if isinstance(argv, str):
        try:
            return shlex.split(argv)
        except ValueError:  # unbalanced quotes: a plain split is good enough for a name
            return argv.split()
    if isinstance(argv, Sequence):
        return [
            os.fsdecode(item) if isinstance(item, str | bytes | os.PathLike) else ""
            for item in list(argv[:64])
        ]
    return None


def _basename(word: str) -> str:
    name = os.path.basename(word)
    return name[:-4] if name.lower().endswith(".exe") else name


def _unwrap(name: str, rest: list[str]) -> list[str] | None:
    """The argv a wrapper ``name`` runs (``rest`` is what follows it), or None."""
    if name in _SHELLS:
        for index, word in enumerate(rest):
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word):
                script = _words(rest[index + 1] if index + 1 < len(rest) else "") or []
                while script and (script[0] in {"exec", "command"} or _ASSIGN.match(script[0])):
                    script = script[1:]  # exec curl ..., LC_ALL=C curl ...
                return script or None
            if not word.startswith("-"):
                return None  # sh script.sh: the tool is the script
        return None
    takes_value = _WRAPPER_VALUE_OPTIONS.get(name, frozenset())
    index = 0
    while index < len(rest):
        word = rest[index]
        if word == "--":
            index += 1
            break
        if word in takes_value:
            index += 2
        elif (word.startswith("-") and len(word) > 1) or (name == "env" and "=" in word):
            index += 1  # an option, or env's VAR=value
        else:
            break
    if name == "timeout":
        index += 1  # the duration
    return rest[index:] or None


def tool_name(argv: Sequence[str] | str | bytes | None) -> str | None:
    """The tool an ``argv`` runs: the base name of its first element, without ``.exe``;
    through wrappers (``env VAR=x``, ``timeout 10``, ``nice``, ``sh -c 'curl ...'``), the
    tool they run."""
    words = _words(argv)
    for _ in range(_MAX_UNWRAP + 1):
        if not words:
            return None
        name = _basename(words[0])
        if name not in _WRAPPERS and name not in _SHELLS:
            return name or None
        inner = _unwrap(name, words[1:])
        if inner is None:
            return name or None
        words = inner
    return None


def table_for(argv: Sequence[str] | str | bytes | None) -> ToolTable | None:
    """The :data:`TOOL_TABLES` entry for the tool ``argv`` runs, if there is one."""
    name = tool_name(argv)
    return TOOL_TABLES.get(name) if name is not None else None


def tables_for(
    argv: Sequence[str] | str | bytes | None, stderr: str | bytes | None
) -> tuple[ToolTable, ...]:
    """The tables that may know a failure: the named tool's (:func:`table_for`), then each
    of :data:`CONTENT_TABLES` whose marks occur in ``stderr`` (ssh's lines inside scp's,
    rsync's or git's; docker's inside a wrapper script's)."""
    named = table_for(argv)
    found = [named] if named is not None else []
    if stderr:
        text = stderr_text(stderr)
        for table in CONTENT_TABLES:
            if table.marks is not None and table.marks.search(text) and table not in found:
                found.append(table)
    return tuple(found)


def classify_tool(
    argv: Sequence[str] | str | bytes | None,
    returncode: int | None,
    stderr: str | bytes | None,
    output: str | bytes | None = None,
) -> Classification | None:
    """A failed tool run's classification: the stderr rules of :func:`tables_for`'s tables
    in order, then the named tool's exit statuses, then any tool's stderr read by the
    engine of :mod:`control_plane._kernel.evidence` (:func:`~control_plane._kernel.evidence.
    read_tool`: its vocabulary, and the protocol replies it or ``output`` quote) -- also
    over an exit status no code fits, which says only how; ``None`` when none knows it."""
    tables = tables_for(argv, stderr)
    if stderr:
        for table in tables:
            found = table.stderr.classify(stderr)
            if found is not None:
                return found
    named = table_for(argv)
    found = named.classify(returncode, None) if named is not None else None
    if stderr and (found is None or found.code == "internal_error"):
        # An exit status no code fits says how (wget's 8: "the server answered an error"):
        # the tool's lines may say what. Any tool, with or without a table: its lines read
        # with the engine's vocabulary (the first line that says something over lines that
        # summarise it), the replies of a protocol it quotes, in the format that names it.
        name = tool_name(argv)
        verdict = read_tool(
            stderr_text(stderr),
            stderr_text(output) if output else "",
            PROTOCOL_WORDS.get(name.lower()) if name else None,
        )
        if verdict is not None and verdict.code == "not_found" and _set_up(argv, stderr):
            return Classification(
                code="internal_error",
                message="a file the tool's own options name is missing (the pack's set-up)",
                rule=f"stderr:set_up:{verdict.rule}",
            )
        if verdict is not None and (found is None or verdict.code != "internal_error"):
            return replace(from_verdict(verdict), rule=f"stderr:{verdict.rule}", weak=False)
    return found


#: A path or a quoted name a line of the tool's output names as missing (``cannot change to
#: /x/y: No such file or directory``, ``could not access file "plugin": No such file ...``).
_MISSING_PATH = re.compile(
    r"(?:(?<=[\"'])|(?=/))([^\s'\":,;()]+)['\"]?: No such file or directory", re.IGNORECASE
)


def _set_up(argv: Sequence[str] | str | bytes | None, stderr: str | bytes) -> bool:
    """Whether a path the tool reports missing is one that the value of one of its options
    names (``--delivery=maildir,/x/y``, ``-O /x/out.txt``): the pack's own set-up, not the
    resource a call named (an operand: ``sqlite3 /x/db``, ``ls /nope``)."""
    words = _words(argv) or []
    values = [w.partition("=")[2] for w in words[1:] if w.startswith("-") and "=" in w]
    # "-O /x/out.txt": the word after an option may be its value (or an operand after a
    # flag: then a miss, never a wrong code)
    values += [v for o, v in itertools.pairwise(words[1:]) if o.startswith("-")]
    paths = _MISSING_PATH.findall(stderr_text(stderr)[:16384])
    return any(path in value for path in paths[:8] for value in values)


# -- a finished run ------------------------------------------------------------------


class ToolFailed(RuntimeError):
    """A tool failed and no rule recognised its stderr.

    Deliberately unclassified: the call becomes ``internal_error``; the scrubbed stderr
    tail travels only in this exception, which the control plane keeps server-side.
    """

    def __init__(self, tool: str, returncode: int, stderr: str) -> None:
        self.tool = tool
        self.returncode = returncode
        # Scrubbed before it is cut (a secret the cut halves would match no rule).
        self.stderr = scrub_tail(stderr_text(stderr), 4000)
        super().__init__(f"{tool} exited with status {returncode}: {self.stderr}")


@dataclass(frozen=True, slots=True)
class ToolRun:
    """What a finished tool left: exit status, stdout bytes and decoded stderr."""

    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def resolve_binary(
    name: str,
    *,
    override: str | None = None,
    env_var: str | None = None,
    missing_code: str = "dependency_missing",
) -> str:
    """The executable to run for ``name``: ``override``, else ``$env_var``, else ``PATH``.

    Raises :class:`PackError` with ``missing_code`` when it cannot be found or executed.
    """
    candidate = override or (os.environ.get(env_var) if env_var else None) or name
    found = shutil.which(candidate)
    if found is None:
        raise PackError(missing_code, f"{name} is not installed or not executable on this host")
    return found


def raise_for_failure(run: ToolRun, label: str, table: ToolTable | None = None) -> None:
    """Raise the classified error of a failed ``run`` (nothing when it succeeded): the first
    matching rule of ``table`` (default: the :data:`TOOL_TABLES` entry for ``label``, else
    :func:`classify_tool`), stderr rules before exit statuses; else :class:`ToolFailed`."""
    if run.ok:
        return
    chosen = table or TOOL_TABLES.get(label)
    if chosen is not None:
        error = chosen.error(run.returncode, run.stderr)
    else:
        error = _error(classify_tool(run.argv, run.returncode, run.stderr))
    if error is not None:
        raise error
    raise ToolFailed(label, run.returncode, run.stderr)
