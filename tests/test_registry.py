"""Load-time checks: every faulty pack is rejected with a message naming its plugin.

One test per fault (SPEC "The pack"): schemas that are not valid JSON Schema, a missing
``properties.error.properties.code``, an open vocabulary (``type: string`` with no enum, a
``pattern``), an empty enum, duplicates, non-snake_case codes, undocumented codes, a
duplicate pack name (naming both plugins), a plugin whose hook raises, a plugin that fails
to import. Each fault is loaded next to good plugins, which must still load. Packs declared
with pydantic models go through the same checks.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from runtime_support import make_pack, noop, output_schema, plugin, raising_plugin

from control_plane import CodeDoc, Pack, PackError, hookimpl
from control_plane._kernel.classify import Classification
from control_plane._kernel.errors import PluginLoadError
from control_plane._kernel.invoke import Invoker
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import LoadFailure, Registry
from control_plane._runtime import plugins as plugins_module
from control_plane._runtime.plugins import BUILTIN_CLASSIFIERS, LoadResult, load_registry

BAD_PLUGIN = "acme.broken_plugin"


def _with_code(code_schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema whose ``properties.error.properties.code`` is ``code_schema``."""
    return {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "error": {"type": "object", "properties": {"code": code_schema}},
        },
    }


def _own_docs(*codes: str) -> dict[str, CodeDoc]:
    return {c: CodeDoc(f"{c} happened", recovery_hint=f"handle {c}") for c in codes}


# fault id -> (the faulty pack, a regex the reason must match)
FAULTS: dict[str, tuple[Callable[[], Pack], str]] = {
    "input schema not meta-valid": (
        lambda: make_pack("bad.pack", input_schema={"type": "nope"}),
        r"input schema: invalid JSON Schema at /type",
    ),
    "output schema not meta-valid": (
        lambda: make_pack(
            "bad.pack",
            out=output_schema(["not_found"], extra={"value": {"minLength": -1}}),
        ),
        r"output schema: invalid JSON Schema at /properties/value/minLength",
    ),
    "output schema has no error property": (
        lambda: make_pack("bad.pack", out={"type": "object", "properties": {"value": {}}}),
        r"'error' is a required property|no properties\.error",
    ),
    "error has no code property": (
        lambda: make_pack(
            "bad.pack",
            out={
                "type": "object",
                "properties": {"error": {"type": "object", "properties": {"message": {}}}},
            },
        ),
        r"no properties\.error\.properties\.code",
    ),
    "code is a string with no enum": (
        lambda: make_pack("bad.pack", out=_with_code({"type": "string"})),
        r"open vocabulary: error code has no enum",
    ),
    "code is a pattern": (
        lambda: make_pack("bad.pack", out=_with_code({"type": "string", "pattern": "^[a-z_]+$"})),
        r"open vocabulary: error code is a pattern",
    ),
    "empty enum": (
        lambda: make_pack("bad.pack", out=_with_code({"type": "string", "enum": []})),
        r"empty vocabulary",
    ),
    "duplicated codes": (
        lambda: make_pack(
            "bad.pack",
            out=_with_code({"enum": ["not_found", "timeout", "not_found"]}),
        ),
        r"duplicated error codes in the enum: not_found",
    ),
    "camelCase code": (
        lambda: make_pack("bad.pack", codes=["notFound"]),
        r"'notFound' is not snake_case",
    ),
    "kebab-case code": (
        lambda: make_pack("bad.pack", codes=["not-found"]),
        r"'not-found' is not snake_case",
    ),
    "upper-case code": (
        lambda: make_pack("bad.pack", codes=["NOT_FOUND"]),
        r"'NOT_FOUND' is not snake_case",
    ),
    "code with a leading underscore": (
        lambda: make_pack("bad.pack", codes=["_private"]),
        r"'_private' is not snake_case",
    ),
    "non-string code": (
        lambda: make_pack("bad.pack", out=_with_code({"enum": ["not_found", 7]})),
        r"7 is not snake_case",
    ),
    "undocumented pack code": (
        lambda: make_pack("bad.pack", codes=["not_found", "dependency_missing"], docs={}),
        r"code 'dependency_missing' is not documented",
    ),
    "pack code documented without a recovery hint": (
        lambda: make_pack(
            "bad.pack",
            codes=["dependency_missing"],
            docs={"dependency_missing": CodeDoc("the tool is missing")},
        ),
        r"/codes/dependency_missing/recovery_hint",
    ),
    "documented code the enum does not declare": (
        lambda: make_pack("bad.pack", codes=["not_found"], docs=_own_docs("stray_code")),
        r"codes= documents stray_code, which the output schema's enum does not declare",
    ),
    "baseline code made retryable": (
        lambda: make_pack(
            "bad.pack",
            codes=["not_found"],
            docs={"not_found": CodeDoc("gone", retryable=True, recovery_hint="retry")},
        ),
        r"baseline code 'not_found' is permanent for every pack: its CodeDoc may change "
        r"the description and recovery_hint, not retryable=True",
    ),
    "baseline code made permanent": (
        lambda: make_pack(
            "bad.pack",
            codes=["rate_limited"],
            docs={"rate_limited": CodeDoc("quota", retryable=False, recovery_hint="wait")},
        ),
        r"baseline code 'rate_limited' is retryable for every pack",
    ),
    "baseline code absorbing": (
        lambda: make_pack(
            "bad.pack",
            codes=["not_found"],
            docs={"not_found": CodeDoc("gone", recovery_hint="r", absorbs=("timeout",))},
        ),
        r"baseline code 'not_found' cannot absorb other codes",
    ),
    "absorbs a code that is not baseline": (
        lambda: make_pack(
            "bad.pack",
            codes=["download_failed"],
            docs={"download_failed": CodeDoc("d", recovery_hint="r", absorbs=("download_slow",))},
        ),
        r"absorbs 'download_slow', which is not a baseline code",
    ),
    "name is not dotted": (
        lambda: make_pack("badpack"),
        r"manifest invalid at /name",
    ),
    "version is not semver": (
        lambda: make_pack("bad.pack", version="1.0"),
        r"manifest invalid at /version",
    ),
    "summary is two lines": (
        lambda: make_pack("bad.pack", summary="one\ntwo"),
        r"manifest invalid at /summary",
    ),
    "handler is not callable": (
        lambda: make_pack("bad.pack", handler="noop"),  # type: ignore[arg-type]
        r"handler is not callable",
    ),
}


def _good(name: str) -> Pack:
    return make_pack(name, codes=["not_found"])


@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_fault_is_rejected_naming_the_plugin(fault: str) -> None:
    build, expected = FAULTS[fault]
    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[
            ("acme.first", plugin(_good("good.first"))),
            # The bad pack sits between two good ones of the same plugin.
            (BAD_PLUGIN, plugin(_good("good.before"), build(), _good("good.after"))),
            ("acme.last", plugin(_good("good.last"))),
        ],
    )
    registry = result.registry
    assert registry.names() == ["good.after", "good.before", "good.first", "good.last"]
    assert len(registry.failures) == 1, registry.failures
    failure = registry.failures[0]
    assert failure.plugin == BAD_PLUGIN
    assert failure.pack == ("badpack" if fault == "name is not dotted" else "bad.pack")
    assert f"plugin {BAD_PLUGIN!r}" in str(failure)
    assert re.search(expected, failure.reason), failure.reason


@pytest.mark.parametrize("fault", list(FAULTS))
def test_register_raises_a_plugin_load_error_naming_the_plugin(fault: str) -> None:
    build, expected = FAULTS[fault]
    registry = Registry()
    with pytest.raises(PluginLoadError, match=expected) as info:
        registry.register(build(), BAD_PLUGIN)
    assert info.value.plugin == BAD_PLUGIN
    assert str(info.value).startswith(f"plugin {BAD_PLUGIN!r}")
    assert len(registry) == 0


def test_register_rejects_what_is_not_a_pack() -> None:
    with pytest.raises(PluginLoadError, match=r"expects a Pack, got dict") as info:
        Registry().register({"name": "x.y"}, BAD_PLUGIN)  # type: ignore[arg-type]
    assert info.value.plugin == BAD_PLUGIN


def test_a_duplicate_pack_name_names_both_plugins() -> None:
    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[
            ("acme.one", plugin(_good("dup.pack"))),
            ("acme.two", plugin(_good("dup.pack"), _good("other.pack"))),
        ],
    )
    registry = result.registry
    assert registry.names() == ["dup.pack", "other.pack"]
    assert registry.get("dup.pack").plugin == "acme.one", "the first registration wins"
    [failure] = registry.failures
    assert failure.plugin == "acme.two"
    assert failure.pack == "dup.pack"
    text = str(failure)
    assert "'acme.one'" in text, text
    assert "'acme.two'" in text, text
    assert "duplicate pack name 'dup.pack'" in text


def test_a_plugin_whose_hook_raises_is_reported_and_others_load() -> None:
    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[
            ("acme.first", plugin(_good("good.first"))),
            (BAD_PLUGIN, raising_plugin(RuntimeError("boom at load"), _good("good.partial"))),
            ("acme.last", plugin(_good("good.last"))),
        ],
    )
    registry = result.registry
    # Packs registered before the hook raised stay; later plugins still load.
    assert registry.names() == ["good.first", "good.last", "good.partial"]
    [failure] = registry.failures
    assert failure == LoadFailure(BAD_PLUGIN, "register_packs raised RuntimeError: boom at load")
    assert str(failure).startswith(f"plugin {BAD_PLUGIN!r}")


def _dist(tmp_path: Path, entries: dict[str, str], modules: dict[str, str]) -> None:
    """A real installed distribution on ``tmp_path`` declaring ``capability_packs`` entry points."""
    info = tmp_path / "acme_packs-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-packs\nVersion: 0.1\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entries.items())
    (info / "entry_points.txt").write_text(f"[capability_packs]\n{lines}")
    for module, source in modules.items():
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))


GOOD_MODULE = """
    from control_plane import CodeDoc, Pack, hookimpl

    def handler(doc, ctx):
        return {}

    @hookimpl
    def register_packs(register):
        register(Pack(
            name="acme.hello",
            version="0.1.0",
            summary="Says hello.",
            input_schema={"type": "object"},
            output_schema={"type": "object", "properties": {
                "error": {"type": "object", "properties": {"code": {"enum": ["not_found"]}}}}},
            handler=handler,
        ))
"""


def test_entry_point_plugins_load_and_an_import_failure_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _dist(
        tmp_path,
        {"acme_hello": "acme_hello_plugin", "acme_broken": "acme_broken_plugin"},
        {
            "acme_hello_plugin": GOOD_MODULE,
            "acme_broken_plugin": "raise ImportError('needs libfoo')\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    result = load_registry(builtins=False)
    assert "acme.hello" in result.registry
    assert result.registry.get("acme.hello").plugin == "acme_hello"
    [failure] = [f for f in result.registry.failures if f.plugin == "acme_broken"]
    assert failure.reason == "failed to load: ImportError: needs libfoo"
    assert str(failure).startswith("plugin 'acme_broken'")


def test_the_environment_variable_restricts_what_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _dist(
        tmp_path,
        {"acme_hello": "acme_hello_plugin", "acme_broken": "acme_broken_plugin"},
        {
            "acme_hello_plugin": GOOD_MODULE,
            "acme_broken_plugin": "raise ImportError('needs libfoo')\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins_module.ENV_PLUGINS, "acme_hello, packs.git")
    result = load_registry()
    names = result.registry.names()
    assert "acme.hello" in names
    assert names[1:] and all(n.startswith("git.") for n in names[1:]), names
    assert not any(f.plugin == "acme_broken" for f in result.registry.failures)

    monkeypatch.setenv(plugins_module.ENV_PLUGINS, "")
    empty = load_registry()
    assert len(empty.registry) == 0
    assert empty.registry.failures == []


def test_a_builtin_that_fails_to_import_does_not_stop_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "acme_builtin_broken.py").write_text("1 / 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        plugins_module,
        "DEFAULT_PLUGINS",
        ("acme_builtin_broken", *plugins_module.DEFAULT_PLUGINS),
    )
    result = load_registry(entry_points_=False)
    assert {"av.validate", "http.fetch"} <= set(result.registry.names())
    [failure] = result.registry.failures
    assert failure.plugin == "acme_builtin_broken"
    assert "ZeroDivisionError" in failure.reason


def test_builtin_packs_load_cleanly() -> None:
    result = load_registry(entry_points_=False)
    assert result.registry.failures == []
    assert {"av.validate", "git.ls_remote", "http.fetch"} <= set(result.registry.names())


# --------------------------------------------------------------------------- effective schema


def _effective_enum(registry: Registry, name: str) -> list[str]:
    schema = registry.get(name).output_schema
    return list(schema["properties"]["error"]["properties"]["code"]["enum"])


def test_the_effective_schema_adds_internal_error_and_artifact_failed() -> None:
    registry = Registry()
    plain = make_pack("plain.pack", codes=["not_found"])
    checked = make_pack(
        "checked.pack",
        out=output_schema(["dependency_missing"], validation=True),
        docs=_own_docs("dependency_missing"),
    )
    declared = make_pack("declared.pack", codes=["internal_error", "not_found"], validates=True)
    for pack in (plain, checked, declared):
        registry.register(pack, "tests")
    # not_permitted, the refusal by grant, is every pack's too (control_plane._kernel.reach).
    assert _effective_enum(registry, "plain.pack") == [
        "not_found",
        "internal_error",
        "not_permitted",
    ]
    assert _effective_enum(registry, "checked.pack") == [
        "dependency_missing",
        "internal_error",
        "not_permitted",
        "artifact_failed",
    ]
    assert _effective_enum(registry, "declared.pack") == [
        "internal_error",
        "not_found",
        "not_permitted",
        "artifact_failed",
    ]
    # validates=True without a validation property: the field's schema is added.
    assert "validation" in registry.get("declared.pack").output_schema["properties"]
    # The author's schema is never modified in place.
    assert plain.output_schema["properties"]["error"]["properties"]["code"]["enum"] == [  # type: ignore[index]
        "not_found"
    ]
    assert list(registry.get("checked.pack").vocabulary) == _effective_enum(
        registry, "checked.pack"
    )


def test_a_const_code_is_a_one_code_vocabulary() -> None:
    registry = Registry()
    registry.register(make_pack("const.pack", out=_with_code({"const": "not_found"})), "tests")
    assert _effective_enum(registry, "const.pack") == [
        "not_found",
        "internal_error",
        "not_permitted",
    ]


# --------------------------------------------------------------------------- pydantic


class FetchInput(BaseModel):
    url: str
    attempts: int = 1


class FetchCode(StrEnum):
    NOT_FOUND = "not_found"
    RATE_LIMITED = "rate_limited"
    DEPENDENCY_MISSING = "dependency_missing"


class FetchError(BaseModel):
    code: FetchCode
    message: str = ""


class FetchOutput(BaseModel):
    length: int | None = None
    error: FetchError | None = None


class LiteralError(BaseModel):
    code: Literal["not_found", "timeout"]


class LiteralOutput(BaseModel):
    error: LiteralError | None = None


class LengthOutput(BaseModel):
    length: int | None = None
    error: LiteralError | None = None


class OpenError(BaseModel):
    code: str


class OpenOutput(BaseModel):
    error: OpenError | None = None


def _fetch(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    if doc["url"] == "missing":
        raise PackError("dependency_missing", "curl is not installed")
    return {"length": len(doc["url"])}


def test_a_pack_declared_with_pydantic_models() -> None:
    registry = Registry()
    loaded = registry.register(
        Pack(
            name="pyd.fetch",
            version="1.0.0",
            summary="Fetch, declared with pydantic models.",
            input_schema=FetchInput,
            output_schema=FetchOutput,
            handler=_fetch,
            codes={
                "dependency_missing": CodeDoc(
                    "a tool is missing", recovery_hint="install it", absorbs=("network_error",)
                )
            },
        ),
        "tests",
    )
    assert list(loaded.vocabulary) == [
        "not_found",
        "rate_limited",
        "dependency_missing",
        "internal_error",
        "not_permitted",
    ]
    assert loaded.absorbed_by == {"network_error": "dependency_missing"}
    assert FetchOutput.model_json_schema()["$defs"]["FetchCode"]["enum"] == [
        "not_found",
        "rate_limited",
        "dependency_missing",
    ], "the author's model is untouched"
    invoker = Invoker(registry, max_workers=2)
    try:
        ok = invoker.invoke_sync("pyd.fetch", {"url": "abc"})
        assert ok.result == {"length": 3}
        assert invoker.invoke_sync("pyd.fetch", {"url": "missing"}).code == "dependency_missing"
        from control_plane._kernel.errors import InvalidInput

        with pytest.raises(InvalidInput) as info:
            invoker.invoke_sync("pyd.fetch", {"attempts": "x"})
        fields = {v.field for v in info.value.violations}
        assert fields == {"", "/attempts"}
        # Output that breaks the pydantic-derived output schema is enforced too.
        bad = Pack(
            name="pyd.bad",
            version="1.0.0",
            summary="Returns the wrong type.",
            input_schema=FetchInput,
            output_schema=LengthOutput,
            handler=lambda doc, ctx: {"length": "three"},
        )
        registry.register(bad, "tests")
        assert invoker.invoke_sync("pyd.bad", {"url": "abc"}).code == "internal_error"
    finally:
        invoker.close()


def test_a_pydantic_literal_code_is_a_closed_vocabulary() -> None:
    registry = Registry()
    pack = Pack("pyd.literal", "1.0.0", "Literal codes.", FetchInput, LiteralOutput, noop)
    assert list(registry.register(pack, "tests").vocabulary) == [
        "not_found",
        "timeout",
        "internal_error",
        "not_permitted",
    ]


def test_a_pydantic_str_code_is_an_open_vocabulary() -> None:
    pack = Pack("pyd.open", "1.0.0", "Open codes.", FetchInput, OpenOutput, noop)
    with pytest.raises(PluginLoadError, match="open vocabulary") as info:
        Registry().register(pack, BAD_PLUGIN)
    assert info.value.plugin == BAD_PLUGIN


# --------------------------------------------------------------------------- classifier hook


class _AcmeTimeout(Exception):
    """A third-party exception only a plugin classifier knows."""


class _ClassifierPlugin:
    @hookimpl
    def classify_exception(self, exc: BaseException) -> Classification | None:
        if isinstance(exc, _AcmeTimeout):
            return Classification("timeout", "acme client timed out", rule="acme")
        return None


class _BrokenClassifierPlugin:
    @hookimpl
    def classify_exception(self, exc: BaseException) -> Classification | None:
        raise RuntimeError("classifier bug")


def _invoke_once(result: LoadResult, pack: str) -> Outcome:
    """One call of ``pack`` through an invoker with the loaded classifiers."""
    invoker = Invoker(result.registry, classifiers=result.classifiers, max_workers=2)
    try:
        return invoker.invoke_sync(pack, {})
    finally:
        invoker.close()


def _raise_acme(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise _AcmeTimeout("slow upstream")


def test_plugin_classifiers_are_loaded_and_a_broken_one_is_skipped() -> None:
    pack = make_pack("acme.slow", codes=["timeout"], handler=_raise_acme)
    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[
            ("acme.broken_classifier", _BrokenClassifierPlugin()),
            ("acme.classifier", _ClassifierPlugin()),
            ("acme.packs", plugin(pack)),
        ],
    )
    impls = result.plugin_manager.hook.classify_exception.get_hookimpls()
    # The two plugins' classifiers, and the built-in ones (BUILTIN_CLASSIFIERS);
    # pluggy asks the newest first, so third-party classifiers come before the built-ins.
    names = [impl.plugin_name for impl in reversed(impls)]
    assert names[:2] == ["acme.classifier", "acme.broken_classifier"]
    assert set(names[2:]) == set(BUILTIN_CLASSIFIERS)
    assert len(result.classifiers) == 1  # the hook itself, firstresult
    outcome = _invoke_once(result, "acme.slow")
    assert outcome.code == "timeout"
    assert outcome.error is not None
    assert outcome.error.retryable is True


def _answering(rule: str, **marks: bool) -> object:
    """A classifier plugin that answers every exception, marked with ``rule``."""

    class _Answers:
        @hookimpl(**marks)
        def classify_exception(self, exc: BaseException) -> Classification | None:
            return Classification("timeout", "answered", rule=rule)

    return _Answers()


class _Wrapper:
    @hookimpl(wrapper=True)
    def classify_exception(self, exc: BaseException) -> Any:
        result = yield
        return Classification("timeout", "wrapped", rule="wrapper") if result else result


@pytest.mark.parametrize("wrapped", [False, True])
def test_plugin_classifiers_answer_in_pluggys_order(wrapped: bool) -> None:
    """The classifier the runtime builds asks the implementations as pluggy's firstresult
    call does (newest first, ``tryfirst`` before, ``trylast`` after, hook wrappers around):
    every rotation of registration order gives pluggy's own answer."""
    specs = [
        ("p.plain", {}),
        ("p.first", {"tryfirst": True}),
        ("p.last", {"trylast": True}),
        ("p.newer", {}),
    ]
    for turn in range(len(specs)):
        rotated = specs[turn:] + specs[:turn]
        extra: list[tuple[str, object]] = [(name, _answering(name, **m)) for name, m in rotated]
        if wrapped:
            extra.append(("p.wrapper", _Wrapper()))
        result = load_registry(builtins=False, entry_points_=False, extra=extra)
        exc = _AcmeTimeout("x")
        expected = result.plugin_manager.hook.classify_exception(exc=exc)
        (classifier,) = result.classifiers
        assert classifier(exc) == expected
        assert expected.rule == ("wrapper" if wrapped else "p.first")


class _BrokenWrapper:
    @hookimpl(wrapper=True)
    def classify_exception(self, exc: BaseException) -> Any:
        raise RuntimeError("wrapper bug")
        yield  # pragma: no cover - a generator function


def test_a_broken_classifier_hook_wrapper_leaves_the_built_in_rules() -> None:
    """A hook wrapper that raises costs the plugins' answers, not the call: the failure is
    still classified by the built-in rules (ConnectionRefusedError -> network_error)."""

    def refused(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise ConnectionRefusedError(111, "refused")

    pack = make_pack("acme.refused", codes=["network_error"], handler=refused)
    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[
            ("acme.classifier", _ClassifierPlugin()),
            ("acme.wrapper", _BrokenWrapper()),
            ("acme.packs", plugin(pack)),
        ],
    )
    (classifier,) = result.classifiers
    assert classifier(_AcmeTimeout("x")) is None
    assert _invoke_once(result, "acme.refused").code == "network_error"


class _AcmeLibError(Exception):
    """An exception of a third-party library ``acme_lib``."""

    __module__ = "acme_lib.errors"


class _PackOwnError(_AcmeLibError):
    """A pack's own subclass of it, in the pack's module."""

    __module__ = "mypack.errors"


def _recording(declared: object = None) -> Any:
    """A classifier plugin that records what it is asked and answers nothing; with
    ``declared``, it carries it as ``EXCEPTION_MODULES``."""

    class _Recorder:
        def __init__(self) -> None:
            self.asked: list[type] = []

        @hookimpl
        def classify_exception(self, exc: BaseException) -> Classification | None:
            self.asked.append(type(exc))
            return None

    recorder = _Recorder()
    if declared is not None:
        recorder.EXCEPTION_MODULES = declared  # type: ignore[attr-defined]
    return recorder


def test_a_classifier_declaring_its_modules_is_asked_only_about_their_exceptions() -> None:
    """``EXCEPTION_MODULES`` narrows what a plugin is asked: an exception with a class of a
    declared module anywhere in its MRO (a pack's own subclass too), never others; a plugin
    without it, or with a declaration that is not a collection of names, is asked about
    everything."""
    narrow = _recording(("acme_lib",))
    everything = _recording()
    malformed = _recording(("acme_lib", 3))
    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[("p.narrow", narrow), ("p.all", everything), ("p.malformed", malformed)],
    )
    (classifier,) = result.classifiers
    for exc in (_AcmeLibError("x"), _PackOwnError("x"), ValueError("x"), _AcmeLibError("y")):
        assert classifier(exc) is None
    assert narrow.asked == [_AcmeLibError, _PackOwnError, _AcmeLibError]
    assert (
        everything.asked
        == malformed.asked
        == [
            _AcmeLibError,
            _PackOwnError,
            ValueError,
            _AcmeLibError,
        ]
    )


def test_a_classifier_registered_after_the_first_call_is_asked() -> None:
    """What the classifier remembers per exception type follows the plugin manager: a plugin
    registered later is asked (newest first) on the next call."""
    result = load_registry(builtins=False, entry_points_=False, extra=[("p.first", _recording())])
    (classifier,) = result.classifiers
    assert classifier(_AcmeTimeout("x")) is None
    result.plugin_manager.register(_ClassifierPlugin(), name="acme.classifier")
    found = classifier(_AcmeTimeout("x"))
    assert found is not None and found.rule == "acme"


def test_what_the_classifier_remembers_per_type_is_bounded(monkeypatch: Any) -> None:
    """A pack that makes a new exception class per call cannot grow the per-type memory."""
    monkeypatch.setattr(plugins_module, "_BY_TYPE_MAX", 8)
    recorder = _recording(("acme_lib",))
    result = load_registry(builtins=False, entry_points_=False, extra=[("p.narrow", recorder)])
    (classifier,) = result.classifiers
    made = [type(f"E{i}", (_AcmeLibError,), {}) for i in range(50)]
    for kind in made:
        assert classifier(kind("x")) is None
    assert recorder.asked == made
    assert 0 < classifier.remembered <= 8


def test_each_built_in_classifiers_type_rows_are_inside_its_declared_modules() -> None:
    """A built-in classifier that declares ``EXCEPTION_MODULES`` is never asked about other
    exceptions, so every type its table names must come from a declared module."""
    import importlib

    declared = 0
    for name in BUILTIN_CLASSIFIERS:
        module = importlib.import_module(name)
        modules = plugins_module.exception_modules(module)
        if modules is None:
            continue
        declared += 1
        for row in getattr(module, "TYPES", ()):
            assert row.type_name.partition(".")[0] in modules, (name, row.type_name)
    # Not vacuous while any built-in classifier declares its modules (the smtp, ftp, imap,
    # pop and sqlite ones became data of the evidence engine).
    assert declared >= 1 or not any(
        plugins_module.exception_modules(importlib.import_module(n)) for n in BUILTIN_CLASSIFIERS
    )


# --------------------------------------------------------------------------- the author API


def test_the_pack_author_api_end_to_end() -> None:
    """The five things an author uses: Pack, CodeDoc, typed errors, Result/Check, async."""
    from control_plane import Check, Result
    from control_plane._kernel import errors

    async def handler(doc: dict[str, Any], ctx: Any) -> Any:
        what = doc.get("what")
        if what == "missing":
            raise errors.not_found("no such thing")
        if what == "slow":
            raise errors.rate_limited(retry_after=2.5)
        if what == "partial":
            raise errors.schema_mismatch(partial={"value": 1})
        if what == "tool":
            raise PackError("dependency_missing", "ffprobe is not installed")
        return Result({"value": 1}, [Check("size", "warn", "a bit large"), Check("ok", "pass", "")])

    pack = Pack(
        name="author.demo",
        version="0.1.0",
        summary="Everything an author touches.",
        input_schema={"type": "object", "properties": {"what": {"type": "string"}}},
        output_schema=output_schema(
            ["not_found", "rate_limited", "schema_mismatch", "dependency_missing"], validation=True
        ),
        handler=handler,
        codes={"dependency_missing": CodeDoc("a tool is missing", recovery_hint="install it")},
    )
    registry = Registry()
    registry.register(pack, "tests")
    invoker = Invoker(registry, max_workers=2)
    try:
        ok = invoker.invoke_sync("author.demo", {})
        assert ok.ok and ok.result == {"value": 1}
        assert ok.validation is not None and ok.validation.status == "warn"
        strict = invoker.invoke_sync("author.demo", {}, strict=True, fail_on="warn")
        assert strict.code == "artifact_failed"
        assert strict.error is not None and strict.error.checks is not None
        assert [(c.id, c.severity) for c in strict.error.checks] == [("size", "warn")]
        assert invoker.invoke_sync("author.demo", {"what": "missing"}).code == "not_found"
        slow = invoker.invoke_sync("author.demo", {"what": "slow"})
        assert slow.code == "rate_limited" and slow.error is not None
        assert slow.error.retry_after == 2.5
        part = invoker.invoke_sync("author.demo", {"what": "partial"})
        assert part.error is not None and part.error.partial is True
        assert part.error.partial_result == {"value": 1}
        assert invoker.invoke_sync("author.demo", {"what": "tool"}).code == "dependency_missing"
    finally:
        invoker.close()
    with pytest.raises(TypeError):
        errors.schema_mismatch()
    with pytest.raises(TypeError):
        errors.schema_mismatch({"a": 1}, partial={"a": 1})


class _TypoPlugin:
    """``register_pack`` (no s): a misspelled hook pluggy would silently never call."""

    @hookimpl
    def register_pack(self, register: Any) -> None:  # pragma: no cover - never called
        raise AssertionError("a misspelled hook must not run")


class _NoArgumentsPlugin:
    """A valid implementation may take fewer arguments than the spec offers."""

    calls = 0

    @hookimpl
    def register_event_sinks(self) -> None:
        _NoArgumentsPlugin.calls += 1


def test_a_misspelled_hook_is_a_load_failure_naming_the_plugin_and_the_hook() -> None:
    pack = make_pack("acme.ok", codes=["timeout"])
    result = load_registry(
        builtins=False,
        entry_points_=False,
        extra=[("acme.typo", _TypoPlugin()), ("acme.packs", plugin(pack))],
    )
    assert "acme.ok" in result.registry  # the other plugin still loads
    [failure] = [f for f in result.registry.failures if f.plugin == "acme.typo"]
    assert "unknown hook 'register_pack'" in failure.reason
    assert "register_packs" in failure.reason  # the known hooks are named


def test_hook_implementations_are_called_with_the_arguments_they_name() -> None:
    before = _NoArgumentsPlugin.calls
    result = load_registry(
        builtins=False, entry_points_=False, extra=[("acme.noargs", _NoArgumentsPlugin())]
    )
    assert _NoArgumentsPlugin.calls == before + 1
    assert not result.registry.failures


def test_a_pack_gives_a_baseline_code_its_own_description() -> None:
    from control_plane._kernel.vocabulary import BASELINE

    registry = Registry()
    loaded = registry.register(
        make_pack(
            "own.words",
            codes=["not_found", "rate_limited", "timeout"],
            docs={
                "not_found": CodeDoc(
                    "The repository does not exist, or the token cannot see it.",
                    recovery_hint="Check the URL and the token's scopes.",
                ),
                "rate_limited": "The API's hourly quota is spent.",  # description only
                "timeout": CodeDoc("The clone took too long.", retryable=True),  # hint kept
            },
        )
    )
    own = loaded.vocabulary["not_found"]
    assert own.description == "The repository does not exist, or the token cannot see it."
    assert own.recovery_hint == "Check the URL and the token's scopes."
    for code in ("not_found", "rate_limited", "timeout"):
        info, base = loaded.vocabulary[code], BASELINE[code]
        # What a caller branches on is the vocabulary's, whatever the pack wrote.
        assert (info.retryable, info.grpc_status, info.baseline, info.fallback) == (
            base.retryable,
            base.grpc_status,
            True,
            base.fallback,
        )
    assert loaded.vocabulary["rate_limited"].description == "The API's hourly quota is spent."
    assert loaded.vocabulary["rate_limited"].recovery_hint == BASELINE["rate_limited"].recovery_hint
    assert loaded.vocabulary["timeout"].recovery_hint == BASELINE["timeout"].recovery_hint
    # Other packs keep the vocabulary's words.
    other = registry.register(make_pack("other.pack", codes=["not_found"]))
    assert other.vocabulary["not_found"] == BASELINE["not_found"]


def test_a_baseline_code_in_the_packs_words_reaches_the_caller() -> None:
    def missing(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise PackError("not_found", "no such repository")

    registry = Registry()
    registry.register(
        make_pack(
            "own.words",
            codes=["not_found"],
            docs={"not_found": CodeDoc("No such repository.", recovery_hint="Check the URL.")},
            handler=missing,
        )
    )
    invoker = Invoker(registry)
    try:
        outcome = invoker.invoke_sync("own.words", {})
    finally:
        invoker.close()
    assert outcome.error is not None
    assert (outcome.error.code, outcome.error.recovery_hint) == ("not_found", "Check the URL.")
    assert outcome.error.retryable is False


# -- one declaration of the codes: the enum derived from the codes table ---------------------


def _one_table_pack(codes: dict[str, CodeDoc | str | None], **props: Any) -> Pack:
    return Pack(
        "one.table",
        "1.0.0",
        "Codes declared once.",
        {"type": "object"},
        {"type": "object", "properties": {"value": {"type": "integer"}, **props}},
        lambda doc, ctx: {"value": 1},
        codes=codes,
    )


def test_a_codes_table_alone_closes_the_vocabulary() -> None:
    """No ``error`` in the output schema: the registry derives it from ``codes`` (baseline
    codes as ``None``), and callers see the closed enum in the effective schema."""
    pack = _one_table_pack(
        {"not_found": None, "too_big": CodeDoc("big", recovery_hint="smaller"), "timeout": None}
    )
    registry = Registry()
    loaded = registry.register(pack, "p")
    code = loaded.output_schema["properties"]["error"]["properties"]["code"]
    # not_permitted: every pack's (schemas/vocabulary.json every_pack), declared or not.
    everyone = ["not_found", "too_big", "timeout", "internal_error", "not_permitted"]
    assert code["enum"] == everyone
    assert list(loaded.vocabulary) == everyone
    assert loaded.vocabulary["timeout"].retryable and not loaded.vocabulary["too_big"].retryable
    assert loaded.output_validator.violations({"error": {"code": "made_up", "message": "m"}})


def test_a_codes_table_enforces_the_closed_set() -> None:
    def handler(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise PackError(doc["code"], "failed")

    pack = Pack(
        "one.table",
        "1.0.0",
        "Codes declared once.",
        {"type": "object"},
        {"type": "object", "properties": {}},
        handler,
        codes={"not_found": None, "too_big": CodeDoc("big", recovery_hint="smaller")},
    )
    registry = Registry()
    registry.register(pack, "p")
    invoker = Invoker(registry)
    try:
        assert invoker.invoke_sync("one.table", {"code": "too_big"}).error.code == "too_big"  # type: ignore[union-attr]
        stray = invoker.invoke_sync("one.table", {"code": "mystery"})
        assert stray.error is not None and stray.error.code == "internal_error"
    finally:
        invoker.close()


def test_error_schema_is_the_codes_tables_keys_in_order() -> None:
    from control_plane import error_schema

    codes = {"b_code": None, "a_code": None}
    schema = error_schema(codes, retry_after={"type": "number"})
    assert schema["properties"]["code"] == {"enum": ["b_code", "a_code"]}
    assert schema["required"] == ["code", "message"]
    assert set(schema["properties"]) == {"code", "message", "retry_after"}


@pytest.mark.parametrize(
    ("codes", "error", "expected"),
    [
        ({"not_found": None, "mystery": None}, None, r"code 'mystery' is not documented"),
        (
            {"not_found": None, "timeout": None},
            {"type": "object", "properties": {"code": {"enum": ["not_found"]}}},
            r"codes= documents timeout, which the output schema's enum does not declare",
        ),
    ],
    ids=["undocumented pack code", "table and explicit enum disagree"],
)
def test_a_codes_table_with_a_fault_is_refused(
    codes: dict[str, CodeDoc | None], error: dict[str, Any] | None, expected: str
) -> None:
    pack = _one_table_pack(codes, **({"error": error} if error else {}))
    with pytest.raises(PluginLoadError, match=expected):
        Registry().register(pack, BAD_PLUGIN)
