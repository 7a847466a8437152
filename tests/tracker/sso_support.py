"""What the single sign-on tests share: the browser's trip through a provider, a provider that
misbehaves on purpose, and a DNS server for the domains' TXT records, all on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import dns.message
import dns.rdatatype
import dns.rrset
import requests
from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.tracker.support import API

CALLBACK = "http://localhost/tracker/sso/callback"


def configure(client, owner, issuer: str, client_id: str, secret: str | None, **extra):
    body = {"issuer": issuer, "client_id": client_id, "domains": ["acme.test"], "enabled": True, **extra}
    if secret is not None:
        body["client_secret"] = secret
    return client.put(f"{API}/organizations/{owner.org_id}/sso", json=body, headers=owner.headers)


def through_provider(url: str) -> str:
    """Follow the provider's redirects as a browser would, up to the way back; returns the
    callback's query string (the callback itself is the test client's to request)."""
    browser = requests.Session()
    for _ in range(12):
        response = browser.get(url, allow_redirects=False, timeout=10)
        location = response.headers.get("Location")
        assert location, (response.status_code, response.text[:500])
        url = urljoin(url, location)
        if url.startswith(CALLBACK):
            return urlsplit(url).query
    raise AssertionError("the provider never sent the browser back")


def sign_in(client, slug: str, email: str | None, next_url: str | None = None):
    """Start at the organization's login page, go through the provider, end at the callback."""
    query = {k: v for k, v in {"login_hint": email, "next": next_url}.items() if v}
    started = client.get(f"/tracker/sso/{slug}/login", query_string=query)
    assert started.status_code == 302, started.get_data(as_text=True)[:500]
    return client.get(f"/tracker/sso/callback?{through_provider(started.headers['Location'])}")


def signed_in_email(client) -> str | None:
    """Whose cookie session the test client holds (the profile page shows the address)."""
    page = client.get("/perfil")
    if page.status_code != 200:
        return None
    text = page.get_data(as_text=True)
    marker = 'id="email"'
    at = text.find(marker)
    if at < 0:
        return None
    value = text[at:].split('value="', 1)[1].split('"', 1)[0]
    return value


class HostileProvider:
    """An OpenID provider on loopback whose ID tokens break one rule at a time (``flaw``):
    signed by a key it does not publish, expired, issued in the future, another nonce,
    another audience or issuer, an unproven address. ``rotate()`` publishes a new key."""

    def __init__(self) -> None:
        self.flaw: str | None = None
        self.email = "ana@acme.test"
        self.email_verified = True
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig", "alg": "RS256"})
        self.stranger = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig", "alg": "RS256"})
        self.codes: dict[str, dict] = {}
        self.jwks_fetches = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def _json(self, body: dict, status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                parts = urlsplit(self.path)
                if parts.path == "/.well-known/openid-configuration":
                    return self._json(provider.discovery())
                if parts.path == "/jwks":
                    provider.jwks_fetches += 1
                    return self._json({"keys": [provider.key.as_dict(private=False)]})
                if parts.path == "/auth":
                    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                    code = f"code-{len(provider.codes) + 1}"
                    provider.codes[code] = query
                    self.send_response(302)
                    self.send_header(
                        "Location",
                        f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}",
                    )
                    self.end_headers()
                    return None
                return self._json({"error": "not_found"}, 404)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                request = provider.codes.pop(form.get("code", ""), None)
                if request is None:
                    return self._json({"error": "invalid_grant"}, 400)
                return self._json(
                    {"access_token": "x", "token_type": "Bearer", "id_token": provider.id_token(request)}
                )

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def discovery(self) -> dict:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/auth",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        }

    def rotate(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k2", "use": "sig", "alg": "RS256"})

    def id_token(self, request: dict) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": request["client_id"],
            "sub": "hostile-" + self.email,
            "iat": now,
            "exp": now + 300,
            "nonce": request.get("nonce"),
            "email": self.email,
            "email_verified": self.email_verified,
            "name": "Ana Acme",
        }
        key = self.key
        if self.flaw == "foreign_key":
            key = self.stranger
        elif self.flaw == "expired":
            claims.update(iat=now - 3600, exp=now - 1800)
        elif self.flaw == "future":
            claims.update(iat=now + 3600, exp=now + 7200)
        elif self.flaw == "nonce":
            claims["nonce"] = "another-sign-in"
        elif self.flaw == "audience":
            claims["aud"] = "someone-else"
        elif self.flaw == "issuer":
            claims["iss"] = "http://127.0.0.1:1"
        return jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class TxtServer:
    """A DNS server on loopback (UDP) answering TXT questions from ``records``."""

    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.running = True
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.running:
            try:
                data, peer = self.sock.recvfrom(4096)
            except OSError:
                return
            query = dns.message.from_wire(data)
            response = dns.message.make_response(query)
            question = query.question[0]
            name = question.name.to_text().rstrip(".")
            values = self.records.get(name, [])
            if question.rdtype == dns.rdatatype.TXT and values:
                response.answer.append(
                    dns.rrset.from_text(question.name, 60, "IN", "TXT", *(f'"{v}"' for v in values))
                )
            else:
                response.set_rcode(3)  # NXDOMAIN
            self.sock.sendto(response.to_wire(), peer)

    def close(self) -> None:
        self.running = False
        self.sock.close()
