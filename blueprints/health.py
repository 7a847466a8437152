"""``/health`` at the root of each service's mount point."""

from __future__ import annotations

import logging

from marshmallow import fields

from blueprints.parsing import Blueprint
from blueprints.responses import json_response
from extensions import db
from schemas.common import StockSchema

log = logging.getLogger(__name__)


class HealthOut(StockSchema):
    status = fields.String(required=True, metadata={"description": "ok or degraded"})
    service = fields.String(required=True)
    database = fields.String(required=True, metadata={"description": "ok or unavailable"})
    version = fields.String(required=True)


def make_health_blueprint(service: str, version: str) -> Blueprint:
    blp = Blueprint(f"{service}_health", __name__, description="Service health")

    @blp.route("/health", methods=["GET"])
    @blp.response(200, HealthOut)
    @blp.alt_response(503, schema=HealthOut, description="The database does not answer")
    def health():
        """Liveness and database reachability. Needs no credential."""
        try:
            # Straight to a pooled driver connection (checked on checkout like every other): the
            # ORM session, a SQLAlchemy connection and its result cost more than the round trip.
            connection = db.engine.raw_connection()
            try:
                cursor = connection.cursor()
                cursor.execute("SELECT 1")
                cursor.close()
                connection.commit()
            finally:
                connection.close()
            database = "ok"
        except Exception:  # any driver error means "not reachable" here
            log.exception("health check: database unavailable")
            database = "unavailable"
        body = {
            "status": "ok" if database == "ok" else "degraded",
            "service": service,
            "database": database,
            "version": version,
        }
        # Every member is already text in its wire shape: encoded as it is, without a schema dump.
        return json_response(body, 200 if database == "ok" else 503)

    return blp
