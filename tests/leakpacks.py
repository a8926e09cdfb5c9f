"""Packs that push a text through every channel by which text leaves the control plane.

``leak.channel`` takes ``{"mode": ..., "text": ...}`` and puts ``text`` where ``mode`` says:
an exception's message, its cause, a typed error, a returned error, a partial result, an
output violation, a check (id, message, expected, actual, location), an HTTP error, a
subprocess ``TimeoutExpired``/``CalledProcessError`` quoting argv, an undeclared code, a log
line of the pack's own, a third-party log line with a traceback, an uncaught exception in a
thread, a value under a key that names a secret (``keyed_partial``, ``keyed_check``: the
text alone looks like nothing). ``leak.scrubbed`` echoes its input with
``scrub_output=True``; ``leak.echo`` echoes it without (a result is the pack's data: not
scrubbed).

The plugin's registration also fails on purpose, once per corpus sample (a pack whose name
is the sample, a pack whose code documentation quotes it), so load failures quote secrets.
Used by ``tests/test_redact_channels.py`` in a real ``packctl serve``.
"""

from __future__ import annotations

import gc
import io
import logging
import re
import subprocess
import threading
import urllib.error
import warnings
from email.message import Message
from typing import Any

from secret_corpus import SECRETS

from control_plane import Check, Context, Pack, PackError, Reach, Result, hookimpl
from control_plane._kernel.errors import schema_mismatch

MODES = (
    "exception",
    "cause",
    "typed",
    "returned",
    "partial",
    "violation",
    "check",
    "http",
    "timeout_expired",
    "called_process",
    "undeclared",
    "log",
    "thirdparty_log",
    "thread",
    "unraisable",
    "warning",
    "keyed_partial",
    "keyed_check",
)

CODES = ["not_found", "network_error", "auth_failed", "schema_mismatch", "timeout"]

OUTPUT = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "echo": {},
        "validation": {"type": "object"},
        "error": {
            "type": "object",
            "properties": {"code": {"enum": CODES}, "message": {"type": "string"}},
        },
    },
}
INPUT = {
    "type": "object",
    "required": ["mode", "text"],
    "properties": {"mode": {"enum": list(MODES)}, "text": {"type": "string"}},
}

_log = logging.getLogger("capability_packs.leakpacks")
_CHECK_ID = re.compile(r"^[a-z][a-z0-9_.\-]*$")
#: A secret that is a valid check id (a GitHub token's format, lower case).
CHECK_ID_SECRET = "ghp_" + "k3q9x7m2v8b4n6c1z5w0" * 2
_other = logging.getLogger("thirdparty.client")


def channel(doc: dict[str, Any], ctx: Context) -> Any:
    mode, text = doc["mode"], doc["text"]
    if mode == "exception":
        raise RuntimeError(f"unexpected: {text}")
    if mode == "cause":
        try:
            raise ValueError(text)
        except ValueError as inner:
            raise ConnectionRefusedError(f"refused: {text}") from inner
    if mode == "typed":
        raise PackError("not_found", f"missing: {text}")
    if mode == "returned":
        return {"error": {"code": "auth_failed", "message": f"rejected: {text}"}}
    if mode == "partial":
        raise schema_mismatch({"count": 1, "note": text, "nested": [text]}, f"bad: {text}")
    if mode == "violation":
        return {"count": text}  # not an integer: the validator's message quotes it
    if mode == "check":
        # Check ids must match ^[a-z][a-z0-9_.-]*$: the sample when it does, else a
        # lower-case token of a real format (scanned for too).
        check_id = text if _CHECK_ID.match(text) else CHECK_ID_SECRET
        return Result(
            {"count": 1},
            [
                Check(
                    check_id, "fail", f"failed: {text}", expected=text, actual=[text], location=text
                ),
                Check("second", "warn", text, expected={"k": text}),
            ],
        )
    if mode == "http":
        headers = Message()
        headers["WWW-Authenticate"] = text
        raise urllib.error.HTTPError(
            f"https://api.invalid/{text}", 401, text, headers, io.BytesIO(text.encode())
        )
    if mode == "timeout_expired":
        raise subprocess.TimeoutExpired(["tool", "--verbose", text], 5, output=text.encode())
    if mode == "called_process":
        raise subprocess.CalledProcessError(2, ["tool", text], output=text, stderr=text)
    if mode == "undeclared":
        raise PackError("not_declared_anywhere", f"oops: {text}")
    if mode == "log":
        _log.warning("pack saw %s", text, extra={"reason": text})
        raise PackError("timeout", text)
    if mode == "thirdparty_log":
        try:
            raise OSError(text)
        except OSError:
            _other.exception("client failed: %s", text)
        raise PackError("timeout", "see the log")
    if mode == "thread":
        thread = threading.Thread(target=_raise_in_thread, args=(text,))
        thread.start()
        thread.join()
        raise PackError("timeout", "a thread died")
    if mode == "unraisable":  # Python prints it through sys.unraisablehook
        finalizer = _FailingFinalizer(text)
        del finalizer
        gc.collect()
        raise PackError("timeout", "a finalizer failed")
    if mode == "warning":  # printed by the warnings module (once per text and line)
        warnings.warn(f"deprecated: {text}", RuntimeWarning, stacklevel=1)
        raise PackError("timeout", "a warning was shown")
    if mode == "keyed_partial":  # structured: only the key says the value is a secret
        raise schema_mismatch({"count": 1, "db": {"host": "db", "password": text}}, "bad row")
    if mode == "keyed_check":
        return Result(
            {"count": 1},
            [Check("creds", "fail", "wrong", expected={"token": text}, actual=[{"api_key": text}])],
        )
    raise AssertionError(mode)


class _FailingFinalizer:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"<finalizer holding {self.text}>"

    def __del__(self) -> None:
        raise RuntimeError(f"finalizer failed: {self.text}")


def _raise_in_thread(text: str) -> None:
    raise RuntimeError(f"thread failed: {text}")


def echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"echo": doc}


ECHO_OUTPUT = {
    "type": "object",
    "properties": {
        "echo": {},
        "error": {"type": "object", "properties": {"code": {"enum": ["not_found"]}}},
    },
}

PACKS = [
    Pack(
        "leak.channel",
        "1.0.0",
        "every channel",
        INPUT,
        OUTPUT,
        channel,
        validates=True,
        reach=Reach(),
    ),
    Pack(
        "leak.echo",
        "1.0.0",
        "echo, unscrubbed",
        {"type": "object"},
        ECHO_OUTPUT,
        echo,
        reach=Reach(),
    ),
    Pack(
        "leak.scrubbed",
        "1.0.0",
        "echo, scrubbed",
        {"type": "object"},
        ECHO_OUTPUT,
        echo,
        scrub_output=True,
        reach=Reach(),
    ),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)
    # Load failures that quote secrets: a pack named after each sample, a schema quoting it.
    for i, sample in enumerate(SECRETS):
        register(
            Pack(
                sample.text,
                "1.0.0",
                "bad name",
                {"type": "object"},
                ECHO_OUTPUT,
                echo,
                reach=Reach(),
            )
        )
        bad_output = {
            "type": "object",
            "properties": {
                "error": {"type": "object", "properties": {"code": {"enum": [sample.text]}}}
            },
        }
        register(
            Pack(
                f"leak.bad{i}",
                "1.0.0",
                "bad code",
                {"type": "object"},
                bad_output,
                echo,
                reach=Reach(),
            )
        )
