"""Pack isolation: chosen packs' handlers run in worker processes, only JSON data crossing back."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from typing import Any

import orjson

from control_plane.core.errors import CapabilityPackError
from control_plane.core.limits import ConfigError
from control_plane.core.pack import Context
from control_plane.core.returned import Returned, copy_returned
from control_plane.core.suggest import unknown_names
from control_plane.runtime import stderr_relay
from control_plane.runtime.parent_death import signal_on_parent_death
from control_plane.runtime.worker_failures import (
    MAX_REPLY_BYTES,
    RemoteError,
    _chain,
    _dumps,
    describe_exception,
    thaw_exception,
)

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
#: Worker processes per isolated pack.
DEFAULT_WORKERS = 2
#: Address-space cap of each worker (``RLIMIT_AS``), in bytes.
DEFAULT_MEMORY_LIMIT = 1024 * 1024 * 1024
#: Longest exception chain sent back from a worker.

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class IsolationError(CapabilityPackError, ConfigError):
    """Isolation cannot be set up as configured (e.g. a handler the worker cannot import)."""


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


@dataclass(frozen=True, slots=True)
class Locator:
    """How a worker finds a pack's handler: ``module`` + ``qualname``, or the plugin hook."""

    pack: str
    module: str
    qualname: str | None = None

    def resolve(self) -> Callable[..., Any]:
        """Import the module and return the handler (raises when it cannot)."""
        mod = importlib.import_module(self.module)
        if self.qualname is not None:
            obj: Any = mod
            for part in self.qualname.split("."):
                obj = getattr(obj, part)
            if not callable(obj):
                raise IsolationError(f"{self.module}.{self.qualname} is not callable")
            return obj  # type: ignore[no-any-return]
        hook = getattr(mod, "register_packs", None)
        if hook is None:
            raise IsolationError(f"module {self.module} has no register_packs hook")
        found: dict[str, Any] = {}
        hook(register=lambda pack: found.setdefault(getattr(pack, "name", ""), pack))
        if self.pack not in found:
            raise IsolationError(f"plugin module {self.module} does not register {self.pack}")
        handler: Callable[..., Any] = found[self.pack].handler
        return handler


def _out_of_process(loaded: Any) -> str | None:
    """Where a pack whose work already runs in another process runs (an MCP server: its
    handler carries ``out_of_process``), else ``None``; ``--isolate all`` skips those."""
    where = getattr(getattr(loaded.pack, "handler", None), "out_of_process", None)
    return where if isinstance(where, str) else None


def locate(pack: str, handler: Any, plugin: str) -> Locator:
    """The :class:`Locator` of ``handler``; :class:`IsolationError` if a worker cannot find it."""
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


def _die_with_parent() -> None:
    """Linux: the worker gets SIGKILL when the control plane process dies."""
    signal_on_parent_death(signal.SIGKILL)


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
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


def worker_main(
    conn: Connection,
    locator: Locator,
    memory_limit: int | None,
    rss_limit: int,
    output: Connection | None = None,
    reach: Mapping[str, Any] | None = None,
) -> None:
    """A worker's loop: receive a call, run the handler, send back the result or error.

    Only JSON crosses the pipe, both ways. Requests are ``{"seq", "request_id", "doc",
    "deadline"}``; replies ``{"seq", "kind": "ok", "returned": ...}`` (what the handler
    returned, copied to plain data here: :class:`~control_plane.core.returned.Returned`)
    or ``{"seq", "kind": "error", "error": ...}`` (:func:`describe_exception`), each with
    ``retire`` (the worker is about to exit).

    ``reach`` carries the server's scratch root and the operator's grant of the pack: once
    the handler is imported, the worker is confined to that reach (:func:`_confine`).
    """
    # A process group of its own: whatever the pack starts (a subprocess, a fork) ends with
    # the worker (the parent kills the group, not only the worker).
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    if output is not None:  # what the pack prints reaches the control plane's scrubbing relay
        os.dup2(output.fileno(), 1)
        os.dup2(output.fileno(), 2)
        output.close()
    _ignore_stop_signals()
    _die_with_parent()
    if memory_limit:
        import resource

        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    handler: Callable[..., Any] | None = None
    setup_error: BaseException | None = None
    try:
        handler = locator.resolve()
        _confine(locator.pack, reach)
    # Process boundary: importing the pack (or confining it) may raise anything; each call
    # reports it -- a worker that could not be confined never runs the handler.
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
            returned = _run(handler, setup_error, locator.pack, doc, request_id, deadline)
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


def _confine(pack: str, reach: Mapping[str, Any] | None) -> None:
    """Take the server's scratch root and grant, then confine this worker to the pack's
    reach in the kernel (no-new-privs, Landlock: :mod:`control_plane.runtime.confine`)."""
    from control_plane.core.reach import (
        Grant,
        Grants,
        adopt_scratch,
        install_grants,
        install_message_limit,
        reach_for,
    )
    from control_plane.runtime import tool_process
    from control_plane.runtime.confine import confine

    tool_process.install()  # ctx.reach.run in this worker
    if reach is not None:
        if reach.get("scratch"):
            adopt_scratch(str(reach["scratch"]))
        if reach.get("message_limit"):
            install_message_limit(int(reach["message_limit"]))
        grant = reach.get("grant")
        if grant is not None:
            install_grants(Grants({pack: Grant.from_data(grant)}))
    confine(reach_for(pack))


def _reach_of(pack: str) -> dict[str, Any]:
    """What a worker of ``pack`` needs of the server's reach (plain data)."""
    from control_plane.core.reach import installed_grants, message_limit, scratch_root

    grant = installed_grants().by_pack.get(pack)
    return {
        "scratch": scratch_root(),
        "grant": None if grant is None else grant.to_data(),
        "message_limit": message_limit(),
    }


def _run(
    handler: Callable[..., Any] | None,
    setup_error: BaseException | None,
    pack: str,
    doc: Any,
    request_id: str,
    deadline: float | None,
) -> Any:
    if handler is None:
        raise IsolationError(f"the worker could not load pack {pack}") from setup_error
    return handler(doc, Context(pack, request_id, deadline))


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


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
    __slots__ = ("conn", "process")

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn

    @property
    def pid(self) -> int | None:
        pid: int | None = self.process.pid
        return pid

    def alive(self) -> bool:
        return bool(self.process.is_alive())

    def kill(self) -> None:
        """SIGKILL the worker and its process group: the children the pack started too
        (one that made a session of its own, ``setsid``, escapes)."""
        pid = self.pid
        if pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.process.kill()

    def reap(self, timeout: float = 5.0) -> int | None:
        self.process.join(timeout)
        if self.process.exitcode is None:
            self.kill()
            self.process.join(1.0)
        with contextlib.suppress(OSError):
            self.conn.close()
        code: int | None = self.process.exitcode
        return code


class WorkerPool:
    """The worker processes of one isolated pack (docs/reliability.md, "Pack isolation")."""

    def __init__(
        self,
        locator: Locator,
        *,
        workers: int,
        memory_limit: int | None,
        rss_limit: int,
        mp_context: BaseContext,
    ) -> None:
        self.locator = locator
        self.size = max(1, workers)
        self.memory_limit = memory_limit
        self.rss_limit = rss_limit
        self.stats = PoolStats()
        self._mp = mp_context
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
        parent_end, child_end = self._mp.Pipe(duplex=True)
        # The worker's stdout and stderr: a pipe to the scrubbing relay (stderr_relay).
        output = Connection(stderr_relay.relay().pipe(), readable=False)
        process = self._mp.Process(  # type: ignore[attr-defined]
            target=worker_main,
            args=(
                child_end,
                self.locator,
                self.memory_limit,
                self.rss_limit,
                output,
                _reach_of(self.locator.pack),
            ),
            name=f"pack-worker:{self.locator.pack}",
            daemon=True,
        )
        try:
            with _main_hidden():
                process.start()
        finally:
            output.close()
        child_end.close()  # only the worker holds it: its death reads as EOF here
        self.stats.started += 1
        return _Worker(process, parent_end)

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
                ready = wait([worker.conn, worker.process.sentinel])
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
        code = worker.process.exitcode
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


_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def _main_hidden() -> Iterator[None]:
    """Start workers without re-importing the parent's ``__main__`` (a CLI, a test runner,
    a script): they only need the pack's module, and some mains are not import-safe."""
    with _MAIN_LOCK:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


def _settle(future: asyncio.Future[Any], slots: asyncio.Semaphore) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: a shielded call may end after its caller left
    slots.release()


def default_context() -> BaseContext:
    """``forkserver`` (workers fork from a small preloaded server) on Linux, else ``spawn``."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # The preload module also makes the fork server ignore SIGINT/SIGTERM: a signal to
        # the whole process group must not take it (and, through PR_SET_PDEATHSIG, every
        # worker it forked) down before the control plane has drained them.
        ctx.set_forkserver_preload(
            ["control_plane.runtime._forkserver_preload", "control_plane.runtime.isolation"]
        )
        return ctx
    return multiprocessing.get_context("spawn")


class Isolation:
    """The isolated packs of one control plane: one :class:`WorkerPool` per pack."""

    def __init__(
        self,
        packs: Mapping[str, Locator],
        *,
        workers: int = DEFAULT_WORKERS,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        rss_limit: int | None = None,
        mp_context: BaseContext | None = None,
    ) -> None:
        context = mp_context if mp_context is not None else default_context()
        rss = rss_limit if rss_limit is not None else int((memory_limit or 0) * 0.8)
        self.pools: dict[str, WorkerPool] = {}
        try:
            for name, locator in packs.items():
                self.pools[name] = WorkerPool(
                    locator,
                    workers=workers,
                    memory_limit=memory_limit,
                    rss_limit=rss,
                    mp_context=context,
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
        return cls(chosen, **kwargs)

    def __contains__(self, pack: object) -> bool:
        return pack in self.pools

    def __iter__(self) -> Iterator[str]:
        return iter(self.pools)

    async def call(self, pack: str, doc: Any, ctx: Context) -> Any:
        """Run ``pack``'s handler in one of its workers."""
        return await self.pools[pack].call(doc, ctx)

    def stats(self) -> dict[str, PoolStats]:
        return {name: pool.stats for name, pool in self.pools.items()}

    def close(self) -> None:
        """Stop every worker."""
        for pool in self.pools.values():
            pool.close()


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds pass (tests and tools)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
