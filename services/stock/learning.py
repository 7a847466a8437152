"""Learning from past decisions: refusals and vetoes lower the score of similar recommendations.

For each route (origin → destination), brand and category, the recommendations
decided in the last ``WINDOW_DAYS`` days are counted as accepted (``aprovada`` or
``executada``, not vetoed) or rejected (``recusada`` or vetoed). The score
multiplier of the group is

    fator = 1 − MAX_PENALTY × rejeitadas / (decididas + PRIOR)

so one refusal alone costs ~17 %, a long record of refusals approaches
``MAX_PENALTY`` (50 %), and acceptances dilute the penalty. ``PRIOR`` keeps a
single decision from swinging the score. A refusal whose reason is ``estoque_errado``
(the stock figures were wrong) says nothing about the route, brand or category
and is left out of every count; the other reasons (``loja_recusa``, ``custo``,
``outro``) and refusals without a reason count as rejected.

Routes and categories also learn from outcomes (``services.stock.outcome``): over the executed
transfers of the same window whose 14-day window is complete and that carry the engine's
prediction, the sold-beyond-own-stock units (ASI) against the predicted ones (ESI) give

    fator_resultado = clip((ASI + OUTCOME_PRIOR) / (ESI + OUTCOME_PRIOR), 0.5, 1.5)

(shrunk toward 1: ``OUTCOME_PRIOR`` expected units, a few transfers' worth, before the
evidence speaks). The group's factor is ``min(1, fator_decisoes × fator_resultado)``: a route
or category whose transfers sell less than predicted sinks; one that sells more wins back what
refusals took, never above 1 (the factors stay penalties). The engine multiplies the three
factors of a recommendation into its score; ``/metricas/aprendizado`` shows the same numbers.

The same outcomes correct the demand estimate: per destination store and category, the engine
scales the store's rates by what the transfers it received sold (ASI) against what those rates
expect of them today (both ways, 0.5 to 1.5), shrunk by a prior fitted over every store and
category, never weaker than ``OUTCOME_PRIOR`` (``engine_demand.outcome_factors``). Against the
prediction of the day they were sent, the units' sales would count twice: the rates have read
them already. A store whose moved units did not sell beyond what the rates now explain is rated
lower, for every size, not only the moved ones.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
from sqlalchemy import case, false, func, or_, select, true

from extensions import db
from models.stock import Loja, Produto
from models.stock_batches import Recomendacao
from services.stock import outcome
from services.stock.engine_contract import Outcomes
from services.stock.engine_demand import OUTCOME_MAX, OUTCOME_MIN, OUTCOME_PRIOR

WINDOW_DAYS = 182
PRIOR = 2.0
MAX_PENALTY = 0.5
# A refusal for this reason blames the data, not the suggestion: it does not count.
NEUTRAL_REFUSAL = "estoque_errado"
OUTCOME_WINDOW = 14  # the engine's horizon: ASI over the days ESI predicts
METHOD = (
    f"fatorDecisoes = 1 − {MAX_PENALTY} × rejeitadas / (decididas + {PRIOR:g}), over the decisions of the last "
    f"{WINDOW_DAYS} days; rejeitadas = recusadas + vetadas, aceitas = aprovadas + executadas. "
    "Refusals for `estoque_errado` do not count. "
    f"Routes and categories: fatorResultado = clip((ASI + {OUTCOME_PRIOR:g}) / (ESI + {OUTCOME_PRIOR:g}), "
    f"{OUTCOME_MIN}, {OUTCOME_MAX}) over the executed transfers of the same window with a complete "
    f"{OUTCOME_WINDOW}-day window and a prediction (see /metricas/resultado); brands: 1. "
    "fator = min(1, fatorDecisoes × fatorResultado). "
    "The engine multiplies the route, brand and category factors into the score, and the rates of "
    "each destination store by the ASI of the transfers it received in each category over what its "
    "current rates expect of their units, shrunk like fatorResultado by a prior fitted over every "
    f"store and category (at least {OUTCOME_PRIOR:g})."
)


def factor(decididas: int, rejeitadas: int) -> float:
    return 1.0 - MAX_PENALTY * rejeitadas / (decididas + PRIOR)


def outcome_factor(esi: float, asi: float) -> float:
    """ASI/ESI shrunk toward 1 by ``OUTCOME_PRIOR`` expected units, clipped."""
    ratio = (asi + OUTCOME_PRIOR) / (esi + OUTCOME_PRIOR)
    return min(max(ratio, OUTCOME_MIN), OUTCOME_MAX)


@dataclass
class Group:
    key: tuple
    aceitas: int
    rejeitadas: int
    # Outcomes of its executed transfers (complete 14-day windows with a prediction).
    medidas: int = 0
    esi: float = 0.0
    asi: int = 0

    @property
    def decididas(self) -> int:
        return self.aceitas + self.rejeitadas

    @property
    def fator_decisoes(self) -> float:
        return factor(self.decididas, self.rejeitadas)

    @property
    def fator_resultado(self) -> float:
        return outcome_factor(self.esi, self.asi) if self.medidas else 1.0

    @property
    def fator(self) -> float:
        return min(1.0, self.fator_decisoes * self.fator_resultado)


@dataclass
class Stats:
    rotas: list[Group]  # key (origem_id, destino_id)
    marcas: list[Group]  # key (marca,)
    categorias: list[Group]  # key (categoria,)


def _counts(group_by: list, since: date) -> list[Group]:
    rejected = or_(
        Recomendacao.vetado == true(),
        (Recomendacao.status == "recusada")
        & or_(Recomendacao.motivo_recusa.is_(None), Recomendacao.motivo_recusa != NEUTRAL_REFUSAL),
    )
    accepted = (Recomendacao.vetado == false()) & Recomendacao.status.in_(("aprovada", "executada"))
    stmt = (
        select(
            *group_by,
            func.sum(case((accepted, 1), else_=0)),
            func.sum(case((rejected, 1), else_=0)),
        )
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .where(Recomendacao.data >= since, or_(accepted, rejected))
        .group_by(*group_by)
    )
    out = []
    for row in db.session.execute(stmt):
        *key, aceitas, rejeitadas = row
        out.append(Group(tuple(key), int(aceitas or 0), int(rejeitadas or 0)))
    return out


def _add_outcomes(groups: list[Group], sums: dict[tuple, list]) -> list[Group]:
    by_key = {g.key: g for g in groups}
    for key, (medidas, esi, asi) in sums.items():
        g = by_key.get(key)
        if g is None:  # an executed transfer is an acceptance: only a rare race lands here
            g = by_key[key] = Group(key, 0, 0)
        g.medidas, g.esi, g.asi = medidas, esi, asi
    return list(by_key.values())


def decision_stats(on: date) -> Stats:
    """Accepted and rejected counts per route, brand and category before ``on``, with the
    outcomes of the routes' and categories' executed transfers."""
    since = on - timedelta(days=WINDOW_DAYS)
    per_route: dict[tuple, list] = {}
    per_category: dict[tuple, list] = {}
    measured = outcome.learning_sums([Recomendacao.data >= since], on=on, window=OUTCOME_WINDOW)
    for (origem, destino, categoria), values in measured.items():
        for sums in (
            per_route.setdefault((origem, destino), [0, 0.0, 0]),
            per_category.setdefault((categoria,), [0, 0.0, 0]),
        ):
            for i, value in enumerate(values):
                sums[i] += value
    return Stats(
        rotas=_add_outcomes(_counts([Recomendacao.origem_id, Recomendacao.destino_id], since), per_route),
        marcas=_counts([Produto.marca], since),
        categorias=_add_outcomes(_counts([Produto.categoria], since), per_category),
    )


def engine_factors(
    on: date,
    node_index: dict[uuid.UUID, int],
    item_index: dict[tuple[uuid.UUID, str], int],
    brands: list[str],
    categories: list[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Outcomes | None]:
    """``route_factor`` (N, N), ``brand_factor`` (B,), ``category_factor`` (C,) and the
    ``outcomes`` (None without any) for the engine."""
    stats = decision_stats(on)
    n = len(node_index)
    route = np.ones((n, n), dtype=np.float32)
    for g in stats.rotas:
        o, d = node_index.get(g.key[0]), node_index.get(g.key[1])
        if o is not None and d is not None:
            route[o, d] = g.fator
    brand_pos = {b: i for i, b in enumerate(brands)}
    brand = np.ones(len(brands), dtype=np.float32)
    for g in stats.marcas:
        if g.key[0] in brand_pos:
            brand[brand_pos[g.key[0]]] = g.fator
    cat_pos = {c: i for i, c in enumerate(categories)}
    category = np.ones(len(categories), dtype=np.float32)
    for g in stats.categorias:
        if g.key[0] in cat_pos:
            category[cat_pos[g.key[0]]] = g.fator
    return route, brand, category, _outcomes(on, node_index, item_index)


def _outcomes(
    on: date, node_index: dict[uuid.UUID, int], item_index: dict[tuple[uuid.UUID, str], int]
) -> Outcomes | None:
    """The executed transfers of the window whose ``OUTCOME_WINDOW`` days are over, as the
    engine reads them (``EngineInput.outcomes``); None without any."""
    rows = [
        (node_index[d], item_index[(p, t)], before, units, sold)
        for d, p, t, before, units, sold in outcome.measured_transfers(
            [Recomendacao.data >= on - timedelta(days=WINDOW_DAYS)], on=on, window=OUTCOME_WINDOW
        )
        if d in node_index and (p, t) in item_index
    ]
    if not rows:
        return None
    dest, item, before, units, sold = (np.array(column) for column in zip(*rows, strict=True))
    return Outcomes(
        dest.astype(np.int32), item.astype(np.int32), before.astype(np.float64),
        units.astype(np.float64), sold.astype(np.float64), OUTCOME_WINDOW,
    )  # fmt: skip


@dataclass(frozen=True)
class FatorAprendizado:
    """One route, brand or category: its decisions and the score factor they give."""

    chave: str
    origem_id: uuid.UUID | None  # routes only
    destino_id: uuid.UUID | None
    decididas: int
    aceitas: int
    rejeitadas: int
    taxa_aceitacao: float
    fator_decisoes: float
    transferencias_medidas: int
    esi: float | None
    asi: int | None
    razao_resultado: float | None
    fator_resultado: float
    fator: float
    ajuste_percentual: float


@dataclass(frozen=True)
class Aprendizado:
    """The learning metric: every group with decisions, strongest penalty first."""

    janela_dias: int
    metodo: str
    decididas: int
    taxa_aceitacao: float | None
    rotas: list[FatorAprendizado]
    marcas: list[FatorAprendizado]
    categorias: list[FatorAprendizado]


def _entry(chave: str, g: Group, origem=None, destino=None) -> FatorAprendizado:
    return FatorAprendizado(
        chave=chave,
        origem_id=origem,
        destino_id=destino,
        decididas=g.decididas,
        aceitas=g.aceitas,
        rejeitadas=g.rejeitadas,
        taxa_aceitacao=round(g.aceitas / g.decididas, 4) if g.decididas else 0.0,
        fator_decisoes=round(g.fator_decisoes, 4),
        transferencias_medidas=g.medidas,
        esi=round(g.esi, 2) if g.medidas else None,
        asi=g.asi if g.medidas else None,
        razao_resultado=round(g.asi / g.esi, 4) if g.medidas and g.esi > 0 else None,
        fator_resultado=round(g.fator_resultado, 4),
        fator=round(g.fator, 4),
        ajuste_percentual=round((1 - g.fator) * 100, 1),
    )


def penalty_order(entry: FatorAprendizado) -> tuple:
    """Strongest penalty first, then the most decided, then by name."""
    return (-entry.ajuste_percentual, -entry.decididas, entry.chave)


def aprendizado(on: date) -> Aprendizado:
    """The learning metric: every group with decisions, strongest penalty first."""
    stats = decision_stats(on)
    nomes = dict(db.session.execute(select(Loja.id, Loja.nome)).all())
    rotas = sorted(
        (
            _entry(f"{nomes.get(g.key[0], '?')} → {nomes.get(g.key[1], '?')}", g, g.key[0], g.key[1])
            for g in stats.rotas
        ),
        key=penalty_order,
    )
    marcas = sorted((_entry(g.key[0], g) for g in stats.marcas), key=penalty_order)
    categorias = sorted((_entry(g.key[0], g) for g in stats.categorias), key=penalty_order)
    aceitas = sum(g.aceitas for g in stats.marcas)
    decididas = sum(g.decididas for g in stats.marcas)
    return Aprendizado(
        janela_dias=WINDOW_DAYS,
        metodo=METHOD,
        decididas=decididas,
        taxa_aceitacao=round(aceitas / decididas, 4) if decididas else None,
        rotas=rotas,
        marcas=marcas,
        categorias=categorias,
    )
