"""Extensions, created once and bound to the app in ``app.create_app``."""

from __future__ import annotations

import http

import jwt as pyjwt
from apispec import BasePlugin
from flask_babel import Babel
from flask_htmx import HTMX
from flask_jwt_extended import JWTManager
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_migrate import Migrate
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

from schemas.common import StockError, StockValidationError, TrackerError

# Stable constraint names keep Alembic autogenerate and SQLite batch mode honest.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


# What ``auth_required`` writes in an operation's ``security``; each API names its own scheme.
TOKEN_REQUIREMENT = "bearerAuth"


def unauthorized_headers() -> dict:
    """Both dialects send it with every 401 (``errors.error_response``)."""
    return {"WWW-Authenticate": {"description": "`Bearer`", "schema": {"type": "string"}}}


class ErrorResponses(BasePlugin):
    """Documents on every operation the errors it can answer, in its API's dialect.

    A route's own ``alt_response`` wins; this only fills in what it left out:
    401 and 403 (banned account, role) where a bearer token is required, 404
    where the path names a resource, the validation status where there is a
    query or body to validate (and a path, where the API validates it), and
    the dialect's error body (and a 401's ``WWW-Authenticate``) on any error
    response declared without one.
    """

    def __init__(self, api: ServiceApi):
        self.api = api

    def operation_helper(self, path=None, operations=None, **kwargs):
        api = self.api
        for operation in (operations or {}).values():
            responses = operation.setdefault("responses", {})
            documented = {str(code) for code in responses}

            def add(status: int, documented=documented, responses=responses) -> None:
                if str(status) not in documented:
                    responses[status] = http.HTTPStatus(status).name

            security = operation.get("security")
            if security:
                operation["security"] = [
                    {api.security_scheme_name if name == TOKEN_REQUIREMENT else name: scopes}
                    for requirement in security
                    for name, scopes in requirement.items()
                ]
                add(401)
                add(403)
            has_path_values = "{" in (path or "")
            if has_path_values:
                add(404)
            has_input = "requestBody" in operation or any(
                isinstance(p, dict) and p.get("in") == "query" for p in operation.get("parameters", [])
            )
            if has_input or (has_path_values and api.path_errors_are_validation):
                add(api.validation_status)
            for code, response in responses.items():
                if not (isinstance(response, dict) and "$ref" not in response and str(code).isdigit()):
                    continue
                if int(code) >= 400 and "content" not in response:
                    name = api.error_schema_name(int(code))
                    response["content"] = {api.DEFAULT_RESPONSE_CONTENT_TYPE: {"schema": name}}
                if int(code) == 401:
                    response.setdefault("headers", unauthorized_headers())


class ServiceApi(Api):
    """An ``Api`` that leaves error handling to the app and documents its own dialect.

    flask-smorest registers its ``HTTPException`` handler on the whole app, so
    a second instance would silently replace the first one's. ``errors.py``
    installs one handler that answers in the dialect of the service a request
    belongs to; this class only makes the OpenAPI document describe that dialect:
    its error bodies, the errors each operation can answer (``ErrorResponses``)
    and its security scheme.
    """

    def __init__(
        self,
        *,
        error_schema,
        validation_error_schema,
        validation_status: int,
        path_errors_are_validation: bool,
        security_scheme_name: str,
        error_texts: dict[int, str],
        **kwargs,
    ):
        self._error_schema = error_schema
        self._validation_error_schema = validation_error_schema
        self.validation_status = validation_status
        self.path_errors_are_validation = path_errors_are_validation
        self.security_scheme_name = security_scheme_name
        self._error_texts = error_texts
        super().__init__(spec_kwargs={"extra_plugins": [ErrorResponses(self)]}, **kwargs)

    def _register_error_handlers(self):
        return None

    def error_schema_name(self, status: int) -> str:
        schema = self._validation_error_schema if status == self.validation_status else self._error_schema
        return schema.__name__

    def _register_responses(self):
        for schema in {self._error_schema, self._validation_error_schema}:
            self.spec.components.schema(schema.__name__, schema=schema)
        for status in http.HTTPStatus:
            response: dict = {"description": self._error_texts.get(status, status.phrase)}
            if status >= 200 and status not in (204, 304):
                validation = status in (400, 422)
                response["schema"] = self._validation_error_schema if validation else self._error_schema
            if status == 401:
                response["headers"] = unauthorized_headers()
            prepare_response(response, self.spec, self.DEFAULT_RESPONSE_CONTENT_TYPE)
            self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Error", "schema": self._error_schema}
        prepare_response(response, self.spec, self.DEFAULT_RESPONSE_CONTENT_TYPE)
        self.spec.components.response("DEFAULT_ERROR", response, lazy=True)


# The characters that may end a segment whose length leaves two or three characters over: the
# bits past its last whole byte are zero, as every encoder writes them. PyJWT's decoder ignores
# those bits, so without this check an altered last character would read as the same signature.
_CANONICAL_LAST = {2: frozenset("AQgw"), 3: frozenset("AEIMQUYcgkosw048")}


def _one_spelling(token: str) -> bool:
    """Each segment of the token is spelt as an encoder spells its bytes (one spelling per token)."""
    for segment in token.split("."):
        stripped = segment.rstrip("=")
        over = len(stripped) % 4
        if over in _CANONICAL_LAST and stripped[-1] not in _CANONICAL_LAST[over]:
            return False
    return True


class CanonicalTokenJWTManager(JWTManager):
    """flask-jwt-extended's manager, refusing first a token that is not spelt as an encoder
    spells it (``_one_spelling``): the deny list and the logs then know each token by one text.
    The library has no public hook that sees the encoded token; tests/stock/test_auth.py fails
    if this one stops being called."""

    def _decode_jwt_from_config(
        self, encoded_token: str, csrf_value=None, allow_expired: bool = False
    ) -> dict:
        if not _one_spelling(encoded_token):
            raise pyjwt.DecodeError("Invalid token encoding")
        return super()._decode_jwt_from_config(encoded_token, csrf_value, allow_expired)


# A request that must carry a JSON body and carries none (see ``blueprints.parsing``).
MISSING_BODY = "A JSON body is required"

db = SQLAlchemy(model_class=Base)
migrate = Migrate(render_as_batch=True, compare_type=True)
jwt = CanonicalTokenJWTManager()
babel = Babel()
htmx = HTMX()
# Storage comes from RATELIMIT_STORAGE_URI (Redis in production, memory on a laptop).
limiter = Limiter(key_func=get_remote_address)
stock_api = ServiceApi(
    config_prefix="STOCK",
    error_schema=StockError,
    validation_error_schema=StockValidationError,
    validation_status=422,
    # A malformed uuid in the path is a 422 with ``loc: ["path", name]``, as FastAPI answers.
    path_errors_are_validation=True,
    security_scheme_name="OAuth2PasswordBearer",
    error_texts={
        401: "Token de acesso ausente, inválido ou expirado (`WWW-Authenticate: Bearer`)",
        403: "Conta bloqueada ou papel sem permissão para esta ação",
        404: "Não encontrado",
        409: "O estado atual não permite a ação",
        422: "Corpo, caminho ou query inválidos: `detail` lista cada erro com `loc`, `msg` e `type`",
    },
)
tracker_api = ServiceApi(
    config_prefix="TRACKER",
    error_schema=TrackerError,
    validation_error_schema=TrackerError,
    validation_status=400,
    # Anything the path names that does not parse is simply not found.
    path_errors_are_validation=False,
    security_scheme_name=TOKEN_REQUIREMENT,
    error_texts={
        400: "VALIDATION_ERROR, with `details` per field",
        401: "UNAUTHORIZED (no or invalid access token) or TOKEN_EXPIRED (`WWW-Authenticate: Bearer`)",
        402: "PLAN_LIMIT_REACHED: a limit reached (`resource`, `limit`, `current`, `plan`) or a feature "
        "the plan lacks (`details: {feature, plan, available_in}`)",
        403: "FORBIDDEN (role or not a superadmin), USER_BANNED or ORGANIZATION_SUSPENDED",
        404: "NOT_FOUND, also for anything outside the caller's organizations",
        409: "CONFLICT, with `field` when one field's value is the cause",
    },
)
