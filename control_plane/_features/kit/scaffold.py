"""``packctl new``: scaffold a pack distribution from the ``templates/pack`` templates."""

from __future__ import annotations

import contextlib
import re
import shutil
import string
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from control_plane import _version
from control_plane._version import DISTRIBUTION

from .static import KitUsageError

__all__ = ["PACK_NAME", "Scaffold", "requirement", "scaffold"]

#: The manifest's pack name pattern: dotted, lower snake case parts.
PACK_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
MODULE_PART = "__module__"
SUFFIX = ".tmpl"


@dataclass(frozen=True)
class Scaffold:
    """What ``packctl new`` wrote."""

    pack_name: str
    module: str
    dist: str
    directory: Path
    files: tuple[Path, ...]


def _walk(node: Traversable, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    out: list[tuple[tuple[str, ...], str]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.is_dir():
            if child.name != "__pycache__":
                out.extend(_walk(child, (*prefix, child.name)))
        elif child.name.endswith(SUFFIX):
            out.append(((*prefix, child.name), child.read_text(encoding="utf-8")))
    return out


def requirement(version: str | None = None) -> str:
    """The scaffold's dependency on capability-packs: the version installed here, up to
    the next release that may break packs (the next minor while 0.x, else the next major).

    capability-packs is not on a public index, so pip must find it installed already (the
    same environment) or in ``--find-links``; pinning to what ``packctl new`` ran on keeps
    the scaffold from asking for a version that environment does not have.
    """
    installed = version if version is not None else _version.version()
    release = re.match(r"^(\d+)\.(\d+)", installed)
    if release is None:  # a source tree never installed: nothing to pin to
        return DISTRIBUTION
    major, minor = int(release.group(1)), int(release.group(2))
    ceiling = f"0.{minor + 1}" if major == 0 else f"{major + 1}"
    return f"{DISTRIBUTION}>={installed.split('+', 1)[0]},<{ceiling}"


def scaffold(name: str, directory: str | Path | None = None) -> Scaffold:
    """Write a new pack distribution for pack ``name`` (e.g. ``acme.word_count``).

    ``directory`` defaults to ``./<dist>``; it must not exist or be empty.
    """
    if not PACK_NAME.match(name):
        raise KitUsageError(
            f"{name!r} is not a pack name: use a dotted lower-case name such as acme.word_count"
        )
    module = name.replace(".", "_")
    dist = module.replace("_", "-")
    target = Path(directory) if directory is not None else Path.cwd() / dist
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise KitUsageError(f"{target} exists and is not an empty directory")
    values = {
        "pack_name": name,
        "module": module,
        "dist": dist,
        "requirement": requirement(),
    }
    root = resources.files("control_plane._features.kit").joinpath("templates", "pack")
    files: list[tuple[Path, str]] = []
    for parts, text in _walk(root):
        rel = [module if part == MODULE_PART else part for part in parts]
        rel[-1] = rel[-1][: -len(SUFFIX)]
        try:
            content = string.Template(text).substitute(values)
        except (KeyError, ValueError) as exc:  # a broken template is our bug; say which
            raise RuntimeError(f"template {'/'.join(parts)}: {exc!r}") from exc
        files.append((target.joinpath(*rel), content))
    _write_all(target, files)
    return Scaffold(name, module, dist, target, tuple(path for path, _ in files))


def _write_all(target: Path, files: list[tuple[Path, str]]) -> None:
    """Write ``files`` under ``target`` (new, or an empty directory), all or nothing: where
    the file system refuses (a file in the way, no permission, no space), what this call
    made is removed and the problem is one :class:`KitUsageError` naming the path."""
    made = [p for p in (*reversed(target.parents), target) if not p.exists()]
    tops = dict.fromkeys(target / path.relative_to(target).parts[0] for path, _ in files)
    try:
        for path, content in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    except OSError as exc:
        for top in tops:  # target was empty: everything in it is ours
            if top.is_dir() and not top.is_symlink():
                shutil.rmtree(top, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    top.unlink()
        for directory in reversed(made):
            shutil.rmtree(directory, ignore_errors=True)
        where = exc.filename or target
        raise KitUsageError(
            f"cannot write the pack into {target}: {where}: {exc.strerror}"
        ) from None
