"""av.validate on real media made here (ffmpeg lavfi, stdlib wave) and the real ffprobe."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import time
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pack_helpers import Call, assert_error, make_call

import packs.av_validate as av
from control_plane._kernel.errors import InvalidInput
from control_plane._kernel.outcome import Outcome

pytestmark = [
    pytest.mark.system,
    pytest.mark.skipif(
        shutil.which("ffprobe") is None or shutil.which("ffmpeg") is None,
        reason="ffmpeg/ffprobe not installed",
    ),
]

PACK = "av.validate"
ROOT = Path(__file__).resolve().parents[2]

#: Every code in av.validate's effective vocabulary -> the tests here that provoke it.
CODE_TESTS: dict[str, tuple[str, ...]] = {
    "not_found": ("test_missing_file_is_not_found",),
    "not_permitted": ("test_a_path_outside_the_read_grant_is_not_permitted",),
    "unreadable_media": (
        "test_text_and_fifos_are_unreadable_media",
        "test_unreadable_media",
        "test_truncated_mp4_names_the_missing_index",
        "test_directory_is_unreadable_media",
        "test_text_named_wav_is_unreadable_media",
    ),
    "dependency_missing": (
        "test_ffprobe_missing_from_path_is_dependency_missing",
        "test_ffmpeg_missing_when_loudness_is_asked",
    ),
    "timeout": ("test_probe_past_its_timeout_is_timeout", "test_call_deadline_caps_the_probe"),
    "artifact_failed": (
        "test_strict_turns_the_fail_finding_into_artifact_failed",
        "test_warn_band_warns_and_strict_passes_warnings_unless_fail_on_warn",
        "test_packctl_call_prints_findings_and_strict_exit_codes",
    ),
    "internal_error": ("test_nonsense_from_ffprobe_is_internal_error",),
}


def write_wav(path: Path, seconds: float, rate: int = 48000, amplitude: float = 0.25) -> None:
    """A mono 16-bit sine (440 Hz) with the stdlib ``wave`` module."""
    frames = int(seconds * rate)
    peak = int(32767 * amplitude)
    data = b"".join(
        struct.pack("<h", int(peak * math.sin(2 * math.pi * 440 * i / rate))) for i in range(frames)
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(data)


@dataclass(frozen=True)
class Media:
    root: Path
    mp4: Path  # 2 s, 160x120 @ 10 fps h264 + 48 kHz mono aac
    wav: Path  # 2.1 s, 48 kHz mono pcm_s16le
    truncated_wav: Path  # header says 3 s, bytes for ~1 s
    truncated_mp4: Path  # first 40% of an mp4 (moov atom lost)
    wav_as_mp4: Path  # WAV bytes named .mp4
    garbage_mp4: Path  # random bytes named .mp4
    empty_mp4: Path


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Media:
    root = tmp_path_factory.mktemp("media")
    mp4 = root / "clip.mp4"
    subprocess.run(
        [
            "ffmpeg", "-nostdin", "-v", "error", "-y",
            "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=2",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "64k", "-shortest", str(mp4),
        ],
        check=True,
    )  # fmt: skip
    wav = root / "tone.wav"
    write_wav(wav, 2.1)
    long_wav = root / "long.wav"
    write_wav(long_wav, 3.0)
    truncated_wav = root / "truncated.wav"
    truncated_wav.write_bytes(long_wav.read_bytes()[: 44 + 48000 * 2])
    truncated_mp4 = root / "truncated.mp4"
    data = mp4.read_bytes()
    truncated_mp4.write_bytes(data[: int(len(data) * 0.4)])
    wav_as_mp4 = root / "actually-wav.mp4"
    wav_as_mp4.write_bytes(wav.read_bytes())
    garbage = root / "garbage.mp4"
    garbage.write_bytes(random.Random(7).randbytes(4096))
    empty = root / "empty.mp4"
    empty.write_bytes(b"")
    return Media(root, mp4, wav, truncated_wav, truncated_mp4, wav_as_mp4, garbage, empty)


@pytest.fixture(scope="module")
def call() -> Iterator[Call]:
    invoker, call_ = make_call(av)
    yield call_
    invoker.close()


def checks(outcome: Outcome) -> dict[str, dict[str, Any]]:
    assert outcome.validation is not None
    return {c["id"]: c for c in outcome.to_dict()["validation"]["checks"]}


# -- success: facts and findings -------------------------------------------------------


def test_all_expectations_pass_on_a_good_file(call: Call, media: Media) -> None:
    expect = {
        "duration": {"value": 2.0, "tolerance": 0.2},
        "format": "mp4",
        "video_codec": "h264",
        "audio_codec": ["aac", "mp3"],
        "sample_rate": 48000,
        "channels": 1,
        "width": 160,
        "height": 120,
        "frame_rate": 10,
        "bit_rate": {"min": 10_000, "max": 10_000_000},
        "has_video": True,
        "has_audio": True,
        "extension_matches": True,
    }
    outcome = call(PACK, {"path": str(media.mp4), "expect": expect})
    assert outcome.ok, outcome.to_dict()
    result = outcome.result
    assert result is not None
    assert result["path"] == str(media.mp4)
    assert "mp4" in result["format"]["names"]
    assert result["video"]["codec"] == "h264"
    assert (result["video"]["width"], result["video"]["height"]) == (160, 120)
    assert result["audio"]["sample_rate"] == 48000
    assert abs(result["duration"] - 2.0) < 0.2
    found = checks(outcome)
    assert set(found) == set(expect)  # one check per expectation
    assert {c["severity"] for c in found.values()} == {"pass"}
    assert all(c["location"] == str(media.mp4) for c in found.values())
    assert outcome.validation is not None and outcome.validation.status == "pass"


def test_27_9_second_duration_mismatch_is_a_fail_finding_not_an_error(
    call: Call, media: Media
) -> None:
    outcome = call(PACK, {"path": str(media.wav), "expect": {"duration": 30}})
    assert outcome.ok  # the call succeeded
    duration = checks(outcome)["duration"]
    assert duration["severity"] == "fail"
    assert duration["actual"] == pytest.approx(2.1, abs=0.01)
    assert duration["expected"] == {"value": 30.0, "tolerance": 0.5}
    assert "27.9" in duration["message"]
    assert outcome.validation is not None and outcome.validation.status == "fail"


def test_strict_turns_the_fail_finding_into_artifact_failed(call: Call, media: Media) -> None:
    outcome = call(PACK, {"path": str(media.wav), "expect": {"duration": 30}}, strict=True)
    error = assert_error(outcome, "artifact_failed")
    assert [c["id"] for c in error["checks"]] == ["duration"]
    assert error["checks"][0]["severity"] == "fail"
    assert error["retryable"] is False
    assert outcome.validation is not None  # findings still travel


def test_warn_band_warns_and_strict_passes_warnings_unless_fail_on_warn(
    call: Call, media: Media
) -> None:
    doc = {
        "path": str(media.wav),
        "expect": {"duration": {"value": 2.3, "tolerance": 0.5, "warn_tolerance": 0.1}},
    }
    outcome = call(PACK, doc)
    assert checks(outcome)["duration"]["severity"] == "warn"
    assert outcome.validation is not None and outcome.validation.status == "warn"
    assert call(PACK, doc, strict=True).ok
    assert_error(call(PACK, doc, strict=True, fail_on="warn"), "artifact_failed")
    inside = {
        "path": str(media.wav),
        "expect": {"duration": {"value": 2.15, "tolerance": 0.5, "warn_tolerance": 0.1}},
    }
    assert checks(call(PACK, inside))["duration"]["severity"] == "pass"


def test_mislabeled_wav_named_mp4_fails_format_and_extension(call: Call, media: Media) -> None:
    outcome = call(
        PACK,
        {"path": str(media.wav_as_mp4), "expect": {"format": "mp4", "extension_matches": True}},
    )
    assert outcome.ok
    found = checks(outcome)
    assert found["format"]["severity"] == "fail"
    assert found["format"]["actual"] == "wav"
    assert found["extension_matches"]["severity"] == "fail"
    assert outcome.result is not None and outcome.result["format"]["names"] == ["wav"]


def test_truncated_wav_is_readable_but_too_short(call: Call, media: Media) -> None:
    outcome = call(PACK, {"path": str(media.truncated_wav), "expect": {"duration": 3.0}})
    assert outcome.ok
    duration = checks(outcome)["duration"]
    assert duration["severity"] == "fail"
    assert duration["actual"] < 1.5


def test_stream_and_audio_expectations_fail_on_a_wav(call: Call, media: Media) -> None:
    expect = {
        "has_video": True,
        "has_audio": True,
        "video_codec": "h264",
        "width": 1920,
        "sample_rate": 44100,
        "channels": 2,
        "audio_codec": "pcm_s16le",
    }
    found = checks(call(PACK, {"path": str(media.wav), "expect": expect}))
    assert found["has_video"]["severity"] == "fail"
    assert found["has_audio"]["severity"] == "pass"
    assert found["video_codec"]["severity"] == "fail"
    assert found["width"] == {
        "id": "width",
        "severity": "fail",
        "message": "the file has no video stream",
        "expected": 1920,
        "location": str(media.wav),
    }
    assert found["sample_rate"]["actual"] == 48000 and found["sample_rate"]["severity"] == "fail"
    assert found["channels"]["severity"] == "fail"
    assert found["audio_codec"]["severity"] == "pass"


def test_loudness_pass_warn_fail_and_true_peak(call: Call, media: Media) -> None:
    first = call(PACK, {"path": str(media.wav), "expect": {"loudness": {"target": -23}}})
    assert first.ok and first.result is not None
    measured = first.result["loudness"]["integrated_lufs"]
    assert -40 < measured < 0
    peak = first.result["loudness"]["true_peak_dbtp"]
    assert peak is not None and peak < 0

    def severity(spec: dict[str, Any]) -> str:
        outcome = call(PACK, {"path": str(media.wav), "expect": {"loudness": spec}})
        return str(checks(outcome)["loudness"]["severity"])

    assert severity({"target": measured, "tolerance": 0.5}) == "pass"
    assert severity({"target": measured - 0.8, "tolerance": 1.0, "warn_tolerance": 0.5}) == "warn"
    assert severity({"target": measured - 3, "tolerance": 1.0}) == "fail"
    strict_peak = call(
        PACK,
        {
            "path": str(media.wav),
            "expect": {"loudness": {"target": measured, "max_true_peak": peak - 3}},
        },
    )
    assert checks(strict_peak)["true_peak"]["severity"] == "fail"


# -- errors: every declared code, provoked for real ---------------------------------------


def test_missing_file_is_not_found(call: Call, media: Media) -> None:
    error = assert_error(call(PACK, {"path": str(media.root / "nope.mp4")}), "not_found")
    assert error["retryable"] is False


@pytest.mark.parametrize("name", ["truncated_mp4", "garbage_mp4", "empty_mp4"])
def test_unreadable_media(call: Call, media: Media, name: str) -> None:
    path = getattr(media, name)
    error = assert_error(
        call(PACK, {"path": str(path), "expect": {"duration": 2}}), "unreadable_media"
    )
    assert error["retryable"] is False
    assert str(media.root) not in error["message"]  # fixed text, no ffprobe stderr


def test_truncated_mp4_names_the_missing_index(call: Call, media: Media) -> None:
    error = assert_error(call(PACK, {"path": str(media.truncated_mp4)}), "unreadable_media")
    assert "moov" in error["message"]


def test_directory_is_unreadable_media(call: Call, media: Media) -> None:
    assert_error(call(PACK, {"path": str(media.root)}), "unreadable_media")


def test_ffprobe_missing_from_path_is_dependency_missing(
    call: Call, media: Media, monkeypatch: pytest.MonkeyPatch, empty_dir: Path
) -> None:
    monkeypatch.delenv(av.FFPROBE_ENV, raising=False)
    monkeypatch.setenv("PATH", str(empty_dir))
    error = assert_error(call(PACK, {"path": str(media.mp4)}), "dependency_missing")
    assert error["retryable"] is False
    assert "ffprobe" in error["message"]
    # Even for a missing file: the handler did not proceed.
    assert_error(call(PACK, {"path": str(media.root / "nope.mp4")}), "dependency_missing")


def test_ffprobe_override_env(
    call: Call, media: Media, monkeypatch: pytest.MonkeyPatch, empty_dir: Path
) -> None:
    real = shutil.which("ffprobe")
    assert real is not None
    monkeypatch.setenv(av.FFPROBE_ENV, str(empty_dir / "ffprobe"))
    assert_error(call(PACK, {"path": str(media.mp4)}), "dependency_missing")
    monkeypatch.setenv(av.FFPROBE_ENV, real)
    monkeypatch.setenv("PATH", str(empty_dir))
    assert call(PACK, {"path": str(media.mp4)}).ok


def test_ffmpeg_missing_when_loudness_is_asked(
    call: Call, media: Media, monkeypatch: pytest.MonkeyPatch, empty_dir: Path
) -> None:
    monkeypatch.setenv(av.FFMPEG_ENV, str(empty_dir / "ffmpeg"))
    doc = {"path": str(media.wav), "expect": {"loudness": {"target": -23}}}
    assert_error(call(PACK, doc), "dependency_missing")
    assert call(PACK, {"path": str(media.wav)}).ok  # not needed without loudness


def _stalled_ffprobe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ffprobe that hangs (standing in for a stalled disk or a pathological file)."""
    stub = tmp_path / "ffprobe"
    stub.write_text("#!/bin/sh\nexec sleep 60\n")
    stub.chmod(0o755)
    monkeypatch.setenv(av.FFPROBE_ENV, str(stub))


def test_probe_past_its_timeout_is_timeout(
    call: Call, media: Media, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stalled_ffprobe(tmp_path, monkeypatch)
    started = time.monotonic()
    error = assert_error(call(PACK, {"path": str(media.wav), "timeout": 0.5}), "timeout")
    assert time.monotonic() - started < 5
    assert error["retryable"] is True


def test_call_deadline_caps_the_probe(
    call: Call, media: Media, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stalled_ffprobe(tmp_path, monkeypatch)
    started = time.monotonic()
    assert_error(call(PACK, {"path": str(media.wav)}, timeout=0.5), "timeout")
    assert time.monotonic() - started < 5


def test_text_and_fifos_are_unreadable_media(call: Call, tmp_path: Path) -> None:
    """A text file "probed" as ffmpeg's tty demuxer (ANSI art, with its size) on main: not
    media. A FIFO is refused before ffprobe could block on it."""
    text = tmp_path / "notes.txt"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n" * 50)
    assert_error(call(PACK, {"path": str(text)}), "unreadable_media")
    fifo = tmp_path / "stalled.wav"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert_error(call(PACK, {"path": str(fifo)}), "unreadable_media")
    assert time.monotonic() - started < 5


def test_a_path_outside_the_read_grant_is_not_permitted(call: Call, media: Media) -> None:
    """Outside its roots the pack answers the same whether or not the file exists."""
    from pack_helpers import granted

    from control_plane._kernel.reach import Grant

    with granted({PACK: Grant(reads=(str(media.root / "elsewhere"),))}):
        answers = [
            assert_error(call(PACK, {"path": str(p)}), "not_permitted")["message"]
            for p in (media.mp4, media.root / "nope.mp4", Path("/etc/passwd"))
        ]
    assert len(set(answers)) == 1, answers


def test_input_is_checked_before_the_handler(call: Call, media: Media) -> None:
    with pytest.raises(InvalidInput):
        call(PACK, {"path": str(media.mp4), "expect": {"durration": 2}})
    with pytest.raises(InvalidInput):
        call(PACK, {"path": ""})


def test_text_named_wav_is_unreadable_media(call: Call, tmp_path: Path) -> None:
    notes = tmp_path / "notes.wav"
    notes.write_text("these are meeting notes, not audio\n" * 50)
    error = assert_error(call(PACK, {"path": str(notes)}), "unreadable_media")
    assert "notes" not in error["message"]


def test_nonsense_from_ffprobe_is_internal_error(
    call: Call, media: Media, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An ffprobe whose JSON breaks the output schema: the contract guard, not a crash."""
    fake = tmp_path / "ffprobe"
    fake.write_text(
        "#!/bin/sh\n"
        'echo \'{"streams": [{"codec_type": "audio", "codec_name": 42}], "format": {}}\'\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv(av.FFPROBE_ENV, str(fake))
    error = assert_error(call(PACK, {"path": str(media.wav)}), "internal_error")
    assert error["reference_id"] and "42" not in error["message"]


def test_every_declared_code_has_a_provoking_test() -> None:
    invoker, _ = make_call(av)
    try:
        declared = set(invoker.registry.get(PACK).vocabulary)
    finally:
        invoker.close()
    assert set(CODE_TESTS) == declared
    for names in CODE_TESTS.values():
        for name in names:
            assert callable(globals()[name]), name


# -- packctl ------------------------------------------------------------------------------


def packctl(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m control_plane._features.cli.cli`` in a child process, only this pack loaded."""
    env = {**os.environ, "CAPABILITY_PACKS_PLUGINS": "packs.av_validate"}
    return subprocess.run(
        [sys.executable, "-m", "control_plane._features.cli.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_packctl_call_prints_findings_and_strict_exit_codes(media: Media, tmp_path: Path) -> None:
    failing = tmp_path / "failing.json"
    failing.write_text(
        json.dumps({"path": str(media.wav), "expect": {"duration": 30, "sample_rate": 48000}})
    )
    warning = json.dumps(
        {
            "path": str(media.wav),
            "expect": {"duration": {"value": 2.3, "tolerance": 0.5, "warn_tolerance": 0.1}},
        }
    )
    # Not strict: the call succeeds and the findings are printed, readable.
    done = packctl("call", PACK, "--local", "--input", f"@{failing}")
    assert done.returncode == 0, done.stderr
    assert "validation: FAIL (1 pass, 1 fail)" in done.stdout
    assert "FAIL  duration: duration 2.1s differs from the expected 30s by 27.9s" in done.stdout
    assert "PASS  sample_rate" in done.stdout
    # Strict: a fail finding exits 1 with artifact_failed naming the check.
    done = packctl("call", PACK, "--local", "--strict", "--input", f"@{failing}")
    assert done.returncode == 1
    assert "error: artifact_failed (permanent)" in done.stderr
    assert "FAIL  duration" in done.stderr
    # Strict with warnings only: exit 0, the warning still shown; fail-on warn: exit 1.
    done = packctl("call", PACK, "--local", "--strict", "--input", warning)
    assert done.returncode == 0, done.stderr
    assert "validation: WARN (1 warn)" in done.stdout and "WARN  duration" in done.stdout
    done = packctl("call", PACK, "--local", "--strict", "--fail-on", "warn", "--input", warning)
    assert done.returncode == 1
    assert "artifact_failed" in done.stderr
