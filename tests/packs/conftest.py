"""Fixtures for the built-in packs: an Invoker per pack, real servers, real repos, real media."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pack_helpers import GIT_PASSWORD, GIT_USER, granted
from pack_servers import GitSmartHTTP, Repo, git_daemon, make_repo

from control_plane._kernel.reach import Grant


@pytest.fixture(autouse=True)
def tmp_granted() -> Iterator[None]:
    """The tests' repositories and destinations live under the temporary directory and
    their git servers on loopback: the git packs are granted both (by default they read
    nothing, write only to scratch and reach public addresses only). Other packs' grants
    given by a module's fixture stay."""
    tmp = ("$TMP",)
    egress = ("public", "loopback")
    with granted(
        {
            "git.ls_remote": Grant(reads=tmp, egress=egress),
            "git.clone": Grant(reads=tmp, writes=tmp, egress=egress),
        }
    ):
        yield


@pytest.fixture(scope="session")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """A bare repository (main, feature, tag v1.0) under its own root directory."""
    return make_repo(tmp_path_factory.mktemp("repos"))


@pytest.fixture(scope="session")
def daemon_port(git_repo: Repo) -> Iterator[int]:
    """``git daemon`` on a free loopback port, exporting the repo root."""
    with git_daemon(git_repo.root) as port:
        yield port


@pytest.fixture(scope="session")
def smart_http(git_repo: Repo) -> Iterator[GitSmartHTTP]:
    """Smart-HTTP git behind Basic auth (``GIT_USER`` / ``GIT_PASSWORD``)."""
    with GitSmartHTTP(git_repo.root, GIT_USER, GIT_PASSWORD) as server:
        yield server


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    """An empty directory nothing is on (PATH for the dependency_missing tests)."""
    path = tmp_path / "empty-bin"
    path.mkdir()
    return path
