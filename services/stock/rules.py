"""The network's single row of transfer rules and cadence: every field's default and range, read and write.

``RULE_FIELDS`` is the one statement of each rule's default, bounds and allowed
values: the API schema (``schemas/stock/batches.py``), the rules page and
the defaults of a network that never saved its rules all read it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from sqlalchemy import select

from extensions import db
from models.auth import User
from models.stock import Loja, RegrasRemanejamento
from models.stock_batches import Lote
from services import unique
from services.clock import today
from services.errors import FieldError, ValidationFailed
from services.stock import operations
from services.stock.access import ensure_stock_access
from services.stock.engine_contract import MIN_GAIN_PER_UNIT, EngineRules
from services.stock.recommendations import newest_lote

RULES_ID = 1
PERIODOS = ("7", "14", "30", "60", "90")
CADENCIAS = ("diaria", "semanal", "quinzenal", "mensal")
DEFAULT_CADENCE = "semanal"


@dataclass(frozen=True)
class RuleField:
    """One transfer rule: its API name, its column, its default and what it accepts."""

    name: str  # as the API and the page call it
    column: str  # attribute of ``RegrasRemanejamento``
    default: Any  # a tuple for the lists (each row gets a fresh list)
    minimum: int | None = None  # integers: inclusive bounds
    maximum: int | None = None
    choices: tuple[str, ...] | None = None  # text: the accepted values

    @property
    def is_list(self) -> bool:
        return isinstance(self.default, tuple)


_WEIGHT = {"minimum": 0, "maximum": 100}
_QUANTITY = {"minimum": 1, "maximum": 10_000}

# In the order of the API's RegrasPayload.
RULE_FIELDS: tuple[RuleField, ...] = (
    RuleField("priorizarCd", "priorizar_cd", True),
    RuleField("qtdMinima", "qtd_minima", 3, **_QUANTITY),
    RuleField("periodo", "periodo", "30", choices=PERIODOS),
    RuleField("pesoDistancia", "peso_distancia", 40, **_WEIGHT),
    RuleField("pesoGiro", "peso_giro", 35, **_WEIGHT),
    RuleField("pesoEstoque", "peso_estoque", 25, **_WEIGHT),
    RuleField("bloqueioCampanha", "bloqueio_campanha", True),
    RuleField("qtdMaxima", "qtd_maxima", 15, **_QUANTITY),
    RuleField("lojasBloqueadas", "lojas_bloqueadas", ()),
    RuleField("marcasBloqueadas", "marcas_bloqueadas", ()),
    # Shipping, in thousandths of an expected unit sold (the engine's currency): a shipment
    # (one origin -> destination route in a batch, shared by all its items) costs
    # custoEnvio + custoKm x km. The defaults keep long trips of small lots out.
    RuleField("custoEnvio", "custo_envio", 300, minimum=0, maximum=100_000),
    RuleField("custoKm", "custo_km", 1, minimum=0, maximum=10_000),
    # What each moved unit must add (net of its origin's loss and its share of the trip), in the
    # same thousandths. At 0 every pair that nets anything passes and the simulator's batches lost
    # half their expected sales (benchmarks/simulate_engine.py); 10 is the lowest measured sound.
    RuleField("ganhoMinimo", "ganho_minimo", round(MIN_GAIN_PER_UNIT * 1000), minimum=10, maximum=1_000),
)
# What one unit of custoEnvio, custoKm and ganhoMinimo is worth, in expected units sold.
COST_SCALE = 1000
RULES: dict[str, RuleField] = {rule.name: rule for rule in RULE_FIELDS}
_BY_COLUMN: dict[str, RuleField] = {rule.column: rule for rule in RULE_FIELDS}


def defaults() -> dict:
    """The documented rules, in force until the rules are first saved (fresh lists each call)."""
    values = {rule.column: list(rule.default) if rule.is_list else rule.default for rule in RULE_FIELDS}
    return {**values, "cadence": DEFAULT_CADENCE}


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
        custo_envio=rules.custo_envio / COST_SCALE,
        custo_km=rules.custo_km / COST_SCALE,
        ganho_minimo=rules.ganho_minimo / COST_SCALE,
    )


# --- changing the rules ------------------------------------------------------------------------


@dataclass(frozen=True)
class NovasRegras:
    """A complete set of rules to save (what ``PUT /regras`` and the rules page load)."""

    priorizar_cd: bool
    qtd_minima: int
    periodo: str
    peso_distancia: int
    peso_giro: int
    peso_estoque: int
    bloqueio_campanha: bool
    qtd_maxima: int
    lojas_bloqueadas: list[str]  # store ids as given; checked here against the stores
    marcas_bloqueadas: list[str]
    custo_envio: int = _BY_COLUMN["custo_envio"].default
    custo_km: int = _BY_COLUMN["custo_km"].default
    ganho_minimo: int = _BY_COLUMN["ganho_minimo"].default
    projeto_operacoes_id: uuid.UUID | None = None


def update_rules(novas: NovasRegras, user: User) -> RegrasRemanejamento:
    """Replace the rules; checks that need the database. Only a stock ``admin`` changes them.

    Errors name the API's fields (``RuleField.name``), all of them at once."""
    ensure_stock_access(user, "admin")
    errors: list[FieldError] = []
    if novas.qtd_minima > novas.qtd_maxima:
        errors.append(FieldError(("body", "qtdMinima"), "qtdMinima deve ser menor ou igual a qtdMaxima"))
    if novas.peso_distancia + novas.peso_giro + novas.peso_estoque == 0:
        errors.append(FieldError(("body", "pesoDistancia"), "Pelo menos um peso deve ser maior que zero"))
    lojas = _existing_lojas(novas.lojas_bloqueadas, errors)
    if errors:
        raise ValidationFailed(errors)
    marcas: list[str] = []
    for marca in novas.marcas_bloqueadas:
        if marca.strip() and marca.strip() not in marcas:
            marcas.append(marca.strip())
    rules = get_rules(for_update=True)
    for rule in RULE_FIELDS:
        if not rule.is_list:
            setattr(rules, rule.column, getattr(novas, rule.column))
    rules.lojas_bloqueadas = lojas
    rules.marcas_bloqueadas = marcas
    if novas.projeto_operacoes_id != rules.projeto_operacoes_id:
        operations.configure(rules, novas.projeto_operacoes_id, user)
    rules.updated_by_id = user.id
    db.session.flush()
    return rules


def _existing_lojas(values: list[str], errors: list[FieldError]) -> list[str]:
    """The blocked store ids, once each in the order given; a malformed or unknown one is an error."""
    lojas: list[str] = []
    parsed: dict[int, uuid.UUID] = {}
    for i, raw in enumerate(values):
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
    return lojas


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


@dataclass(frozen=True)
class Cadencia:
    cadence: str
    proximo_lote: date  # first day on which ``flask batches run-due`` generates the next batch


def get_cadence(ref: date | None = None) -> Cadencia:
    rules = get_rules()
    ref = ref or today()
    return Cadencia(rules.cadence, max(ref, next_due(rules.cadence, newest_lote(), ref)))


def set_cadence(cadence: str, user: User) -> Cadencia:
    """Only a stock ``admin`` changes how often batches are generated."""
    ensure_stock_access(user, "admin")
    rules = get_rules(for_update=True)
    rules.cadence = cadence
    rules.updated_by_id = user.id
    db.session.flush()
    return get_cadence()
