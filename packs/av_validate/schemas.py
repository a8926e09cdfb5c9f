"""av.validate: hand-written JSON Schemas (2020-12) and the pack's own codes."""

from __future__ import annotations

from typing import Any

from control_plane import CodeDoc, error_schema

__all__ = ["CODES", "INPUT_SCHEMA", "OUTPUT_SCHEMA", "VOCABULARY"]

DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: The one declaration of the codes, in documentation order (``None``: a baseline code,
#: documented by the vocabulary); the output schema's enum is derived from it.
CODES: dict[str, CodeDoc | None] = {
    "not_found": None,
    "unreadable_media": CodeDoc(
        description=(
            "ffprobe (or ffmpeg, for loudness) could not read the file as audio/video: "
            "garbage bytes, a truncated container (e.g. an MP4 without its moov atom), a "
            "directory, or a file the pack may not open."
        ),
        retryable=False,
        recovery_hint=(
            "Re-export or re-download the file and validate it again; the same bytes will "
            "fail the same way."
        ),
        absorbs=("auth_failed",),
    ),
    "dependency_missing": CodeDoc(
        description=(
            "ffprobe (or ffmpeg, when loudness is asked for) is not installed on the host "
            "running the pack; the handler did not proceed."
        ),
        retryable=False,
        recovery_hint=(
            "Ask the operator to install ffmpeg (Debian package ffmpeg) or point "
            "CAPABILITY_PACKS_FFPROBE / CAPABILITY_PACKS_FFMPEG at the binaries."
        ),
    ),
    "timeout": None,
}
VOCABULARY = list(CODES)

_NUMBER_BAND: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["value"],
    "properties": {
        "value": {"type": "number", "minimum": 0, "description": "The expected value."},
        "tolerance": {
            "type": "number",
            "minimum": 0,
            "description": "Deviation beyond this fails.",
        },
        "warn_tolerance": {
            "type": "number",
            "minimum": 0,
            "description": "Deviation beyond this (but within tolerance) warns.",
        },
    },
}

_NAMES: dict[str, Any] = {
    "description": "One accepted name, or a list of accepted names.",
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    ],
}

_POSITIVE_INT: dict[str, Any] = {"type": "integer", "minimum": 1}

INPUT_SCHEMA: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "av.validate input",
    "type": "object",
    "additionalProperties": False,
    "required": ["path"],
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "description": "Path of the local audio/video file to probe.",
        },
        "timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 3600,
            "description": "Seconds allowed for ffprobe/ffmpeg (default 60); the call's "
            "deadline caps it.",
        },
        "expect": {
            "type": "object",
            "additionalProperties": False,
            "description": "Expectations; each one becomes one check in validation.",
            "properties": {
                "duration": {
                    "description": "Seconds; a number (default tolerance 0.5 s) or a band.",
                    "anyOf": [{"type": "number", "minimum": 0}, {"$ref": "#/$defs/band"}],
                },
                "format": {
                    "$ref": "#/$defs/names",
                    "description": "Container format name(s) as ffprobe reports them "
                    "(mp4, mov, matroska, webm, wav, mp3, ...).",
                },
                "container": {
                    "$ref": "#/$defs/names",
                    "description": "Synonym of format.",
                },
                "video_codec": {"$ref": "#/$defs/names"},
                "audio_codec": {"$ref": "#/$defs/names"},
                "sample_rate": {**_POSITIVE_INT, "description": "Hz, first audio stream."},
                "channels": {**_POSITIVE_INT, "description": "First audio stream."},
                "width": {**_POSITIVE_INT, "description": "Pixels, first video stream."},
                "height": {**_POSITIVE_INT, "description": "Pixels, first video stream."},
                "frame_rate": {
                    "description": "Frames per second; a number (default tolerance 0.01) "
                    "or a band.",
                    "anyOf": [{"type": "number", "minimum": 0}, {"$ref": "#/$defs/band"}],
                },
                "bit_rate": {
                    "type": "object",
                    "additionalProperties": False,
                    "minProperties": 1,
                    "description": "Overall bit rate bounds in bits per second.",
                    "properties": {
                        "min": {"type": "integer", "minimum": 0},
                        "max": {"type": "integer", "minimum": 0},
                    },
                },
                "has_video": {"type": "boolean"},
                "has_audio": {"type": "boolean"},
                "extension_matches": {
                    "type": "boolean",
                    "description": "True: the file extension must match the probed "
                    "container (catches e.g. a WAV named .mp4).",
                },
                "loudness": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["target"],
                    "description": "EBU R128 integrated loudness, measured with ffmpeg.",
                    "properties": {
                        "target": {"type": "number", "maximum": 0, "description": "LUFS."},
                        "tolerance": {
                            "type": "number",
                            "minimum": 0,
                            "description": "LU; default 1.0.",
                        },
                        "warn_tolerance": {"type": "number", "minimum": 0},
                        "max_true_peak": {
                            "type": "number",
                            "description": "dBTP; a higher true peak fails.",
                        },
                    },
                },
            },
        },
    },
    "$defs": {"band": _NUMBER_BAND, "names": _NAMES},
}

_NULLABLE_NUMBER: dict[str, Any] = {"type": ["number", "null"]}
_NULLABLE_INT: dict[str, Any] = {"type": ["integer", "null"]}
_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}

OUTPUT_SCHEMA: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "av.validate output",
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "format", "duration", "streams"],
    "properties": {
        "path": {"type": "string"},
        "format": {
            "type": "object",
            "additionalProperties": False,
            "required": ["names"],
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}},
                "long_name": _NULLABLE_STRING,
                "size": _NULLABLE_INT,
                "bit_rate": _NULLABLE_INT,
                "stream_count": {"type": "integer", "minimum": 0},
            },
        },
        "duration": _NULLABLE_NUMBER,
        "video": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "codec": _NULLABLE_STRING,
                        "width": _NULLABLE_INT,
                        "height": _NULLABLE_INT,
                        "frame_rate": _NULLABLE_NUMBER,
                        "pix_fmt": _NULLABLE_STRING,
                        "bit_rate": _NULLABLE_INT,
                    },
                },
            ]
        },
        "audio": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "codec": _NULLABLE_STRING,
                        "sample_rate": _NULLABLE_INT,
                        "channels": _NULLABLE_INT,
                        "channel_layout": _NULLABLE_STRING,
                        "bit_rate": _NULLABLE_INT,
                    },
                },
            ]
        },
        "streams": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["index", "type"],
                "properties": {
                    "index": {"type": "integer"},
                    "type": {"type": "string"},
                    "codec": _NULLABLE_STRING,
                },
            },
        },
        "loudness": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "integrated_lufs": _NULLABLE_NUMBER,
                "lra_lu": _NULLABLE_NUMBER,
                "true_peak_dbtp": _NULLABLE_NUMBER,
            },
        },
        "error": error_schema(CODES),
    },
}
