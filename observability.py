"""Request ids, JSON logs, /metrics and /health/ready.

Every request gets an id: the caller's ``X-Request-ID`` when it is a sane token
(1-128 of ``A-Z a-z 0-9 . _ : -``), otherwise a new one. It is echoed in the
response's ``X-Request-ID``, carried by every log line written while the
request runs (with the user id once known), and quoted in the body of an
unexpected error (500) so that a user's report finds its log lines. Other error
bodies keep their documented dialects exactly and carry the id in the header only.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import re
import time
from datetime import UTC, datetime

import orjson
from flask import Flask, Response, g, has_request_context, request
from sqlalchemy import func, select, text
from sqlalchemy import inspect as sa_inspect

REQUEST_ID_HEADER = "X-Request-ID"
_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
log = logging.getLogger("giro.request")


def request_id_for(environ: dict) -> str:
    """The caller's ``X-Request-ID`` when it is a sane token, otherwise a new one."""
    given = environ.get("HTTP_X_REQUEST_ID", "")
    return given if given and _SANE_ID.match(given) else os.urandom(16).hex()


def request_id() -> str | None:
    return getattr(g, "request_id", None) if has_request_context() else None


def _user_id(context) -> str | None:
    user = getattr(context, "_jwt_extended_jwt_user", None)
    loaded = user.get("loaded_user") if isinstance(user, dict) else None
    if loaded is None:
        return None
    # The key the session knows it by: reading ``loaded.id`` after a rollback would reload the
    # expired row, a query from inside a log call.
    identity = sa_inspect(loaded).identity
    return str(identity[0]) if identity else None


class ContextFilter(logging.Filter):
    """Adds the request id and the user id to every record written inside a request, and the
    job id to every record written by a job."""

    current_job_id = None  # services.jobs' context variable, imported at the first record

    def filter(self, record: logging.LogRecord) -> bool:
        if has_request_context():
            context = g._get_current_object()
            record.request_id = getattr(context, "request_id", None)
            record.user_id = _user_id(context)
        if self.current_job_id is None:
            from services.jobs import current_job_id

            ContextFilter.current_job_id = current_job_id
        job_id = self.current_job_id.get()
        if job_id is not None:
            record.job_id = job_id
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the request's context."""

    FIELDS = ("request_id", "user_id", "method", "path", "status", "duration_ms", "remote_addr", "job_id")

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in self.FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        # orjson: a log line per request is on every request's path.
        return orjson.dumps(entry, default=str).decode()


def configure_logging(fmt: str, level: str = "INFO") -> None:
    """Root logging to stderr, JSON (``LOG_FORMAT=json``, the default) or plain text."""
    handler = logging.StreamHandler()
    handler.addFilter(ContextFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter(
                "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s",
                defaults={"request_id": "-"},
            )
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # A record per request: skip what no format here prints (the caller's file and line, found
    # by walking the stack; the thread and process names). The process id stays: gunicorn's
    # own log lines print it.
    logging._srcfile = None
    logging.logThreads = False
    logging.logMultiprocessing = False


def register(app: Flask) -> None:
    from extensions import db
    from services import ops_metrics

    log_requests = app.config["LOG_REQUESTS"]
    # Liveness probes answered 200: a load balancer asks every few seconds, and their log lines
    # and samples would drown the requests people make. A probe answered 503 is logged and counted.
    probes = frozenset(
        f"{app.config[f'{service.upper()}_PREFIX']}/health" for service in ("stock", "tracker")
    )

    @app.before_request
    def start_request():
        # ``g`` and ``request`` are proxies, each access a context look-up: read them once.
        context = g._get_current_object()
        context.request_id = request_id_for(request.environ)
        context.request_started = time.perf_counter()

    @app.after_request
    def finish_request(response: Response) -> Response:
        context = g._get_current_object()
        rid = getattr(context, "request_id", None) or os.urandom(16).hex()
        response.headers[REQUEST_ID_HEADER] = rid
        started = getattr(context, "request_started", None)
        seconds = time.perf_counter() - started if started is not None else 0.0
        current = request._get_current_object()
        rule = current.url_rule
        endpoint = rule.rule if rule is not None else "<unmatched>"
        method, status = current.method, response.status_code
        if status == 200 and endpoint in probes:
            return response
        if endpoint != "/metrics":
            ops_metrics.observe_request(method, endpoint, status, seconds)
        ops_metrics.observe_pool(db.engine)
        if log_requests and log.isEnabledFor(logging.INFO):
            path = current.path
            log.info(
                "%s %s %s",
                method,
                path,
                status,
                extra={
                    "method": method,
                    "path": path,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 1),
                    "remote_addr": current.remote_addr,
                },
            )
        return response

    @app.route("/metrics", methods=["GET"])
    def metrics():
        """Prometheus text: ``Authorization: Bearer METRICS_TOKEN``, or open on loopback
        outside production."""
        refusal = _refuse_metrics(app)
        if refusal is not None:
            return refusal
        body, content_type = ops_metrics.exposition(_jobs_by_state)
        return Response(body, content_type=content_type)

    @app.route("/health/ready", methods=["GET"])
    def ready():
        """Readiness: the database answers and, when REDIS_URL is set, Redis does."""
        from services import job_queue

        try:
            db.session.execute(text("SELECT 1"))
            database = "ok"
        except Exception:
            logging.getLogger("giro.health").exception("readiness: database unavailable")
            db.session.rollback()
            database = "unavailable"
        redis = job_queue.redis_ok(app)
        checks = {
            "database": database,
            "redis": {None: "not configured", True: "ok", False: "unavailable"}[redis],
        }
        ok = database == "ok" and redis is not False
        return {"status": "ok" if ok else "degraded", **checks}, (200 if ok else 503)


def _jobs_by_state() -> dict[str, int]:
    from extensions import db
    from models.jobs import Job

    rows = db.session.execute(select(Job.state, func.count()).group_by(Job.state)).all()
    db.session.rollback()
    return {state: count for state, count in rows}


def _is_loopback(address: str | None) -> bool:
    try:
        return ipaddress.ip_address(address or "").is_loopback
    except ValueError:
        return False


def _refuse_metrics(app: Flask) -> Response | None:
    token = app.config["METRICS_TOKEN"]
    sent = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return None
    # In production a reverse proxy on the same host makes every request look like loopback
    # (TRUSTED_PROXIES unset), so loopback alone opens nothing there.
    if app.config["ENV_NAME"] != "production" and _is_loopback(request.remote_addr) and not sent:
        return None
    if not token:
        return Response(
            "metrics need METRICS_TOKEN (served without it on loopback only, outside production)\n",
            403,
            mimetype="text/plain",
        )
    return Response(
        "a bearer METRICS_TOKEN is required\n",
        401,
        mimetype="text/plain",
        headers={"WWW-Authenticate": "Bearer"},
    )
