"""pysolr against a fake Apache Solr 9 (Jetty's HTML error pages for what the servlet
container answers, Solr's JSON ``error`` object for what Solr answers). pysolr keeps no
status attribute: its ``SolrError`` carries the status in its text only."""

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

FAM = family("pysolr", "fake Apache Solr 9 on Jetty (error pages)", http_setup, half="heldout2")

_JETTY = {"Server": "Jetty(10.0.20)", "Content-Type": "text/html;charset=iso-8859-1"}


def _jetty(status: int, message: str, uri: str = "/solr/products/select") -> str:
    return (
        "<html>\n<head>\n"
        '<meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>\n'
        f"<title>Error {status} {message}</title>\n</head>\n"
        f"<body><h2>HTTP ERROR {status} {message}</h2>\n<table>\n"
        f"<tr><th>URI:</th><td>{uri}</td></tr>\n"
        f"<tr><th>STATUS:</th><td>{status}</td></tr>\n"
        f"<tr><th>MESSAGE:</th><td>{message}</td></tr>\n"
        "<tr><th>SERVLET:</th><td>default</td></tr>\n</table>\n\n</body>\n</html>\n"
    )


def _solr(status: int, msg: str, cls: str = "org.apache.solr.common.SolrException") -> Any:
    return {
        "responseHeader": {"status": status, "QTime": 2},
        "error": {
            "metadata": ["error-class", cls, "root-error-class", cls],
            "msg": msg,
            "code": status,
        },
    }


def _core(url: str) -> Any:
    import pysolr

    return pysolr.Solr(f"{url}/solr/products", timeout=1)


def _search(url: str) -> Any:
    return _core(url).search("title:lamp")


def _add_new(url: str) -> Any:
    # _version_ -1: "the document must not exist yet" (Solr's optimistic concurrency)
    return _core(url).add([{"id": "book1", "title": "x", "_version_": -1}], commit=False)


ROWS: list[Row] = [
    (
        "bad_credentials",
        401,
        _jetty(401, "Bad credentials"),
        {**_JETTY, "WWW-Authenticate": 'Basic realm="solr"'},
        AUTH,
        None,
        "BasicAuthPlugin rejects the password (Jetty page)",
    ),
    (
        "forbidden",
        403,
        _jetty(403, "Unauthorized request, Response code: 403"),
        _JETTY,
        AUTH,
        None,
        "RuleBasedAuthorizationPlugin: the user's role lacks the permission",
    ),
    (
        "no_core",
        404,
        _jetty(404, "Not Found", "/solr/products/select"),
        _JETTY,
        NF,
        None,
        "the core/collection does not exist",
    ),
    (
        "undefined_field",
        400,
        _solr(400, "undefined field title"),
        {},
        INT,
        None,
        "the query names a field the schema lacks: the pack's input",
    ),
    (
        "rate_limiter",
        429,
        _jetty(
            429,
            "Too many requests for this request type. Please try after some time or "
            "increase the quota for this request type",
        ),
        _JETTY,
        RL,
        None,
        "Solr's request rate limiter",
    ),
    (
        "no_servers",
        503,
        _solr(503, "no servers hosting shard: shard2"),
        {},
        NET,
        None,
        "SolrCloud: a shard has no live replica",
    ),
    (
        "server_error",
        500,
        _solr(500, "java.lang.NullPointerException", "java.lang.NullPointerException"),
        {},
        NET,
        None,
        "Solr failed (5xx)",
    ),
]
http_cases(FAM, _search, ROWS)
http_cases(
    FAM,
    _add_new,
    [
        (
            "version_conflict",
            409,
            _solr(409, "version conflict for book1 expected=-1 actual=1784311460591435776"),
            {},
            EXISTS | INT,
            None,
            "create-only add (_version_=-1) of an id that exists",
        )
    ],
    transport=False,
)
