"""The caller's secrets as known values, scrubbed in every form (raw, percent, base64) the pack
returns.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import quote, quote_plus

from control_plane.tools import scrub

__all__ = ["REDACTED", "Secrets", "looks_secret"]

REDACTED: Final = "[REDACTED]"
#: Shorter literals are not scrubbed (they would erase ordinary text).
MIN_SECRET = 3
#: A base64 form shorter than this would match ordinary base64 by chance.
MIN_B64_FORM = 8
#: Words in a header name that mark its value as a credential.
_SECRET_NAME_WORDS: Final = (
    "auth",
    "token",
    "key",
    "secret",
    "password",
    "passwd",
    "cookie",
    "session",
    "signature",
    "credential",
)


def looks_secret(name: str, value: str) -> bool:
    """Whether a request header carries a credential: by its name, or by its value."""
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_NAME_WORDS) or scrub(value) != value


def _parts(value: str) -> list[str]:
    """The header value, or its token after an auth scheme (``Bearer``, ``Basic``), and
    the pieces a server may echo alone (cookie values)."""
    scheme, _, rest = value.partition(" ")
    out = [rest.strip()] if rest.strip() and scheme.isalpha() else [value]
    for pair in value.split(";"):
        _, eq, cookie = pair.partition("=")
        if eq:
            out.append(cookie.strip())
    return out


def _b64_cores(raw: bytes) -> set[str]:
    """The base64 characters fixed by ``raw`` alone, at each byte alignment, both alphabets."""
    cores: set[str] = set()
    bits = 8 * len(raw)
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii").rstrip("=")
        first = -(-8 * shift // 6)  # the first character with no padding bits in it
        last = (8 * shift + bits) // 6  # one past the last character wholly inside raw
        core = encoded[first:last]
        if len(core) >= MIN_B64_FORM:
            cores.add(core)
            cores.add(core.translate(str.maketrans("+/", "-_")))
    return cores


def _forms(secret: str) -> set[str]:
    forms = {secret}
    for encoded in (quote(secret, safe=""), quote_plus(secret, safe="")):
        forms.add(encoded)
        forms.add(_lower_escapes(encoded))
    forms |= _b64_cores(secret.encode())
    return {form for form in forms if len(form) >= MIN_SECRET}


def _lower_escapes(text: str) -> str:
    parts = text.split("%")
    return parts[0] + "".join("%" + p[:2].lower() + p[2:] for p in parts[1:])


class Secrets:
    """Known secret values; ``text``/``data``/``raw`` replace each of their forms."""

    __slots__ = ("_bytes", "_forms")

    def __init__(self, values: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for value in values:
            for part in _parts(value):
                if len(part) >= MIN_SECRET:
                    forms |= _forms(part)
        # Longest first: a form inside a longer one must not leave the rest behind.
        self._forms = sorted(forms, key=len, reverse=True)
        self._bytes = [form.encode() for form in self._forms]

    def __bool__(self) -> bool:
        return bool(self._forms)

    def text(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text

    def raw(self, body: bytes) -> bytes:
        """The body's bytes with every form replaced (before they are decoded or encoded)."""
        for form in self._bytes:
            if form in body:
                body = body.replace(form, REDACTED.encode())
        return body

    def data(self, value: Any) -> Any:
        """JSON data with every string (keys too) scrubbed."""
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value
