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
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

from sqlalchemy import Integer, and_, case, cast, false, func, select, true

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


def _plus_days(day, days: int):
    """``day + days`` in SQL: PostgreSQL adds integers to dates, SQLite has ``date()``."""
    if is_postgres():
        return day + cast(days, Integer)
    return func.date(day, f"+{days} days")


def _sum_when(cond, value):
    return func.coalesce(func.sum(case((cond, value), else_=0)), 0)


def _clamp(value, high):
    """``min(max(value, 0), high)`` in portable SQL."""
    return case((value <= 0, 0), (value >= high, high), else_=value)


def _per_transfer(where: Iterable):
    """One row per executed transfer matching ``where``: its group keys, first day, units moved,
    ESI, and the sales of its cell before the window, in each window, and the units of the same
    batch's earlier transfers into the cell (``ahead``)."""
    start = func.coalesce(Recomendacao.recebida_data, Recomendacao.executada_data)
    end = {w: _plus_days(start, w) for w in WINDOWS}
    movidas = case(
        (
            Recomendacao.recebida_em.is_not(None),
            func.coalesce(Recomendacao.quantidade_recebida, Recomendacao.quantidade),
        ),
        else_=Recomendacao.quantidade,
    )
    esi = Recomendacao.venda_extra_esperada * movidas / Recomendacao.quantidade
    # Several transfers of one batch into one cell (several origins): the earlier-starting
    # ones' units sell first, so the same sales are not credited twice.
    ahead = func.coalesce(
        func.sum(movidas).over(
            partition_by=(
                Recomendacao.lote_id,
                Recomendacao.destino_id,
                Recomendacao.produto_id,
                Recomendacao.tamanho,
            ),
            order_by=(start, Recomendacao.posicao, Recomendacao.id),
            rows=(None, -1),
        ),
        0,
    )
    return (
        select(
            Recomendacao.lote_id.label("lote_id"),
            Recomendacao.origem_id.label("origem_id"),
            Recomendacao.destino_id.label("destino_id"),
            Recomendacao.produto_id.label("produto_id"),
            Recomendacao.tamanho.label("tamanho"),
            Produto.marca.label("marca"),
            Produto.categoria.label("categoria"),
            start.label("inicio"),
            movidas.label("movidas"),
            esi.label("esi"),
            Recomendacao.recebida_em.is_not(None).label("recebida"),
            Recomendacao.estoque_destino.label("estoque_destino"),
            ahead.label("ahead"),
            _sum_when(Venda.data < start, Venda.qtd).label("antes"),
            *(
                _sum_when(and_(Venda.data >= start, Venda.data < end[w]), Venda.qtd).label(f"v{w}")
                for w in WINDOWS
            ),
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
        .subquery()
    )


GROUP_KEYS = {
    "lote": ("lote_id",),
    "rota": ("origem_id", "destino_id"),
    "marca": ("marca",),
    "categoria": ("categoria",),
}


def _add(a, b):
    """Sum where ``None`` means "no value" (a sum over no transfer with a prediction)."""
    if a is None or b is None:
        return b if a is None else a
    return a + b


def _pick(f, a, b):
    return b if a is None else a if b is None else f(a, b)


@dataclass
class WindowSums:
    """One window's sums of a group: complete (``n``...) and open (``open_``...)."""

    n: int = 0
    unidades: int = 0
    esi: float | None = None  # over complete ones with a prediction
    asi: int = 0
    asi_pred: int = 0  # ASI of the complete ones with a prediction: the ratio's numerator
    n_pred: int = 0  # how many complete ones have a prediction
    open_n: int = 0
    open_unidades: int = 0
    open_esi: float | None = None
    open_asi: int = 0
    open_first: date | None = None  # earliest first day among the open ones
    open_last: date | None = None

    def __add__(self, o: WindowSums) -> WindowSums:
        return WindowSums(
            self.n + o.n,
            self.unidades + o.unidades,
            _add(self.esi, o.esi),
            self.asi + o.asi,
            self.asi_pred + o.asi_pred,
            self.n_pred + o.n_pred,
            self.open_n + o.open_n,
            self.open_unidades + o.open_unidades,
            _add(self.open_esi, o.open_esi),
            self.open_asi + o.open_asi,
            _pick(min, self.open_first, o.open_first),
            _pick(max, self.open_last, o.open_last),
        )


@dataclass
class Sums:
    """Sums of one group (or of several, added)."""

    transferencias: int = 0
    unidades: int = 0
    nao_recebidas: int = 0
    sem_previsao: int = 0
    esi: float | None = None
    windows: dict[int, WindowSums] = field(default_factory=lambda: {w: WindowSums() for w in WINDOWS})

    def __add__(self, o: Sums) -> Sums:
        return Sums(
            self.transferencias + o.transferencias,
            self.unidades + o.unidades,
            self.nao_recebidas + o.nao_recebidas,
            self.sem_previsao + o.sem_previsao,
            _add(self.esi, o.esi),
            {w: self.windows[w] + o.windows[w] for w in WINDOWS},
        )


def _float(value) -> float | None:
    return None if value is None else float(value)


def _as_date(value) -> date | None:
    return date.fromisoformat(value) if isinstance(value, str) else value


def learning_sums(
    where: Iterable, *, on: date, window: int = HORIZON_DAYS
) -> dict[tuple, tuple[int, float, int]]:
    """Per (origin, destination, category): how many transfers matching ``where`` have a complete
    ``window`` and a prediction, their ESI and their ASI. Only what the learning step reads, over
    the transfers whose window is over (an earlier-starting one of the same cell is over too, so
    ``ahead`` is unchanged)."""
    start = func.coalesce(Recomendacao.recebida_data, Recomendacao.executada_data)
    t = _per_transfer([*where, start <= on - timedelta(days=window)])
    own = t.c.estoque_destino - t.c.antes
    asi = _clamp(t.c[f"v{window}"] - (case((own > 0, own), else_=0) + t.c.ahead), t.c.movidas)
    keys = (t.c.origem_id, t.c.destino_id, t.c.categoria)
    stmt = (
        select(*keys, func.count(), func.sum(t.c.esi), func.sum(asi))
        .where(t.c.esi.is_not(None))
        .group_by(*keys)
    )
    return {(o, d, c): (int(n), float(esi), int(asi)) for o, d, c, n, esi, asi in db.session.execute(stmt)}


def measured_transfers(
    where: Iterable, *, on: date, window: int = HORIZON_DAYS
) -> list[tuple[uuid.UUID, uuid.UUID, str, int, int, int]]:
    """Each transfer matching ``where`` whose ``window`` is over: (destination, product, size,
    units of the cell that sell before its own, units moved, ASI), in a stable order. What the
    engine sets against its current rates (``engine_demand.outcome_factors``); no prediction
    needed."""
    start = func.coalesce(Recomendacao.recebida_data, Recomendacao.executada_data)
    t = _per_transfer([*where, start <= on - timedelta(days=window)])
    own = t.c.estoque_destino - t.c.antes
    before = case((own > 0, own), else_=0) + t.c.ahead
    stmt = select(
        t.c.destino_id, t.c.produto_id, t.c.tamanho, before, t.c.movidas,
        _clamp(t.c[f"v{window}"] - before, t.c.movidas),
    ).order_by(t.c.destino_id, t.c.produto_id, t.c.tamanho, t.c.inicio, t.c.lote_id)  # fmt: skip
    return [(d, p, s, int(b), int(m), int(a)) for d, p, s, b, m, a in db.session.execute(stmt)]


def aggregate(where: Iterable, agrupar: str, *, on: date) -> dict[tuple, Sums]:
    """The executed transfers matching ``where``, summed per group of ``agrupar``, in SQL."""
    t = _per_transfer(where)
    own = t.c.estoque_destino - t.c.antes
    before = case((own > 0, own), else_=0) + t.c.ahead
    predicted = t.c.esi.is_not(None)
    columns = [
        func.count(),
        _sum_when(true(), t.c.movidas),
        _sum_when(~t.c.recebida, 1),
        _sum_when(~predicted, 1),
        func.sum(t.c.esi),
    ]
    for w in WINDOWS:
        asi = _clamp(t.c[f"v{w}"] - before, t.c.movidas)
        done = t.c.inicio <= on - timedelta(days=w)  # every day of the window is before ``on``
        columns += [
            _sum_when(done, 1),
            _sum_when(done, t.c.movidas),
            func.sum(case((done & predicted, t.c.esi))),
            _sum_when(done, asi),
            _sum_when(done & predicted, asi),
            _sum_when(done & predicted, 1),
            _sum_when(~done, 1),
            _sum_when(~done, t.c.movidas),
            func.sum(case((~done & predicted, t.c.esi))),
            _sum_when(~done, asi),
            func.min(case((~done, t.c.inicio))),
            func.max(case((~done, t.c.inicio))),
        ]
    keys = [t.c[k] for k in GROUP_KEYS[agrupar]]
    out = {}
    for row in db.session.execute(select(*keys, *columns).group_by(*keys)):
        key, values = tuple(row[: len(keys)]), row[len(keys) :]
        n, unidades, nao, sem, esi = values[:5]
        raw = Sums(int(n), int(unidades), int(nao), int(sem), _float(esi))
        for i, w in enumerate(WINDOWS):
            d = values[5 + 12 * i : 5 + 12 * (i + 1)]
            raw.windows[w] = WindowSums(
                int(d[0]),
                int(d[1]),
                _float(d[2]),
                int(d[3]),
                int(d[4]),
                int(d[5]),
                int(d[6]),
                int(d[7]),
                _float(d[8]),
                int(d[9]),
                _as_date(d[10]),
                _as_date(d[11]),
            )
        out[key] = raw
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


def _janela(raw: WindowSums, w: int, on: date) -> Janela:
    return Janela(
        dias=w,
        parcial=raw.open_n > 0,
        transferencias=raw.n,
        unidades=raw.unidades,
        esi=_round(raw.esi),
        asi=raw.asi,
        pct_vendido=_ratio(raw.asi, raw.unidades),
        razao=_ratio(raw.asi_pred, raw.esi or 0.0),
        parciais=Parciais(
            transferencias=raw.open_n,
            unidades=raw.open_unidades,
            esi=_round(raw.open_esi),
            asi=raw.open_asi,
            dias_decorridos_min=None if raw.open_last is None else max((on - raw.open_last).days, 0),
            dias_decorridos_max=None if raw.open_first is None else max((on - raw.open_first).days, 0),
        ),
    )


def grupo(chave: str, raw: Sums, on: date, **ids) -> ResultadoGrupo:
    return ResultadoGrupo(
        chave=chave,
        lote_id=ids.get("lote_id"),
        origem_id=ids.get("origem_id"),
        destino_id=ids.get("destino_id"),
        transferencias=raw.transferencias,
        unidades_movidas=raw.unidades,
        nao_recebidas=raw.nao_recebidas,
        sem_previsao=raw.sem_previsao,
        esi=_round(raw.esi),
        janela_14=_janela(raw.windows[14], 14, on),
        janela_28=_janela(raw.windows[28], 28, on),
    )


def _grupos(agrupar: str, sums: dict[tuple, Sums], on: date, limite: int) -> list[ResultadoGrupo]:
    """The first ``limite`` groups in their order; only those are built."""
    if agrupar == "lote":
        lotes = {
            lid: (semana, inicio)
            for lid, semana, inicio in db.session.execute(
                select(Lote.id, Lote.semana, Lote.inicio).where(Lote.id.in_({k[0] for k in sums}))
            )
        }
        # Newest week first, as the batch list.
        keys = sorted(sums, key=lambda k: lotes[k[0]][1], reverse=True)[:limite]
        return [grupo(lotes[lid][0], sums[(lid,)], on, lote_id=lid) for (lid,) in keys]
    if agrupar == "rota":
        ids = {i for key in sums for i in key}
        nomes = dict(db.session.execute(select(Loja.id, Loja.nome).where(Loja.id.in_(ids))).all())
        chave = {(o, d): f"{nomes.get(o, '?')} → {nomes.get(d, '?')}" for o, d in sums}
    else:
        chave = {k: k[0] for k in sums}
    # Most units moved first, then by name.
    keys = sorted(sums, key=lambda k: (-sums[k].unidades, chave[k]))[:limite]
    if agrupar == "rota":
        return [grupo(chave[k], sums[k], on, origem_id=k[0], destino_id=k[1]) for k in keys]
    return [grupo(chave[k], sums[k], on) for k in keys]


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
    sums = aggregate(where, agrupar, on=ref)
    return Resultado(
        agrupar=agrupar,
        referencia=ref,
        horizonte_dias=HORIZON_DAYS,
        metodo=METHOD,
        total=grupo("total", sum(sums.values(), Sums()), ref),
        grupos=_grupos(agrupar, sums, ref, limite),
    )
