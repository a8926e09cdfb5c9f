"""The SDK corpus: the libraries real packs call, failing for real on loopback.

Each case makes one real library or tool fail once -- OpenAI and Anthropic SDKs against a
fake API, boto3 against a fake S3/DynamoDB, psycopg 3 and SQLAlchemy against a temporary
PostgreSQL, redis-py against a temporary Redis and fake RESP servers, paramiko, scp and
rsync against a local sshd, websocket-client, urllib3, and the stderr of docker, kubectl,
psql, npm and pip run against fake daemons, registries and indexes -- and names the codes
that are right. :data:`HELD_OUT` families (pymongo, google-api-core) were written after the
extractor was done, and are scored apart (``tests/test_sdk_corpus.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from failure_corpus.cases import AUTH, INT, NET, NF, RL, TO, Case
from failure_corpus.sdk_servers import (
    LOOPBACK,
    UNRESOLVABLE_HOST,
    SdkEndpoints,
    reply,
)

QUOTA = frozenset({"quota_exhausted"})
T = 0.5  # the timeout of cases that provoke one (seconds)

#: Families written after the extractor was done (the generalization check).
HELD_OUT = frozenset({"pymongo", "google-api-core"})

CASES: list[Case] = []


def case(
    family: str,
    id: str,
    expect: frozenset[str],
    reason: str,
    run: Callable[[SdkEndpoints], Any],
    *,
    retry_after: float | None = None,
) -> None:
    CASES.append(Case(f"{family}:{id}", family, expect, reason, run, retry_after))  # type: ignore[arg-type]


# -- LLM SDKs (OpenAI, Anthropic: httpx2 underneath) -----------------------------------


def _openai(name: str, call: str = "chat") -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import openai

        client = openai.OpenAI(
            base_url=ep.url(name, "/v1"), api_key="sk-PLANTED", max_retries=0, timeout=T * 4
        )
        if call == "chat":
            return client.chat.completions.create(
                model="gpt-x", messages=[{"role": "user", "content": "hi"}]
            )
        if call == "embed":
            return client.embeddings.create(model="emb-x", input="hi")
        return client.models.retrieve("gpt-x")

    return run


def _openai_at(url: Callable[[SdkEndpoints], str]) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import openai

        client = openai.OpenAI(base_url=url(ep), api_key="sk-PLANTED", max_retries=0, timeout=T)
        return client.models.list()

    return run


def _oai_body(type_: str, code: str | None, message: str = "failed") -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


_OPENAI = [
    # name, status, body, headers, expect, retry_after, reason
    ("401", 401, _oai_body("invalid_request_error", "invalid_api_key"), {}, AUTH, None, "bad key"),
    ("403", 403, _oai_body("permission_error", None), {}, AUTH, None, "region not allowed"),
    ("404", 404, _oai_body("invalid_request_error", "model_not_found"), {}, NF, None, "no model"),
    ("408", 408, _oai_body("timeout", None), {}, TO, None, "request timeout"),
    (
        "429_ms",
        429,
        _oai_body("requests", "rate_limit_exceeded"),
        {"retry-after-ms": "7500"},
        RL,
        7.5,
        "throttled, delay in ms",
    ),
    (
        "429_s",
        429,
        _oai_body("tokens", "rate_limit_exceeded"),
        {"retry-after": "9"},
        RL,
        9.0,
        "throttled, delay in seconds",
    ),
    (
        "429_reset",
        429,
        _oai_body("requests", "rate_limit_exceeded"),
        {"x-ratelimit-reset-requests": "12s"},
        RL,
        12.0,
        "throttled, only the reset header",
    ),
    (
        "429_reset_m",
        429,
        _oai_body("tokens", "rate_limit_exceeded"),
        {"x-ratelimit-reset-tokens": "1m30s"},
        RL,
        90.0,
        "throttled, reset in minutes",
    ),
    ("429_bare", 429, _oai_body("requests", None), {}, RL, None, "throttled, no delay"),
    (
        "429_quota",
        429,
        _oai_body("insufficient_quota", "insufficient_quota", "You exceeded your current quota"),
        {},
        QUOTA,
        None,
        "quota exhausted: not throttling",
    ),
    ("500", 500, _oai_body("server_error", None), {}, NET, None, "server error"),
    ("502", 502, "<html>bad gateway</html>", {}, NET, None, "gateway"),
    ("503", 503, _oai_body("server_error", None), {}, NET, None, "overloaded"),
    (
        "503_ra",
        503,
        _oai_body("server_error", None),
        {"Retry-After": "30"},
        RL,
        30.0,
        "unavailable, come back in 30 s",
    ),
    ("504", 504, "", {}, TO, None, "gateway timeout"),
]

for _name, _status, _body, _headers, _expect, _ra, _why in _OPENAI:
    for _call in ("chat", "embed", "model"):
        _key = reply(f"oai-{_name}", _status, _body, _headers)
        case(
            "openai",
            f"{_call}_{_name}",
            _expect,
            f"OpenAI {_call} {_status}: {_why}",
            _openai(_key, _call),
            retry_after=_ra,
        )

_TRANSPORT: list[tuple[str, Callable[[SdkEndpoints], str], frozenset[str], str]] = [
    ("refused", lambda ep: f"http://{LOOPBACK}:{ep.closed}/v1", NET, "nothing listens"),
    ("dns", lambda ep: f"http://{UNRESOLVABLE_HOST}/v1", NET, "the host does not resolve"),
    ("silent", lambda ep: f"http://{LOOPBACK}:{ep.silent}/v1", TO, "the server never answers"),
    ("dropped", lambda ep: f"http://{LOOPBACK}:{ep.close_now}/v1", NET, "closed at once"),
    ("garbage", lambda ep: f"http://{LOOPBACK}:{ep.garbage}/v1", NET, "not HTTP"),
    ("truncated", lambda ep: f"http://{LOOPBACK}:{ep.truncated}/v1", NET, "the reply is cut"),
]
for _name, _url, _expect, _why in _TRANSPORT:
    case("openai", f"transport_{_name}", _expect, _why, _openai_at(_url))


def _anthropic(name: str, stream: bool = False) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import anthropic

        client = anthropic.Anthropic(
            base_url=ep.url(name), api_key="sk-ant-PLANTED", max_retries=0, timeout=T * 4
        )
        kwargs: dict[str, Any] = {
            "model": "claude-x",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
        }
        if stream:
            with client.messages.stream(**kwargs) as events:
                return list(events)
        return client.messages.create(**kwargs)

    return run


def _anthropic_at(url: Callable[[SdkEndpoints], str]) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import anthropic

        client = anthropic.Anthropic(base_url=url(ep), api_key="k", max_retries=0, timeout=T)
        return client.models.list()

    return run


def _ant_body(type_: str, message: str = "failed") -> dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}}


_ANTHROPIC = [
    ("401", 401, "authentication_error", {}, AUTH, None, "bad key"),
    ("403", 403, "permission_error", {}, AUTH, None, "key lacks permission"),
    ("404", 404, "not_found_error", {}, NF, None, "no such model"),
    ("402", 402, "billing_error", {}, QUOTA, None, "billing: no retry fixes it"),
    ("429_s", 429, "rate_limit_error", {"retry-after": "11"}, RL, 11.0, "throttled"),
    ("429_ms", 429, "rate_limit_error", {"retry-after-ms": "2500"}, RL, 2.5, "throttled (ms)"),
    ("429_bare", 429, "rate_limit_error", {}, RL, None, "throttled, no delay"),
    ("500", 500, "api_error", {}, NET, None, "internal error"),
    ("529", 529, "overloaded_error", {}, NET | RL, None, "overloaded"),
    ("503_ra", 503, "api_error", {"retry-after": "20"}, RL, 20.0, "unavailable for 20 s"),
    ("504", 504, "timeout_error", {}, TO, None, "timeout"),
]
for _name, _status, _type, _headers, _expect, _ra, _why in _ANTHROPIC:
    for _stream in (False, True):
        _key = reply(f"ant-{_name}", _status, _ant_body(_type), _headers)
        case(
            "anthropic",
            f"{'stream' if _stream else 'create'}_{_name}",
            _expect,
            f"Anthropic {_status} {_type}: {_why}",
            _anthropic(_key, _stream),
            retry_after=_ra,
        )
case(
    "anthropic",
    "credit_too_low",
    QUOTA,
    "400 whose message says the credit balance is too low",
    _anthropic(
        reply(
            "ant-credit",
            400,
            _ant_body(
                "invalid_request_error",
                "Your credit balance is too low to access the Anthropic API.",
            ),
        )
    ),
)
for _name, _url, _expect, _why in _TRANSPORT:
    case("anthropic", f"transport_{_name}", _expect, _why, _anthropic_at(_url))


# -- AWS (boto3/botocore against a fake S3 and DynamoDB) ----------------------------------


def _boto(ep: SdkEndpoints, service: str, url: str | None = None) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        service,
        endpoint_url=url or f"http://{LOOPBACK}:{ep.http}",
        region_name="us-east-1",
        aws_access_key_id="AKIDPLANTED",
        aws_secret_access_key="secret-PLANTED",
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            s3={"addressing_style": "path"},
            connect_timeout=T,
            read_timeout=T,
        ),
    )


def _s3_xml(code: str, message: str = "failed") -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        "<RequestId>R1</RequestId></Error>"
    )


def _s3(name: str, op: str) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        client = _boto(ep, "s3")
        if op == "get":
            return client.get_object(Bucket=name, Key="k")
        if op == "head":
            return client.head_object(Bucket=name, Key="k")
        if op == "put":
            return client.put_object(Bucket=name, Key="k", Body=b"x")
        return client.list_objects_v2(Bucket=name)

    return run


_S3 = [
    ("NoSuchKey", 404, {}, NF, None),
    ("NoSuchBucket", 404, {}, NF, None),
    ("AccessDenied", 403, {}, AUTH, None),
    ("InvalidAccessKeyId", 403, {}, AUTH, None),
    ("SignatureDoesNotMatch", 403, {}, AUTH, None),
    ("ExpiredToken", 400, {}, AUTH, None),
    ("SlowDown", 503, {}, RL, None),
    ("SlowDown_ra", 503, {"Retry-After": "6"}, RL, 6.0),
    ("ServiceUnavailable", 503, {}, NET, None),
    ("InternalError", 500, {}, NET, None),
    ("RequestTimeout", 400, {}, TO, None),
    ("TooManyRequests", 429, {"Retry-After": "8"}, RL, 8.0),
]
for _code, _status, _headers, _expect, _ra in _S3:
    _bucket = reply(
        f"s3-{_code.lower().replace('_', '-')}",
        _status,
        _s3_xml(_code.split("_")[0]),
        _headers,
        "application/xml",
    )
    for _op in ("get", "put", "list"):
        case(
            "boto3",
            f"s3_{_op}_{_code}",
            _expect,
            f"S3 {_op} answers {_status} {_code}",
            _s3(_bucket, _op),
            retry_after=_ra,
        )
for _status, _expect in ((404, NF), (403, AUTH), (500, NET)):
    _bucket = reply(f"s3-head-{_status}", _status, b"", {}, "application/xml")
    case("boto3", f"s3_head_{_status}", _expect, f"HEAD {_status}: no body", _s3(_bucket, "head"))


def _ddb(name: str) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        client = _boto(ep, "dynamodb", ep.url(name))
        return client.get_item(TableName="t", Key={"id": {"S": "1"}})

    return run


_DDB = [
    ("ProvisionedThroughputExceededException", 400, RL),
    ("ThrottlingException", 400, RL),
    ("RequestLimitExceeded", 400, RL),
    ("ResourceNotFoundException", 400, NF),
    ("AccessDeniedException", 400, AUTH),
    ("UnrecognizedClientException", 400, AUTH),
    ("ExpiredTokenException", 400, AUTH),
    ("InternalServerError", 500, NET),
    ("ServiceUnavailable", 503, NET),
]
for _code, _status, _expect in _DDB:
    _key = reply(
        f"ddb-{_code.lower()}",
        _status,
        {"__type": f"com.amazonaws.dynamodb.v20120810#{_code}", "message": "failed"},
        {},
        "application/x-amz-json-1.0",
    )
    case("boto3", f"dynamodb_{_code}", _expect, f"DynamoDB {_status} {_code}", _ddb(_key))
case(
    "boto3",
    "dynamodb_quota",
    QUOTA,
    "a service quota is exhausted",
    _ddb(
        reply(
            "ddb-quota",
            400,
            {"__type": "ServiceQuotaExceededException", "message": "quota"},
            {},
            "application/x-amz-json-1.0",
        )
    ),
)


def _s3_at(url: Callable[[SdkEndpoints], str]) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        return _boto(ep, "s3", url(ep)).list_buckets()

    return run


# (no DNS case: botocore refuses the over-long unresolvable name as an invalid endpoint)
for _name, _url, _expect, _why in _TRANSPORT:
    if _name != "dns":
        case("boto3", f"transport_{_name}", _expect, _why, _s3_at(lambda ep, u=_url: u(ep)[:-3]))


# -- PostgreSQL: psycopg 3 and SQLAlchemy over it --------------------------------------------


def _pg(
    dsn: Callable[[SdkEndpoints], str], sql: str | None = None
) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import psycopg

        with psycopg.connect(dsn(ep), autocommit=True) as conn:
            if sql is not None:
                for statement in sql.split(";"):
                    if statement.strip():
                        conn.execute(statement)

    return run


def _pg_setup(ep: SdkEndpoints) -> None:
    import psycopg

    with psycopg.connect(ep.pg.dsn(), autocommit=True) as conn:
        if conn.execute("select 1 from pg_roles where rolname='limited'").fetchone():
            return
        conn.execute("create table secret_t(x int)")
        conn.execute("create table lock_t(x int)")
        conn.execute("create role limited login password 'limited-pw'")
        conn.execute("create role single login password 'single-pw' connection limit 1")


def _pg_as(user: str, password: str, sql: str) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        _pg_setup(ep)
        return _pg(lambda e: e.pg.dsn(user=user, password=password), sql)(ep)

    return run


def _pg_locked(ep: SdkEndpoints) -> Any:
    import psycopg

    _pg_setup(ep)
    with psycopg.connect(ep.pg.dsn()) as holder:
        holder.execute("lock table lock_t in access exclusive mode")
        with psycopg.connect(ep.pg.dsn(), autocommit=True) as conn:
            conn.execute("set lock_timeout = 100")
            conn.execute("select * from lock_t")


def _pg_terminated(ep: SdkEndpoints) -> Any:
    import psycopg

    with psycopg.connect(ep.pg.dsn(), autocommit=True) as victim:
        pid = victim.info.backend_pid
        with psycopg.connect(ep.pg.dsn(), autocommit=True) as admin:
            admin.execute("select pg_terminate_backend(%s)", (pid,))
        time.sleep(0.2)
        victim.execute("select 1")


def _pg_single(ep: SdkEndpoints) -> Any:
    import psycopg

    _pg_setup(ep)
    dsn = ep.pg.dsn(user="single", password="single-pw")
    with psycopg.connect(dsn), psycopg.connect(dsn):
        pass


_PG: list[tuple[str, frozenset[str], str, Callable[[SdkEndpoints], Any]]] = [
    (
        "wrong_password",
        AUTH,
        "password authentication failed",
        _pg(lambda ep: ep.pg.dsn(password="nope")),
    ),
    ("unknown_role", AUTH, "no such role", _pg(lambda ep: ep.pg.dsn(user="ghost", password="x"))),
    ("no_database", NF, "no such database", _pg(lambda ep: ep.pg.dsn(dbname="ghostdb"))),
    ("refused", NET, "nothing listens", _pg(lambda ep: ep.pg.dsn(port=ep.closed))),
    ("dns", NET, "host does not resolve", _pg(lambda ep: ep.pg.dsn(host=UNRESOLVABLE_HOST))),
    (
        "silent",
        TO,
        "server never answers",
        _pg(lambda ep: ep.pg.dsn(port=ep.silent, connect_timeout=1)),
    ),
    ("dropped", NET, "closed at once", _pg(lambda ep: ep.pg.dsn(port=ep.close_now))),
    (
        "no_socket",
        NET,
        "no server on that Unix socket",
        _pg(lambda ep: ep.pg.dsn(host=str(ep.tmp / "nope"))),
    ),
    (
        "statement_timeout",
        TO,
        "57014 statement timeout",
        _pg(lambda ep: ep.pg.dsn(), "set statement_timeout = 100; select pg_sleep(3)"),
    ),
    ("lock_timeout", TO, "55P03 lock not available", _pg_locked),
    (
        "privilege",
        AUTH,
        "42501 permission denied",
        _pg_as("limited", "limited-pw", "select * from secret_t"),
    ),
    ("no_table", NF, "42P01 undefined table", _pg(lambda ep: ep.pg.dsn(), "select * from ghost_t")),
    (
        "no_schema",
        NF,
        "3F000 no such schema",
        _pg(lambda ep: ep.pg.dsn(), "create table ghost_s.t(x int)"),
    ),
    ("terminated", NET, "57P01 admin shutdown", _pg_terminated),
    # the role's own limit, not the server's: rate_limited is as defensible as a busy server
    # (heldout2's asyncpg accepts both; three blind authors since chose the caller's limit)
    ("role_limit", NET | RL, "53300 too many connections for the role", _pg_single),
]
for _name, _expect, _why, _run in _PG:
    case("psycopg", _name, _expect, _why, _run)


def _sa(
    url: Callable[[SdkEndpoints], str], sql: str = "select 1", **kw: Any
) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import sqlalchemy

        _pg_setup(ep)
        engine = sqlalchemy.create_engine(url(ep), poolclass=sqlalchemy.pool.NullPool, **kw)
        try:
            with engine.connect() as conn:
                for statement in sql.split(";"):
                    if statement.strip():
                        conn.execute(sqlalchemy.text(statement))
        finally:
            engine.dispose()

    return run


_SA: list[tuple[str, frozenset[str], str, Callable[[SdkEndpoints], Any]]] = [
    (
        "wrong_password",
        AUTH,
        "password authentication failed",
        _sa(lambda ep: ep.pg.url(password="nope")),
    ),
    ("unknown_role", AUTH, "no such role", _sa(lambda ep: ep.pg.url(user="ghost"))),
    ("no_database", NF, "no such database", _sa(lambda ep: ep.pg.url(db="ghostdb"))),
    (
        "refused",
        NET,
        "nothing listens",
        _sa(lambda ep: f"postgresql+psycopg://u:p@{LOOPBACK}:{ep.closed}/db"),
    ),
    (
        "silent",
        TO,
        "server never answers",
        _sa(
            lambda ep: f"postgresql+psycopg://u:p@{LOOPBACK}:{ep.silent}/db",
            connect_args={"connect_timeout": 1},
        ),
    ),
    (
        "statement_timeout",
        TO,
        "57014",
        _sa(lambda ep: ep.pg.url(), "set statement_timeout = 100; select pg_sleep(3)"),
    ),
    (
        "privilege",
        AUTH,
        "42501",
        _sa(lambda ep: ep.pg.url("limited", "limited-pw"), "select * from secret_t"),
    ),
    ("no_table", NF, "42P01", _sa(lambda ep: ep.pg.url(), "select * from ghost_t")),
]
for _name, _expect, _why, _run in _SA:
    case("sqlalchemy", _name, _expect, f"SQLAlchemy over psycopg: {_why}", _run)


# -- Redis --------------------------------------------------------------------------------


def _redis(
    port: Callable[[SdkEndpoints], int],
    password: str | None = None,
    username: str | None = None,
    command: str = "get",
    host: str = LOOPBACK,
) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import redis

        client = redis.Redis(
            host=host,
            port=port(ep),
            password=password,
            username=username,
            socket_timeout=T,
            socket_connect_timeout=T * 2,
            retry_on_timeout=False,
            retry=None,
        )
        try:
            return client.set("k", "v") if command == "set" else client.get("k")
        finally:
            client.close()

    return run


def _aredis(
    port: Callable[[SdkEndpoints], int], password: str | None = None
) -> Callable[[SdkEndpoints], Any]:
    async def run(ep: SdkEndpoints) -> Any:
        import redis.asyncio

        client = redis.asyncio.Redis(
            host=LOOPBACK, port=port(ep), password=password, socket_timeout=T, retry=None
        )
        try:
            return await client.get("k")
        finally:
            await client.aclose()

    return run


_REDIS: list[tuple[str, frozenset[str], str, Callable[[SdkEndpoints], Any]]] = [
    ("wrong_password", AUTH, "WRONGPASS", _redis(lambda ep: ep.redis, password="nope")),
    ("no_password", AUTH, "NOAUTH", _redis(lambda ep: ep.redis)),
    (
        "no_permission",
        AUTH,
        "NOPERM: the user may not SET",
        _redis(lambda ep: ep.redis, "reader-pw", "reader", "set"),
    ),
    ("unknown_user", AUTH, "no such ACL user", _redis(lambda ep: ep.redis, "x", "ghost")),
    ("refused", NET, "nothing listens", _redis(lambda ep: ep.closed)),
    ("dns", NET, "host does not resolve", _redis(lambda ep: 6379, host=UNRESOLVABLE_HOST)),
    ("silent", TO, "server never answers", _redis(lambda ep: ep.silent)),
    ("dropped", NET, "closed at once", _redis(lambda ep: ep.close_now)),
    # the garbage listener waits for the end of an HTTP request, which RESP never sends
    ("garbage", TO, "no reply to a RESP command", _redis(lambda ep: ep.garbage)),
]
for _name in ("loading", "busy", "masterdown", "tryagain", "clusterdown", "maxclients"):
    _REDIS.append(
        (
            f"fake_{_name}",
            NET,
            f"the server answers {_name.upper()}",
            _redis(lambda ep, n=_name: ep.resp[n]),
        )
    )
for _name in ("noauth", "wrongpass"):
    _REDIS.append(
        (
            f"fake_{_name}",
            AUTH,
            f"the server answers {_name.upper()}",
            _redis(lambda ep, n=_name: ep.resp[n]),
        )
    )
for _name, _expect, _why, _run in _REDIS:
    case("redis", _name, _expect, _why, _run)
for _name, _expect, _port, _pw in (
    ("async_wrong_password", AUTH, lambda ep: ep.redis, "nope"),
    ("async_refused", NET, lambda ep: ep.closed, None),
    ("async_silent", TO, lambda ep: ep.silent, None),
    ("async_loading", NET, lambda ep: ep.resp["loading"], None),
):
    case("redis", _name, _expect, "redis.asyncio", _aredis(_port, _pw))


# -- SSH: paramiko ------------------------------------------------------------------------


def _paramiko(
    port: Callable[[SdkEndpoints], int | None], how: str = "password", host: str = LOOPBACK
) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import paramiko

        chosen = port(ep)
        if chosen is None:
            raise AssertionError("sshd is not available (tests must run as root)")
        client = paramiko.SSHClient()
        if how == "reject":
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        kwargs: dict[str, Any] = {
            "timeout": T * 2,
            "banner_timeout": T * 2,
            "auth_timeout": 5,
            "allow_agent": False,
            "look_for_keys": False,
        }
        if how == "key":
            kwargs["pkey"] = paramiko.Ed25519Key.from_private_key_file(str(_client_key(ep)))
        elif how in {"password", "reject"}:
            kwargs["password"] = "wrong-PLANTED"
        try:
            client.connect(host, port=chosen, username="root", **kwargs)
        finally:
            client.close()

    return run


def _client_key(ep: SdkEndpoints) -> Any:
    key = ep.tmp / "client_key"
    if not key.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=30
        )
    return key


for _name, _expect, _why, _run in (
    ("wrong_password", AUTH, "password rejected", _paramiko(lambda ep: ep.sshd)),
    ("key_rejected", AUTH, "key not authorized", _paramiko(lambda ep: ep.sshd, "key")),
    ("no_credentials", AUTH, "no method offered", _paramiko(lambda ep: ep.sshd, "none")),
    (
        "unknown_host_key",
        AUTH,
        "host key not known (RejectPolicy)",
        _paramiko(lambda ep: ep.sshd, "reject"),
    ),
    ("refused", NET, "nothing listens (NoValidConnectionsError)", _paramiko(lambda ep: ep.closed)),
    ("dns", NET, "host does not resolve", _paramiko(lambda ep: 22, host=UNRESOLVABLE_HOST)),
    ("silent", TO | NET, "no banner in time", _paramiko(lambda ep: ep.silent)),
    ("dropped", NET, "closed before the banner", _paramiko(lambda ep: ep.close_now)),
    ("garbage", NET, "not SSH", _paramiko(lambda ep: ep.garbage)),
):
    case("paramiko", _name, _expect, _why, _run)


# -- websocket-client -----------------------------------------------------------------------


def _ws(url: Callable[[SdkEndpoints], str]) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import websocket

        conn = websocket.create_connection(url(ep), timeout=T)
        conn.close()

    return run


for _status, _headers, _expect, _ra in (
    (401, {}, AUTH, None),
    (403, {}, AUTH, None),
    (404, {}, NF, None),
    (429, {"Retry-After": "7"}, RL, 7.0),
    (429, {}, RL, None),
    (500, {}, NET, None),
    (502, {}, NET, None),
    (503, {"Retry-After": "4"}, RL, 4.0),
    (504, {}, TO, None),
):
    _key = reply(f"ws-{_status}-{len(_headers)}", _status, {"error": "no"}, _headers)
    case(
        "websocket-client",
        f"handshake_{_status}{'_ra' if _headers else ''}",
        _expect,
        f"the upgrade answered {_status}",
        _ws(lambda ep, k=_key: f"ws://{LOOPBACK}:{ep.http}/{k}"),
        retry_after=_ra,
    )
for _name, _port, _expect in (
    ("refused", "closed", NET),
    ("silent", "silent", TO),
    ("dropped", "close_now", NET),
    ("garbage", "garbage", NET | INT),
):
    case(
        "websocket-client",
        _name,
        _expect,
        f"transport: {_name}",
        _ws(lambda ep, p=_port: f"ws://{LOOPBACK}:{getattr(ep, p)}/"),
    )
case(
    "websocket-client",
    "dns",
    NET,
    "host does not resolve",
    _ws(lambda ep: f"ws://{UNRESOLVABLE_HOST}/"),
)


# -- urllib3 directly ---------------------------------------------------------------------


def _urllib3(
    url: Callable[[SdkEndpoints], str], retries: Any = False
) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import urllib3

        pool = urllib3.PoolManager(retries=retries, timeout=urllib3.Timeout(connect=T, read=T))
        try:
            return pool.request("GET", url(ep))
        finally:
            pool.clear()

    return run


def _status_retry() -> Any:
    import urllib3

    return urllib3.Retry(
        total=1,
        status_forcelist=[429, 500, 502, 503, 504],
        backoff_factor=0,
        respect_retry_after_header=False,
        raise_on_status=True,
    )


for _name, _url, _expect, _why in _TRANSPORT:
    case("urllib3", _name, _expect, _why, _urllib3(_url))
for _status, _expect in ((429, RL), (500, NET), (502, NET), (503, NET), (504, TO)):
    _key = reply(f"u3-{_status}", _status, "no")
    case(
        "urllib3",
        f"retries_{_status}",
        _expect,
        f"Retry ran out on {_status}",
        lambda ep, k=_key: _urllib3(lambda e: e.url(k), _status_retry())(ep),
    )


# -- stderr of command-line tools ------------------------------------------------------------


def _tool(
    argv: Callable[[SdkEndpoints], list[str]],
    env: Callable[[SdkEndpoints], dict[str, str]] | None = None,
    timeout: float = 60,
) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        words = argv(ep)
        if shutil.which(words[0]) is None and not os.path.isabs(words[0]):
            raise AssertionError(f"{words[0]} is not installed: run scripts/setup --dev")
        extra = {"LC_ALL": "C", "HOME": str(ep.tmp), "NO_COLOR": "1"}
        if env is not None:
            extra.update(env(ep))
        subprocess.run(
            words,
            check=True,
            capture_output=True,
            timeout=timeout,
            env={**os.environ, **extra},
            stdin=subprocess.DEVNULL,
        )

    return run


def _docker(args: list[str], host: Callable[[SdkEndpoints], str]) -> Callable[[SdkEndpoints], Any]:
    return _tool(lambda ep: ["docker", *args], lambda ep: {"DOCKER_HOST": host(ep)})


_FAKE_DAEMON = lambda ep: f"tcp://{LOOPBACK}:{ep.http}"  # noqa: E731
case(
    "docker",
    "no_daemon_tcp",
    NET,
    "nothing listens at DOCKER_HOST",
    _docker(["ps"], lambda ep: f"tcp://{LOOPBACK}:{ep.closed}"),
)
case(
    "docker",
    "no_daemon_unix",
    NET,
    "no daemon socket",
    _docker(["ps"], lambda ep: f"unix://{ep.tmp}/docker.sock"),
)
for _name, _status, _message, _expect in (
    ("no_container", 404, "No such container: {n}", NF),
    ("no_image", 404, "No such image: {n}:latest", NF),
    ("unauthorized", 401, "unauthorized: authentication required", AUTH),
    (
        "pull_denied",
        403,
        "pull access denied for {n}, repository does not exist or may require 'docker login'",
        AUTH,
    ),
    ("rate", 429, "toomanyrequests: You have reached your pull rate limit.", RL),
    ("manifest", 404, "manifest for {n}:latest not found: manifest unknown: manifest unknown", NF),
):
    _key = reply(f"dk-{_name}", _status, {"message": _message.format(n=f"dk-{_name}")})
    for _args in (["rm", _key], ["image", "inspect", _key]):
        case(
            "docker",
            f"{_args[0]}_{_name}",
            _expect,
            f"the daemon answers {_status}",
            _docker(_args, _FAKE_DAEMON),
        )


def _kubectl(server: Callable[[SdkEndpoints], str], *extra: str) -> Callable[[SdkEndpoints], Any]:
    return _tool(
        lambda ep: [
            "kubectl",
            "--server",
            server(ep),
            "--request-timeout=2s",
            *extra,
            "get",
            "pods",
        ],
        lambda ep: {"KUBECONFIG": str(ep.tmp / "kubeconfig-none")},
    )


def _k8s_status(reason: str, code: int) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": reason.lower(),
        "reason": reason,
        "code": code,
    }


for _reason, _status, _expect in (
    ("Unauthorized", 401, AUTH),
    ("Forbidden", 403, AUTH),
    ("NotFound", 404, NF),
    ("TooManyRequests", 429, RL),
):
    _key = reply(
        f"k8s-{_reason.lower()}",
        _status,
        _k8s_status(_reason, _status),
        {"Retry-After": "0"} if _status == 429 else {},
    )
    case(
        "kubectl",
        _reason.lower(),
        _expect,
        f"the API server answers {_status}",
        _kubectl(lambda ep, k=_key: ep.url(k)),
    )
case(
    "kubectl",
    "refused",
    NET,
    "nothing listens",
    _kubectl(lambda ep: f"http://{LOOPBACK}:{ep.closed}"),
)
case(
    "kubectl",
    "silent",
    TO,
    "the API server never answers",
    _kubectl(lambda ep: f"http://{LOOPBACK}:{ep.silent}"),
)


def _psql(
    dsn: Callable[[SdkEndpoints], str], sql: str = "select 1"
) -> Callable[[SdkEndpoints], Any]:
    def argv(ep: SdkEndpoints) -> list[str]:
        _pg_setup(ep)
        return ["psql", "-X", "-v", "ON_ERROR_STOP=1", "-d", dsn(ep), "-c", sql]

    return _tool(argv, lambda ep: {"PGCONNECT_TIMEOUT": "1"})


for _name, _expect, _run in (
    ("wrong_password", AUTH, _psql(lambda ep: ep.pg.dsn(password="nope"))),
    ("unknown_role", AUTH, _psql(lambda ep: ep.pg.dsn(user="ghost", password="x"))),
    ("no_database", NF, _psql(lambda ep: ep.pg.dsn(dbname="ghostdb"))),
    ("refused", NET, _psql(lambda ep: ep.pg.dsn(port=ep.closed))),
    ("silent", TO, _psql(lambda ep: ep.pg.dsn(port=ep.silent, connect_timeout=1))),
    (
        "statement_timeout",
        TO,
        _psql(lambda ep: ep.pg.dsn(), "set statement_timeout=100; select pg_sleep(3)"),
    ),
    (
        "privilege",
        AUTH,
        _psql(
            lambda ep: ep.pg.dsn(user="limited", password="limited-pw"), "select * from secret_t"
        ),
    ),
    ("no_table", NF, _psql(lambda ep: ep.pg.dsn(), "select * from ghost_t")),
    ("no_socket", NET, _psql(lambda ep: ep.pg.dsn(host=str(ep.tmp / "nope")))),
):
    case("psql", _name, _expect, f"psql: {_name}", _run)


def _ssh_opts(ep: SdkEndpoints, port: int, strict: bool, port_flag: str = "-p") -> list[str]:
    known = ep.tmp / "known_hosts_empty"
    known.touch()
    options = {
        "BatchMode": "yes",
        "ConnectTimeout": "2",
        "StrictHostKeyChecking": "yes" if strict else "no",
        "UserKnownHostsFile": str(known),
        "IdentitiesOnly": "yes",
        "IdentityFile": str(_client_key(ep)),
        "LogLevel": "ERROR",
    }
    words = [w for k, v in options.items() for w in ("-o", f"{k}={v}")]
    return [*words, port_flag, str(port)]


def _need_sshd(ep: SdkEndpoints) -> int:
    if ep.sshd is None:
        raise AssertionError("sshd is not available (tests must run as root)")
    return ep.sshd


_SSH_TARGETS: list[tuple[str, frozenset[str], Callable[[SdkEndpoints], int], bool]] = [
    ("refused", NET, lambda ep: ep.closed, False),
    ("publickey_denied", AUTH, _need_sshd, False),
    ("host_key_unknown", AUTH, _need_sshd, True),
    ("banner_silent", TO, lambda ep: ep.silent, False),
    ("closed_at_once", NET, lambda ep: ep.close_now, False),
]
for _name, _expect, _port, _strict in _SSH_TARGETS:
    case(
        "scp",
        _name,
        _expect,
        f"scp over ssh: {_name}",
        _tool(
            lambda ep, p=_port, s=_strict: [
                "scp",
                *_ssh_opts(ep, p(ep), s, "-P"),
                f"root@{LOOPBACK}:/etc/hostname",
                str(ep.tmp / "copied"),
            ]
        ),
    )
    case(
        "rsync",
        _name,
        _expect,
        f"rsync over ssh: {_name}",
        _tool(
            lambda ep, p=_port, s=_strict: [
                "rsync",
                "-e",
                " ".join(["ssh", *_ssh_opts(ep, p(ep), s)]),
                f"root@{LOOPBACK}:/etc/hostname",
                str(ep.tmp / "copied"),
            ]
        ),
    )


def _npm(registry: Callable[[SdkEndpoints], str], *extra: str) -> Callable[[SdkEndpoints], Any]:
    return _tool(
        lambda ep: [
            "npm",
            "view",
            "left-pad",
            "--registry",
            registry(ep),
            "--fetch-retries=0",
            *extra,
        ],
        lambda ep: {
            "npm_config_cache": str(ep.tmp / "npm-cache"),
            "npm_config_userconfig": str(ep.tmp / "npmrc"),
        },
    )


for _status, _expect in ((401, AUTH), (403, AUTH), (404, NF), (429, RL), (500, NET), (503, NET)):
    _key = reply(f"npm-{_status}", _status, {"error": "no"})
    case(
        "npm",
        f"registry_{_status}",
        _expect,
        f"the registry answers {_status}",
        _npm(lambda ep, k=_key: ep.url(k) + "/"),
    )
case("npm", "refused", NET, "nothing listens", _npm(lambda ep: f"http://{LOOPBACK}:{ep.closed}/"))
case(
    "npm",
    "silent",
    TO,
    "the registry never answers",
    _npm(lambda ep: f"http://{LOOPBACK}:{ep.silent}/", "--fetch-timeout=1000"),
)


def _pip(target: Callable[[SdkEndpoints], list[str]]) -> Callable[[SdkEndpoints], Any]:
    return _tool(
        lambda ep: [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--isolated",
            "--no-input",
            "--no-deps",
            "--retries",
            "0",
            "--timeout",
            "2",
            "-d",
            str(ep.tmp / "dl"),
            *target(ep),
        ],
        lambda ep: {"PIP_CONFIG_FILE": os.devnull},
    )


for _status, _expect in ((401, AUTH), (403, AUTH), (404, NF), (429, RL), (500, NET)):
    _key = reply(f"pip-{_status}", _status, "no", content_type="text/html")
    case(
        "pip",
        f"url_{_status}",
        _expect,
        f"the file server answers {_status}",
        _pip(lambda ep, k=_key: [ep.url(k, "/pkg-1.0.tar.gz")]),
    )
_key = reply("pip-index", 404, "no", content_type="text/html")
case(
    "pip",
    "index_no_distribution",
    NF,
    "the index has no such project",
    _pip(lambda ep: ["--index-url", ep.url("pip-index"), "ghost-pkg"]),
)
case(
    "pip",
    "refused",
    NET,
    "nothing listens",
    _pip(lambda ep: [f"http://{LOOPBACK}:{ep.closed}/pkg-1.0.tar.gz"]),
)
case(
    "pip",
    "dns",
    NET,
    "host does not resolve",
    _pip(lambda ep: [f"http://{UNRESOLVABLE_HOST}/pkg-1.0.tar.gz"]),
)
case(
    "pip",
    "silent",
    TO,
    "the server never answers",
    _pip(lambda ep: [f"http://{LOOPBACK}:{ep.silent}/pkg-1.0.tar.gz"]),
)


def all_cases() -> list[Case]:
    """Every case, the held-out families included."""
    return list(CASES)


# -- held out: written after the extractor was done (scored apart) ----------------------------


def _mongo(
    port: Callable[[SdkEndpoints], int], host: str = LOOPBACK, op: str = "find"
) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import pymongo

        client: Any = pymongo.MongoClient(
            host,
            port(ep),
            serverSelectionTimeoutMS=int(T * 1000),
            connectTimeoutMS=int(T * 1000),
            socketTimeoutMS=int(T * 1000),
            directConnection=True,
            retryReads=False,
            retryWrites=False,
        )
        try:
            collection = client["db"]["c"]
            if op == "insert":
                return collection.insert_one({"x": 1})
            return collection.find_one({})
        finally:
            client.close()

    return run


for _name, _expect, _why, _run in (
    ("refused", NET | TO, "nothing listens (server selection)", _mongo(lambda ep: ep.closed)),
    ("silent", TO | NET, "the server never answers", _mongo(lambda ep: ep.silent)),
    # every attempt is reset until server selection gives up: either code is honest
    ("dropped", NET | TO, "closed at once (server selection)", _mongo(lambda ep: ep.close_now)),
    ("dns", NET | TO, "host does not resolve", _mongo(lambda ep: 27017, UNRESOLVABLE_HOST)),
    ("auth_failed", AUTH, "code 18 AuthenticationFailed", _mongo(lambda ep: ep.mongo["auth"])),
    ("unauthorized", AUTH, "code 13 Unauthorized", _mongo(lambda ep: ep.mongo["unauthorized"])),
    (
        "unauthorized_insert",
        AUTH,
        "code 13 on a write",
        _mongo(lambda ep: ep.mongo["unauthorized"], op="insert"),
    ),
    ("ns_not_found", NF, "code 26 NamespaceNotFound", _mongo(lambda ep: ep.mongo["ns_not_found"])),
    ("max_time", TO, "code 50 MaxTimeMSExpired", _mongo(lambda ep: ep.mongo["exceeded_time"])),
    ("shutdown", NET, "code 91 ShutdownInProgress", _mongo(lambda ep: ep.mongo["shutdown"])),
    (
        "not_primary",
        NET,
        "code 10107 NotWritablePrimary",
        _mongo(lambda ep: ep.mongo["not_primary"]),
    ),
    (
        "host_unreachable",
        NET,
        "code 6 HostUnreachable",
        _mongo(lambda ep: ep.mongo["host_unreachable"]),
    ),
):
    case("pymongo", _name, _expect, _why, _run)


def _google(name: str) -> Callable[[SdkEndpoints], Any]:
    def run(ep: SdkEndpoints) -> Any:
        import requests
        from google.api_core import exceptions

        response = requests.get(ep.url(name, "/v1/projects/p/things/t"), timeout=T * 4)
        if response.status_code >= 400:
            raise exceptions.from_http_response(response)
        return response

    return run


def _gbody(code: int, status: str, reason: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": "failed", "status": status}
    if reason is not None:
        error["errors"] = [{"reason": reason, "domain": "global", "message": "failed"}]
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
            }
        ]
    return {"error": error}


for _name, _status, _gstatus, _reason, _headers, _expect, _ra in (
    ("401", 401, "UNAUTHENTICATED", "authError", {}, AUTH, None),
    ("403", 403, "PERMISSION_DENIED", "forbidden", {}, AUTH, None),
    ("403_disabled", 403, "PERMISSION_DENIED", "accessNotConfigured", {}, AUTH, None),
    ("404", 404, "NOT_FOUND", "notFound", {}, NF, None),
    ("429", 429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", {"Retry-After": "13"}, RL, 13.0),
    ("429_bare", 429, "RESOURCE_EXHAUSTED", None, {}, RL, None),
    ("500", 500, "INTERNAL", "backendError", {}, NET, None),
    ("502", 502, "UNAVAILABLE", None, {}, NET, None),
    ("503", 503, "UNAVAILABLE", "backendError", {}, NET, None),
    ("503_ra", 503, "UNAVAILABLE", None, {"Retry-After": "5"}, RL, 5.0),
    ("504", 504, "DEADLINE_EXCEEDED", None, {}, TO, None),
    ("408", 408, "DEADLINE_EXCEEDED", None, {}, TO, None),
    ("410", 410, "NOT_FOUND", "deleted", {}, NF, None),
):
    _key = reply(f"g-{_name}", _status, _gbody(_status, _gstatus, _reason), _headers)
    case(
        "google-api-core",
        f"http_{_name}",
        _expect,
        f"a Google API answers {_status} {_gstatus}",
        _google(_key),
        retry_after=_ra,
    )
