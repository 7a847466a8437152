"""``flask demo load``: the demo network's invariants, its accounts, and how it treats existing data."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from extensions import db
from models.auth import User
from models.stock import Campanha, Estoque, Loja, Produto, Venda
from services.clock import today
from services.stock.demo import DEMO_PASSWORD
from tests.factories import bearer, make_loja, make_user

APPAREL = ["PP", "P", "M", "G", "GG"]
# Mainland Brazil's extreme points, with a little margin.
BRAZIL_LAT = (-34.0, 5.5)
BRAZIL_LNG = (-74.0, -34.7)


def load(runner, *args: str):
    result = runner.invoke(args=["demo", "load", *args])
    assert result.exit_code == 0, result.output
    return result.output


def network_values(app) -> dict:
    """The network by codigo/sku (ids differ between loads)."""
    with app.app_context():
        stores = {codigo: (nome, cidade, lat, lng, is_cd) for codigo, nome, cidade, lat, lng, is_cd in db.session.execute(select(Loja.codigo, Loja.nome, Loja.cidade, Loja.lat, Loja.lng, Loja.is_cd))}  # fmt: skip
        products = {sku: (nome, marca, tuple(t)) for sku, nome, marca, t in db.session.execute(select(Produto.sku, Produto.nome, Produto.marca, Produto.tamanhos))}  # fmt: skip
        stock = {
            tuple(r)
            for r in db.session.execute(
                select(Loja.codigo, Produto.sku, Estoque.tamanho, Estoque.qtd)
                .join(Loja, Loja.id == Estoque.loja_id)
                .join(Produto, Produto.id == Estoque.produto_id)
            )
        }
        sales = {
            tuple(r)
            for r in db.session.execute(
                select(Venda.data, Loja.codigo, Produto.sku, Venda.tamanho, Venda.qtd)
                .join(Loja, Loja.id == Venda.loja_id)
                .join(Produto, Produto.id == Venda.produto_id)
            )
        }
        return {"stores": stores, "products": products, "stock": stock, "sales": sales}


def test_default_demo_network_is_realistic(app, runner, client):
    output = load(runner)
    with app.app_context():
        ref = today()
        lojas = list(db.session.scalars(select(Loja)))
        produtos = list(db.session.scalars(select(Produto)))

        # Network: >= 2 CDs and >= 25 stores, all inside Brazil.
        cds = [loja for loja in lojas if loja.is_cd]
        stores = [loja for loja in lojas if not loja.is_cd]
        assert len(cds) >= 2 and len(stores) >= 25
        for loja in lojas:
            assert BRAZIL_LAT[0] < loja.lat < BRAZIL_LAT[1], loja.cidade
            assert BRAZIL_LNG[0] < loja.lng < BRAZIL_LNG[1], loja.cidade
        assert {"São Paulo - SP", "Rio de Janeiro - RJ", "Recife - PE", "Porto Alegre - RS"} <= {
            s.cidade for s in stores
        }
        assert {c.cidade for c in cds} == {"Cajamar - SP", "Extrema - MG"}

        # Products: >= 60, several brands and categories, real size runs, one colour each.
        assert len(produtos) >= 60
        assert len({p.marca for p in produtos}) >= 4
        assert len({p.categoria for p in produtos}) >= 5
        assert all(p.cor for p in produtos)
        shoe_grids = [p.tamanhos for p in produtos if p.tamanhos[0].isdigit()]
        apparel_grids = [p.tamanhos for p in produtos if not p.tamanhos[0].isdigit()]
        assert shoe_grids and apparel_grids
        assert all(grid == APPAREL for grid in apparel_grids)
        for grid in shoe_grids:
            numbers = [int(t) for t in grid]
            assert numbers == list(range(numbers[0], numbers[-1] + 1))
            assert numbers[0] >= 33 and numbers[-1] <= 44 and len(numbers) >= 5
        assert any(grid == [str(n) for n in range(33, 45)] for grid in shoe_grids)

        # 90 days of sales before today, none at the CDs, weekends above weekdays.
        per_day = dict(db.session.execute(select(Venda.data, func.sum(Venda.qtd)).group_by(Venda.data)).all())
        assert len(per_day) == 90
        assert min(per_day) == ref - timedelta(days=90) and max(per_day) == ref - timedelta(days=1)
        weekend = [q for d, q in per_day.items() if d.weekday() >= 5]
        weekday = [q for d, q in per_day.items() if d.weekday() < 5]
        assert sum(weekend) / len(weekend) > 1.2 * sum(weekday) / len(weekday)
        cd_ids = {c.id for c in cds}
        sales_at_cds = db.session.scalar(
            select(func.count()).select_from(Venda).where(Venda.loja_id.in_(cd_ids))
        )
        assert sales_at_cds == 0
        # Bigger cities sell more: São Paulo Paulista outsells the smallest store.
        per_store = dict(
            db.session.execute(select(Venda.loja_id, func.sum(Venda.qtd)).group_by(Venda.loja_id)).all()
        )
        sao_paulo = next(s for s in stores if s.cidade == "São Paulo - SP")
        assert per_store[sao_paulo.id] == max(per_store.values())

        # Middle sizes sell most: for shoes 33-44, the ends sell less than the middle.
        size_units = defaultdict(int)
        for tamanho, qtd in db.session.execute(
            select(Venda.tamanho, func.sum(Venda.qtd)).group_by(Venda.tamanho)
        ):
            size_units[tamanho] = qtd
        assert size_units["M"] > size_units["PP"] and size_units["M"] > size_units["GG"]
        assert size_units["38"] > size_units["33"] and size_units["40"] > size_units["44"]

        # Exactly one campaign, active today.
        campanhas = list(db.session.scalars(select(Campanha)))
        assert len(campanhas) == 1
        assert campanhas[0].inicio <= ref <= campanhas[0].fim

        # Imbalances: cells with nothing on hand that sell, cells with > 60 days of cover; CDs hold reserve.
        sold = {
            (loja_id, produto_id, tamanho): qtd
            for loja_id, produto_id, tamanho, qtd in db.session.execute(
                select(Venda.loja_id, Venda.produto_id, Venda.tamanho, func.sum(Venda.qtd)).group_by(
                    Venda.loja_id, Venda.produto_id, Venda.tamanho
                )
            )
        }
        stock = {
            (loja_id, produto_id, tamanho): qtd
            for loja_id, produto_id, tamanho, qtd in db.session.execute(
                select(Estoque.loja_id, Estoque.produto_id, Estoque.tamanho, Estoque.qtd)
            )
        }
        ruptures = [cell for cell, qtd in sold.items() if qtd > 0 and stock.get(cell, 0) == 0]
        excess = [cell for cell, qtd in sold.items() if stock.get(cell, 0) > 60 * qtd / 90]
        assert len(ruptures) >= 10
        assert len(excess) >= 10
        # Some stores are mostly short, others mostly over.
        cover_by_store = defaultdict(lambda: [0, 0])
        for (loja_id, _p, _t), qtd in sold.items():
            cover_by_store[loja_id][0] += stock.get((loja_id, _p, _t), 0)
            cover_by_store[loja_id][1] += qtd / 90
        covers = [held / daily for held, daily in cover_by_store.values()]
        assert min(covers) < 15 and max(covers) > 60
        cd_stock = db.session.scalar(select(func.sum(Estoque.qtd)).where(Estoque.loja_id.in_(cd_ids)))
        assert cd_stock > 0

    # One account per papel plus a superadmin, all able to sign in; the output lists them.
    assert DEMO_PASSWORD in output
    expected = {
        "admin@demo.giro.com.br": "admin",
        "planejador@demo.giro.com.br": "planejador",
        "gerente@demo.giro.com.br": "gerente_loja",
        "visualizador@demo.giro.com.br": "visualizador",
        "superadmin@demo.giro.com.br": "admin",
    }
    for email, papel in expected.items():
        assert email in output
        response = client.post("/api/v1/auth/login", json={"email": email, "senha": DEMO_PASSWORD})
        assert response.status_code == 200, response.get_json()
        user = response.get_json()["user"]
        assert user["papel"] == papel
        if papel == "gerente_loja":
            assert user["lojaId"] is not None
    me = client.get(
        "/api/v1/stores",
        headers={"Authorization": f"Bearer {_token(client, 'visualizador@demo.giro.com.br')}"},
    )
    assert me.status_code == 200 and len(me.get_json()) == len(lojas)
    with app.app_context():
        assert db.session.scalar(select(User.superadmin).where(User.email == "superadmin@demo.giro.com.br"))


def _token(client, email: str) -> str:
    response = client.post("/api/v1/auth/login", json={"email": email, "senha": DEMO_PASSWORD})
    return response.get_json()["accessToken"]


@pytest.mark.any_database(on="sqlite")  # the generator and the CLI's options
def test_small_network_respects_the_options(app, runner):
    output = load(runner, "--stores", "3", "--products", "6", "--seed", "11")
    assert "2 CDs, 3 stores, 6 products" in output
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Loja).where(Loja.is_cd.is_(False))) == 3
        assert db.session.scalar(select(func.count()).select_from(Produto)) == 6
        assert db.session.scalar(select(func.count(func.distinct(Venda.data)))) == 90


@pytest.mark.any_database(on="sqlite")  # the generator and the CLI's options
def test_same_seed_same_network(app, runner):
    load(runner, "--stores", "3", "--products", "6", "--seed", "5")
    first = network_values(app)
    load(runner, "--stores", "3", "--products", "6", "--seed", "5", "--replace")
    assert network_values(app) == first
    load(runner, "--stores", "3", "--products", "6", "--seed", "6", "--replace")
    other = network_values(app)
    assert other["sales"] != first["sales"]


@pytest.mark.any_database(on="sqlite")  # the generator and the CLI's options
def test_existing_data_is_left_alone_without_replace(app, runner, ctx):
    make_loja(codigo="MINHA-01")
    db.session.commit()
    before = network_values(app)
    result = runner.invoke(args=["demo", "load", "--stores", "3", "--products", "6"])
    assert result.exit_code != 0
    assert "already has 1 store(s)" in result.output and "--replace" in result.output
    assert network_values(app) == before

    output = load(runner, "--stores", "3", "--products", "6", "--if-empty")
    assert "nothing to do" in output
    assert network_values(app) == before
    assert "Demo accounts" not in output


@pytest.mark.any_database(on="sqlite")  # the generator and the CLI's options
def test_if_empty_over_the_demo_reminds_the_credentials(app, runner):
    load(runner, "--stores", "3", "--products", "6")
    before = network_values(app)
    output = load(runner, "--if-empty")
    assert "nothing to do" in output
    assert "planejador@demo.giro.com.br" in output and DEMO_PASSWORD in output
    assert network_values(app) == before


def test_replace_wipes_the_stock_data_and_keeps_other_accounts(app, runner, ctx):
    loja = make_loja(codigo="MINHA-01")
    manager_id = make_user(papel="gerente_loja", loja=loja, email="gerente.real@giro.test").id
    db.session.commit()
    load(runner, "--stores", "3", "--products", "6", "--replace")
    with app.app_context():
        codigos = set(db.session.scalars(select(Loja.codigo)))
        assert "MINHA-01" not in codigos and len(codigos) == 5
        kept = db.session.scalar(select(User).where(User.email == "gerente.real@giro.test"))
        assert kept is not None and kept.id == manager_id and kept.loja_id is None
    # Loading again over the demo resets the demo accounts instead of failing on them.
    load(runner, "--stores", "3", "--products", "6", "--replace")
    with app.app_context():
        demo_users = db.session.scalar(
            select(func.count()).select_from(User).where(User.email.like("%@demo.giro.com.br"))
        )
        assert demo_users == 5


def test_the_demo_has_a_past_every_screen_can_show(app, runner, client):
    """Past weeks decided, shipped and received: the approval rate, the learning and the
    expected-against-sold figures are filled, and the store manager has goods on their way."""
    output = load(runner, "--stores", "6", "--products", "12")
    assert "3 past batches" in output
    headers = bearer(
        client.post(
            "/api/v1/auth/login", json={"email": "planejador@demo.giro.com.br", "senha": DEMO_PASSWORD}
        ).get_json()["accessToken"]
    )
    lotes = client.get("/api/v1/remanejamento/lotes", headers=headers).get_json()
    assert len(lotes) == 4  # three past weeks and this one
    resultado = client.get("/api/v1/remanejamento/metricas/resultado", headers=headers).get_json()
    assert resultado["total"]["janela14"]["transferencias"] > 0  # complete 14-day windows
    aprendizado = client.get("/api/v1/remanejamento/metricas/aprendizado", headers=headers).get_json()
    assert aprendizado["decididas"] > 0 and 0 < aprendizado["taxaAceitacao"] < 1
    manager = client.post(
        "/api/v1/auth/login", json={"email": "gerente@demo.giro.com.br", "senha": DEMO_PASSWORD}
    ).get_json()
    with app.app_context():
        loja_id = db.session.scalar(select(User.loja_id).where(User.email == "gerente@demo.giro.com.br"))
    transito = client.get(
        f"/api/v1/lojas/{loja_id}/em-transito", headers=bearer(manager["accessToken"])
    ).get_json()
    assert transito["itens"]
    # The operations project holds the past weeks' work, part of it done, and one problem.
    assert re.search(r"Operations project OPS: \d+ issues .*, 1 problem open", output)
    regras = client.get("/api/v1/remanejamento/regras", headers=headers).get_json()
    assert regras["projetoOperacoes"] is not None
    with app.app_context():
        from models.stock_operations import OperacaoIssue, ProblemaTransferencia
        from models.tracker import Issue, Status

        categories = db.session.scalars(
            select(Status.category)
            .join(Issue, Issue.status_id == Status.id)
            .join(OperacaoIssue, OperacaoIssue.issue_id == Issue.id)
        ).all()
        assert {"done", "in_progress"} <= set(categories)
        assert db.session.scalar(select(func.count()).select_from(ProblemaTransferencia)) == 1


def test_the_demo_dashboard_links_each_batch_to_its_issues(app, runner, client):
    load(runner, "--stores", "6", "--products", "12")
    signed = client.post("/login", data={"email": "admin@demo.giro.com.br", "senha": DEMO_PASSWORD})
    assert signed.status_code == 302
    home = client.get("/").get_data(as_text=True)
    links = re.findall(r'href="(/tracker/w/[^"]+/issues\?label_id=[^"]+)"', home)
    assert links, "no batch links to its issues"
    listing = client.get(links[0].replace("&amp;", "&"))
    assert listing.status_code == 200 and "Lote 20" in listing.get_data(as_text=True)
