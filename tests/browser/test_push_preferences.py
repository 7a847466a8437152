"""The preferences' browser notifications in chromium, as far as a browser without a network
reaches: the option is unavailable without VAPID keys; with them, turning it on asks for the
permission, registers the service worker and tries to subscribe. Subscribing needs the
browser vendor's push service, which this machine cannot reach: the box then turns itself off
and says so after 15 s, which this test does not wait for (a real push is proven in
tests/stock/test_notifications.py)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import sign_in
from tests.factories import PASSWORD, make_loja, make_user
from tests.push_service import vapid_keys


def _manager() -> dict:
    make_user(
        papel="gerente_loja", loja=make_loja(nome="Loja Moema"), email="gm@giro.test", password=PASSWORD
    )
    return {}


def test_browser_notifications_are_offered_only_with_vapid_keys(
    browser, live_server, committed, app, monkeypatch
):
    committed(_manager)
    context = browser.new_context(base_url=live_server, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        sign_in(page, "gm@giro.test", PASSWORD)
        page.goto("/perfil")
        box = page.get_by_label("Notificações no navegador")
        expect(box).to_be_disabled()
        expect(page.get_by_text("Indisponível nesta instalação")).to_be_visible()

        private, public = vapid_keys()
        monkeypatch.setitem(app.config, "VAPID_PRIVATE_KEY", private)
        monkeypatch.setitem(app.config, "VAPID_PUBLIC_KEY", public)
        monkeypatch.setitem(app.config, "VAPID_SUBJECT", "mailto:ops@giro.test")
        context.grant_permissions(["notifications"], origin=live_server)
        page.goto("/perfil")
        box = page.get_by_label("Notificações no navegador")
        expect(box).to_be_enabled()
        box.check()
        # The permission was asked (granted here) and the worker registered; subscribing waits on
        # the vendor's push service, out of reach here (after 15 s the page says it failed).
        page.wait_for_function("navigator.serviceWorker.getRegistrations().then(r => r.length > 0)")
        scope = page.evaluate("navigator.serviceWorker.getRegistrations().then(r => r[0].scope)")
        assert scope.endswith("/static/js/")
        assert page.evaluate("Notification.permission") == "granted"
    finally:
        context.close()
