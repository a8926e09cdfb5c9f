"""nats-py against a real nats-server (Debian's nats-server) on loopback."""

from __future__ import annotations

import contextlib
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    TO,
    Served,
    family,
    served,
    transport_cases,
)
from corpus_live.servers import Nats, nats

Ctx = Served[Nats]


FAM = family("nats-py", "nats-server 2.9 (Debian nats-server), real", served(nats), half="heldout")


async def _connect(url: str) -> Any:
    import nats as natslib

    async def quiet(exc: Exception) -> None:
        pass

    return await natslib.connect(
        url,
        connect_timeout=1,
        max_reconnect_attempts=1,
        reconnect_time_wait=0.1,
        allow_reconnect=False,
        error_cb=quiet,
    )


def _with(op: Any, user: str = "app", password: str = "app-pw") -> Any:
    async def run_async(ctx: Ctx) -> Any:
        nc = await _connect(ctx.server.url(user, password))
        try:
            return await op(nc)
        finally:
            with contextlib.suppress(Exception):
                await nc.close()

    return run_async


async def _req_no_responders(nc: Any) -> Any:
    return await nc.request("nobody.listens", b"hi", timeout=1)


async def _req_timeout(nc: Any) -> Any:
    await nc.subscribe("slow.svc", cb=lambda msg: None)
    return await nc.request("slow.svc", b"hi", timeout=0.5)


async def _too_big(nc: Any) -> Any:
    await nc.publish("app.x", b"x" * 5000)
    await nc.flush(timeout=1)


async def _denied(nc: Any) -> Any:
    await nc.publish("forbidden.x", b"hi")
    await nc.flush(timeout=1)
    import asyncio

    await asyncio.sleep(0.3)
    if nc.last_error is not None:
        raise nc.last_error
    await nc.flush(timeout=1)


async def _js_no_stream(nc: Any) -> Any:
    return await nc.jetstream(timeout=1).stream_info("ghost")


async def _js_stream_exists(nc: Any) -> Any:
    js = nc.jetstream(timeout=1)
    await js.add_stream(name="orders", subjects=["orders.>"])
    return await js.add_stream(name="orders", subjects=["other.>"])


async def _js_no_consumer(nc: Any) -> Any:
    js = nc.jetstream(timeout=1)
    with contextlib.suppress(Exception):
        await js.add_stream(name="events", subjects=["events.>"])
    return await js.consumer_info("events", "ghost")


async def _kv_no_key(nc: Any) -> Any:
    js = nc.jetstream(timeout=1)
    kv = await js.create_key_value(bucket="cfg")
    return await kv.get("missing")


async def _js_publish_no_stream(nc: Any) -> Any:
    return await nc.jetstream(timeout=1).publish("nostream.subject", b"x")


transport_cases(
    FAM,
    lambda host, port: _connect(f"nats://{host}:{port}"),
    dns_port=4222,
    silent="server never sends INFO",
)
FAM.add(
    "bad_password",
    AUTH,
    "-ERR 'Authorization Violation'",
    lambda c: _connect(c.server.url("app", "nope")),
)
FAM.add(
    "no_credentials",
    AUTH,
    "-ERR 'Authorization Violation' (no user)",
    lambda c: _connect(f"nats://{LOOPBACK}:{c.server.port}"),
)
FAM.add(
    "no_responders",
    NF | NET,
    "no responders on the subject (503 status)",
    _with(_req_no_responders),
)
FAM.add("request_timeout", TO, "a responder that never answers", _with(_req_timeout))
FAM.add("payload_too_big", INT, "payload over max_payload", _with(_too_big))
FAM.add(
    "publish_denied",
    AUTH,
    "-ERR 'Permissions Violation for Publish'",
    _with(_denied, "limited", "limited-pw"),
)
FAM.add("js_no_stream", NF, "JetStream 10059 stream not found", _with(_js_no_stream))
FAM.add(
    "js_stream_exists",
    EXISTS,
    "JetStream 10058 stream name already in use",
    _with(_js_stream_exists),
)
FAM.add("js_no_consumer", NF, "JetStream 10014 consumer not found", _with(_js_no_consumer))
FAM.add("kv_no_key", NF, "key not found in a KV bucket", _with(_kv_no_key))
FAM.add(
    "js_publish_no_stream",
    NF | NET,
    "no stream listens on the subject (503 no responders)",
    _with(_js_publish_no_stream),
)
