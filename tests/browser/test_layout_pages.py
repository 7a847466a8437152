"""Layout at a phone's 390 px and a laptop's 1366 px: a batch decided card by card on a phone,
the selection bar on a desktop, one header row with a "Menu" button on a phone (on a tablet,
what does not fit the row behind "Mais"), the navigation each role gets, and tables that fit.
axe-core runs on every page a test ends on."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.audit import assert_accessible, scroll_width, widest
from tests.browser.conftest import SCREENSHOTS, screenshot, sign_in
from tests.browser.test_batch_scale import _big_batch
from tests.browser.test_remanejamento_pages import _network_with_batch
from tests.factories import PASSWORD, make_loja, make_user

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 768}
TABLET = {"width": 1024, "height": 768}
SMALL_TABLET = {"width": 800, "height": 1000}


@pytest.fixture
def phone(browser, live_server):
    context = browser.new_context(
        base_url=live_server, viewport=PHONE, locale="pt-BR", is_mobile=True, has_touch=True
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    yield page
    assert_accessible(page)
    context.close()
    assert not refused, refused


def _box(locator) -> dict:
    box = locator.bounding_box()
    assert box is not None
    return box


def _shot(page, name: str) -> None:
    """What the screen shows: a full-page picture draws a docked or sticky bar mid-page."""
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def _fits(page, width: int) -> None:
    assert scroll_width(page) <= width, f"{page.url} scrolls sideways: {widest(page, width)}"


def test_planner_clears_a_batch_on_a_phone(phone, committed):
    data = committed(_big_batch)
    page = phone
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}?prioridade=alta&status=pendente")
    page.wait_for_load_state("networkidle")
    _fits(page, PHONE["width"])

    # The filters wait behind one "Filtros" toggle; nothing to act on, no selection bar.
    situacao = page.get_by_label("Situação")
    expect(situacao).to_be_hidden()
    expect(page.locator("#bulk-form")).to_be_hidden()
    page.locator("summary", has_text="Filtros").click()
    expect(situacao).to_be_visible()
    expect(situacao).to_have_value("pendente")
    page.locator("summary", has_text="Filtros").click()
    expect(situacao).to_be_hidden()

    # One card per transfer: product and size, route, units, days to stock-out, the reason on demand.
    cards = page.locator("#recs tr.rec")
    expect(cards).to_have_count(50)
    card = cards.first
    card.scroll_into_view_if_needed()
    expect(card).to_contain_text("Tênis Corrida Leve")
    expect(card).to_contain_text(re.compile(r"tam\. \d+"))
    # On a card each figure is labelled (the column headers are out of sight).
    expect(card.get_by_role("cell", name=re.compile(r"^Origem CD Cajamar"))).to_be_visible()
    expect(card.get_by_role("cell", name="Destino Loja Paulista")).to_be_visible()
    expect(card.get_by_role("cell", name=re.compile(r"^Unidades \d+$"))).to_be_visible()
    expect(card.get_by_role("cell", name=re.compile(r"^Ruptura em \d+ d$"))).to_be_visible()
    why = card.get_by_text("Por quê?")
    expect(why).to_be_visible()
    card_box = _box(card)
    assert card_box["x"] >= 0 and card_box["x"] + card_box["width"] <= PHONE["width"]
    # Aprovar and Recusar: tall enough to tap, and the decisions span the card's width.
    approve, refuse = card.get_by_role("button", name="Aprovar"), card.get_by_role("link", name="Recusar")
    boxes = [_box(approve), _box(refuse), _box(card.get_by_role("button", name="Vetar"))]
    assert all(b["height"] >= 44 for b in boxes), boxes
    span = boxes[-1]["x"] + boxes[-1]["width"] - boxes[0]["x"]
    assert span >= 0.85 * card_box["width"], (span, card_box)
    _shot(page, "batch-cards-phone")

    # Decide the first three by tapping, one card at a time.
    for i in range(3):
        row = cards.nth(i)
        row.get_by_role("button", name="Aprovar").tap()
        expect(row).to_contain_text("Aprovada")
    expect(page.locator("#toast")).to_contain_text("Recomendação aprovada")
    _fits(page, PHONE["width"])

    # The bar shows while something is selected, docked at the bottom of the screen.
    box = cards.nth(3).get_by_role("checkbox")
    box.check()
    bar = page.locator("#bulk-form")
    expect(bar).to_be_visible()
    expect(page.locator("#sel-count")).to_have_text("1 selecionada")
    bar_box = _box(bar)
    assert bar_box["y"] + bar_box["height"] <= PHONE["height"] + 1 and bar_box["y"] > PHONE["height"] / 2
    box.uncheck()
    expect(bar).to_be_hidden()

    # The rest of the page at once: every one selected, approved from the bar.
    page.locator("#select-all").check()
    expect(page.locator("#sel-count")).to_have_text("50 selecionadas")
    _shot(page, "batch-selection-phone")
    bar.get_by_role("button", name="Aprovar selecionadas").tap()
    expect(page.locator("#bulk-result")).to_contain_text("47 aprovadas")
    expect(bar).to_be_hidden()
    _fits(page, PHONE["width"])


def test_desktop_selection_bar_and_toast(page, committed):
    data = committed(_big_batch)
    page.set_viewport_size(LAPTOP)
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}?prioridade=alta&status=pendente")
    page.wait_for_load_state("networkidle")
    _fits(page, LAPTOP["width"])
    bar = page.locator("#bulk-form")
    approve_all = bar.get_by_role("button", name="Aprovar selecionadas")
    # Nothing selected: the bar's actions are disabled, and the bar is one row.
    expect(page.locator("summary", has_text="Filtros")).to_be_hidden()
    expect(page.get_by_label("Situação")).to_be_visible()
    for name in ("Aprovar", "Executar", "Recusar", "Restaurar", "Vetar"):
        expect(bar.get_by_role("button", name=f"{name} selecionadas")).to_be_disabled()
    assert _box(bar)["height"] < 60, _box(bar)
    matching = page.get_by_label("Selecionar todas as 62 que correspondem ao filtro")
    matching.check()
    # The count says how many; it does not repeat the checkbox's words.
    expect(page.locator("#sel-count")).to_have_text("62 selecionadas")
    expect(page.get_by_text(re.compile("correspondem ao filtro"))).to_have_count(1)
    expect(approve_all).to_be_enabled()
    assert _box(bar)["height"] < 60, _box(bar)
    matching.uncheck()
    expect(approve_all).to_be_disabled()

    # A decision in a row: the toast covers no row's buttons and the columns stay put.
    heads = page.locator("#recs thead th")
    before = [round(_box(heads.nth(i))["x"]) for i in range(heads.count())]
    rows = page.locator("#recs tr.rec")
    rows.nth(4).evaluate("r => r.scrollIntoView({block: 'center'})")
    rows.nth(4).get_by_role("button", name="Aprovar").click()
    toast = page.locator("#toast .toast")
    expect(toast).to_contain_text("Recomendação aprovada")
    expect(rows.nth(4)).to_contain_text("Aprovada")
    after = [round(_box(heads.nth(i))["x"]) for i in range(heads.count())]
    assert before == after, (before, after)
    # The next rows' buttons on screen are what a tap there would reach.
    covered = page.evaluate(
        """() => Array.from(document.querySelectorAll('#recs tr.rec'))
            .slice(5, 14)
            .flatMap(r => Array.from(r.querySelectorAll('.rec-actions button, .rec-actions a.button')))
            .filter(b => { const r = b.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })
            .filter(b => { const r = b.getBoundingClientRect();
                           const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
                           return !(hit && b.contains(hit)); })
            .map(b => b.closest('tr').id + ' ' + b.textContent.trim())"""
    )
    assert covered == [], covered
    # Scrolled down, the bar and the toast stay above the rows, on one row.
    page.mouse.wheel(0, 900)
    page.wait_for_timeout(200)
    assert _box(bar)["y"] < 12 and _box(toast)["y"] < 60
    _shot(page, "batch-toolbar")
    _fits(page, LAPTOP["width"])


def _people() -> dict:
    loja = make_loja(nome="Loja Paulista", codigo="SP01")
    for name, email, papel, extra in (
        ("Paula Planejadora", "paula@giro.test", "planejador", {}),
        ("Gabriela Gerente", "gabi@giro.test", "gerente_loja", {"loja": loja}),
        ("Vera Visualizadora", "vera@giro.test", "visualizador", {}),
        ("Artur Admin", "artur@giro.test", "admin", {}),
        ("Sofia Super", "sofia@giro.test", "admin", {"superadmin": True}),
        ("Tiago Tracker", "tiago@giro.test", None, {}),
    ):
        make_user(name=name, email=email, papel=papel, **extra)
    return {}


def _link_names(nav) -> list[str]:
    """The navigation's links as read, without the inbox's unread count."""
    return [re.sub(r"\s+\d+.*$", "", t.strip()) for t in nav.get_by_role("link").all_inner_texts()]


NAVIGATION = {
    "paula@giro.test": ["Painel", "Lotes", "Grade", "Histórico", "Regras", "Processamentos", "Lojas", "Tracker", "Avisos"],
    "gabi@giro.test": ["Painel", "Recebimentos", "Minha loja", "Tracker", "Avisos"],
    "vera@giro.test": ["Painel", "Lotes", "Grade", "Histórico", "Lojas", "Tracker", "Avisos"],
    "artur@giro.test": [
        "Painel", "Lotes", "Grade", "Histórico", "Regras", "Processamentos", "Lojas", "Administração",
        "Tracker", "Avisos",
    ],
    "sofia@giro.test": [
        "Painel", "Lotes", "Grade", "Histórico", "Regras", "Processamentos", "Lojas", "Administração",
        "Tracker", "Avisos", "Plataforma",
    ],
    "tiago@giro.test": ["Tracker", "Avisos"],
}  # fmt: skip


# What a row too narrow for every link folds into "Mais" first.
FOLDING = ["Plataforma", "Administração", "Processamentos", "Regras", "Lojas", "Histórico", "Grade"]


def _row_and_more(page, nav, email: str, viewport: dict) -> list[str]:
    """The links a tablet or a laptop shows in the header's row, then those folded into "Mais",
    opened and closed by keyboard and mouse: each link once, every one of them reachable."""
    more = nav.get_by_role("button", name="Mais")
    row = _link_names(nav)
    # A superadmin's eleven links need about 1150 px; a planner's nine and an admin's ten fit
    # 1024 px but not 800; a viewer's seven, a store manager's five fit both.
    many = ("paula@giro.test", "artur@giro.test", "sofia@giro.test")
    if not (
        (viewport is SMALL_TABLET and email in many) or (viewport is TABLET and email == "sofia@giro.test")
    ):
        expect(more).to_be_hidden()
        return row
    expect(more).to_be_visible()
    assert _box(more)["height"] >= 44
    folded = nav.locator("#nav-more-list")
    expect(more).to_have_attribute("aria-expanded", "false")
    expect(folded).to_be_hidden()
    more.focus()
    page.keyboard.press("Enter")
    expect(more).to_have_attribute("aria-expanded", "true")
    expect(folded).to_be_visible()
    names = _link_names(folded)
    assert names and _link_names(nav) == row + names, (email, row, names)
    # The least used fold first.
    theirs = [name for name in FOLDING if name in NAVIGATION[email]]
    assert set(names) == set(theirs[: len(names)]), (email, names)
    for link in folded.get_by_role("link").all():
        box = _box(link)
        assert box["height"] >= 44 and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], box
    page.keyboard.press("Tab")
    expect(folded.get_by_role("link").first).to_be_focused()
    if email == "sofia@giro.test" and viewport is TABLET:
        _shot(page, "menu-tablet")
        assert_accessible(page)
    page.keyboard.press("Escape")
    expect(folded).to_be_hidden()
    expect(more).to_be_focused()
    more.click()
    expect(folded).to_be_visible()
    page.mouse.click(viewport["width"] // 2, viewport["height"] - 20)
    expect(folded).to_be_hidden()
    expect(more).to_have_attribute("aria-expanded", "false")
    # Each link once, in the page's order in the row and in the list.
    order = NAVIGATION[email]
    both = row + names
    assert len(set(both)) == len(both), both
    assert row == [n for n in order if n in row] and names == [n for n in order if n in names], (row, names)
    return sorted(both, key=lambda n: order.index(n) if n in order else len(order))


@pytest.mark.parametrize(
    "viewport", [PHONE, TABLET, SMALL_TABLET, LAPTOP], ids=["phone", "tablet", "small-tablet", "laptop"]
)
def test_one_navigation_per_role_in_one_header_row(browser, live_server, committed, viewport):
    committed(_people)
    context = browser.new_context(base_url=live_server, viewport=viewport, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        for email, expected in NAVIGATION.items():
            sign_in(page, email, PASSWORD)
            page.goto("/tracker/")
            nav = page.get_by_role("navigation", name="Navegação principal")
            names = _link_names(nav)
            header = _box(page.locator("header.topbar"))
            menu = page.get_by_role("button", name="Menu")
            if viewport is PHONE:
                # One row with a "Menu" button; the links open below it, by mouse or keyboard.
                assert header["height"] <= 64, (email, header)
                expect(nav).to_be_hidden()
                expect(menu).to_have_attribute("aria-expanded", "false")
                menu.focus()
                page.keyboard.press("Enter")
                expect(menu).to_have_attribute("aria-expanded", "true")
                expect(nav).to_be_visible()
                names = _link_names(nav)
                for link in nav.get_by_role("link").all():
                    assert _box(link)["height"] >= 44
                if email == "sofia@giro.test":
                    _shot(page, "menu-phone")
                    assert_accessible(page)
                page.keyboard.press("Escape")
                expect(nav).to_be_hidden()
                expect(menu).to_be_focused()
                menu.click()
                expect(nav).to_be_visible()
                page.mouse.click(200, PHONE["height"] - 20)
                expect(nav).to_be_hidden()
            else:
                assert header["height"] <= 64, (email, header)
                expect(menu).to_be_hidden()
                expect(nav).to_be_visible()
                names = _row_and_more(page, nav, email, viewport)
            assert names == expected, (email, names)
            _fits(page, viewport["width"])
            if viewport is PHONE:
                menu.click()
            page.locator("header").get_by_role("button", name="Sair").click()
            page.wait_for_load_state("load")
        sign_in(page, "sofia@giro.test", PASSWORD)
        assert_accessible(page)
    finally:
        context.close()


def _network_with_history() -> dict:
    from sqlalchemy import select

    from extensions import db
    from models.stock import Produto

    data = _network_with_batch()
    make_user(name="Sofia Super", email="sofia@giro.test", papel="admin", superadmin=True)
    data["produto"] = str(db.session.scalar(select(Produto.id).where(Produto.sku == "TCL-01")))
    return data


SCROLLING_TABLES = """() => Array.from(document.querySelectorAll('.table-wrap'))
    .filter(w => w.offsetParent !== null && w.scrollWidth > w.clientWidth + 1)
    .map(w => ({matrix: Boolean(w.querySelector('table.matrix')),
                what: ((w.querySelector('caption') || {}).textContent || w.className).trim()
                      + ' ' + w.scrollWidth + '>' + w.clientWidth}))"""


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_no_table_scrolls_sideways_but_the_grade_on_a_phone(browser, live_server, committed, viewport):
    data = committed(_network_with_history)
    context = browser.new_context(base_url=live_server, viewport=viewport, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        sign_in(page, "sofia@giro.test", PASSWORD)
        page.goto("/tracker/")  # her organization, for the platform's lists
        # The planner's day: decide one, so the history has a line.
        page.goto(f"/lotes/{data['lote']}")
        page.locator("#recs tr.rec").first.get_by_role("button", name="Aprovar").click()
        expect(page.locator("#recs tr.rec").first).to_contain_text("Aprovada")
        for path in (
            "/",
            "/lotes",
            f"/lotes/{data['lote']}",
            "/historico",
            "/grade",
            f"/grade/{data['produto']}",
            "/lojas",
            "/regras",
            "/admin/users",
            "/admin/organizations",
            "/admin/workspaces",
        ):
            page.goto(path)
            page.wait_for_load_state("networkidle")
            # A chart's data table, opened as a reader would.
            for summary in page.locator("details.chart-table > summary").all():
                summary.click()
            if path == "/regras":
                page.get_by_role("button", name="Simular").click()
                expect(page.locator("#whatif")).to_contain_text("Nada foi salvo")
                panel = _box(page.locator("#whatif .panel"))
                diff = _box(page.locator("#whatif th", has_text="Diferença"))
                assert diff["x"] + diff["width"] <= panel["x"] + panel["width"], (diff, panel)
                sizes = page.locator("#whatif").evaluate(
                    "w => ['h2', 'h3'].map(t => parseFloat(getComputedStyle(w.querySelector(t)).fontSize))"
                )
                assert sizes[1] <= sizes[0], sizes
            scrolling = page.evaluate(SCROLLING_TABLES)
            allowed = [s for s in scrolling if s["matrix"] and viewport is PHONE]
            assert scrolling == allowed, (path, scrolling)
            _fits(page, viewport["width"])
            if path == "/" and viewport is LAPTOP:
                screenshot(page, "dashboard-tables")
            if path == "/lotes" and viewport is PHONE:
                screenshot(page, "batches-phone")
            if path.startswith("/grade/") and viewport is PHONE:
                assert allowed, "the grade matrix is wider than a phone: it scrolls in its own box"
                first = page.locator("table.matrix tbody th[scope=row]").first
                assert first.evaluate("e => getComputedStyle(e).position") == "sticky"
        assert_accessible(page)
    finally:
        context.close()


def _tracker_organization() -> dict:
    """Olga's organization with every table the tracker pages draw: issues with a custom field
    as a column, statuses, members and an invitation, a webhook's deliveries, the audit log;
    Olga also runs the platform, for its numbers and plans."""
    import uuid

    from sqlalchemy import select

    from extensions import db
    from models.auth import User
    from models.tracker import Organization
    from services.tracker import custom_fields, issues, organizations, plans, webhooks
    from tests.browser.test_tracker_pages import _team

    data = _team()
    owner = db.session.scalar(select(User).where(User.email == "olga@tracker.test"))
    owner.superadmin = True
    organization = db.session.scalar(select(Organization).where(Organization.name == "Olga Dona"))
    data["organization"] = str(organization.id)
    plans.assign_plan(organization, "pro")
    project = uuid.UUID(data["project"])
    field = custom_fields.FieldDefinition("Canal de venda", "select", ["loja física", "site", "app"], False)
    custom_fields.create_field(owner, data["slug"], project, field)
    organizations.invite(owner, organization.id, "davi.convidado@tracker.test", "member")
    webhooks.create_webhook(owner, organization.id, "http://127.0.0.1:9/giro/webhooks", ["issue.created"])
    title = "Prazo de entrega errado no carrinho quando o CEP é de outro estado"
    issues.create_issue(
        owner, data["slug"], project, {"title": title, "custom_fields": {"canal_de_venda": "site"}}
    )
    return data


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_no_tracker_table_scrolls_sideways(browser, live_server, committed, viewport):
    """The tracker's tables fit a phone as one card per row, every figure still there."""
    data = committed(_tracker_organization)
    context = browser.new_context(base_url=live_server, viewport=viewport, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(10_000)
    project = f"/tracker/w/{data['slug']}/p/{data['project']}"
    organization = f"/tracker/o/{data['organization']}"
    try:
        sign_in(page, "olga@tracker.test", PASSWORD)
        scrolling: dict[str, list] = {}
        for path in (
            "/tracker/",
            f"/tracker/w/{data['slug']}",
            f"{project}/issues?cols=canal_de_venda",
            f"{project}/settings",
            f"{organization}/members",
            f"{organization}/webhooks",
            f"{organization}/audit-log",
            "/admin/",
            "/admin/plans",
        ):
            page.goto(path)
            page.wait_for_load_state("networkidle")
            if wide := page.evaluate(SCROLLING_TABLES):
                scrolling[path] = wide
            _fits(page, viewport["width"])
            assert_accessible(page)
        assert not scrolling, scrolling
        if viewport is PHONE:
            # Every column of a row is still on its card, labelled by its header.
            page.goto(f"{project}/issues?cols=canal_de_venda")
            row = page.locator("table.issue-table tbody tr", has_text="Prazo de entrega errado")
            expect(row.get_by_role("link", name=re.compile("Prazo de entrega errado"))).to_be_visible()
            for cell in (
                "Status",
                "Prioridade Sem prioridade",
                "Tipo Tarefa",
                "Responsável —",
                "Canal de venda site",
            ):
                expect(row.get_by_role("cell", name=re.compile(f"^{cell}"))).to_be_visible()
    finally:
        context.close()


def test_inbox_reads_on_a_phone_and_board_cards_are_light(browser, live_server, committed):
    from tests.browser.test_tracker_pages import _board, _team

    data = committed(_team)
    context = browser.new_context(base_url=live_server, viewport=PHONE, locale="pt-BR", has_touch=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        # Carla was given two issues: two unread notifications, each readable across the screen.
        sign_in(page, "carla@tracker.test", PASSWORD)
        page.goto("/tracker/notifications")
        items = page.locator(".inbox-item.unread")
        expect(items).to_have_count(2)
        for i in range(2):
            text = _box(items.nth(i).locator(".inbox-text"))
            assert text["width"] >= 0.7 * PHONE["width"], text
            button = _box(items.nth(i).get_by_role("button", name="Marcar como lido"))
            # Small, under the text.
            assert button["y"] >= text["y"] + text["height"] - 1 and button["height"] <= 36, (text, button)
        _fits(page, PHONE["width"])
        assert_accessible(page)
        screenshot(page, "inbox-phone")
        items.first.get_by_role("button", name="Marcar como lido").tap()
        expect(page.locator(".inbox-item.unread")).to_have_count(1)
        page.locator("header").get_by_role("button", name="Menu").click()
        page.locator("header").get_by_role("button", name="Sair").click()
        page.wait_for_load_state("load")

        # The board at 1366 px: no status menu on the cards until one has the keyboard.
        page.set_viewport_size(LAPTOP)
        sign_in(page, "olga@tracker.test", PASSWORD)
        page.goto(_board(data))
        card = page.locator("#card-WEB-2")
        menu = page.get_by_label("Status de WEB-2")
        expect(card).to_be_visible()
        status_box = card.locator("form.card-status")
        assert _box(status_box)["width"] <= 1, _box(status_box)
        light = _box(card)["height"]
        card.get_by_role("link").focus()
        page.keyboard.press("Tab")
        expect(menu).to_be_focused()
        # The menu takes room only while it has the focus.
        assert _box(card)["height"] > light + 20, (light, _box(card))
        assert _box(status_box)["width"] > 60, _box(status_box)
        with page.expect_response(lambda r: r.url.endswith("/WEB-2/move")):
            menu.select_option(label="Em andamento")
        expect(page.locator(f"#cards-{data['statuses']['in_progress']} #card-WEB-2")).to_be_visible()
        # Alt+← takes it back to the column before, at its top; the focus stays on it.
        columns = page.locator("#board-columns .board-cards").evaluate_all("ls => ls.map(l => l.id)")
        before = columns[columns.index(f"cards-{data['statuses']['in_progress']}") - 1]
        page.locator("#card-WEB-2 .issue-card-title").focus()
        with page.expect_response(lambda r: r.url.endswith("/WEB-2/move")):
            page.keyboard.press("Alt+ArrowLeft")
        expect(page.locator(f"#{before} .issue-card").first).to_have_id("card-WEB-2")
        expect(page.locator("#card-WEB-2 .issue-card-title")).to_be_focused()
        page.locator("h1").click()
        assert _box(page.locator("#card-WEB-2 form.card-status"))["width"] <= 1
        screenshot(page, "tracker-board-light")
        assert_accessible(page)
    finally:
        context.close()
