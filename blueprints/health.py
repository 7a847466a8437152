"""``/health`` at the root of each service's mount point.

A liveness probe answered 200 never reaches Flask: ``LivenessProbes`` answers it in front of the
app, after the same database check. A load balancer asks every few seconds, and the request
machinery (context, routing, hooks, logging, metrics) cost more than the check itself. When the
database does not answer, the request goes on to the Flask view below, which logs it, counts it
and answers 503 like any other request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask
from marshmallow import fields

from blueprints.parsing import Blueprint
from blueprints.responses import MIMETYPE, dumps_bytes, json_response
from extensions import db
from observability import REQUEST_ID_HEADER, request_id_for
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
            database_answers(db.engine)
            database = "ok"
        except Exception:  # any driver error means "not reachable" here
            log.exception("health check: database unavailable")
            database = "unavailable"
        # Every member is already text in its wire shape: encoded as it is, without a schema dump.
        return json_response(health_body(service, version, database), 200 if database == "ok" else 503)

    return blp


def health_body(service: str, version: str, database: str) -> dict[str, str]:
    return {
        "status": "ok" if database == "ok" else "degraded",
        "service": service,
        "database": database,
        "version": version,
    }


def database_answers(engine) -> None:
    """``SELECT 1`` on a pooled driver connection (checked on checkout like every other); raises
    when the database does not answer. The ORM session, a SQLAlchemy connection and its result
    cost more than the round trip."""
    connection = engine.raw_connection()
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT 1")
        cursor.close()
        connection.commit()
    finally:
        connection.close()


class LivenessProbes:
    """WSGI middleware answering ``GET <prefix>/health`` of each served service when the database
    answers, with the body, headers and request id the view gives; anything else, and a probe
    whose database check fails, goes on to the app."""

    def __init__(self, wsgi_app: Callable, app: Flask, probes: dict[str, bytes]):
        self.wsgi_app = wsgi_app
        self.app = app
        self.probes = probes
        self.engine = None

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        body = self.probes.get(environ.get("PATH_INFO", ""))
        if body is None or environ.get("REQUEST_METHOD") != "GET" or not self._database_answers():
            return self.wsgi_app(environ, start_response)
        start_response(
            "200 OK",
            [
                ("Content-Type", MIMETYPE),
                ("Content-Length", str(len(body))),
                (REQUEST_ID_HEADER, request_id_for(environ)),
            ],
        )
        return [body]

    def _database_answers(self) -> bool:
        if self.engine is None:
            with self.app.app_context():
                self.engine = db.engine
        try:
            database_answers(self.engine)
        except Exception:  # the view checks again, logs why and answers 503
            return False
        return True


def register_probes(app: Flask, versions: dict[str, tuple[str, Any]]) -> None:
    """Put ``LivenessProbes`` in front of ``app`` for each served service: ``versions`` maps a
    service's mount prefix to its health name and API version."""
    probes = {
        f"{prefix}/health": dumps_bytes(health_body(name, version, "ok"))
        for prefix, (name, version) in versions.items()
    }
    app.wsgi_app = LivenessProbes(app.wsgi_app, app, probes)  # type: ignore[method-assign]
