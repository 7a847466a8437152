"""The rules page: transfer rules and cadence, saved or simulated (what-if) without saving.

Rule defaults, bounds and choices come from ``services.stock.rules`` alone; the form is
checked with the API's ``RegrasPayload``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from flask import Blueprint, request
from flask_babel import gettext as _
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, refused, render_page
from schemas.stock.batches import (
    CadencePayload,
    RegrasPayload,
)
from services.errors import ValidationFailed
from services.stock import catalogue, operations, rules, whatif
from services.stock.rules import CADENCIAS, RULE_FIELDS, RULES

blp = Blueprint("rules_pages", __name__)


# The integer rules and their bounds, as the service states them.
INT_FIELDS = {rule.name: (rule.minimum, rule.maximum) for rule in RULE_FIELDS if rule.minimum is not None}


def _rules_form(form) -> tuple[dict, dict[str, str]]:
    """The rules form as an API body; integers that do not parse are reported per field."""
    body: dict[str, Any] = {
        "priorizarCd": "priorizarCd" in form,
        "bloqueioCampanha": "bloqueioCampanha" in form,
        "periodo": form.get("periodo", ""),
        "lojasBloqueadas": form.getlist("lojasBloqueadas"),
        "marcasBloqueadas": form.getlist("marcasBloqueadas"),
        "projetoOperacoes": form.get("projetoOperacoes") or None,
    }
    errors: dict[str, str] = {}
    for name, (low, high) in INT_FIELDS.items():
        raw = form.get(name, "").strip()
        try:
            body[name] = int(raw)
        except ValueError:
            body[name] = raw
            errors[name] = _("Use um número inteiro de %(min)s a %(max)s.", min=low, max=high)
    return body, errors


def _rules_messages(messages: dict) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in messages:
        if name in INT_FIELDS:
            low, high = INT_FIELDS[name]
            out[name] = _("Use um número inteiro de %(min)s a %(max)s.", min=low, max=high)
        elif name == "periodo":
            *first, last = RULES["periodo"].choices
            out[name] = _("Escolha %(opcoes)s ou %(ultima)s dias.", opcoes=", ".join(first), ultima=last)
        else:
            out[name] = _("Valor inválido.")
    return out


def _regras_context(
    *,
    regras: Any = None,
    errors: dict[str, str] | None = None,
    saved: bool = False,
    cadence: rules.Cadencia | None = None,
    cadence_errors: dict[str, str] | None = None,
    cadence_saved: bool = False,
) -> dict:
    """Everything the rules page shows; each form's own values override the stored ones.

    ``regras`` is the stored rules or, after a refused save, the form's values under the same names."""
    regras = regras if regras is not None else rules.get_rules()
    marcas = sorted({p.marca for p in catalogue.list_produtos()} | set(regras.marcas_bloqueadas))
    return {
        "regras": regras,
        "errors": errors or {},
        "saved": saved,
        "lojas": catalogue.list_lojas(),
        "marcas": marcas,
        "periodos": RULES["periodo"].choices,
        "rule_fields": RULES,
        "cadence": cadence if cadence is not None else rules.get_cadence(),
        "cadencias": CADENCIAS,
        "cadence_errors": cadence_errors or {},
        "cadence_saved": cadence_saved,
        "can_edit": current_user.papel == "admin",
        "ops_projects": operations.project_choices(current_user, regras.projeto_operacoes_id),
        "ops_problem": operations.last_sync_problem() if regras.projeto_operacoes_id else None,
    }


@blp.route("/regras")
@page_login_required(stock=True)
def regras():
    return render_page("batches/regras.html", **_regras_context())


@blp.route("/regras", methods=["POST"])
@page_login_required("admin")
def regras_save():
    body, errors = _rules_form(request.form)
    status, saved = 422, False
    regras: Any = SimpleNamespace(
        **{
            RULES[name].column if name in RULES else "projeto_operacoes_id": value
            for name, value in body.items()
        }
    )
    try:
        # Fields that did not parse are left to their defaults here, so every other error shows too.
        data = RegrasPayload().load({k: v for k, v in body.items() if k not in errors})
    except ValidationError as exc:
        errors = {**_rules_messages(exc.messages), **errors}
    if not errors:
        try:
            regras = rules.update_rules(data, current_user)
            status, saved = 200, True
        except ValidationFailed as exc:
            status = refused(exc).status
            # The rules' messages are the service's own, by field.
            errors = {str(e.loc[1]): e.msg for e in exc.errors if len(e.loc) > 1}
    return render_page(
        "batches/regras.html",
        "rules_form",
        status=status,
        **_regras_context(regras=regras, errors=errors, saved=saved),
    )


@blp.route("/regras/simular", methods=["POST"])
@page_login_required("admin")
def regras_simular():
    """What-if: the engine with the form's rules, nothing saved, against the current batch."""
    body, errors = _rules_form(request.form)
    try:
        data = RegrasPayload().load({k: v for k, v in body.items() if k not in errors})
    except ValidationError as exc:
        errors = {**_rules_messages(exc.messages), **errors}
    result, status = None, 200
    if not errors:
        try:
            result = whatif.simulate(data, current_user)
        except ValidationFailed as exc:
            status = refused(exc).status
            errors = {str(e.loc[1]): e.msg for e in exc.errors if len(e.loc) > 1}
    else:
        status = 422
    regras: Any = SimpleNamespace(
        **{
            RULES[name].column if name in RULES else "projeto_operacoes_id": value
            for name, value in body.items()
        }
    )
    names = (
        whatif.loja_names({i for r in result["rotas"] for i in (r["origem_id"], r["destino_id"])})
        if result
        else {}
    )
    return render_page(
        "batches/regras.html",
        "whatif",
        status=status,
        **_regras_context(regras=regras),
        whatif=result,
        whatif_errors=errors,
        whatif_names=names,
    )


@blp.route("/regras/cadencia", methods=["POST"])
@page_login_required("admin")
def cadencia_save():
    try:
        data = CadencePayload().load({"cadence": request.form.get("cadence", "")})
    except ValidationError:
        context = _regras_context(
            cadence_errors={"cadence": _("Escolha diária, semanal, quinzenal ou mensal.")}
        )
        return render_page("batches/regras.html", "cadence_form", status=422, **context)
    cadence = rules.set_cadence(data["cadence"], current_user)
    context = _regras_context(cadence=cadence, cadence_saved=True)
    return render_page("batches/regras.html", "cadence_form", **context)
