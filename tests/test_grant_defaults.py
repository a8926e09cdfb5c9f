"""Issue 41 C, in process: defaults that do not depend on where the server was started, and
cloud metadata addresses that only their own word grants. The real ``packctl serve`` side:
tests/packs/test_defaults_serve.py.
"""

from __future__ import annotations

import ipaddress
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

import packs.av_validate as av_validate
import packs.git as git_pack
import packs.http_fetch.client as fetch_client
from control_plane import Reach
from control_plane._features.grants.connect import check_destination
from control_plane._kernel.egress import EgressPolicy, EgressRefused
from control_plane._kernel.errors import PackError
from control_plane._kernel.reach import (
    Grant,
    GrantError,
    Grants,
    PackReach,
    Reaches,
)

AV = "av.validate"
#: What the built-in packs declare (read from each Pack, as a runtime does).
DECLARED = {
    AV: av_validate.PACK.reach,
    **{pack.name: pack.reach for pack in (git_pack.LS_REMOTE, git_pack.CLONE)},
}


def started_in_root(grants: Grants | None = None) -> Reaches:
    """The reaches of a server as if ``packctl serve`` had been started in ``/``."""
    return Reaches(grants, DECLARED, start_dir="/")


def test_av_validate_reads_the_same_wherever_the_server_starts() -> None:
    reaches = started_in_root()
    assert reaches.declared_data(AV) is not None
    assert reaches.declared_data(AV)["fs.read"] == ["$TMP"]  # type: ignore[index]
    reach = reaches.reach_for(AV)
    assert reach.reads == (os.path.realpath(tempfile.gettempdir()),)
    reaches.check_roots([AV])  # the default starts anywhere
    with pytest.raises(PackError) as caught:
        reach.readable("/etc/passwd")
    assert caught.value.code == "not_permitted"


def test_a_root_that_resolves_to_slash_is_never_a_root(tmp_path: Path) -> None:
    link = tmp_path / "everything"
    link.symlink_to("/")
    for spelled in ("$CWD", "/", str(link), "/tmp/.."):
        reach = PackReach(
            "team.pack", Reach(reads=(spelled, "$TMP"), writes=(spelled,)), start_dir="/"
        )
        assert "/" not in reach.reads and "/" not in reach.writes
        assert reach.whole_fs == (f"fs.read {spelled!r}", f"fs.write {spelled!r}")
        with pytest.raises(PackError):
            reach.readable("/etc/passwd")
    with pytest.raises(GrantError) as refused:
        started_in_root(Grants({AV: Grant(reads=("/",))})).check_roots(["git.clone", AV])
    assert "av.validate: fs.read '/' resolves to '/', the whole file system" in str(refused.value)


#: Each well-known metadata address, and a network an operator might grant that covers it.
METADATA = [
    ("169.254.169.254", "169.254.0.0/16"),
    ("169.254.169.253", "169.254.169.0/24"),
    ("169.254.170.2", "169.254.0.0/16"),
    ("169.254.170.23", "0.0.0.0/0"),
    ("100.100.100.200", "100.64.0.0/10"),
    ("168.63.129.16", "168.63.0.0/16"),
    ("fd00:ec2::254", "fd00::/8"),
    ("fd00:ec2::23", "::/0"),
    ("::ffff:169.254.169.254", "169.254.0.0/16"),
    ("::ffff:169.254.169.254", "::ffff:0:0/96"),
]


@pytest.mark.parametrize(("address", "network"), METADATA)
def test_a_network_grant_never_covers_a_metadata_address(address: str, network: str) -> None:
    ip = ipaddress.ip_address(address)
    assert not EgressPolicy([network]).allows("h", 80, ip)
    assert not EgressPolicy([network, "link-local", "private", "public"]).allows("h", 80, ip)
    assert EgressPolicy(["metadata"]).allows("h", 80, ip)
    with pytest.raises(EgressRefused) as refused:
        check_destination(address, 80, EgressPolicy([network]))
    assert "granted only by the word 'metadata'" in refused.value.reason


def test_a_network_grant_still_covers_the_rest_of_its_range() -> None:
    policy = EgressPolicy(["169.254.0.0/16", "fd00::/8"])
    assert policy.allows("h", 80, ipaddress.ip_address("169.254.10.10"))
    assert policy.allows("h", 80, ipaddress.ip_address("fd00::1"))


def test_http_fetch_under_a_link_local_network_grant_never_connects_to_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[str] = []

    def connector(address: Any, port: int, timeout: float) -> Any:
        attempts.append(str(address))
        raise OSError("the test connects nowhere")

    monkeypatch.setattr(fetch_client, "CONNECTOR", connector)
    policy = EgressPolicy(["169.254.0.0/16", "fd00::/8"])
    for url in (
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
    ):
        with pytest.raises(PackError) as caught:
            fetch_client.fetch({"url": url}, 5, egress=policy)
        assert caught.value.code == "not_permitted", caught.value
        assert "metadata" in str(caught.value)
    assert attempts == []
