"""python-jenkins (the Jenkins remote-API client over requests, ``timeout=1``) against a fake
Jenkins controller on 127.0.0.1. The fake answers as Jenkins 2.4xx on Jetty does: a CSRF
crumb at ``/crumbIssuer/api/json``; Jetty's HTML error page (``HTTP ERROR <status> <message>``)
for a bad API token (401 with ``WWW-Authenticate``) or a refused crumb (403); the
``Access Denied`` page with the ``X-You-Are-Authenticated-As`` / ``X-Required-Permission``
headers when a permission is missing; ``createItem`` refusing an existing name with 400 and
an ``X-Error`` header; 503 while Jenkins is starting up. python-jenkins turns 401/403/500 into
``JenkinsException`` (text plus body), 404 into ``NotFoundException`` (often re-raised as a
``job[...] does not exist`` ``JenkinsException``), re-raises other ``HTTPError``s, and turns a
read timeout into ``TimeoutException``. Faked: the controller; real: python-jenkins and
requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    NET,
    NF,
    Http,
    Reply,
    family,
    http_setup,
    transport_cases,
)

FAM = family("python-jenkins", "fake Jenkins controller", http_setup, half="heldout13")

_H = {
    "X-Content-Type-Options": "nosniff",
    "X-Jenkins": "2.479.3",
    "X-Jenkins-Session": "5c1a7e2b",
    "X-Hudson": "1.395",
    "Server": "Jetty(12.0.16)",
}
_CRUMB = Reply(
    200,
    {
        "_class": "hudson.security.csrf.DefaultCrumbIssuer",
        "crumb": "9f2c4e1d7b3a5f8e0c6d2b4a1e3f5c7d9b0a2c4e6f8d1b3a5c7e9f0d2b4a6c8e",
        "crumbRequestField": "Jenkins-Crumb",
    },
    _H,
)
_XML = "<?xml version='1.1' encoding='UTF-8'?><project><builders/></project>"


def _jetty(status: int, message: str, uri: str) -> str:
    return (
        "<html>\n<head>\n"
        '<meta http-equiv="Content-Type" content="text/html;charset=ISO-8859-1"/>\n'
        f"<title>Error {status} {message}</title>\n</head>\n"
        f"<body>\n<h2>HTTP ERROR {status} {message}</h2>\n<table>\n"
        f"<tr><th>URI:</th><td>{uri}</td></tr>\n"
        f"<tr><th>STATUS:</th><td>{status}</td></tr>\n"
        f"<tr><th>MESSAGE:</th><td>{message}</td></tr>\n"
        "<tr><th>SERVLET:</th><td>Stapler</td></tr>\n</table>\n"
        '<hr/><a href="https://jetty.org/">Powered by Jetty:// 12.0.16</a><hr/>\n\n'
        "</body>\n</html>\n"
    )


def _html(status: int, body: str, **headers: str) -> Reply:
    return Reply(status, body, {**_H, **headers}, "text/html;charset=iso-8859-1")


def _serve(ctx: Http, routes: dict[str, Reply]) -> None:
    """Answer the first route whose (method and) path prefix matches; 404 otherwise."""

    def route(method: str, path: str, body: bytes) -> Reply:
        for key, reply in routes.items():
            m, _, prefix = key.rpartition(" ")
            if (not m or m == method) and path.startswith(prefix):
                return reply
        return _html(404, _jetty(404, "Not Found", path))

    ctx.http.route = route


def _server(url: str) -> Any:
    import jenkins  # type: ignore[import-untyped]

    return jenkins.Jenkins(
        url, username="deploy-bot", password="11PLANTEDa4c9e2f7b1d3e5a7c9b2d4f6e8", timeout=1
    )


def _job_info(url: str) -> Any:
    return _server(url).get_job_info("deploy-web")


def _build_info(url: str) -> Any:
    return _server(url).get_build_info("deploy-web", 812)


def _create(url: str) -> Any:
    return _server(url).create_job("deploy-web", _XML)


def _build(url: str) -> Any:
    return _server(url).build_job("deploy-web", {"TARGET": "staging"})


def _case(
    id: str,
    expect: frozenset[str],
    reason: str,
    call: Callable[[str], Any],
    routes: dict[str, Reply],
) -> None:
    def run(ctx: Http) -> Any:
        _serve(ctx, routes)
        return call(ctx.http.url)

    FAM.add(id, expect, reason, run)


_DENIED = (
    "<!DOCTYPE html><html><head><title>Access Denied [Jenkins]</title></head><body>"
    '<div id="main-panel"><h1>Access Denied</h1>'
    "<p>deploy-bot is missing the Job/Build permission</p></div></body></html>"
)

_case(
    "bad_token",
    AUTH,
    "HTTP 401: the user's API token is wrong or revoked",
    _job_info,
    {
        "/crumbIssuer/": _html(
            401,
            _jetty(401, "Invalid password/token for user: deploy-bot", "/crumbIssuer/api/json"),
            **{"WWW-Authenticate": 'Basic realm="Jenkins"'},
        )
    },
)
_case(
    "missing_permission",
    AUTH,
    "HTTP 403: the user may read the job but not build it",
    _build,
    {
        "/crumbIssuer/": _CRUMB,
        "POST /job/deploy-web/": _html(
            403,
            _DENIED,
            **{
                "X-You-Are-Authenticated-As": "deploy-bot",
                "X-You-Are-In-Group-Disabled": "JENKINS-39402: use -Dhudson.security."
                "AccessDeniedException2.REPORT_GROUP_HEADERS=true or use /whoAmI to diagnose",
                "X-Required-Permission": "hudson.model.Item.Build",
                "X-Permission-Implied-By": "hudson.model.Hudson.Administer",
            },
        ),
    },
)
_case(
    "crumb_refused",
    AUTH,
    "HTTP 403: the controller refused the CSRF crumb sent with the build",
    _build,
    {
        "/crumbIssuer/": _CRUMB,
        "POST /job/deploy-web/": _html(
            403,
            _jetty(
                403,
                "No valid crumb was included in the request",
                "/job/deploy-web/buildWithParameters",
            ),
        ),
    },
)
_case(
    "job_missing",
    NF,
    "HTTP 404: no job of this name",
    _job_info,
    {"/crumbIssuer/": _CRUMB},
)
_case(
    "build_missing",
    NF,
    "HTTP 404: the job has no build of this number (discarded)",
    _build_info,
    {"/crumbIssuer/": _CRUMB},
)
_case(
    "job_exists",
    EXISTS,
    "the job is there already: python-jenkins's own check finds it before creating",
    _create,
    {
        "/crumbIssuer/": _CRUMB,
        "GET /job/deploy-web/api/json": Reply(
            200, {"_class": "hudson.model.FreeStyleProject", "name": "deploy-web"}, _H
        ),
    },
)
_case(
    "create_race",
    EXISTS,
    "HTTP 400: another client created the job between the check and the create",
    _create,
    {
        "/crumbIssuer/": _CRUMB,
        "POST /createItem": _html(
            400,
            "<!DOCTYPE html><html><head><title>Error [Jenkins]</title></head><body>"
            '<div id="main-panel"><h1>Error</h1>'
            "<p>A job already exists with the name \u2018deploy-web\u2019</p></div></body></html>",
            **{"X-Error": "A job already exists with the name ?deploy-web?"},
        ),
    },
)
_case(
    "bad_config",
    INT | NET,
    "HTTP 500: the caller's config.xml does not parse, Jenkins answers a stack trace",
    _create,
    {
        "/crumbIssuer/": _CRUMB,
        "POST /createItem": _html(
            500,
            "<!DOCTYPE html><html><head><title>Jenkins [Jenkins]</title></head><body>"
            "<h1>Oops!</h1><p>A problem occurred while processing the request.</p>"
            "<pre>java.io.IOException: Unable to read /var/jenkins_home/jobs/deploy-web/config.xml"
            "\nCaused by: com.thoughtworks.xstream.io.StreamException:  : only whitespace content"
            " allowed before start tag</pre></body></html>",
        ),
    },
)
_case(
    "internal",
    NET,
    "HTTP 500: the controller crashed serving the job (its disk is full)",
    _job_info,
    {
        "/crumbIssuer/": _CRUMB,
        "/job/": _html(
            500,
            "<!DOCTYPE html><html><head><title>Jenkins [Jenkins]</title></head><body>"
            "<h1>Oops!</h1><p>A problem occurred while processing the request.</p>"
            "<pre>java.io.IOException: No space left on device</pre></body></html>",
        ),
    },
)
_case(
    "starting_up",
    NET,
    "HTTP 503: Jenkins is still starting and serves nothing yet",
    _job_info,
    {
        "/": _html(
            503,
            "<!DOCTYPE html><html><head><title>Starting Jenkins</title>"
            '<meta http-equiv="refresh" content="10"></head><body>'
            "<h1>Please wait while Jenkins is getting ready to work...</h1>"
            "<p>Your browser will reload automatically when Jenkins is ready.</p></body></html>",
        )
    },
)

transport_cases(FAM, lambda host, port: _job_info(f"http://{host}:{port}/"), dns_port=8080)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not HTTP",
    lambda c: _job_info(f"http://127.0.0.1:{c.net.garbage}/"),
)
