"""How long a hostile MCP server's huge stdio line stalls every other call.

Starts ``packctl serve`` with the test plugin and two instances of the hostile test server
(tests/mcp_hostile_server.py), runs concurrent ``test.noop`` calls (a pack of its own) and
``calm.echo`` calls (another MCP server) in threads, and while they run one call to
``hostile.huge`` (one JSON-RPC line of ``--huge-mb`` MiB). Prints the max latency of the
no-op calls before and during the huge call, and the huge call's outcome.

    PYTHONPATH=$PWD:tests python bench/mcp_stall.py --huge-mb 20
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from mcp_source_support import Serve

from control_plane._features.grpc.client import Client
from control_plane._kernel.errors import CapabilityPackError

HOSTILE = Path(__file__).resolve().parent.parent / "tests" / "mcp_hostile_server.py"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--huge-mb", type=float, default=20.0)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    py = json.dumps(sys.executable)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        config = base / "packctl-mcp.toml"
        config.write_text(
            f"""version = 1
[servers.hostile]
command = {py}
args = [{json.dumps(str(HOSTILE))}, "--huge-mb", "{args.huge_mb}"]
prefix = "hostile"
[servers.calm]
command = {py}
args = [{json.dumps(str(HOSTILE))}]
prefix = "calm"
tools = ["echo"]
"""
        )
        serve = Serve(config, base / "serve.log", "--plugin", "testpacks")
        client = Client(serve.target)
        stop = threading.Event()
        samples: dict[str, list[tuple[float, float]]] = {"test.noop": [], "calm.echo": []}

        def loop(pack: str) -> None:
            own = Client(serve.target)
            while not stop.is_set():
                t0 = time.monotonic()
                own.invoke(pack, {"text": "x"} if pack == "calm.echo" else {}, timeout=30)
                samples[pack].append((t0, time.monotonic() - t0))
            own.close()

        threads = [
            threading.Thread(target=loop, args=(pack,))
            for pack in samples
            for _ in range(args.threads)
        ]
        for t in threads:
            t.start()
        time.sleep(2.0)
        start = time.monotonic()
        try:
            client.invoke("hostile.huge", {}, timeout=60)
            outcome = "ok"
        except CapabilityPackError as exc:
            outcome = f"{getattr(exc, 'code', type(exc).__name__)}: {exc}"
        end = time.monotonic()
        time.sleep(1.0)
        try:
            client.invoke("hostile.echo", {"text": "after"}, timeout=30)
            after = "hostile.echo after: ok"
        except CapabilityPackError as exc:
            after = f"hostile.echo after: {getattr(exc, 'code', type(exc).__name__)}"
        stop.set()
        for t in threads:
            t.join()
        client.close()
        serve.stop()
    print(f"huge call ({args.huge_mb} MiB line): {end - start:.2f}s -> {outcome}")
    print(after)
    for pack, rows in samples.items():
        before = [lat for t0, lat in rows if start - 1.5 <= t0 and t0 + lat < start]
        during = [lat for t0, lat in rows if t0 + lat >= start and t0 <= end + 0.5]
        print(
            f"{pack}: {len(rows)} calls; max latency in the 1.5 s before: "
            f"{max(before) * 1000:.0f} ms; during the huge call: "
            f"{max(during, default=0) * 1000:.0f} ms ({len(during)} calls)"
        )


if __name__ == "__main__":
    main()
