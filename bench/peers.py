"""The alternatives a user would pick instead of the control plane, as bench servers.

``python -m bench.peers servicer --port N --validator jsonschema|jsonschema_rs``
    A hand-written ``grpc.aio`` servicer of ``control_plane.v1.ControlPlaneService/InvokePack``
    running the same four bench pack handlers: the input decoded with ``orjson`` and
    validated against the same input schema, the handler awaited, the output validated
    against the same output schema, the result sent as ``orjson`` bytes. Failures: a
    ``ConnectionError`` ends ``UNAVAILABLE`` with the exception's text, a ``fail`` check under
    ``strict`` ``FAILED_PRECONDITION`` naming the check, anything else ``INTERNAL`` with a
    fixed text. No closed set, no classification chain, no scrubbing, no rich status, no
    events, no incident store, no metrics: what "just write the servicer" costs.

``python -m bench.peers mcp --transport http --port N`` / ``--transport stdio``
    The official MCP SDK's server (``mcp.server.mcpserver.MCPServer``) with the same no-op
    tool (``bench_noop``: returns the document it was given, structured output), over
    streamable HTTP (uvicorn, the SDK's defaults) or stdio.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import orjson

from bench import packs
from control_plane._kernel.pack import Result
from control_plane.v1 import control_plane_pb2 as pb

__all__ = ["MCP_TOOL", "main", "mcp_server"]

SERVICE = "control_plane.v1.ControlPlaneService"
MCP_TOOL = "bench_noop"

Handler = Callable[[dict[str, Any], Any], Awaitable[Any]]
_HANDLERS: dict[str, tuple[Handler, bool]] = {
    "bench.noop": (packs.noop, False),
    "bench.error": (packs.refused, False),
    "bench.strict": (packs.strict_checks, True),
    "bench.internal": (packs.unclassified, False),
}


def _validators(kind: str) -> tuple[Callable[[Any], None], Callable[[Any], None], Any]:
    """(validate input, validate output, validate output with validation) for ``kind``."""
    schemas = (
        packs._INPUT_SCHEMA,
        packs._output_schema(packs._CODES),
        packs._output_schema(packs._CODES, validation=True),
    )
    if kind == "jsonschema":
        import jsonschema

        compiled = [jsonschema.Draft202012Validator(s) for s in schemas]
    else:
        import jsonschema_rs

        compiled = [jsonschema_rs.validator_for(s) for s in schemas]  # type: ignore[misc]
    return compiled[0].validate, compiled[1].validate, compiled[2].validate


def servicer_handler(kind: str) -> grpc.GenericRpcHandler:
    """The generic handler of ``InvokePack`` validating with ``kind``."""
    check_in, check_out, check_out_v = _validators(kind)

    async def invoke(request: pb.InvokePackRequest, context: Any) -> pb.InvokePackResponse:
        found = _HANDLERS.get(request.pack)
        if found is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"unknown pack {request.pack}")
        handler, validates = found  # type: ignore[misc]
        try:
            doc = orjson.loads(request.input or b"{}")
            check_in(doc)
        except Exception as exc:  # noqa: BLE001 - the servicer's input boundary
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        try:
            value = await handler(doc, None)
        except ConnectionError as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except Exception:  # noqa: BLE001 - the servicer's handler boundary
            await context.abort(grpc.StatusCode.INTERNAL, "internal error")
        if isinstance(value, Result):
            checks = value.checks
            data = dict(value.output)
            data["validation"] = {
                "status": "fail",
                "checks": [{"id": c.id, "severity": c.severity} for c in checks],
            }
            check_out_v(data)
            failing = [c.id for c in checks if c.severity == "fail"]
            if request.strict and failing:
                await context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION, "failing checks: " + ", ".join(failing)
                )
        else:
            data = value
            (check_out_v if validates else check_out)(data)
        return pb.InvokePackResponse(
            result=orjson.dumps(data),
            pack=request.pack,
            pack_version="1.0.0",
            request_id=request.request_id,
        )

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "InvokePack": grpc.unary_unary_rpc_method_handler(
                invoke,
                request_deserializer=pb.InvokePackRequest.FromString,
                response_serializer=pb.InvokePackResponse.SerializeToString,
            )
        },
    )


async def serve_servicer(port: int, kind: str) -> None:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((servicer_handler(kind),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def mcp_server() -> Any:
    """The MCP SDK's server with the no-op tool."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench", log_level="WARNING")

    @server.tool(name=MCP_TOOL, description="No-op: returns its input.")
    async def bench_noop(document: dict[str, Any]) -> dict[str, Any]:
        return document

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description="peer servers for python -m bench")
    sub = parser.add_subparsers(dest="kind", required=True)
    s = sub.add_parser("servicer")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--validator", choices=("jsonschema", "jsonschema_rs"), required=True)
    m = sub.add_parser("mcp")
    m.add_argument("--transport", choices=("http", "stdio"), required=True)
    m.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.kind == "servicer":
        asyncio.run(serve_servicer(args.port, args.validator))
    elif args.transport == "http":
        _run_http(args.port)
    else:
        mcp_server().run("stdio")


def _run_http(port: int) -> None:
    # The SDK's defaults, except that uvicorn's per-request access log is off (the
    # control plane does not log successful calls either).
    mcp_server().run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
