"""One InvokePack followed through the code (``scripts/route.py``): the route goes down
into ``_kernel`` once and comes back up once, and the per-call lookups of the registry are
done at load."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _route_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("route_script", ROOT / "scripts" / "route.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


route = _route_script()


def _descents(stops: list[object]) -> list[str]:
    """Each time the route goes down a layer: where it arrives."""
    out = []
    previous = None
    for stop in stops:
        layer = route._layer(stop.module)  # type: ignore[attr-defined]
        if layer is None:
            continue
        if previous is not None and layer < previous:
            out.append(str(stop))
        previous = layer
    return out


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
def test_one_call_goes_down_once_and_comes_back_up_once(sync: bool) -> None:
    success, failure = route.follow(sync=sync)
    assert success.answer == 'OK: {"name":"a"}'
    assert failure.answer.startswith("NOT_FOUND: not_found")
    for one in (success, failure):
        # grpc -> kernel once (the invoker), back up once with the outcome: a failure is
        # encoded in grpc without going back down into the kernel.
        assert _descents(one.stops) == ["_kernel.invoke:Invoker.invoke"], one.title
        assert one.returns_up == 0, one.title
        # The pack, its name and version are looked up at load, not on the way.
        assert "control_plane._kernel.registry" not in one.modules, one.title
        # No forwarding step between the servicer and the invoker.
        server = "_features.grpc.server:ControlPlaneServicer.InvokePack"
        assert [str(s) for s in one.stops].index("_kernel.invoke:Invoker.invoke") == (
            [str(s) for s in one.stops].index(server) + 3  # deadline, back, invoker
        ), one.title
