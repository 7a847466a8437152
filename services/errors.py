"""Domain errors. Services raise these; ``errors.py`` renders them per dialect.

Each refusal raised by a service names its ``reason``: a stable key (``"issue_not_found"``)
that the pages turn into their own pt-BR text, so no page depends on the wording of a
message. ``params`` fill the blanks of that text. Neither is part of an API body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One invalid input: where it is (``("body", "senha")``), why, a type tag and its reason."""

    loc: tuple[str | int, ...]
    msg: str
    type: str = "value_error"
    reason: str = ""


@dataclass
class DomainError(Exception):
    message: str
    code: str = "BAD_REQUEST"
    status: int = 400
    extra: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


class NotFoundError(DomainError):
    def __init__(
        self, message: str = "Not found", *, reason: str = "", params: dict | None = None, **extra: Any
    ):
        super().__init__(message, "NOT_FOUND", 404, extra, reason, params or {})


class ConflictError(DomainError):
    def __init__(self, message: str, *, reason: str = "", params: dict | None = None, **extra: Any):
        super().__init__(message, "CONFLICT", 409, extra, reason, params or {})


class ForbiddenError(DomainError):
    def __init__(
        self,
        message: str = "Forbidden",
        code: str = "FORBIDDEN",
        *,
        reason: str = "",
        params: dict | None = None,
        **extra: Any,
    ):
        super().__init__(message, code, 403, extra, reason, params or {})


class AuthenticationError(DomainError):
    def __init__(
        self,
        message: str,
        code: str = "UNAUTHORIZED",
        *,
        reason: str = "",
        params: dict | None = None,
        **extra: Any,
    ):
        super().__init__(message, code, 401, extra, reason, params or {})


class PlanLimitError(DomainError):
    def __init__(self, message: str, *, reason: str = "", params: dict | None = None, **extra: Any):
        super().__init__(message, "PLAN_LIMIT_REACHED", 402, extra, reason, params or {})


class ValidationFailed(DomainError):
    """Input that passed the schema but not the domain (a store that does not exist...).

    Its reasons are its errors' own (``FieldError.reason``).
    """

    def __init__(self, errors: list[FieldError], message: str = "Validation failed"):
        super().__init__(message, "VALIDATION_ERROR", 422, {})
        self.errors = errors
