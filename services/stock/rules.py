"""The network's single row of transfer rules and cadence: read, replace, and when the next batch is due."""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Any

from sqlalchemy import select

from extensions import db
from models.auth import User
from models.remanejamento import Lote
from models.stock import Loja, RegrasRemanejamento
from services import unique
from services.clock import today
from services.errors import FieldError, ValidationFailed
from services.stock.decisions import newest_lote
from services.stock.engine_contract import EngineRules

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


def engine_rules(rules: RegrasRemanejamento) -> EngineRules:
    return EngineRules(
        qtd_minima=rules.qtd_minima,
        qtd_maxima=rules.qtd_maxima,
        priorizar_cd=rules.priorizar_cd,
        peso_distancia=rules.peso_distancia,
        peso_giro=rules.peso_giro,
        peso_estoque=rules.peso_estoque,
        bloqueio_campanha=rules.bloqueio_campanha,
    )


# --- the rules through the API -----------------------------------------------------------------


def rules_out(rules: RegrasRemanejamento | None = None) -> dict:
    rules = rules or get_rules()
    return {
        "priorizarCd": rules.priorizar_cd,
        "qtdMinima": rules.qtd_minima,
        "periodo": rules.periodo,
        "pesoDistancia": rules.peso_distancia,
        "pesoGiro": rules.peso_giro,
        "pesoEstoque": rules.peso_estoque,
        "bloqueioCampanha": rules.bloqueio_campanha,
        "qtdMaxima": rules.qtd_maxima,
        "lojasBloqueadas": list(rules.lojas_bloqueadas or []),
        "marcasBloqueadas": list(rules.marcas_bloqueadas or []),
    }


def update_rules(body: dict[str, Any], user: User) -> dict:
    """Replace the rules (fields left out take their defaults); checks that need the database."""
    errors: list[FieldError] = []
    if body["qtdMinima"] > body["qtdMaxima"]:
        errors.append(FieldError(("body", "qtdMinima"), "qtdMinima deve ser menor ou igual a qtdMaxima"))
    if body["pesoDistancia"] + body["pesoGiro"] + body["pesoEstoque"] == 0:
        errors.append(FieldError(("body", "pesoDistancia"), "Pelo menos um peso deve ser maior que zero"))
    lojas: list[str] = []
    parsed: dict[int, uuid.UUID] = {}
    for i, raw in enumerate(body["lojasBloqueadas"]):
        try:
            parsed[i] = uuid.UUID(str(raw))
        except ValueError:
            errors.append(
                FieldError(("body", "lojasBloqueadas", i), "Input should be a valid UUID", "uuid_parsing")
            )
    existing = (
        set(db.session.scalars(select(Loja.id).where(Loja.id.in_(set(parsed.values()))))) if parsed else set()
    )
    for i, loja_id in parsed.items():
        if loja_id not in existing:
            errors.append(FieldError(("body", "lojasBloqueadas", i), f"Loja {loja_id} não existe"))
        elif str(loja_id) not in lojas:
            lojas.append(str(loja_id))
    if errors:
        raise ValidationFailed(errors)
    marcas: list[str] = []
    for marca in body["marcasBloqueadas"]:
        if marca.strip() and marca.strip() not in marcas:
            marcas.append(marca.strip())
    rules = get_rules(for_update=True)
    rules.priorizar_cd = body["priorizarCd"]
    rules.qtd_minima = body["qtdMinima"]
    rules.qtd_maxima = body["qtdMaxima"]
    rules.periodo = body["periodo"]
    rules.peso_distancia = body["pesoDistancia"]
    rules.peso_giro = body["pesoGiro"]
    rules.peso_estoque = body["pesoEstoque"]
    rules.bloqueio_campanha = body["bloqueioCampanha"]
    rules.lojas_bloqueadas = lojas
    rules.marcas_bloqueadas = marcas
    rules.updated_by_id = user.id
    db.session.flush()
    return rules_out(rules)


# --- cadence -----------------------------------------------------------------------------------


def next_due(cadence: str, last: Lote | None, ref: date) -> date:
    """First day on which a batch is due under ``cadence``, given the newest batch."""
    if last is None:
        return ref
    if cadence == "diaria":
        return last.data + timedelta(days=1)
    if cadence == "semanal":
        return last.inicio + timedelta(days=7)
    if cadence == "quinzenal":
        return last.inicio + timedelta(days=14)
    # mensal: the first day of the month after the last generation
    first = last.data.replace(day=1)
    return (first + timedelta(days=32)).replace(day=1)


def cadence_out(ref: date | None = None) -> dict:
    rules = get_rules()
    ref = ref or today()
    return {"cadence": rules.cadence, "proximoLote": max(ref, next_due(rules.cadence, newest_lote(), ref))}


def set_cadence(cadence: str, user: User) -> dict:
    rules = get_rules(for_update=True)
    rules.cadence = cadence
    rules.updated_by_id = user.id
    db.session.flush()
    return cadence_out()
