"""Packs for the gate's adversarial tests (tests/test_gate_adversarial.py).

Loaded with ``--plugin gatepacks`` (this directory is on ``PYTHONPATH``):

* ``gate.echo`` reports the checks its input lists (``checks: [{id, severity, message,
  expected?, actual?}]``) as validation findings, whatever they hold: control
  characters, ``]]>``, workflow commands, secrets, megabytes;
* ``gate.raw`` returns its input's ``output`` as its output, as is (a ``validation``
  field a careless pack wrote by hand);
* ``gate.sleep`` touches the file ``started`` names, sleeps ``seconds``, then passes (a
  server that stalls mid-gate).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from control_plane import Check, Context, Pack, Reach, Result, hookimpl

INPUT: dict[str, Any] = {"type": "object"}
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["not_found"]}, "message": {"type": "string"}},
            "required": ["code"],
        },
        "ok": {"type": "boolean"},
        "validation": {"type": "object"},
    },
}


def echo(doc: dict[str, Any], ctx: Context) -> Result:
    checks = [
        Check(
            str(c["id"]),
            c["severity"],
            str(c["message"]) * int(c.get("repeat", 1)),
            expected=c.get("expected"),
            actual=c.get("actual"),
        )
        for c in doc.get("checks", [])
    ]
    return Result({"ok": True}, checks)


def raw(doc: dict[str, Any], ctx: Context) -> Any:
    return doc.get("output", {"ok": True})


def sleep(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    if doc.get("started"):  # tell the test the call is under way
        Path(doc["started"]).touch()
    time.sleep(float(doc.get("seconds", 0)))
    return {"ok": True}


def _pack(name: str, handler: Any) -> Pack:
    return Pack(
        name=name,
        version="1.0.0",
        summary=f"gate test pack {name}",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=handler,
        reach=Reach(),
    )


@hookimpl
def register_packs(register: Any) -> None:
    register(_pack("gate.echo", echo))
    register(_pack("gate.raw", raw))
    register(_pack("gate.sleep", sleep))
