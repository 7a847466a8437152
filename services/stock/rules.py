"""The network's single row of transfer rules and cadence."""

from __future__ import annotations

from extensions import db
from models.stock import RegrasRemanejamento

RULES_ID = 1


def get_rules(*, for_update: bool = False) -> RegrasRemanejamento:
    """The rules row, created with the documented defaults on first use."""
    rules = db.session.get(RegrasRemanejamento, RULES_ID, with_for_update=for_update)
    if rules is None:
        rules = RegrasRemanejamento(
            id=RULES_ID,
            priorizar_cd=True,
            qtd_minima=3,
            qtd_maxima=15,
            periodo="30",
            peso_distancia=40,
            peso_giro=35,
            peso_estoque=25,
            bloqueio_campanha=True,
            lojas_bloqueadas=[],
            marcas_bloqueadas=[],
            cadence="semanal",
        )
        db.session.add(rules)
        db.session.flush()
    return rules


def history_days(rules: RegrasRemanejamento) -> int:
    return int(rules.periodo)
