"""What-if on the rules page: the engine with the form's rules, nothing saved, against the current batch."""

from __future__ import annotations

import re

import pytest

from services.errors import ForbiddenError
from services.stock import rules, whatif
from tests.browser.test_remanejamento_pages import _network_with_batch
from tests.factories import auth_headers, make_user
from tests.test_pages_remanejamento import _rules_form, hx, sign_in, text


def _row(body: str, label: str) -> list[str]:
    """The current, simulated and difference cells of one row of the what-if table."""
    row = re.search(rf"<th scope=\"row\">{re.escape(label)}</th>(.*?)</tr>", body, re.S)
    assert row, label
    return [
        re.sub(r"<[^>]+>", "", cell).strip()
        for cell in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    ]


def test_simulating_the_rules_in_force_changes_nothing(client, ctx):
    data = _network_with_batch()
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    answer = client.post("/regras/simular", data=_rules_form(), headers=hx(csrf))
    assert answer.status_code == 200
    body = text(answer)
    assert f"Lote atual: {data['semana']}" in body and "Nada foi salvo" in body
    current, simulated, difference = _row(body, "Recomendações")
    assert current == simulated and int(current.replace(".", "")) > 0 and difference == "0"
    assert _row(body, "Unidades")[2] == "0"


def test_simulating_a_blocked_brand_shows_the_difference_without_saving(client, ctx):
    _network_with_batch()
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    form = {**_rules_form(), "marcasBloqueadas": "Passo"}
    body = text(client.post("/regras/simular", data=form, headers=hx(csrf)))
    current, simulated, difference = (int(re.sub(r"[^\d]", "", v) or 0) for v in _row(body, "Unidades"))
    # Two of the three products are of the blocked brand: far fewer units move.
    assert 0 < simulated < current and difference == current - simulated
    assert "Rotas que mais mudam" in body
    stored = client.get("/api/v1/remanejamento/regras", headers=auth_headers(client, admin)).get_json()
    assert stored["marcasBloqueadas"] == []


def test_simulation_refuses_bad_rules_and_non_admins(client, ctx):
    _network_with_batch()
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    bad = client.post("/regras/simular", data=_rules_form(qtdMinima="20"), headers=hx(csrf))
    assert bad.status_code == 422 and "Corrija os campos para simular" in text(bad)
    assert "Quantidade mínima por transferência" in text(bad)
    client.post("/logout", data={"csrf_token": csrf})
    planner = make_user(papel="planejador")
    csrf = sign_in(client, planner)
    assert client.post("/regras/simular", data=_rules_form(), headers=hx(csrf)).status_code == 403


@pytest.mark.parametrize("papel", [None, "visualizador", "gerente_loja", "planejador"])
def test_only_an_admin_simulates(ctx, papel):
    body = {**rules.defaults(), "lojasBloqueadas": [], "marcasBloqueadas": []}
    with pytest.raises(ForbiddenError):
        whatif.simulate(body, make_user(papel=papel))
