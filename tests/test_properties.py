"""Property tests: whatever a handler raises or returns, the outcome keeps the contract.

For random packs (random subsets of the baseline vocabulary plus pack codes with random
``absorbs``) and random handlers (sync and async) that raise arbitrary exceptions or return
malformed output, every outcome:

* carries a code inside the pack's effective vocabulary, with the payload its code needs;
* survives ``Outcome.from_dict(outcome.to_dict())`` unchanged;
* never carries a planted secret anywhere in its serialized form;
* is deterministic: the same failure maps to the same code.

The outcome model itself is frozen, forbids unknown keys, and ``to_dict``/``from_dict`` are
strict inverses (for random outcomes, through real JSON bytes too). The classification
table and the nearest-code mapping (declared -> absorbing pack code -> fallback ->
``internal_error``) are also pinned down by example, row by row.
"""

from __future__ import annotations

import asyncio
import errno
import http.client
import socket
import ssl
import string
import subprocess
from dataclasses import dataclass, field
from typing import Any

import orjson
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_support import (
    HTTPLikeError,
    assert_outcome_contract,
    b64,
    http_date,
    invoker_for,
    output_schema,
)

from control_plane import Check, CodeDoc, FieldViolation, Pack, PackError, Result
from control_plane._kernel.classify import classify, parse_retry_after
from control_plane._kernel.outcome import (
    CheckRecord,
    ErrorEnvelope,
    Outcome,
    ValidationRecord,
    Violation,
)
from control_plane._kernel.redact import scrub, scrub_data
from control_plane._kernel.vocabulary import BASELINE, WELL_KNOWN_PACK_CODES

BASELINE_CODES = list(BASELINE)
PACK_CODE_POOL = ["dependency_missing", "download_failed", "quota_exceeded", "repo_locked"]
UNDECLARED = "totally_undeclared"

SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------- secrets


@dataclass(frozen=True)
class Secret:
    """Text planted in a failure, and the sensitive part that must never travel."""

    text: str
    needle: str


ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
# "Zq7" keeps the needles out of hex ids and gives every token the entropy real ones have.
tokens = st.text(ALNUM, min_size=14, max_size=24).map(lambda t: "Zq7" + t)


@st.composite
def secrets_(draw: st.DrawFn) -> Secret:
    tok = draw(tokens)
    kind = draw(
        st.sampled_from(
            [
                "bearer",
                "basic",
                "url",
                "pem",
                "aws",
                "jwt",
                "token",
                "password",
                "json",
                "aws2",
                "quoted_json",
            ]
        )
    )
    if kind == "bearer":
        return Secret(f"Authorization: Bearer {tok}", tok)
    if kind == "basic":
        creds = b64(f"deploy:{tok}")
        return Secret(f"Authorization: Basic {creds}", creds)
    if kind == "url":
        return Secret(f"https://deploy:{tok}@git.example.com/org/repo.git", tok)
    if kind == "pem":
        body = "MIIEow" + tok + tok[::-1]
        return Secret(
            f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n{tok}==\n-----END RSA PRIVATE KEY-----",
            body,
        )
    if kind == "aws":
        key = "AKIA" + draw(st.text(UPPER_ALNUM, min_size=16, max_size=16))
        return Secret(f"aws key {key} rejected", key)
    if kind == "aws2":
        return Secret(f"aws_secret_access_key={tok}/{tok}", tok)
    if kind == "jwt":
        payload = "eyJ" + tok
        return Secret(f"eyJhbGciOiJIUzI1NiJ9.{payload}.{tok[::-1]}", payload)
    if kind == "token":
        return Secret(f"token={tok}", tok)
    if kind == "password":
        return Secret(f"DB_PASSWORD={tok}", tok)
    if kind == "quoted_json":  # a JSON document quoted inside another message
        return Secret(f'{{\\"api_key\\": \\"{tok}\\", \\"user\\": \\"bob\\"}}', tok)
    return Secret(f'{{"password": "{tok}", "user": "bob"}}', tok)


plain_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20).filter(
    lambda t: "eyJ" not in t
)


@st.composite
def messages(draw: st.DrawFn, planted: list[Secret]) -> str:
    """A message, sometimes carrying a planted secret between ordinary words."""
    before, after = draw(plain_text), draw(plain_text)
    if draw(st.booleans()):
        secret = draw(secrets_())
        planted.append(secret)
        return f"{before} {secret.text} {after}"
    return before


# --------------------------------------------------------------------------- exceptions


class BadStr(Exception):
    """An exception that cannot even render itself."""

    def __str__(self) -> str:
        raise RuntimeError("no str for you")


class BadStrConnection(ConnectionError):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


class HostileAttrs(Exception):
    """Properties that raise where the classifier looks for HTTP facts."""

    @property
    def status_code(self) -> int:
        raise RuntimeError("boom")

    @property
    def response(self) -> Any:
        raise KeyError("response")

    @property
    def reason(self) -> Any:
        raise ValueError("reason")


class WrapperError(Exception):
    pass


def _make_leaf(kind: str, message: str) -> BaseException:
    makers: dict[str, Any] = {
        "TimeoutError": TimeoutError,
        "ConnectionRefusedError": ConnectionRefusedError,
        "ConnectionResetError": ConnectionResetError,
        "BrokenPipeError": BrokenPipeError,
        "gaierror": lambda m: socket.gaierror(socket.EAI_NONAME, m),
        "FileNotFoundError": FileNotFoundError,
        "NotADirectoryError": NotADirectoryError,
        "PermissionError": PermissionError,
        "SSLError": ssl.SSLError,
        "TimeoutExpired": lambda m: subprocess.TimeoutExpired(["git", "fetch", m], 5),
        "ValueError": ValueError,
        "KeyError": KeyError,
        "RuntimeError": RuntimeError,
        "ZeroDivisionError": ZeroDivisionError,
        "SystemExit": SystemExit,
        "BadStr": BadStr,
        "BadStrConnection": BadStrConnection,
        "HostileAttrs": HostileAttrs,
        "ExceptionGroup": lambda m: ExceptionGroup(m or "group", [ValueError(m)]),
    }
    exc: BaseException = makers[kind](message)
    return exc


LEAF_KINDS = [
    "TimeoutError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "BrokenPipeError",
    "gaierror",
    "FileNotFoundError",
    "NotADirectoryError",
    "PermissionError",
    "SSLError",
    "TimeoutExpired",
    "ValueError",
    "KeyError",
    "RuntimeError",
    "ZeroDivisionError",
    "SystemExit",
    "BadStr",
    "BadStrConnection",
    "HostileAttrs",
    "ExceptionGroup",
]
ERRNOS = [*sorted({errno.ETIMEDOUT, errno.ECONNREFUSED, errno.ENOENT, errno.EACCES}), 0, 17, 22]
STATUSES = [200, 302, 401, 403, 404, 407, 408, 410, 418, 429, 500, 501, 502, 503, 504, 599]


@dataclass(frozen=True)
class ExcSpec:
    """A recipe for a fresh exception (chains and cycles included), so it can be rebuilt."""

    kind: str  # a LEAF_KINDS entry, "errno", "http" or "pack"
    message: str = ""
    number: int = 0  # errno or HTTP status
    headers: tuple[tuple[str, str], ...] = ()
    on_response: bool = False
    code: str = ""
    retry_after: float | None = None
    partial: dict[str, Any] | None = field(default=None, hash=False)
    violations: tuple[tuple[str, str], ...] = ()
    #: Wrappers, innermost first: ("cause" | "context" | "hidden" | "reason", message).
    wraps: tuple[tuple[str, str], ...] = ()
    cycle: bool = False

    def build(self) -> BaseException:
        if self.kind == "errno":
            leaf: BaseException = OSError(self.number, self.message)
        elif self.kind == "http":
            leaf = HTTPLikeError(
                self.number, dict(self.headers), self.message, on_response=self.on_response
            )
        elif self.kind == "pack":
            leaf = PackError(
                self.code,
                self.message,
                retry_after=self.retry_after,
                partial_result=self.partial,
                violations=[FieldViolation(f, d) for f, d in self.violations],
            )
        else:
            leaf = _make_leaf(self.kind, self.message)
        outer = leaf
        for how, text in self.wraps:
            wrapper = WrapperError(text)
            if how == "cause":
                wrapper.__cause__ = outer
            elif how == "context":
                wrapper.__context__ = outer
            elif how == "hidden":  # raise ... from None
                wrapper.__context__ = outer
                wrapper.__suppress_context__ = True
            else:
                wrapper.reason = outer  # type: ignore[attr-defined]
            outer = wrapper
        if self.cycle and outer is not leaf:
            leaf.__context__ = outer
        return outer


retry_after_values = st.one_of(
    st.integers(-10, 7200).map(str),
    st.floats(-5, 1e6, allow_nan=False).map(repr),
    st.integers(-3600, 3600).map(http_date),
    st.sampled_from(["", "soon", "inf", "nan", "-0", "Wed, 99 Foo 2015", "1e999"]),
)


@st.composite
def exc_specs(draw: st.DrawFn, planted: list[Secret], codes: list[str]) -> ExcSpec:
    kind = draw(st.sampled_from([*LEAF_KINDS, "errno", "http", "pack", "pack", "pack"]))
    message = draw(messages(planted))
    spec: dict[str, Any] = {"kind": kind, "message": message}
    if kind == "errno":
        spec["number"] = draw(st.sampled_from(ERRNOS))
    elif kind == "http":
        spec["number"] = draw(st.sampled_from(STATUSES))
        if draw(st.booleans()):
            header = draw(st.sampled_from(["Retry-After", "retry-after"]))
            spec["headers"] = ((header, draw(retry_after_values)),)
        spec["on_response"] = draw(st.booleans())
    elif kind == "pack":
        spec["code"] = draw(st.sampled_from([*BASELINE_CODES, *PACK_CODE_POOL, UNDECLARED, *codes]))
        spec["retry_after"] = draw(st.none() | st.floats(0, 1e6, allow_nan=False))
        if draw(st.booleans()):
            spec["partial"] = {"value": 3, "note": draw(messages(planted))}
        if draw(st.booleans()):
            spec["violations"] = (("/value", draw(messages(planted))),)
    wraps = draw(
        st.lists(
            st.tuples(st.sampled_from(["cause", "context", "hidden", "reason"]), plain_text),
            max_size=4,
        )
    )
    spec["wraps"] = tuple(wraps)
    spec["cycle"] = draw(st.booleans())
    return ExcSpec(**spec)


# --------------------------------------------------------------------------- returns


@dataclass(frozen=True)
class ReturnSpec:
    """A recipe for what a handler returns (rebuilt fresh for each call)."""

    kind: str
    data: Any = field(default=None, hash=False)

    def build(self) -> Any:
        if self.kind == "result":
            output, checks = self.data
            return Result(output, [Check(*c) for c in checks])
        if self.kind == "bad_checks":
            return Result({"value": 1}, [Check("ok", "pass", "fine"), self.data])
        if self.kind == "result_non_mapping":
            return Result(self.data)  # type: ignore[arg-type]
        if self.kind == "non_json":
            return {
                "bytes": {"value": 1, "blob": b"raw body"},
                "set": {"value": {1, 2}},
                "bigint": {"value": 2**70},
                "intkey": {1: 2},
                "nan": {"value": float("nan")},
                "cycle": _cyclic(),
            }[self.data]
        return self.data


def _cyclic() -> dict[str, Any]:
    doc: dict[str, Any] = {"value": 1}
    doc["self"] = doc
    return doc


severities = st.sampled_from(["pass", "warn", "fail"])


@st.composite
def return_specs(draw: st.DrawFn, planted: list[Secret], codes: list[str]) -> ReturnSpec:
    kind = draw(
        st.sampled_from(
            [
                "valid",
                "result",
                "wrong_type",
                "non_dict",
                "error_doc",
                "bad_validation",
                "bad_validation_secret",
                "bad_checks",
                "result_non_mapping",
                "non_json",
            ]
        )
    )
    if kind == "valid":
        return ReturnSpec("valid", {"value": draw(st.integers(-(2**63), 2**63 - 1))})
    if kind == "result":
        checks = draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["duration", "codec", "size", "audio.rate"]),
                    severities,
                    messages(planted),
                    st.none() | messages(planted),
                    st.none() | st.builds(lambda m: {"seen": m, "n": 3}, messages(planted)),
                    st.none() | messages(planted),
                ),
                max_size=4,
            )
        )
        return ReturnSpec("result", ({"value": draw(st.integers(0, 9))}, tuple(checks)))
    if kind == "wrong_type":
        return ReturnSpec("wrong_type", {"value": draw(messages(planted)), "extra": [1, "x"]})
    if kind == "non_dict":
        return ReturnSpec("non_dict", draw(st.sampled_from([[], "text", None, 42, 3.5, (1,)])))
    if kind == "error_doc":
        code = draw(st.sampled_from([*BASELINE_CODES, *PACK_CODE_POOL, UNDECLARED, *codes, 7]))
        error: dict[str, Any] = {"code": code, "message": draw(messages(planted))}
        if draw(st.booleans()):
            error["retry_after"] = draw(
                st.sampled_from([-1, 0, 2.5, float("nan"), float("inf"), "5", None, True])
            )
        if draw(st.booleans()):
            error["partial_result"] = {"value": 1, "note": draw(messages(planted))}
        return ReturnSpec("error_doc", {"error": error})
    if kind == "bad_validation":  # no secrets: an open, non-validating schema accepts it
        junk = draw(
            st.sampled_from(
                [
                    "string",
                    {"status": "meh"},
                    {"status": "fail", "checks": [{"id": "Bad Id", "severity": "x"}]},
                    {"status": "pass", "checks": [{"id": "ok", "severity": "pass"}]},
                ]
            )
        )
        return ReturnSpec("bad_validation", {"value": 1, "validation": junk})
    if kind == "bad_validation_secret":  # invalid value, so never a successful result
        junk = {"status": "fail", "checks": [{"id": "x", "severity": "bad", "message": ""}]}
        junk["checks"][0]["message"] = draw(messages(planted))
        return ReturnSpec("bad_validation_secret", {"value": "nope", "validation": junk})
    if kind == "bad_checks":
        bad = draw(
            st.sampled_from(
                [Check("x", "error", "bad severity"), Check("Bad Id!", "fail", "bad id"), "x"]  # type: ignore[arg-type]
            )
        )
        return ReturnSpec("bad_checks", bad)
    if kind == "result_non_mapping":
        return ReturnSpec("result_non_mapping", draw(st.sampled_from([[1], "x", None])))
    return ReturnSpec(
        "non_json", draw(st.sampled_from(["bytes", "set", "bigint", "intkey", "nan", "cycle"]))
    )


# --------------------------------------------------------------------------- packs


@dataclass(frozen=True)
class PackSpec:
    codes: tuple[str, ...]
    absorbs: tuple[tuple[str, tuple[str, ...], bool], ...]
    validates: bool
    closed: bool

    def docs(self) -> dict[str, CodeDoc]:
        return {
            code: CodeDoc(
                f"{code} happened", retryable=retryable, recovery_hint="try again", absorbs=absorbs
            )
            for code, absorbs, retryable in self.absorbs
        }


@st.composite
def pack_specs(draw: st.DrawFn) -> PackSpec:
    baseline = draw(st.lists(st.sampled_from(BASELINE_CODES), unique=True, max_size=8))
    own = draw(st.lists(st.sampled_from(PACK_CODE_POOL), unique=True, max_size=3))
    if not baseline and not own:
        baseline = [draw(st.sampled_from(BASELINE_CODES))]
    absorbs = tuple(
        (
            code,
            tuple(draw(st.lists(st.sampled_from(BASELINE_CODES), unique=True, max_size=3))),
            draw(st.booleans()),
        )
        for code in own
    )
    codes = tuple(draw(st.permutations(baseline + own)))
    return PackSpec(codes, absorbs, draw(st.booleans()), draw(st.booleans()))


@dataclass(frozen=True)
class Behaviour:
    raises: ExcSpec | None
    returns: ReturnSpec | None
    is_async: bool
    strict: bool
    fail_on: str

    def handler(self) -> Any:
        def produce() -> Any:
            if self.raises is not None:
                raise self.raises.build()
            assert self.returns is not None
            return self.returns.build()

        if self.is_async:

            async def handler(doc: dict[str, Any], ctx: Any) -> Any:
                await asyncio.sleep(0)
                return produce()

            return handler

        def sync_handler(doc: dict[str, Any], ctx: Any) -> Any:
            return produce()

        return sync_handler


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[PackSpec, Behaviour, list[Secret]]:
    pack = draw(pack_specs())
    planted: list[Secret] = []
    codes = list(pack.codes)
    if draw(st.booleans()):
        behaviour = Behaviour(
            draw(exc_specs(planted, codes)),
            None,
            draw(st.booleans()),
            draw(st.booleans()),
            draw(st.sampled_from(["fail", "warn"])),
        )
    else:
        behaviour = Behaviour(
            None,
            draw(return_specs(planted, codes)),
            draw(st.booleans()),
            draw(st.booleans()),
            draw(st.sampled_from(["fail", "warn"])),
        )
    return pack, behaviour, planted


def _pack(spec: PackSpec, behaviour: Behaviour) -> Pack:
    return Pack(
        name="prop.pack",
        version="1.0.0",
        summary="A random pack.",
        input_schema={"type": "object"},
        output_schema=output_schema(spec.codes, validation=spec.validates, closed=spec.closed),
        handler=behaviour.handler(),
        codes=spec.docs(),
    )


# --------------------------------------------------------------------------- properties


@settings(SETTINGS, max_examples=220)
@given(scenarios())
def test_every_outcome_keeps_the_contract(
    scenario: tuple[PackSpec, Behaviour, list[Secret]],
) -> None:
    spec, behaviour, planted = scenario
    with invoker_for(_pack(spec, behaviour), max_workers=2) as invoker:
        loaded = invoker.registry.get("prop.pack")
        kwargs = {"strict": behaviour.strict, "fail_on": behaviour.fail_on}
        first = invoker.invoke_sync("prop.pack", b"{}", **kwargs)
        second = invoker.invoke_sync("prop.pack", b"{}", **kwargs)
        needles = [s.needle for s in planted]
        assert_outcome_contract(first, loaded, invoker, needles)
        assert_outcome_contract(second, loaded, invoker, needles)
        assert first.code == second.code, "the mapping must be deterministic"

        raised = behaviour.raises
        # ``raise ... from None`` hides what it wraps, as Python's own traceback does.
        visible = raised is not None and all(how != "hidden" for how, _ in raised.wraps)
        if raised is not None and raised.kind == "pack" and visible:
            code = raised.code
            if code in loaded.declared and code != "internal_error":
                assert first.code == code, "a declared typed code passes through unchanged"
            if code not in BASELINE and code not in loaded.vocabulary:
                assert first.code == "internal_error"
                # A well-known pack code is the runtime's word too (run_tool raises
                # dependency_missing for a missing executable): undeclared, it is mapped,
                # not counted against the pack (docs/classification.md).
                violations = 0 if code in WELL_KNOWN_PACK_CODES else 2
                assert invoker.contract_violations["prop.pack"] == violations
        if raised is not None and raised.kind != "pack":
            assert first.error is not None
            assert first.code not in PACK_CODE_POOL or first.code in loaded.absorbed_by.values()


def test_an_undeclared_well_known_code_is_mapped_not_counted_against_the_pack() -> None:
    """The example hypothesis found (a pack declaring auth_failed raises dependency_missing,
    as the runtime's run_tool does for a missing executable): internal_error, no violation;
    an undeclared code of the pack's own is a violation."""

    def raises(code: str) -> Any:
        def handler(doc: dict[str, Any], ctx: Any) -> Any:
            raise PackError(code, "")

        return handler

    for code, violations in (("dependency_missing", 0), ("quota_exceeded", 1)):
        pack = Pack(
            name="prop.pack",
            version="1.0.0",
            summary="A pack.",
            input_schema={"type": "object"},
            output_schema=output_schema(("auth_failed",), validation=False, closed=False),
            handler=raises(code),
        )
        with invoker_for(pack, max_workers=1) as invoker:
            assert invoker.invoke_sync("prop.pack", b"{}").code == "internal_error"
            assert invoker.contract_violations["prop.pack"] == violations


@settings(SETTINGS, max_examples=120)
@given(st.data())
def test_classification_is_deterministic(data: st.DataObject) -> None:
    spec = data.draw(exc_specs([], list(PACK_CODE_POOL)))
    first, second = classify(spec.build()), classify(spec.build())
    if first is None:
        assert second is None
        return
    assert second is not None
    assert (first.code, first.rule, first.message) == (second.code, second.rule, second.message)
    if first.code == "rate_limited":
        assert first.retry_after is not None
        assert first.retry_after >= 0


@settings(SETTINGS, max_examples=150)
@given(secrets_(), plain_text, plain_text)
def test_scrub_removes_every_planted_secret(secret: Secret, before: str, after: str) -> None:
    text = f"{before} {secret.text} {after}"
    clean = scrub(text)
    assert secret.needle not in clean
    assert scrub(clean) == clean, "scrubbing is idempotent"
    nested = scrub_data({"a": [text, {"k": (text,)}], text: 1})
    assert secret.needle not in orjson.dumps(nested).decode()


@settings(SETTINGS, max_examples=100)
@given(
    st.one_of(
        st.text(max_size=40),
        st.integers(-(10**400), 10**400),
        st.floats(),
        retry_after_values,
        st.none(),
        st.booleans(),
    )
)
def test_retry_after_is_never_negative_nor_infinite(value: Any) -> None:
    seconds = parse_retry_after(value)
    if seconds is not None:
        assert seconds >= 0
        assert seconds < float("inf")


# --------------------------------------------------------------------------- the outcome model

json_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | plain_text
json_scalars |= st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(plain_text, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(plain_text, json_values, max_size=4)
check_records = st.builds(
    CheckRecord,
    id=st.sampled_from(["duration", "codec", "size"]),
    severity=severities,
    message=plain_text,
    expected=json_values,
    actual=json_values,
    location=st.none() | plain_text,
)
validation_records = st.builds(
    ValidationRecord, status=severities, checks=st.lists(check_records, max_size=3)
)
envelopes = st.builds(
    ErrorEnvelope,
    code=st.sampled_from([*BASELINE_CODES, *PACK_CODE_POOL]),
    message=plain_text,
    retryable=st.booleans(),
    origin=st.sampled_from(["pack:prop.pack", "control_plane"]),
    retry_after=st.none() | st.floats(0, 1e6, allow_nan=False),
    partial=st.none() | st.just(True),
    partial_result=st.none() | json_objects,
    violations=st.none()
    | st.lists(st.builds(Violation, field=st.just("/value"), description=plain_text), max_size=2),
    detail=st.none() | plain_text,
    reference_id=st.none() | st.text("0123456789abcdef", min_size=8, max_size=8),
    checks=st.none() | st.lists(check_records, max_size=2),
    recovery_hint=st.none() | plain_text,
)
outcomes = st.builds(
    Outcome,
    pack=st.just("prop.pack"),
    version=st.just("1.0.0"),
    request_id=st.text("0123456789abcdef", min_size=1, max_size=32),
    result=st.none() | json_objects,
    validation=st.none() | validation_records,
    error=st.none() | envelopes,
)


@settings(SETTINGS, max_examples=80)
@given(outcomes)
def test_to_dict_and_from_dict_are_strict_inverses(outcome: Outcome) -> None:
    data = outcome.to_dict()
    assert Outcome.from_dict(data) == outcome
    assert Outcome.from_dict(data).to_dict() == data
    # Through real JSON bytes too, as the outcome travels.
    wire = orjson.loads(orjson.dumps(data))
    assert Outcome.from_dict(wire) == outcome
    assert Outcome.from_dict(wire).to_dict() == data


def _sample() -> dict[str, Any]:
    return {
        "pack": "prop.pack",
        "version": "1.0.0",
        "request_id": "r1",
        "validation": {
            "status": "fail",
            "checks": [{"id": "size", "severity": "fail", "message": "too big"}],
        },
        "error": {
            "code": "artifact_failed",
            "message": "1 check failed",
            "retryable": False,
            "origin": "control_plane",
            "checks": [{"id": "size", "severity": "fail", "message": "too big"}],
        },
    }


@pytest.mark.parametrize(
    "path",
    [(), ("error",), ("validation",), ("validation", "checks", 0), ("error", "checks", 0)],
    ids=lambda p: "/".join(map(str, p)) or "root",
)
def test_from_dict_rejects_unknown_keys(path: tuple[Any, ...]) -> None:
    data = _sample()
    assert Outcome.from_dict(data).to_dict() == data
    node: Any = data
    for key in path:
        node = node[key]
    node["surprise"] = 1
    with pytest.raises(pydantic.ValidationError, match=r"extra_forbidden|Extra inputs"):
        Outcome.from_dict(data)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("version",), 1),
        (("request_id",), None),
        (("result",), [1, 2]),
        (("error", "retryable"), "false"),
        (("error", "retry_after"), "5"),
        (("error", "partial"), False),
        (("validation", "status"), "error"),
        (("validation", "checks", 0, "severity"), "FAIL"),
    ],
    ids=lambda v: "/".join(map(str, v)) if isinstance(v, tuple) else repr(v),
)
def test_from_dict_rejects_wrong_types(path: tuple[Any, ...], value: Any) -> None:
    data = _sample()
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(pydantic.ValidationError):
        Outcome.from_dict(data)


def test_the_outcome_is_frozen() -> None:
    outcome = Outcome.from_dict(_sample())
    assert outcome.error is not None
    assert outcome.validation is not None
    for model, name, value in [
        (outcome, "pack", "other.pack"),
        (outcome, "error", None),
        (outcome.error, "code", "not_found"),
        (outcome.validation, "status", "pass"),
        (outcome.validation.checks[0], "severity", "pass"),
    ]:
        with pytest.raises(pydantic.ValidationError, match="frozen"):
            setattr(model, name, value)
    for model_cls in (Outcome, ErrorEnvelope, ValidationRecord, CheckRecord, Violation):
        config = model_cls.model_config
        assert config.get("frozen") is True, model_cls
        assert config.get("extra") == "forbid", model_cls
    assert hash(outcome.error.code)  # fields stay readable


def test_scrub_catches_pairs_in_escaped_json() -> None:
    """Regression: a validator quoting a JSON string escapes its quotes (found by hypothesis)."""
    text = '" {\\"password\\": \\"Zq7000000000\\", \\"user\\": \\"bob\\"} " is not of type'
    assert scrub(text) == (
        '" {\\"password\\": \\"[REDACTED]\\", \\"user\\": \\"bob\\"} " is not of type'
    )
    assert scrub("password=\\Zq7abc") == "password=[REDACTED]"


# --------------------------------------------------------------------------- the tables, by example

NOW = 1_700_000_000.0


def _wrapped(inner: BaseException, how: str) -> BaseException:
    outer = WrapperError("while calling the downstream")
    if how == "cause":
        outer.__cause__ = inner
    else:
        outer.__context__ = inner
    return outer


def _cycle() -> BaseException:
    inner = TimeoutError("read timed out")
    outer = _wrapped(inner, "context")
    inner.__context__ = outer  # a cycle: the walk must still end
    return outer


CLASSIFICATION_TABLE: list[tuple[str, BaseException, str, float | None]] = [
    ("http 401", HTTPLikeError(401), "auth_failed", None),
    ("http 403 on .response", HTTPLikeError(403, on_response=True), "auth_failed", None),
    ("http 404", HTTPLikeError(404), "not_found", None),
    ("http 410", HTTPLikeError(410), "not_found", None),
    ("http 408", HTTPLikeError(408), "timeout", None),
    ("http 504", HTTPLikeError(504), "timeout", None),
    ("http 429 delta", HTTPLikeError(429, {"Retry-After": "30"}), "rate_limited", 30.0),
    (
        "http 429 date",
        HTTPLikeError(429, {"Retry-After": http_date(120, NOW)}),
        "rate_limited",
        120.0,
    ),
    ("http 429 no header", HTTPLikeError(429), "rate_limited", 1.0),
    ("http 503 retry-after", HTTPLikeError(503, {"Retry-After": "5"}), "rate_limited", 5.0),
    ("http 503", HTTPLikeError(503), "network_error", None),
    ("http 599", HTTPLikeError(599), "network_error", None),
    ("TimeoutError", TimeoutError("slow"), "timeout", None),
    ("TimeoutExpired", subprocess.TimeoutExpired(["git"], 5), "timeout", None),
    ("asyncio timeout", TimeoutError(), "timeout", None),
    ("ConnectionRefusedError", ConnectionRefusedError(111, "refused"), "network_error", None),
    ("ConnectionResetError", ConnectionResetError(), "network_error", None),
    ("gaierror", socket.gaierror(socket.EAI_NONAME, "unknown host"), "network_error", None),
    # 501/505 are permanent: internal_error, never a retryable network_error.
    ("http 501", HTTPLikeError(501), "internal_error", None),
    ("http 505", HTTPLikeError(505), "internal_error", None),
    ("IncompleteRead", http.client.IncompleteRead(b"0123", 10), "network_error", None),
    ("FileNotFoundError", FileNotFoundError(2, "missing"), "not_found", None),
    ("PermissionError", PermissionError(13, "denied"), "auth_failed", None),
    ("errno ETIMEDOUT", OSError(errno.ETIMEDOUT, "timed out"), "timeout", None),
    ("errno EHOSTUNREACH", OSError(errno.EHOSTUNREACH, "no route"), "network_error", None),
    ("errno ENOENT", OSError(errno.ENOENT, "missing"), "not_found", None),
    ("cause chain", _wrapped(ConnectionRefusedError(), "cause"), "network_error", None),
    ("context chain", _wrapped(FileNotFoundError(), "context"), "not_found", None),
    ("cycle", _cycle(), "timeout", None),
    (
        "typed error wins over the chain",
        _wrapped(PackError("not_found", "gone"), "cause"),
        "not_found",
        None,
    ),
]


@pytest.mark.parametrize(
    ("exc", "code", "retry_after"),
    [pytest.param(e, c, r, id=i) for i, e, c, r in CLASSIFICATION_TABLE],
)
def test_the_classification_table(
    exc: BaseException, code: str, retry_after: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time as time_module

    monkeypatch.setattr(time_module, "time", lambda: NOW)  # HTTP-dates are relative to now
    found = classify(exc)
    monkeypatch.undo()
    assert found is not None
    assert found.code == code
    if retry_after is None:
        assert found.retry_after is None
    else:
        assert found.retry_after == pytest.approx(retry_after, abs=1.0)


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("x"),
        KeyError("k"),
        RuntimeError("r"),
        HTTPLikeError(302),
        # TLS is the tls classifier plugin's: its errno is an OpenSSL number, not a C one.
        ssl.SSLError(1, "[SSL: SOMETHING_NEW] something new"),
    ],
    ids=repr,
)
def test_unknown_failures_do_not_classify(exc: BaseException) -> None:
    assert classify(exc) is None


NEAREST: list[tuple[str, list[str], dict[str, CodeDoc], BaseException, str]] = [
    ("declared", ["timeout"], {}, TimeoutError(), "timeout"),
    (
        "absorbed by a pack code",
        ["download_failed"],
        {"download_failed": CodeDoc("d", recovery_hint="r", absorbs=("network_error",))},
        ConnectionRefusedError(),
        "download_failed",
    ),
    ("fallback timeout -> network_error", ["network_error"], {}, TimeoutError(), "network_error"),
    (
        "fallback rate_limited -> network_error",
        ["network_error"],
        {},
        HTTPLikeError(429),
        "network_error",
    ),
    (
        "nothing near -> internal_error",
        ["not_found"],
        {},
        ConnectionRefusedError(),
        "internal_error",
    ),
    ("unclassified -> internal_error", ["not_found"], {}, ValueError("x"), "internal_error"),
    (
        "undeclared pack code -> internal_error",
        ["not_found"],
        {},
        PackError("made_up_code", "x"),
        "internal_error",
    ),
    (
        "declared beats absorbed",
        ["network_error", "download_failed"],
        {"download_failed": CodeDoc("d", recovery_hint="r", absorbs=("network_error",))},
        ConnectionRefusedError(),
        "network_error",
    ),
]


@pytest.mark.parametrize(
    ("codes", "docs", "exc", "expected"),
    [pytest.param(c, d, e, x, id=i) for i, c, d, e, x in NEAREST],
)
def test_nearest_declared_code(
    codes: list[str], docs: dict[str, CodeDoc], exc: BaseException, expected: str
) -> None:
    def handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise exc

    pack = Pack(
        name="near.pack",
        version="1.0.0",
        summary="Nearest code.",
        input_schema={"type": "object"},
        output_schema=output_schema(codes),
        handler=handler,
        codes=docs,
    )
    with invoker_for(pack, max_workers=1) as invoker:
        outcome = invoker.invoke_sync("near.pack", b"{}")
        assert outcome.code == expected
        violations = invoker.contract_violations.get("near.pack", 0)
    assert violations == (1 if isinstance(exc, PackError) else 0)
