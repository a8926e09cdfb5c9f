"""TOML config files: where a key was written, and ``FILE:LINE: key: fault`` messages."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import jsonschema

__all__ = [
    "MAX_TOML_BYTES",
    "TomlFileError",
    "TomlLocator",
    "key_path",
    "one_line",
    "read_toml",
    "schema_problem",
    "split_dotted",
    "where",
]

#: The largest TOML file read (a gate file, a pack repository's ``pyproject.toml``): far
#: beyond any real one.
MAX_TOML_BYTES = 4 * 1024 * 1024


class TomlFileError(ValueError):
    """A TOML file that cannot be used; the message is one line starting with its path."""


def read_toml(
    path: Path, *, what: str = "file", max_bytes: int = MAX_TOML_BYTES
) -> tuple[str, dict[str, Any]]:
    """The text and the data of the TOML file at ``path``, or one :class:`TomlFileError`
    whatever is wrong with it: missing, unreadable, larger than ``max_bytes``, not UTF-8,
    not TOML, or nested past the parser (tomllib recurses: ``x = [[[...]]]`` raises
    RecursionError). ``what`` names the file in messages (``gate file``)."""
    try:
        with path.open("rb") as file:
            raw = file.read(max_bytes + 1)
    except FileNotFoundError:
        raise TomlFileError(f"{path}: no such {what}") from None
    except OSError as exc:
        raise TomlFileError(f"{path}: cannot read the {what}: {exc}") from None
    if len(raw) > max_bytes:
        size = path.stat().st_size
        raise TomlFileError(f"{path}: the file is {size} bytes: a {what} holds at most {max_bytes}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TomlFileError(f"{path}: cannot read the {what}: {exc}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlFileError(f"{path}: not valid TOML: {one_line(str(exc))}") from None
    except RecursionError:
        raise TomlFileError(f"{path}: not valid TOML: nests too deeply for the parser") from None


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) as one space."""
    return " ".join(text.split())


def key_path(keys: Sequence[str | int]) -> str:
    """``["steps", 0, "fail_on"]`` -> ``steps[0].fail_on``."""
    out = ""
    for key in keys:
        if isinstance(key, int):
            out += f"[{key}]"
        elif re.fullmatch(r"[A-Za-z0-9_\-]+", key):
            out += f".{key}" if out else key
        else:
            out += f"[{key!r}]"
    return out


def where(path: Path | str, locator: TomlLocator, keys: Sequence[str | int]) -> str:
    """``FILE:LINE: key.path: `` for a message about ``keys`` (no line when unknown)."""
    line = locator.line(keys)
    shown = key_path([*locator.root, *keys]) or "(top level)"
    return f"{path}:{line}: {shown}: " if line else f"{path}: {shown}: "


_BARE = r"[A-Za-z0-9_\-]+"
_BASIC = r'"(?:[^"\\]|\\.)*"'
_LITERAL = r"'[^']*'"
_KEY = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_AOT_HEADER = re.compile(rf"^\[\[\s*({_DOTTED})\s*\]\]")
_TABLE_HEADER = re.compile(rf"^\[\s*({_DOTTED})\s*\]")
_ASSIGNMENT = re.compile(rf"^({_DOTTED})\s*=")
_KEY_PART = re.compile(_KEY)


def split_dotted(text: str) -> tuple[str, ...]:
    parts: list[str] = []
    for match in _KEY_PART.finditer(text):
        token = match.group(0)
        if token.startswith('"'):
            parts.append(cast(str, tomllib.loads(f"k = {token}")["k"]))
        elif token.startswith("'"):
            parts.append(token[1:-1])
        else:
            parts.append(token)
    return tuple(parts)


class TomlLocator:
    """Maps key paths of a TOML document to the line that defines them.

    A line scanner over table headers, array-of-tables headers and ``key =`` lines:
    enough for configuration files. Keys inside inline tables or multi-line values map to the
    line of the nearest enclosing key.
    """

    def __init__(self, text: str, root: tuple[str, ...] = ()) -> None:
        self.root = root
        self.lines: dict[tuple[str | int, ...], int] = {}
        counts: dict[tuple[str | int, ...], int] = {}
        current: tuple[str | int, ...] = ()

        def resolve(parts: tuple[str, ...]) -> tuple[str | int, ...]:
            out: tuple[str | int, ...] = ()
            for part in parts:
                out = (*out, part)
                if out in counts:
                    out = (*out, counts[out])
            return out

        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if match := _AOT_HEADER.match(line):
                parts = split_dotted(match.group(1))
                table = (*resolve(parts[:-1]), parts[-1])
                counts[table] = counts.get(table, -1) + 1
                current = (*table, counts[table])
                self.lines.setdefault(table, lineno)
                self.lines[current] = lineno
            elif match := _TABLE_HEADER.match(line):
                current = resolve(split_dotted(match.group(1)))
                self.lines.setdefault(current, lineno)
            elif match := _ASSIGNMENT.match(line):
                self.lines.setdefault((*current, *split_dotted(match.group(1))), lineno)

    def line(self, keys: Sequence[str | int]) -> int | None:
        """The line of ``keys`` (relative to the root), or of its nearest known parent."""
        full: tuple[str | int, ...] = (*self.root, *keys)
        while full:
            if full in self.lines:
                return self.lines[full]
            full = full[:-1]
        return None


def schema_problem(
    validator: jsonschema.protocols.Validator,
    data: Mapping[str, Any],
    path: Path | str,
    locator: TomlLocator,
    explain: Callable[[jsonschema.exceptions.ValidationError], str | None] = lambda _: None,
) -> str | None:
    """The best schema violation of ``data`` as ``FILE:LINE: key: message (and N more)``,
    or ``None`` when it conforms. An unknown key names itself and the allowed ones;
    ``explain`` may give a file-specific message for an error (``None``: the schema's own)."""
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = jsonschema.exceptions.best_match(errors)
    assert error is not None
    keys: list[str | int] = list(error.absolute_path)
    message = explain(error) or error.message
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(cast(Mapping[str, Any], error.schema.get("properties", {})))
        extra = sorted(k for k in error.instance if k not in allowed)
        if extra:
            keys.append(extra[0])
            message = f"unknown key (allowed: {', '.join(sorted(allowed))})"
    more = len(errors) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return where(path, locator, keys) + f"{one_line(message)}{suffix}"
