"""The immutable result of one invocation, as it leaves the runtime.

``Outcome.to_dict`` and ``Outcome.from_dict`` are strict inverses: ``to_dict`` drops unset
fields, ``from_dict`` rejects unknown keys and wrong types.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict

from control_plane.core.pack import Check

__all__ = ["CheckRecord", "ErrorEnvelope", "Outcome", "ValidationRecord", "Violation"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    @classmethod
    def construct_trusted(cls, **values: Any) -> Self:
        """``model_construct(**values)`` for field values the runtime built itself, faster.

        The same object (field order, ``model_fields_set``, defaults), built the way
        ``model_construct`` builds it but from a per-class template instead of pydantic's
        per-field alias and default lookups, which cost several times the rest (the hot
        path builds an envelope or a check record per failure and per finding).
        ``values`` must be field names.
        """
        template = _TEMPLATES.get(cls)
        if template is None:
            template = _TEMPLATES[cls] = {
                name: None if field.is_required() else field.default
                for name, field in cls.model_fields.items()
            }
        if cls.__pydantic_post_init__ or not values.keys() <= template.keys():
            return cls.model_construct(**values)  # not a plain model: the general path
        fields = template.copy()
        fields.update(values)  # keeps the template's (declaration) order
        model = cls.__new__(cls)
        _setattr(model, "__dict__", fields)
        _setattr(model, "__pydantic_fields_set__", set(values))
        _setattr(model, "__pydantic_extra__", None)
        _setattr(model, "__pydantic_private__", None)
        return model


_setattr = object.__setattr__
#: Per model class: every field name, in declaration order, with its default.
_TEMPLATES: dict[type[_Frozen], dict[str, Any]] = {}


class CheckRecord(_Frozen):
    """One validation finding as it travels."""

    id: str
    severity: Literal["pass", "warn", "fail"]
    message: str
    expected: Any = None
    actual: Any = None
    location: str | None = None

    @classmethod
    def of(cls, check: Check) -> CheckRecord:
        return cls.model_construct(
            id=check.id,
            severity=check.severity,
            message=check.message,
            expected=check.expected,
            actual=check.actual,
            location=check.location,
        )


class ValidationRecord(_Frozen):
    """The ``validation`` field: worst severity and every check."""

    status: Literal["pass", "warn", "fail"]
    checks: list[CheckRecord]


class Violation(_Frozen):
    """A field-level violation: JSON pointer and reason."""

    field: str
    description: str


class ErrorEnvelope(_Frozen):
    """What a caller receives on failure; ``code`` is inside the pack's vocabulary."""

    code: str
    message: str
    retryable: bool
    origin: str
    retry_after: float | None = None
    partial: Literal[True] | None = None
    partial_result: dict[str, Any] | None = None
    violations: list[Violation] | None = None
    detail: str | None = None
    reference_id: str | None = None
    checks: list[CheckRecord] | None = None
    recovery_hint: str | None = None


class Outcome(_Frozen):
    """One invocation's outcome: a result (with optional validation) or an error."""

    pack: str
    version: str
    request_id: str
    result: dict[str, Any] | None = None
    validation: ValidationRecord | None = None
    error: ErrorEnvelope | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def code(self) -> str | None:
        return self.error.code if self.error is not None else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, unset fields dropped."""
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """The strict inverse of :meth:`to_dict`; raises ``pydantic.ValidationError``."""
        return cls.model_validate(data)
