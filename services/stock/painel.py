"""A store manager's dashboard: its own store's stock figures and the transfers of the
current batch it has to send or will receive. Nothing network-wide: a ``gerente_loja``
cannot act on other stores."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import and_, case, false, func, select

from extensions import db
from models.auth import User
from models.stock import Estoque, Loja, Produto, Venda
from models.stock_batches import Recomendacao
from services.clock import today
from services.errors import NotFoundError
from services.stock.access import ensure_stock_access
from services.stock.metrics import RISK_COVER_DAYS
from services.stock.recommendations import newest_lote
from services.stock.rules import get_rules, history_days
from services.stock.transit import count_arriving

# Transfers listed per direction; the batch page has the rest.
LISTED = 8


def _stock_figures(loja_id, periodo: int) -> dict:
    ref = today()
    totals = db.session.execute(
        select(func.coalesce(func.sum(Estoque.qtd), 0), func.count()).where(Estoque.loja_id == loja_id)
    ).one()
    sold = (
        select(Venda.produto_id, Venda.tamanho, func.sum(Venda.qtd).label("vendido"))
        .where(Venda.loja_id == loja_id, Venda.data >= ref - timedelta(days=periodo), Venda.data < ref)
        .group_by(Venda.produto_id, Venda.tamanho)
        .subquery()
    )
    qtd = func.coalesce(Estoque.qtd, 0)
    risk = db.session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((qtd <= 0, 1), else_=0)), 0),
            func.coalesce(func.sum(sold.c.vendido), 0),
        )
        .select_from(sold)
        .outerjoin(
            Estoque,
            and_(
                Estoque.loja_id == loja_id,
                Estoque.produto_id == sold.c.produto_id,
                Estoque.tamanho == sold.c.tamanho,
            ),
        )
        .where(sold.c.vendido > 0, qtd * periodo < RISK_COVER_DAYS * sold.c.vendido)
    ).one()
    vendidas = db.session.scalar(
        select(func.coalesce(func.sum(Venda.qtd), 0)).where(
            Venda.loja_id == loja_id, Venda.data >= ref - timedelta(days=periodo), Venda.data < ref
        )
    )
    return {
        "unidades": int(totals[0]),
        "tamanhos": int(totals[1]),
        "tamanhos_em_risco": int(risk[0]),
        "rupturas": int(risk[1]),
        "vendidas_periodo": int(vendidas or 0),
        "periodo_dias": periodo,
        "cobertura_dias": RISK_COVER_DAYS,
    }


def _transfers(lote_id, column, loja_id) -> tuple[dict, list]:
    """Counts by status and the first transfers still to do (pending or approved), most urgent first."""
    where = (Recomendacao.lote_id == lote_id, column == loja_id, Recomendacao.vetado == false())
    counts = {
        status: (int(n), int(u))
        for status, n, u in db.session.execute(
            select(Recomendacao.status, func.count(), func.sum(Recomendacao.quantidade))
            .where(*where)
            .group_by(Recomendacao.status)
        ).all()
    }
    other = Recomendacao.destino_id if column is Recomendacao.origem_id else Recomendacao.origem_id
    rows = db.session.execute(
        select(Recomendacao, Produto.nome, Loja.nome)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .join(Loja, Loja.id == other)
        .where(*where, Recomendacao.status.in_(("aprovada", "pendente")))
        # Approved first (ready to pick or expect), then by urgency.
        .order_by(
            case((Recomendacao.status == "aprovada", 0), else_=1),
            Recomendacao.dias_ate_ruptura.nulls_last(),
            Produto.nome,
            Recomendacao.tamanho,
        )
        .limit(LISTED)
    ).all()
    summary = {
        status: {"itens": counts.get(status, (0, 0))[0], "unidades": counts.get(status, (0, 0))[1]}
        for status in ("pendente", "aprovada", "executada")
    }
    listed = [
        {
            "recomendacao": rec,
            "produto": produto,
            "outra_loja": outra,
        }
        for rec, produto, outra in rows
    ]
    return summary, listed


def painel_loja(user: User) -> dict:
    """The dashboard of a store manager's own store: its stock figures and the current
    batch's transfers out of it (``enviar``) and into it (``receber``)."""
    ensure_stock_access(user, "gerente_loja")
    if user.loja_id is None:
        raise NotFoundError("Loja não encontrada", reason="loja_not_found")
    loja = db.session.get(Loja, user.loja_id)
    periodo = history_days(get_rules())
    lote = newest_lote()
    painel = {
        "loja": loja,
        "estoque": _stock_figures(loja.id, periodo),
        "lote": lote,
        "a_receber": count_arriving(loja.id),
    }
    if lote is not None:
        painel["enviar"], painel["enviar_lista"] = _transfers(lote.id, Recomendacao.origem_id, loja.id)
        painel["receber"], painel["receber_lista"] = _transfers(lote.id, Recomendacao.destino_id, loja.id)
    return painel
