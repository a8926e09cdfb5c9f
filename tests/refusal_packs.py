"""A plugin with one pack and a ``request_refused`` observer, for tests that load it by
module name (``--plugin refusal_packs``) or as an object: ``SEEN`` lists the refusals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from control_plane import Context, Pack, Reach, error_schema, hookimpl

if TYPE_CHECKING:
    from control_plane._kernel.error_event import ErrorEvent

#: ``(reason, pack)`` of each refusal the hook was told of, in order.
SEEN: list[tuple[str, str]] = []

_INPUT = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "path": {"type": "string"}},
    "additionalProperties": False,
}
_OUTPUT = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "error": error_schema(["internal_error"])},
}


def _echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"n": doc.get("n", 0)}


@hookimpl
def register_packs(register: Any) -> None:
    register(
        Pack(
            name="refusal.echo",
            version="1.0.0",
            input_schema=_INPUT,
            output_schema=_OUTPUT,
            handler=_echo,
            summary="Echoes n.",
            reach=Reach(),  # reaches nothing: runs in-process under any default
        )
    )


@hookimpl
def request_refused(event: ErrorEvent) -> None:
    SEEN.append((event.code, event.pack))
