"""From batch to shelf: approved transfers become issues in the tracker's operations project,
kept in step with the transfers, through the stock API and read through the tracker API."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from extensions import db
from services.tracker import organizations, workspaces
from tests.factories import (
    PASSWORD,
    auth_headers,
    make_loja,
    make_lote,
    make_produto,
    make_rec,
    make_user,
    register_verified,
)
from tests.stock.support import API

TRACKER = "/tracker/api/v1"


def _setup():
    """A retailer whose stock admin owns the tracker organization of its store managers."""
    admin, _access, _refresh = register_verified("Ana Admin", "ana@giro.test", PASSWORD)
    admin.papel = "admin"
    workspace = workspaces.list_workspaces(admin)[0]
    project = workspaces.create_project(admin, workspace.slug, {"name": "Operações", "key": "OPS"})
    cd = make_loja(nome="CD Extrema", is_cd=True)
    moema, santos = make_loja(nome="Loja Moema"), make_loja(nome="Loja Santos")
    managers = {}
    for loja, email in ((moema, "gm@giro.test"), (santos, "gs@giro.test")):
        manager = make_user(papel="gerente_loja", loja=loja, email=email)
        invitation = organizations.invite(admin, workspace.organization_id, email, "member")
        organizations.accept_invitation(manager, invitation.id)
        managers[loja.nome] = manager
    tenis = make_produto(nome="Tênis Runner", sku="TR-1", cor="Preto")
    lote = make_lote()
    planner = make_user(papel="planejador")
    db.session.flush()
    return {
        "admin": admin,
        "planner": planner,
        "slug": workspace.slug,
        "project": project,
        "managers": managers,
        "lote": lote,
        "cd_moema": make_rec(lote, tenis, cd, moema, quantidade=4),
        "cd_santos": make_rec(lote, tenis, cd, santos, quantidade=3, tamanho="39"),
        "moema_santos": make_rec(lote, tenis, moema, santos, quantidade=2, tamanho="40"),
    }


def _name_project(client, data, project_id) -> object:
    headers = auth_headers(client, data["admin"])
    rules = client.get(f"{API}/regras", headers=headers).get_json()
    return client.put(f"{API}/regras", json={**rules, "projetoOperacoes": project_id}, headers=headers)


def _decide(client, user, rec, acao: str, body: dict | None = None):
    response = client.post(
        f"{API}/recomendacoes/{rec.id}/{acao}", json=body, headers=auth_headers(client, user)
    )
    assert response.status_code == 200, response.get_json()


def _issues(client, data) -> dict[str, dict]:
    headers = {
        "Authorization": f"Bearer {client.post(f'{TRACKER}/auth/login', json={'email': 'ana@giro.test', 'password': PASSWORD}).get_json()['access_token']}"
    }
    url = f"{TRACKER}/workspaces/{data['slug']}/projects/{data['project'].id}/issues"
    body = client.get(url, query_string={"per_page": 100}, headers=headers).get_json()
    found = {}
    for summary in body["issues"]:
        issue = client.get(f"{url}/{summary['key']}", headers=headers).get_json()
        found[issue["title"]] = issue
    return found


@pytest.fixture
def ops(client, ctx):
    data = _setup()
    db.session.commit()
    named = _name_project(client, data, str(data["project"].id))
    assert named.status_code == 200, named.get_json()
    assert named.get_json()["projetoOperacoes"] == str(data["project"].id)
    return data


def test_only_a_project_the_admin_manages_can_be_named(client, ctx):
    data = _setup()
    outsider, _a, _r = register_verified("Bruno Fora", "bruno@fora.test", PASSWORD)
    elsewhere = workspaces.create_project(
        outsider, workspaces.list_workspaces(outsider)[0].slug, {"name": "Outro", "key": "OUT"}
    )
    db.session.commit()
    refused = _name_project(client, data, str(elsewhere.id))
    assert refused.status_code == 422 and "projetoOperacoes" in str(refused.get_json())
    assert _name_project(client, data, None).get_json()["projetoOperacoes"] is None


def test_approved_transfers_become_one_issue_per_origin_and_one_sub_issue_per_destination(client, ops):
    for rec in ("cd_moema", "cd_santos", "moema_santos"):
        _decide(client, ops["planner"], ops[rec], "aprovar")
    issues = _issues(client, ops)
    semana = ops["lote"].semana
    assert set(issues) == {
        f"Lote {semana} · separar em CD Extrema · 7 un. para 2 lojas",
        f"Lote {semana} · separar em Loja Moema · 2 un. para 1 loja",
        f"Lote {semana} · CD Extrema → Loja Moema · 4 un.",
        f"Lote {semana} · CD Extrema → Loja Santos · 3 un.",
        f"Lote {semana} · Loja Moema → Loja Santos · 2 un.",
    }
    cd = issues[f"Lote {semana} · separar em CD Extrema · 7 un. para 2 lojas"]
    assert "| Tênis Runner | TR-1 | Preto | 38 | 4 | Loja Moema | a separar |" in cd["description"]
    assert "separacao.csv?origemId=" in cd["description"]
    assert [label["name"] for label in cd["labels"]] == [f"Lote {semana}"]
    sub = issues[f"Lote {semana} · CD Extrema → Loja Moema · 4 un."]
    assert sub["parent_id"] == cd["id"]
    assert sub["assignee"]["id"] == str(ops["managers"]["Loja Moema"].id)
    moema = issues[f"Lote {semana} · separar em Loja Moema · 2 un. para 1 loja"]
    assert moema["assignee"]["id"] == str(ops["managers"]["Loja Moema"].id)
    # The same approval again creates nothing.
    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    assert len(_issues(client, ops)) == 5


def test_the_issues_follow_execution_receipt_and_refusal(client, ops):
    semana = ops["lote"].semana
    for rec in ("cd_moema", "cd_santos"):
        _decide(client, ops["planner"], ops[rec], "aprovar")
    _decide(client, ops["planner"], ops["cd_moema"], "executar")
    sub = _issues(client, ops)[f"Lote {semana} · CD Extrema → Loja Moema · 4 un."]
    assert (
        sub["status"]["category"] == "in_progress" and "Enviadas 4 un.; recebidas 0 un." in sub["description"]
    )
    received = client.post(
        f"{API}/recomendacoes/{ops['cd_moema'].id}/receber",
        json={"quantidadeRecebida": 3},
        headers=auth_headers(client, ops["managers"]["Loja Moema"]),
    )
    assert received.status_code == 200, received.get_json()
    issues = _issues(client, ops)
    sub = issues[f"Lote {semana} · CD Extrema → Loja Moema · 4 un."]
    assert sub["status"]["category"] == "done" and "recebida (3 un.), faltaram 1" in sub["description"]
    origin = issues[f"Lote {semana} · separar em CD Extrema · 7 un. para 2 lojas"]
    assert origin["status"]["category"] != "done"  # Santos's part is still to do
    _decide(client, ops["planner"], ops["cd_santos"], "recusar", {"motivo": "estoque_errado"})
    issues = _issues(client, ops)
    refused = next(i for title, i in issues.items() if "→ Loja Santos" in title)
    assert refused["status"]["category"] == "done" and "recusada: estoque_errado" in refused["description"]
    origin = next(i for title, i in issues.items() if "separar em CD Extrema" in title)
    assert origin["status"]["category"] == "done"


def test_a_sync_that_dies_half_way_leaves_nothing_and_the_next_completes_it(client, ops, monkeypatch):
    from services.stock import operations
    from services.tracker import issues as tracker_issues

    real = tracker_issues.create_issue

    def dying(actor, slug, project_id, data):
        if "→ Loja Santos" in data["title"]:
            raise RuntimeError("worker killed")
        return real(actor, slug, project_id, data)

    monkeypatch.setattr(operations.tracker_issues, "create_issue", dying)
    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    before = _issues(client, ops)
    assert len(before) == 2  # CD Extrema's issue and its Moema part
    # The next pass dies creating Santos's part: nothing of that pass stays, not even the
    # origin's new totals.
    _decide(client, ops["planner"], ops["cd_santos"], "aprovar")
    assert _issues(client, ops) == before
    from tests.test_pages_remanejamento import sign_in

    sign_in(client, ops["admin"])  # the rules page tells the admin
    rules_page = client.get("/regras").get_data(as_text=True)
    assert "A última atualização das tarefas no Tracker falhou" in rules_page
    assert "Erro interno (RuntimeError)" in rules_page  # no internals: those are in the worker's log
    monkeypatch.setattr(operations.tracker_issues, "create_issue", real)
    _decide(client, ops["planner"], ops["moema_santos"], "aprovar")  # the next change runs it again
    after = _issues(client, ops)
    assert len(after) == 5
    assert {i["id"] for i in before.values()} <= {i["id"] for i in after.values()}  # none twice


def test_the_rules_page_offers_the_admins_projects_and_keeps_the_named_one(client, ops):
    from tests.test_pages_remanejamento import sign_in

    csrf = sign_in(client, ops["admin"])
    page = client.get("/regras").get_data(as_text=True)
    options = re.findall(
        r'<option value="([^"]*)"( selected)?>([^<]*)</option>',
        page.split('id="projetoOperacoes"')[1].split("</select>")[0],
    )
    assert (str(ops["project"].id), " selected", "Ana Admin · Operações (OPS)") in options
    form = {
        "periodo": "30",
        "qtdMinima": "3",
        "qtdMaxima": "15",
        "pesoDistancia": "40",
        "pesoGiro": "35",
        "pesoEstoque": "25",
        "custoEnvio": "300",
        "custoKm": "1",
        "ganhoMinimo": "150",
        "projetoOperacoes": str(ops["project"].id),
        "csrf_token": csrf,
    }
    saved = client.post("/regras", data={**form, "qtdMaxima": "12"})
    assert saved.status_code == 200
    rules = client.get(f"{API}/regras", headers=auth_headers(client, ops["admin"])).get_json()
    assert rules["qtdMaxima"] == 12 and rules["projetoOperacoes"] == str(ops["project"].id)
    cleared = client.post("/regras", data={**form, "projetoOperacoes": ""})
    assert cleared.status_code == 200
    assert (
        client.get(f"{API}/regras", headers=auth_headers(client, ops["admin"])).get_json()["projetoOperacoes"]
        is None
    )


def test_a_problem_becomes_an_issue_under_the_destinations_part(client, ops):
    semana = ops["lote"].semana
    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    _decide(client, ops["planner"], ops["cd_moema"], "executar")
    manager = auth_headers(client, ops["managers"]["Loja Moema"])
    url = f"{API}/recomendacoes/{ops['cd_moema'].id}/problemas"
    assert client.post(url, json={"tipo": "outro"}, headers=manager).status_code == 422  # words needed
    opened = client.post(url, json={"tipo": "avariada", "texto": "Caixa molhada"}, headers=manager)
    assert opened.status_code == 201, opened.get_json()
    body = opened.get_json()
    assert body["issueKey"].startswith("OPS-") and body["relatadoPor"] == ops["managers"]["Loja Moema"].name
    issues = _issues(client, ops)
    problem = issues[body["issueTitulo"]]
    assert problem["title"] == "Problema: mercadoria avariada · Tênis Runner 38 · CD Extrema → Loja Moema"
    assert problem["parent_id"] == issues[f"Lote {semana} · CD Extrema → Loja Moema · 4 un."]["id"]
    assert (
        "> Caixa molhada" in problem["description"]
        and "4 × Tênis Runner (TR-1) Preto 38" in problem["description"]
    )
    # A store manager of another store cannot read this transfer, nor report on it.
    other = auth_headers(client, ops["managers"]["Loja Santos"])
    assert client.post(url, json={"tipo": "avariada"}, headers=other).status_code == 404
    # A receipt short of units opens one by itself.
    received = client.post(
        f"{API}/recomendacoes/{ops['cd_moema'].id}/receber", json={"quantidadeRecebida": 2}, headers=manager
    )
    assert received.status_code == 200
    listed = client.get(url, headers=manager).get_json()["problemas"]
    assert [(p["tipo"], p["relatadoPor"]) for p in listed] == [
        ("avariada", body["relatadoPor"]),
        ("faltando", None),
    ]
    assert "Recebidas: 2 de 4" in _issues(client, ops)[listed[1]["issueTitulo"]]["description"]


def test_without_an_operations_project_a_problem_is_409_and_a_short_receipt_is_only_recorded(client, ctx):
    data = _setup()
    db.session.commit()
    _decide(client, data["planner"], data["cd_moema"], "aprovar")
    _decide(client, data["planner"], data["cd_moema"], "executar")
    manager = auth_headers(client, data["managers"]["Loja Moema"])
    url = f"{API}/recomendacoes/{data['cd_moema'].id}/problemas"
    refused = client.post(url, json={"tipo": "avariada"}, headers=manager)
    assert refused.status_code == 409 and "projeto de operação" in refused.get_json()["detail"]
    received = client.post(
        f"{API}/recomendacoes/{data['cd_moema'].id}/receber", json={"quantidadeRecebida": 1}, headers=manager
    )
    assert received.status_code == 200 and client.get(url, headers=manager).get_json() == {"problemas": []}


def test_the_issue_page_executes_and_receives_with_the_stock_role_only(client, ops, app):
    from tests.test_pages_remanejamento import sign_in

    semana = ops["lote"].semana
    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    sub = _issues(client, ops)[f"Lote {semana} · CD Extrema → Loja Moema · 4 un."]
    page_url = f"/tracker/w/{ops['slug']}/p/{ops['project'].id}/issues/{sub['key']}"
    # The admin (stock admin and organization owner) executes from the issue page.
    csrf = sign_in(client, ops["admin"])
    page = client.get(page_url).get_data(as_text=True)
    assert "Transferências" in page and ">Executar<" in page
    executed = client.post(
        f"{page_url}/transferencias/{ops['cd_moema'].id}/executar", data={"csrf_token": csrf}
    )
    assert executed.status_code == 303
    # The destination's manager receives from it; the issue closes.
    manager_client = app.test_client()
    csrf = sign_in(manager_client, ops["managers"]["Loja Moema"])
    page = manager_client.get(page_url).get_data(as_text=True)
    assert ">Receber<" in page and ">Executar<" not in page
    received = manager_client.post(
        f"{page_url}/transferencias/{ops['cd_moema'].id}/receber",
        data={"csrf_token": csrf, "quantidadeRecebida": "4"},
    )
    assert received.status_code == 303
    assert (
        _issues(client, ops)[f"Lote {semana} · CD Extrema → Loja Moema · 4 un."]["status"]["category"]
        == "done"
    )
    # A tracker member without a stock role sees the issue, not the stock panel.
    member, _a, _r = register_verified("Tina Tracker", "tina@giro.test", PASSWORD)
    invitation = organizations.invite(
        ops["admin"], ops["project"].organization_id, "tina@giro.test", "member"
    )
    organizations.accept_invitation(member, invitation.id)
    db.session.commit()
    outsider_client = app.test_client()
    outsider_client.post("/login", data={"email": "tina@giro.test", "senha": PASSWORD})
    page = outsider_client.get(page_url)
    assert page.status_code == 200 and "Transferências" not in page.get_data(as_text=True)


def test_the_receipts_page_reports_a_problem_to_the_tracker(client, ops):
    from tests.test_pages_remanejamento import sign_in

    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    _decide(client, ops["planner"], ops["cd_moema"], "executar")
    moema = ops["managers"]["Loja Moema"]
    csrf = sign_in(client, moema)
    page = client.get(f"/lojas/{moema.loja_id}/recebimentos").get_data(as_text=True)
    assert "Relatar problema" in page
    url = f"/lojas/{moema.loja_id}/recebimentos/{ops['cd_moema'].id}/problema"
    missing_words = client.post(url, data={"csrf_token": csrf, "tipo": "outro"})
    assert missing_words.status_code == 422 and "descreva" in missing_words.get_data(as_text=True)
    reported = client.post(url, data={"csrf_token": csrf, "tipo": "tamanho_errado", "texto": "Vieram 39"})
    text = reported.get_data(as_text=True)
    assert reported.status_code == 200 and "Problema registrado na tarefa OPS-" in text
    titles = set(_issues(client, ops))
    assert "Problema: tamanho errado · Tênis Runner 38 · CD Extrema → Loja Moema" in titles


def test_the_batch_page_offers_a_problem_report_and_lists_the_reported_ones(client, ops):
    from tests.test_pages_remanejamento import sign_in

    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    csrf = sign_in(client, ops["planner"])
    batch = client.get(f"/lotes/{ops['lote'].id}").get_data(as_text=True)
    url = f"/lotes/{ops['lote'].id}/recomendacoes/{ops['cd_moema'].id}/problema"
    assert url in batch  # an approved transfer offers it; a pending one does not
    assert f"{ops['cd_santos'].id}/problema" not in batch
    sent = client.post(url, data={"csrf_token": csrf, "tipo": "faltando", "texto": "Chegaram 3"})
    text = sent.get_data(as_text=True)
    assert sent.status_code == 200 and "Problema registrado na tarefa OPS-" in text
    assert "Problema: unidades faltando · Tênis Runner 38" in client.get(url).get_data(as_text=True)


def test_the_history_lists_each_transfers_problems(client, ops):
    from tests.test_pages_remanejamento import sign_in

    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    opened = client.post(
        f"{API}/recomendacoes/{ops['cd_moema'].id}/problemas",
        json={"tipo": "avariada"},
        headers=auth_headers(client, ops["planner"]),
    ).get_json()
    sign_in(client, ops["planner"])
    history = client.get("/historico").get_data(as_text=True)
    assert f">{opened['issueKey']}</a>" in history and opened["issueUrl"] in history


def test_a_plan_that_holds_no_more_issues_keeps_what_fits_and_says_so(client, ops):
    from models.jobs import Job
    from tests.tracker.support import superadmin

    root = superadmin(client)
    plan = {
        "id": "tiny",
        "name": "Tiny",
        "price_brl": 0,
        "limits": {"members": 10, "projects": 5, "issues": 2, "storage_bytes": 10**7},
    }
    assert client.post(f"{TRACKER}/admin/plans", json=plan, headers=root.headers).status_code == 201
    org = str(ops["project"].organization_id)
    assert (
        client.patch(
            f"{TRACKER}/admin/organizations/{org}", json={"plan": "tiny"}, headers=root.headers
        ).status_code
        == 200
    )
    _decide(client, ops["planner"], ops["cd_moema"], "aprovar")
    _decide(client, ops["planner"], ops["cd_santos"], "aprovar")
    assert len(_issues(client, ops)) == 2  # CD Extrema's issue and its first part
    job = db.session.scalars(
        select(Job).where(Job.kind == "operacoes").order_by(Job.created_at.desc())
    ).first()
    assert job.state == "done" and job.result["limite_do_plano"] is True
    # The rules page says so to the admin.
    from tests.test_pages_remanejamento import sign_in

    sign_in(client, ops["admin"])
    assert "não comporta mais tarefas" in client.get("/regras").get_data(as_text=True)
