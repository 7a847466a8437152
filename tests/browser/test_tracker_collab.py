"""A newcomer's first hour in a real browser: sign up, confirm, start a project, open an issue,
mention a colleague, and the colleague finds it in the inbox. Plus the demo's timeline and inbox,
which docs/pages-tracker.md's screenshots show."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, captured_mail, link_token, register_verified


def _colleague() -> None:
    register_verified("Bruno Colega", "bruno@tracker.test", PASSWORD)


def test_sign_up_project_issue_mention_and_the_inbox(browser, page, committed, live_server):
    committed(_colleague)

    # Sign up, and follow the link the confirmation e-mail carries.
    page.goto("/login")
    page.get_by_role("link", name="Criar conta").click()
    page.get_by_label("Seu nome").fill("Carla Fundadora")
    page.get_by_label("E-mail").fill("carla@tracker.test")
    page.get_by_label("Senha (pelo menos 8 caracteres)").fill(PASSWORD)
    screenshot(page, "tracker-signup")
    with captured_mail() as outbox:
        page.get_by_role("button", name="Criar conta").click()
        expect(page.get_by_role("heading", name="Confira seu e-mail")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("carla@tracker.test")
    page.goto(f"/verify-email?token={link_token(outbox[-1])}")
    page.get_by_role("button", name="Confirmar e-mail").click()
    expect(page.get_by_role("status")).to_contain_text("E-mail confirmado")

    # Her organization is there; she invites Bruno, who accepts in his own browser.
    page.goto("/tracker/")
    expect(page.get_by_role("heading", name=re.compile("Carla Fundadora"))).to_be_visible()
    page.get_by_role("link", name="Pessoas").click()
    page.get_by_label("E-mail").fill("bruno@tracker.test")
    page.get_by_role("button", name="Enviar convite").click()
    expect(page.get_by_text("bruno@tracker.test").first).to_be_visible()
    bruno_context = browser.new_context(base_url=live_server, viewport={"width": 1280, "height": 860})
    bruno = bruno_context.new_page()
    sign_in(bruno, "bruno@tracker.test", PASSWORD)
    bruno.goto("/tracker/")
    bruno.get_by_role("button", name="Aceitar").click()
    expect(bruno.get_by_role("heading", name=re.compile("Carla Fundadora"))).to_be_visible()

    # A project, an issue from the board's quick create, then its page.
    page.goto("/tracker/")
    page.get_by_role("link", name="Carla Fundadora").first.click()
    page.get_by_label("Nome").fill("Loja Virtual")
    page.get_by_label("Chave").fill("WEB")
    page.get_by_role("button", name="Criar projeto").click()
    expect(page.get_by_role("heading", name=re.compile("Loja Virtual"))).to_be_visible()
    quick = page.get_by_label("Nova tarefa em Todo").or_(page.get_by_label("Nova tarefa em A fazer"))
    quick.fill("Checkout não finaliza com Pix")
    quick.press("Enter")
    page.get_by_role("link", name=re.compile("Checkout não finaliza com Pix")).click()
    expect(page.get_by_role("heading", name="Atividade")).to_be_visible()
    expect(page.locator("#issue-timeline")).to_contain_text("Carla Fundadora criou a tarefa")

    # A comment that mentions Bruno, picked from the autocomplete.
    box = page.get_by_label("Comentar")
    box.fill("Reproduzi no Safari. ")
    box.press_sequentially("@bru")
    option = page.get_by_role("listbox").get_by_role("option", name=re.compile("Bruno Colega"))
    expect(option).to_be_visible()
    box.press("Enter")
    expect(box).to_have_value("Reproduzi no Safari. @bruno@tracker.test ")
    box.press_sequentially("pode olhar?")
    page.get_by_role("button", name="Comentar").click()
    comment = page.locator(".timeline-comment").last
    expect(comment).to_contain_text("Reproduzi no Safari. @bruno@tracker.test pode olhar?")
    expect(box).to_have_value("")

    # Bruno sees the count in the navigation and the mention in his inbox.
    bruno.goto("/tracker/")
    expect(bruno.locator("#inbox-count")).to_contain_text("1")
    bruno.get_by_role("link", name=re.compile("Avisos")).click()
    item = bruno.locator(".inbox-item.unread")
    expect(item).to_contain_text("Carla Fundadora mencionou você em")
    expect(item).to_contain_text("Checkout não finaliza com Pix")
    item.get_by_role("button", name="Marcar como lido").click()
    expect(bruno.locator(".inbox-item.unread")).to_have_count(0)
    expect(bruno.locator("#inbox-count")).to_be_hidden()
    bruno.get_by_role("link", name=re.compile("WEB-1")).click()
    expect(bruno.locator("#issue-timeline")).to_contain_text("pode olhar?")
    bruno_context.close()


def _demo() -> None:
    from services import auth as auth_service
    from services.stock.demo import ACCOUNTS, DEMO_EMAIL_DOMAIN, DEMO_PASSWORD, SUPERADMIN
    from services.tracker import demo

    people = {
        local: auth_service.create_user(
            email=f"{local}@{DEMO_EMAIL_DOMAIN}", password=DEMO_PASSWORD, name=name, papel=papel
        )
        for local, name, papel in (*ACCOUNTS, SUPERADMIN)
    }
    demo.load(people, DEMO_EMAIL_DOMAIN)


def test_the_demo_issue_timeline_and_inbox(page, committed):
    from services.stock.demo import DEMO_PASSWORD

    committed(_demo)
    sign_in(page, "planejador@demo.giro.com.br", DEMO_PASSWORD)
    page.goto("/tracker/")
    page.get_by_role("link", name="Lojas Giro").first.click()
    page.get_by_role("link", name=re.compile("Loja virtual")).click()
    page.get_by_role("link", name=re.compile("Checkout não finaliza com Pix")).click()
    timeline = page.locator("#issue-timeline")
    expect(timeline).to_contain_text("mudou o status de")
    expect(timeline).to_contain_text("mudou a prioridade de")
    expect(timeline.locator(".timeline-comment")).to_have_count(3)
    page.get_by_role("button", name="Acompanhar").click()
    expect(page.get_by_role("button", name="Deixar de acompanhar")).to_be_visible()
    screenshot(page, "tracker-timeline")

    page.get_by_role("link", name=re.compile("Avisos")).click()
    expect(page.locator(".inbox-item.unread").first).to_be_visible()
    screenshot(page, "tracker-inbox")
    page.get_by_role("button", name="Marcar todos como lidos").click()
    expect(page.locator(".inbox-item.unread")).to_have_count(0)
