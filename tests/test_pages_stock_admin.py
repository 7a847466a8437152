"""The stock admin's pages: accounts' access, invitations, stores, CSV imports with their log."""

from __future__ import annotations

import io

import pytest
from sqlalchemy import func, select

from extensions import db
from models.auth import User
from models.stock import ImportLog, Loja
from services.errors import ForbiddenError
from services.stock import administration, imports
from tests.factories import captured_mail, link_token, make_loja, make_user
from tests.test_pages_remanejamento import hx, sign_in, text


@pytest.fixture
def admin(ctx):
    return make_user(papel="admin", name="Artur Admin", email="artur@giro.test")


def test_only_a_stock_admin_opens_the_pages(client, ctx):
    planner = make_user(papel="planejador")
    sign_in(client, planner)
    for path in ("/administracao/acessos", "/administracao/lojas", "/administracao/importacoes"):
        assert client.get(path).status_code == 403


@pytest.mark.parametrize("papel", [None, "visualizador", "gerente_loja", "planejador"])
def test_the_services_refuse_anyone_but_an_admin(ctx, papel, tmp_path):
    loja = make_loja()
    actor, target = make_user(papel=papel, loja=loja if papel == "gerente_loja" else None), make_user()
    csv = tmp_path / "lojas.csv"
    csv.write_text("codigo,nome,cidade,lat,lng,is_cd,bloqueada\nX1,Loja X,Cidade,,,false,false\n")
    for call in (
        lambda: administration.list_accounts(actor),
        lambda: administration.change_access(actor, target.id, "admin", None),
        lambda: administration.invite(actor, "nova@giro.test", "Nova", "visualizador", None),
        lambda: administration.update_loja(actor, loja.id, {"bloqueada": True}),
        lambda: imports.run_import(actor, "stores", csv, "lojas.csv"),
    ):
        with pytest.raises(ForbiddenError):
            call()
    assert db.session.scalar(select(func.count()).select_from(ImportLog)) == 0


def test_admin_grants_changes_and_takes_away_stock_access(client, admin):
    loja = make_loja(nome="Loja Paulista", codigo="SP01")
    other = make_user(papel=None, name="Olga Outra", email="olga@giro.test")
    csrf = sign_in(client, admin)
    listed = text(client.get("/administracao/acessos"))
    assert "artur@giro.test" in listed and "olga@giro.test" not in listed  # only accounts with access
    found = text(client.get("/administracao/acessos", query_string={"q": "olga"}, headers=hx()))
    assert "olga@giro.test" in found

    url = f"/administracao/acessos/{other.id}"
    missing_store = client.post(url, data={"papel": "gerente_loja"}, headers=hx(csrf))
    assert missing_store.status_code == 422 and "precisa de uma loja" in text(missing_store)
    assert db.session.get(User, other.id).papel is None

    ok = client.post(url, data={"papel": "gerente_loja", "lojaId": str(loja.id)}, headers=hx(csrf))
    assert ok.status_code == 200 and "Acesso salvo: Gerente de loja" in text(ok)
    db.session.expire_all()
    assert (db.session.get(User, other.id).papel, db.session.get(User, other.id).loja_id) == (
        "gerente_loja",
        loja.id,
    )

    revoked = client.post(url, data={"papel": ""}, headers=hx(csrf))
    assert revoked.status_code == 200
    db.session.expire_all()
    assert db.session.get(User, other.id).papel is None and db.session.get(User, other.id).loja_id is None

    # An admin does not lock itself out.
    own = client.post(f"/administracao/acessos/{admin.id}", data={"papel": "visualizador"}, headers=hx(csrf))
    assert own.status_code == 403 and "próprio papel de administrador" in text(own)
    db.session.expire_all()
    assert db.session.get(User, admin.id).papel == "admin"


def test_invite_by_email_makes_an_account_that_sets_its_password(client, admin):
    csrf = sign_in(client, admin)
    with captured_mail() as outbox:
        answer = client.post(
            "/administracao/acessos/convite",
            data={"email": "Nova@Giro.test", "nome": "Nina Nova", "papel": "planejador"},
            headers=hx(csrf),
        )
    assert answer.status_code == 200 and "Convite enviado a nova@giro.test" in text(answer)
    invited = db.session.scalar(select(User).where(User.email == "nova@giro.test"))
    assert invited.papel == "planejador" and invited.email_verified_at is None
    assert len(outbox) == 1 and outbox[0]["To"] == "nova@giro.test"

    # The link sets the password and proves the address; then the account signs in with its role.
    client.post("/logout", data={"csrf_token": csrf})
    reset = client.post(
        "/reset-password", data={"token": link_token(outbox[0]), "senha": "uma-senha-bem-longa-1"}
    )
    assert reset.status_code in (200, 302, 303)
    db.session.expire_all()
    assert db.session.get(User, invited.id).email_verified_at is not None
    signed = client.post("/login", data={"email": "nova@giro.test", "senha": "uma-senha-bem-longa-1"})
    assert signed.status_code == 302


def _address(length: int) -> str:
    """A well-formed address of exactly ``length`` characters (domain labels of at most 63)."""
    return "nina@" + "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * (length - 204) + ".com.br"


def test_invite_takes_the_longest_address_mail_can_reach(client, admin):
    csrf = sign_in(client, admin)
    email = _address(254)
    answer = client.post(
        "/administracao/acessos/convite", data={"email": email, "papel": "planejador"}, headers=hx(csrf)
    )
    assert answer.status_code == 200 and "Convite enviado" in text(answer)
    assert db.session.scalar(select(func.count()).select_from(User).where(User.email == email)) == 1


@pytest.mark.parametrize(
    "email",
    [
        "nina@giro",  # no top-level domain: no mail reaches it
        _address(255),  # longer than a mail path allows (RFC 5321)
        _address(4000),
    ],
)
def test_invite_to_an_address_mail_cannot_reach_is_refused_at_the_field(client, admin, email):
    csrf = sign_in(client, admin)
    with captured_mail() as outbox:
        answer = client.post(
            "/administracao/acessos/convite",
            data={"email": email, "nome": "Nina", "papel": "planejador"},
            headers=hx(csrf),
        )
    assert answer.status_code == 422 and 'id="invite-email-error"' in text(answer)
    assert outbox == []
    assert db.session.scalar(select(func.count()).select_from(User).where(User.email == email)) == 0


def test_invite_with_a_name_that_cannot_be_shown_is_refused_at_the_field(client, admin):
    csrf = sign_in(client, admin)
    answer = client.post(
        "/administracao/acessos/convite",
        data={"email": "nina@giro.test", "nome": "Nina\x07", "papel": "planejador"},
        headers=hx(csrf),
    )
    assert answer.status_code == 422 and 'id="invite-nome-error"' in text(answer)
    assert (
        db.session.scalar(select(func.count()).select_from(User).where(User.email == "nina@giro.test")) == 0
    )


def test_invite_of_a_proven_account_grants_at_once(client, admin):
    loja = make_loja(nome="Loja Moema", codigo="SP02")
    known = make_user(papel=None, email="gabi@giro.test")
    csrf = sign_in(client, admin)
    with captured_mail() as outbox:
        answer = client.post(
            "/administracao/acessos/convite",
            data={"email": "gabi@giro.test", "papel": "gerente_loja", "lojaId": str(loja.id)},
            headers=hx(csrf),
        )
    assert "Acesso dado a gabi@giro.test" in text(answer)
    db.session.expire_all()
    assert db.session.get(User, known.id).papel == "gerente_loja"
    assert (
        db.session.scalar(select(func.count()).select_from(User).where(User.email == "gabi@giro.test")) == 1
    )
    assert "acesso ao remanejamento" in outbox[0]["Subject"]
    bad = client.post(
        "/administracao/acessos/convite",
        data={"email": "x@giro.test", "papel": "gerente_loja"},
        headers=hx(csrf),
    )
    assert bad.status_code == 422 and 'id="invite-loja-error"' in text(bad)


def test_admin_blocks_a_store_and_marks_a_cd(client, admin):
    loja = make_loja(nome="Loja Paulista", codigo="SP01")
    csrf = sign_in(client, admin)
    assert "Loja Paulista" in text(client.get("/administracao/lojas"))
    url = f"/administracao/lojas/{loja.id}"
    blocked = client.post(url, data={"bloqueada": "true"}, headers=hx(csrf))
    assert blocked.status_code == 200 and "Desbloquear" in text(blocked)
    cd = client.post(url, data={"isCd": "true"}, headers=hx(csrf))
    assert "Tratar como loja" in text(cd)
    db.session.expire_all()
    stored = db.session.get(Loja, loja.id)
    assert stored.bloqueada is True and stored.is_cd is True
    assert client.post(url, data={"bloqueada": "false"}, headers=hx(csrf)).status_code == 200
    db.session.expire_all()
    assert db.session.get(Loja, loja.id).bloqueada is False


def _upload(client, csrf, kind, name, content: str):
    return client.post(
        "/administracao/importacoes",
        data={"csrf_token": csrf, "kind": kind, "arquivo": (io.BytesIO(content.encode()), name)},
        headers=hx(csrf),
        content_type="multipart/form-data",
    )


def test_upload_imports_a_csv_or_rejects_it_whole_and_logs_both(client, admin):
    csrf = sign_in(client, admin)
    header = "codigo,nome,cidade,lat,lng,is_cd,bloqueada\n"
    good = _upload(
        client, csrf, "stores", "lojas.csv", header + "SP01,Loja Paulista,São Paulo,-23.5,-46.6,false,false\n"
    )
    assert good.status_code == 200
    assert "lojas.csv importado: 1 linhas (1 novas" in text(good)
    # Line 3 is bad: nothing of the file is written, and the error names the line.
    bad = _upload(
        client,
        csrf,
        "stores",
        "mais-lojas.csv",
        header + "SP02,Loja Moema,São Paulo,,,false,false\nSP03,Loja Ruim,Santos,,,talvez,false\n",
    )
    assert bad.status_code == 200
    body = text(bad)
    assert "mais-lojas.csv recusado; nada foi importado." in body and "Linha 3" in body
    assert db.session.scalar(select(Loja).where(Loja.codigo == "SP02")) is None
    # The log lists both, newest first, with who ran them.
    page = text(client.get("/administracao/importacoes"))
    assert page.index("<strong>mais-lojas.csv</strong>") < page.index("<strong>lojas.csv</strong>")
    logs = db.session.scalars(select(ImportLog).order_by(ImportLog.created_at)).all()
    assert [(log.filename, log.ok, log.rows, log.error_line) for log in logs] == [
        ("lojas.csv", True, 1, None),
        ("mais-lojas.csv", False, 0, 3),
    ]
    assert "Artur Admin" in page and "Recusado" in page
    missing = _upload(client, csrf, "nope", "x.csv", header)
    assert missing.status_code == 422 and "Escolha o tipo" in text(missing)


def test_upload_takes_files_over_the_api_body_limit(client, admin, app):
    csrf = sign_in(client, admin)
    app.config["MAX_CONTENT_LENGTH"] = 1000
    try:
        rows = "".join(f"LJ{i:04d},Loja {i},Cidade,,,false,false\n" for i in range(100))
        answer = _upload(
            client, csrf, "stores", "muitas.csv", "codigo,nome,cidade,lat,lng,is_cd,bloqueada\n" + rows
        )
        assert answer.status_code == 200 and "muitas.csv importado: 100 linhas" in text(answer)
        # Any other page still refuses a body over the limit.
        assert client.post("/perfil", data={"nome": "x" * 2000}, headers=hx(csrf)).status_code == 413
    finally:
        app.config["MAX_CONTENT_LENGTH"] = 2 * 1024 * 1024
