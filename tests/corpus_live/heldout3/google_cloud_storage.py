"""google-cloud-storage against a fake Cloud Storage JSON API answering its documented
error bodies (``{"error": {"code": ..., "message": ..., "errors": [{"reason": ...}]}}``),
raised as google-api-core's exception classes."""

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

FAM = family("google-cloud-storage", "fake Cloud Storage JSON API", http_setup, half="heldout3")


def _client(url: str) -> Any:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    return storage.Client(
        project="corpus-project",
        credentials=AnonymousCredentials(),
        client_options={"api_endpoint": url},
    )


def _reload(url: str) -> Any:
    blob = _client(url).bucket("reports").blob("2024/q3.csv")
    return blob.reload(timeout=1, retry=None)


def _create(url: str) -> Any:
    return _client(url).create_bucket("reports", timeout=1, retry=None)


def _e(code: int, message: str, reason: str, **extra: str) -> dict[str, Any]:
    return {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason, **extra}],
        }
    }


GET: list[Row] = [
    (
        "no_object",
        404,
        _e(404, "No such object: reports/2024/q3.csv", "notFound"),
        {},
        NF,
        None,
        "the object does not exist",
    ),
    (
        "no_bucket",
        404,
        _e(404, "The specified bucket does not exist.", "notFound"),
        {},
        NF,
        None,
        "the bucket does not exist",
    ),
    (
        "invalid_credentials",
        401,
        _e(
            401,
            "Invalid Credentials",
            "authError",
            locationType="header",
            location="Authorization",
        ),
        {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'},
        AUTH,
        None,
        "the token is rejected (401); google-auth then finds the anonymous credentials cannot "
        "be refreshed",
    ),
    (
        "permission",
        403,
        _e(
            403,
            "corpus@corpus-project.iam.gserviceaccount.com does not have storage.objects.get "
            "access to the Google Cloud Storage object. Permission 'storage.objects.get' denied "
            "on resource (or it may not exist).",
            "forbidden",
        ),
        {},
        AUTH,
        None,
        "the service account lacks storage.objects.get",
    ),
    (
        "billing_disabled",
        403,
        _e(
            403,
            "The billing account for the owning project is disabled in state closed",
            "accountDisabled",
            locationType="header",
            location="Authorization",
        ),
        {},
        QUOTA,
        None,
        "the project's billing account is closed: no retry works until billing is restored",
    ),
    (
        "rate_limited",
        429,
        _e(
            429,
            "The object exceeded the rate limit for object mutation operations (create, update, "
            "and delete). Please reduce your request rate.",
            "rateLimitExceeded",
        ),
        {},
        RL,
        None,
        "the object's mutation rate limit",
    ),
    (
        "backend_error",
        500,
        _e(500, "We encountered an internal error. Please try again.", "backendError"),
        {},
        NET,
        None,
        "Cloud Storage failed",
    ),
    (
        "unavailable",
        503,
        _e(503, "We encountered an internal error. Please try again.", "backendError"),
        {},
        NET,
        None,
        "Cloud Storage is unavailable",
    ),
]
http_cases(FAM, _reload, GET)
http_cases(
    FAM,
    _create,
    [
        (
            "bucket_exists",
            409,
            _e(
                409,
                "Your previous request to create the named bucket succeeded and you already own "
                "it.",
                "conflict",
            ),
            {},
            EXISTS,
            None,
            "the bucket to create already exists (owned by this project)",
        ),
        (
            "bucket_name_taken",
            409,
            _e(
                409,
                "The requested bucket name is not available. The bucket namespace is shared by "
                "all users of the system. Please select a different name and try again.",
                "conflict",
            ),
            {},
            EXISTS,
            None,
            "the bucket name is taken (by someone else)",
        ),
        (
            "invalid_name",
            400,
            _e(400, "Invalid bucket name: 'Reports_2024'", "invalid"),
            {},
            INT,
            None,
            "the bucket name is invalid (the pack's input)",
        ),
        (
            "precondition",
            412,
            _e(
                412,
                "At least one of the pre-conditions you specified did not hold.",
                "conditionNotMet",
                locationType="header",
                location="If-Match",
            ),
            {},
            INT,
            None,
            "a precondition (generation match) failed: re-read, do not retry the same call",
        ),
    ],
    transport=False,
)
