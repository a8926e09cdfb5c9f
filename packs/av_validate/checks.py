"""Expectations to checks: one :class:`Check` per expectation, pass, warn or fail."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from control_plane import Check, Severity

__all__ = ["EXTENSION_FORMATS", "band_severity", "evaluate"]

DEFAULT_DURATION_TOLERANCE = 0.5
DEFAULT_FRAME_RATE_TOLERANCE = 0.01
DEFAULT_LOUDNESS_TOLERANCE = 1.0

#: File extension -> ffprobe format names that may legitimately sit behind it.
EXTENSION_FORMATS: Mapping[str, frozenset[str]] = {
    ext: frozenset(names)
    for ext, names in {
        "mp4": {"mp4", "mov"},
        "m4a": {"mp4", "mov", "m4a"},
        "m4v": {"mp4", "mov"},
        "mov": {"mov", "mp4"},
        "3gp": {"3gp", "mov", "mp4"},
        "mkv": {"matroska"},
        "mka": {"matroska"},
        "webm": {"webm", "matroska"},
        "wav": {"wav"},
        "mp3": {"mp3"},
        "flac": {"flac"},
        "ogg": {"ogg"},
        "oga": {"ogg"},
        "ogv": {"ogg"},
        "opus": {"ogg"},
        "aac": {"aac"},
        "avi": {"avi"},
        "ts": {"mpegts"},
        "m2ts": {"mpegts"},
        "mpg": {"mpeg"},
        "mpeg": {"mpeg"},
        "mxf": {"mxf"},
        "aif": {"aiff"},
        "aiff": {"aiff"},
        "gif": {"gif"},
    }.items()
}


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


def band_severity(deviation: float, tolerance: float, warn_tolerance: float | None) -> Severity:
    """The severity of ``deviation`` (absolute) against a tolerance band."""
    if deviation > tolerance + 1e-9:
        return "fail"
    if warn_tolerance is not None and warn_tolerance < tolerance and deviation > warn_tolerance:
        return "warn"
    return "pass"


def _band(spec: Any, default_tolerance: float) -> tuple[float, float, float | None]:
    if isinstance(spec, Mapping):
        warn = spec.get("warn_tolerance")
        return (
            float(spec["value"]),
            float(spec.get("tolerance", default_tolerance)),
            float(warn) if warn is not None else None,
        )
    return float(spec), default_tolerance, None


class _Checker:
    def __init__(self, facts: Mapping[str, Any], location: str) -> None:
        self.facts = facts
        self.location = location
        self.checks: list[Check] = []

    def add(
        self, check_id: str, severity: Severity, message: str, expected: Any, actual: Any
    ) -> None:
        self.checks.append(Check(check_id, severity, message, expected, actual, self.location))

    def numeric_band(
        self,
        check_id: str,
        label: str,
        unit: str,
        actual: float | None,
        spec: Any,
        default: float,
        missing: str = "",
    ) -> None:
        value, tolerance, warn = _band(spec, default)
        expected: dict[str, Any] = {"value": value, "tolerance": tolerance}
        if warn is not None:
            expected["warn_tolerance"] = warn
        if actual is None:
            message = missing or f"{label} could not be determined"
            self.add(check_id, "fail", message, expected, None)
            return
        deviation = abs(actual - value)
        severity = band_severity(deviation, tolerance, warn)
        if severity == "pass":
            message = f"{label} {actual:g}{unit} is within {tolerance:g}{unit} of {value:g}{unit}"
        else:
            band = tolerance if severity == "fail" else warn
            message = (
                f"{label} {actual:g}{unit} differs from the expected {value:g}{unit} by "
                f"{deviation:.3g}{unit} (more than {band:g}{unit})"
            )
        self.add(check_id, severity, message, expected, round(actual, 3))

    def names(self, check_id: str, label: str, actual: list[str] | str | None, spec: Any) -> None:
        wanted = _names(spec)
        found = [actual] if isinstance(actual, str) else list(actual or [])
        expected: Any = wanted[0] if len(wanted) == 1 else wanted
        shown: Any = found[0] if len(found) == 1 else (found or None)
        if not found:
            self.add(check_id, "fail", f"no {label} found", expected, None)
        elif {w.lower() for w in wanted} & {f.lower() for f in found}:
            self.add(check_id, "pass", f"{label} is {', '.join(found)}", expected, shown)
        else:
            self.add(
                check_id,
                "fail",
                f"{label} is {', '.join(found)}, expected {' or '.join(wanted)}",
                expected,
                shown,
            )

    def exact(self, check_id: str, label: str, actual: Any, wanted: Any, missing: str) -> None:
        if actual is None:
            self.add(check_id, "fail", missing, wanted, None)
        elif actual == wanted:
            self.add(check_id, "pass", f"{label} is {actual}", wanted, actual)
        else:
            self.add(check_id, "fail", f"{label} is {actual}, expected {wanted}", wanted, actual)


def evaluate(facts: Mapping[str, Any], expect: Mapping[str, Any], location: str) -> list[Check]:
    """One check per expectation in ``expect``, in a fixed order."""
    c = _Checker(facts, location)
    video: Mapping[str, Any] = facts.get("video") or {}
    audio: Mapping[str, Any] = facts.get("audio") or {}
    fmt: Mapping[str, Any] = facts.get("format") or {}
    no_video = "the file has no video stream"
    no_audio = "the file has no audio stream"

    handlers: dict[str, Callable[[Any], None]] = {
        "duration": lambda spec: c.numeric_band(
            "duration", "duration", "s", facts.get("duration"), spec, DEFAULT_DURATION_TOLERANCE
        ),
        "format": lambda spec: c.names("format", "container format", fmt.get("names"), spec),
        "container": lambda spec: c.names("container", "container format", fmt.get("names"), spec),
        "video_codec": lambda spec: c.names("video_codec", "video codec", video.get("codec"), spec),
        "audio_codec": lambda spec: c.names("audio_codec", "audio codec", audio.get("codec"), spec),
        "sample_rate": lambda spec: c.exact(
            "sample_rate", "sample rate", audio.get("sample_rate"), spec, no_audio
        ),
        "channels": lambda spec: c.exact(
            "channels", "channel count", audio.get("channels"), spec, no_audio
        ),
        "width": lambda spec: c.exact("width", "width", video.get("width"), spec, no_video),
        "height": lambda spec: c.exact("height", "height", video.get("height"), spec, no_video),
        "frame_rate": lambda spec: c.numeric_band(
            "frame_rate",
            "frame rate",
            " fps",
            video.get("frame_rate"),
            spec,
            DEFAULT_FRAME_RATE_TOLERANCE,
        ),
        "bit_rate": lambda spec: _bit_rate(c, fmt.get("bit_rate"), spec),
        "has_video": lambda spec: _presence(
            c, "has_video", "video", bool(facts.get("video")), spec
        ),
        "has_audio": lambda spec: _presence(
            c, "has_audio", "audio", bool(facts.get("audio")), spec
        ),
        "extension_matches": lambda spec: _extension(c, location, fmt.get("names") or [], spec),
        "loudness": lambda spec: _loudness(c, facts.get("loudness"), spec),
    }
    for key, handler in handlers.items():
        if key in expect:
            handler(expect[key])
    return c.checks


def _bit_rate(c: _Checker, actual: int | None, spec: Mapping[str, Any]) -> None:
    expected = {k: spec[k] for k in ("min", "max") if k in spec}
    if actual is None:
        c.add("bit_rate", "fail", "bit rate could not be determined", expected, None)
        return
    low, high = spec.get("min"), spec.get("max")
    if low is not None and actual < low:
        c.add("bit_rate", "fail", f"bit rate {actual} b/s is below {low} b/s", expected, actual)
    elif high is not None and actual > high:
        c.add("bit_rate", "fail", f"bit rate {actual} b/s is above {high} b/s", expected, actual)
    else:
        c.add("bit_rate", "pass", f"bit rate {actual} b/s is within bounds", expected, actual)


def _presence(c: _Checker, check_id: str, kind: str, present: bool, wanted: bool) -> None:
    state = "has" if present else "has no"
    severity: Severity = "pass" if present == wanted else "fail"
    c.add(check_id, severity, f"the file {state} {kind} stream", wanted, present)


def _extension(c: _Checker, location: str, names: list[str], wanted: bool) -> None:
    ext = os.path.splitext(location)[1].lower().lstrip(".")
    allowed = EXTENSION_FORMATS.get(ext)
    if allowed is None:
        c.add(
            "extension_matches",
            "warn" if wanted else "pass",
            f"extension .{ext} is not one the pack knows; container is {', '.join(names)}",
            wanted,
            None,
        )
        return
    matches = bool(allowed & set(names))
    severity: Severity = "pass" if matches == wanted else "fail"
    verb = "matches" if matches else "does not match"
    c.add(
        "extension_matches",
        severity,
        f"extension .{ext} {verb} the container ({', '.join(names)})",
        wanted,
        matches,
    )


def _loudness(c: _Checker, measured: Any, spec: Mapping[str, Any]) -> None:
    band = {
        "value": spec["target"],
        "tolerance": spec.get("tolerance", DEFAULT_LOUDNESS_TOLERANCE),
        **({"warn_tolerance": spec["warn_tolerance"]} if "warn_tolerance" in spec else {}),
    }
    values: Mapping[str, Any] = measured if isinstance(measured, Mapping) else {}
    c.numeric_band(
        "loudness",
        "integrated loudness",
        " LUFS",
        values.get("integrated_lufs"),
        band,
        DEFAULT_LOUDNESS_TOLERANCE,
        missing="" if values else "loudness could not be measured: the file has no audio stream",
    )
    if "max_true_peak" in spec:
        limit = float(spec["max_true_peak"])
        peak = values.get("true_peak_dbtp")
        if peak is None:
            c.add("true_peak", "pass", "true peak is -inf (silence)", limit, None)
        elif peak > limit:
            c.add("true_peak", "fail", f"true peak {peak:g} dBTP is above {limit:g}", limit, peak)
        else:
            c.add("true_peak", "pass", f"true peak {peak:g} dBTP is within {limit:g}", limit, peak)
