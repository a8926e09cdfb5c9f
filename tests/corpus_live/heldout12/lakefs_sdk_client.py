"""lakefs-sdk (lakeFS's OpenAPI Generator client over urllib3) against a fake lakeFS API
(``/api/v1``) on 127.0.0.1 (``Configuration(host=...)`` with basic auth by access key,
``retries=0`` so urllib3 sends each request once, ``_request_timeout=1`` per call). lakeFS
answers every error as ``{"message": "..."}`` with ``X-Request-Id`` and
``X-Content-Type-Options: nosniff``; an existing repository is 409 ``not unique`` (lakeFS 1.2
on); a protected branch refuses commits with 403. The generated client raises
``BadRequestException``, ``UnauthorizedException``, ``ForbiddenException``,
``NotFoundException``, ``ServiceException`` (5xx) or ``ApiException`` for the rest; urllib3's
own errors for the transport. Faked: the API; real: the generated client and urllib3."""

from __future__ import annotations

import importlib
from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NET, NF, RL, TO, Row, family, http_cases, http_setup

FAM = family("lakefs-sdk", "fake lakeFS API", http_setup, half="heldout12")

_H = {"X-Content-Type-Options": "nosniff", "X-Request-Id": "48f1ed1d-4c51-440c-bb43-85edb9f2c401"}


def _sdk() -> Any:
    return importlib.import_module("lakefs_sdk")


def _client(url: str) -> Any:
    lakefs_sdk = _sdk()
    conf = lakefs_sdk.Configuration(
        host=url + "/api/v1",
        username="AKIAJPLANTEDLAKEFS7Q",
        password="PLANTEDsecretLakeFS0b9c8d7e6f5a4b3c2d1e0f9a",
    )
    conf.retries = 0
    return lakefs_sdk.ApiClient(conf)


def _get_repo(url: str) -> Any:
    lakefs_sdk = _sdk()
    return lakefs_sdk.RepositoriesApi(_client(url)).get_repository("analytics", _request_timeout=1)


def _create_repo(url: str) -> Any:
    lakefs_sdk = _sdk()
    spec = lakefs_sdk.RepositoryCreation(
        name="analytics", storage_namespace="s3://example-lake/analytics/", default_branch="main"
    )
    return lakefs_sdk.RepositoriesApi(_client(url)).create_repository(spec, _request_timeout=1)


def _commit(url: str) -> Any:
    lakefs_sdk = _sdk()
    return lakefs_sdk.CommitsApi(_client(url)).commit(
        "analytics", "main", lakefs_sdk.CommitCreation(message="daily load"), _request_timeout=1
    )


def _msg(text: str) -> dict[str, str]:
    return {"message": text}


GET: list[Row] = [
    (
        "bad_credentials",
        401,
        _msg("error authenticating request"),
        _H,
        AUTH,
        None,
        "the access key pair is wrong",
    ),
    (
        "no_permission",
        403,
        _msg("insufficient permissions"),
        _H,
        AUTH,
        None,
        "the user's policies do not allow reading the repository",
    ),
    (
        "repo_not_found",
        404,
        _msg("repository not found"),
        _H,
        NF,
        None,
        "no repository of this name",
    ),
    (
        "too_many_requests",
        429,
        _msg("too many requests"),
        _H,
        RL,
        None,
        "lakeFS throttled the caller, no delay given",
    ),
    (
        "internal",
        500,
        _msg("failed to get repository: database: connection refused"),
        _H,
        NET,
        None,
        "lakeFS could not reach its metadata store",
    ),
    (
        "gateway_timeout",
        504,
        "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504"
        " Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
        {"Content-Type": "text/html", "Server": "nginx"},
        TO | NET,
        None,
        "the ingress got no answer from lakeFS in time",
    ),
]
http_cases(FAM, _get_repo, GET)

CREATE: list[Row] = [
    (
        "repo_exists",
        409,
        _msg("error creating repository: not unique"),
        _H,
        EXISTS,
        None,
        "a repository of this name exists already",
    ),
    (
        "bad_namespace",
        400,
        _msg("failed to create repository: failed to access storage"),
        _H,
        INT | AUTH,
        None,
        "lakeFS cannot write to the caller's storage namespace",
    ),
]
http_cases(FAM, _create_repo, CREATE, transport=False)

COMMIT: list[Row] = [
    (
        "no_changes",
        400,
        _msg("commit: no changes"),
        _H,
        INT,
        None,
        "the branch has nothing to commit",
    ),
    (
        "protected_branch",
        403,
        _msg("cannot write to protected branch"),
        _H,
        AUTH | INT,
        None,
        "a branch protection rule forbids direct commits to main",
    ),
    (
        "branch_not_found",
        404,
        _msg("branch not found"),
        _H,
        NF,
        None,
        "the repository has no branch main",
    ),
]
http_cases(FAM, _commit, COMMIT, transport=False)

FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _get_repo(f"http://127.0.0.1:{c.net.garbage}"),
)
