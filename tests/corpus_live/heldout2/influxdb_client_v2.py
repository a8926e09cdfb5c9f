"""influxdb-client (InfluxDB 2.x) against a fake InfluxDB answering its documented error
bodies (``{"code": "not found", "message": "..."}``: code words with spaces)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("influxdb-client", "fake InfluxDB 2.x API (error bodies)", http_setup, half="heldout2")


def _client(url: str) -> Any:
    from influxdb_client import InfluxDBClient

    return InfluxDBClient(url=url, token="tok-PLANTED", org="acme", timeout=1000, retries=False)


def _write(url: str) -> Any:
    from influxdb_client.client.write_api import SYNCHRONOUS

    with _client(url) as client:
        client.write_api(write_options=SYNCHRONOUS).write(bucket="metrics", record="cpu v=1")


def _create_bucket(url: str) -> Any:
    with _client(url) as client:
        return client.buckets_api().create_bucket(bucket_name="metrics", org_id="04014de4ed590000")


def _e(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


ROWS: list[Row] = [
    (
        "unauthorized",
        401,
        _e("unauthorized", "unauthorized access"),
        {},
        AUTH,
        None,
        "the token is invalid",
    ),
    (
        "forbidden",
        403,
        _e("forbidden", "insufficient permissions for write"),
        {},
        AUTH,
        None,
        "the token may not write this bucket",
    ),
    (
        "no_bucket",
        404,
        _e("not found", 'bucket "metrics" not found'),
        {},
        NF,
        None,
        "the bucket does not exist",
    ),
    (
        "bad_line",
        400,
        _e("invalid", "unable to parse 'cpu v=': missing field value"),
        {},
        INT,
        None,
        "malformed line protocol: the pack's input",
    ),
    (
        "type_conflict",
        422,
        _e(
            "unprocessable entity",
            "failure writing points to database: partial write: field type conflict: input field "
            '"v" on measurement "cpu" is type float, already exists as type integer dropped=1',
        ),
        {},
        INT,
        None,
        "a field type conflict (its text says 'already exists' of a type, not of the thing "
        "written): the data is wrong",
    ),
    (
        "too_large",
        413,
        _e("request too large", "unable to read data: points batch is too large"),
        {},
        INT,
        None,
        "the batch is over the server's limit: the same request never passes",
    ),
    (
        "throttled",
        429,
        _e("too many requests", "org 04014de4ed590000 has exceeded limited_write plan limit"),
        {"Retry-After": "30"},
        RL,
        30.0,
        "Cloud's write rate limit, with Retry-After",
    ),
    (
        "unavailable_retry",
        503,
        _e("unavailable", "service temporarily unavailable"),
        {"Retry-After": "10"},
        RL,
        10.0,
        "503 with Retry-After: wait what the server asks",
    ),
    (
        "internal",
        500,
        _e("internal error", "an internal error has occurred"),
        {},
        NET,
        None,
        "InfluxDB failed (5xx)",
    ),
]
http_cases(FAM, _write, ROWS)
http_cases(
    FAM,
    _create_bucket,
    [
        (
            "bucket_exists",
            422,
            _e("conflict", "bucket with name metrics already exists"),
            {},
            EXISTS,
            None,
            "creating a bucket whose name is taken (a 422 whose code says conflict)",
        )
    ],
    transport=False,
)
