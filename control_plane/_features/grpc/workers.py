"""``packctl serve --workers N``: N server processes on one port, one supervisor (docs/cli.md)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Any

import orjson
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import start_http_server
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families

from control_plane._features.grpc.server import IGNORED_SIGNALS
from control_plane._runtime.parent_death import signal_on_parent_death

__all__ = [
    "DEFAULT_WORKER_TIMEOUT",
    "ENV_STATUS_FD",
    "ENV_SUPERVISOR",
    "ENV_WORKER",
    "HEARTBEAT",
    "MAX_RESTARTS",
    "MAX_WORKERS",
    "MIN_WORKER_TIMEOUT",
    "PORT_TAKEN_HINT",
    "Supervisor",
    "WorkerInfo",
    "follow_supervisor",
    "parse_workers",
    "probe_port",
    "report_ready",
    "worker_index",
]

#: Set in a worker's environment: its index, ``0`` .. ``N-1``.
ENV_WORKER = "CAPABILITY_PACKS_WORKER"
#: Set in a worker's environment: the file descriptor it reports readiness on.
ENV_STATUS_FD = "CAPABILITY_PACKS_WORKER_STATUS_FD"
#: Set in a worker's environment: the supervisor's pid (the worker ends when it is gone).
ENV_SUPERVISOR = "CAPABILITY_PACKS_SUPERVISOR_PID"
#: Seconds between two checks that the supervisor is alive, where the kernel cannot signal
#: its death (not Linux).
SUPERVISOR_POLL = 1.0
#: Unexpected worker exits tolerated per minute before the whole server stops.
MAX_RESTARTS = 5
#: The most workers ``--workers`` accepts (each is a whole server process).
MAX_WORKERS = 256
#: Seconds a worker may take from spawn to ready.
START_TIMEOUT = 60.0
#: Extra seconds after ``--grace`` before a draining worker is killed.
KILL_MARGIN = 10.0
#: Seconds a scrape of one worker's metrics may take.
SCRAPE_TIMEOUT = 5.0
#: Load failures a worker reports to the supervisor (each cut to MAX_FAILURE_TEXT chars).
MAX_REPORTED_FAILURES = 100
MAX_FAILURE_TEXT = 2000
#: Seconds between two heartbeats of a serving worker's event loop.
HEARTBEAT = 0.25
#: The shortest ``--worker-timeout`` (other than 0, off): four heartbeats.
MIN_WORKER_TIMEOUT = 1.0
#: Seconds without a heartbeat after which a worker is killed and replaced
#: (``--worker-timeout``; 0 turns it off).
DEFAULT_WORKER_TIMEOUT = 60.0
#: Workers' metrics read at once by one scrape of the merged endpoint.
MAX_SCRAPERS = 32


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def parse_workers(text: str) -> int:
    """``--workers`` value: a positive integer, or ``auto`` for :func:`available_cores`."""
    value = text.strip().lower()
    if value == "auto":
        return available_cores()
    try:
        count = int(value)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a number of workers (a positive integer or auto)"
        ) from None
    if count < 1:
        raise ValueError(f"{text!r}: the number of workers must be >= 1")
    if count > MAX_WORKERS:
        raise ValueError(
            f"{text!r}: at most {MAX_WORKERS} workers (this machine has "
            f"{available_cores()} core(s); auto uses them all)"
        )
    return count


def worker_index() -> int | None:
    """This process's worker index when it runs under a supervisor, else ``None``."""
    value = os.environ.get(ENV_WORKER)
    return int(value) if value is not None and value.isdigit() else None


def follow_supervisor(grace: float = 10.0) -> bool:
    """In a worker: end when the supervisor is gone -- a graceful drain (SIGTERM to itself),
    and an exit regardless ``grace`` + :data:`KILL_MARGIN` seconds later.

    A supervisor killed outright (``kill -9``, a crash, a signal it does not handle such as
    SIGALRM) cannot stop its workers; an orphaned worker would go on serving the port with
    no supervision, and the next supervisor's workers would join it there. On Linux the
    kernel sends the signal (:func:`signal_on_parent_death`); elsewhere a daemon thread
    checks the parent once a second and sends it. The drain needs the worker's event loop;
    one blocked by a pack never drains, so the same thread ends the process
    (``os._exit(1)``) once the drain has had its time. (A *stopped* orphan does nothing
    until it is continued or killed.) False when the supervisor was gone before this was
    set up (the worker should not start serving). Outside a supervisor: nothing, True.
    """
    text = os.environ.get(ENV_SUPERVISOR, "")
    if not text.isdigit():
        return True
    supervisor = int(text)
    signalled = signal_on_parent_death(signal.SIGTERM)

    def watch() -> None:
        while os.getppid() == supervisor:
            time.sleep(SUPERVISOR_POLL)
        if not signalled:
            os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace + KILL_MARGIN)
        with contextlib.suppress(OSError):
            os.write(
                2,
                f"packctl: worker {os.getpid()}: the supervisor is gone and the drain did not "
                f"end within {grace + KILL_MARGIN:g} s; exiting\n".encode(),
            )
        os._exit(1)

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()
    return os.getppid() == supervisor  # checked after: a death before the request is seen


def report_ready(
    port: int,
    metrics_port: int | None,
    packs: int = 0,
    failures: Sequence[str] = (),
    notices: Sequence[str] = (),
) -> None:
    """Tell the supervisor this worker serves ``packs`` packs (and which plugins failed to
    load: ``failures``, at most :data:`MAX_REPORTED_FAILURES`; the start-up lines a single
    server prints, such as the grants: ``notices``, as many), then send it a heartbeat
    every :data:`HEARTBEAT` second from the running event loop (call it on the loop that
    serves). No-op outside a supervisor."""
    fd_text = os.environ.pop(ENV_STATUS_FD, None)
    if fd_text is None or not fd_text.isdigit():
        return
    line = orjson.dumps(
        {
            "pid": os.getpid(),
            "port": port,
            "metrics_port": metrics_port,
            "packs": packs,
            "failures": [text[:MAX_FAILURE_TEXT] for text in failures[:MAX_REPORTED_FAILURES]],
            "notices": [text[:MAX_FAILURE_TEXT] for text in notices[:MAX_REPORTED_FAILURES]],
        }
    )
    fd = int(fd_text)
    try:
        os.write(fd, line + b"\n")
        loop = asyncio.get_running_loop()
    except (OSError, RuntimeError):
        os.close(fd)
        return
    os.set_inheritable(fd, False)  # not the pack's children
    os.set_blocking(fd, False)

    def beat() -> None:
        try:
            os.write(fd, b".")
        except BlockingIOError:
            pass  # the supervisor is behind reading: the pipe holds enough beats
        except OSError:
            os.close(fd)  # the supervisor is gone
            return
        loop.call_later(HEARTBEAT, beat)

    loop.call_later(HEARTBEAT, beat)


# -- the port ---------------------------------------------------------------------------


def split_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) -> (host, port)."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit():
        raise ValueError(f"{address!r} is not HOST:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port_text)


def join_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


#: What to do about a port someone else holds (appended to the bind error).
PORT_TAKEN_HINT = (
    "another server holds the port: stop it, or choose another with --address HOST:PORT "
    "(port 0: any free one)"
)


def probe_port(address: str) -> tuple[int, int, int, Any]:
    """Raise :class:`OSError` if ``address``'s port is held by anybody (a bind with
    ``SO_REUSEADDR``, not listening, released at once; port 0 is not probed); else its
    ``(family, type, proto, sockaddr)``."""
    host, port = split_address(address)
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, sockaddr = infos[0]
    if port != 0:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(sockaddr)  # EADDRINUSE when anybody serves (or reserved) the port
    return family, kind, proto, sockaddr


def reserve_port(address: str) -> tuple[socket.socket, str]:
    """Bind ``address`` with ``SO_REUSEPORT`` (not listening): the socket and the address
    with its port resolved. Workers bind the same port; nobody else can meanwhile.

    A port someone already holds is refused (:class:`OSError`), even one held with
    ``SO_REUSEPORT`` by another supervisor's workers: a second ``serve --workers`` on the
    same port would otherwise take a share of its connections, silently. (Checked by a bind
    without ``SO_REUSEPORT`` just before; a server starting in between is not seen.)
    """
    host, _ = split_address(address)
    family, kind, proto, sockaddr = probe_port(address)
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(sockaddr)
    except OSError:
        sock.close()
        raise
    bound = sock.getsockname()[1]
    return sock, join_address(host, bound)


# -- metrics: one scrape, every worker --------------------------------------------------


#: Sample names of a family that only grow (a counter's, a histogram's or summary's counts).
_MONOTONIC_SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_count", "_sum"),
    "summary": ("_count", "_sum"),
}

_SampleKey = tuple[str, tuple[tuple[str, str], ...]]


class WorkerMetricsCollector:
    """A Prometheus collector reading every worker's ``/metrics`` at scrape time.

    A worker slot's counters continue across the processes that fill it: when worker ``i``
    is replaced (it died, or was killed silent), the last values read from the old process
    are added to the new one's, so ``..._total{worker="i"}`` never goes back. (A drop to the
    new process's small values would read as a reset to Prometheus only while the new value
    is below the old; once the replacement has counted more than its predecessor had,
    ``rate()`` and ``increase()`` would silently lose the old process's whole count.) What
    the old process counted after the last scrape is lost with it.
    """

    def __init__(self, supervisor: Supervisor) -> None:
        self._supervisor = supervisor
        self._lock = threading.Lock()
        #: Per slot: the process last read, what it last showed, the totals of earlier ones.
        self._pid: dict[int, int] = {}
        self._last: dict[int, dict[_SampleKey, float]] = {}
        self._base: dict[int, dict[_SampleKey, float]] = {}

    def _carried(
        self, index: int, pid: int
    ) -> tuple[dict[_SampleKey, float], dict[_SampleKey, float]]:
        """The offsets of slot ``index`` now served by ``pid``, and where to keep its values."""
        if self._pid.get(index, pid) != pid:  # a replacement: carry what the old one counted
            base = self._base.setdefault(index, {})
            for key, value in self._last.pop(index, {}).items():
                base[key] = base.get(key, 0.0) + value
        self._pid[index] = pid
        return self._base.get(index, {}), self._last.setdefault(index, {})

    def collect(self) -> Iterable[Metric]:
        merged: dict[str, Metric] = {}
        up = GaugeMetricFamily(
            "capability_packs_worker_up",
            "1 when the worker's metrics could be read in this scrape, else 0.",
            labels=["worker"],
        )
        workers = self._supervisor.all_workers()
        texts = _scrape_all(workers)
        with self._lock:
            for worker, text in zip(workers, texts, strict=True):
                label = str(worker.index)
                up.add_metric([label], 0.0 if text is None else 1.0)
                if text is None:
                    continue
                base, last = self._carried(worker.index, worker.proc.pid)
                for family in text_string_to_metric_families(text):
                    into = merged.get(family.name)
                    if into is None:
                        into = Metric(family.name, family.documentation, family.type, family.unit)
                        merged[family.name] = into
                    grows = _MONOTONIC_SUFFIXES.get(family.type, ())
                    for sample in family.samples:
                        value = sample.value
                        if grows and sample.name.endswith(grows):
                            key = (sample.name, tuple(sorted(sample.labels.items())))
                            last[key] = value
                            value += base.get(key, 0.0)
                        into.add_sample(
                            sample.name,
                            {"worker": label, **sample.labels},
                            value,
                            sample.timestamp,
                            sample.exemplar,
                        )
        yield up
        yield from merged.values()

    def describe(self) -> Iterable[Metric]:
        return ()


def _scrape_all(workers: Sequence[WorkerInfo]) -> list[str | None]:
    """Every serving worker's metrics text (``None``: not serving, or no answer), read
    side by side: a hung worker costs the scrape one :data:`SCRAPE_TIMEOUT`, not one each."""
    ports = [w.metrics_port if w.ready else None for w in workers]
    if not any(ports):
        return [None] * len(ports)
    with ThreadPoolExecutor(min(len(ports), MAX_SCRAPERS), "worker-scrape") as pool:
        reads = [pool.submit(_scrape, port) if port else None for port in ports]
        return [read.result() if read is not None else None for read in reads]


def _scrape(port: int) -> str | None:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/metrics", timeout=SCRAPE_TIMEOUT
        ) as reply:
            return bytes(reply.read()).decode()
    except OSError:
        return None


# -- the supervisor ---------------------------------------------------------------------


@dataclass
class WorkerInfo:
    """One worker process as the supervisor sees it."""

    index: int
    proc: subprocess.Popen[bytes]
    started: float
    status_fd: int | None = None
    pid: int = 0
    metrics_port: int | None = None
    packs: int = 0
    ready: bool = False
    buffer: bytes = field(default=b"", repr=False)
    #: When the supervisor last heard from the worker (its ready line, a heartbeat).
    heard: float = 0.0
    #: The plugins that failed to load in this worker, as ``packctl list`` prints them.
    failures: list[str] = field(default_factory=list)
    #: The start-up lines a single server prints (grants), as the worker reported them.
    notices: list[str] = field(default_factory=list)
    #: Killed by the supervisor for its silence (not counted as a crash).
    silenced: bool = False


class WorkerStartError(RuntimeError):
    """A worker exited or stayed silent before it served."""


class Supervisor:
    """Start N ``packctl serve`` workers on one port; pass signals; restart the dead."""

    def __init__(
        self,
        count: int,
        worker_argv: Sequence[str],
        *,
        grace: float,
        env: Mapping[str, str] | None = None,
        stderr: IO[str] | None = None,
        worker_timeout: float = DEFAULT_WORKER_TIMEOUT,
    ) -> None:
        self.count = count
        self._argv = list(worker_argv)
        self._grace = grace
        self._worker_timeout = worker_timeout
        self._env = dict(env if env is not None else os.environ)
        self._stderr = stderr if stderr is not None else sys.stderr
        self._workers: dict[int, WorkerInfo] = {}
        self._lock = threading.Lock()
        self._restarts: list[float] = []
        self._metrics_server: Any = None
        #: Ignored signals received, logged by :meth:`run`'s loop (not in the handler,
        #: which may interrupt a write to the same stream).
        self._ignored: deque[int] = deque(maxlen=64)

    # -- workers ------------------------------------------------------------------------

    def workers(self) -> list[WorkerInfo]:
        """The workers that serve, by index."""
        with self._lock:
            return [w for _, w in sorted(self._workers.items()) if w.ready]

    def all_workers(self) -> list[WorkerInfo]:
        """Every worker slot's current process, serving or (re)starting, by index."""
        with self._lock:
            return [w for _, w in sorted(self._workers.items())]

    def _spawn(self, index: int) -> WorkerInfo:
        read_fd, write_fd = os.pipe()
        env = dict(self._env)
        env[ENV_WORKER] = str(index)
        env[ENV_STATUS_FD] = str(write_fd)
        env[ENV_SUPERVISOR] = str(os.getpid())
        try:
            proc = subprocess.Popen(
                self._argv,
                env=env,
                pass_fds=(write_fd,),
                stdin=subprocess.DEVNULL,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        os.set_blocking(read_fd, False)
        info = WorkerInfo(index, proc, time.monotonic(), status_fd=read_fd)
        with self._lock:
            self._workers[index] = info
        return info

    def _read_status(self, info: WorkerInfo) -> None:
        """Consume what the worker reported on its status pipe (non-blocking)."""
        if info.status_fd is None:
            return
        try:
            chunk = os.read(info.status_fd, 4096)
        except BlockingIOError:
            return
        if chunk:
            info.heard = time.monotonic()
            if not info.ready:
                info.buffer += chunk
        if not info.ready and b"\n" in info.buffer:
            line, _, info.buffer = info.buffer.partition(b"\n")
            data = orjson.loads(line)
            info.pid = int(data["pid"])
            port = data.get("metrics_port")
            info.metrics_port = int(port) if port is not None else None
            info.packs = int(data.get("packs", 0))
            info.failures = [str(text) for text in data.get("failures", ())]
            info.notices = [str(text) for text in data.get("notices", ())]
            info.buffer = b""
            with self._lock:
                info.ready = True
        if not chunk:
            os.close(info.status_fd)
            info.status_fd = None

    def _wait_ready(
        self,
        pending: Iterable[WorkerInfo],
        timeout: float,
        stop: threading.Event | None = None,
    ) -> None:
        """Until every worker of ``pending`` serves, or ``stop`` is set (SIGTERM while
        workers start: the caller drains what started instead of waiting for the rest)."""
        waiting = {w.index: w for w in pending}
        deadline = time.monotonic() + timeout
        while waiting and not (stop is not None and stop.is_set()):
            for info in list(waiting.values()):
                if info.status_fd is not None:
                    self._read_status(info)
                if info.ready:
                    del waiting[info.index]
                elif info.proc.poll() is not None or info.status_fd is None:
                    code = info.proc.wait()
                    raise WorkerStartError(f"worker {info.index} exited with {code} before serving")
            if not waiting:
                return
            # the serving workers stay watched while others (re)start
            self._kill_silent()
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerStartError(f"workers {sorted(waiting)} not ready after {timeout:g} s")
            fds = [w.status_fd for w in waiting.values() if w.status_fd is not None]
            select.select(fds, [], [], min(left, 0.1))

    def start(self, stop: threading.Event | None = None) -> None:
        """Spawn every worker and wait until all serve (or ``stop`` is set);
        :class:`WorkerStartError` if one cannot."""
        infos = [self._spawn(i) for i in range(self.count)]
        try:
            self._wait_ready(infos, START_TIMEOUT, stop)
        except WorkerStartError:
            self.stop(grace=1.0)
            raise

    def pids(self) -> list[int]:
        """The ready workers' process ids, by worker index."""
        return [w.proc.pid for w in self.workers()]

    def packs(self) -> int:
        """Packs served (every worker loads the same plugins; the first worker's count)."""
        ready = self.workers()
        return ready[0].packs if ready else 0

    def failures(self) -> list[str]:
        """Plugins that failed to load (the same in every worker; the first worker's)."""
        ready = self.workers()
        return list(ready[0].failures) if ready else []

    def notices(self) -> list[str]:
        """Every ready worker's start-up lines, each distinct line once, in worker order:
        the grants are the same in every worker, a scratch root is each worker's own."""
        return list(dict.fromkeys(line for w in self.workers() for line in w.notices))

    # -- metrics ------------------------------------------------------------------------

    def serve_metrics(self, port: int, host: str) -> int:
        """Serve the merged ``/metrics`` on ``host:port``; the bound port."""
        registry = CollectorRegistry(auto_describe=False)
        registry.register(WorkerMetricsCollector(self))
        server, _ = start_http_server(port, addr=host, registry=registry)
        self._metrics_server = server
        return int(server.server_port)

    # -- running and stopping -----------------------------------------------------------

    @contextlib.contextmanager
    def signals(self, stop: threading.Event) -> Iterator[None]:
        """While inside: ``SIGTERM``/``SIGINT`` set ``stop`` (the drain), and the signals of
        :data:`~control_plane._features.grpc.server.IGNORED_SIGNALS`, whose default action would end
        the supervisor (and so every worker), are ignored and logged. Python's handlers,
        not ``SIG_IGN``: the workers (and their children) start with the default ones."""

        def on_stop(signum: int, frame: object) -> None:
            stop.set()

        def on_ignored(signum: int, frame: object) -> None:
            self._ignored.append(signum)

        previous = {s: signal.signal(s, on_stop) for s in (signal.SIGTERM, signal.SIGINT)}
        previous.update({s: signal.signal(s, on_ignored) for s in IGNORED_SIGNALS})
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self._log_ignored()

    def _log_ignored(self) -> None:
        while self._ignored:
            name = signal.Signals(self._ignored.popleft()).name
            self._log(f"ignored signal {name} (SIGTERM or SIGINT stop the server)")

    def run(self, stop: threading.Event) -> int:
        """Supervise until ``stop`` is set or workers keep dying; then drain every worker.

        Returns the exit status: 0 when every worker drained cleanly, else 1.
        """
        failed = False
        while not stop.wait(0.1):
            self._log_ignored()
            self._kill_silent()
            for info in list(self._workers.values()):
                code = info.proc.poll()
                if code is None:
                    continue
                if info.status_fd is not None:
                    os.close(info.status_fd)
                    info.status_fd = None
                if code == 0 and stop.wait(1.0):
                    break  # a signal to the whole process group (Ctrl-C): we stop too
                now = time.monotonic()
                self._restarts = [t for t in self._restarts if now - t < 60.0]
                if not info.silenced:  # a crash; a silent worker's kill is not one
                    self._restarts.append(now)
                self._log(f"worker {info.index} (pid {info.proc.pid}) exited with {code}")
                if len(self._restarts) > MAX_RESTARTS:
                    self._log(f"more than {MAX_RESTARTS} worker exits in a minute: stopping")
                    failed = True
                    stop.set()
                    break
                try:
                    replacement = self._spawn(info.index)
                    self._wait_ready([replacement], START_TIMEOUT, stop)
                except (WorkerStartError, OSError) as exc:
                    self._log(f"could not restart worker {info.index}: {exc}")
                    failed = True
                    stop.set()
                    break
                if replacement.ready:
                    self._log(f"worker {info.index} restarted (pid {replacement.proc.pid})")
        return self.stop(self._grace) or (1 if failed else 0)

    def _kill_silent(self) -> None:
        """Kill each serving worker that sent no heartbeat for ``--worker-timeout``
        seconds; the loop of :meth:`run` then replaces it as a worker that died."""
        timeout = self._worker_timeout
        if timeout <= 0:
            return
        for info in list(self._workers.values()):
            if not info.ready or info.silenced or info.proc.poll() is not None:
                continue
            if info.status_fd is not None:
                self._read_status(info)
            silent = time.monotonic() - info.heard
            if silent <= timeout:
                continue
            self._log(
                f"worker {info.index} (pid {info.proc.pid}) sent no heartbeat for "
                f"{silent:.1f} s (--worker-timeout {timeout:g}; stopped, or its event loop "
                "blocked): killed"
            )
            info.silenced = True
            with contextlib.suppress(ProcessLookupError):
                info.proc.kill()
            info.proc.wait()

    def stop(self, grace: float) -> int:
        """SIGTERM every worker, wait ``grace`` + margin, kill the rest; 1 if a serving
        worker did not drain cleanly."""
        with self._lock:
            infos = list(self._workers.values())
        for info in infos:
            if info.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    info.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace + KILL_MARGIN
        status = 0
        for info in infos:
            try:
                code = info.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._log(f"worker {info.index} (pid {info.proc.pid}) did not stop: killed")
                info.proc.kill()
                code = info.proc.wait()
            if code != 0 and info.ready:
                status = 1  # a worker still starting had no call to drain: not a failure
            if info.status_fd is not None:
                os.close(info.status_fd)
                info.status_fd = None
        server, self._metrics_server = self._metrics_server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        return status

    def _log(self, text: str) -> None:
        self._stderr.write(f"packctl: {text}\n")
        self._stderr.flush()
