"""Pack isolation: chosen packs' handlers run in worker processes, only JSON data crossing back."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import logging
import os
import signal
import site
import socket
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

import orjson

from control_plane._features.isolation.worker_failures import (
    MAX_REPLY_BYTES,
    RemoteError,
    _chain,
    _dumps,
    describe_exception,
    mark_confined,
    thaw_exception,
)
from control_plane._kernel.errors import CapabilityPackError
from control_plane._kernel.limits import ConfigError
from control_plane._kernel.pack import Context
from control_plane._kernel.reach import SERVER_SECRETS, Reaches, Scratch
from control_plane._kernel.returned import Returned, copy_returned
from control_plane._runtime import stderr_relay
from control_plane._runtime.parent_death import signal_on_parent_death
from control_plane._runtime.runtime import (
    ISOLATION_MEMORY_LIMIT as DEFAULT_MEMORY_LIMIT,
)
from control_plane._runtime.runtime import (
    ISOLATION_WORKERS as DEFAULT_WORKERS,
)
from control_plane._runtime.suggest import unknown_names

__all__ = [
    "ALL",
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_WORKERS",
    "Isolation",
    "IsolationError",
    "Locator",
    "PoolStats",
    "RemoteError",
    "WorkerCrashed",
    "locate",
]

logger = logging.getLogger("capability_packs.isolation")

#: ``--isolate all``: every loaded pack runs in worker processes.
ALL = "all"
#: Longest exception chain sent back from a worker.

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class IsolationError(CapabilityPackError, ConfigError):
    """Isolation cannot be set up as configured (e.g. a handler the worker cannot import)."""

    #: The problem's kind in ``packctl``'s JSON output.
    kind = "isolation"


class WorkerCrashed(CapabilityPackError):
    """The worker process running a call died before answering (never a pack code)."""

    def __init__(
        self, pack: str, pid: int | None, exitcode: int | None, how: str | None = None
    ) -> None:
        super().__init__(
            f"the isolated worker (pid {pid}) of pack {pack} "
            f"{how or 'died before answering: ' + describe_exit(exitcode)}"
        )
        self.pack = pack
        self.pid = pid
        self.exitcode = exitcode


def describe_exit(exitcode: int | None) -> str:
    """``exit status 3`` / ``killed by signal SIGSEGV`` / ``exit status unknown``."""
    if exitcode is None:
        return "exit status unknown"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = str(-exitcode)
        return f"killed by signal {name}"
    return f"exit status {exitcode}"


# -- locating a handler from another process ----------------------------------------------


def _plugin_object(spec: str) -> Any:
    """The module ``spec`` names, or an object in it (``module:attr.path``, as an entry
    point's value spells it)."""
    module, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module.strip())
    for part in attr.strip().split(".") if attr.strip() else ():
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True, slots=True)
class Locator:
    """How a worker finds a pack's handler: ``module`` + ``qualname``, or the plugin hook."""

    pack: str
    module: str
    qualname: str | None = None

    def resolve(self) -> Callable[..., Any]:
        """Import the module and return the handler (raises when it cannot)."""
        if self.qualname is not None:
            obj = _plugin_object(f"{self.module}:{self.qualname}")
            if not callable(obj):
                raise IsolationError(f"{self.module}.{self.qualname} is not callable")
            return obj  # type: ignore[no-any-return]
        found = _registered(_plugin_object(self.module))
        if found is None:
            raise IsolationError(f"module {self.module} has no register_packs hook")
        for pack in found:
            if getattr(pack, "name", "") == self.pack:
                handler: Callable[..., Any] = pack.handler
                return handler
        raise IsolationError(f"plugin module {self.module} does not register {self.pack}")


def _registered(plugin: object) -> list[Any] | None:
    """What ``plugin``'s ``register_packs`` hook registers (in a worker: no plugin manager
    there), or ``None`` when it has no such hook."""
    hook = getattr(plugin, "register_packs", None)
    if hook is None:
        return None
    found: list[Any] = []
    hook(register=found.append)
    return found


def _out_of_process(loaded: Any) -> str | None:
    """Where a pack whose work already runs in another process runs (an MCP server: its
    handler carries ``out_of_process``), else ``None``; ``--isolate all`` skips those."""
    where = getattr(getattr(loaded.pack, "handler", None), "out_of_process", None)
    return where if isinstance(where, str) else None


def locate(pack: str, handler: Any, plugin: str) -> Locator:
    """The :class:`Locator` of ``handler``; :class:`IsolationError` if a worker cannot find it."""
    given = getattr(handler, "isolated_locator", None)
    if isinstance(given, Locator):
        return given  # declared by a describing worker: its module is never imported here
    module = getattr(handler, "__module__", None)
    qualname = getattr(handler, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        candidate = Locator(pack, module, qualname)
        try:
            if candidate.resolve() is handler:
                return candidate
        except (ImportError, AttributeError, IsolationError):
            pass
    try:
        plugin_module = importlib.import_module(plugin)
    except ImportError:
        plugin_module = None
    if plugin_module is not None and hasattr(plugin_module, "register_packs"):
        return Locator(pack, plugin)
    raise IsolationError(
        f"pack {pack}: its handler cannot be imported by a worker process; define it at "
        "module level (or register the pack from an importable plugin module)"
    )


# -- the worker process --------------------------------------------------------------------
#
# A worker is a fresh interpreter (never a fork of the control plane, never a fork server's
# child): ``python -I -c`` imports this module only, reads its bootstrap (plain JSON) from
# the socket it was given, confines itself (:func:`_confine`) and only then imports the
# pack's module. Nothing in it can reach an unconfined process: its parent is the control
# plane, which answers only JSON replies to its own requests.

_BOOT = (
    "import os, sys; front, _, tail = sys.argv[1].partition('\\n'); "
    "sys.path[0:0] = [p for p in front.split(os.pathsep) if p]; "
    "sys.path.extend(p for p in tail.split(os.pathsep) if p); "
    "from control_plane._features.isolation.isolation import worker_entry; worker_entry()"
)

#: This worker's ``/proc/self/statm``, opened before it is confined.
_STATM: list[int] = []


def _rss_bytes() -> int:
    try:
        if not _STATM:
            _STATM.append(os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
        return int(os.pread(_STATM[0], 512, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _has_memory_error(exc: BaseException) -> bool:
    return any(isinstance(e, MemoryError) for e in _chain(exc))


def _ignore_stop_signals() -> None:
    """SIGINT and SIGTERM sent to the whole process group (Ctrl-C, ``docker stop``,
    systemd's ``KillMode=control-group``) are for the control plane: it drains its
    workers and then stops them itself."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, signal.SIG_IGN)


_BROKEN_REPLY = b'{"seq":-1,"kind":"error","retire":true,"error":{"chain":[]}}'


def worker_entry() -> None:
    """``main`` of a worker process: ``argv`` is ``[-c, project root, fd, parent pid]``."""
    fd, parent = int(sys.argv[2]), int(sys.argv[3])
    # Started in a session (so a process group) of its own: whatever the pack starts ends
    # with the worker (the parent kills the group), and no terminal of ours is its.
    _ignore_stop_signals()
    signal_on_parent_death(signal.SIGKILL)
    if os.getppid() != parent:  # the control plane died before we asked
        os._exit(70)
    conn = Connection(fd)
    try:
        boot = orjson.loads(conn.recv_bytes(MAX_REPLY_BYTES))
    except (EOFError, OSError, orjson.JSONDecodeError):
        os._exit(70)
    limit = boot.get("memory_limit")
    if limit:
        import resource

        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    if boot.get("mode") == "describe":
        _describe_main(conn, boot)
        return
    worker_main(conn, boot)


def worker_main(conn: Connection, boot: Mapping[str, Any]) -> None:
    """A worker's loop: confine, import, then receive a call, run the handler, send back
    the result or error.

    Only JSON crosses the socket, both ways. The bootstrap (``boot``) is ``{"locator",
    "reach", "sys_path", "memory_limit", "rss_limit"}``. Requests are ``{"seq",
    "request_id", "doc", "deadline"}``; replies ``{"seq", "kind": "ok", "returned": ...}``
    (what the handler returned, copied to plain data here:
    :class:`~control_plane._kernel.returned.Returned`) or ``{"seq", "kind": "error", "error":
    ...}`` (:func:`describe_exception`), each with ``retire`` (the worker is about to exit).
    """
    locator = Locator(**boot["locator"])
    rss_limit = int(boot.get("rss_limit") or 0)
    handler: Callable[..., Any] | None = None
    setup_error: BaseException | None = None
    reaches: Reaches | None = None
    _rss_bytes()  # opens statm while it may
    try:
        # What the control plane knows the pack declared is its reach here, whatever its
        # module declares when this worker imports it.
        reaches = _confine(locator.pack, boot)
        handler = locator.resolve()
    # Process boundary: confining this process or importing the pack may raise anything;
    # each call reports it -- a worker that could not be confined never imports the pack.
    except BaseException as exc:  # noqa: BLE001
        handler, setup_error = None, exc
    loop: asyncio.AbstractEventLoop | None = None
    while True:
        try:
            request = orjson.loads(conn.recv_bytes())
            seq, request_id = int(request["seq"]), str(request["request_id"])
            doc, deadline = request["doc"], request["deadline"]
        except (EOFError, OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return
        retire = False
        reply: dict[str, Any]
        try:
            returned = _run(handler, setup_error, locator.pack, doc, request_id, deadline, reaches)
            if inspect.isawaitable(returned):
                if loop is None:
                    loop = asyncio.new_event_loop()
                returned = loop.run_until_complete(_awaited(returned))
            reply = {"seq": seq, "kind": "ok", "returned": copy_returned(returned).to_data()}
        # Process boundary: the handler may raise anything; it all goes back as data.
        except BaseException as exc:  # noqa: BLE001
            retire = _has_memory_error(exc)
            try:
                reply = {"seq": seq, "kind": "error", "error": describe_exception(exc)}
            except MemoryError:
                os._exit(70)
        if rss_limit and not retire and _rss_bytes() > rss_limit:
            retire = True
        reply["retire"] = retire
        try:
            data = _dumps(reply)
        # The reply must leave whatever happened; a fixed failure if nothing else can.
        except BaseException:  # noqa: BLE001
            data, retire = _BROKEN_REPLY, True
        try:
            conn.send_bytes(data)
        except (OSError, ValueError):
            return
        if retire:
            return


def _reach_from(data: Mapping[str, Any] | None) -> Any:
    """A :class:`~control_plane._kernel.reach.Reach` from its ``to_dict`` form (``None``: none)."""
    from control_plane._kernel.reach import Reach

    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("a reach is a mapping")

    def strings(key: str) -> tuple[str, ...]:
        values = data.get(key) or ()
        if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
            raise TypeError(f"a reach's {key} is a list of strings")
        return tuple(values)

    return Reach(
        reads=strings("fs.read"),
        writes=strings("fs.write"),
        egress=strings("egress"),
        programs=strings("programs"),
        ambient_credentials=data.get("credentials") == "ambient",
    )


def _confine(pack: str, boot: Mapping[str, Any]) -> Reaches:
    """Take the server's scratch root, the pack's declared reach and the operator's grant
    (all from the bootstrap, never from the pack's module) as this worker's
    :class:`~control_plane._kernel.reach.Reaches`, then confine this worker to that reach in
    the kernel (no-new-privs, Landlock: :mod:`control_plane._features.grants.confine`). Only then is
    the worker's import path set: the pack's directories are not searched before."""
    from control_plane._features.grants import tool_process
    from control_plane._features.grants.confine import confine, import_paths
    from control_plane._kernel.reach import DEFAULT_MESSAGE_LIMIT, Grant, Grants, Scratch

    reach = boot.get("reach") or {}
    grant = reach.get("grant")
    reaches = Reaches(
        Grants({} if grant is None else {pack: Grant.from_data(grant)}),
        {pack: _reach_from(reach.get("declared"))},
        runner=tool_process.run_program,  # ctx.reach.run in this worker
        message_limit=int(reach.get("message_limit") or DEFAULT_MESSAGE_LIMIT),
        # $CWD is where the parent runtime was built (what it checked and said at
        # start-up), never the directory this worker happens to start in.
        start_dir=str(reach["start_dir"]) if reach.get("start_dir") else None,
        scratch=Scratch(str(reach["scratch"])) if reach.get("scratch") else None,
    )
    paths = [str(p) for p in boot.get("sys_path") or ()]
    # The control plane's prefixes too: a venv's (its ``pyvenv.cfg``, which ``site`` reads
    # below) is not this interpreter's yet, started without ``site`` (``-S``).
    prefixes = [str(p) for p in boot.get("prefixes") or ()]
    confine(reaches.reach_for(pack), import_paths(paths, prefixes))
    mark_confined()  # the kernel's EACCES/EPERM from here on is the grant's refusal
    # Confined now: the interpreter's site (``.pth`` files, ``exit``/``quit``) may run, then
    # the control plane's import path, packs' directories included.
    site.main()
    sys.path[:] = list(dict.fromkeys([*paths, *sys.path]))
    return reaches


def _reach_of(pack: str, reaches: Reaches) -> dict[str, Any]:
    """What a worker of ``pack`` needs of its runtime's reach (plain data)."""
    grant = reaches.grants.of(pack)
    return {
        "scratch": reaches.scratch.root(),
        "declared": reaches.declared_data(pack),
        "grant": None if grant is None else grant.to_data(),
        "message_limit": reaches.message_limit,
        "start_dir": reaches.start_dir,
    }


def _run(
    handler: Callable[..., Any] | None,
    setup_error: BaseException | None,
    pack: str,
    doc: Any,
    request_id: str,
    deadline: float | None,
    reaches: Reaches | None,
) -> Any:
    if handler is None:
        raise IsolationError(f"the worker could not load pack {pack}") from setup_error
    return handler(doc, Context(pack, request_id, deadline, reaches))


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


# -- a plugin module's declarations, read by a confined worker ----------------------------

#: The longest a module's description may take (import and ``register_packs``), seconds.
DESCRIBE_TIMEOUT = 60.0


def _pack_data(pack: Any) -> dict[str, Any]:
    """A registered pack's declaration as plain data (no handler: the worker keeps it)."""
    from control_plane._kernel.pack import CodeDoc, schema_of

    codes = {
        str(code): doc.to_dict() if isinstance(doc, CodeDoc) else doc
        for code, doc in dict(pack.codes).items()
    }
    reach = getattr(pack, "reach", None)
    return {
        "name": pack.name,
        "version": pack.version,
        "summary": pack.summary,
        "input_schema": schema_of(pack.input_schema),
        "output_schema": schema_of(pack.output_schema),
        "codes": codes,
        "validates": pack.validates,
        "docs": pack.docs,
        "isolated": bool(pack.isolated),
        "scrub_output": bool(pack.scrub_output),
        "reach": None if reach is None else reach.to_dict(),
    }


def _describe_main(conn: Connection, boot: Mapping[str, Any]) -> None:
    """A describing worker: confined as a pack granted nothing (no files but the code's,
    no TCP, no other process), it imports ``boot["module"]``, calls its ``register_packs``
    hook and sends back each registered pack's declaration as JSON; then exits."""
    module = str(boot["module"])
    reply: dict[str, Any]
    said = ""
    try:
        _confine(
            f"<describe {module}>", {**boot, "reach": {**(boot.get("reach") or {}), "declared": {}}}
        )
        plugin = _plugin_object(module)
        said = "register_packs raised "  # what fails now is the hook, said as here
        found = _registered(plugin)
        said = ""
        packs, refused = [], []
        for pack in found or ():
            try:
                packs.append(_pack_data(pack))
            # Process boundary: a declaration the pack built may fail to serialize in
            # any way; it is reported as that pack's load failure.
            except Exception as exc:  # noqa: BLE001
                refused.append([str(getattr(pack, "name", "?")), f"{type(exc).__name__}: {exc}"])
        reply = {"kind": "ok", "packs": packs, "refused": refused, "hook": found is not None}
    # Process boundary: importing the module may raise anything (SystemExit too).
    except BaseException as exc:  # noqa: BLE001
        said += f"{type(exc).__name__}: {exc}"
        reply = {"kind": "error", "error": said[:_MAX_DESCRIBE_TEXT]}
    with contextlib.suppress(OSError, ValueError):
        conn.send_bytes(_dumps(reply))


_MAX_DESCRIBE_TEXT = 2000


def describe_module(
    module: str, timeout: float = DESCRIBE_TIMEOUT, *, scratch: Scratch | None = None
) -> dict[str, Any]:
    """Import the plugin ``module`` in a fresh confined worker (never here) and return what
    it registers: ``{"kind": "ok", "packs": [declaration...], "refused": [[name, why]...],
    "hook": bool}`` or ``{"kind": "error", "error": text}``. The reply is untrusted data.
    ``scratch``: the runtime's (its programs' empty ``HOME`` is the worker's); by default
    one made for this description and removed after it."""
    if scratch is not None:
        return _describe(module, timeout, scratch)
    own = Scratch()
    try:
        return _describe(module, timeout, own)
    finally:
        own.close()


def _describe(module: str, timeout: float, scratch: Scratch) -> dict[str, Any]:
    boot = {
        "mode": "describe",
        "module": module,
        "reach": {"scratch": scratch.root(), "grant": None},
        "memory_limit": DEFAULT_MEMORY_LIMIT,
    }
    env = worker_environment({}, None, scratch.home())
    worker = _spawn(boot, env, f"describing worker of {module}")
    late = {"kind": "error", "error": f"describing it took longer than {timeout:g}s"}
    # The whole reply within the timeout: a header that promises bytes never sent is cut.
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _cut(worker.conn)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        if not wait([worker.conn, worker.sentinel], timeout):
            return late
        try:
            reply = orjson.loads(worker.conn.recv_bytes(MAX_REPLY_BYTES))
        except (EOFError, OSError, orjson.JSONDecodeError):
            if expired.is_set():
                return late
            worker.join(2.0)
            return {"kind": "error", "error": "its worker died: " + describe_exit(worker.exitcode)}
        if not isinstance(reply, dict) or reply.get("kind") not in ("ok", "error"):
            return {"kind": "error", "error": "its worker sent a malformed reply"}
        return reply
    finally:
        timer.cancel()
        worker.kill()
        worker.reap()


def _cut(conn: Connection) -> None:
    """Shut the control plane's end of a worker's socket: a read blocked on it (a reply
    whose header promised bytes that never come) ends at once with EOF. Killing the worker
    is not enough: a child it started in a session of its own (``setsid``) still holds the
    other end, and the read would wait for it for ever."""
    with contextlib.suppress(OSError, ValueError):
        sock = socket.socket(fileno=os.dup(conn.fileno()))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()


def declared_pack(data: Mapping[str, Any], module: str) -> Any:
    """The control plane's stand-in for a pack declared by a describing worker: its
    declaration (JSON data) and a handler that refuses to run here, carrying the
    :class:`Locator` its workers load it by. Raises on a declaration that is not one."""
    from control_plane._kernel.pack import CodeDoc, Pack

    name = data["name"]
    if not isinstance(name, str):
        raise TypeError("a pack's name is a string")
    codes: dict[str, CodeDoc | str | None] = {}
    for code, doc in dict(data.get("codes") or {}).items():
        if isinstance(doc, dict):
            codes[str(code)] = CodeDoc(
                description=str(doc.get("description", "")),
                retryable=bool(doc.get("retryable", False)),
                recovery_hint=str(doc.get("recovery_hint", "")),
                absorbs=tuple(str(a) for a in doc.get("absorbs") or ()),
            )
        else:
            codes[str(code)] = None if doc is None else str(doc)

    def handler(doc: Any, ctx: Context) -> Any:
        raise IsolationError(f"pack {ctx.pack} runs in its isolated workers only")

    handler.isolated_locator = Locator(name, module)  # type: ignore[attr-defined]
    validates = data.get("validates")
    return Pack(
        name,
        str(data["version"]),
        str(data.get("summary", "")),
        dict(data["input_schema"]),
        dict(data["output_schema"]),
        handler,
        codes=codes,
        validates=None if validates is None else bool(validates),
        docs=str(data.get("docs") or ""),
        isolated=True,
        scrub_output=bool(data.get("scrub_output")),
        reach=_reach_from(data.get("reach")),
    )


# -- starting a worker ----------------------------------------------------------------------


#: The control plane's import path as it started (before any ``--plugin`` directory was
#: put on it): where the directories its site added (``.pth`` files) are found.
_STARTED_PATH = tuple(p for p in sys.path if isinstance(p, str))


def _boot_path() -> str:
    """Where a fresh worker finds this project and its dependencies before it is confined:
    first the project's root and the interpreter's site-packages (no ``.pth`` file run:
    ``-S``); then, after the standard library (so they never shadow it nor these), the
    other directories the control plane started with, which its site's ``.pth`` files
    added (a venv that reaches another's packages, an editable install). Never the working
    directory nor a ``--plugin`` module's directory: a pack's files are not searched
    before the worker is confined. Two :data:`os.pathsep` lists, a newline between."""
    # this file is control_plane/_features/isolation/isolation.py under the project's root
    root = os.path.abspath(__file__).rsplit(os.sep, 4)[0]
    sites = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    front = list(dict.fromkeys(p for p in (root, *sites) if os.path.isdir(p)))
    here = {os.getcwd(), ""}
    tail = [
        p
        for p in dict.fromkeys(_STARTED_PATH)
        if p not in here
        and os.path.isabs(p)
        and os.path.isdir(p)
        and p not in front
        and "\n" not in p
    ]
    return os.pathsep.join(front) + "\n" + os.pathsep.join(tail)


def worker_environment(
    declared: Mapping[str, Any] | None,
    grant: Mapping[str, Any] | None,
    home: str,
    withheld: Iterable[str] = SERVER_SECRETS,
) -> dict[str, str]:
    """The environment a worker starts with, built for it, never the control plane's: with
    ambient credentials (declared or granted) ours minus what the control plane keeps for
    itself (``withheld``: its runtime's ``Reaches.withheld``); without, only ``PATH``,
    ``TZ``, ``LANG``, ``TMPDIR`` and ``home`` (the runtime's empty ``HOME``) as ``HOME``."""
    withheld = frozenset(withheld)
    ambient = declared is None or declared.get("credentials") == "ambient"
    if grant is not None and grant.get("ambient_credentials") is not None:
        ambient = bool(grant["ambient_credentials"])
    if ambient:
        env = {k: v for k, v in os.environ.items() if k not in withheld}
    else:
        from control_plane._kernel.reach import _KEPT_ENV

        env = {k: v for k, v in os.environ.items() if k in _KEPT_ENV}
        env.update(HOME=home, XDG_CONFIG_HOME=home)
    env.setdefault("PATH", os.defpath)
    return env


def _spawn(boot: Mapping[str, Any], env: Mapping[str, str], label: str) -> _Worker:
    """Start a fresh worker interpreter, hand it ``boot`` (JSON, with this interpreter's
    import path and prefixes: a venv's, with ``site``) and return it with the control
    plane's end of its socket. Its stdout and stderr: a pipe to the scrubbing relay
    (:mod:`~control_plane._runtime.stderr_relay`), each line labelled ``label``."""
    boot = {
        **boot,
        "sys_path": [p for p in sys.path if isinstance(p, str)],
        "prefixes": list(dict.fromkeys([sys.prefix, sys.exec_prefix])),
    }
    output = stderr_relay.relay().pipe(label)
    try:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    except BaseException:
        os.close(output)
        raise
    try:
        child_fd = theirs.fileno()
        popen = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-S",
                "-u",  # what the pack prints reaches the relay before it dies
                "-c",
                _BOOT,
                _boot_path(),
                str(child_fd),
                str(os.getpid()),
            ],
            pass_fds=(child_fd,),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            env=dict(env),
            close_fds=True,
            # A session of its own from its first instruction: a signal to the control
            # plane's process group (Ctrl-C, docker stop) never reaches a starting worker.
            start_new_session=True,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
        os.close(output)
    conn = Connection(ours.detach())
    with contextlib.suppress(OSError):  # it died at once: the first call sees its death
        conn.send_bytes(orjson.dumps(boot))
    return _Worker(popen, conn)


# -- the parent side -----------------------------------------------------------------------


@dataclass(slots=True)
class PoolStats:
    """Counters of one pack's worker pool."""

    calls: int = 0
    crashes: int = 0
    timeouts: int = 0
    retired: int = 0
    started: int = 0


class _Worker:
    """A worker process started by :func:`_spawn`, and the control plane's end of its
    socket."""

    __slots__ = ("conn", "popen", "sentinel")

    def __init__(self, popen: subprocess.Popen[bytes], conn: Connection) -> None:
        self.popen = popen
        self.conn = conn
        #: Readable when the process has exited (a pidfd): waited on beside its socket.
        self.sentinel = os.pidfd_open(popen.pid)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker and its process group: the children the pack started too
        (one that made a session of its own, ``setsid``, escapes), and shut our end of its
        socket (:func:`_cut`)."""
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.popen.kill()
        _cut(self.conn)

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout)
        if self.popen.returncode is not None and self.sentinel >= 0:
            with contextlib.suppress(OSError):
                os.close(self.sentinel)
            self.sentinel = -1

    def reap(self, timeout: float = 5.0) -> int | None:
        self.join(timeout)
        if self.exitcode is None:
            self.kill()
            self.join(1.0)
        with contextlib.suppress(OSError):
            self.conn.close()
        return self.exitcode


class WorkerPool:
    """The worker processes of one isolated pack (docs/reliability.md, "Pack isolation")."""

    def __init__(
        self,
        locator: Locator,
        *,
        workers: int,
        memory_limit: int | None,
        rss_limit: int,
        reaches: Reaches | None = None,
    ) -> None:
        self.locator = locator
        #: The runtime's grant table: each worker is confined to the pack's reach in it
        #: (without one: :func:`fallback_reaches`, nothing).
        self.reaches = reaches if reaches is not None else fallback_reaches([locator.pack])
        self.size = max(1, workers)
        self.memory_limit = memory_limit
        self.rss_limit = rss_limit
        self.stats = PoolStats()
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False
        self._seq = 0
        self._slots: asyncio.Semaphore | None = None
        # One thread per slot: a call's blocking exchange never waits for a thread.
        self._threads = ThreadPoolExecutor(
            max_workers=self.size, thread_name_prefix=f"isolate-{locator.pack}"
        )
        for _ in range(self.size):
            self._idle.append(self._start())

    @property
    def pack(self) -> str:
        return self.locator.pack

    def pids(self) -> list[int]:
        """Process ids of the live workers (idle and busy)."""
        with self._lock:
            workers = [*self._idle, *self._busy]
        return [w.pid for w in workers if w.pid is not None and w.alive()]

    def _start(self) -> _Worker:
        reach = _reach_of(self.locator.pack, self.reaches)
        boot = {
            "mode": "serve",
            "locator": {
                "pack": self.locator.pack,
                "module": self.locator.module,
                "qualname": self.locator.qualname,
            },
            "reach": reach,
            "memory_limit": self.memory_limit,
            "rss_limit": self.rss_limit,
        }
        env = worker_environment(
            reach["declared"], reach["grant"], self.reaches.scratch.home(), self.reaches.withheld
        )
        worker = _spawn(boot, env, f"isolated worker of {self.locator.pack}")
        self.stats.started += 1
        return worker

    def _exchange(self, worker: _Worker, data: bytes, seq: int) -> tuple[str, Any]:
        """Blocking: send one call, wait for the reply or the worker's death (a thread).

        The reply is untrusted data: anything but a well-formed JSON reply to this very
        call (a stale or forged one, an oversized one, bytes that are not JSON) retires the
        worker, and the call fails as if it had crashed."""
        outcome: tuple[str, Any] = ("died", None)
        retire = False
        try:
            try:
                worker.conn.send_bytes(data)
                ready = wait([worker.conn, worker.sentinel])
                if worker.conn in ready:
                    reply = orjson.loads(worker.conn.recv_bytes(MAX_REPLY_BYTES))
                    kind = reply.get("kind") if isinstance(reply, dict) else None
                    if kind not in ("ok", "error") or reply.get("seq") != seq:
                        outcome, retire = ("protocol", None), True
                    else:
                        retire = reply.get("retire") is True
                        outcome = (kind, reply.get("returned" if kind == "ok" else "error"))
            except (EOFError, OSError, orjson.JSONDecodeError):
                outcome = ("died", None)
        finally:
            dead = outcome[0] in ("died", "protocol")
            self._release(worker, retire=retire and not dead, dead=dead)
        return outcome

    def _release(self, worker: _Worker, *, retire: bool, dead: bool) -> None:
        # A worker whose pipe broke is dead even if its exit status has not arrived yet.
        replace = retire or dead or not worker.alive()
        if replace:
            if retire:
                self.stats.retired += 1
            # Even a retiring worker (it exits by itself) is killed with its group, before
            # it is reaped (its pid, so the group's id, cannot be reused until then): the
            # children the pack started end with it.
            worker.kill()
            code = worker.reap()
            logger.warning(
                "isolated worker of pack %s (pid %s) %s; starting a replacement",
                self.pack,
                worker.pid,
                "retired" if retire else describe_exit(code),
                extra={"event": "worker_replaced", "pack": self.pack},
            )
        with self._lock:
            self._busy.discard(worker)
            if self._closed:
                if not replace:
                    worker.kill()
                    worker.reap(1.0)
                return
            self._idle.append(self._start() if replace else worker)

    async def call(self, doc: Any, ctx: Context) -> Any:
        """Run the handler on ``doc`` in a worker; returns what it returned or raises."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.size)
        slots = self._slots
        await slots.acquire()  # the caller's deadline (asyncio.timeout) bounds this wait
        with self._lock:
            if self._closed or not self._idle:
                slots.release()
                raise IsolationError(f"the worker pool of {self.pack} is closed")
            worker = self._idle.pop()
            self._busy.add(worker)
        pid = worker.pid
        self.stats.calls += 1
        self._seq += 1
        seq = self._seq
        data = orjson.dumps(
            {"seq": seq, "request_id": ctx.request_id, "doc": doc, "deadline": ctx.deadline}
        )
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._threads, self._exchange, worker, data, seq)
        future.add_done_callback(lambda f: _settle(f, slots))
        try:
            kind, payload = await asyncio.shield(future)
        except asyncio.CancelledError:
            # Deadline passed (or the caller went away): a hung handler cannot be
            # interrupted, so the worker is killed and replaced.
            self.stats.timeouts += 1
            worker.kill()
            raise
        if kind == "ok":
            return Returned.from_data(payload)
        if kind == "error":
            raise thaw_exception(payload if isinstance(payload, dict) else {}, pid)
        self.stats.crashes += 1
        if kind == "protocol":
            raise WorkerCrashed(self.pack, pid, None, "sent a malformed reply")
        code = worker.exitcode
        logger.warning(
            "isolated worker of pack %s (pid %s) died during a call: %s",
            self.pack,
            pid,
            describe_exit(code),
            extra={"event": "worker_crashed", "pack": self.pack, "request_id": ctx.request_id},
        )
        raise WorkerCrashed(self.pack, pid, code)

    def close(self) -> None:
        """Kill every worker (idle and busy); in-flight calls see a crash."""
        with self._lock:
            self._closed = True
            workers = [*self._idle, *self._busy]
            self._idle.clear()
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.reap(2.0)
        self._threads.shutdown(wait=False, cancel_futures=True)


def _settle(future: asyncio.Future[Any], slots: asyncio.Semaphore) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: a shielded call may end after its caller left
    slots.release()


class Isolation:
    """The isolated packs of one control plane: one :class:`WorkerPool` per pack."""

    def __init__(
        self,
        packs: Mapping[str, Locator],
        *,
        workers: int = DEFAULT_WORKERS,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        rss_limit: int | None = None,
        reaches: Reaches | None = None,
    ) -> None:
        rss = rss_limit if rss_limit is not None else int((memory_limit or 0) * 0.8)
        self.pools: dict[str, WorkerPool] = {}
        #: The table made here when none was handed in (closed with the pools).
        self._own: Reaches | None = None
        if reaches is None:
            reaches = self._own = fallback_reaches(packs)
        try:
            for name, locator in packs.items():
                self.pools[name] = WorkerPool(
                    locator,
                    workers=workers,
                    memory_limit=memory_limit,
                    rss_limit=rss,
                    reaches=reaches,
                )
        except BaseException:
            self.close()
            raise

    @classmethod
    def for_registry(
        cls,
        registry: Any,
        isolate: Collection[str] = (),
        **kwargs: Any,
    ) -> Isolation | None:
        """Pools for the packs named in ``isolate`` (or ``"all"``) and those declaring
        ``isolated=True``; ``None`` when there are none. Unknown names raise."""
        names = set(isolate)
        everything = ALL in names
        names.discard(ALL)
        unknown = sorted(n for n in names if n not in registry)
        if unknown:
            listed = unknown_names(unknown, registry.names())
            raise IsolationError(f"--isolate names unknown pack(s): {listed}")
        for name in sorted(names):
            elsewhere = _out_of_process(registry.get(name))
            if elsewhere:
                raise IsolationError(
                    f"--isolate {name}: the pack runs in {elsewhere}, a separate process "
                    "already; it cannot be isolated"
                )
        chosen = {
            loaded.name: locate(loaded.name, loaded.pack.handler, loaded.plugin)
            for loaded in registry
            if (everything and not _out_of_process(loaded))
            or loaded.name in names
            or getattr(loaded.pack, "isolated", False)
        }
        if not chosen:
            return None
        if kwargs.get("reaches") is None:  # no runtime's table: the declarations, or nothing
            kwargs["reaches"] = fallback_reaches(chosen, registry.declared_reach)
        return cls(chosen, **kwargs)

    def __contains__(self, pack: object) -> bool:
        return pack in self.pools

    def __iter__(self) -> Iterator[str]:
        return iter(self.pools)

    async def call(self, pack: str, doc: Any, ctx: Context) -> Any:
        """Run ``pack``'s handler in one of its workers."""
        return await self.pools[pack].call(doc, ctx)

    def close(self) -> None:
        """Stop every worker."""
        for pool in self.pools.values():
            pool.close()
        if self._own is not None:
            self._own.close()


def fallback_reaches(packs: Iterable[str], declared: Callable[[str], Any] | None = None) -> Reaches:
    """The grant table of workers started without a runtime's (an embedder's
    ``Isolation.for_registry``, a bare :class:`WorkerPool`): each pack's declaration
    (``declared``), and nothing (:meth:`~control_plane._kernel.reach.Grant.nothing`) for a pack
    that declares none or whose declaration is not known here -- never an empty table, under
    which a worker would start unconfined."""
    from control_plane._kernel.reach import Grant, Grants

    look = declared if declared is not None else (lambda name: None)
    nothing = {name: Grant.nothing() for name in packs if look(name) is None}
    return Reaches(Grants(nothing), look)
