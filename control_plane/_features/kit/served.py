"""A pack served over real gRPC on ``127.0.0.1:0``, and assertions on the rich status it returns."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import grpc
import orjson

from control_plane._features.grpc import status as wire
from control_plane._features.grpc.client import Client
from control_plane._features.grpc.server import PackServer, create_server
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.vocabulary import BASELINE
from control_plane._runtime.runtime import Runtime, RuntimeConfig, build_runtime
from control_plane.v1 import control_plane_pb2 as pb
from control_plane.v1 import control_plane_pb2_grpc as pb_grpc

from .faults import Fault, Secrets, fault
from .grant import KitRoots
from .harness import PackKit, _Call
from .loopback import LoopbackOnly, refusal_message
from .seams import constant, patch_seams
from .target import ConformanceError, LoadedTarget, PackTarget, load_target

__all__ = ["ServedPack", "assert_rich_status"]


class ServedPack:
    """The target's plugin served by a real control plane on ``127.0.0.1:0``."""

    def __init__(self, target: PackTarget, *, max_workers: int = 4) -> None:
        self.pack_target = target
        self.loaded_target: LoadedTarget = load_target(target)
        self._max_workers = max_workers
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True, name="kit-grpc")
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.server: PackServer | None = None
        self.port = 0
        self._client: Client | None = None
        self._runtime: Runtime | None = None
        #: Refuses traffic beyond loopback while serving, unless the target allows it.
        self.loopback = LoopbackOnly()
        self._guard: ExitStack | None = None
        #: The directories standing for ``$CWD`` and ``$TMP`` while serving.
        self.roots = KitRoots()

    @property
    def name(self) -> str:
        return self.loaded_target.loaded.name

    @property
    def target(self) -> str:
        """``host:port`` to dial."""
        return f"127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._start())
        # Thread boundary: any failure to start is handed to the starting thread.
        except BaseException as exc:  # noqa: BLE001
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    def root(self, name: str) -> Path:
        """The directory standing for ``name`` (``"$CWD"``, ``"$TMP"``) while serving."""
        return self.roots.root(name)

    async def _start(self) -> None:
        loaded = self.loaded_target.loaded
        grant = self.roots.runtime_options(loaded.name, loaded.pack.reach, self.pack_target.grant)
        runtime = build_runtime(
            RuntimeConfig(handler_threads=self._max_workers, **grant), load=self.loaded_target.load
        )
        self.server, self.port = create_server("127.0.0.1:0", runtime)
        self._runtime = runtime
        await self.server.start()

    def start(self) -> ServedPack:
        if not self.pack_target.network:
            self._guard = ExitStack()
            self._guard.enter_context(self.loopback.active())
        self._thread.start()
        if not self._ready.wait(15):
            raise RuntimeError("the kit's gRPC server did not start within 15 s")
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.server is not None:
            future = asyncio.run_coroutine_threadsafe(self.server.stop(0.5), self._loop)
            future.result(15)
            self.server = None
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if self._guard is not None:
            self._guard.close()
            self._guard = None
        self.roots.close()

    def __enter__(self) -> ServedPack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def client(self) -> Client:
        """A blocking :class:`~control_plane._features.grpc.client.Client` of this server."""
        if self._client is None:
            self._client = Client(self.target, timeout=30.0)
        return self._client

    def invoke(self, doc: Mapping[str, Any] | None = None, **kwargs: Any) -> Outcome:
        """Invoke the pack; the outcome, or the client's typed exception on failure.

        Seams are not patched here: a call that reaches the downstream reaches the real
        one (on loopback only, unless ``PackTarget(network=True)``). Wrap calls in
        :meth:`stubbed` for the target's stubs or :meth:`faulted` for a fault.
        """
        try:
            return self.client.invoke(self.name, dict(doc or {}), **kwargs)
        finally:
            self._check_loopback()

    def _check_loopback(self) -> None:
        refused = self.loopback.take()
        if refused:
            raise ConformanceError(refusal_message(self.name, refused))

    def status(
        self,
        doc: Mapping[str, Any] | None = None,
        *,
        pack: str | None = None,
        strict: bool = False,
        timeout: float = 30.0,
    ) -> wire.ParsedStatus:
        """Call the pack expecting failure; the decoded rich status of that failure.

        ``AssertionError`` if the call succeeded.
        """
        with grpc.insecure_channel(self.target) as channel:
            stub = pb_grpc.ControlPlaneServiceStub(channel)
            request = pb.InvokePackRequest(
                pack=pack or self.name, input=orjson.dumps(dict(doc or {})), strict=strict
            )
            try:
                stub.InvokePack(request, timeout=timeout)
            except grpc.RpcError as exc:
                self._check_loopback()
                return wire.parse_call(exc)
        self._check_loopback()
        raise AssertionError(f"expected {self.name} to fail for {dict(doc or {})!r}; it succeeded")

    @contextmanager
    def faulted(self, name: str | Fault) -> Iterator[None]:
        """While inside, every declared seam raises the fault: a catalogue name, or a
        :class:`~control_plane._features.kit.Fault` of your own."""
        f = fault(name) if isinstance(name, str) else name
        stubs = self.pack_target.seam_stubs()
        if not stubs:
            raise ConformanceError(
                f"pack {self.name!r}: faulted() needs seams; declare them on the PackTarget"
            )
        call = _Call(f, Secrets.plant())
        with patch_seams(dict.fromkeys(stubs, PackKit.faulty(call, f))):
            yield

    @contextmanager
    def stubbed(self) -> Iterator[None]:
        """While inside, seams with stubs use them (no real downstream)."""
        stubs = self.pack_target.seam_stubs()
        with patch_seams(
            {spec: None if stub is None else constant(stub) for spec, stub in stubs.items()}
        ):
            yield


def assert_rich_status(
    status: wire.ParsedStatus,
    code: str,
    *,
    pack: str | None = None,
    retry_after: float | None = None,
    retryable: bool | None = None,
) -> None:
    """Assert a failed call's rich status matches the wire contract for ``code``.

    Checks the gRPC status (the documented table; never ``UNAUTHENTICATED``), the
    ``ErrorInfo`` (reason ``code.upper()``, domain the pack, metadata code), the
    ``RetryInfo`` (present with ``retry_after`` for ``rate_limited``, absent otherwise),
    and the ``PackError`` detail.
    """
    problems: list[str] = []
    info = status.error_info
    if info is None:
        raise AssertionError(f"the status {status.status.name} carries no ErrorInfo")
    is_retryable = info.metadata.get("retryable") == "true"
    if retryable is not None and is_retryable != retryable:
        problems.append(f"retryable is {is_retryable}, expected {retryable}")
    if code in BASELINE and BASELINE[code].retryable != is_retryable:
        problems.append(f"retryable is {is_retryable}, the vocabulary says otherwise")
    expected_status = wire.status_for(code, is_retryable)
    if status.status != expected_status:
        problems.append(f"gRPC status {status.status.name}, expected {expected_status.name}")
    if status.status == grpc.StatusCode.UNAUTHENTICATED:
        problems.append("UNAUTHENTICATED is reserved for the caller's own credentials")
    if info.reason != wire.reason_for(code):
        problems.append(f"ErrorInfo.reason {info.reason!r}, expected {wire.reason_for(code)!r}")
    if info.metadata.get("code") != code:
        problems.append(f"ErrorInfo.metadata code {info.metadata.get('code')!r}, expected {code!r}")
    if pack is not None and info.domain != pack:
        problems.append(f"ErrorInfo.domain {info.domain!r}, expected {pack!r}")
    if retry_after is not None:
        if status.retry_delay is None:
            problems.append("no RetryInfo, expected one")
        elif abs(status.retry_delay - retry_after) > 1e-3:
            problems.append(f"RetryInfo.retry_delay {status.retry_delay}s, expected {retry_after}s")
    elif code != "rate_limited" and status.retry_delay is not None:
        problems.append(f"unexpected RetryInfo ({status.retry_delay}s) for {code}")
    if code == "rate_limited" and status.retry_delay is None:
        problems.append("rate_limited without RetryInfo")
    if status.pack_error is None:
        problems.append("no control_plane.v1.PackError detail")
    elif status.pack_error.code != code:
        problems.append(f"PackError.code {status.pack_error.code!r}, expected {code!r}")
    if problems:
        raise AssertionError(f"rich status for {code!r}: " + "; ".join(problems))
