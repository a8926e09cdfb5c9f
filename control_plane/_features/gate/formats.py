"""Render a gate report as text, json, junit, sarif or github annotations, pack texts made
printable.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from control_plane._features.gate.report import GateReport, JobResult
from control_plane._kernel.outcome import CheckRecord
from control_plane._version import version as _version

__all__ = ["FORMATS", "printable", "render"]

TOOL_NAME = "packctl gate"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
BASE_ID = "GATEROOT"
SARIF_LEVEL = {"fail": "error", "warn": "warning", "pass": "none"}


#: What :func:`printable` shows escaped: C0 controls (newlines and tabs too), DEL, C1
#: controls (``\x9b`` is a CSI on some terminals) and the Unicode line separators.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """``text`` as part of one line of a log: each control character as its Python escape
    (``\\n``, ``\\x1b``, ``\\x00``), everything else unchanged."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)


def _lines(lines: list[str]) -> str:
    """``lines`` as text, each exactly one printable line, whatever they were built from."""
    return "".join(printable(line) + "\n" for line in lines)


def _json(data: Any) -> str:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2, default=str).decode() + "\n"


def _facts(check: CheckRecord) -> str:
    facts = []
    if check.expected is not None:
        facts.append(f"expected {orjson.dumps(check.expected).decode()}")
    if check.actual is not None:
        facts.append(f"actual {orjson.dumps(check.actual).decode()}")
    return f" ({', '.join(facts)})" if facts else ""


def _check_line(check: CheckRecord) -> str:
    return f"{check.severity.upper():<4}  {check.id}: {check.message}{_facts(check)}"


# -- text ----------------------------------------------------------------------------


def render_text(report: GateReport) -> str:
    """Details of every result that is not a plain pass, then the summary table."""
    out: list[str] = []
    out.append(
        f"packctl gate: {report.config.path} against {report.target} "
        f"({len(report.results)} result(s))"
    )
    details = [r for r in report.results if r.status != "pass"]
    if details:
        out.append("")
    for result in details:
        step = result.invocation.step
        head = f"{result.status.upper():<8} {step.name}: {result.invocation.label}"
        if result.status == "error":
            out.append(f"{head}: could not run: {result.reason}")
            continue
        if result.status == "advisory":
            head += " (strict = false: reported, not failing the gate)"
        out.append(head)
        out.extend(f"         {_check_line(c)}" for c in result.findings)
    out.append("")
    out.extend(_table(report))
    counts = report.counts()
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "nothing to run"
    out.append("")
    out.append(
        f"gate {report.verdict}: {summary} in {report.elapsed:.1f}s (exit {report.exit_code})"
    )
    return _lines(out)


def _table(report: GateReport) -> list[str]:
    header = ("STEP", "ARTIFACT", "STATUS", "FAIL", "WARN", "PASS", "TIME")
    rows: list[tuple[str, ...]] = []
    for result in report.results:
        counts = result.severity_counts()
        artifact = result.invocation.artifact
        rows.append(
            (
                printable(result.invocation.step.name),
                printable(artifact.display) if artifact is not None else "-",
                result.status.upper(),
                str(counts["fail"]),
                str(counts["warn"]),
                str(counts["pass"]),
                f"{result.elapsed:.2f}s",
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = {3, 4, 5, 6}

    def fmt(row: tuple[str, ...]) -> str:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    return [fmt(header), *(fmt(r) for r in rows)]


# -- json ----------------------------------------------------------------------------


def render_json(report: GateReport) -> str:
    """The verdict and every result with its full outcome."""
    results = []
    for result in report.results:
        inv = result.invocation
        results.append(
            {
                "step": inv.step.name,
                "pack": inv.step.pack,
                "artifact": inv.artifact.display if inv.artifact else None,
                "path": inv.artifact.path if inv.artifact else None,
                "strict": inv.step.strict,
                "fail_on": inv.step.fail_on,
                "status": result.status,
                "elapsed_s": round(result.elapsed, 6),
                "input": inv.payload,
                "outcome": result.outcome.to_dict() if result.outcome is not None else None,
                "problem": (
                    {"kind": result.problem_kind, "message": result.problem}
                    if result.problem is not None
                    else None
                ),
            }
        )
    return _json(
        {
            "gate": {
                "file": str(report.config.path),
                "target": report.target,
                "verdict": report.verdict,
                "exit_code": report.exit_code,
                "counts": report.counts(),
                "elapsed_s": round(report.elapsed, 6),
            },
            "results": results,
        }
    )


# -- JUnit XML -----------------------------------------------------------------------

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(text: str) -> str:
    return _XML_ILLEGAL.sub("?", text)


def render_junit(report: GateReport) -> str:
    """One ``<testsuite>`` per step, one ``<testcase>`` per step x artifact.

    ``artifact_failed`` is a ``<failure>``, a step that could not run an ``<error>``;
    every check (warnings included) is listed in ``<system-out>``. Strict: valid against
    Jenkins xunit's ``junit-10.xsd`` (no ``skipped`` on ``<testsuites>``, no ``file`` on
    ``<testcase>``: the artifact is the test case's name).
    """
    return _junit(report, with_file=False)


def render_junit_xunit1(report: GateReport) -> str:
    """:func:`render_junit` plus ``file`` on each ``<testcase>`` (the "xunit1" flavour,
    as pytest's ``junit_family=xunit1``): GitLab links a test case to its file from it;
    strict XSD consumers (Jenkins xunit) refuse it."""
    return _junit(report, with_file=True)


def _junit(report: GateReport, *, with_file: bool) -> str:
    counts = report.counts()
    root = ET.Element(
        "testsuites",
        name=TOOL_NAME,
        tests=str(len(report.results)),
        failures=str(counts["fail"]),
        errors=str(counts["error"]),
        time=f"{report.elapsed:.3f}",
    )
    for step, results in report.by_step():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_x(step.name),
            tests=str(len(results)),
            failures=str(sum(r.status == "fail" for r in results)),
            errors=str(sum(r.status == "error" for r in results)),
            skipped="0",
            time=f"{sum(r.elapsed for r in results):.3f}",
        )
        for result in results:
            case = ET.SubElement(
                suite,
                "testcase",
                name=_x(result.invocation.label),
                classname=_x(f"{step.pack}.{step.name}"),
                time=f"{result.elapsed:.3f}",
            )
            if with_file and result.invocation.artifact is not None:
                case.set("file", _x(result.invocation.artifact.display))
            if result.status == "fail":
                failing = [c for c in result.findings if c.severity == "fail"] or result.findings
                failure = ET.SubElement(
                    case,
                    "failure",
                    type="artifact_failed",
                    message=_x(result.reason),
                )
                failure.text = _x("\n".join(_check_line(c) for c in failing))
            elif result.status == "error":
                error = ET.SubElement(
                    case,
                    "error",
                    type=_x(_error_type(result)),
                    message=_x(result.reason),
                )
                error.text = _x(result.reason)
            lines = [_check_line(c) for c in result.checks]
            if result.status == "advisory":
                lines.insert(0, "advisory step (strict = false): findings do not fail the gate")
            if lines:
                ET.SubElement(case, "system-out").text = _x("\n".join(lines))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _error_type(result: JobResult) -> str:
    if result.outcome is not None and result.outcome.error is not None:
        return result.outcome.error.code
    return result.problem_kind or "error"


# -- SARIF 2.1.0 ---------------------------------------------------------------------


def _artifact_location(result: JobResult) -> dict[str, Any] | None:
    artifact = result.invocation.artifact
    if artifact is None:
        return None
    if Path(artifact.display).is_absolute():
        return {"uri": Path(artifact.path).as_uri()}
    return {"uri": quote(artifact.display), "uriBaseId": BASE_ID}


def render_sarif(report: GateReport) -> str:
    """One run: rules ``pack/check_id``, a result per warn/fail finding, and a tool
    execution notification per step that could not run."""
    rules: list[dict[str, Any]] = []
    rule_index: dict[str, int] = {}
    artifacts: list[dict[str, Any]] = []
    artifact_index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    could_not_run = 0

    def locate(result: JobResult) -> list[dict[str, Any]]:
        location = _artifact_location(result)
        if location is None:
            return []
        key = location["uri"]
        if key not in artifact_index:
            artifact_index[key] = len(artifacts)
            artifacts.append({"location": dict(location), "roles": ["analysisTarget"]})
        location = {**location, "index": artifact_index[key]}
        return [{"physicalLocation": {"artifactLocation": location}}]

    for result in report.results:
        step = result.invocation.step
        if result.status == "error":
            notifications.append(
                {
                    "level": "error",
                    "message": {
                        "text": f"step {step.name} could not run on "
                        f"{result.invocation.label}: {result.reason}"
                    },
                    "locations": locate(result),
                    "descriptor": {"id": "gate/could-not-run"},
                    "properties": {
                        "step": step.name,
                        "pack": step.pack,
                        "kind": _error_type(result),
                    },
                }
            )
            # Also a result, so summary tools that read only results (sarif-tools,
            # code scanning) show it: kind "open" = the tool could not decide pass or
            # fail (SARIF 3.27.9), level "none" as the spec requires for a non-fail kind.
            results.append(
                {
                    "ruleId": COULD_NOT_RUN,
                    "kind": "open",
                    "level": "none",
                    "message": {
                        "text": f"step {step.name} could not run on "
                        f"{result.invocation.label}: {result.reason}"
                    },
                    "locations": locate(result),
                    "properties": {
                        "step": step.name,
                        "pack": step.pack,
                        "kind": _error_type(result),
                        "failsGate": True,
                    },
                }
            )
            could_not_run += 1
            continue
        locations = locate(result)
        for check in result.checks:
            rule_id = f"{step.pack}/{check.id}"
            if rule_id not in rule_index:
                rule_index[rule_id] = len(rules)
                rules.append(_rule(report, step.pack, check.id))
            if check.severity == "pass":
                continue
            message = check.message + _facts(check)
            if result.status == "advisory":
                message += " [advisory step: does not fail the gate]"
            results.append(
                {
                    "ruleId": rule_id,
                    "ruleIndex": rule_index[rule_id],
                    "kind": "fail",
                    "level": SARIF_LEVEL[check.severity],
                    "message": {"text": message},
                    "locations": locations
                    or ([{"message": {"text": check.location}}] if check.location else []),
                    "properties": {
                        "step": step.name,
                        "severity": check.severity,
                        "failsGate": result.status == "fail",
                        "expected": check.expected,
                        "actual": check.actual,
                    },
                }
            )
    if could_not_run:
        rules.append(_could_not_run_rule())
        for item in results:
            if item["ruleId"] == COULD_NOT_RUN:
                item["ruleIndex"] = len(rules) - 1
    counts = report.counts()
    version = _version()
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": version,
                "semanticVersion": version,
                "rules": rules,
                "notifications": [
                    {
                        "id": "gate/could-not-run",
                        "name": "StepCouldNotRun",
                        "shortDescription": {"text": "A gate step could not run."},
                        "fullDescription": {
                            "text": "The pack answered with an error code other than "
                            "artifact_failed, the control plane was unreachable, the input "
                            "was rejected, or no file matched the step's globs. Not a "
                            "finding: the artifact was not judged."
                        },
                        "defaultConfiguration": {"level": "error"},
                    }
                ],
            }
        },
        "invocations": [
            {
                "executionSuccessful": report.exit_code != 2,
                "exitCode": report.exit_code,
                "exitCodeDescription": report.verdict,
                "toolExecutionNotifications": notifications,
                "properties": {
                    "verdict": report.verdict,
                    "stepsCouldNotRun": could_not_run,
                    "counts": counts,
                },
            }
        ],
        "originalUriBaseIds": {BASE_ID: {"uri": report.config.base_dir.as_uri() + "/"}},
        "artifacts": artifacts,
        "results": results,
    }
    return _json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


#: ``ruleId`` of the results (and the notification) for a step that could not run.
COULD_NOT_RUN = "gate/could-not-run"


def _could_not_run_rule() -> dict[str, Any]:
    return {
        "id": COULD_NOT_RUN,
        "name": "StepCouldNotRun",
        "shortDescription": {"text": "A gate step could not run: the artifact was not judged."},
        "fullDescription": {
            "text": "The pack answered with an error code other than artifact_failed, the "
            "control plane was unreachable, the input was rejected, or no file matched the "
            "step's globs. The gate fails (exit 2)."
        },
        "defaultConfiguration": {"level": "none"},
    }


def _rule(report: GateReport, pack: str, check_id: str) -> dict[str, Any]:
    version, summary = report.packs.get(pack, ("", ""))
    about = f"{pack} {version}".strip() + (f": {summary.rstrip('.')}" if summary else "")
    return {
        "id": f"{pack}/{check_id}",
        "name": check_id,
        "shortDescription": {"text": f"{pack} check {check_id!r}"},
        "fullDescription": {
            "text": f"The {check_id!r} check of {about}. A fail finding fails the gate in "
            "strict mode; a warning is reported and fails it only with fail_on = 'warn'."
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {"pack": pack, "check": check_id},
    }


# -- GitHub Actions workflow commands -------------------------------------------------


def _gh_data(text: str) -> str:
    # GitHub's escapes first (a CR or LF stays part of the message), then the rest of the
    # control characters shown escaped: the command is one printable line.
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _gh_file(result: JobResult) -> str | None:
    artifact = result.invocation.artifact
    if artifact is None:
        return None
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        try:
            return Path(artifact.path).relative_to(Path(workspace).resolve()).as_posix()
        except ValueError:
            pass
    return artifact.display


def _gh_command(command: str, message: str, **props: str | None) -> str:
    shown = ",".join(f"{k}={_gh_property(v)}" for k, v in props.items() if v)
    return f"::{command}{' ' + shown if shown else ''}::{_gh_data(message)}"


def render_github(report: GateReport) -> str:
    """``::error``/``::warning`` per finding and per step that could not run, then the
    text summary (plain log lines)."""
    lines: list[str] = []
    for result in report.results:
        step = result.invocation.step
        file = _gh_file(result)
        if result.status == "error":
            lines.append(
                _gh_command(
                    "error",
                    f"{result.invocation.label}: {result.reason}",
                    file=file,
                    title=f"packctl gate: step {step.name} could not run",
                )
            )
            continue
        for check in result.findings:
            suffix = " (advisory step)" if result.status == "advisory" else ""
            lines.append(
                _gh_command(
                    "error" if check.severity == "fail" else "warning",
                    check.message + _facts(check),
                    file=file,
                    title=f"{step.pack}/{check.id}{suffix}",
                )
            )
    return _lines(lines) + render_text(report)


FORMATS: Mapping[str, Callable[[GateReport], str]] = {
    "text": render_text,
    "json": render_json,
    "junit": render_junit,
    "junit-xunit1": render_junit_xunit1,
    "sarif": render_sarif,
    "github": render_github,
}


def render(report: GateReport, fmt: str) -> str:
    """``report`` in format ``fmt`` (a key of :data:`FORMATS`)."""
    return FORMATS[fmt](report)
