"""A pack's coroutine that awaits a future, a task or a gather which failed with a
``BaseException`` (``GeneratorExit`` above all): the failure is the pack's, classified, and
the call ends with a code -- in process and served.

The event loop's task resumes an awaiting coroutine by *throwing* the awaited future's
exception into it. A thrown ``GeneratorExit`` is not an exception like the others: every
``await`` on the way closes the coroutine below it, so the whole chain up to gRPC's own
frames was closed instead of failing, the call never got an answer (the caller waited for
its deadline) and gRPC printed the unscrubbed text. The invoker now relays the pack's
futures: the task waits on a future of the invoker's that never fails, and the pack's own
``await`` raises the outcome inside the pack.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest
import testpacks
from server_support import subprocess_env
from test_cli import start_serve, stop_serve

from control_plane import Context, Pack, hookimpl
from control_plane._features.grpc.client import Client, PackCallError
from control_plane._kernel.invoke import Invoker
from control_plane._runtime.plugins import load_registry

SECRET_TEXT = testpacks.SECRET_TEXTS[0]

KINDS: dict[str, Callable[[], BaseException]] = {
    "GeneratorExit": lambda: GeneratorExit(SECRET_TEXT),
    "KeyboardInterrupt": lambda: KeyboardInterrupt(SECRET_TEXT),
    "SystemExit": lambda: SystemExit(SECRET_TEXT),
    "RuntimeError": lambda: RuntimeError(SECRET_TEXT),
    "CancelledError": lambda: asyncio.CancelledError(SECRET_TEXT),
}


async def _raise_soon(kind: str) -> None:
    await asyncio.sleep(0.01)
    raise KINDS[kind]()


async def awaits(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Await something that fails with ``doc["kind"]``, as ``doc["via"]`` says."""
    kind, via = doc["kind"], doc["via"]
    loop = asyncio.get_running_loop()
    if via == "future":
        fut = loop.create_future()
        loop.call_later(0.01, fut.set_exception, KINDS[kind]())
        await fut
    elif via == "future_after_sleep":  # the failing await is not the handler's first
        await asyncio.sleep(0.01)
        fut = loop.create_future()
        loop.call_soon(fut.set_exception, KINDS[kind]())
        await fut
    elif via == "gather":
        await asyncio.gather(asyncio.sleep(0.05), _raise_in_future(kind))
    elif via == "returned":  # the handler returns the failing future itself
        fut = loop.create_future()
        loop.call_later(0.01, fut.set_exception, KINDS[kind]())
        return fut  # type: ignore[return-value]
    return {"survived": True}


async def _raise_in_future(kind: str) -> None:
    fut = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_later(0.01, fut.set_exception, KINDS[kind]())
    await fut


async def cancels_itself(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Cancel the task running the pack (the call's own task), as ``doc["mode"]`` says."""
    mode = doc["mode"]
    if mode == "after_suspend":
        await asyncio.sleep(0.01)
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    if mode == "no_await":
        return {"returned": True}
    if mode in ("catch", "catch_then_wait"):
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            if mode == "catch":
                return {"caught": True}
        await asyncio.sleep(5)  # where the caller cancels
    await asyncio.sleep(1)
    return {"survived": True}


def returns_awaiting(doc: dict[str, Any], ctx: Context) -> Any:
    """A sync handler returning the coroutine of :func:`awaits` (awaited on the loop)."""
    return awaits(doc, ctx)


async def ok(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    await asyncio.sleep(0.001)
    return {"value": doc.get("value")}


CODES = ["internal_error", "timeout", "network_error"]
OUTPUT = {
    "type": "object",
    "properties": {"error": {"type": "object", "properties": {"code": {"enum": CODES}}}},
}
PACKS = [
    Pack("aw.awaits", "1.0.0", "Await a failing future.", {"type": "object"}, OUTPUT, awaits),
    Pack("aw.ok", "1.0.0", "Suspend, then answer.", {"type": "object"}, OUTPUT, ok),
    Pack("aw.sync", "1.0.0", "Return a coroutine.", {"type": "object"}, OUTPUT, returns_awaiting),
    Pack("aw.self", "1.0.0", "Cancel its own task.", {"type": "object"}, OUTPUT, cancels_itself),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)


@pytest.fixture
def invoker() -> Iterator[Invoker]:
    load = load_registry(builtins=False, entry_points_=False, extra=[sys.modules[__name__]])
    inv = Invoker(load.registry, classifiers=load.classifiers)
    yield inv
    inv.close()


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro``; a hang is a failure of its own (a guard, not a measure of speed)."""

    async def guarded() -> Any:
        return await asyncio.wait_for(coro, 30)

    return asyncio.run(guarded())


VIAS = ["future", "future_after_sleep", "gather", "returned"]


# gather runs each coroutine in a task of its own, and asyncio re-raises KeyboardInterrupt and
# SystemExit out of the loop from any task: a documented limit of in-process packs
# (docs/reliability.md, threat model; --isolate is the answer), so not cases here.
CASES = [
    (kind, via)
    for kind in sorted(KINDS)
    for via in VIAS
    if not (via == "gather" and kind in ("KeyboardInterrupt", "SystemExit"))
]


@pytest.mark.parametrize("pack", ["aw.awaits", "aw.sync"])
@pytest.mark.parametrize(("kind", "via"), CASES)
def test_an_awaited_failure_is_the_packs_in_process(
    invoker: Invoker, pack: str, kind: str, via: str
) -> None:
    outcome = _run(invoker.invoke(pack, {"kind": kind, "via": via}))
    assert outcome.error is not None, outcome
    assert outcome.error.code in CODES
    assert testpacks.SECRET not in outcome.error.message
    # The invoker still serves, on the same loop too.
    assert _run(invoker.invoke("aw.ok", {"value": 1})).result == {"value": 1}


@pytest.mark.parametrize("mode", ["await", "after_suspend"])
def test_a_pack_cancelling_its_own_task_fails_the_pack(invoker: Invoker, mode: str) -> None:
    """``current_task().cancel()`` in a pack is a cancellation of its own, not the caller's:
    the call ends with a code (it used to be re-raised as the caller's cancellation, and a
    served call then went unanswered until its deadline)."""

    async def call() -> Any:
        outcome = await invoker.invoke("aw.self", {"mode": mode})
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0  # nothing left on the caller's task
        await asyncio.sleep(0.01)  # and no cancellation pending on it either
        return outcome

    outcome = _run(call())
    assert outcome.error is not None and outcome.error.code in CODES


@pytest.mark.parametrize("mode", ["catch", "no_await"])
def test_a_pack_that_cancels_its_own_task_and_carries_on_answers(
    invoker: Invoker, mode: str
) -> None:
    async def call() -> Any:
        outcome = await invoker.invoke("aw.self", {"mode": mode})
        await asyncio.sleep(0.01)  # the caller's task goes on: nothing pending on it
        return outcome

    outcome = _run(call())
    assert outcome.error is None and outcome.result in ({"caught": True}, {"returned": True})


def test_the_callers_cancellation_still_wins_over_a_packs_own(invoker: Invoker) -> None:
    """The pack cancelled its task (and caught it); then the caller cancels the call."""

    async def cancel_it() -> None:
        call = asyncio.ensure_future(invoker.invoke("aw.self", {"mode": "catch_then_wait"}))
        await asyncio.sleep(0.1)
        assert not call.done()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    _run(cancel_it())


def test_cancelling_a_call_that_awaits_a_relayed_future_cancels_the_future(
    invoker: Invoker,
) -> None:
    """The caller's cancellation reaches the future the pack awaits, as without the relay."""
    seen: list[bool] = []

    async def waits(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
        fut = asyncio.get_running_loop().create_future()
        try:
            await fut
        finally:
            seen.append(fut.cancelled())
        return {}

    invoker.registry.register(Pack("aw.waits", "1.0.0", "Wait.", {"type": "object"}, OUTPUT, waits))

    async def cancel_it() -> None:
        call = asyncio.ensure_future(invoker.invoke("aw.waits", {}))
        await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    _run(cancel_it())
    assert seen == [True]


@pytest.mark.system
@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_served_generator_exit_from_an_awaited_future_ends_with_a_code(loop: str) -> None:
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="test_awaited_failures,testpacks")
    proc, target = start_serve(
        "--plugin", "test_awaited_failures", "--loop", loop, env=env, drain=True
    )
    try:
        with Client(target) as client:
            for via in VIAS:
                with pytest.raises(PackCallError) as failed:
                    client.invoke("aw.awaits", {"kind": "GeneratorExit", "via": via}, timeout=60)
                assert failed.value.code == "internal_error", via
            with pytest.raises(PackCallError) as cancelled:
                client.invoke("aw.self", {"mode": "await"}, timeout=60)
            assert cancelled.value.code in CODES
            assert client.invoke("aw.self", {"mode": "catch"}).result == {"caught": True}
            assert client.invoke("aw.ok", {"value": 2}).result == {"value": 2}
    finally:
        err = stop_serve(proc)
    assert proc.returncode == 0, err[-2000:]
    assert testpacks.SECRET not in err


# -- the cancellation semantics, re-specified on public asyncio APIs only (issue 37) --------


def _run_on(loop: str, coro: Coroutine[Any, Any, Any]) -> Any:
    """:func:`_run` on ``loop`` (``uvloop`` or the standard library's)."""
    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(asyncio.wait_for(coro, 30))
    return _run(coro)


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
@pytest.mark.parametrize(
    ("mode", "answered"),
    [("await", False), ("after_suspend", False), ("catch", True), ("no_await", True)],
)
def test_a_packs_own_cancellation_is_its_own_on_each_loop(
    invoker: Invoker, loop: str, mode: str, answered: bool
) -> None:
    """A pack cancelling its own task fails the pack (or, caught or never awaited, is
    answered); either way nothing is left on the caller's task -- neither a count
    (``cancelling()``) nor a cancellation pending for its next await -- on either loop."""

    async def call() -> Any:
        outcome = await invoker.invoke("aw.self", {"mode": mode})
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0
        for _ in range(3):
            await asyncio.sleep(0)  # a pending cancellation would be delivered here
        return outcome

    outcome = _run_on(loop, call())
    assert (outcome.error is None) is answered, outcome


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_the_callers_cancellation_wins_on_each_loop(invoker: Invoker, loop: str) -> None:
    async def cancel_it() -> None:
        call = asyncio.ensure_future(invoker.invoke("aw.self", {"mode": "catch_then_wait"}))
        await asyncio.sleep(0.1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    _run_on(loop, cancel_it())


def test_a_future_the_pack_awaits_is_still_anyone_elses_to_await(invoker: Invoker) -> None:
    """The relay only watches the pack's future: another task awaiting the same future
    gets its result, and the pack gets it too."""
    shared: list[asyncio.Future[int]] = []

    async def waits(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"value": await shared[0]}

    invoker.registry.register(
        Pack("aw.shared", "1.0.0", "Await a shared future.", {"type": "object"}, OUTPUT, waits)
    )

    async def both() -> tuple[Any, int]:
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        shared.append(fut)
        call = asyncio.ensure_future(invoker.invoke("aw.shared", {}))
        other = asyncio.ensure_future(asyncio.shield(fut))
        await asyncio.sleep(0.01)
        fut.set_result(7)
        return await call, await other

    outcome, other = _run(both())
    assert other == 7
    assert outcome.error is None and outcome.result == {"value": 7}, outcome
