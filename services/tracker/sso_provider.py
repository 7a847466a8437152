"""Talking to an organization's OpenID Connect provider: discovery, keys, the authorization
code exchange (Authlib) and the ID token's checks (joserfc).

Every URL the server fetches (the issuer's discovery document, its token endpoint and
JWKS) passes the same address checks as webhooks: https, or http to loopback while
``SSO_ALLOW_LOOPBACK`` is on; never a private, link-local or reserved address; no
redirects followed. Discovery documents and key sets are kept for ``CACHE_SECONDS``;
a token signed with a key the kept set lacks fetches the set again once (key rotation).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import requests
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.requests_client import OAuth2Session
from flask import current_app
from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import KeySet

from services.errors import DomainError, FieldError, ValidationFailed
from services.outbound import RefusedAddress, addresses_of, check_addresses, parse_url

TIMEOUT = 5.0
CACHE_SECONDS = 600
LEEWAY = 60  # seconds of clock skew allowed on exp, iat and nbf
SCOPE = "openid email profile"
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]
MAX_DOCUMENT_BYTES = 512 * 1024


class SsoRefused(DomainError):
    """A sign-in or a provider check that failed; ``reason`` picks the page's pt-BR text."""

    def __init__(self, reason: str, message: str, **params: Any):
        super().__init__(message, "SSO_FAILED", 400, {}, reason, params)


def _loopback_allowed() -> bool:
    return bool(current_app.config["SSO_ALLOW_LOOPBACK"])


def check_provider_url(url: str, field: str = "issuer") -> None:
    """Refuse (400 naming ``field``) a provider URL the server may not fetch."""
    try:
        _checked(url)
    except RefusedAddress as exc:
        raise ValidationFailed(
            [FieldError(("body", field), str(exc), reason="sso_issuer_refused")], "Validation failed"
        ) from None


def _checked(url: str) -> str:
    target = parse_url(url)
    addresses = addresses_of(target)
    if not addresses:
        raise RefusedAddress(f"{target.host} does not resolve")
    check_addresses(target, addresses, allow_loopback=_loopback_allowed())
    return url


def _get_json(url: str, what: str) -> dict:
    try:
        _checked(url)
        response = requests.get(
            url, timeout=TIMEOUT, allow_redirects=False, headers={"Accept": "application/json"}
        )
    except RefusedAddress as exc:
        raise SsoRefused("provider_url_refused", f"{what}: {exc}", url=url) from None
    except requests.RequestException as exc:
        raise SsoRefused(
            "provider_unreachable", f"{what} unreachable: {exc.__class__.__name__}", url=url
        ) from None
    if response.status_code != 200 or len(response.content) > MAX_DOCUMENT_BYTES:
        raise SsoRefused(
            "provider_bad_answer",
            f"{what} answered {response.status_code}",
            url=url,
            status=response.status_code,
        )
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise SsoRefused(
            "provider_bad_answer", f"{what} is not a JSON object", url=url, status=response.status_code
        )
    return document


_cache: dict[str, tuple[float, Any]] = {}
_cache_lock = threading.Lock()


def _cached(key: str, load, fresh: bool = False):
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and not fresh and now - hit[0] < CACHE_SECONDS:
        return hit[1]
    value = load()
    with _cache_lock:
        _cache[key] = (now, value)
    return value


@dataclass(frozen=True)
class ProviderMetadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    token_auth_method: str
    pkce_s256: bool


def discover(issuer: str, fresh: bool = False) -> ProviderMetadata:
    """The provider's discovery document, checked: its ``issuer`` is exactly the configured one."""

    def load() -> ProviderMetadata:
        url = issuer.rstrip("/") + "/.well-known/openid-configuration"
        document = _get_json(url, "Discovery document")
        if document.get("issuer") != issuer:
            raise SsoRefused(
                "issuer_mismatch",
                f"The discovery document names issuer {document.get('issuer')!r}, not {issuer!r}",
                found=str(document.get("issuer")),
            )
        missing = [k for k in ("authorization_endpoint", "token_endpoint", "jwks_uri") if not document.get(k)]
        if missing:
            raise SsoRefused(
                "provider_bad_answer",
                f"The discovery document lacks {', '.join(missing)}",
                url=url,
                status=200,
            )
        methods = document.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        return ProviderMetadata(
            issuer=issuer,
            authorization_endpoint=document["authorization_endpoint"],
            token_endpoint=document["token_endpoint"],
            jwks_uri=document["jwks_uri"],
            token_auth_method="client_secret_basic"
            if "client_secret_basic" in methods
            else "client_secret_post",
            pkce_s256="S256" in (document.get("code_challenge_methods_supported") or []),
        )

    return _cached(f"discovery:{issuer}", load, fresh)


def key_set(metadata: ProviderMetadata, fresh: bool = False) -> KeySet:
    def load() -> KeySet:
        document = _get_json(metadata.jwks_uri, "Key set (JWKS)")
        try:
            keys = KeySet.import_key_set(document)
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            raise SsoRefused(
                "provider_bad_answer", f"The key set cannot be read: {exc}", url=metadata.jwks_uri, status=200
            ) from None
        if not keys.keys:
            raise SsoRefused(
                "provider_bad_answer", "The key set holds no key", url=metadata.jwks_uri, status=200
            )
        return keys

    return _cached(f"jwks:{metadata.jwks_uri}", load, fresh)


def session(
    metadata: ProviderMetadata, client_id: str, client_secret: str, redirect_uri: str
) -> OAuth2Session:
    client = OAuth2Session(
        client_id,
        client_secret,
        scope=SCOPE,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method=metadata.token_auth_method,
    )
    client.max_redirects = 0
    return client


def authorization_url(
    metadata: ProviderMetadata,
    client_id: str,
    redirect_uri: str,
    *,
    state: str,
    nonce: str,
    verifier: str,
    login_hint: str | None,
) -> str:
    client = session(metadata, client_id, "", redirect_uri)
    extra = {"login_hint": login_hint} if login_hint else {}
    url, _state = client.create_authorization_url(
        metadata.authorization_endpoint, state=state, nonce=nonce, code_verifier=verifier, **extra
    )
    return url


def exchange_code(
    metadata: ProviderMetadata,
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    code: str,
    verifier: str,
) -> str:
    """The ID token the code buys (a replayed or foreign code is refused by the provider)."""
    client = session(metadata, client_id, client_secret, redirect_uri)
    try:
        _checked(metadata.token_endpoint)
        token = client.fetch_token(
            metadata.token_endpoint, code=code, code_verifier=verifier, timeout=TIMEOUT
        )
    except RefusedAddress as exc:
        raise SsoRefused(
            "provider_url_refused", f"Token endpoint: {exc}", url=metadata.token_endpoint
        ) from None
    except AuthlibBaseError as exc:
        raise SsoRefused(
            "code_refused", f"The provider refused the code: {exc.error}", error=str(exc.error)
        ) from None
    except (requests.RequestException, ValueError) as exc:
        raise SsoRefused(
            "provider_unreachable",
            f"Token endpoint unreachable: {exc.__class__.__name__}",
            url=metadata.token_endpoint,
        ) from None
    id_token = token.get("id_token")
    if not isinstance(id_token, str):
        raise SsoRefused(
            "provider_bad_answer", "The token answer has no id_token", url=metadata.token_endpoint, status=200
        )
    return id_token


def _decode(id_token: str, metadata: ProviderMetadata):
    """Decode with the kept keys; on a signature or key failure, once more with fresh keys."""
    for fresh in (False, True):
        try:
            return jwt.decode(id_token, key_set(metadata, fresh=fresh), algorithms=ALGORITHMS)
        except (BadSignatureError, ValueError, JoseError) as exc:
            if fresh:
                raise SsoRefused(
                    "bad_signature", f"The ID token's signature does not verify: {exc.__class__.__name__}"
                ) from None
    raise AssertionError("unreachable")


def verify_id_token(id_token: str, metadata: ProviderMetadata, client_id: str, nonce: str) -> dict:
    """The ID token's claims, each OpenID Connect check passed, or ``SsoRefused`` naming the first that failed."""
    claims = _decode(id_token, metadata).claims
    registry = jwt.JWTClaimsRegistry(
        leeway=LEEWAY,
        iss={"essential": True, "value": metadata.issuer},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
    )
    try:
        registry.validate(claims)
    except ExpiredTokenError:
        raise SsoRefused("token_expired", "The ID token has expired") from None
    except (InvalidClaimError, MissingClaimError) as exc:
        claim = getattr(exc, "claim", "") or str(exc)
        if "iat" in claim or "nbf" in claim:
            raise SsoRefused("token_not_yet_valid", "The ID token was issued in the future") from None
        if "iss" in claim:
            raise SsoRefused("wrong_issuer", "The ID token comes from another issuer") from None
        if "aud" in claim:
            raise SsoRefused("wrong_audience", "The ID token is meant for another client") from None
        raise SsoRefused("bad_claims", f"The ID token's claims are invalid: {exc}") from None
    audience = claims["aud"]
    if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != client_id:
        raise SsoRefused("wrong_audience", "The ID token is meant for another client")
    if claims.get("nonce") != nonce:
        raise SsoRefused("nonce_mismatch", "The ID token's nonce is not this sign-in's")
    return claims


def test_connection(issuer: str) -> list[dict]:
    """What an administrator's "test the connection" finds, check by check, in pt-BR."""
    checks: list[dict] = []
    try:
        metadata = discover(issuer, fresh=True)
    except SsoRefused as exc:
        checks.append({"name": "discovery", "ok": False, "message": describe(exc)})
        return checks
    checks.append(
        {"name": "discovery", "ok": True, "message": "Documento de descoberta obtido; o emissor confere."}
    )
    checks.append(
        {
            "name": "pkce",
            "ok": metadata.pkce_s256,
            "message": "O provedor aceita PKCE (S256)."
            if metadata.pkce_s256
            else "O provedor não anuncia PKCE S256 (code_challenge_methods_supported).",
        }
    )
    try:
        keys = key_set(metadata, fresh=True)
    except SsoRefused as exc:
        checks.append({"name": "jwks", "ok": False, "message": describe(exc)})
        return checks
    checks.append({"name": "jwks", "ok": True, "message": f"Chaves de assinatura obtidas: {len(keys.keys)}."})
    return checks


MESSAGES = {
    "provider_unreachable": "O provedor não respondeu ({url}). Ele está fora do ar ou o endereço está errado.",
    "provider_url_refused": "O endereço {url} não é permitido (use https; endereços privados são recusados).",
    "provider_bad_answer": "O provedor respondeu de um jeito inesperado em {url} (status {status}).",
    "issuer_mismatch": "O emissor informado pelo provedor ({found}) difere do configurado. Confira o campo Emissor.",
    "code_refused": "O provedor recusou o código de autorização ({error}). Ele pode ter sido usado antes: tente entrar de novo.",
    "bad_signature": "A assinatura do token do provedor não confere com as chaves publicadas.",
    "token_expired": "O token do provedor expirou. Tente entrar de novo.",
    "token_not_yet_valid": "O token do provedor tem data no futuro. Confira o relógio do provedor.",
    "wrong_issuer": "O token veio de outro emissor.",
    "wrong_audience": "O token foi emitido para outro cliente.",
    "bad_claims": "O token do provedor é inválido.",
    "nonce_mismatch": "O token do provedor não pertence a este login (nonce diferente).",
    "state_invalid": "Este link de login expirou ou já foi usado. Comece de novo.",
    "provider_error": "O provedor não concluiu o login ({error}).",
    "email_unverified": "O provedor não confirma que o e-mail {email} é seu.",
    "email_outside_domains": "O e-mail {email} não pertence aos domínios desta organização.",
    "email_domain_elsewhere": "O domínio de {email} pertence a outra organização.",
    "sso_unavailable": "O login único desta organização não está ativo.",
    "account_banned": "Esta conta está bloqueada.",
    "members_full": "A organização atingiu o limite de membros do plano.",
}


def describe(exc: DomainError) -> str:
    template = MESSAGES.get(exc.reason)
    if template is None:
        return exc.message
    try:
        return template.format(**exc.params)
    except (KeyError, IndexError):
        return exc.message
