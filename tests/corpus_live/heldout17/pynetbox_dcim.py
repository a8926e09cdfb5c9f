"""pynetbox (NetBox's Python API client, requests underneath) against a fake NetBox 4 REST API
on 127.0.0.1 answering Django REST Framework's and NetBox's own error bodies (``{"detail"}``
for authentication, permissions and unknown endpoints, per-field lists for validation, the
``{"error", "exception", "netbox_version", "python_version"}`` body of a server error, the
maintenance-mode 503) and statuses, a 409 from an exhausted prefix, a proxy's 502 and an HTML
page where JSON was expected; plus a session timeout and the transport failures. pynetbox
raises ``RequestError``, ``AllocationError`` (409 on POST) or ``ContentError``."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("pynetbox", "fake NetBox 4 REST API", http_setup, half="heldout17")


def _api(url: str) -> Any:
    import pynetbox  # type: ignore[import-untyped]
    import requests

    class Session(requests.Session):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", 1)
            return super().request(*args, **kwargs)

    nb = pynetbox.api(url, token="0123456789abcdefPLANTEDnetboxtoken00000")
    nb.http_session = Session()
    return nb


def _create_device(url: str) -> Any:
    return _api(url).dcim.devices.create(
        name="edge-rtr-01", role=4, device_type=12, site=3, status="active"
    )


def _plugin(url: str) -> Any:
    return _api(url).plugins.bgp.sessions.create(
        name="edge-rtr-01 to transit", device=41, local_as=7, remote_as=9
    )


def _next_ip(url: str) -> Any:
    from pynetbox.core.endpoint import DetailEndpoint  # type: ignore[import-untyped]
    from pynetbox.models.ipam import Prefixes  # type: ignore[import-untyped]

    nb = _api(url)
    prefix = Prefixes({"id": 17, "prefix": "10.20.30.0/29"}, nb, nb.ipam.prefixes)
    ips: DetailEndpoint = prefix.available_ips
    return ips.create({"description": "edge-rtr-01 loopback"})


ROWS: list[Row] = [
    (
        "invalid_token",
        403,
        {"detail": "Invalid token"},
        {},
        AUTH,
        None,
        "the API token is unknown",
    ),
    (
        "token_expired",
        403,
        {"detail": "Token expired"},
        {},
        AUTH,
        None,
        "the API token has expired",
    ),
    (
        "no_permission",
        403,
        {"detail": "You do not have permission to perform this action."},
        {},
        AUTH,
        None,
        "the token's user may not add devices",
    ),
    (
        "name_taken",
        400,
        {"name": ["Device name must be unique per site."]},
        {},
        EXISTS | INT,
        None,
        "a device of that name already exists at the site",
    ),
    (
        "bad_choice",
        400,
        {"status": ['"actve" is not a valid choice.']},
        {},
        INT,
        None,
        "the status is not one of the choices (the caller's input)",
    ),
    (
        "related_missing",
        400,
        {"device_type": ["Related object not found using the provided numeric ID: 12"]},
        {},
        NF | INT,
        None,
        "the device type it points at does not exist",
    ),
    (
        "server_error",
        500,
        {
            "error": 'duplicate key value violates unique constraint "dcim_device_pkey"\n'
            "DETAIL:  Key (id)=(41) already exists.",
            "exception": "IntegrityError",
            "netbox_version": "4.1.3",
            "python_version": "3.12.3",
        },
        {},
        NET | INT,
        None,
        "NetBox raised an unhandled exception",
    ),
    (
        "maintenance",
        503,
        {
            "detail": "NetBox is currently operating in maintenance mode and is unable to "
            "perform write operations. Please try again later."
        },
        {},
        NET | RL,
        None,
        "the instance is in maintenance mode, read-only",
    ),
    (
        "bad_gateway",
        502,
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n",
        {"Content-Type": "text/html"},
        NET,
        None,
        "nginx could not reach gunicorn",
    ),
    (
        "html_not_api",
        201,
        '<!DOCTYPE html>\n<html lang="en">\n<head><title>Log In | NetBox</title></head>\n'
        '<body><form method="post" action="/login/"></form></body>\n</html>\n',
        {"Content-Type": "text/html; charset=utf-8"},
        INT,
        None,
        "an SSO proxy answered its login page where JSON was expected",
    ),
]
http_cases(FAM, _create_device, ROWS)
http_cases(
    FAM,
    _plugin,
    [
        (
            "plugin_missing",
            404,
            {"detail": "Not found."},
            {},
            NF,
            None,
            "the plugin's API is not installed on this NetBox",
        )
    ],
    transport=False,
)
http_cases(
    FAM,
    _next_ip,
    [
        (
            "prefix_full",
            409,
            {
                "detail": "An insufficient number of IP addresses are available within prefix 10.20.30.0/29 (1 requested, 0 available)"
            },
            {},
            QUOTA | INT,
            None,
            "no free address is left in the prefix",
        )
    ],
    transport=False,
)
