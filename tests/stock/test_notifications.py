"""Remanejamento notifications through the API, the CLI and a real SMTP conversation (aiosmtpd on
loopback), and Web Push through a loopback push service that checks VAPID and decrypts what
it receives (``tests/push_service.py``): who hears what, once, in one message per run; the
unsubscribe link; faults retried; the weekly summary."""

from __future__ import annotations

import re
import socket
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from extensions import db
from models.base import utcnow
from models.jobs import Job
from models.stock_batches import Recomendacao
from models.stock_notifications import PushSubscription, StockNotification
from tests.factories import PASSWORD, auth_headers, make_loja, make_lote, make_produto, make_rec, make_user
from tests.push_service import PushService, vapid_keys
from tests.stock.support import API


def _network():
    cd = make_loja(nome="CD Extrema", is_cd=True)
    moema, santos = make_loja(nome="Loja Moema"), make_loja(nome="Loja Santos")
    tenis = make_produto(nome="Tênis Runner", cor="Preto")
    lote = make_lote()
    return {
        "planner": make_user(papel="planejador", email="paula@giro.test", name="Paula Planejadora"),
        "admin": make_user(papel="admin", email="ana@giro.test", name="Ana Admin"),
        "viewer": make_user(papel="visualizador", email="vera@giro.test"),
        "moema": make_user(papel="gerente_loja", loja=moema, email="gm@giro.test", name="Gerente Moema"),
        "santos": make_user(papel="gerente_loja", loja=santos, email="gs@giro.test", name="Gerente Santos"),
        "lote": lote,
        "to_moema": make_rec(lote, tenis, cd, moema, quantidade=4),
        "to_santos": make_rec(lote, tenis, cd, santos, quantidade=3, tamanho="39"),
        "moema_to_santos": make_rec(lote, tenis, moema, santos, quantidade=2, tamanho="40"),
    }


def _decide(client, user, rec, acao: str, body: dict | None = None):
    response = client.post(
        f"{API}/recomendacoes/{rec.id}/{acao}", json=body, headers=auth_headers(client, user)
    )
    assert response.status_code == 200, response.get_json()


def _send(runner) -> tuple[int, ...]:
    result = runner.invoke(args=["batches", "send-notifications"])
    assert result.exit_code == 0, result.output
    # (messages, sent, skipped, retried, failed, late)
    return tuple(int(n) for n in re.findall(r"\d+", result.output))


def _by_recipient(sink) -> dict[str, list]:
    found: dict[str, list] = {}
    for recipients, message in zip(sink.recipients, sink.messages, strict=True):
        for to in recipients:
            found.setdefault(to, []).append(message)
    return found


def _text(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def test_approvals_tell_each_store_manager_their_part_in_one_message(client, runner, smtp_sink):
    sink, _controller = smtp_sink
    data = _network()
    for rec in ("to_moema", "to_santos", "moema_to_santos"):
        _decide(client, data["planner"], data[rec], "aprovar")
    assert _send(runner)[:2] == (2, 4)
    mail = _by_recipient(sink)
    assert set(mail) == {"gm@giro.test", "gs@giro.test"}  # not planners, admins or viewers
    moema = _text(mail["gm@giro.test"][0])
    assert "Separar e enviar: 1 transferência, 2 unidades" in moema
    assert "2 × Tênis Runner Preto 40: Loja Moema → Loja Santos" in moema
    assert "A caminho da sua loja: 1 transferência, 4 unidades" in moema
    santos = _text(mail["gs@giro.test"][0])
    assert "A caminho da sua loja: 2 transferências, 5 unidades" in santos and "Separar" not in santos
    headers = mail["gs@giro.test"][0]
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert re.fullmatch(r"<http://[^>]+/preferencias/cancelar\?token=[\w.-]+>", headers["List-Unsubscribe"])
    # Sent once: another run has nothing to say.
    sink.messages.clear()
    assert _send(runner)[:2] == (0, 0) and not sink.messages


def test_execution_lateness_and_a_wrong_stock_refusal_reach_who_they_concern(client, runner, smtp_sink, app):
    sink, _controller = smtp_sink
    data = _network()
    _decide(client, data["planner"], data["to_moema"], "aprovar")
    _decide(client, data["planner"], data["to_moema"], "executar")
    _decide(client, data["planner"], data["to_santos"], "recusar", {"motivo": "estoque_errado"})
    _send(runner)
    mail = _by_recipient(sink)
    assert "Enviado: receber na loja: 1 transferência, 4 unidades" in _text(mail["gm@giro.test"][0])
    assert "/recebimentos" in _text(mail["gm@giro.test"][0])
    for planner in ("paula@giro.test", "ana@giro.test"):
        assert "Recusada por estoque errado na origem: 1 transferência, 3 unidades" in _text(mail[planner][0])
    assert "gs@giro.test" not in mail  # a refusal is not the destination's news

    # Ten days later it has not arrived: the approving planner and the destination hear it, once.
    sink.messages.clear()
    sink.recipients.clear()
    long_ago = utcnow() - timedelta(days=10)
    db.session.execute(
        update(Recomendacao)
        .where(Recomendacao.id == data["to_moema"].id)
        .values(executada_data=long_ago.date(), ultima_acao_em=long_ago)
    )
    db.session.commit()
    report = _send(runner)
    assert report[-1] == 1  # one transfer late
    late = _by_recipient(sink)
    assert set(late) == {"gm@giro.test", "paula@giro.test"}
    assert "Em trânsito há tempo demais: 1 transferência, 4 unidades (mais de 7 dias)" in _text(
        late["gm@giro.test"][0]
    )
    sink.messages.clear()
    assert _send(runner)[:2] == (0, 0) and not sink.messages


def test_an_undone_approval_or_a_preference_turned_off_is_not_sent(client, runner, smtp_sink):
    sink, _controller = smtp_sink
    data = _network()
    _decide(client, data["planner"], data["to_moema"], "aprovar")
    # The planner undoes it from the batch page a moment later.
    client.post("/login", data={"email": data["planner"].email, "senha": PASSWORD})
    undone = client.post(
        f"/lotes/{data['lote'].id}/recomendacoes/{data['to_moema'].id}/desfazer",
        data={"acao": "aprovar"},
        headers={"X-CSRF-TOKEN": client.get_cookie("csrf_access_token").value},
    )
    assert undone.status_code in (200, 303), undone.get_data(as_text=True)[:300]
    _decide(client, data["planner"], data["to_santos"], "aprovar")
    santos = auth_headers(client, data["santos"])
    off = client.put(
        "/api/v1/users/me/preferences",
        json={"notifEmail": False, "notifPush": False, "digestSemanal": True},
        headers=santos,
    )
    assert off.status_code == 200
    assert _send(runner)[:3] == (0, 0, 2)  # both skipped
    assert not sink.messages


def test_the_unsubscribe_link_turns_email_off_in_one_click_without_signing_in(client, runner, smtp_sink):
    sink, _controller = smtp_sink
    data = _network()
    _decide(client, data["planner"], data["to_moema"], "aprovar")
    _send(runner)
    link = _by_recipient(sink)["gm@giro.test"][0]["List-Unsubscribe"].strip("<>")
    path = link.split("//", 1)[1].split("/", 1)[1]
    asked = client.get(f"/{path}")
    assert asked.status_code == 200 and "gm@giro.test" in asked.get_data(as_text=True)
    _decide(client, data["planner"], data["moema_to_santos"], "aprovar")  # queued for Moema
    clicked = client.post(f"/{path}", data={"List-Unsubscribe": "One-Click"})
    assert clicked.status_code == 200 and "não vai mais receber" in clicked.get_data(as_text=True)
    db.session.refresh(data["moema"])
    assert data["moema"].notif_email is False
    sink.messages.clear()
    sink.recipients.clear()
    _send(runner)
    assert "gm@giro.test" not in _by_recipient(sink)  # what was queued is not sent
    forged = client.post("/preferencias/cancelar?token=not-a-token")
    assert forged.status_code == 404 and "não é válido" in forged.get_data(as_text=True)


def test_an_smtp_server_that_is_down_leaves_the_message_queued_and_sends_it_once(
    client, runner, smtp_sink, app, monkeypatch
):
    sink, _controller = smtp_sink
    data = _network()
    _decide(client, data["planner"], data["to_moema"], "aprovar")
    port = app.config["SMTP_PORT"]
    with socket.socket() as closed:  # a port nothing listens on: the server is down
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setitem(app.config, "SMTP_PORT", closed.getsockname()[1])
    assert _send(runner)[:4] == (0, 0, 0, 1)  # one to retry
    row = db.session.scalars(select(StockNotification)).one()
    assert row.state == "pending" and row.attempts == 1 and row.next_attempt_at > utcnow()
    monkeypatch.setitem(app.config, "SMTP_PORT", port)
    db.session.execute(update(StockNotification).values(next_attempt_at=utcnow() - timedelta(seconds=1)))
    db.session.commit()
    assert _send(runner)[:2] == (1, 1)
    assert _send(runner)[:2] == (0, 0)
    assert len(_by_recipient(sink)["gm@giro.test"]) == 1


# --------------------------------------------------------------------------- Web Push


@pytest.fixture
def push_service(app, monkeypatch):
    service = PushService()
    private, public = vapid_keys()
    monkeypatch.setitem(app.config, "VAPID_PRIVATE_KEY", private)
    monkeypatch.setitem(app.config, "VAPID_PUBLIC_KEY", public)
    monkeypatch.setitem(app.config, "VAPID_SUBJECT", "mailto:ops@giro.test")
    yield service, public
    service.close()


def _push_on(client, user, subscription: dict) -> str:
    headers = auth_headers(client, user)
    on = client.put(
        "/api/v1/users/me/preferences",
        json={"notifEmail": False, "notifPush": True, "digestSemanal": True},
        headers=headers,
    )
    assert on.status_code == 200
    created = client.post("/api/v1/users/me/push-subscriptions", json=subscription, headers=headers)
    assert created.status_code == 201, created.get_json()
    return created.get_json()["id"]


def test_a_push_reaches_the_browser_encrypted_and_signed_and_a_gone_browser_is_dropped(
    client, runner, push_service
):
    service, public = push_service
    data = _network()
    browser = service.subscription(application_server_key=public)
    _push_on(client, data["moema"], browser)
    _decide(client, data["planner"], data["to_moema"], "aprovar")
    _decide(client, data["planner"], data["moema_to_santos"], "aprovar")
    assert _send(runner)[:2] == (2, 3)  # Moema's push (two notices), Santos's e-mail
    received = service.wait_for(1)
    assert service.rejected == []
    message = received[0].payload
    assert message["title"] == "Giro: 2 avisos do remanejamento"
    assert "Separar e enviar: 1 transferência, 2 unidades" in message["body"]
    assert message["url"].endswith(f"/lotes/{data['lote'].id}")
    assert (
        received[0].vapid_claims["sub"] == "mailto:ops@giro.test" and received[0].vapid_public_key == public
    )

    # The browser is gone (410): the subscription is dropped, nothing is retried.
    service.answer(browser, 410)
    _decide(client, data["planner"], data["to_santos"], "aprovar")
    _decide(client, data["planner"], data["to_moema"], "executar")
    _send(runner)
    assert db.session.scalar(select(func.count()).select_from(PushSubscription)) == 0


def test_a_push_service_that_fails_is_retried_later(client, runner, push_service):
    service, public = push_service
    data = _network()
    _push_on(client, data["moema"], service.subscription(application_server_key=public))
    _decide(client, data["planner"], data["to_moema"], "aprovar")
    service.fail_all = 503
    assert _send(runner)[:4] == (0, 0, 0, 1)
    service.fail_all = None
    db.session.execute(update(StockNotification).values(next_attempt_at=utcnow() - timedelta(seconds=1)))
    db.session.commit()
    assert _send(runner)[:2] == (1, 1)
    assert len(service.wait_for(1)) == 1


def test_a_subscription_is_checked_and_needs_vapid_keys(client, app, push_service, monkeypatch):
    service, _public = push_service
    user = make_user(papel="gerente_loja", loja=make_loja())
    headers = auth_headers(client, user)
    url = "/api/v1/users/me/push-subscriptions"
    good = service.subscription()
    for bad in (
        {"endpoint": good["endpoint"], "keys": {"p256dh": "AAAA", "auth": good["keys"]["auth"]}},
        {"endpoint": good["endpoint"], "keys": {"p256dh": good["keys"]["p256dh"], "auth": "short"}},
        {"endpoint": "https://10.0.0.7/push/x", "keys": good["keys"]},
        {"endpoint": good["endpoint"]},
    ):
        response = client.post(url, json=bad, headers=headers)
        assert response.status_code == 422, (bad, response.get_json())
    created = client.post(url, json=good, headers=headers)
    assert created.status_code == 201
    assert client.delete(f"{url}/{created.get_json()['id']}", headers=headers).status_code == 204
    assert client.delete(f"{url}/{created.get_json()['id']}", headers=headers).status_code == 404
    monkeypatch.setitem(app.config, "VAPID_PRIVATE_KEY", "")
    missing = client.post(url, json=good, headers=headers)
    assert missing.status_code == 409 and "VAPID" in missing.get_json()["detail"]


# --------------------------------------------------------------------------- the weekly summary


def test_the_weekly_summary_goes_once_from_monday_eight(client, runner, smtp_sink):
    sink, _controller = smtp_sink
    data = _network()
    db.session.commit()
    early = runner.invoke(args=["batches", "send-digest", "--at", "2026-11-30T07:30:00-0300"])
    assert early.exit_code == 0 and "not due" in early.output and not sink.messages
    due = runner.invoke(args=["batches", "send-digest", "--at", "2026-11-30T08:05:00-0300"])
    assert due.exit_code == 0, due.output
    mail = _by_recipient(sink)
    # Planners, admins and store managers; not viewers.
    assert set(mail) == {"paula@giro.test", "ana@giro.test", "gm@giro.test", "gs@giro.test"}
    message = mail["gm@giro.test"][0]
    assert message["Subject"] == "Giro: resumo da semana 2026-W49 (Loja Moema)"
    html = message.get_body(preferencelist=("html",)).get_content()
    assert "<table" in html and "Vendido" in html and "<script" not in html
    assert "resumo" in message["List-Unsubscribe"] or "token=" in message["List-Unsubscribe"]
    # Twice the same Monday (the scheduler ran again): nothing more.
    sink.messages.clear()
    again = runner.invoke(args=["batches", "send-digest", "--at", "2026-11-30T09:05:00-0300"])
    assert again.exit_code == 0 and not sink.messages
    assert data["viewer"].email not in mail


def test_a_generated_batch_tells_planners_and_admins_with_its_figures(client, runner, smtp_sink):
    from tests.stock.test_batches import ON, build_network, generate

    sink, _controller = smtp_sink
    build_network()
    planner = make_user(papel="planejador", email="paula@giro.test")
    make_user(papel="admin", email="ana@giro.test")
    make_user(papel="visualizador", email="vera@giro.test")
    generate(runner, ON)
    lote = client.get(f"{API}/lotes", headers=auth_headers(client, planner)).get_json()[0]
    assert _send(runner)[:2] == (2, 2)
    mail = _by_recipient(sink)
    assert set(mail) == {"paula@giro.test", "ana@giro.test"}
    text = _text(mail["paula@giro.test"][0])
    assert f"Lote {lote['semana']} pronto" in mail["paula@giro.test"][0]["Subject"]
    totals = client.get(f"{API}/lotes/{lote['id']}/totais", headers=auth_headers(client, planner)).get_json()
    units = f"{totals['totalUnidades']:,}".replace(",", ".")
    assert f"{totals['totalItens']} transferências, {units} unidades" in text
    assert f"/lotes/{lote['id']}" in text
    # Generating the week again is a new generation: told again, once.
    generate(runner, ON)
    assert _send(runner)[:2] == (2, 2)
    assert _send(runner)[:2] == (0, 0)


def test_the_scheduler_sends_the_notifications_every_five_minutes(client, smtp_sink):
    from blueprints.cli_jobs import SCHEDULE
    from services import job_queue

    sink, _controller = smtp_sink
    data = _network()
    _decide(client, data["planner"], data["to_moema"], "aprovar")
    ticks = {target: cron for target, cron in SCHEDULE}
    target = "services.stock.notification_delivery:notifications_tick"
    assert ticks[target] == "*/5 * * * *" and ticks["services.stock.digest:digest_tick"] == "5 * * * *"
    job_queue.resolve(target)()  # the job runs inline in the suite (JOBS_EAGER)
    assert list(_by_recipient(sink)) == ["gm@giro.test"]


def test_the_hourly_tick_runs_the_summary_job_from_monday_eight(client, smtp_sink, monkeypatch):
    from datetime import datetime

    from services.stock import digest

    sink, _controller = smtp_sink
    _network()
    monday = datetime.fromisoformat("2026-11-30T07:05:00-03:00")
    monkeypatch.setattr(digest, "utcnow", lambda: monday)
    assert digest.digest_tick() is None and not sink.messages
    monkeypatch.setattr(digest, "utcnow", lambda: monday + timedelta(hours=1))
    job_id = digest.digest_tick()  # the job runs inline in the suite (JOBS_EAGER)
    job = db.session.get(Job, uuid.UUID(job_id))  # the operator's job (no person asked for it)
    assert job.state == "done" and job.result["resumos"] == 4
    assert len(sink.messages) == 4
    digest.digest_tick()  # the scheduler again, the same week: nothing more
    assert len(sink.messages) == 4


def test_the_summarys_own_link_stops_the_summary_and_push_off_stops_queued_pushes(
    client, runner, smtp_sink, push_service
):
    sink, _controller = smtp_sink
    service, public = push_service
    data = _network()
    db.session.commit()
    assert runner.invoke(args=["batches", "send-digest", "--at", "2026-11-30T08:05:00-0300"]).exit_code == 0
    summary = _by_recipient(sink)["gm@giro.test"][0]
    path = summary["List-Unsubscribe"].strip("<>").split("//", 1)[1].split("/", 1)[1]
    assert client.post(f"/{path}", data={"List-Unsubscribe": "One-Click"}).status_code == 200
    db.session.refresh(data["moema"])
    assert data["moema"].digest_semanal is False and data["moema"].notif_email is True  # only the summary
    sink.messages.clear()
    sink.recipients.clear()
    assert runner.invoke(args=["batches", "send-digest", "--at", "2026-12-07T08:05:00-0300"]).exit_code == 0
    assert "gm@giro.test" not in _by_recipient(sink) and "gs@giro.test" in _by_recipient(sink)

    # Push on, a notice queued, then push off before the run: nothing reaches the browser.
    _push_on(client, data["santos"], service.subscription(application_server_key=public))
    _decide(client, data["planner"], data["to_santos"], "aprovar")
    off = client.put(
        "/api/v1/users/me/preferences",
        json={"notifEmail": False, "notifPush": False, "digestSemanal": True},
        headers=auth_headers(client, data["santos"]),
    )
    assert off.status_code == 200
    _send(runner)
    assert service.received == [] and service.rejected == []
