"""box-sdk-gen (Box's generated Python SDK) against a fake Box API answering its documented
error objects (``{"type": "error", "status", "code", "message", "context_info",
"help_url", "request_id"}``): ``unauthorized``, ``access_denied_insufficient_permissions``,
``not_found``, ``item_name_in_use`` (409), ``storage_limit_exceeded`` (403),
``rate_limit_exceeded`` (429 with ``Retry-After``), ``item_name_invalid``, 5xx. Retries are
off. The SDK's read timeout is a fixed 60 s, so there is no silent case."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    UNRESOLVABLE,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("box-sdk-gen", "fake Box API", http_setup, half="heldout4")


def _client(url: str) -> Any:
    from box_sdk_gen import BaseUrls, BoxClient, BoxDeveloperTokenAuth, NetworkSession
    from box_sdk_gen.networking.retries import BoxRetryStrategy

    session = NetworkSession(
        base_urls=BaseUrls(base_url=url, upload_url=url + "/api", oauth_2_url=url + "/oauth2"),
        retry_strategy=BoxRetryStrategy(max_attempts=1, max_retries_on_exception=0),
    )
    return BoxClient(
        auth=BoxDeveloperTokenAuth(token="PLANTEDboxdevelopertoken00000000"),
        network_session=session,
    )


def _get(url: str) -> Any:
    return _client(url).files.get_file_by_id("1234567890")


def _create(url: str) -> Any:
    from box_sdk_gen import CreateFolderParent

    return _client(url).folders.create_folder("Invoices 2026", CreateFolderParent(id="0"))


def _e(status: int, code: str, message: str, **context: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "error",
        "status": status,
        "code": code,
        "help_url": "http://developers.box.com/docs/#errors",
        "message": message,
        "request_id": "abcdef123456",
    }
    if context:
        body["context_info"] = context
    return body


GET: list[Row] = [
    (
        "unauthorized",
        401,
        "",
        {
            "WWW-Authenticate": 'Bearer realm="Service", error="invalid_token", error_description="The access token provided is invalid."'
        },
        AUTH,
        None,
        "the token is invalid (Box answers 401 with an empty body and the reason in the header)",
    ),
    (
        "insufficient_permissions",
        403,
        _e(
            403, "access_denied_insufficient_permissions", "Access denied - insufficient permission"
        ),
        {},
        AUTH,
        None,
        "the user may not read the file",
    ),
    ("not_found", 404, _e(404, "not_found", "Not Found"), {}, NF, None, "the file does not exist"),
    (
        "trashed",
        404,
        _e(404, "trashed", "Item is trashed"),
        {},
        NF,
        None,
        "the file is in the trash",
    ),
    (
        "rate_limited",
        429,
        _e(429, "rate_limit_exceeded", "Request rate limit exceeded, please try again later"),
        {"Retry-After": "2"},
        RL,
        2.0,
        "Box's rate limit, with the server's delay",
    ),
    (
        "internal",
        500,
        _e(500, "internal_server_error", "Internal Server Error"),
        {},
        NET,
        None,
        "Box failed",
    ),
    (
        "unavailable",
        503,
        _e(503, "unavailable", "Unavailable"),
        {},
        NET,
        None,
        "Box is unavailable",
    ),
]
http_cases(FAM, _get, GET, transport=False)
CREATE: list[Row] = [
    (
        "name_in_use",
        409,
        _e(
            409,
            "item_name_in_use",
            "Item with the same name already exists",
            conflicts=[{"type": "folder", "id": "98765", "name": "Invoices 2026"}],
        ),
        {},
        EXISTS,
        None,
        "a folder of that name exists",
    ),
    (
        "storage_limit",
        403,
        _e(403, "storage_limit_exceeded", "Account storage limit reached"),
        {},
        QUOTA,
        None,
        "the account's storage is full: waiting does not help",
    ),
    (
        "name_invalid",
        400,
        _e(400, "item_name_invalid", "Item name invalid"),
        {},
        INT,
        None,
        "a malformed name (the pack's input)",
    ),
    (
        "parent_missing",
        404,
        _e(
            404,
            "not_found",
            "Not Found",
            errors=[
                {
                    "reason": "invalid_parameter",
                    "name": "parent",
                    "message": "Invalid value 'd_0'. 'parent' with value 'd_0' not found",
                }
            ],
        ),
        {},
        NF,
        None,
        "the parent folder does not exist",
    ),
]
http_cases(FAM, _create, CREATE, transport=False)
FAM.add("refused", NET, "nothing listens", lambda c: _get(f"http://{LOOPBACK}:{c.net.closed}"))
FAM.add("dns", NET, "host does not resolve", lambda c: _get(f"http://{UNRESOLVABLE}"))
FAM.add("dropped", NET, "closed at once", lambda c: _get(f"http://{LOOPBACK}:{c.net.close_now}"))
