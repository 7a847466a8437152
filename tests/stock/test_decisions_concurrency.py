"""Two planners acting on the same recommendation at once: one wins, the other sees the result."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from extensions import db
from models.stock_batches import AcaoRecomendacao
from tests.factories import auth_headers, make_loja, make_lote, make_produto, make_rec, make_user
from tests.stock.support import API


def _setup(app, client, status: str):
    with app.app_context():
        cd = make_loja(is_cd=True)
        loja = make_loja()
        rec = make_rec(make_lote(), make_produto(), cd, loja, status=status)
        users = [make_user(papel="planejador", name=f"Planejador {i}") for i in range(4)]
        db.session.commit()
        rec_id = rec.id
        logins = [SimpleNamespace(email=u.email) for u in users]
    return rec_id, [auth_headers(client, u) for u in logins]


def _race(app, calls):
    """Run the (path, headers) POSTs in threads released together; returns their responses."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def worker(i, path, headers):
        client = app.test_client()
        barrier.wait()
        r = client.post(path, headers=headers)
        results[i] = (r.status_code, r.get_json())

    threads = [threading.Thread(target=worker, args=(i, p, h)) for i, (p, h) in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def _actions(app, rec_id) -> int:
    with app.app_context():
        return db.session.scalar(
            select(func.count())
            .select_from(AcaoRecomendacao)
            .where(AcaoRecomendacao.recomendacao_id == rec_id)
        )


@pytest.mark.committing
def test_execute_and_refuse_at_once_one_wins(app, client):
    rec_id, headers = _setup(app, client, "aprovada")
    results = _race(
        app,
        [
            (f"{API}/recomendacoes/{rec_id}/executar", headers[0]),
            (f"{API}/recomendacoes/{rec_id}/recusar", headers[1]),
        ],
    )
    codes = sorted(code for code, _ in results)
    assert codes == [200, 409], results
    winner = next(body for code, body in results if code == 200)
    final = client.get(f"{API}/recomendacoes/{rec_id}", headers=headers[2]).get_json()
    assert final["status"] == winner["status"] in ("executada", "recusada")
    assert _actions(app, rec_id) == 1


@pytest.mark.committing
def test_many_approvals_at_once_change_it_once(app, client):
    rec_id, headers = _setup(app, client, "pendente")
    results = _race(app, [(f"{API}/recomendacoes/{rec_id}/aprovar", h) for h in headers])
    assert [code for code, _ in results] == [200] * len(headers), results
    assert {body["status"] for _, body in results} == {"aprovada"}
    assert _actions(app, rec_id) == 1
    hist = client.get(f"{API}/historico", headers=headers[0]).get_json()
    assert len(hist) == 1 and hist[0]["usuario"].startswith("Planejador ")
