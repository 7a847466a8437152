"""A real OpenID Connect provider for the SSO tests: panva's oidc-provider (an OpenID Certified
implementation, installed by npm from package.json) run by ``tests/oidc/provider.mjs`` on loopback.

Its clients are confidential (``client_secret_basic``, or ``client_secret_post``), use the authorization
code flow with PKCE S256 (required) and get RS256 ID tokens that carry ``email``, ``email_verified``
and ``name``. Redirect URIs: ``http://localhost/tracker/sso/callback`` and
``http://127.0.0.1/tracker/sso/callback``, on any port. There is no login page: the account is the one
whose email is the ``login_hint`` parameter (case-insensitive; the first account without a hint; an
unknown hint ends with ``access_denied``), and consent is given at once. Codes are single-use.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.servers import ROOT, free_port, stop

SCRIPT = ROOT / "tests/oidc/provider.mjs"


@dataclass(frozen=True)
class OidcAccount:
    sub: str
    email: str
    email_verified: bool = True
    name: str = ""


@dataclass(frozen=True)
class OidcProvider:
    issuer: str  # http://127.0.0.1:PORT; discovery at ISSUER/.well-known/openid-configuration
    clients: dict[str, str]  # client_id -> client_secret
    accounts: list[OidcAccount] = field(default_factory=list)

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def account(self, email: str) -> OidcAccount:
        return next(a for a in self.accounts if a.email.lower() == email.lower())


def missing_requirement() -> str | None:
    """Why the provider cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (ROOT / "node_modules/oidc-provider/package.json").exists():
        return "node_modules/oidc-provider is missing (npm ci)"
    return None


def start_oidc_provider(
    port: int,
    clients: dict[str, str],
    accounts: list[OidcAccount],
    log: Path | None = None,
    timeout: float = 20,
) -> tuple[subprocess.Popen, str]:
    """``node tests/oidc/provider.mjs PORT`` in a process group of its own (stop it with
    ``tests.servers.stop``), once it printed ``ready ISSUER``. Its output goes to ``log`` (by default a
    temporary file, removed once it started), and is shown if it does not start."""
    env = {
        **os.environ,
        "OIDC_CLIENTS": json.dumps([{"client_id": c, "client_secret": s} for c, s in clients.items()]),
        "OIDC_ACCOUNTS": json.dumps([dataclasses.asdict(a) for a in accounts]),
    }
    output = log or Path(tempfile.gettempdir()) / f"oidc-provider-{port}.log"
    with output.open("wb") as out:
        process = subprocess.Popen(
            ["node", str(SCRIPT), str(port)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            for line in output.read_text(errors="replace").splitlines():
                if line.startswith("ready "):
                    return process, line.removeprefix("ready ").strip()
            time.sleep(0.05)
        stop(process)
        raise AssertionError(f"oidc-provider on {port} did not start:\n{output.read_text(errors='replace')}")
    finally:
        if log is None:
            output.unlink(missing_ok=True)


ACCOUNTS = [
    OidcAccount("sub-ana", "ana@acme.test", True, "Ana Acme"),
    OidcAccount("sub-bruno", "bruno@acme.test", True, "Bruno Acme"),
    OidcAccount("sub-carla", "carla@acme.test", False, "Carla Acme"),
    OidcAccount("sub-dora", "dora@outra.test", True, "Dora Outra"),
    OidcAccount("sub-olga", "olga@acme.test", True, "Olga Acme"),
]
CLIENTS = {"giro-acme": "acme-test-secret", "giro-beta": "beta-test-secret"}


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory):
    """One provider for the session, with the clients ``giro-acme`` and ``giro-beta`` and the
    accounts of ACCOUNTS; its output is kept in the session's temporary directory (oidc*/provider.log)."""
    if reason := missing_requirement():
        if os.environ.get("CI"):
            pytest.fail(f"the OIDC provider cannot run: {reason}")
        pytest.skip(f"the OIDC provider cannot run: {reason}")
    log = tmp_path_factory.mktemp("oidc") / "provider.log"
    process, issuer = start_oidc_provider(free_port(), CLIENTS, ACCOUNTS, log=log)
    try:
        yield OidcProvider(issuer, dict(CLIENTS), list(ACCOUNTS))
    finally:
        stop(process)
