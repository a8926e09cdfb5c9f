"""The benchmark's plugin: one pack per measured path.

Loaded in the ``packctl serve`` subprocess with ``PYTHONPATH=<repo>``,
``CAPABILITY_PACKS_PLUGINS=bench.packs`` and ``--plugin bench.packs``.

* ``bench.noop`` (success path): returns its (validated) input document unchanged, so the
  result carries as many bytes as the request; input and output schemas are real ones.
* ``bench.error`` (error path): raises ``ConnectionRefusedError``, which classification
  maps to the declared ``network_error``.
* ``bench.strict`` (strict path): returns 5 validation checks (3 pass, 1 warn, 1 fail);
  called with ``strict`` the ``fail`` finding turns the call into ``artifact_failed``.
* ``bench.internal`` (internal_error): raises an unclassifiable ``RuntimeError`` whose text
  holds a password; the caller gets the fixed redacted text and a reference id.
"""

from __future__ import annotations

from typing import Any

from control_plane import Check, Context, Pack, Reach, Result, hookimpl

__all__ = ["PACK_NAMES", "SECRET", "register_packs", "request_document"]

#: Planted in the internal_error pack's exception; it must never reach the caller.
SECRET = "bench-s3cr3t-5a4b3c2d1e"

PACK_NAMES = ("bench.noop", "bench.error", "bench.strict", "bench.internal")


def request_document() -> dict[str, Any]:
    """The input every benchmark call carries (~300 bytes of JSON)."""
    return {
        "url": "https://media.example.com/library/2024/archive/clip-000417.mp4",
        "profile": "broadcast-hd",
        "max_duration_s": 3600,
        "expect": {"width": 1920, "height": 1080, "codec": "h264", "fps": 25},
        "tags": ["nightly", "ingest", "bench"],
        "notes": "benchmark payload: a realistic request of about three hundred bytes",
    }


_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "minLength": 1},
        "profile": {"type": "string"},
        "max_duration_s": {"type": "integer", "minimum": 0},
        "expect": {
            "type": "object",
            "properties": {
                "width": {"type": "integer"},
                "height": {"type": "integer"},
                "codec": {"type": "string"},
                "fps": {"type": "number"},
            },
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "string"},
    },
    "required": ["url"],
}


def _output_schema(codes: list[str], *, validation: bool = False) -> dict[str, Any]:
    props: dict[str, Any] = {
        "url": {"type": "string"},
        "profile": {"type": "string"},
        "max_duration_s": {"type": "integer"},
        "expect": {"type": "object"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "string"},
        "error": {
            "type": "object",
            "properties": {"code": {"enum": codes}, "message": {"type": "string"}},
        },
    }
    if validation:
        props["validation"] = {"type": "object"}
    return {"type": "object", "properties": props}


_CODES = ["not_found", "timeout", "network_error"]


async def noop(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The success path: nothing to do, the input comes back."""
    return doc


async def refused(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The error path: a downstream refused the connection."""
    raise ConnectionRefusedError(111, "Connection refused: upstream media.example.com:443")


_CHECKS = (
    Check("container.format", "pass", "container is MP4", expected="mp4", actual="mp4"),
    Check("video.codec", "pass", "video codec is h264", expected="h264", actual="h264"),
    Check("video.resolution", "pass", "1920x1080", expected=[1920, 1080], actual=[1920, 1080]),
    Check("audio.loudness", "warn", "loudness -20.5 LUFS, target -23 +/- 2", actual=-20.5),
    Check("video.fps", "fail", "frame rate 24 fps, expected 25", expected=25, actual=24),
)


async def strict_checks(doc: dict[str, Any], ctx: Context) -> Result:
    """The strict path: five findings, one of them ``fail``."""
    return Result({"url": doc["url"]}, list(_CHECKS))


async def unclassified(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The internal_error path: an unclassifiable failure holding a secret."""
    raise RuntimeError(f"decoder state corrupt (db password={SECRET})")


@hookimpl
def register_packs(register: Any) -> None:
    """Register the four benchmark packs."""
    register(
        Pack(
            "bench.noop",
            "1.0.0",
            "No-op: returns its input.",
            _INPUT_SCHEMA,
            _output_schema(_CODES),
            noop,
            reach=Reach(),  # reaches nothing: in-process, as measured
        )
    )
    register(
        Pack(
            "bench.error",
            "1.0.0",
            "Always fails with network_error.",
            _INPUT_SCHEMA,
            _output_schema(_CODES),
            refused,
            reach=Reach(),  # reaches nothing: in-process, as measured
        )
    )
    register(
        Pack(
            "bench.strict",
            "1.0.0",
            "Five checks, one failing.",
            _INPUT_SCHEMA,
            _output_schema(_CODES, validation=True),
            strict_checks,
            validates=True,
            reach=Reach(),
        )
    )
    register(
        Pack(
            "bench.internal",
            "1.0.0",
            "Always fails unclassifiably.",
            _INPUT_SCHEMA,
            _output_schema(_CODES),
            unclassified,
            reach=Reach(),  # reaches nothing: in-process, as measured
        )
    )
