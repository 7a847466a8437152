"""A loopback Web Push service (RFC 8030) standing in for FCM or Mozilla autopush: a test sends to
``service.subscription()`` with pywebpush and reads the decrypted notification the browser
would receive. It checks what real services check (VAPID per RFC 8292, aes128gcm per RFC 8291),
so a misconfigured sender fails here as it would in production."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

P256 = ec.SECP256R1()
REQUIRED = {"require": ["exp", "aud", "sub"]}
MAX_BODY = 4096  # RFC 8291 §4: services need accept no more; autopush answers 413 above it


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_point(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)


def vapid_keys() -> tuple[str, str]:
    """``(VAPID_PRIVATE_KEY, VAPID_PUBLIC_KEY)`` as the app reads them from the environment: the
    private key is the raw 32-byte scalar in base64url (one line, what ``pywebpush.webpush``
    accepts as a string); the public key is the uncompressed point in base64url, what the
    browser's ``pushManager.subscribe({applicationServerKey})`` takes."""
    key = ec.generate_private_key(P256)
    return b64url(key.private_numbers().private_value.to_bytes(32, "big")), b64url(public_point(key))


@dataclass
class Received:
    endpoint_id: str
    payload: dict | str  # the JSON object the app sent, or the text when it is not one
    vapid_claims: dict
    vapid_public_key: str  # the ``k`` of the Authorization header, base64url
    headers: dict  # request headers, keys lower-cased


@dataclass
class _Endpoint:
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes
    application_server_key: str | None  # set: only this VAPID key may push, as in browsers


class _Rejected(Exception):
    """``(status, reason)``: how a real service refuses the push."""


class PushService:
    def __init__(self):
        self.received: list[Received] = []
        self.rejected: list[tuple[str, int, str]] = []  # (endpoint id, status, reason)
        self.fail_all: int | None = None  # e.g. 503: every push answers this, nothing recorded
        self._endpoints: dict[str, _Endpoint] = {}
        self._answers: dict[str, int | None] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self.port = self._server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def subscription(self, application_server_key: str | None = None) -> dict:
        """A new endpoint, as ``PushSubscription.toJSON()`` gives it to the page. With
        ``application_server_key`` it accepts only pushes signed by that VAPID key (403 otherwise),
        as FCM and autopush do for a subscription made with it."""
        endpoint_id, key, auth = secrets.token_urlsafe(16), ec.generate_private_key(P256), os.urandom(16)
        with self._lock:
            self._endpoints[endpoint_id] = _Endpoint(key, auth, application_server_key)
        return {
            "endpoint": f"{self.origin}/push/{endpoint_id}",
            "keys": {"p256dh": b64url(public_point(key)), "auth": b64url(auth)},
        }

    def answer(self, endpoint: str | dict, status: int | None) -> None:
        """Make one endpoint (id, URL or subscription) answer ``status`` unread, e.g. 410 once the
        user unsubscribed; ``None`` restores it."""
        endpoint_id = (endpoint["endpoint"] if isinstance(endpoint, dict) else endpoint).rsplit("/", 1)[-1]
        with self._lock:
            self._answers[endpoint_id] = status

    def wait_for(self, count: int, timeout: float = 5) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.02)
        raise AssertionError(f"{len(self.received)} of {count} pushes arrived; rejected: {self.rejected}")

    def _vapid(self, header: str, endpoint: _Endpoint) -> tuple[dict, str]:
        scheme, _, params = header.partition(" ")
        if scheme.lower() != "vapid":  # the draft's "WebPush <jwt>" + Crypto-Key is not RFC 8292
            raise _Rejected(401, f"Authorization scheme {scheme!r} is not vapid")
        fields = dict(part.strip().partition("=")[::2] for part in params.split(","))
        token, k = fields.get("t", ""), fields.get("k", "")
        try:
            public_key = ec.EllipticCurvePublicKey.from_encoded_point(P256, b64url_decode(k))
            # PyJWT checks the ES256 signature, that exp is in the future and aud is this origin
            claims = jwt.decode(token, public_key, ["ES256"], audience=self.origin, options=REQUIRED)
        except (ValueError, jwt.InvalidTokenError) as error:
            raise _Rejected(401, f"VAPID: {error}") from error
        if claims["exp"] > time.time() + 24 * 3600:
            raise _Rejected(401, "VAPID: exp more than 24 h ahead")
        if not str(claims["sub"]).startswith(("mailto:", "https:")):
            raise _Rejected(401, f"VAPID: sub {claims['sub']!r} is not a mailto: or https: URL")
        if endpoint.application_server_key not in (None, k):
            raise _Rejected(403, "VAPID key differs from the subscription's applicationServerKey")
        return claims, k

    def _handle(self, path: str, headers: dict, body: bytes) -> int:
        endpoint_id = path.removeprefix("/push/")
        with self._lock:
            status = self.fail_all or self._answers.get(endpoint_id)
        if status:  # a failure the test set: answered unread, as a real service would
            return status
        try:
            received = self._push(endpoint_id, headers, body)
        except _Rejected as rejection:
            status, reason = rejection.args
            with self._lock:
                self.rejected.append((endpoint_id, status, reason))
            return status
        with self._lock:
            self.received.append(received)
        return 201

    def _push(self, endpoint_id: str, headers: dict, body: bytes) -> Received:
        endpoint = self._endpoints.get(endpoint_id)
        if endpoint is None:  # also any path but /push/<id>
            raise _Rejected(404, "no such subscription")
        if "ttl" not in headers:
            raise _Rejected(400, "missing TTL header")
        claims, k = self._vapid(headers.get("authorization", ""), endpoint)
        if len(body) > MAX_BODY:
            raise _Rejected(413, f"body of {len(body)} bytes exceeds {MAX_BODY}")
        payload: dict | str = ""  # an empty push is valid: the worker shows a generic notification
        if body:
            if headers.get("content-encoding") != "aes128gcm":
                raise _Rejected(400, f"Content-Encoding {headers.get('content-encoding')!r} is not aes128gcm")
            try:  # aes128gcm carries the sender's ephemeral public key in its header: no dh argument
                plain = http_ece.decrypt(body, private_key=endpoint.private_key, auth_secret=endpoint.auth)
                payload = plain.decode()
            except Exception as error:  # ECEException, a bad point, or bytes that are not UTF-8
                raise _Rejected(400, f"undecryptable body: {error!r}") from error
            with contextlib.suppress(ValueError):
                parsed = json.loads(payload)
                payload = parsed if isinstance(parsed, dict) else payload
        return Received(endpoint_id, payload, claims, k, headers)


def _make_handler(service: PushService):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            status = service._handle(self.path, headers, body)
            self.send_response(status)
            if status == 201:  # RFC 8030 §5: the created push message resource
                self.send_header("Location", f"/message/{uuid.uuid4()}")
            if status in (429, 503):  # pywebpush exposes it as WebPushException.retry_after
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):  # keep the test output quiet
            pass

    return Handler
