"""Extensions, created once and bound to the app in ``app.create_app``."""

from __future__ import annotations

from flask_jwt_extended import JWTManager
from flask_migrate import Migrate
from flask_smorest import Api
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

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
    """An ``Api`` that leaves error handling to the app.

    flask-smorest registers its ``HTTPException`` handler on the whole app, so
    a second instance would silently replace the first one's. ``errors.py``
    installs one handler that answers in the dialect of the service a request
    belongs to.
    """

    def _register_error_handlers(self):
        return None


db = SQLAlchemy(model_class=Base)
migrate = Migrate(render_as_batch=True, compare_type=True)
jwt = JWTManager()
stock_api = ServiceApi(config_prefix="STOCK")
tracker_api = ServiceApi(config_prefix="TRACKER")
