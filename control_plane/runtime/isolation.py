"""Pack isolation: run chosen packs' handlers in worker processes.

In-process handlers are the fast default for trusted packs. A pack that may call
``os._exit``, segfault, leak memory or hang past its deadline can instead run in a pool
of worker processes (``packctl serve --isolate PACK`` or ``--isolate all``, or
``Pack(..., isolated=True)``):

* each isolated pack gets its own pool of ``workers`` processes (``forkserver`` on Linux,
  ``spawn`` elsewhere); a worker runs one call at a time;
* the handler is looked up in the worker by reference: its module and qualified name
  when it is a module-level function, else the plugin module's ``register_packs`` hook
  and the pack name;
* a worker whose process dies (``os._exit``, a signal such as ``SIGSEGV``) fails the call
  it was running with :class:`WorkerCrashed`, which the invoke pipeline turns into
  ``internal_error`` with a reference id; the worker is replaced;
* a call that passes its deadline gets ``timeout`` as in-process calls do, and its worker
  is killed and replaced (a hung handler cannot be stopped any other way);
* ``memory_limit`` caps each worker's address space (``RLIMIT_AS``): a leak ends in
  ``MemoryError`` (``internal_error``) and the worker is retired, as is a worker whose
  resident set grew past ``rss_limit`` after a call;
* exceptions travel back with their type, attributes, ``__cause__``/``__context__`` chain
  and the worker's traceback (as a note), so classification and incidents work as they
  do in-process.

When no pack is isolated, the only cost on the invoke path is one ``is None`` test.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import inspect
import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from typing import Any

from control_plane.core.classifiers._frames import mark_origin
from control_plane.core.errors import CapabilityPackError
from control_plane.core.limits import ConfigError
from control_plane.core.pack import Context

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
_MAX_CHAIN = 16

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class IsolationError(CapabilityPackError, ConfigError):
    """Isolation cannot be set up as configured (e.g. a handler the worker cannot import)."""


class WorkerCrashed(CapabilityPackError):
    """The worker process running a call died before answering (never a pack code)."""

    def __init__(self, pack: str, pid: int | None, exitcode: int | None) -> None:
        super().__init__(
            f"the isolated worker (pid {pid}) of pack {pack} died before answering: "
            f"{describe_exit(exitcode)}"
        )
        self.pack = pack
        self.pid = pid
        self.exitcode = exitcode


class RemoteError(Exception):
    """Stands in for a worker exception that could not be sent back as itself."""

    def __init__(self, type_name: str, text: str) -> None:
        super().__init__(f"{type_name}: {text}")
        self.type_name = type_name


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


# -- exceptions across the process boundary --------------------------------------------


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


def _freeze_one(exc: BaseException) -> tuple[str, Any]:
    """One exception as picklable data that rebuilds it as faithfully as possible."""
    state = dict(getattr(exc, "__dict__", {}))
    if not state:
        try:
            data = pickle.dumps(exc)
            if type(pickle.loads(data)) is type(exc):
                return ("pickle", data)
        # Arbitrary exception types: pickling may fail in any way; fall through.
        except Exception:  # noqa: BLE001
            pass
    kept: dict[str, Any] = {}
    for key, raw in state.items():
        if key.startswith("__"):
            continue
        value: Any = raw
        try:
            pickle.dumps(value)
        # A pack's attribute of any type: keep only what pickles.
        except Exception:  # noqa: BLE001
            value = _plain_mapping(raw)  # headers (aiohttp's CIMultiDictProxy) as a dict
            if value is None:
                continue
        kept[key] = value
    for args in (exc.args, ()):  # args that do not pickle (aiohttp's request_info): drop them
        try:
            return ("state", pickle.dumps((type(exc), args, kept)))
        # The exception's class or args may not pickle (local classes, odd args).
        except Exception:  # noqa: BLE001
            continue
    return ("remote", (type(exc).__qualname__, _safe_str(exc)))


def _plain_mapping(value: Any) -> dict[str, str] | None:
    """A mapping of strings that does not pickle (a headers proxy) as a plain dict."""
    if not isinstance(value, Mapping):
        return None
    try:
        plain = {str(k): str(v) for k, v in list(value.items())[:200]}
        pickle.dumps(plain)
    # A hostile mapping: its items or their str() may raise anything.
    except Exception:  # noqa: BLE001
        return None
    return plain


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    # Hostile ``__str__``: the text is only for the operator's incident record.
    except Exception:  # noqa: BLE001
        return f"<{type(exc).__name__} with unprintable text>"


def freeze_exception(exc: BaseException) -> bytes:
    """``exc`` with its chain and traceback text, as bytes for :func:`thaw_exception`."""
    order = _chain(exc)
    for e in order:
        mark_origin(e)  # what only the frames show (a missing program, ...) travels as data
    index = {id(e): i for i, e in enumerate(order)}
    items = [
        (
            _freeze_one(e),
            index.get(id(e.__cause__)) if e.__cause__ is not None else None,
            index.get(id(e.__context__)) if e.__context__ is not None else None,
            e.__suppress_context__,
        )
        for e in order
    ]
    try:
        text = "".join(traceback.format_exception(exc))
    # Formatting runs the exceptions' __str__; it must not stop the reply.
    except Exception:  # noqa: BLE001
        text = f"{type(exc).__name__} (traceback unavailable)"
    return pickle.dumps((items, text))


def _thaw_one(kind: str, data: Any) -> BaseException:
    if kind == "pickle":
        with contextlib.suppress(Exception):
            rebuilt = pickle.loads(data)
            if isinstance(rebuilt, BaseException):
                return rebuilt
    elif kind == "state":
        with contextlib.suppress(Exception):
            cls, args, state = pickle.loads(data)
            obj = cls.__new__(cls)
            obj.args = args
            obj.__dict__.update(state)
            if isinstance(obj, BaseException):
                return obj
    elif kind == "remote":
        type_name, text = data
        return RemoteError(str(type_name), str(text))
    return RemoteError("Exception", "an exception that could not be rebuilt")


def thaw_exception(data: bytes, pid: int | None = None) -> BaseException:
    """The exception :func:`freeze_exception` sent, chain relinked, worker traceback noted."""
    items, text = pickle.loads(data)
    rebuilt = [_thaw_one(kind, payload) for (kind, payload), _, _, _ in items]
    for exc, (_, cause, context, suppress) in zip(rebuilt, items, strict=True):
        exc.__cause__ = rebuilt[cause] if cause is not None else None
        exc.__context__ = rebuilt[context] if context is not None else None
        exc.__suppress_context__ = bool(suppress)
    top = rebuilt[0]
    note = f"--- traceback in isolated worker (pid {pid}) ---\n{text.rstrip()}"
    try:
        top.add_note(note)
    # A rebuilt object missing unpicklable state (urllib's HTTPError without its file)
    # may raise from any attribute access; keep it, noted where possible.
    except Exception:  # noqa: BLE001
        with contextlib.suppress(Exception):
            object.__setattr__(top, "__notes__", [note])
    return top


# -- the worker process --------------------------------------------------------------------


def _die_with_parent() -> None:
    """Linux: the worker gets SIGKILL when the control plane process dies."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _has_memory_error(exc: BaseException) -> bool:
    return any(isinstance(e, MemoryError) for e in _chain(exc))


def worker_main(
    conn: Connection, locator: Locator, memory_limit: int | None, rss_limit: int
) -> None:
    """A worker's loop: receive a call, run the handler, send back the result or error.

    Requests are ``pickle((request_id, doc, deadline))``; replies are
    ``pickle((kind, payload, retire))`` with ``kind`` ``"ok"`` or ``"error"``.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the control plane decides when we stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    if memory_limit:
        import resource

        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    handler: Callable[..., Any] | None = None
    setup_error: BaseException | None = None
    try:
        handler = locator.resolve()
    # Process boundary: importing the pack may raise anything; each call reports it.
    except BaseException as exc:  # noqa: BLE001
        setup_error = exc
    loop: asyncio.AbstractEventLoop | None = None
    while True:
        try:
            request_id, doc, deadline = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        retire = False
        try:
            returned = _run(handler, setup_error, locator.pack, doc, request_id, deadline)
            if inspect.isawaitable(returned):
                if loop is None:
                    loop = asyncio.new_event_loop()
                returned = loop.run_until_complete(_awaited(returned))
            try:
                reply = pickle.dumps(("ok", returned, False))
            except (TypeError, ValueError, AttributeError, pickle.PicklingError) as exc:
                raise TypeError(
                    f"the pack's output cannot leave the worker process: {exc}"
                ) from None
        # Process boundary: the handler may raise anything; it all goes back to the caller.
        except BaseException as exc:  # noqa: BLE001
            retire = _has_memory_error(exc)
            try:
                reply = pickle.dumps(("error", freeze_exception(exc), retire))
            except MemoryError:
                os._exit(70)
        if rss_limit and not retire and _rss_bytes() > rss_limit:
            retire = True
            reply = _retired(reply)
        try:
            conn.send_bytes(reply)
        except (OSError, ValueError):
            return
        if retire:
            return


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


def _retired(reply: bytes) -> bytes:
    kind, payload, _ = pickle.loads(reply)
    return pickle.dumps((kind, payload, True))


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
    """The worker processes of one isolated pack (see module docs)."""

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
        process = self._mp.Process(  # type: ignore[attr-defined]
            target=worker_main,
            args=(child_end, self.locator, self.memory_limit, self.rss_limit),
            name=f"pack-worker:{self.locator.pack}",
            daemon=True,
        )
        with _main_hidden():
            process.start()
        child_end.close()  # only the worker holds it: its death reads as EOF here
        self.stats.started += 1
        return _Worker(process, parent_end)

    def _exchange(self, worker: _Worker, data: bytes) -> tuple[str, Any]:
        """Blocking: send one call, wait for the reply or the worker's death (a thread)."""
        outcome: tuple[str, Any] = ("died", None)
        retire = False
        try:
            try:
                worker.conn.send_bytes(data)
                ready = wait([worker.conn, worker.process.sentinel])
                if worker.conn in ready:
                    kind, payload, retire = pickle.loads(worker.conn.recv_bytes())
                    outcome = (kind, payload)
                else:
                    outcome = ("died", None)
            except (EOFError, OSError, pickle.UnpicklingError):
                outcome = ("died", None)
        finally:
            self._release(worker, retire=retire, dead=outcome[0] == "died")
        return outcome

    def _release(self, worker: _Worker, *, retire: bool, dead: bool) -> None:
        # A worker whose pipe broke is dead even if its exit status has not arrived yet.
        replace = retire or dead or not worker.alive()
        if replace:
            if retire:
                self.stats.retired += 1
            else:
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
        data = pickle.dumps((ctx.request_id, doc, ctx.deadline))
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._threads, self._exchange, worker, data)
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
            return payload
        if kind == "error":
            raise thaw_exception(payload, pid)
        self.stats.crashes += 1
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
        ctx.set_forkserver_preload(["control_plane.runtime.isolation"])
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
            raise IsolationError(f"--isolate names unknown pack(s): {', '.join(unknown)}")
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
