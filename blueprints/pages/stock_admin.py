"""The stock admin's pages: accounts' stock access (list, invite by e-mail, change, take
away), stores (block, unblock, CD flag) and CSV imports with their log. Only ``admin``
opens them; the services check the role again on every call."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from flask import Blueprint, current_app, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, refused, render_fragment, render_page
from models.auth import PAPEIS
from schemas.auth import AccessInvitation
from services.errors import DomainError
from services.stock import administration, catalogue, importer, imports

blp = Blueprint("stock_admin", __name__, url_prefix="/administracao")

KIND_TEXT = {
    "stores": _l("Lojas e CDs"),
    "products": _l("Produtos"),
    "stock": _l("Estoque"),
    "sales": _l("Vendas"),
    "campaigns": _l("Campanhas"),
}


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except (TypeError, ValueError):
        return None


@blp.context_processor
def labels() -> dict:
    return {"PAPEIS": PAPEIS, "KIND_TEXT": KIND_TEXT, "IMPORT_COLUMNS": importer.COLUMNS}


# --- accounts ----------------------------------------------------------------------------------


def _accounts_page(status: int = 200, block: str | None = None, **extra):
    q = request.args.get("q", "").strip()[:200]
    context = {
        "accounts": administration.list_accounts(current_user, q),
        "lojas": catalogue.list_lojas(),
        "q": q,
        "form": {},
        "errors": {},
        "invited": None,
    }
    context.update(extra)
    return render_page("stock_admin/accounts.html", block, status=status, **context)


@blp.route("/acessos")
@page_login_required("admin")
def accounts():
    return _accounts_page(block="account_rows")


@blp.route("/acessos/convite", methods=["POST"])
@page_login_required("admin")
def invite():
    form = {k: request.form.get(k, "").strip() for k in ("email", "nome", "papel", "lojaId")}
    try:
        # The address must be one mail can reach: the invited person sets a password through it.
        loaded = AccessInvitation().load({"email": form["email"], "nome": form["nome"]})
        user, created = administration.invite(
            current_user,
            loaded["email"],
            loaded["nome"],
            form["papel"] or None,
            _uuid(form["lojaId"]),
        )
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True, by_field=True)
        return _accounts_page(refusal.status, "invite_form", form=form, errors=refusal.errors)
    return _accounts_page(block="invite_form", invited={"email": user.email, "created": created})


@blp.route("/acessos/<uuid:user_id>", methods=["POST"])
@page_login_required("admin")
def change_access(user_id: uuid.UUID):
    papel = request.form.get("papel", "").strip() or None
    loja_id = _uuid(request.form.get("lojaId", "")) if papel == "gerente_loja" else None
    message = None
    status = 200
    try:
        user = administration.change_access(current_user, user_id, papel, loja_id)
        saved = True
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        status, message, saved = refusal.status, refusal.message, False
        user = administration.get_account(current_user, user_id)
    return render_fragment(
        "stock_admin/_account_row.html",
        status=status,
        account=user,
        lojas=catalogue.list_lojas(),
        message=message,
        saved=saved,
    )


# --- stores ------------------------------------------------------------------------------------


@blp.route("/lojas")
@page_login_required("admin")
def stores():
    q = request.args.get("q", "").strip()[:200]
    return render_page(
        "stock_admin/stores.html", "store_rows", lojas=administration.list_lojas(current_user, q), q=q
    )


@blp.route("/lojas/<uuid:loja_id>", methods=["POST"])
@page_login_required("admin")
def update_store(loja_id: uuid.UUID):
    changes = {}
    for field, name in (("bloqueada", "bloqueada"), ("isCd", "is_cd")):
        if field in request.form:
            changes[name] = request.form[field] == "true"
    try:
        loja = administration.update_loja(current_user, loja_id, changes)
    except DomainError as exc:
        refusal = refused(exc)
        return render_fragment("stock_admin/_error_row.html", status=refusal.status, message=refusal.message)
    return render_fragment("stock_admin/_store_row.html", loja=loja, message=None)


# --- imports -----------------------------------------------------------------------------------


def _imports_page(status: int = 200, block: str | None = None, **extra):
    context = {"logs": imports.recent_imports(current_user), "result": None, "error": None, "kind": ""}
    context.update(extra)
    return render_page("stock_admin/imports.html", block, status=status, **context)


@blp.route("/importacoes")
@page_login_required("admin")
def imports_page():
    return _imports_page()


@blp.route("/importacoes", methods=["POST"])
@page_login_required("admin")
def upload_import():
    """A CSV from the page, through the same validation as ``flask import``: a rejected
    file writes nothing but its log line (answered 200: the log line is kept)."""
    kind = request.form.get("kind", "")
    upload = request.files.get("arquivo")
    if kind not in importer.KINDS:
        return _imports_page(422, "import_panel", error=_("Escolha o tipo de arquivo."), kind=kind)
    if upload is None or not upload.filename:
        return _imports_page(422, "import_panel", error=_("Escolha um arquivo CSV."), kind=kind)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "upload.csv"
        upload.save(path)
        try:
            log = imports.run_import(current_user, kind, path, Path(upload.filename).name)
        except DomainError as exc:
            refusal = refused(exc)
            return _imports_page(refusal.status, "import_panel", error=refusal.message, kind=kind)
    current_app.logger.info("import %s of %s by %s: ok=%s", kind, log.filename, current_user.email, log.ok)
    return _imports_page(block="import_panel", result=log, kind=kind)
