"""Reach: what a pack may touch outside itself, declared by the pack, granted by the operator.

:class:`PackReach` (``ctx.reach``) is the one place a grant is checked: paths resolved
inside the roots, destinations made by us, granted programs run by the
:class:`ProgramRunner` the runtime hands in. Each runtime holds one :class:`Reaches`: its
operator's grants over its packs' declarations, its runner, its message limit and its
scratch root; nothing here is shared by two runtimes of one process (docs/grants.md).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from control_plane._kernel.egress import EgressGrantError, EgressPolicy
from control_plane._kernel.errors import CapabilityPackError, PackError
from control_plane._kernel.limits import ConfigError
from control_plane._kernel.vocabulary import NOT_PERMITTED

if TYPE_CHECKING:
    from control_plane._kernel.pack import Context
    from control_plane._kernel.stderr import ToolRun

__all__ = [
    "DEFAULT_MESSAGE_LIMIT",
    "NOT_PERMITTED",
    "SCRATCH_KEEP",
    "SCRATCH_TTL",
    "SERVER_SECRETS",
    "Confinement",
    "Destination",
    "Grant",
    "GrantError",
    "Grants",
    "NotARegularFile",
    "PackReach",
    "ProgramRunner",
    "Reach",
    "Reaches",
    "Scratch",
    "grants_from_data",
    "not_permitted",
    "parse_grant",
]


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


#: Directories under the scratch root older than this (seconds) are removed when a new one
#: is made, and at most :data:`SCRATCH_KEEP` are kept (the oldest go first); the whole root
#: goes when the server stops. ``$CAPABILITY_PACKS_SCRATCH_TTL`` / ``_KEEP`` change them.
SCRATCH_TTL = _env_number("CAPABILITY_PACKS_SCRATCH_TTL", 3600.0)
SCRATCH_KEEP = int(_env_number("CAPABILITY_PACKS_SCRATCH_KEEP", 64))

#: ``packctl serve --max-message-bytes``'s default (``wire.server.DEFAULT_MAX_MESSAGE_BYTES``):
#: gRPC's 4 MiB.
DEFAULT_MESSAGE_LIMIT = 4 * 1024 * 1024

_KEYS = ("fs.read", "fs.write", "egress", "programs", "credentials")
#: A list key's attribute on :class:`Reach` and :class:`Grant`.
_ATTR = MappingProxyType(
    {"fs.read": "reads", "fs.write": "writes", "egress": "egress", "programs": "programs"}
)
#: Every attribute of :class:`Reach` and :class:`Grant`.
_FIELDS = (*_ATTR.values(), "ambient_credentials")
_SPECIAL = ("$CWD", "$TMP", "$SCRATCH")


def not_permitted(message: str) -> PackError:
    """The refusal by grant: permanent, "do not retry"."""
    return PackError(NOT_PERMITTED, message)


class NotARegularFile(PackError):
    """:meth:`PackReach.open_read` of a directory, FIFO, socket or device: ``not_permitted``
    (in every pack's vocabulary); a pack with a code of its own for it catches this."""


class GrantError(CapabilityPackError, ConfigError):
    """An operator grant that cannot be used (bad key, unknown pack, bad file)."""


@dataclass(frozen=True, slots=True)
class Reach:
    """What a pack needs to reach, declared as data on its ``Pack``.

    ``reads``/``writes`` are filesystem roots (absolute paths or ``$CWD``, ``$TMP``,
    ``$SCRATCH``); a write root is readable too. ``egress`` lists network destinations as
    :mod:`control_plane._kernel.egress` spells them (``"public"``, ``"loopback"``, a CIDR, a
    host). ``programs`` are the executables the pack runs (base names, or absolute paths).
    ``ambient_credentials``: whether the pack's programs may see the serving user's
    ``~/.netrc``, ``~/.gitconfig``, ssh agent and credential environment variables.
    """

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    egress: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    ambient_credentials: bool = False

    def to_dict(self) -> dict[str, Any]:
        return _by_key(self)


def _by_key(reach: Reach | PackReach) -> dict[str, Any]:
    """``reach`` as the grant keys spell it (an unconfined pack's ``egress``: ``None``)."""
    lists = {key: getattr(reach, attr) for key, attr in _ATTR.items()}
    spelled = {key: None if v is None else list(v) for key, v in lists.items()}
    return {**spelled, "credentials": "ambient" if reach.ambient_credentials else "none"}


@dataclass(frozen=True, slots=True)
class Grant:
    """The operator's word on one pack: each key given replaces the declaration's."""

    reads: tuple[str, ...] | None = None
    writes: tuple[str, ...] | None = None
    egress: tuple[str, ...] | None = None
    programs: tuple[str, ...] | None = None
    ambient_credentials: bool | None = None

    def over(self, declared: Reach | None) -> Reach:
        """The reach this grant leaves a pack that declared ``declared``."""
        return Reach(**_over(self, declared if declared is not None else Reach()))

    def merged(self, later: Grant) -> Grant:
        """This grant with ``later``'s keys replacing its own (flags after a file)."""
        return Grant(**_over(later, self))

    @classmethod
    def nothing(cls) -> Grant:
        """Every key granted empty: no file, no destination, no program, no credentials
        (what a pack that declares no reach runs under unless the operator trusts it)."""
        return cls(reads=(), writes=(), egress=(), programs=(), ambient_credentials=False)

    def wider_than(self, declared: Reach | None, start_dir: str | None = None) -> list[str]:
        """``KEY=VALUE`` for each value of this grant beyond what ``declared`` holds (a
        root not inside a declared root, an egress entry, a program not declared, ambient
        credentials declared ``none``): what start-up says aloud. ``$CWD`` is ``start_dir``
        (default: the current directory)."""
        base = declared if declared is not None else Reach()
        wider: list[str] = []
        here = start_dir if start_dir is not None else os.getcwd()

        def _root(spelled: str) -> str:  # $SCRATCH stands for itself: no directory is made
            return _resolve(spelled, here, lambda: _SCRATCH_WORD)

        own_writes = [_root(r) for r in base.writes]
        own_reads = [*(_root(r) for r in base.reads), *own_writes]
        for key, given, roots in (
            ("fs.read", self.reads, own_reads),
            ("fs.write", self.writes, own_writes),
        ):
            wider += [f"{key}={r}" for r in given or () if not _inside(_root(r), roots)]
        wider += [f"egress={e}" for e in self.egress or () if not _covers(base.egress, e)]
        wider += [f"programs={p}" for p in self.programs or () if p not in base.programs]
        if self.ambient_credentials and not base.ambient_credentials:
            wider.append("credentials=ambient")
        return wider

    def to_data(self) -> dict[str, Any]:
        """Plain data (for an isolation worker)."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Grant:
        def tup(value: Any) -> tuple[str, ...] | None:
            return None if value is None else tuple(str(v) for v in value)

        ambient = data.get("ambient_credentials")
        lists = {name: tup(data.get(name)) for name in _ATTR.values()}
        return cls(**lists, ambient_credentials=None if ambient is None else bool(ambient))


def _over(top: Grant, base: Reach | Grant) -> dict[str, Any]:
    """Each attribute of ``top`` that is given, else ``base``'s."""
    given = {name: getattr(top, name) for name in _FIELDS}
    return {name: getattr(base, name) if v is None else v for name, v in given.items()}


def _covers(declared: Sequence[str], entry: str) -> bool:
    """Whether the declared egress entries already hold ``entry``: the same entry, a
    category declared whole, a host name where ``public`` is declared (a name grants public
    addresses only), a network all of whose addresses fall in one declared category."""
    from control_plane._kernel.egress import category, egress_rule

    if entry in declared:
        return True
    words = {d.strip().lower() for d in declared}
    try:
        rule = egress_rule(entry)
    except EgressGrantError:
        return False
    if rule.word is not None:
        return rule.word in words
    if rule.host is not None:
        return "public" in words
    if rule.network is None:
        return False
    kinds = {category(rule.network[0]), category(rule.network[-1])}
    return len(kinds) == 1 and kinds <= words


def _set(grant: Grant, attr: str, values: tuple[str, ...]) -> Grant:
    changes: dict[str, Any] = {attr: values}
    return replace(grant, **changes)


def _with(grant: Grant, key: str, values: Sequence[str], where: str) -> Grant:
    if key == "credentials":
        if len(values) != 1 or values[0] not in ("ambient", "none"):
            raise GrantError(f"{where}: credentials is 'ambient' or 'none'")
        return replace(grant, ambient_credentials=values[0] == "ambient")
    for value in values:
        if not value or "\x00" in value or "\n" in value:
            raise GrantError(f"{where}: {key}: an empty or control-character entry")
        if key.startswith("fs.") and not (os.path.isabs(value) or value in _SPECIAL):
            raise GrantError(
                f"{where}: {key}={value}: a root is an absolute path or one of "
                + ", ".join(_SPECIAL)
            )
    if key == "egress":
        # An egress entry never holds a comma: "public,loopback" is two entries. Each is
        # parsed now, so a typo stops the server at start-up instead of refusing every call.
        values = [part.strip() for value in values for part in value.split(",")]
        try:
            EgressPolicy(values)
        except EgressGrantError as exc:
            raise GrantError(f"{where}: {exc}") from None
    current: tuple[str, ...] = getattr(grant, _ATTR[key]) or ()
    return _set(grant, _ATTR[key], (*current, *values))


def parse_grant(text: str, into: Mapping[str, Grant] | None = None) -> dict[str, Grant]:
    """``PACK:KEY=VALUE`` (one ``--grant`` flag) added to ``into``. Repeated flags for one
    key add up; ``KEY=`` (empty) grants nothing for that key."""
    grants = dict(into or {})
    pack, sep, rest = text.partition(":")
    key, eq, value = rest.partition("=")
    where = f"--grant {text}"
    if not sep or not eq or not pack:
        raise GrantError(f"{where}: expected PACK:KEY=VALUE (KEY: {', '.join(_KEYS)})")
    if key not in _KEYS:
        raise GrantError(f"{where}: unknown key {key!r} (one of {', '.join(_KEYS)})")
    grant = grants.get(pack, Grant())
    if value == "" and key != "credentials":
        grants[pack] = _set(grant, _ATTR[key], ())
        return grants
    grants[pack] = _with(grant, key, [value], where)
    return grants


def grants_from_data(data: Mapping[str, Any], path: str | os.PathLike[str]) -> Grants:
    """The ``[packs."NAME"]`` tables of a grants file (``data``, read from TOML at ``path``;
    docs/grants.md): the keys of ``--grant``, and ``trust = true``."""
    extra = sorted(set(data) - {"packs"})
    if extra:
        raise GrantError(f"{path}: unknown top-level key(s): {', '.join(extra)} (only [packs])")
    packs = data.get("packs", {})
    if not isinstance(packs, dict):
        raise GrantError(f"{path}: packs: a table of pack names")
    grants: dict[str, Grant] = {}
    trusted: set[str] = set()
    for name, table in packs.items():
        where = f"{path}: packs.{name}"
        if not isinstance(table, dict):
            raise GrantError(f"{where}: a table")
        flat: dict[str, Any] = {}
        for key, value in table.items():
            if key == "trust":
                if not isinstance(value, bool):
                    raise GrantError(f"{where}.trust: true or false")
                if value:
                    trusted.add(str(name))
                continue
            if key == "fs" and isinstance(value, dict):
                flat.update({f"fs.{k}": v for k, v in value.items()})
            else:
                flat[key] = value
        grant = Grant()
        for key, value in flat.items():
            if key not in _KEYS:
                raise GrantError(f"{where}: unknown key {key!r} (one of {', '.join(_KEYS)})")
            if key == "credentials":
                values = [value] if isinstance(value, str) else []
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                values = list(value)
            else:
                raise GrantError(f"{where}.{key}: a list of strings")
            if key != "credentials":
                grant = _set(grant, _ATTR[key], ())
            grant = _with(grant, key, values, f"{where}.{key}")
        if flat or "trust" not in table:
            grants[str(name)] = grant
    return Grants(grants, frozenset(trusted))


@dataclass(frozen=True, slots=True)
class Grants:
    """Every operator grant of one server, by pack name, and the packs the operator trusts
    (``--trust``, ``trust = true``: a pack that declares no reach runs in the server's
    process, unconfined, instead of in a confined worker; docs/grants.md)."""

    by_pack: Mapping[str, Grant] = field(default_factory=dict)
    trusted: frozenset[str] = frozenset()
    #: Packs whose grant the runtime implied (:meth:`Grant.nothing` for a pack that
    #: declares no reach), not the operator: :meth:`operator` leaves them out.
    implied: frozenset[str] = frozenset()
    #: The grant of a pack ``by_pack`` does not name (``None``: its declaration alone).
    default: Grant | None = None

    def of(self, pack: str) -> Grant | None:
        """The grant of ``pack``: its own, else :attr:`default`."""
        return self.by_pack.get(pack, self.default)

    def operator(self) -> Grants:
        """These grants without the implied ones: the operator's word alone."""
        if not self.implied:
            return self
        kept = {n: g for n, g in self.by_pack.items() if n not in self.implied}
        return Grants(kept, self.trusted, default=self.default)

    def unknown(self, names: Iterable[str]) -> list[str]:
        """Granted or trusted pack names that are not among ``names`` (a typo grants
        nothing)."""
        known = set(names)
        return sorted(n for n in {*self.by_pack, *self.trusted} if n not in known)


# -- the scratch root ----------------------------------------------------------------------


#: The programs' empty ``HOME``: beside the scratch root, in the server's private directory.
_HOME = "home"
#: ``$SCRATCH`` as :meth:`Grant.wider_than` compares it (a word, no directory).
_SCRATCH_WORD = "/\x00$SCRATCH"


class Scratch:
    """One runtime's scratch directory (0700, made on first use) and the programs' empty
    ``HOME`` beside it.

    Both lie in a private directory of the server's (0700): a caller who may write in the
    scratch root (``git.clone``'s ``dest``) reaches neither that ``HOME`` nor anything else of
    the server's own state. The directory goes when :meth:`close` is called (the runtime
    closes), or at exit of the process that made it. ``Scratch(path)`` adopts a root made
    elsewhere (an isolation worker shares its server's) and never removes it.
    """

    __slots__ = ("__weakref__", "_lock", "_remove", "_root")

    def __init__(self, path: str | None = None) -> None:
        self._lock = threading.Lock()
        self._root = os.path.realpath(path) if path else None
        self._remove: weakref.finalize[Any, Scratch] | None = None

    def root(self) -> str:
        """The scratch root (made now if it is not yet)."""
        with self._lock:
            if self._root is None:
                state = os.path.realpath(tempfile.mkdtemp(prefix="capability-packs-"))
                made = tempfile.mkdtemp(prefix="capability-packs-scratch-", dir=state)
                os.mkdir(os.path.join(state, _HOME), 0o500)
                self._root = made
                self._remove = weakref.finalize(self, _remove_scratch, state, os.getpid())
            return self._root

    def home(self) -> str:
        """An empty, read-only directory: ``HOME`` of programs without ambient credentials.
        Outside every root a caller can write (not in the scratch root: beside it)."""
        return os.path.join(os.path.dirname(self.root()), _HOME)

    def close(self) -> None:
        """Remove what this made (nothing for an adopted root)."""
        if self._remove is not None:
            self._remove()


def _remove_scratch(path: str, owner: int) -> None:
    """At exit of the process that made it (not of a forked child): the scratch root goes."""
    if os.getpid() == owner:
        with contextlib.suppress(OSError):
            os.chmod(os.path.join(path, _HOME), 0o700)
        shutil.rmtree(path, ignore_errors=True)


def _sweep(root: str, now: float) -> None:
    """Remove scratch directories past :data:`SCRATCH_TTL` and beyond :data:`SCRATCH_KEEP`."""
    try:
        entries = [e for e in os.scandir(root) if not e.name.startswith(".")]
    except OSError:
        return
    aged: list[tuple[float, str]] = []
    for entry in entries:
        try:
            aged.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
        except OSError:
            continue
    aged.sort()
    doomed = [p for m, p in aged if now - m > SCRATCH_TTL]
    alive = [p for m, p in aged if now - m <= SCRATCH_TTL]
    if len(alive) >= SCRATCH_KEEP:
        doomed += alive[: len(alive) - SCRATCH_KEEP + 1]
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)


# -- the means -----------------------------------------------------------------------------


def _resolve(spelled: str, start_dir: str, scratch: Callable[[], str]) -> str:
    """A root as spelled, resolved: ``$CWD`` is ``start_dir``, ``$SCRATCH`` ``scratch()``."""
    if spelled == "$CWD":
        return os.path.realpath(start_dir)
    if spelled == "$TMP":
        return os.path.realpath(tempfile.gettempdir())
    if spelled == "$SCRATCH":
        return scratch()
    return os.path.realpath(spelled)


#: The one path no grant or declaration may make a root.
_WHOLE_FS = os.path.realpath(os.sep)


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@dataclass(slots=True)
class Destination:
    """A directory the pack made for a result, and where it ends up.

    ``work`` is made by us, exclusively; the program writes there. :meth:`commit` moves it to
    ``final`` (``rename(2)``: replaces only an empty directory, never follows a symlink);
    :meth:`discard` removes only ``work`` -- never anything another process wrote elsewhere.
    """

    work: str
    final: str

    def commit(self) -> str:
        if self.work == self.final:
            return self.final
        try:
            os.rename(self.work, self.final)
        except OSError:
            self.discard()
            raise PackError(
                "destination_unusable", "dest is not an empty directory (or changed meanwhile)"
            ) from None
        return self.final

    def discard(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Confinement:
    """What the kernel holds a program of a confined pack to (the runtime applies it:
    ``_features/grants/confine_program.py``): read-only ``reads``, writable ``writes``, and TCP
    ``connect`` only to these ports (``()``: none; ``None``: not restricted by port)."""

    reads: tuple[str, ...]
    writes: tuple[str, ...]
    connect: tuple[int, ...] | None


class ProgramRunner(Protocol):
    """Runs a program :meth:`PackReach.run` has checked; each runtime hands one in
    (``_features/grants/tool_process.run_program``): core starts no process itself."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str],
        cwd: str | None,
        pass_fds: Sequence[int],
        on_stdout: Callable[[bytes], bool] | None,
        cancelled: Callable[[], bool],
        tool: str | None,
        confinement: Confinement | None,
    ) -> tuple[ToolRun, bool]: ...


class PackReach:
    """One pack's effective reach and the means to use it (the one place a grant is checked)."""

    __slots__ = (
        "ambient_credentials",
        "confined",
        "egress",
        "message_limit",
        "pack",
        "programs",
        "reads",
        "runner",
        "scratch",
        "start_dir",
        "whole_fs",
        "withheld",
        "writes",
    )

    def __init__(
        self,
        pack: str,
        reach: Reach | None,
        runner: ProgramRunner | None = None,
        *,
        message_limit: int = DEFAULT_MESSAGE_LIMIT,
        start_dir: str | None = None,
        scratch: Scratch | None = None,
        withheld: Iterable[str] = (),
    ) -> None:
        self.pack = pack
        #: Variables never handed to a program (the server's secrets: :data:`SERVER_SECRETS`
        #: and the runtime's own), whatever the pack's credentials.
        self.withheld = SERVER_SECRETS | frozenset(withheld)
        #: What :meth:`run` starts programs with (``None``: no runtime handed one in).
        self.runner = runner
        #: Where ``$CWD`` and relative paths (with no read root) lead: the directory the
        #: server was started in.
        self.start_dir = start_dir if start_dir is not None else os.getcwd()
        #: The runtime's scratch root and the programs' empty ``HOME`` (its own without one).
        self.scratch = scratch if scratch is not None else Scratch()
        #: False for a pack that declared nothing and was granted nothing: unconfined.
        self.confined = reach is not None
        reach = reach if reach is not None else Reach()
        here, root = self.start_dir, self.scratch.root
        writes = [("fs.write", spelled, _resolve(spelled, here, root)) for spelled in reach.writes]
        reads = [("fs.read", spelled, _resolve(spelled, here, root)) for spelled in reach.reads]
        #: Roots that resolved to ``/`` (``$CWD`` of a server started in ``/``, a symlink to
        #: it, ``/`` itself): never a root; the runtime refuses to start with one
        #: (:meth:`Reaches.check_roots`).
        self.whole_fs = tuple(
            f"{key} {spelled!r}" for key, spelled, real in [*reads, *writes] if real == _WHOLE_FS
        )
        #: Resolved roots (``realpath``), writes readable too.
        self.writes = tuple(dict.fromkeys(r for _, _, r in writes if r != _WHOLE_FS))
        self.reads = tuple(
            dict.fromkeys([*(r for _, _, r in reads if r != _WHOLE_FS), *self.writes])
        )
        #: Destination entries for :mod:`control_plane._kernel.egress` (the pack parses them);
        #: ``None`` for an unconfined pack: nothing declared or granted, the pack's own default.
        self.egress: tuple[str, ...] | None = reach.egress if self.confined else None
        self.programs = reach.programs
        self.ambient_credentials = reach.ambient_credentials or not self.confined
        #: The server's message limit (``--max-message-bytes``): no result the pack builds
        #: can be larger and still reach the caller, so a pack caps what it reads by it.
        self.message_limit = message_limit

    def describe(self) -> dict[str, Any]:
        """Plain data for ``packctl describe`` and the start-up line."""
        return {"confined": self.confined, **_by_key(self)}

    # -- paths -----------------------------------------------------------------------------

    def _refuse_path(self, what: str, field_name: str) -> PackError:
        return not_permitted(
            f"{field_name} is outside what this pack may {what} on this server (the "
            "operator's grant; docs/grants.md); do not retry with the same path"
        )

    def readable(self, path: str, field_name: str = "path") -> str:
        """``path`` resolved (symlinks, ``..``) when it lies inside a read root; else
        ``not_permitted`` -- the same whether or not anything exists there (and for a path
        holding a NUL character, which names nothing)."""
        if "\x00" in path:
            raise self._refuse_path("read", field_name)
        if not self.confined:
            return os.path.abspath(path)
        if not os.path.isabs(path):
            path = os.path.join(self.reads[0] if self.reads else self.start_dir, path)
        real = os.path.realpath(path)
        if not _inside(real, self.reads):
            raise self._refuse_path("read", field_name)
        return real

    def open_read(self, path: str, field_name: str = "path") -> int:
        """A read-only descriptor of the regular file at ``path`` inside the read grant.

        Opened ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO never blocks the open), then the object
        opened is checked (``/proc/self/fd``), so a symlink swapped in between the check
        and the open cannot escape, and ``fstat``-ed: anything but a regular file (a
        directory, a FIFO, a socket, a device) is ``not_permitted`` -- a pack's grant
        reads files. A path that does not exist raises ``FileNotFoundError`` (the pack's
        ``not_found``); the descriptor is blocking again when returned.
        """
        real = self.readable(path, field_name)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except IsADirectoryError:
            raise self._not_a_file(field_name) from None
        problem = self._opened_problem(fd, field_name)
        if problem is not None:
            os.close(fd)
            raise problem
        os.set_blocking(fd, True)
        return fd

    def _not_a_file(self, field_name: str) -> NotARegularFile:
        return NotARegularFile(
            NOT_PERMITTED,
            f"{field_name} is not a regular file (a directory, FIFO, socket or device): this "
            "pack reads files only; do not retry with the same path",
        )

    def _opened_problem(self, fd: int, field_name: str) -> Exception | None:
        """Why the object behind ``fd`` may not be read (outside the grant after all, or not
        a regular file), else ``None``."""
        try:
            opened = os.path.realpath(f"/proc/self/fd/{fd}")
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError as exc:
            return exc
        if self.confined and opened.startswith("/") and not _inside(opened, self.reads):
            return self._refuse_path("read", field_name)
        return None if regular else self._not_a_file(field_name)

    def destination(
        self, dest: str | None, field_name: str = "dest", unusable: str = "destination_unusable"
    ) -> Destination:
        """A fresh directory for a result: under the scratch root when ``dest`` is ``None``
        (swept after :data:`SCRATCH_TTL`, at most :data:`SCRATCH_KEEP`), else a work
        directory beside ``dest`` (inside a write root) moved there on :meth:`commit`.
        A ``dest`` that cannot hold the result is the pack's code ``unusable``."""
        if dest is not None and "\x00" in dest:
            raise self._refuse_path("write", field_name)
        if dest is None:
            root = self.scratch.root()
            _sweep(root, time.time())
            made = tempfile.mkdtemp(prefix=f"{self.pack}-", dir=root)
            return Destination(made, made)
        if self.confined and not os.path.isabs(dest):
            if not self.writes:
                raise self._refuse_path("write", field_name)
            dest = os.path.join(self.writes[0], dest)
        final = os.path.abspath(dest)
        name = os.path.basename(final)
        if name in ("", ".", ".."):
            raise PackError(unusable, f"{field_name} names no directory")
        parent = self._parent(os.path.dirname(final), field_name, unusable)
        final = os.path.join(parent, name)
        if os.path.lexists(final):
            st = os.lstat(final)
            if not stat.S_ISDIR(st.st_mode):
                raise PackError(unusable, f"{field_name} exists and is not a directory")
            with os.scandir(final) as entries:
                occupied = any(entries)
            if occupied:
                raise PackError(unusable, f"{field_name} is a directory that is not empty")
        work = tempfile.mkdtemp(prefix=f".{name[:40]}.", suffix=".partial", dir=parent)
        return Destination(work, final)

    def _parent(self, parent: str, field_name: str, unusable: str) -> str:
        """``parent`` resolved inside a write root, its missing directories made by us."""
        missing: list[str] = []
        probe = parent
        while not os.path.lexists(probe) and probe != os.path.dirname(probe):
            missing.append(os.path.basename(probe))
            probe = os.path.dirname(probe)
        real = os.path.realpath(probe)
        if self.confined and not _inside(real, self.writes):
            raise self._refuse_path("write", field_name)
        for part in reversed(missing):
            real = os.path.join(real, part)
            try:
                os.mkdir(real, 0o700)
            except FileExistsError:
                pass
            except OSError:
                raise PackError(
                    "destination_unusable", f"cannot create the parent directories of {field_name}"
                ) from None
            real = os.path.realpath(real)
            if self.confined and not _inside(real, self.writes):
                raise self._refuse_path("write", field_name)
        if not os.path.isdir(real):
            raise PackError(unusable, f"the parent of {field_name} is not a directory")
        return real

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        ctx: Context | None = None,
        env: Mapping[str, str] | None = None,
        drop: Callable[[str], bool] | None = None,
        cwd: str | None = None,
        pass_fds: Sequence[int] = (),
        on_stdout: Callable[[bytes], bool] | None = None,
        tool: str | None = None,
        program: str | None = None,
        connect: Sequence[int] | None = None,
    ) -> tuple[ToolRun, bool]:
        """Run ``argv`` if its program is granted (``program``, default ``argv[0]``: a pack
        passes ``"git"`` when ``$CAPABILITY_PACKS_GIT`` names another binary), in
        :meth:`environment`, confined by the kernel to this grant (:meth:`confinement`);
        the run and whether ``on_stdout`` (stdout as it comes, then not kept; False stops
        the program) stopped it. ``connect``: the TCP ports the program may connect to (the
        ones the pack checked); ``None``: any port when the grant has egress, none without.
        Raises ``timeout`` (time ran out or ``ctx`` was cancelled), ``dependency_missing``,
        ``not_permitted``."""
        self.program(program or argv[0])
        if self.runner is None:
            raise PackError(
                "internal_error", "this process runs no programs for packs (no runtime built)"
            )
        return self.runner(
            argv,
            timeout=timeout,
            env=self.environment(env, drop),
            cwd=cwd,
            pass_fds=pass_fds,
            on_stdout=on_stdout,
            cancelled=(lambda: ctx.cancelled) if ctx is not None else (lambda: False),
            tool=tool,
            confinement=self.confinement(connect),
        )

    def confinement(self, connect: Sequence[int] | None = None) -> Confinement | None:
        """What a program of this pack is held to: the read and write roots (plus the
        programs' read-only ``HOME``, or the serving user's credential files with ambient
        credentials), TCP ``connect`` ports (none when the grant has no egress). ``None``
        for an unconfined pack."""
        if not self.confined:
            return None
        reads = [*self.reads]
        if self.ambient_credentials:
            home = os.path.expanduser("~")
            reads += [os.path.join(home, name) for name in _CREDENTIAL_FILES]
        else:
            reads.append(self.scratch.home())
        ports: tuple[int, ...] | None
        if not self.egress:
            ports = ()
        elif connect is None:
            ports = None
        else:
            ports = tuple(int(p) for p in connect)
        return Confinement(tuple(reads), self.writes, ports)

    # -- programs --------------------------------------------------------------------------

    def program(self, binary: str) -> str:
        """``binary`` if the pack may run it (its base name or path is granted)."""
        if self.confined and not (
            binary in self.programs or os.path.basename(binary) in self.programs
        ):
            raise not_permitted(
                f"this pack may not run {os.path.basename(binary)} on this server "
                "(the operator's grant; docs/grants.md)"
            )
        return binary

    def environment(
        self,
        extra: Mapping[str, str] | None = None,
        drop: Callable[[str], bool] | None = None,
    ) -> dict[str, str]:
        """A child's environment: without ambient credentials, only ``PATH``, ``TZ``,
        ``LANG`` and ``TMPDIR``, with ``HOME`` an empty directory (no ``~/.netrc``, no
        ``~/.gitconfig``, no agent socket, no token variables); with them, ours minus the
        server's own secrets (:attr:`withheld`) and the names ``drop`` picks. Then
        ``extra``."""
        if self.ambient_credentials:
            kept = ((k, v) for k, v in os.environ.items() if k not in self.withheld)
            env = {k: v for k, v in kept if drop is None or not drop(k)}
        else:
            env = {k: v for k, v in os.environ.items() if k in _KEPT_ENV}
            home = self.scratch.home()
            env.update(HOME=home, XDG_CONFIG_HOME=home, USERPROFILE=home)
        env.update(LC_ALL="C", LANGUAGE="C")
        if extra:
            env.update(extra)
        return env


#: What a program with ambient credentials may read of the serving user's home.
_CREDENTIAL_FILES = (
    ".netrc",
    ".gitconfig",
    ".git-credentials",
    ".config/git",
    ".ssh",
    ".curlrc",
)

#: The variables a program keeps without ambient credentials (no tokens, no agent sockets).
_KEPT_ENV = frozenset({"PATH", "TZ", "LANG", "TMPDIR", "SYSTEMROOT"})

#: The control plane's own secrets: never in a program's or a worker's environment, even
#: with ambient credentials (a runtime adds ``--auth-token-env``'s: ``Reaches(withheld=)``).
SERVER_SECRETS = frozenset({"CAPABILITY_PACKS_TOKENS", "CAPABILITY_PACKS_TOKEN"})

# -- the table -----------------------------------------------------------------------------


class Reaches:
    """Every pack's effective reach on one runtime, built once per pack on first use.

    ``grants``: the operator's (:class:`Grants`); ``declared``: each pack's own
    :class:`Reach` (a mapping by name, or a function of the name: the runtime's registry);
    ``runner``: what :meth:`PackReach.run` starts programs with; ``message_limit``: the
    server's (``ctx.reach.message_limit``); ``start_dir``: ``$CWD`` (default: the current
    directory, read now); ``scratch``: the scratch root (default: one of its own, removed by
    :meth:`close`); ``withheld``: environment variables of the server's own (bearer tokens)
    no program or worker is handed, beside :data:`SERVER_SECRETS`. The invoker holds one
    and hands it to each call's ``Context``.
    """

    def __init__(
        self,
        grants: Grants | None = None,
        declared: Mapping[str, Reach | None] | Callable[[str], Reach | None] | None = None,
        *,
        runner: ProgramRunner | None = None,
        message_limit: int = DEFAULT_MESSAGE_LIMIT,
        start_dir: str | None = None,
        scratch: Scratch | None = None,
        withheld: Iterable[str] = (),
    ) -> None:
        if message_limit <= 0:
            raise ValueError("the message limit is a positive number of bytes")
        self.grants = grants if grants is not None else Grants()
        if declared is None:
            declared = {}
        self._declared: Callable[[str], Reach | None] = (
            declared if callable(declared) else dict(declared).get
        )
        self.runner = runner
        self.message_limit = message_limit
        self.start_dir = start_dir if start_dir is not None else os.getcwd()
        self.scratch = scratch if scratch is not None else Scratch()
        #: Environment variables no program or worker of this runtime is handed.
        self.withheld = SERVER_SECRETS | frozenset(withheld)
        self._lock = threading.Lock()
        self._built: dict[str, PackReach] = {}

    def declared(self, pack: str) -> Reach | None:
        """What ``pack`` declared (``None``: nothing, or no such pack)."""
        reach = self._declared(pack)
        return reach if isinstance(reach, Reach) else None

    def declared_data(self, pack: str) -> dict[str, Any] | None:
        """What ``pack`` declared, as plain data (``None``: nothing, or no such pack)."""
        reach = self.declared(pack)
        return None if reach is None else reach.to_dict()

    def reach_for(self, pack: str) -> PackReach:
        """The effective reach of ``pack`` (built on first use, then kept)."""
        built = self._built.get(pack)
        if built is not None:
            return built
        with self._lock:
            built = self._built.get(pack)
            if built is None:
                declared = self.declared(pack)
                grant = self.grants.of(pack)
                effective = grant.over(declared) if grant is not None else declared
                built = self._built[pack] = PackReach(
                    pack,
                    effective,
                    self.runner,
                    message_limit=self.message_limit,
                    start_dir=self.start_dir,
                    scratch=self.scratch,
                    withheld=self.withheld,
                )
        return built

    def check_roots(self, packs: Iterable[str]) -> None:
        """Refuse (:class:`GrantError`) when a pack's effective reach has a root that
        resolves to ``/``: a default must not widen with the directory the server was
        started in, and a grant of the whole file system is a mistake said at start-up,
        not a reach."""
        for pack in packs:
            whole = self.reach_for(pack).whole_fs
            if whole:
                raise GrantError(
                    f"{pack}: {', '.join(whole)} resolves to '/', the whole file system (the "
                    f"server was started in {self.start_dir!r}); no root may be '/': grant the "
                    f"directories it needs (--grant {pack}:fs.read=/srv/media; docs/grants.md)"
                )

    def close(self) -> None:
        """Remove the scratch root this made (the runtime closes)."""
        self.scratch.close()
