"""The dashboard's predicted-against-sold chart in a real browser, on a desktop and a phone."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.browser.test_phone_pages import PHONE, _fits_and_accessible, phone  # noqa: F401
from tests.factories import PASSWORD, make_user
from tests.stock.test_outcome import build_history


def _history_and_planner() -> dict:
    data = build_history()
    planner = make_user(name="Paula Planejadora", email="paula@giro.test", papel="planejador")
    return {"planner": planner.email, "semanas": [data["l1"].semana, data["l2"].semana]}


def _drawn(page) -> list[str]:
    expect(page.locator("canvas#chart-resultado")).to_be_visible()
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('chart-resultado'))")
    labels = page.evaluate("() => Chart.getChart(document.getElementById('chart-resultado')).data.labels")
    return labels


def test_outcome_chart_on_the_dashboard(page, committed):
    data = committed(_history_and_planner)
    sign_in(page, data["planner"], PASSWORD)
    assert _drawn(page) == data["semanas"]  # oldest batch on the left
    figure = page.locator("figure", has=page.locator("#chart-resultado"))
    figure.get_by_text("Ver os dados em tabela").click()
    table = figure.locator("table")
    expect(table.get_by_role("rowheader", name=data["semanas"][1])).to_be_visible()
    expect(table).to_contain_text("aberta: 1 transf. há 8 dias; vendido até agora 3")
    screenshot(page, "dashboard-outcome")


def test_outcome_chart_fits_a_phone(phone, committed):  # noqa: F811
    data = committed(_history_and_planner)
    sign_in(phone, data["planner"], PASSWORD)
    _drawn(phone)
    _fits_and_accessible(phone, PHONE["width"])
