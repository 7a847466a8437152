"""The network's single row of transfer rules and cadence."""

from __future__ import annotations

from extensions import db
from models.stock import RegrasRemanejamento
from services import unique

RULES_ID = 1


def defaults() -> dict:
    """The documented rules, in force until the rules are first saved (fresh lists each call)."""
    return {
        "priorizar_cd": True,
        "qtd_minima": 3,
        "qtd_maxima": 15,
        "periodo": "30",
        "peso_distancia": 40,
        "peso_giro": 35,
        "peso_estoque": 25,
        "bloqueio_campanha": True,
        "lojas_bloqueadas": [],
        "marcas_bloqueadas": [],
        "cadence": "semanal",
    }


def get_rules(*, for_update: bool = False) -> RegrasRemanejamento:
    """The rules row; the defaults (unsaved) while it does not exist yet.

    Readers never write. A writer (``for_update``) creates the row when missing with
    ``INSERT ... ON CONFLICT DO NOTHING`` and then locks it, so two first writers at
    once lock the same row and queue instead of the second failing on the primary key.
    """
    if not for_update:
        return db.session.get(RegrasRemanejamento, RULES_ID) or RegrasRemanejamento(id=RULES_ID, **defaults())
    db.session.execute(
        unique.insert(RegrasRemanejamento)
        .values(id=RULES_ID, **defaults())
        .on_conflict_do_nothing(index_elements=["id"])
    )
    return db.session.get(RegrasRemanejamento, RULES_ID, with_for_update=True, populate_existing=True)


def history_days(rules: RegrasRemanejamento) -> int:
    return int(rules.periodo)
