"""Possessive repeats and atomic groups as look-aheads: the same matches on every CPython."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["portable"]

#: A quantifier (``{`` only when it is one: ``\\{x}`` and ``{,`` stay literal).
_QUANT = re.compile(r"\*|\+|\?|\{[0-9]*(?:,[0-9]*)?\}")
#: The opening of a group: capturing, ``(?:``, look-arounds, ``(?>``, named, a named
#: back-reference or condition, inline flags.
_GROUP_HEAD = re.compile(
    r"\((?:\?(?:[:=!>]|<[=!]|P<[A-Za-z_][A-Za-z0-9_]*>|P=[A-Za-z_][A-Za-z0-9_]*\)"
    r"|\([A-Za-z0-9_]+\)|[aiLmsux]+(?:-[imsx]+)?[:)]|-[imsx]+:))?"
)
_ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", re.S
)
_LOOKAROUND = ("(?=", "(?!", "(?<=", "(?<!")


def portable(pattern: str) -> str:
    """``pattern`` with every possessive quantifier and atomic group rewritten as an
    atomic look-ahead and a back-reference to what it captured (named ``_a1``, ``_a2``...;
    a pattern must not use those names). Raises :class:`ValueError` on a pattern this
    reader does not follow (a possessive repeat inside a look-behind, unbalanced groups)."""
    names = iter(range(1, 1 << 30))
    out, end = _sequence(pattern, 0, names, behind=False)
    if end != len(pattern):
        raise ValueError(f"unbalanced ')' at {end} in {pattern!r}")
    return out


def _atomic(body: str, names: Iterator[int]) -> str:
    name = f"_a{next(names)}"
    return f"(?=(?P<{name}>{body}))(?P={name})"


def _sequence(pattern: str, i: int, names: Iterator[int], *, behind: bool) -> tuple[str, int]:
    """The rewritten alternatives from ``i`` up to the ``)`` closing them (or the end)."""
    pieces: list[str] = []
    last: int | None = None  # the index in pieces of the atom a quantifier would repeat
    while i < len(pattern) and pattern[i] != ")":
        char = pattern[i]
        quant = _QUANT.match(pattern, i)
        if char == "|":
            pieces.append(char)
            last, i = None, i + 1
        elif quant is not None and (char != "{" or last is not None):
            if last is None:
                raise ValueError(f"nothing to repeat at {i} in {pattern!r}")
            i = quant.end()
            mode = pattern[i] if i < len(pattern) and pattern[i] in "+?" else ""
            i += len(mode)
            if mode == "+":
                if behind:
                    raise ValueError(f"possessive repeat in a look-behind: {pattern!r}")
                pieces[last] = _atomic(pieces[last] + quant.group(0), names)
            else:
                pieces[last] += quant.group(0) + mode
            last = None
        elif char == "(":
            i, piece, quantifiable = _group(pattern, i, names, behind=behind)
            pieces.append(piece)
            last = len(pieces) - 1 if quantifiable else None
        else:
            if char == "[":
                end = _class_end(pattern, i)
            elif char == "\\":
                found = _ESCAPE.match(pattern, i)
                end = found.end() if found is not None else i + 1
            else:
                end = i + 1
            pieces.append(pattern[i:end])
            last, i = len(pieces) - 1, end
    return "".join(pieces), i


def _group(pattern: str, i: int, names: Iterator[int], *, behind: bool) -> tuple[int, str, bool]:
    """The group opening at ``i``: where it ends, its rewritten text, whether a
    quantifier may follow it."""
    head_match = _GROUP_HEAD.match(pattern, i)
    head = head_match.group(0) if head_match is not None else "("
    end = i + len(head)
    if head.startswith("(?P="):
        return end, head, True
    if head.endswith(")") and not head.startswith("(?("):  # inline flags: (?i)
        return end, head, False
    body, close = _sequence(pattern, end, names, behind=behind or head in ("(?<=", "(?<!"))
    if close >= len(pattern):
        raise ValueError(f"missing ')' in {pattern!r}")
    if head == "(?>":
        return close + 1, _atomic(body, names), True
    return close + 1, f"{head}{body})", head not in _LOOKAROUND


def _class_end(pattern: str, i: int) -> int:
    """Just past the character class opening at ``i`` (``]`` first in it is literal)."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    if j >= len(pattern):
        raise ValueError(f"unterminated character class in {pattern!r}")
    return j + 1
