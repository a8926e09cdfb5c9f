"""Every series exists at zero from start-up, checked by Prometheus' own tools.

A real ``packctl serve --metrics-port 0`` is scraped over HTTP: ``promtool check metrics``
(Debian's ``prometheus`` package, installed by ``.ci/run``) finds nothing to complain about,
no ``*_created`` series is exposed, and every label set a loaded pack can produce is there
at 0 before any call. Then a real Prometheus server scrapes the endpoint and the documented
alert (``increase(capability_packs_contract_violations_total[1h]) > 0``) and
``increase()`` of the first error of a pack fire -- which they cannot when the series
appears only with its first increment.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from child_processes import tied
from prometheus_client.parser import text_string_to_metric_families
from server_support import subprocess_env
from test_cli import start_serve, stop_serve

from control_plane._features.grpc.client import Client, PackCallError
from control_plane._features.observability.metrics import REJECTION_REASONS, SEVERITIES
from control_plane._kernel.errors import RequestRejected

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> bytes:
    with _OPENER.open(url, timeout=10) as response:
        body: bytes = response.read()
        return body


Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _series(text: str) -> Series:
    out: Series = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def _key(name: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (name, tuple(sorted(labels.items())))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, int]]:
    env = subprocess_env(CAPABILITY_PACKS_INCIDENT_DB=str(tmp_path / "incidents.db"))
    proc, target = start_serve(
        "--plugin", "testpacks", "--metrics-port", "0", "--no-event-stream", env=env
    )
    try:
        banner = proc.banner  # type: ignore[attr-defined]
        port = int(banner.split("metrics on http://127.0.0.1:")[1].split("/")[0])
        yield target, port
    finally:
        if proc.poll() is None:
            stop_serve(proc)


@pytest.mark.system
def test_every_series_exists_at_zero_and_promtool_accepts_it(served: tuple[str, int]) -> None:
    target, port = served
    text = _get(f"http://127.0.0.1:{port}/metrics").decode()

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed (.ci/run installs Debian's prometheus package)")
    lint = subprocess.run(
        [promtool, "check", "metrics"],
        input=text,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert lint.returncode == 0 and not lint.stdout.strip(), lint.stdout + lint.stderr

    assert "_created" not in text
    series = _series(text)
    with Client(target) as client:
        packs = client.list_packs(timeout=10).packs
    assert packs
    for pack in packs:
        name = pack.name
        expected = [_key("capability_packs_invocations_total", pack=name, code="ok", origin="none")]
        for code in pack.codes:
            for origin in (f"pack:{name}", "control_plane"):
                expected.append(
                    _key("capability_packs_invocations_total", pack=name, code=code, origin=origin)
                )
        expected += [
            _key("capability_packs_contract_violations_total", pack=name),
            _key("capability_packs_in_flight", pack=name),
            _key("capability_packs_invocation_duration_seconds_count", pack=name),
        ]
        if pack.validates:
            expected += [
                _key("capability_packs_validation_findings_total", pack=name, severity=s)
                for s in SEVERITIES
            ]
        for key in expected:
            assert series.get(key) == 0.0, key
    for reason in REJECTION_REASONS:
        assert series.get(_key("capability_packs_rejected_requests_total", reason=reason)) == 0.0
    assert series.get(_key("capability_packs_event_store_dropped_total")) == 0.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _query(prom: str, expr: str) -> list[dict[str, Any]]:
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    data = json.loads(_get(url))
    assert data["status"] == "success", data
    result: list[dict[str, Any]] = data["data"]["result"]
    return result


def _wait_for(prom: str, expr: str, what: str, attempts: int = 300) -> list[dict[str, Any]]:
    """Poll ``expr`` until it returns a series (bounded: ``attempts`` x 0.1 s)."""
    for _ in range(attempts):
        try:
            result = _query(prom, expr)
        except OSError:
            result = []
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"Prometheus never saw {what}: {expr}")


@pytest.mark.system
def test_a_real_prometheus_sees_the_first_error_after_start(
    served: tuple[str, int], tmp_path: Path
) -> None:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("prometheus is not installed (.ci/run installs Debian's prometheus package)")
    target, metrics_port = served
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: packs\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{metrics_port}']\n"
    )
    web = _free_port()
    proc = subprocess.Popen(
        tied(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{web}",
            ]
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    prom = f"http://127.0.0.1:{web}"
    try:
        # Two scrapes before any call: the zero samples increase() needs.
        _wait_for(
            prom,
            'count_over_time(up{job="packs"}[1m]) >= 2',
            "two scrapes",
        )
        with Client(target) as client:
            with pytest.raises(PackCallError):
                client.invoke("test.undeclared", {}, timeout=10)
            with pytest.raises(PackCallError):
                client.invoke("test.fail", {"code": "not_found"}, timeout=10)
        alert = _wait_for(
            prom,
            "increase(capability_packs_contract_violations_total[1h]) > 0",
            "the documented contract-violation alert",
        )
        assert [r["metric"]["pack"] for r in alert] == ["test.undeclared"]
        first = _wait_for(
            prom,
            'increase(capability_packs_invocations_total{code="not_found"}[1h]) > 0',
            "the first not_found",
        )
        assert [(r["metric"]["pack"], r["metric"]["origin"]) for r in first] == [
            ("test.fail", "pack:test.fail")
        ]
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=10)


def test_no_caller_input_adds_a_series(tmp_path: Path) -> None:
    # Every label source a caller can reach, driven with values it made up: unknown pack
    # names (control characters, 10 KB, unicode), undeclared codes a pack raises on request,
    # severities a pack returns on request, invalid inputs, request ids and correlation
    # metadata. The series set after is the one at start-up: values change, names do not.
    env = subprocess_env(CAPABILITY_PACKS_INCIDENT_DB=str(tmp_path / "incidents.db"))
    proc, target = start_serve(
        "--plugin", "testpacks", "--metrics-port", "0", "--no-event-stream", env=env, drain=True
    )  # drained: the rejections it logs outgrow a pipe
    banner = proc.banner  # type: ignore[attr-defined]
    port = int(banner.split("metrics on http://127.0.0.1:")[1].split("/")[0])
    try:
        _drive_made_up_values(target, port)
    finally:
        stop_serve(proc)


def _drive_made_up_values(target: str, port: int) -> None:
    before = _series(_get(f"http://127.0.0.1:{port}/metrics").decode())
    made_up = [f"no.such.{i}" for i in range(50)] + ["x" * 10_000, "p\u00e9\u00e7k\n\x00", ""]
    with Client(target) as client:
        for i, name in enumerate(made_up):
            with pytest.raises((PackCallError, RequestRejected, ValueError)):
                client.invoke(name, {}, timeout=10, request_id=f"rid-{i}-" + "r" * 100)
        for i in range(50):
            with pytest.raises(PackCallError):
                client.invoke(
                    "test.fail",
                    {"code": f"made_up_{i}"},
                    timeout=10,
                    metadata=[(f"x-correlation-k{i}", f"v{i}")],
                )
            with pytest.raises(PackCallError):  # a severity outside pass|warn|fail
                client.invoke(
                    "test.findings",
                    {"checks": [{"id": "a", "severity": f"sev_{i}"}]},
                    timeout=10,
                )
            with pytest.raises(RequestRejected):
                client.invoke("test.strict_input", {"name": i, f"extra_{i}": 1}, timeout=10)
    after = _series(_get(f"http://127.0.0.1:{port}/metrics").decode())
    assert set(after) == set(before), sorted(set(after) - set(before))[:5]
    assert after != before  # the traffic was counted, under the existing series
