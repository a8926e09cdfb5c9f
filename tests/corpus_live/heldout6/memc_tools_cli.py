"""libmemcached's command-line tools (Debian's libmemcached-tools 1.1: ``memccat``,
``memccp``, ``memcrm``, ``memcexist``, ``memctouch``, ``memcstat``) run as a pack runs them,
``--verbose`` so a miss is said on stderr, against real memcached servers (Debian's
``memcached``): one with room, one of 2 MB started with ``-M`` (an error instead of eviction
when memory is full) and filled by the setup. The failure is the exit status and
libmemcached's return-code text (``NOT FOUND``, ``NOT STORED``, ``ITEM TOO BIG``...) on
stderr."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import (
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.servers import memcached


@dataclass
class Memc:
    port: int  # memcached -m 8: the key "present" is stored
    full: int  # memcached -m 2 -M: its memory is full, a new item gets an error


def _start(stack: contextlib.ExitStack, work: Path) -> Memc:
    require("memccat", "memccp", "memcrm", "memcexist", "memctouch", "memcstat")
    port = memcached(stack, work)
    full = memcached(stack, work, "-m", "2", "-M")
    (work / "present").write_text("value\n")
    blob = b"\x5a" * 400_000
    for name in ("present", "fill1", "fill2", "fill3", "fill4"):
        path = work / name
        if name != "present":
            path.write_bytes(blob)
        subprocess.run(
            ["memccp", f"--servers={LOOPBACK}:{port if name == 'present' else full}", str(path)],
            check=True,
            capture_output=True,
            timeout=10,
        )
    return Memc(port, full)


FAM = family(
    "libmemcached-tools",
    "libmemcached-tools CLIs against memcached (Debian), real",
    served(_start),
    half="heldout6",
)


def _tool(
    tool: str, *args: str, host: str = LOOPBACK, port: Any = None, timeout: float = 10
) -> Any:
    def run(c: Served[Memc]) -> None:
        p = c.server.port if port is None else port(c)
        cli([tool, "--verbose", f"--servers={host}:{p}", *args], timeout=timeout)

    return run


def _copy(*args: str, size: int = 6, port: Any = None, name: str = "upload") -> Any:
    def run(c: Served[Memc]) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-memc-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(b"\x42" * size)
            _tool("memccp", *args, str(path), port=port)(c)

    return run


FAM.add(
    "get_missing", NF, "memccat: Could not find key 'ghost': NOT FOUND", _tool("memccat", "ghost")
)
FAM.add("rm_missing", NF, "memcrm: Could not find key 'ghost': NOT FOUND", _tool("memcrm", "ghost"))
FAM.add(
    "exist_missing",
    NF,
    "memcexist: Could not find key 'ghost': NOT FOUND",
    _tool("memcexist", "ghost"),
)
FAM.add(
    "touch_missing",
    NF,
    "memctouch: Could not find key 'ghost': NOT FOUND",
    _tool("memctouch", "ghost"),
)
FAM.add(
    "add_exists",
    EXISTS,
    "memccp --add of a key that is stored: memcached_add NOT STORED",
    _copy("--add", name="present"),
)
FAM.add(
    "replace_missing",
    NF | INT,
    "memccp --replace of a key that is not stored: memcached_replace NOT STORED",
    _copy("--replace", name="never-stored"),
)
FAM.add(
    "item_too_big",
    INT | QUOTA,
    "memccp of a 2 MB file: ITEM TOO BIG (memcached's 1 MB item limit)",
    _copy(size=2_000_000),
)
FAM.add(
    "memory_full",
    QUOTA,
    "memccp to a memcached whose 2 MB are full (-M): SERVER FAILED TO ALLOCATE OBJECT",
    _copy(size=400_000, port=lambda c: c.server.full, name="one-more"),
)
FAM.add(
    "local_file_missing",
    INT | NF,
    "memccp: Failed to open the pack's own local file: No such file or directory",
    _tool("memccp", "/nonexistent/corpus44/upload.bin"),
)
FAM.add(
    "bad_option",
    INT,
    "memccat: unrecognized option '--no-such-flag' (the pack's own argv)",
    _tool("memccat", "--no-such-flag", "present"),
)
FAM.add(
    "refused",
    NET,
    "CONNECTION FAILURE: nothing listens",
    _tool("memccat", "present", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "HOSTNAME LOOKUP FAILURE (.invalid)",
    _tool("memcstat", host=UNRESOLVABLE, port=lambda c: 11211),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: the pack's 2 s limit on memccat fires",
    _tool("memccat", "present", port=lambda c: c.net.silent, timeout=2),
)
FAM.add(
    "dropped",
    NET,
    "the server closes at once: server has disconnected on the get",
    _tool("memccat", "present", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | INT,
    "the server answers bytes of no protocol and closes",
    _tool("memcstat", port=lambda c: c.net.garbage),
)
