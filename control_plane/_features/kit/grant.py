"""The grant the kit runs a pack under: the pack's declaration over roots the kit made, or
what :class:`~control_plane._features.kit.PackTarget` states (``grant=``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from control_plane._kernel.reach import Grant, Grants, Reach, parse_grant

__all__ = ["KitRoots"]

#: The roots a declaration or a stated grant may name that the kit replaces by its own
#: directories: a test puts its files there, never in the developer's real ones.
_KIT_ROOTS = ("$CWD", "$TMP")


class KitRoots:
    """Directories the kit made for one run, standing for ``$CWD`` and ``$TMP``, and the
    grant of the pack under test over them (removed by :meth:`close`)."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="packkit-"))
        self._roots = {name: self.base / name.strip("$").lower() for name in _KIT_ROOTS}
        for path in self._roots.values():
            path.mkdir()

    def root(self, name: str) -> Path:
        """The directory standing for ``name`` (``"$CWD"`` or ``"$TMP"``) in this run."""
        try:
            return self._roots[name]
        except KeyError:
            raise ValueError(
                f"the kit makes roots for {', '.join(_KIT_ROOTS)}, not {name!r}"
            ) from None

    def _mapped(self, roots: Sequence[str] | None) -> tuple[str, ...] | None:
        if roots is None:
            return None
        return tuple(str(self._roots[r]) if r in self._roots else r for r in roots)

    def grant(self, declared: Reach | None, stated: Mapping[str, Any] | None) -> Grant | None:
        """What the pack runs under: ``stated`` (``--grant``'s keys: ``fs.read``,
        ``fs.write``, ``egress``, ``programs``, ``credentials``; a string or a list of
        them each) when given, else the declaration; either way with ``$CWD`` and
        ``$TMP`` the kit's own directories. ``None`` for a pack that declares nothing and
        is granted nothing (the kit runs it unconfined, as ``--trust`` would)."""
        if stated is not None:
            grants: dict[str, Grant] = {}
            for key, value in stated.items():
                values = [value] if isinstance(value, str) else list(value)
                if not values:
                    grants = parse_grant(f"kit:{key}=", grants)
                for one in values:
                    grants = parse_grant(f"kit:{key}={one}", grants)
            base = grants.get("kit", Grant())
        elif declared is not None:
            base = Grant(
                reads=declared.reads,
                writes=declared.writes,
                egress=declared.egress,
                programs=declared.programs,
                ambient_credentials=declared.ambient_credentials,
            )
        else:
            return None
        return Grant(
            reads=self._mapped(base.reads),
            writes=self._mapped(base.writes),
            egress=base.egress,
            programs=base.programs,
            ambient_credentials=base.ambient_credentials,
        )

    def runtime_options(
        self, name: str, declared: Reach | None, stated: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """``RuntimeConfig`` keywords that run pack ``name`` in this process under its kit
        grant, its plugin's other packs too (trusted: the kit imported the plugin and injects
        faults in this process; ``packctl serve`` runs a pack that declares no reach in a
        confined worker)."""
        from control_plane._runtime.runtime import TRUST_ALL

        grant = self.grant(declared, stated)
        grants = Grants({} if grant is None else {name: grant})
        return {"grants": grants, "trust": TRUST_ALL}

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
