"""The ``av.validate`` pack: probe a media file with ffprobe and check it against expectations."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from control_plane import Context, Pack, Reach, Result, hookimpl
from control_plane.errors import NotARegularFile, PackError, not_found
from packs.av_validate.checks import evaluate
from packs.av_validate.probe import (
    FFMPEG_ENV,
    FFPROBE_ENV,
    ffmpeg_binary,
    ffprobe_binary,
    measure_loudness,
    probe,
)
from packs.av_validate.schemas import CODES, INPUT_SCHEMA, OUTPUT_SCHEMA

__all__ = ["FFMPEG_ENV", "FFPROBE_ENV", "PACK", "handle", "register_packs"]

DEFAULT_TIMEOUT = 60.0

DOCS = """\
Probes a local audio/video file with `ffprobe` and checks it against `expect`: duration
(with `tolerance` and an optional tighter `warn_tolerance`), container format, video/audio
codec, sample rate, channels, width, height, frame rate, bit rate bounds, stream presence,
extension-vs-container, and EBU R128 loudness (`ffmpeg` ebur128) with a target in LUFS.

The result carries the probed facts and `validation` with one check per expectation
(`pass | warn | fail`, `location` = the path). A mismatch is a finding on a successful
call; call with `strict` to turn fail findings into `artifact_failed`.

| code | retryable | when |
|---|---|---|
| `not_found` | no | the path does not exist (inside the pack's read grant) |
| `not_permitted` | no | the path is outside the pack's read grant (whether or not it exists) |
| `unreadable_media` | no | not audio/video: garbage, truncated, text, a directory or FIFO |
| `dependency_missing` | no | ffprobe/ffmpeg not installed; nothing was run |
| `timeout` | yes | probing ran past `timeout` or the call's deadline |

Full page: docs/packs/av.validate.md.
"""


#: Said of a relative path that does not exist: the pack reads it where it runs.
_RELATIVE = " (a relative path is read from the first root the pack may read: give an absolute one)"


def _open(path: str, ctx: Context) -> int:
    """A descriptor of the media file: inside the read grant (``not_permitted`` outside,
    whether or not it exists), a regular file (a directory, FIFO or device is
    ``unreadable_media``: nothing blocks on it), opened without following a final symlink."""
    try:
        return ctx.reach.open_read(path)
    except FileNotFoundError:
        where = "" if os.path.isabs(path) else _RELATIVE
        raise not_found(f"the media file {path} does not exist{where}") from None
    except NotARegularFile:
        raise PackError("unreadable_media", "the path is not a regular file") from None
    except OSError as exc:  # ELOOP (a symlink as last component), EACCES, ...
        raise PackError("unreadable_media", f"the file cannot be opened: {exc.strerror}") from None


def handle(doc: dict[str, Any], ctx: Context) -> Result:
    """Probe ``doc["path"]`` and evaluate ``doc["expect"]``."""
    path = str(doc["path"])
    budget = min(float(doc.get("timeout", DEFAULT_TIMEOUT)), ctx.remaining(DEFAULT_TIMEOUT))
    deadline = time.monotonic() + budget
    expect: dict[str, Any] = dict(doc.get("expect") or {})
    # Dependencies first: a host without the tools does nothing, whatever the input.
    ffprobe = ffprobe_binary()
    ffmpeg = ffmpeg_binary() if "loudness" in expect else None
    fd = _open(path, ctx)
    try:
        facts = probe(path, timeout=budget, binary=ffprobe, fd=fd, ctx=ctx).facts
        if ffmpeg is not None and facts.get("audio"):
            remaining = max(0.0, deadline - time.monotonic())
            facts["loudness"] = measure_loudness(
                path, timeout=remaining, binary=ffmpeg, fd=fd, ctx=ctx
            )
    finally:
        os.close(fd)
    return Result(facts, evaluate(facts, expect, path))


PACK = Pack(
    name="av.validate",
    version="1.0.0",
    summary="Probe an audio/video file with ffprobe and check it against expectations.",
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    handler=handle,
    codes=CODES,
    validates=True,
    docs=DOCS,
    # Media in the temporary directory, unless the operator grants other roots
    # (--grant av.validate:fs.read=/srv/media). Not the directory the server was started
    # in: a default must not widen with it (started in /, that is every file).
    reach=Reach(reads=("$TMP",), programs=("ffprobe", "ffmpeg")),
)


@hookimpl
def register_packs(register: Callable[[Pack], None]) -> None:
    """Register ``av.validate``."""
    register(PACK)
