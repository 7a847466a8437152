"""Configuration read from the environment, with safe development defaults.

Production (``GIRO_ENV=production``) refuses to start with the development
secrets, so a forgotten variable cannot ship a guessable signing key.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
DEV_SECRET_KEY = "dev-secret-key-not-for-production"
DEV_JWT_SECRET_KEY = "dev-jwt-secret-key-not-for-production"
MIN_SECRET_LENGTH = 32


def _bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def _prefix(name: str, default: str) -> str:
    """Normalise a mount prefix: '' or '/something' without a trailing slash."""
    raw = os.environ.get(name, default).strip()
    if raw in ("", "/"):
        return ""
    return "/" + raw.strip("/")


def normalize_database_url(url: str) -> str:
    """Point PostgreSQL URLs at psycopg 3, the driver the project installs."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def default_database_url() -> str:
    instance = BASE_DIR / "instance"
    return f"sqlite:///{instance / 'giro.db'}"


class Config:
    """Values shared by every environment; each is overridable by a variable."""

    ENV_NAME = os.environ.get("GIRO_ENV", "development")
    # An empty variable counts as unset.
    SECRET_KEY = os.environ.get("SECRET_KEY") or DEV_SECRET_KEY
    JWT_SECRET_KEY = os.environ.get("JWT_SECRET_KEY") or DEV_JWT_SECRET_KEY
    SQLALCHEMY_DATABASE_URI = normalize_database_url(os.environ.get("DATABASE_URL", default_database_url()))
    # Connections are checked before use only after a second idle (``database.py``).
    SQLALCHEMY_ENGINE_OPTIONS: dict = {}
    DATABASE_PING_AFTER_IDLE = float(os.environ.get("DATABASE_PING_AFTER_IDLE") or 1.0)
    # SQLite: seconds a writer waits for the write lock before its request answers 503.
    SQLITE_BUSY_TIMEOUT = float(os.environ.get("SQLITE_BUSY_TIMEOUT") or 30.0)
    SUPERADMIN_EMAIL = os.environ.get("SUPERADMIN_EMAIL", "").strip().lower() or None

    # Which services this deployment serves and where they are mounted.
    SERVICES = tuple(s.strip() for s in os.environ.get("SERVICES", "stock,tracker").split(",") if s.strip())
    STOCK_PREFIX = _prefix("STOCK_PREFIX", "")
    TRACKER_PREFIX = _prefix("TRACKER_PREFIX", "/tracker")

    # Public address used in e-mailed links.
    PUBLIC_URL = os.environ.get("PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

    # Tokens (docs/security.md, "Accounts and sessions": access 24 h, refresh 7 days, 1 day without "remember").
    JWT_ACCESS_TOKEN_EXPIRES = timedelta(hours=24)
    JWT_REFRESH_TOKEN_EXPIRES = timedelta(days=7)
    JWT_REFRESH_TOKEN_SHORT_EXPIRES = timedelta(days=1)
    JWT_TOKEN_LOCATION = ["headers", "cookies"]
    JWT_COOKIE_SECURE = _bool("JWT_COOKIE_SECURE", False)
    JWT_COOKIE_SAMESITE = "Lax"
    JWT_COOKIE_CSRF_PROTECT = True
    JWT_CSRF_IN_COOKIES = True
    JWT_ACCESS_COOKIE_PATH = "/"
    JWT_CSRF_CHECK_FORM = True  # plain (non-htmx) page forms carry csrf_token
    JWT_ACCESS_CSRF_HEADER_NAME = "X-CSRF-TOKEN"
    PASSWORD_RESET_TTL = timedelta(hours=1)
    EMAIL_VERIFICATION_TTL = timedelta(hours=48)
    BABEL_DEFAULT_LOCALE = "pt_BR"
    BABEL_DEFAULT_TIMEZONE = "America/Sao_Paulo"

    # argon2id cost; tests lower it through the environment to stay quick.
    ARGON2_TIME_COST = int(os.environ.get("ARGON2_TIME_COST", "3"))
    ARGON2_MEMORY_COST = int(os.environ.get("ARGON2_MEMORY_COST", str(64 * 1024)))

    # Outgoing mail; with no SMTP_HOST the message is written to the log.
    SMTP_HOST = os.environ.get("SMTP_HOST") or None
    SMTP_PORT = int(os.environ.get("SMTP_PORT", "587"))
    SMTP_USER = os.environ.get("SMTP_USER") or None
    SMTP_PASSWORD = os.environ.get("SMTP_PASSWORD") or None
    SMTP_STARTTLS = _bool("SMTP_STARTTLS", True)
    MAIL_FROM = os.environ.get("MAIL_FROM", "Giro <no-reply@giro.local>")
    # Web Push for remanejamento notifications: the VAPID key pair (private: the raw key,
    # base64url; public: the uncompressed point, base64url, what browsers subscribe with) and a
    # contact (mailto: or https:). Without all three, push is shown as unavailable.
    VAPID_PRIVATE_KEY = os.environ.get("VAPID_PRIVATE_KEY") or ""
    VAPID_PUBLIC_KEY = os.environ.get("VAPID_PUBLIC_KEY") or ""
    VAPID_SUBJECT = os.environ.get("VAPID_SUBJECT") or ""
    # Browsers' push endpoints may be on loopback (a push service on the same host, the tests).
    PUSH_ALLOW_LOOPBACK = _bool("PUSH_ALLOW_LOOPBACK", True)
    # Account e-mails (confirmation, reset) leave from a background job, after the request commits.
    MAIL_VIA_JOBS = _bool("MAIL_VIA_JOBS", True)

    REDIS_URL = os.environ.get("REDIS_URL") or None
    # Brute-force protection: failed sign-ins per address and e-mail, account e-mails per
    # recipient and client. Without Redis the counters live in the database, so that every
    # worker process counts against one budget (services/rate_limits.py).
    RATELIMIT_STORAGE_URI = os.environ.get("RATELIMIT_STORAGE_URI") or REDIS_URL or "giro+database://"
    RATELIMIT_HEADERS_ENABLED = True
    # Installations (or test runs) sharing one Redis keep their counters apart.
    RATELIMIT_KEY_PREFIX = os.environ.get("RATELIMIT_KEY_PREFIX", "")
    # Redis down: each process counts sign-in failures in memory meanwhile, unless
    # LOGIN_THROTTLE_FAIL_CLOSED asks to refuse sign-ins (503) until Redis answers again.
    RATELIMIT_IN_MEMORY_FALLBACK_ENABLED = True
    RATELIMIT_SWALLOW_ERRORS = True
    LOGIN_THROTTLE_FAIL_CLOSED = _bool("LOGIN_THROTTLE_FAIL_CLOSED", False)

    # Days of sales the engine's demand estimate reads, at least the rules' periodo (docs/engine.md §1).
    ENGINE_HISTORY_DAYS = int(os.environ.get("ENGINE_HISTORY_DAYS", "91"))

    # A transfer in transit longer than this many days is flagged (services/stock/transit.py).
    TRANSIT_ALERT_DAYS = int(os.environ.get("TRANSIT_ALERT_DAYS", "7"))

    # Background jobs (services/jobs.py): RQ workers on REDIS_URL, else threads of this process.
    JOBS_QUEUE = os.environ.get("JOBS_QUEUE", "giro")
    JOBS_THREADS = int(os.environ.get("JOBS_THREADS", "2"))
    JOBS_TIMEOUT = int(os.environ.get("JOBS_TIMEOUT", "3600"))  # seconds one job step may run
    JOBS_STALE_AFTER = int(os.environ.get("JOBS_STALE_AFTER", "900"))  # silent this long: its worker is lost
    JOBS_SPOOL_DIR = os.environ.get("JOBS_SPOOL_DIR") or str(BASE_DIR / "instance" / "jobs")
    JOBS_PARTITION_CELLS = int(os.environ.get("JOBS_PARTITION_CELLS", "2000000"))
    JOBS_MAX_PARTITIONS = int(os.environ.get("JOBS_MAX_PARTITIONS", "16"))
    JOBS_REDIS_FALLBACK = _bool("JOBS_REDIS_FALLBACK", True)
    JOBS_KEEP_DAYS = int(os.environ.get("JOBS_KEEP_DAYS", "30"))  # finished jobs' records
    JOBS_EAGER = False  # run jobs inline in the caller's thread (the test suite)
    JOBS_EAGER_DEFERRED: tuple[str, ...] = ()  # with JOBS_EAGER, kinds left queued instead
    # Tracker search: a sentence-embedding model in ONNX format (model.onnx + tokenizer.json);
    # unset, the built-in encoder learns from each organization's issues (services/tracker/embeddings.py).
    EMBEDDING_MODEL_DIR = os.environ.get("EMBEDDING_MODEL_DIR") or None
    # Tracker webhooks may call loopback addresses (a receiver on the same host); private,
    # link-local, multicast and reserved addresses are always refused.
    WEBHOOKS_ALLOW_LOOPBACK = _bool("WEBHOOKS_ALLOW_LOOPBACK", True)
    # Single sign-on: an issuer may be http on loopback (a provider on the same host, the tests).
    SSO_ALLOW_LOOPBACK = _bool("SSO_ALLOW_LOOPBACK", True)
    # Fernet keys (comma-separated, the first encrypts) for the providers' client secrets;
    # unset, a key derived from SECRET_KEY.
    SSO_ENCRYPTION_KEYS = os.environ.get("SSO_ENCRYPTION_KEYS") or ""
    # Where domain checks ask for TXT records ("host:port,..."); unset, the system's resolvers.
    SSO_DNS_NAMESERVERS = os.environ.get("SSO_DNS_NAMESERVERS") or ""

    # Observability (observability.py).
    LOG_FORMAT = os.environ.get("LOG_FORMAT", "json")
    LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
    LOG_REQUESTS = _bool("LOG_REQUESTS", True)
    METRICS_TOKEN = os.environ.get("METRICS_TOKEN") or None
    LOGIN_RATE_LIMIT = os.environ.get("LOGIN_RATE_LIMIT", "10 per 15 minutes")
    # Account e-mails (registration, confirmation link, password reset), per recipient and per client.
    MAIL_RATE_LIMIT = os.environ.get("MAIL_RATE_LIMIT", "5 per hour")
    MAIL_CLIENT_RATE_LIMIT = os.environ.get("MAIL_CLIENT_RATE_LIMIT", "20 per hour")
    # Reverse proxies in front of the app whose X-Forwarded-For is trusted (0 = none).
    TRUSTED_PROXIES = int(os.environ.get("TRUSTED_PROXIES", "0"))
    # The retailer's business day (sales dates, "today", batch weeks).
    TIMEZONE = os.environ.get("GIRO_TIMEZONE", "America/Sao_Paulo")

    # flask-smorest: one Api per service, each configured through its prefix.
    STOCK_API_TITLE = "Giro Remanejamento"
    STOCK_API_VERSION = "0.1.0"
    STOCK_OPENAPI_VERSION = "3.0.3"
    STOCK_OPENAPI_JSON_PATH = "openapi.json"
    STOCK_OPENAPI_SWAGGER_UI_PATH = "docs"
    TRACKER_API_TITLE = "Giro Tracker"
    TRACKER_API_VERSION = "0.1.0"
    TRACKER_OPENAPI_VERSION = "3.0.3"
    TRACKER_OPENAPI_JSON_PATH = "openapi.json"
    TRACKER_OPENAPI_SWAGGER_UI_PATH = "docs"

    JSON_SORT_KEYS = False
    # Largest request body, in bytes; larger ones answer 413 before anything reads them.
    # 2 MiB holds the largest legitimate body (a 100,000-character Markdown description,
    # even written as \uXXXX escapes) with room to spare.
    MAX_CONTENT_LENGTH = int(os.environ.get("MAX_CONTENT_LENGTH") or 2 * 1024 * 1024)
    # The admin's CSV upload page takes files this large (the CLI has no limit).
    IMPORT_MAX_CONTENT_LENGTH = int(os.environ.get("IMPORT_MAX_CONTENT_LENGTH") or 200 * 1024 * 1024)
    # Files attached to tracker issues: the largest one, and where they are kept
    # (``file:///dir`` or ``s3://bucket/prefix``).
    MAX_ATTACHMENT_BYTES = int(os.environ.get("MAX_ATTACHMENT_BYTES") or 25 * 1024 * 1024)
    STORAGE_URL = os.environ.get("STORAGE_URL") or (BASE_DIR / "instance" / "attachments").as_uri()
    # An S3-compatible store other than AWS (MinIO, Ceph...); credentials and region come from
    # the standard AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION).
    STORAGE_S3_ENDPOINT_URL = os.environ.get("STORAGE_S3_ENDPOINT_URL") or None

    @classmethod
    def check(cls, config: dict) -> None:
        """Refuse to run in production on development secrets or with clashing mounts."""
        secrets = (config["SECRET_KEY"], config["JWT_SECRET_KEY"])
        weak = any(s in (DEV_SECRET_KEY, DEV_JWT_SECRET_KEY) or len(s) < MIN_SECRET_LENGTH for s in secrets)
        if config["ENV_NAME"] == "production" and weak:
            raise RuntimeError(
                "GIRO_ENV=production needs SECRET_KEY and JWT_SECRET_KEY set in the environment, "
                f"each at least {MIN_SECRET_LENGTH} characters (e.g. `openssl rand -hex 32`)"
            )
        if not str(config.get("STORAGE_URL") or "").startswith(("file:///", "s3://")):
            raise RuntimeError("STORAGE_URL must be file:///directory or s3://bucket/prefix")
        unknown = set(config["SERVICES"]) - {"stock", "tracker"}
        if unknown:
            raise RuntimeError(f"SERVICES names unknown services: {', '.join(sorted(unknown))}")
        if {"stock", "tracker"} <= set(config["SERVICES"]) and (
            config["STOCK_PREFIX"] == config["TRACKER_PREFIX"]
        ):
            raise RuntimeError(
                "STOCK_PREFIX and TRACKER_PREFIX must differ when one process serves both services"
            )
