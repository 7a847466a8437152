"""Extensions, created once and bound to the app in ``app.create_app``."""

from __future__ import annotations

import http

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


class ServiceApi(Api):
    """An ``Api`` that leaves error handling to the app and documents its own dialect.

    flask-smorest registers its ``HTTPException`` handler on the whole app, so
    a second instance would silently replace the first one's. ``errors.py``
    installs one handler that answers in the dialect of the service a request
    belongs to; this class only makes the OpenAPI document describe that dialect.
    """

    def __init__(self, *, error_schema, validation_error_schema, **kwargs):
        self._error_schema = error_schema
        self._validation_error_schema = validation_error_schema
        super().__init__(**kwargs)

    def _register_error_handlers(self):
        return None

    def _register_responses(self):
        for status in http.HTTPStatus:
            response: dict = {"description": status.phrase}
            if status >= 200 and status not in (204, 304):
                validation = status in (400, 422)
                response["schema"] = self._validation_error_schema if validation else self._error_schema
            prepare_response(response, self.spec, self.DEFAULT_RESPONSE_CONTENT_TYPE)
            self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Error", "schema": self._error_schema}
        prepare_response(response, self.spec, self.DEFAULT_RESPONSE_CONTENT_TYPE)
        self.spec.components.response("DEFAULT_ERROR", response, lazy=True)


db = SQLAlchemy(model_class=Base)
migrate = Migrate(render_as_batch=True, compare_type=True)
jwt = JWTManager()
babel = Babel()
htmx = HTMX()
# Storage comes from RATELIMIT_STORAGE_URI (Redis in production, memory on a laptop).
limiter = Limiter(key_func=get_remote_address)
stock_api = ServiceApi(
    config_prefix="STOCK", error_schema=StockError, validation_error_schema=StockValidationError
)
tracker_api = ServiceApi(
    config_prefix="TRACKER", error_schema=TrackerError, validation_error_schema=TrackerError
)
