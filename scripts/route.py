"""One ``InvokePack`` request followed through the code: ``python scripts/route.py``.

Builds an in-process control plane on 127.0.0.1:0 (as the tests do: ``build_runtime`` over
one tiny pack, ``create_server``, the server on an event loop of its own in a thread),
sends it ONE call that succeeds and ONE that fails with a code the pack declares
(``not_found``), and follows each on the server with ``sys.setprofile``, restricted to
``control_plane`` code (the generated ``control_plane.v1`` excluded) and to the threads
that serve the call (the server's loop, the pack's pool thread).

What it prints, per call:

* the **route**: where the call is, module by module -- a stop is each arrival in another
  ``control_plane`` module, by a call (``module:function`` entered) or by a return (``<-
  module:function`` resumed). Calls inside one module are one stop; a coroutine resumed
  after a suspension is where it was, not a new stop.
* the **stops**, the **distinct modules**, and the **returns up**: how many times the
  route comes back from a lower layer into a higher one (``core`` < ``runtime`` < ``wire``
  < ``adapters``, docs/architecture.md) and then goes down again.

``--sync`` uses a synchronous handler (run in the pack's thread); ``--observe`` adds the
observability ``packctl serve`` installs (metrics, error events); ``--calls`` also lists
every function entered, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import dis
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import orjson

from control_plane import Context, Pack, Reach, hookimpl, not_found
from control_plane._features.grpc.server import PackServer, create_server
from control_plane._runtime.runtime import Runtime, RuntimeConfig, build_runtime
from control_plane.v1 import control_plane_pb2 as pb

LAYERS = {"_kernel": 0, "_runtime": 1, "_features": 2}
PACK = "route.tiny"
INVOKE = "/control_plane.v1.ControlPlaneService/InvokePack"
_COROUTINE_FLAGS = 0x80 | 0x20 | 0x200  # CO_COROUTINE | CO_GENERATOR | CO_ASYNC_GENERATOR
_YIELDS = frozenset(dis.opmap[name] for name in ("YIELD_VALUE",) if name in dis.opmap)
#: Not the call's route: the loop's stall watcher runs beside it on the same thread.
_BESIDE = ("control_plane._features.grpc.loop_health",)


# -- the tiny pack ------------------------------------------------------------------------

_OUTPUT = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["not_found"]}, "message": {"type": "string"}},
        },
    },
}


async def _tiny_async(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    if doc.get("missing"):
        raise not_found("no such name")
    return {"name": doc.get("name", "")}


def _tiny_sync(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    if doc.get("missing"):
        raise not_found("no such name")
    return {"name": doc.get("name", "")}


class _TinyPlugin:
    def __init__(self, sync: bool) -> None:
        self.handler = _tiny_sync if sync else _tiny_async

    @hookimpl
    def register_packs(self, register: Any) -> None:
        register(
            Pack(
                PACK,
                "1.0.0",
                "Returns the name it is given; not_found when told it is missing.",
                {"type": "object", "properties": {"name": {"type": "string"}}},
                _OUTPUT,
                self.handler,
                codes={"not_found": None},
                reach=Reach(),  # reaches nothing: in-process
            )
        )


# -- the trace ------------------------------------------------------------------------


def _module(frame: types.FrameType) -> str | None:
    name = frame.f_globals.get("__name__", "")
    if not isinstance(name, str) or not name.startswith("control_plane"):
        return None
    if name.startswith("control_plane.v1") or name in _BESIDE:
        return None  # generated code; what runs beside the call
    return name


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def _short(module: str) -> str:
    return module.removeprefix("control_plane.")


@dataclass
class Stop:
    module: str
    function: str
    by_return: bool

    def __str__(self) -> str:
        arrow = "<- " if self.by_return else ""
        return f"{arrow}{_short(self.module)}:{self.function}"


@dataclass
class Recorder:
    """``control_plane`` frames entered and left, on the threads that serve the call."""

    armed: bool = False
    threads: set[int] = field(default_factory=set)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _live: set[int] = field(default_factory=set)

    def profile(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if not self.armed or event not in ("call", "return"):
            return
        if (
            self.threads
            and threading.get_ident() not in self.threads
            and not threading.current_thread().name.startswith("pack")
        ):
            return
        code = frame.f_code
        suspendable = bool(code.co_flags & _COROUTINE_FLAGS)
        key = id(frame)
        if event == "call":
            if suspendable and key in self._live:
                return  # a coroutine resumed: the route is where it was
            if suspendable:
                self._live.add(key)
            module = _module(frame)
            if module is not None:
                self._add("call", module, code.co_qualname)
            return
        if suspendable:
            if _suspends(frame):
                return  # a coroutine suspended: not a return
            self._live.discard(key)
        back = frame.f_back
        if back is not None:
            back_module = _module(back)
            if back_module is not None and back_module != _module(frame):
                self._add("return", back_module, back.f_code.co_qualname)

    def _add(self, kind: str, module: str, function: str) -> None:
        with self.lock:
            self.events.append((kind, module, function))


def _suspends(frame: types.FrameType) -> bool:
    """Whether a coroutine's (or generator's) ``return`` event is a suspension."""
    lasti = frame.f_lasti
    return lasti >= 0 and frame.f_code.co_code[lasti] in _YIELDS


def route_of(events: list[tuple[str, str, str]]) -> list[Stop]:
    """The stops: each arrival in another module (by a call or a return)."""
    stops: list[Stop] = []
    where: str | None = None
    for kind, module, function in events:
        if module == where:
            continue
        where = module
        stops.append(Stop(module, function, by_return=kind == "return"))
    return stops


def returns_up(stops: list[Stop]) -> int:
    """Times the route comes back up into a higher layer and then goes down again."""
    count = 0
    up_at: int | None = None  # the layer the route came back up to
    previous: int | None = None
    for stop in stops:
        layer = _layer(stop.module)
        if layer is None:
            continue
        if up_at is not None and layer < up_at:
            count += 1
            up_at = None
        if stop.by_return and previous is not None and layer > previous:
            up_at = layer
        previous = layer
    return count


# -- the server and the two calls ---------------------------------------------------------


class _Served:
    """The server on its own loop in a thread (as ``tests/server_support.ServerThread``)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="route-server")
        self.server: PackServer | None = None
        self.port = 0

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self.ready.set()
        self.loop.run_forever()

    async def _start(self) -> None:
        self.server, self.port = create_server("127.0.0.1:0", self.runtime)
        await self.server.start()

    def start(self) -> _Served:
        self.thread.start()
        if not self.ready.wait(30):
            raise SystemExit("the server did not start")
        return self

    def stop(self) -> None:
        if self.server is not None:
            done = asyncio.run_coroutine_threadsafe(self.server.stop(0), self.loop)
            done.result(15)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(15)


def _send(channel: grpc.Channel, doc: dict[str, Any]) -> str:
    # raw bytes both ways: no control_plane code on the caller's side
    call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(INVOKE)
    raw = pb.InvokePackRequest(pack=PACK, input=orjson.dumps(doc), request_id="route-1")
    try:
        reply = pb.InvokePackResponse.FromString(call(raw.SerializeToString(), timeout=10))
    except grpc.RpcError as err:
        return f"{err.code().name}: {err.details()}"
    return f"OK: {reply.result.decode()}"


@dataclass(frozen=True)
class Route:
    """One call followed: its answer, its stops, and every function entered."""

    title: str
    answer: str
    stops: list[Stop]
    entered: list[str]

    @property
    def modules(self) -> set[str]:
        return {stop.module for stop in self.stops}

    @property
    def returns_up(self) -> int:
        return returns_up(self.stops)


def follow(*, sync: bool = False, observe: bool = False) -> list[Route]:
    """The routes of one successful call and one that fails with a declared code."""
    recorder = Recorder()
    routes: list[Route] = []
    threading.setprofile(recorder.profile)  # the server's thread and the pack's pool
    try:
        with tempfile.TemporaryDirectory() as tmp:
            runtime = build_runtime(
                RuntimeConfig(
                    builtins=False, entry_points=False, extra=(("route", _TinyPlugin(sync)),)
                )
            )
            try:
                if observe:
                    _observe(runtime, Path(tmp))
                served = _Served(runtime).start()
                recorder.threads.add(served.thread.ident or 0)
                try:
                    routes = _two_calls(served.port, recorder)
                finally:
                    served.stop()
            finally:
                runtime.close()
    finally:
        threading.setprofile(None)
    return routes


def _observe(runtime: Runtime, tmp: Path) -> None:
    """What ``packctl serve`` installs: metrics, error events, the incident store."""
    from control_plane._features.observability.observability_cli import (
        add_serve_arguments,
        observability_config,
    )

    serve = argparse.ArgumentParser()
    add_serve_arguments(serve)
    options = serve.parse_args(["--incident-db", str(tmp / "incidents.db")])
    runtime.observe(observability_config(options))


def _two_calls(port: int, recorder: Recorder) -> list[Route]:
    routes = []
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        for title, doc in (("success", {"name": "a"}), ("declared error", {"missing": 1})):
            _send(channel, doc)  # warm: first-call work is not the route
            time.sleep(0.3)  # the warm call's last steps (its answer released)
            with recorder.lock:
                recorder.events.clear()
                recorder._live.clear()
            recorder.armed = True
            answer = _send(channel, doc)
            time.sleep(0.3)  # this call's last steps, after the caller has its answer
            recorder.armed = False
            events = list(recorder.events)
            entered = [f"{_short(m)}:{f}" for kind, m, f in events if kind == "call"]
            routes.append(Route(title, answer, route_of(events), entered))
    return routes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/route.py", description=__doc__)
    parser.add_argument("--sync", action="store_true", help="a synchronous handler")
    parser.add_argument("--observe", action="store_true", help="metrics and error events")
    parser.add_argument("--calls", action="store_true", help="list every function entered")
    args = parser.parse_args(argv)
    routes = follow(sync=args.sync, observe=args.observe)
    for route in routes:
        print(f"== {route.title}: {route.answer}")
        for n, stop in enumerate(route.stops, 1):
            layer = _layer(stop.module)
            label = next((k for k, v in LAYERS.items() if v == layer), "-")
            print(f"{n:3} {label:<8} {stop}")
        if args.calls:
            print("-- every control_plane function entered:")
            for name in route.entered:
                print(f"      {name}")
        print(
            f"stops {len(route.stops)}, modules {len(route.modules)}, "
            f"returns up {route.returns_up}, functions entered {len(route.entered)}\n"
        )
    print("| call | stops | modules | returns up | functions entered |")
    print("|---|---|---|---|---|")
    for r in routes:
        print(
            f"| {r.title} | {len(r.stops)} | {len(r.modules)} | {r.returns_up} | {len(r.entered)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
