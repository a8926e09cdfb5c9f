"""algoliasearch (Algolia's v4 Python client) against a fake Algolia Search API answering
its documented error bodies (``{"message": ..., "status": 4xx}``); 5xx and transport failures
end, after its host retry strategy, in ``AlgoliaUnreachableHostException``."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Http,
    family,
    http_setup,
)

FAM = family("algoliasearch", "fake Algolia Search API", http_setup, half="heldout3")


def _client(host: str, port: int) -> Any:
    from algoliasearch.http.hosts import Host, HostsCollection
    from algoliasearch.search.client import SearchClientSync
    from algoliasearch.search.config import SearchConfig

    config = SearchConfig("PLANTEDAPPID", "PLANTED-algolia-admin-key")
    config.hosts = HostsCollection([Host(host, scheme="http", port=port)])
    config.max_rate_limit_retries = 0
    config.connect_timeout = 1000
    config.read_timeout = 1000
    config.write_timeout = 1000
    return SearchClientSync.create_with_config(config)


def _search(host: str, port: int) -> Any:
    return _client(host, port).search_single_index("products", {"query": "lamp"})


def _get(host: str, port: int) -> Any:
    return _client(host, port).get_object("products", "sku-42")


def _save(host: str, port: int) -> Any:
    return _client(host, port).save_object("products", {"objectID": "sku-42", "name": "lamp"})


def _add(id: str, call: Any, status: int, message: str, expect: frozenset[str], why: str) -> None:
    def run(ctx: Http) -> Any:
        ctx.http.set(status, {"message": message, "status": status})
        return call("127.0.0.1", ctx.http.port)

    FAM.add(id, expect, f"HTTP {status}: {why}", run)


_add("bad_key", _search, 403, "Invalid Application-ID or API key", AUTH, "wrong app id or key")
_add(
    "acl_missing",
    _save,
    403,
    "Method not allowed with this API key",
    AUTH,
    "a search-only key may not write",
)
_add("no_index", _search, 404, "Index does not exist", NF, "the index does not exist")
_add("no_object", _get, 404, "ObjectID does not exist", NF, "the record does not exist")
_add(
    "record_quota",
    _save,
    403,
    "Record quota exceeded, change plan or delete records.",
    QUOTA,
    "the plan's record quota is used up: a 403 that is not a permission",
)
_add(
    "record_too_big",
    _save,
    400,
    "Record at the position 0 objectID=sku-42 is too big size=154321/10000 bytes. Please have a "
    "look at https://www.algolia.com/doc/guides/sending-and-managing-data/prepare-your-data/"
    "in-depth/index-and-records-size-and-usage-limitations/#record-size-limits",
    INT,
    "the record is over the plan's size limit: it never passes",
)
_add(
    "bad_filter",
    _search,
    400,
    "Invalid syntax for filter: 'price >' ",
    INT,
    "the pack's filter is invalid",
)
_add(
    "too_many",
    _search,
    429,
    "Too many requests",
    RL,
    "the key's rate limit (maxQueriesPerIPPerHour)",
)
_add(
    "server_error",
    _search,
    500,
    "Internal error",
    NET,
    "the only host failed: the retry strategy gives up, unreachable hosts",
)
_add(
    "unavailable",
    _save,
    503,
    "Service Unavailable",
    NET,
    "the only host is unavailable",
)
FAM.add("refused", NET, "nothing listens", lambda c: _search("127.0.0.1", c.net.closed))
FAM.add("dns", NET, "host does not resolve", lambda c: _search(UNRESOLVABLE, 80))
FAM.add(
    "silent",
    TO | NET,
    "the host never answers: its read timeout, reported as unreachable hosts",
    lambda c: _search("127.0.0.1", c.net.silent),
)
FAM.add("dropped", NET, "closed at once", lambda c: _search("127.0.0.1", c.net.close_now))
