"""Browser tests: the app served on a loopback port, driven by Playwright in Debian's chromium.

These tests commit for real (the server thread has its own connections), so
they are marked ``committing`` and every table is emptied after each one.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from tests.browser.audit import axe_violations

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.committing)
            item.add_marker(pytest.mark.any_database(on="sqlite"))


@pytest.fixture(scope="session")
def live_server(app):
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"chromium not found at {CHROMIUM}: `make browser` (run by `make test`) installs it")
        # Only off CI, on a laptop without chromium: the API and page tests still run.
        pytest.skip("chromium is not installed (`make browser`, run by `make test`, installs it as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(
        base_url=live_server, viewport={"width": 1280, "height": 860}, locale="pt-BR"
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    refused: list[str] = []
    # Chromium reports each resource or inline code the Content-Security-Policy blocks on the console.
    page.on(
        "console",
        lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
    )
    yield page
    # Every test ends with axe-core on the page it reached (serious or critical violations fail).
    violations = axe_violations(page) if page.url.startswith(live_server) else []
    context.close()
    assert not refused, f"the page broke its Content-Security-Policy: {refused}"
    assert not violations, f"axe-core on {page.url}: {violations}"


@pytest.fixture
def committed(app):
    """Run factories in an app context and commit, so the server thread sees the data."""
    from extensions import db

    class Committer:
        def __call__(self, build):
            with app.app_context():
                result = build()
                db.session.commit()
                ids = result
                return ids

    return Committer()


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def sign_in(page, email: str, password: str, go: bool = True) -> None:
    if go:
        page.goto("/login")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Senha").fill(password)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_load_state("load")
