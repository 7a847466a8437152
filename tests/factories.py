"""Test data builders. They flush; the surrounding test transaction keeps them."""

from __future__ import annotations

import itertools
import re
from contextlib import contextmanager
from datetime import date, timedelta

from extensions import db
from models.stock import Campanha, Estoque, Loja, Produto, Venda
from services import auth as auth_service
from services.mail import mail_sent

PASSWORD = "senha-forte-123"
_seq = itertools.count(1)


def make_user(*, papel="planejador", email=None, name=None, password=PASSWORD, loja=None, **kw):
    n = next(_seq)
    return auth_service.create_user(
        email=email or f"user{n}@giro.test",
        password=password,
        name=name or f"Pessoa Teste {n}",
        papel=papel,
        loja_id=loja.id if loja is not None else None,
        **kw,
    )


def make_loja(
    *, codigo=None, nome=None, cidade="São Paulo", lat=-23.55, lng=-46.63, is_cd=False, bloqueada=False
):
    n = next(_seq)
    loja = Loja(
        codigo=codigo or f"L{n:03d}",
        nome=nome or f"Loja {n}",
        cidade=cidade,
        lat=lat,
        lng=lng,
        is_cd=is_cd,
        bloqueada=bloqueada,
    )
    db.session.add(loja)
    db.session.flush()
    return loja


def make_produto(
    *,
    sku=None,
    nome=None,
    marca="Marca A",
    categoria="Tênis",
    colecao="Verão 2026",
    cor="Preto",
    tamanhos=("37", "38", "39", "40"),
):
    n = next(_seq)
    produto = Produto(
        sku=sku or f"SKU-{n:05d}",
        nome=nome or f"Produto {n}",
        marca=marca,
        categoria=categoria,
        colecao=colecao,
        cor=cor,
        tamanhos=list(tamanhos),
    )
    db.session.add(produto)
    db.session.flush()
    return produto


def set_stock(loja, produto, **per_size):
    """set_stock(loja, produto, **{"38": 4}) — sizes as keyword names via dict unpacking."""
    for tamanho, qtd in per_size.items():
        db.session.merge(Estoque(loja_id=loja.id, produto_id=produto.id, tamanho=tamanho, qtd=qtd))
    db.session.flush()


def add_sales(loja, produto, tamanho, per_day: list[int], *, end: date):
    """Daily sales ending the day before ``end``: per_day[-1] is end - 1 day."""
    for i, qtd in enumerate(reversed(per_day), start=1):
        db.session.add(
            Venda(
                data=end - timedelta(days=i), loja_id=loja.id, produto_id=produto.id, tamanho=tamanho, qtd=qtd
            )
        )
    db.session.flush()


def make_campanha(produto, *, loja=None, inicio, fim):
    campanha = Campanha(produto_id=produto.id, loja_id=loja.id if loja else None, inicio=inicio, fim=fim)
    db.session.add(campanha)
    db.session.flush()
    return campanha


def login(client, user, *, password=PASSWORD, remember=True, prefix="/api/v1"):
    """Sign in through the stock API; returns the token response body."""
    response = client.post(
        f"{prefix}/auth/login", json={"email": user.email, "senha": password, "remember": remember}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def auth_headers(client, user) -> dict:
    return bearer(login(client, user)["accessToken"])


def make_lote(on: date = date(2026, 11, 18)):
    """An empty batch for the ISO week of ``on``."""
    from models.stock_batches import Lote
    from services.stock.batches import iso_week

    semana, inicio, fim = iso_week(on)
    lote = Lote(semana=semana, inicio=inicio, fim=fim, data=on, geracoes=1)
    db.session.add(lote)
    db.session.flush()
    return lote


_rec_position = itertools.count()
_UNSET = object()


def make_rec(
    lote,
    produto,
    origem,
    destino,
    *,
    tamanho: str = "38",
    quantidade: int = 5,
    prioridade: str = "media",
    score: int = 50,
    status: str = "pendente",
    vetado: bool = False,
    motivo_veto: str = "Loja em reforma",
    dias_ate_ruptura: int = 3,
    executada_data=_UNSET,
    **columns,
):
    """A recommendation written straight into a batch (the engine's figures are fixed).

    An executed one gets the batch date as its execution day unless told otherwise; ``columns``
    sets any other column (``venda_extra_esperada``, ``estoque_destino``, a receipt...).
    """
    from models.stock_batches import PRIORIDADE_RANK, Recomendacao

    if executada_data is _UNSET:
        executada_data = lote.data if status == "executada" else None
    rec = Recomendacao(
        lote_id=lote.id,
        produto_id=produto.id,
        tamanho=tamanho,
        cor=produto.cor,
        origem_id=origem.id,
        destino_id=destino.id,
        tipo_origem="cd" if origem.is_cd else "loja",
        quantidade=quantidade,
        estoque_destino=1,
        venda_media_destino=1.5,
        estoque_origem=30,
        venda_media_origem=0.1,
        distancia_km=12.0,
        justificativa=f"{destino.nome} vende 1,5/dia e tem 1 unidade; {origem.nome} tem 30 e vende 0,1/dia.",
        prioridade=prioridade,
        prioridade_rank=PRIORIDADE_RANK[prioridade],
        score=score,
        posicao=next(_rec_position),
        dias_ate_ruptura=dias_ate_ruptura,
        em_campanha=False,
        data=lote.data,
        status=status,
        vetado=vetado,
        motivo_veto=motivo_veto if vetado else None,
        executada_data=executada_data,
    )
    for name, value in columns.items():
        setattr(rec, name, value)
    db.session.add(rec)
    db.session.flush()
    return rec


@contextmanager
def captured_mail():
    """Every message sent inside the block, in order."""
    outbox: list = []

    def record(_app, message):
        outbox.append(message)

    with mail_sent.connected_to(record):
        yield outbox


def link_token(message) -> str:
    """The ``token`` of the link in an e-mail (verification or password reset)."""
    found = re.search(r"[?&]token=([\w-]+)", message.get_content())
    assert found, message.get_content()
    return found.group(1)


def register_verified(name: str, email: str, password: str):
    """A tracker registration whose owner followed the confirmation link."""
    from models.base import utcnow
    from services.tracker import accounts

    user, access, refresh = accounts.register(name, email, password)
    user.email_verified_at = utcnow()
    db.session.flush()
    return user, access, refresh
