"""Run ffprobe (and ffmpeg's ebur128 filter) on ``file:`` paths only, and turn the output into
facts.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from control_plane.errors import PackError
from control_plane.tools import StderrClassifier, ToolRun, resolve_binary, rule, run_tool

if TYPE_CHECKING:
    from control_plane import Context

__all__ = [
    "FFMPEG_ENV",
    "FFPROBE_ENV",
    "FFPROBE_RULES",
    "Probe",
    "ffmpeg_binary",
    "ffprobe_binary",
    "measure_loudness",
    "probe",
]

#: Environment variables that override where the binaries are.
FFPROBE_ENV = "CAPABILITY_PACKS_FFPROBE"
FFMPEG_ENV = "CAPABILITY_PACKS_FFMPEG"

_UNREADABLE = "unreadable_media"

#: ffprobe/ffmpeg stderr -> code, first match wins; messages are fixed text.
FFPROBE_RULES = StderrClassifier(
    (
        rule("ffmpeg_no_such_file", "not_found", r"No such file or directory", "the file is gone"),
        rule(
            "ffmpeg_permission",
            _UNREADABLE,
            r"Permission denied",
            "the file cannot be opened: permission denied",
        ),
        rule("ffmpeg_directory", _UNREADABLE, r"Is a directory", "the path is a directory"),
        rule(
            "ffmpeg_moov_missing",
            _UNREADABLE,
            r"moov atom not found",
            "the MP4/MOV index (moov atom) is missing: the file is probably truncated",
        ),
        rule(
            "ffmpeg_whitelist",
            _UNREADABLE,
            r"not on whitelist|Protocol not found",
            "the file refers to other resources, which the pack does not open",
        ),
        rule(
            "ffmpeg_invalid_data",
            _UNREADABLE,
            r"Invalid data found when processing input|could not find codec parameters|"
            r"Invalid argument|End of file",
            "the file is not in a media format ffprobe can read",
        ),
        rule(
            "ffmpeg_no_audio",
            _UNREADABLE,
            r"matches no streams|Stream map .* matches no streams",
            "the file has no audio stream to measure",
        ),
    ),
    name="ffmpeg",
)

_ENV = {"LC_ALL": "C", "AV_LOG_FORCE_NOCOLOR": "1"}


def _env() -> dict[str, str]:
    return {**os.environ, **_ENV}


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    try:
        number = float(str(value))
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _rate(value: Any) -> float | None:
    """``"30000/1001"`` -> 29.97; ``"0/0"`` or garbage -> None."""
    if not isinstance(value, str) or "/" not in value:
        return _float(value)
    num, _, den = value.partition("/")
    n, d = _float(num), _float(den)
    if n is None or d is None or d == 0 or n == 0:
        return None
    return round(n / d, 3)


@dataclass(frozen=True)
class Probe:
    """What ffprobe found, as the facts the pack returns."""

    facts: dict[str, Any]

    @property
    def format_names(self) -> list[str]:
        names = self.facts["format"]["names"]
        return list(names) if isinstance(names, list) else []

    @property
    def video(self) -> Mapping[str, Any] | None:
        value = self.facts.get("video")
        return value if isinstance(value, Mapping) else None

    @property
    def audio(self) -> Mapping[str, Any] | None:
        value = self.facts.get("audio")
        return value if isinstance(value, Mapping) else None


def _facts(path: str, data: Mapping[str, Any]) -> dict[str, Any]:
    fmt = data.get("format") if isinstance(data.get("format"), Mapping) else {}
    assert isinstance(fmt, Mapping)
    raw_streams = data.get("streams") if isinstance(data.get("streams"), list) else []
    assert isinstance(raw_streams, list)
    streams = [s for s in raw_streams if isinstance(s, Mapping)]
    video_stream = next(
        (
            s
            for s in streams
            if s.get("codec_type") == "video"
            and not (s.get("disposition") or {}).get("attached_pic")
        ),
        None,
    )
    audio_stream = next((s for s in streams if s.get("codec_type") == "audio"), None)
    duration = _float(fmt.get("duration"))
    if duration is None:
        durations = [d for d in (_float(s.get("duration")) for s in streams) if d is not None]
        duration = max(durations) if durations else None
    video = None
    if video_stream is not None:
        video = {
            "codec": video_stream.get("codec_name"),
            "width": _int(video_stream.get("width")),
            "height": _int(video_stream.get("height")),
            "frame_rate": _rate(video_stream.get("avg_frame_rate"))
            or _rate(video_stream.get("r_frame_rate")),
            "pix_fmt": video_stream.get("pix_fmt"),
            "bit_rate": _int(video_stream.get("bit_rate")),
        }
    audio = None
    if audio_stream is not None:
        audio = {
            "codec": audio_stream.get("codec_name"),
            "sample_rate": _int(audio_stream.get("sample_rate")),
            "channels": _int(audio_stream.get("channels")),
            "channel_layout": audio_stream.get("channel_layout"),
            "bit_rate": _int(audio_stream.get("bit_rate")),
        }
    name = fmt.get("format_name")
    return {
        "path": path,
        "format": {
            "names": [n for n in str(name).split(",") if n] if name else [],
            "long_name": fmt.get("format_long_name"),
            "size": _int(fmt.get("size")),
            "bit_rate": _int(fmt.get("bit_rate")),
            "stream_count": len(streams),
        },
        "duration": round(duration, 6) if duration is not None else None,
        "video": video,
        "audio": audio,
        "streams": [
            {
                "index": _int(s.get("index")) or 0,
                "type": str(s.get("codec_type") or "unknown"),
                "codec": s.get("codec_name"),
            }
            for s in streams
        ],
    }


def _media_url(path: str) -> str:
    return "file:" + os.path.abspath(path)


def _failure(stderr: str, tool: str) -> PackError:
    error = FFPROBE_RULES.error(stderr)
    if error is not None:
        return error
    return PackError(_UNREADABLE, f"{tool} could not read the file as media")


def ffprobe_binary() -> str:
    """The ffprobe to run (``$CAPABILITY_PACKS_FFPROBE`` or ``PATH``); else dependency_missing."""
    return resolve_binary("ffprobe", env_var=FFPROBE_ENV)


def ffmpeg_binary() -> str:
    """The ffmpeg to run (``$CAPABILITY_PACKS_FFMPEG`` or ``PATH``); else dependency_missing."""
    return resolve_binary("ffmpeg", env_var=FFMPEG_ENV)


#: Decoders that render *text* as video (ffmpeg's ``tty``, ``bin``, ``xbin``, ``idf``
#: demuxers): any text file "probes" through them, so they are not media.
_TEXT_CODECS = frozenset({"ansi", "bintext", "xbin", "idf"})


def _is_media(data: Mapping[str, Any]) -> bool:
    """Whether ffprobe found an audio or video stream that is not text rendered as video."""
    streams = data.get("streams")
    return isinstance(streams, list) and any(
        isinstance(s, Mapping)
        and s.get("codec_type") in ("audio", "video")
        and s.get("codec_name") not in _TEXT_CODECS
        for s in streams
    )


def _run(
    argv: list[str], *, timeout: float, tool: str, fd: int | None, ctx: Context | None
) -> ToolRun:
    """Run ffprobe/ffmpeg: through the pack's reach when called for a call (granted program,
    scrubbed environment, the media file passed as an open descriptor, killed when the call
    is cancelled), else directly."""
    if ctx is None:
        return run_tool(argv, timeout=timeout, env=_env(), tool=tool, check=False)
    done, _ = ctx.reach.run(
        argv,
        timeout=timeout,
        ctx=ctx,
        env=_ENV,
        pass_fds=() if fd is None else (fd,),
        tool=tool,
        program=tool,
    )
    return done


def _source(path: str, fd: int | None) -> str:
    """What the tool opens: the descriptor the pack opened (``/proc/self/fd``: the object
    checked against the grant, not a path that could change meanwhile), else the path."""
    return f"file:/proc/self/fd/{fd}" if fd is not None else _media_url(path)


def probe(
    path: str,
    *,
    timeout: float,
    binary: str | None = None,
    fd: int | None = None,
    ctx: Context | None = None,
) -> Probe:
    """Probe ``path`` (or the open ``fd`` of it) with ffprobe; raises :class:`PackError` with
    a declared code."""
    binary = binary or ffprobe_binary()
    argv = [
        binary,
        "-v",
        "error",
        "-protocol_whitelist",
        "file",
        "-print_format",
        "json",
        "-show_format",
        "-show_streams",
        _source(path, fd),
    ]
    done = _run(argv, timeout=timeout, tool="ffprobe", fd=fd, ctx=ctx)
    if not done.ok:
        raise _failure(done.stderr, "ffprobe")
    try:
        data = orjson.loads(done.stdout or b"{}")
    except orjson.JSONDecodeError:
        raise PackError(_UNREADABLE, "ffprobe returned output the pack cannot parse") from None
    if not isinstance(data, dict) or not _is_media(data):
        raise PackError(_UNREADABLE, "the file has no audio or video streams")
    return Probe(_facts(path, data))


_SUMMARY = re.compile(r"Summary:(?P<body>.*)\Z", re.S)
_INTEGRATED = re.compile(r"^\s*I:\s+(?P<v>-?(?:\d+(?:\.\d+)?|inf))\s+LUFS", re.M)
_LRA = re.compile(r"^\s*LRA:\s+(?P<v>-?(?:\d+(?:\.\d+)?|inf))\s+LU\b", re.M)
_PEAK = re.compile(r"^\s*Peak:\s+(?P<v>-?(?:\d+(?:\.\d+)?|inf))\s+dBFS", re.M)


def _summary_value(pattern: re.Pattern[str], text: str) -> float | None:
    found = pattern.search(text)
    return _float(found.group("v")) if found else None


def measure_loudness(
    path: str,
    *,
    timeout: float,
    binary: str | None = None,
    fd: int | None = None,
    ctx: Context | None = None,
) -> dict[str, float | None]:
    """EBU R128 integrated loudness (LUFS), loudness range (LU) and true peak (dBTP)."""
    binary = binary or ffmpeg_binary()
    argv = [
        binary,
        "-nostdin",
        "-hide_banner",
        "-nostats",
        "-protocol_whitelist",
        "file",
        "-i",
        _source(path, fd),
        "-map",
        "0:a:0",
        "-af",
        "ebur128=peak=true:framelog=verbose",
        "-f",
        "null",
        "-",
    ]
    done = _run(argv, timeout=timeout, tool="ffmpeg", fd=fd, ctx=ctx)
    summary = _SUMMARY.search(done.stderr)
    if not done.ok or summary is None:
        raise _failure(done.stderr, "ffmpeg")
    body = summary.group("body")
    return {
        "integrated_lufs": _summary_value(_INTEGRATED, body),
        "lra_lu": _summary_value(_LRA, body),
        "true_peak_dbtp": _summary_value(_PEAK, body),
    }
