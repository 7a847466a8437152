"""Outcome of executed transfers: the engine's expected sales increase (ESI) against the actual
one (ASI), per batch, route, brand and category (``docs/engine.md`` §9).

For each executed transfer (``status = executada``, with its execution day):

- **units moved** = ``quantidade_recebida`` once received, ``quantidade`` until then;
- **ESI** = ``venda_extra_esperada`` (the engine's expected extra units sold at the destination
  over its horizon, 14 days) × units moved / ``quantidade``; none for a transfer generated before
  the prediction was stored;
- the **window** of W days (14 and 28) starts on the receipt's business day (the execution's
  while no receipt is recorded) and is complete once every one of its days is before today;
- **ASI_W** = ``clamp(S_W − own − ahead, 0, moved)``: S_W the units of the cell sold at the
  destination in the window; ``own`` the destination's own stock at generation
  (``estoque_destino``) less what it sold between generation and the window's start, floored
  at 0; ``ahead`` the units moved into the same cell by transfers of the same batch that
  started earlier. The destination's own stock sells first: what sells beyond it is "vendido do
  movimentado". It is the realised counterpart of the engine's gain,
  ``E[min(D, s + q)] − E[min(D, s)] = E[clamp(D − s, 0, q)]``.

A window still open is reported apart (``parciais``, with its days elapsed), never added to
the complete ones; ratios use complete windows of transfers with a prediction only.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

from sqlalchemy import Integer, and_, case, cast, false, func, select

from extensions import db
from models.auth import User
from models.stock import Loja, Produto, Venda
from models.stock_batches import Lote, Recomendacao
from services.clock import today
from services.stock.access import ensure_stock_access
from services.stock.recommendations import get_lote, visible_condition
from services.stock.storage import is_postgres

WINDOWS = (14, 28)
HORIZON_DAYS = 14  # the engine's horizon: what ESI predicts
AGRUPAMENTOS = ("lote", "rota", "marca", "categoria")
METHOD = (
    "ESI = venda_extra_esperada × unidades movidas / quantidade (previsão do motor para 14 dias). "
    "Janela de 14 e 28 dias a partir do dia do recebimento (da execução enquanto não recebida), "
    "completa quando todos os seus dias são anteriores a hoje. ASI = clamp(vendas na janela − estoque "
    "próprio do destino restante no início da janela − unidades de transferências anteriores do mesmo "
    "lote para a mesma célula, 0, unidades movidas): o estoque próprio vende primeiro. "
    "razao = ASI / ESI e pctVendido = ASI / unidades, só sobre janelas completas; "
    "janelas abertas aparecem em `parciais`."
)


@dataclass(frozen=True)
class Transferencia:
    """One executed transfer and how its moved units sold."""

    id: uuid.UUID
    lote_id: uuid.UUID
    origem_id: uuid.UUID
    destino_id: uuid.UUID
    marca: str
    categoria: str
    data: date  # generation day of the recommendation
    inicio: date  # first day of its windows
    recebida: bool
    movidas: int
    esi: float | None
    asi: dict[int, int]  # window days -> units of the moved ones sold (so far, when open)
    dias: dict[int, int]  # window days -> days of the window elapsed (= W when complete)

    def completa(self, window: int) -> bool:
        return self.dias[window] >= window


def _plus_days(day, days: int):
    """``day + days`` in SQL: PostgreSQL adds integers to dates, SQLite has ``date()``."""
    if is_postgres():
        return day + cast(days, Integer)
    return func.date(day, f"+{days} days")


def _sum_when(cond):
    return func.coalesce(func.sum(case((cond, Venda.qtd), else_=0)), 0)


def transferencias(where: Iterable = (), *, on: date | None = None) -> list[Transferencia]:
    """Every executed transfer matching ``where`` (conditions on ``Recomendacao``), with its
    ESI and ASI; sales are summed in SQL, one row per transfer."""
    ref = on or today()
    start = func.coalesce(Recomendacao.recebida_data, Recomendacao.executada_data)
    end = {w: _plus_days(start, w) for w in WINDOWS}
    stmt = (
        select(
            Recomendacao.id,
            Recomendacao.lote_id,
            Recomendacao.origem_id,
            Recomendacao.destino_id,
            Recomendacao.produto_id,
            Recomendacao.tamanho,
            Recomendacao.posicao,
            Recomendacao.data,
            Recomendacao.executada_data,
            Recomendacao.recebida_data,
            Recomendacao.recebida_em,
            Recomendacao.quantidade,
            Recomendacao.quantidade_recebida,
            Recomendacao.venda_extra_esperada,
            Recomendacao.estoque_destino,
            Produto.marca,
            Produto.categoria,
            _sum_when(Venda.data < start),
            *(_sum_when(and_(Venda.data >= start, Venda.data < end[w])) for w in WINDOWS),
        )
        .select_from(Recomendacao)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .outerjoin(
            Venda,
            and_(
                Venda.loja_id == Recomendacao.destino_id,
                Venda.produto_id == Recomendacao.produto_id,
                Venda.tamanho == Recomendacao.tamanho,
                Venda.data >= Recomendacao.data,
                Venda.data < end[max(WINDOWS)],
            ),
        )
        .where(
            Recomendacao.status == "executada",
            Recomendacao.executada_data.is_not(None),
            Recomendacao.vetado == false(),
            *where,
        )
        .group_by(Recomendacao.id, Produto.id)
    )
    rows = db.session.execute(stmt).all()
    # Several transfers of one batch into one cell (several origins): the earlier-starting
    # ones' units sell first, so the same sales are not credited twice.
    rows.sort(key=lambda r: (r.recebida_data or r.executada_data, r.posicao, r.id))
    ahead: dict[tuple, int] = defaultdict(int)
    out = []
    for r in rows:
        antes, vendas = r[-1 - len(WINDOWS)], r[-len(WINDOWS) :]
        recebida = r.recebida_em is not None
        movidas = int(
            r.quantidade_recebida if recebida and r.quantidade_recebida is not None else r.quantidade
        )
        inicio = r.recebida_data or r.executada_data
        own = max(int(r.estoque_destino) - int(antes), 0)
        cell = (r.lote_id, r.destino_id, r.produto_id, r.tamanho)
        before = own + ahead[cell]
        ahead[cell] += movidas
        esi = None
        if r.venda_extra_esperada is not None and r.quantidade:
            esi = float(r.venda_extra_esperada) * movidas / r.quantidade
        elapsed = max((ref - inicio).days, 0)
        out.append(
            Transferencia(
                id=r.id,
                lote_id=r.lote_id,
                origem_id=r.origem_id,
                destino_id=r.destino_id,
                marca=r.marca,
                categoria=r.categoria,
                data=r.data,
                inicio=inicio,
                recebida=recebida,
                movidas=movidas,
                esi=esi,
                asi={w: min(max(int(v) - before, 0), movidas) for w, v in zip(WINDOWS, vendas, strict=True)},
                dias={w: min(elapsed, w) for w in WINDOWS},
            )
        )
    return out


# --- aggregation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Parciais:
    """The transfers whose window is still open: what sold so far."""

    transferencias: int
    unidades: int
    esi: float | None
    asi: int
    dias_decorridos_min: int | None
    dias_decorridos_max: int | None


@dataclass(frozen=True)
class Janela:
    """One window (14 or 28 days) of a group: complete windows, and the open ones apart."""

    dias: int
    parcial: bool  # some transfer's window is still open
    transferencias: int  # complete windows
    unidades: int
    esi: float | None
    asi: int
    pct_vendido: float | None
    razao: float | None
    parciais: Parciais


@dataclass(frozen=True)
class ResultadoGrupo:
    """A batch, route, brand or category (or the total): units moved, ESI and ASI."""

    chave: str
    lote_id: uuid.UUID | None
    origem_id: uuid.UUID | None
    destino_id: uuid.UUID | None
    transferencias: int
    unidades_movidas: int
    nao_recebidas: int
    sem_previsao: int
    esi: float | None
    janela_14: Janela
    janela_28: Janela


@dataclass(frozen=True)
class Resultado:
    agrupar: str
    referencia: date
    horizonte_dias: int
    metodo: str
    total: ResultadoGrupo
    grupos: list[ResultadoGrupo]


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 4) if den > 0 else None


def _janela(items: list[Transferencia], w: int) -> Janela:
    done = [t for t in items if t.completa(w)]
    open_ = [t for t in items if not t.completa(w)]
    predicted = [t for t in done if t.esi is not None]
    esi = sum(t.esi for t in predicted)
    unidades = sum(t.movidas for t in done)
    asi = sum(t.asi[w] for t in done)
    open_predicted = [t.esi for t in open_ if t.esi is not None]
    return Janela(
        dias=w,
        parcial=bool(open_),
        transferencias=len(done),
        unidades=unidades,
        esi=_round(esi) if predicted else None,
        asi=asi,
        pct_vendido=_ratio(asi, unidades),
        razao=_ratio(sum(t.asi[w] for t in predicted), esi),
        parciais=Parciais(
            transferencias=len(open_),
            unidades=sum(t.movidas for t in open_),
            esi=_round(sum(open_predicted)) if open_predicted else None,
            asi=sum(t.asi[w] for t in open_),
            dias_decorridos_min=min((t.dias[w] for t in open_), default=None),
            dias_decorridos_max=max((t.dias[w] for t in open_), default=None),
        ),
    )


def grupo(chave: str, items: list[Transferencia], **ids) -> ResultadoGrupo:
    predicted = [t.esi for t in items if t.esi is not None]
    return ResultadoGrupo(
        chave=chave,
        lote_id=ids.get("lote_id"),
        origem_id=ids.get("origem_id"),
        destino_id=ids.get("destino_id"),
        transferencias=len(items),
        unidades_movidas=sum(t.movidas for t in items),
        nao_recebidas=sum(1 for t in items if not t.recebida),
        sem_previsao=len(items) - len(predicted),
        esi=_round(sum(predicted)) if predicted else None,
        janela_14=_janela(items, 14),
        janela_28=_janela(items, 28),
    )


def _by(
    items: list[Transferencia], key: Callable[[Transferencia], tuple]
) -> dict[tuple, list[Transferencia]]:
    groups: dict[tuple, list[Transferencia]] = defaultdict(list)
    for t in items:
        groups[key(t)].append(t)
    return groups


def _grupos(agrupar: str, items: list[Transferencia]) -> list[ResultadoGrupo]:
    if agrupar == "lote":
        lotes = {
            lid: (semana, inicio)
            for lid, semana, inicio in db.session.execute(
                select(Lote.id, Lote.semana, Lote.inicio).where(Lote.id.in_({t.lote_id for t in items}))
            )
        }
        groups = _by(items, lambda t: (t.lote_id,))
        out = [grupo(lotes[lid][0], ts, lote_id=lid) for (lid,), ts in groups.items()]
        # Newest week first, as the batch list.
        return sorted(out, key=lambda g: lotes[g.lote_id][1], reverse=True)
    if agrupar == "rota":
        nomes = dict(
            db.session.execute(
                select(Loja.id, Loja.nome).where(
                    Loja.id.in_({t.origem_id for t in items} | {t.destino_id for t in items})
                )
            ).all()
        )
        groups = _by(items, lambda t: (t.origem_id, t.destino_id))
        out = [
            grupo(f"{nomes.get(o, '?')} → {nomes.get(d, '?')}", ts, origem_id=o, destino_id=d)
            for (o, d), ts in groups.items()
        ]
    else:
        attr = "marca" if agrupar == "marca" else "categoria"
        groups = _by(items, lambda t: (getattr(t, attr),))
        out = [grupo(k, ts) for (k,), ts in groups.items()]
    # Most units moved first, then by name.
    return sorted(out, key=lambda g: (-g.unidades_movidas, g.chave))


def resultado(
    user: User | None, agrupar: str = "lote", lote_id: uuid.UUID | None = None, limite: int = 100
) -> Resultado:
    """ESI against ASI of the executed transfers the user may see, grouped by ``agrupar``.

    ``user=None`` is the operator's command line (every transfer). A ``gerente_loja`` sees the
    transfers into or out of its store, as in the recommendation lists. An unknown ``lote_id``
    is 404. ``total`` covers every group, ``grupos`` the first ``limite``.
    """
    where = []
    if user is not None:
        ensure_stock_access(user)
        cond = visible_condition(user)
        if cond is not None:
            where.append(cond)
    if lote_id is not None:
        get_lote(lote_id)
        where.append(Recomendacao.lote_id == lote_id)
    ref = today()
    items = transferencias(where, on=ref)
    return Resultado(
        agrupar=agrupar,
        referencia=ref,
        horizonte_dias=HORIZON_DAYS,
        metodo=METHOD,
        total=grupo("total", items),
        grupos=_grupos(agrupar, items)[:limite],
    )
