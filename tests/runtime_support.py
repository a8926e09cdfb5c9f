"""Shared helpers for the runtime tests: packs, plugins, HTTP-like errors, planted secrets.

Not a conftest: import what you need (``from runtime_support import ...``; pytest puts
``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import base64
import contextlib
import email.utils
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from control_plane import CodeDoc, Pack, hookimpl
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.outcome import INTERNAL_DETAIL, INTERNAL_MESSAGE, Outcome
from control_plane._kernel.pack import Handler
from control_plane._kernel.registry import LoadedPack, Registry

__all__ = [
    "HTTPLikeError",
    "Response",
    "assert_outcome_contract",
    "error_schema",
    "http_date",
    "invoker_for",
    "make_pack",
    "noop",
    "output_schema",
    "plugin",
    "raising_plugin",
]


def output_schema(
    codes: Sequence[str],
    *,
    validation: bool = False,
    closed: bool = False,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An output schema whose vocabulary is ``codes`` (the enum at error.code)."""
    props: dict[str, Any] = {
        "value": {"type": "integer"},
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string", "enum": list(codes)}},
            "required": ["code"],
        },
    }
    if validation:
        props["validation"] = {"type": "object"}
    props.update(extra or {})
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if closed:
        schema["additionalProperties"] = False
    return schema


def noop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A handler that succeeds with ``{"value": 1}``."""
    return {"value": 1}


def make_pack(
    name: str = "test.pack",
    *,
    codes: Sequence[str] = ("not_found",),
    docs: Mapping[str, CodeDoc | str] | None = None,
    handler: Handler = noop,
    validates: bool | None = None,
    input_schema: Mapping[str, Any] | type | None = None,
    out: Mapping[str, Any] | type | None = None,
    version: str = "1.0.0",
    summary: str = "A pack for tests.",
) -> Pack:
    """A pack declaring ``codes``; pack-specific codes get a generated CodeDoc."""
    if docs is None:
        from control_plane._kernel.vocabulary import BASELINE

        docs = {
            c: CodeDoc(f"{c} happened", retryable=False, recovery_hint=f"handle {c}")
            for c in codes
            if c not in BASELINE
        }
    return Pack(
        name=name,
        version=version,
        summary=summary,
        input_schema=input_schema if input_schema is not None else {"type": "object"},
        output_schema=out if out is not None else output_schema(codes),
        handler=handler,
        codes=docs,
        validates=validates,
    )


@contextlib.contextmanager
def invoker_for(*packs: Pack, **kwargs: Any) -> Iterator[Invoker]:
    """An :class:`Invoker` over a fresh registry holding ``packs``; closed on exit."""
    registry = Registry()
    for pack in packs:
        registry.register(pack, "tests")
    invoker = Invoker(registry, **kwargs)
    try:
        yield invoker
    finally:
        invoker.close()


def plugin(*packs: Pack) -> object:
    """A plugin object whose ``register_packs`` registers ``packs``."""

    class _Plugin:
        @hookimpl
        def register_packs(self, register: Any) -> None:
            for pack in packs:
                register(pack)

    return _Plugin()


def raising_plugin(exc: BaseException, *before: Pack) -> object:
    """A plugin that registers ``before`` and then raises ``exc``."""

    class _Plugin:
        @hookimpl
        def register_packs(self, register: Any) -> None:
            for pack in before:
                register(pack)
            raise exc

    return _Plugin()


class Response:
    """What ``requests``/``httpx`` hang on their errors: a status and headers."""

    def __init__(self, status_code: int, headers: Mapping[str, str] | None = None) -> None:
        self.status_code = status_code
        self.headers = dict(headers or {})


class HTTPLikeError(Exception):
    """An HTTP client error carrying its status on itself or on ``.response``."""

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str] | None = None,
        message: str = "",
        *,
        on_response: bool = False,
    ) -> None:
        super().__init__(message or f"HTTP {status}")
        if on_response:
            self.response = Response(status, headers)
        else:
            self.status_code = status
            self.headers = dict(headers or {})


def http_date(offset: float, now: float | None = None) -> str:
    """An HTTP-date ``offset`` seconds from ``now``."""
    return email.utils.formatdate((time.time() if now is None else now) + offset, usegmt=True)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def error_schema_validator() -> Any:
    """A jsonschema validator for ``schemas/error.schema.json`` (with its $ref resolved)."""
    import jsonschema
    from referencing import Registry as RefRegistry
    from referencing import Resource

    from control_plane._resources import load_schema_file

    error = load_schema_file("error.schema.json")
    validation = load_schema_file("validation.schema.json")
    refs = RefRegistry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (error, validation)]
    )
    return jsonschema.Draft202012Validator(error, registry=refs)


_ERROR_VALIDATOR: Any = None


def error_schema() -> Any:
    global _ERROR_VALIDATOR  # noqa: PLW0603 - built once, lazily
    if _ERROR_VALIDATOR is None:
        _ERROR_VALIDATOR = error_schema_validator()
    return _ERROR_VALIDATOR


def assert_outcome_contract(
    outcome: Outcome,
    loaded: LoadedPack,
    invoker: Invoker | None = None,
    secrets: Iterable[str] = (),
) -> None:
    """Everything the contract promises about one outcome."""
    data = outcome.to_dict()
    blob = orjson.dumps(data)
    assert Outcome.from_dict(orjson.loads(blob)) == outcome
    assert Outcome.from_dict(data) == outcome
    for secret in secrets:
        assert secret.encode() not in blob, f"secret {secret!r} leaked: {blob[:2000]!r}"
    if outcome.error is None:
        assert outcome.result is not None
        return
    error = outcome.error
    assert error.code in loaded.vocabulary, (error.code, list(loaded.vocabulary))
    effective_enum = _effective_enum(loaded)
    assert error.code in effective_enum
    assert error.retryable == loaded.vocabulary[error.code].retryable
    errors = sorted(error_schema().iter_errors(data["error"]), key=str)
    assert not errors, errors[0].message
    if error.code == "rate_limited":
        assert error.retry_after is not None
        assert error.retry_after >= 0
    if error.code == "schema_mismatch":
        assert error.partial is True
        assert isinstance(error.partial_result, dict)
    if error.code == "internal_error":
        assert error.reference_id
        assert error.detail == INTERNAL_DETAIL
        assert error.message == INTERNAL_MESSAGE
        if invoker is not None:
            assert invoker.incidents.get(error.reference_id) is not None
    if error.code == "artifact_failed":
        assert error.checks is not None


def _effective_enum(loaded: LoadedPack) -> list[str]:
    from control_plane._kernel.registry import _code_node

    node, problem = _code_node(loaded.output_schema)
    assert node is not None, problem
    return list(node["enum"])
