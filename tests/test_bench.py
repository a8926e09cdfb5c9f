"""The benchmark cannot rot: one short run of ``python -m bench`` yields every figure.

Real processes (the control plane via ``packctl serve``, the echo server), a fraction of
a second per window; figures are not checked against targets here (timing is for the
benchmark, never for tests), only that each one is there and sane.
"""

from __future__ import annotations

import json
import math
import random
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from control_plane._kernel import redact
from control_plane._kernel.outcome import CheckRecord, ErrorEnvelope, Outcome

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ("success", "error", "strict", "internal_error")
SERVERS = ("echo", "control_plane")


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def _bench(module: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` in the repository, output captured."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_one_short_round_has_every_figure(tmp_path: Path) -> None:
    proc = _bench(
        "bench",
        "--quick",
        "--duration",
        "0.25",
        "--warmup",
        "0.05",
        "--rss-calls",
        "400",
        "--peers",
        "jsonschema_rs,mcp_http,uvloop_echo,cp_asyncio",
        "--workers",
        "1,2",
        "--out",
        str(tmp_path),
        "--silent",
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    markdown = (tmp_path / "results.md").read_text()

    machine = doc["machine"]
    for key in ("cpu_model", "cores", "python", "date"):
        assert machine[key]
    assert machine["packages"]["grpcio"]

    summary = doc["throughput"]["summary"]
    assert set(summary) == set(SCENARIOS)
    for scenario in SCENARIOS:
        assert set(summary[scenario]) == {"1", "16", "64"}
        for figures in summary[scenario].values():
            for metric in ("rps", "p50_ms", "p99_ms", "cpu_us_per_call", "client_cpu_us_per_call"):
                for server in SERVERS:
                    spread = figures[metric][server]
                    assert spread["min"] <= spread["median"] <= spread["max"]
                    assert _finite(spread["median"]), (scenario, metric, server)
            for ratio in ("ratio_rps", "ratio_p50", "ratio_p99", "ratio_cpu"):
                assert _finite(figures[ratio]["median"])
        assert f"| {scenario} | 16 |" in markdown

    described = doc["scenarios"]
    assert described["success"]["grpc_status"] == "OK"
    assert described["error"]["expected_code"] == "network_error"
    assert described["strict"]["expected_code"] == "artifact_failed"
    assert described["internal_error"]["expected_code"] == "internal_error"
    for scenario in SCENARIOS:  # "a ~330-byte request"
        assert 300 <= described[scenario]["request_bytes"] <= 400

    cold = doc["cold_start"]["summary"]
    assert _finite(cold["with_100_packs_s"]["median"])
    assert _finite(cold["no_packs_s"]["median"])
    rss = doc["rss"]
    assert rss["calls"] == 400
    assert rss["idle_bytes"] > 0
    assert rss["after_bytes"] > 0
    # Peers in the same rounds: the servicer on every path, MCP on the no-op tool.
    peers = doc["peers"]["summary"]
    for scenario in SCENARIOS:
        for conc in ("1", "16", "64"):
            found = peers[scenario][conc]
            want = {"jsonschema_rs", "uvloop_echo", "cp_asyncio"}
            assert set(found) == (want | {"mcp_http"} if scenario == "success" else want)
            for figures in found.values():
                for key in ("rps", "peer_over_echo", "control_plane_over_peer", "cpu_us_per_call"):
                    assert _finite(figures[key]["median"]), (scenario, conc, key)
    assert "| success | 16 | mcp_http |" in markdown
    assert "| error | 16 | jsonschema_rs |" in markdown
    assert "| strict | 16 | uvloop_echo |" in markdown
    assert "| internal_error | 16 | cp_asyncio |" in markdown
    # The --workers scaling mode: 1 and 2 workers, success and error.
    scaling = doc["scaling"]["summary"]
    assert set(scaling) == {"success", "error"}
    for by_n in scaling.values():
        assert set(by_n) == {"1", "2"}
        assert by_n["1"]["speedup"]["median"] == 1.0
        assert _finite(by_n["2"]["speedup"]["median"])
        assert _finite(by_n["2"]["cpu_us_per_call"]["median"])
    assert "| success | 2 |" in markdown

    # 3 paths x (throughput, p99) + internal_error throughput + level with jsonschema_rs
    # + ahead of MCP + cold start + RSS.
    assert len(doc["targets"]) == 11
    assert all(isinstance(t["met"], bool) for t in doc["targets"])


def test_fresh_servers_measure_each_round_on_new_processes(tmp_path: Path) -> None:
    """``--fresh-servers``: every round after the first on a new echo and control plane."""
    proc = _bench(
        "bench",
        "--rounds",
        "2",
        "--fresh-servers",
        "--duration",
        "0.25",
        "--warmup",
        "0.05",
        "--scenarios",
        "success,error",
        "--concurrency",
        "16",
        "--peers",
        "none",
        "--workers",
        "1",
        "--rss-calls",
        "0",
        "--cold-starts",
        "0",
        "--out",
        str(tmp_path),
        "--silent",
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    processes = doc["throughput"]["processes"]
    assert [p["round"] for p in processes] == [1, 2]
    for role in ("echo_pid", "control_plane_pid"):
        assert processes[0][role] != processes[1][role]
    for scenario in ("success", "error"):
        row = doc["throughput"]["rounds"][scenario]["16"]
        assert len(row["echo"]) == len(row["control_plane"]) == 2
        assert _finite(doc["throughput"]["summary"][scenario]["16"]["ratio_rps"]["median"])
    assert "(a new echo and control plane per round)" in (tmp_path / "results.md").read_text()


# -- the hot-path shortcuts agree with what they replace ---------------------------------


def test_scrub_trigger_fast_path_agrees_with_the_regex() -> None:
    rnd = random.Random(7)
    words = [
        *redact._TRIGGER_WORDS,
        "PRIVATE KEY",
        "Bearer",
        "AKIA",
        "\u017fecret",
        "\u212aey",
        "gh_",
    ]
    alphabet = string.printable + "\u017f\u212a\u0131\u0130\u00df"
    for _ in range(20_000):
        parts = [
            rnd.choice(words)
            if rnd.random() < 0.3
            else "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8)))
            for _ in range(rnd.randint(0, 5))
        ]
        text = "".join(parts)
        # The fast exit must agree with the case-insensitive regex over the same words.
        assert redact._triggered(text) == bool(redact._TRIGGER.search(text)), text


def test_construct_trusted_is_model_construct() -> None:
    fields = {"code": "timeout", "message": "m", "retryable": True, "origin": "pack:x"}
    fast, slow = ErrorEnvelope.construct_trusted(**fields), ErrorEnvelope.model_construct(**fields)
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert fast.model_fields_set == slow.model_fields_set
    check = {"id": "c", "severity": "warn", "message": "m", "expected": [1], "actual": None}
    assert CheckRecord.construct_trusted(**check) == CheckRecord.model_construct(**check)
    outcome = Outcome.construct_trusted(pack="p", version="1", request_id="r", error=fast)
    assert (
        outcome.to_dict()
        == Outcome.model_construct(pack="p", version="1", request_id="r", error=slow).to_dict()
    )
    assert Outcome.from_dict(outcome.to_dict()) == outcome


def test_micro_benchmark_runs() -> None:
    proc = _bench("bench.micro", "--calls", "30", "--repeat", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for scenario in SCENARIOS:
        assert re.search(rf"^{scenario} +[0-9.]+ us CPU +[0-9.]+ us wall$", proc.stdout, re.M)


def test_budget_runs_and_spends_the_work() -> None:
    """``bench.budget``: one row per variant; the busy echo costs more CPU per call than the
    plain one (the work is really spent, not a no-op)."""
    proc = _bench("bench.budget", "--work-us", "2000", "--rounds", "1", "--duration", "0.3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = re.findall(
        r"^\| ([0-9.]+) \| ([0-9]+) \| ([0-9.]+) \[.*\] \| ([0-9]+) \|$", proc.stdout, re.M
    )
    assert [float(r[0]) for r in rows] == [0.0, 2000.0]
    plain_cpu, busy_cpu = int(rows[0][3]), int(rows[1][3])
    assert busy_cpu > plain_cpu + 1000  # 2 ms of Python per call shows in the server's CPU
