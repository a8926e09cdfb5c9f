"""tftpy (a pure-Python TFTP client) against a real tftpd-hpa (Debian's ``tftpd-hpa``,
``in.tftpd -L``) started by the family's setup on 127.0.0.1 with its own UDP port, serving
a directory of the family's scratch space (``-s``, uploads allowed with ``-c``, dropping to
``nobody``). Missing files, access violations and refused paths are the server's own TFTP
ERROR packets; a UDP port that never answers, one nothing listens on and one that answers
bytes of no protocol are real sockets on 127.0.0.1. Nothing is faked."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tftpy  # type: ignore[import-untyped]

from corpus_live.core import AUTH, INT, LOOPBACK, NET, NF, TO, UNRESOLVABLE, family, require


@dataclass
class Tftp:
    port: int
    root: Path
    silent: int  # a UDP socket that never answers
    closed: int  # a UDP port nothing listens on
    garbage: int  # a UDP socket that answers every datagram with bytes of no protocol
    local: Path


def _udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _udp(stack: contextlib.ExitStack, reply: bytes | None) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((LOOPBACK, 0))
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                _, peer = sock.recvfrom(2048)
            except OSError:
                continue
            if reply is not None:
                with contextlib.suppress(OSError):
                    sock.sendto(reply, peer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()

    def close() -> None:
        stop.set()
        t.join(1)
        sock.close()

    stack.callback(close)
    return int(sock.getsockname()[1])


def _setup(stack: contextlib.ExitStack, work: Path) -> Tftp:
    require("in.tftpd")
    root = work / "srv"
    (root / "pub").mkdir(parents=True)
    (root / "pub" / "boot.cfg").write_text("default linux\n")
    secret = root / "pub" / "secret.cfg"
    secret.write_text("root password\n")
    secret.chmod(0o600)  # owned by root: nobody may not read it
    ro = root / "pub" / "readonly.img"
    ro.write_text("old image\n")
    ro.chmod(0o644)  # not world-writable: tftpd refuses to overwrite it
    os.chmod(root / "pub", 0o755)
    incoming = root / "incoming"
    incoming.mkdir()
    incoming.chmod(0o777)
    os.chmod(work, 0o755)
    os.chmod(work.parent, 0o755)
    port = _udp_port()
    log = open(work / "tftpd.log", "wb")  # noqa: SIM115 - closed by the stack
    stack.callback(log.close)
    proc = subprocess.Popen(
        ["in.tftpd", "-L", "-a", f"{LOOPBACK}:{port}", "-s", "-c", "-u", "nobody", str(root)],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )

    def stop() -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    stack.callback(stop)
    local = work / "local"
    local.mkdir()
    deadline = time.monotonic() + 10
    while True:
        try:
            tftpy.TftpClient(LOOPBACK, port).download(
                "/pub/boot.cfg", str(local / "probe"), timeout=1, retries=0
            )
            break
        except tftpy.TftpException:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((work / "tftpd.log").read_text(errors="replace")) from None
    return Tftp(port, root, _udp(stack, None), _udp_port(), _udp(stack, b"\x00\x09junk"), local)


FAM = family(
    "tftpy",
    "tftpy against tftpd-hpa (Debian), real",
    _setup,
    half="heldout14",
)


def _get(
    name: str, *, host: str = LOOPBACK, port: Callable[[Tftp], int] | None = None
) -> Callable[[Tftp], None]:
    def run(c: Tftp) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-tftpy-") as tmp:
            tftpy.TftpClient(host, c.port if port is None else port(c)).download(
                name, str(Path(tmp) / "out"), timeout=1, retries=0
            )

    return run


def _put(name: str, data: bytes = b"new image\n") -> Callable[[Tftp], None]:
    def run(c: Tftp) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-tftpy-") as tmp:
            src = Path(tmp) / "in"
            src.write_bytes(data)
            tftpy.TftpClient(LOOPBACK, c.port).upload(name, str(src), timeout=1, retries=0)

    return run


FAM.add("missing_file", NF, "the server has no such file", _get("/pub/nothing.cfg"))
FAM.add("missing_dir", NF, "the directory of the file does not exist", _get("/nope/boot.cfg"))
FAM.add(
    "unreadable", AUTH, "the file is not readable by the server's user", _get("/pub/secret.cfg")
)
FAM.add(
    "parent_path",
    NF | AUTH,
    "a path that climbs out of the served directory: chrooted, it names nothing",
    _get("/pub/../../etc/passwd"),
)
FAM.add(
    "overwrite_denied",
    AUTH | INT,
    "an upload over a file that is not world-writable (code 0, Permission denied)",
    _put("/pub/readonly.img"),
)
FAM.add(
    "upload_no_dir",
    NF | AUTH,
    "an upload into a directory that does not exist",
    _put("/nope/new.img"),
)


def _local_missing(c: Tftp) -> None:
    tftpy.TftpClient(LOOPBACK, c.port).upload(
        "/incoming/x.img", str(c.local / "does-not-exist.img"), timeout=1, retries=0
    )


FAM.add("local_input_missing", INT | NF, "the local file to upload does not exist", _local_missing)


def _bad_blksize(c: Tftp) -> None:
    with tempfile.TemporaryDirectory(prefix="corpus44-tftpy-") as tmp:
        tftpy.TftpClient(LOOPBACK, c.port, options={"blksize": 2}).download(
            "/pub/boot.cfg", str(Path(tmp) / "out"), timeout=1, retries=0
        )


FAM.add("bad_blksize", INT, "the caller asks for a block size TFTP does not allow", _bad_blksize)
FAM.add(
    "refused",
    NET,
    "nothing listens on the UDP port",
    _get("/pub/boot.cfg", port=lambda c: c.closed),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _get("/pub/boot.cfg", host=UNRESOLVABLE, port=lambda c: 69),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: 1 s timeout, no retry",
    _get("/pub/boot.cfg", port=lambda c: c.silent),
)
FAM.add(
    "garbage",
    NET | INT,
    "the server answers with a datagram of no TFTP opcode",
    _get("/pub/boot.cfg", port=lambda c: c.garbage),
)
