"""Domain errors. Services raise these; ``errors.py`` renders them per dialect."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One invalid input: where it is (``("body", "senha")``), why, and a type tag."""

    loc: tuple[str | int, ...]
    msg: str
    type: str = "value_error"


@dataclass
class DomainError(Exception):
    message: str
    code: str = "BAD_REQUEST"
    status: int = 400
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


class NotFoundError(DomainError):
    def __init__(self, message: str = "Not found", **extra: Any):
        super().__init__(message, "NOT_FOUND", 404, extra)


class ConflictError(DomainError):
    def __init__(self, message: str, **extra: Any):
        super().__init__(message, "CONFLICT", 409, extra)


class ForbiddenError(DomainError):
    def __init__(self, message: str = "Forbidden", code: str = "FORBIDDEN", **extra: Any):
        super().__init__(message, code, 403, extra)


class AuthenticationError(DomainError):
    def __init__(self, message: str, code: str = "UNAUTHORIZED", **extra: Any):
        super().__init__(message, code, 401, extra)


class PlanLimitError(DomainError):
    def __init__(self, message: str, **extra: Any):
        super().__init__(message, "PLAN_LIMIT_REACHED", 402, extra)


class ValidationFailed(DomainError):
    """Input that passed the schema but not the domain (a store that does not exist...)."""

    def __init__(self, errors: list[FieldError], message: str = "Validation failed"):
        super().__init__(message, "VALIDATION_ERROR", 422, {})
        self.errors = errors
