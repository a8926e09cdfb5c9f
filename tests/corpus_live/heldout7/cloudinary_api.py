"""cloudinary (Cloudinary's official Python SDK, over urllib3) against a fake Cloudinary API on
127.0.0.1 (``upload_prefix=`` the fake, credentials and ``timeout=0.5`` passed per call, as a
pack serving several clouds does). Errors are Cloudinary's ``{"error": {"message"}}`` bodies
with its statuses: 400 (bad file, too large), 401 (``Unknown API key``, ``Invalid
Signature``), 403, 404 (``Resource not found - <public id>``), 409, 420 (the Admin API's
rate limit, the reset in ``X-FeatureRateLimit-Reset``, an HTTP date), 500. The SDK maps the
status to ``cloudinary.exceptions.BadRequest``, ``AuthorizationRequired``, ``NotAllowed``,
``NotFound``, ``AlreadyExists``, ``RateLimited`` or ``GeneralError``, with the message alone
(the Admin API prefixes ``Error <status> -``; the upload API gives the bare message; no
headers reach the exception), wraps urllib3's transport errors in ``GeneralError`` /
``Error`` (``Unexpected error ...``), and a page that is no JSON in ``GeneralError``
(``Error parsing server response``). The 403, 409 and 420 messages' wording is not
documented (their statuses' meaning is)."""

from __future__ import annotations

import time
from email.utils import formatdate
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    Http,
    Row,
    family,
    http_cases,
    http_setup,
)

FAM = family("cloudinary", "fake Cloudinary upload and Admin APIs", http_setup, half="heldout7")

_H = {"X-Request-Id": "4d1e8c2b9a7f6e5d"}


def _opts(url: str) -> dict[str, Any]:
    return {
        "cloud_name": "acme-media",
        "api_key": "614335564976464",
        "api_secret": "PLANTEDa1B2c3D4e5F6g7H8i9J0kL",
        "upload_prefix": url,
        "timeout": 0.5,  # urllib3 tries a GET 4 times: the silent case waits 2 s
    }


def _resource(url: str) -> Any:
    import cloudinary.api

    return cloudinary.api.resource("products/shoe-42", **_opts(url))


def _upload(url: str) -> Any:
    import cloudinary.uploader

    return cloudinary.uploader.upload(
        b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", public_id="products/shoe-42", **_opts(url)
    )


def _create_preset(url: str) -> Any:
    import cloudinary.api

    return cloudinary.api.create_upload_preset(
        name="product_images", folder="products", **_opts(url)
    )


def _err(message: str) -> dict[str, Any]:
    return {"error": {"message": message}}


ADMIN: list[Row] = [
    (
        "unknown_key",
        401,
        _err("Unknown API key 614335564976464"),
        _H,
        AUTH,
        None,
        "the API key is not the cloud's",
    ),
    (
        "not_allowed",
        403,
        _err("Admin API is not allowed for this API key"),
        _H,
        AUTH,
        None,
        "the key's role may not use the Admin API",
    ),
    (
        "not_found",
        404,
        _err("Resource not found - products/shoe-42"),
        _H,
        NF,
        None,
        "no asset with that public id",
    ),
    ("general_error", 500, _err("General Error"), _H, NET, None, "Cloudinary failed"),
]
http_cases(FAM, _resource, ADMIN)


def _rate_limited(ctx: Http) -> Any:
    headers = {
        **_H,
        "X-FeatureRateLimit-Limit": "500",
        "X-FeatureRateLimit-Remaining": "0",
        "X-FeatureRateLimit-Reset": formatdate(time.time() + 60, usegmt=True),
    }
    ctx.http.set(420, _err("Rate Limit Exceeded"), headers)
    return _resource(ctx.http.url)


FAM.add(
    "rate_limited",
    RL,
    "HTTP 420: the Admin API's hourly limit (the reset, an HTTP date in a header, does not "
    "reach the exception)",
    _rate_limited,
)

UPLOAD: list[Row] = [
    (
        "invalid_signature",
        401,
        _err(
            "Invalid Signature 5d6b2c7e1f0a9b8c3d4e5f60718293a4b5c6d7e8. String to sign - "
            "'public_id=products/shoe-42&timestamp=1764430000'."
        ),
        _H,
        AUTH,
        None,
        "the request was signed with the wrong API secret",
    ),
    (
        "invalid_file",
        400,
        _err("Invalid image file"),
        _H,
        INT,
        None,
        "the bytes are no image (the pack's input)",
    ),
    (
        "too_large",
        400,
        _err("File size too large. Got 157286400. Maximum is 104857600."),
        _H,
        INT | QUOTA,
        None,
        "the file exceeds the plan's upload size limit",
    ),
]
http_cases(FAM, _upload, UPLOAD, transport=False)

PRESET: list[Row] = [
    (
        "preset_exists",
        409,
        _err("Upload preset product_images already exists"),
        _H,
        EXISTS,
        None,
        "an upload preset with that name already exists",
    ),
]
http_cases(FAM, _create_preset, PRESET, transport=False)

_CF_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n"
    "</body>\r\n</html>\r\n"
)
http_cases(
    FAM,
    _upload,
    [
        (
            "bad_gateway",
            502,
            _CF_502,
            {"Server": "cloudflare"},
            NET,
            None,
            "the CDN front reached no origin",
        )
    ],
    content_type="text/html",
    transport=False,
)
