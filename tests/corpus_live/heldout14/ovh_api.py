"""ovh (OVHcloud's Python wrapper, ``ovh.Client`` over requests, signed application-key
requests) against a fake OVHcloud API (``/1.0``) on 127.0.0.1: the client's endpoint is
pointed at the fake and its clock offset preset (so no ``/auth/time`` round trip), a 1 s
timeout. OVHcloud answers errors as JSON: authentication failures as ``{errorCode, httpCode,
message}`` (``INVALID_KEY``, ``INVALID_CREDENTIAL``, ``NOT_GRANTED_CALL``,
``INVALID_SIGNATURE``), the rest as ``{class, message}`` (``Client::NotFound``,
``Client::Conflict::AlreadyExists``, ``Server::ServiceUnavailable``...), ``X-OVH-QUERYID`` on
each; 460 marks an expired service. The client raises one exception per errorCode or status
(``InvalidKey``, ``ResourceNotFoundError``, ``ResourceConflictError``,
``ResourceExpiredError``, ``APIError``...), ``InvalidResponse`` for a body that is not JSON,
``HTTPError`` for the transport. Faked: the API; real: the client and requests."""

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

FAM = family("ovh", "fake OVHcloud API", http_setup, half="heldout14")

_H = {"X-OVH-QUERYID": "EU.ext-3.66b2f1a4.1187.5e0c9d2a7b8f41c6a1e3"}
_ZONE = "/domain/zone/example.com"


def _client(url: str) -> Any:
    import ovh  # type: ignore[import-untyped]

    client = ovh.Client(
        endpoint="ovh-eu",
        application_key="PLANTEDak7Qx2Lm9",
        application_secret="PLANTEDas4Vb8Nc1Zt6Rw3Ky5Hp0Jd",
        consumer_key="PLANTEDck2Fg7Tq9Wm4Xs1Lb8Pn3Vc6Rh",
        timeout=1.0,
    )
    client._endpoint = url + "/1.0"
    client._time_delta = 0
    return client


def _list(url: str) -> Any:
    return _client(url).get(_ZONE + "/record", fieldType="A", subDomain="api")


def _create(url: str) -> Any:
    return _client(url).post(
        _ZONE + "/record", fieldType="A", subDomain="api", target="198.51.100.7", ttl=300
    )


def _auth(code: str, message: str, http: str = "403 Forbidden") -> dict[str, Any]:
    return {"errorCode": code, "httpCode": http, "message": message}


def _cls(klass: str, message: str) -> dict[str, Any]:
    return {"class": klass, "message": message}


LIST: list[Row] = [
    (
        "invalid_key",
        403,
        _auth("INVALID_KEY", "This application key is invalid"),
        _H,
        AUTH,
        None,
        "the application key is unknown to OVHcloud",
    ),
    (
        "invalid_credential",
        403,
        _auth("INVALID_CREDENTIAL", "This credential is not valid"),
        _H,
        AUTH,
        None,
        "the consumer key expired or was revoked",
    ),
    (
        "not_granted",
        403,
        _auth("NOT_GRANTED_CALL", "This call has not been granted"),
        _H,
        AUTH,
        None,
        "the consumer key's rules do not allow this route",
    ),
    (
        "bad_signature",
        400,
        _auth("INVALID_SIGNATURE", "Invalid signature", "400 Bad Request"),
        _H,
        AUTH | INT,
        None,
        "the request was signed with the wrong application secret",
    ),
    (
        "zone_missing",
        404,
        _cls("Client::NotFound", "This service does not exist"),
        _H,
        NF,
        None,
        "the account holds no DNS zone of that name",
    ),
    (
        "service_expired",
        460,
        _cls("Client::Expired", "The service example.com is expired"),
        _H,
        NF | INT,
        None,
        "the domain's service has expired and is suspended",
    ),
    (
        "too_many",
        429,
        _cls("Client::TooManyRequests", "Too many requests"),
        _H,
        RL,
        None,
        "the application's request rate was throttled, no delay given",
    ),
    (
        "maintenance",
        503,
        _cls("Server::ServiceUnavailable", "This service is in maintenance"),
        _H,
        NET,
        None,
        "the API is down for maintenance",
    ),
    (
        "server_error",
        500,
        _cls("Server::InternalServerError", "Internal server error"),
        _H,
        NET,
        None,
        "OVHcloud failed while serving the request",
    ),
]
http_cases(FAM, _list, LIST)

CREATE: list[Row] = [
    (
        "record_exists",
        409,
        _cls(
            "Client::Conflict::AlreadyExists",
            "A record of type A for api.example.com with target 198.51.100.7 already exists",
        ),
        _H,
        EXISTS,
        None,
        "the zone holds the same record already",
    ),
    (
        "bad_parameter",
        400,
        _cls("Client::BadRequest", "Invalid value for parameter target (198.51.100.7.)"),
        _H,
        INT,
        None,
        "the caller's record target fails validation",
    ),
    (
        "proxy_502",
        502,
        "<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete"
        " response.\n</body></html>\n",
        {},
        NET,
        None,
        "the front proxy got no valid answer from the API, HTML instead of JSON",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _list(f"http://127.0.0.1:{c.net.garbage}"),
)
