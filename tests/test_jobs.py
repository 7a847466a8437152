"""Background jobs through the APIs, the pages and the CLI: state, progress, result, permissions,
one generation per week at a time, partitions giving the single-run batch, imports and e-mails.

The suite runs jobs inline (``JOBS_EAGER``) inside each test's transaction; real worker
processes are exercised in ``tests/test_jobs_processes.py``.
"""

from __future__ import annotations

import io
import uuid
from datetime import date, timedelta

import pytest
from sqlalchemy import func, select

from extensions import db
from models.base import utcnow
from models.jobs import Job
from models.stock import Loja
from models.stock_batches import Recomendacao
from tests.factories import auth_headers, bearer, captured_mail, make_user
from tests.stock.test_batches import ON, build_network
from tests.test_pages_remanejamento import hx, sign_in

API = "/api/v1"
REM = "/api/v1/remanejamento"
TRACKER = "/tracker/api/v1"


@pytest.fixture
def planner(client, ctx):
    user = make_user(papel="planejador")
    return user, auth_headers(client, user)


def _generate(client, headers, on: date = ON):
    return client.post(f"{REM}/geracoes", headers=headers, json={"data": on.isoformat()})


def test_a_planner_generates_a_batch_as_a_job_and_reads_its_record(client, ctx, planner):
    build_network()
    user, headers = planner
    started = _generate(client, headers)
    assert started.status_code == 202, started.get_json()
    job_id = started.get_json()["id"]

    body = client.get(f"{API}/jobs/{job_id}", headers=headers).get_json()
    assert body["kind"] == "lote" and body["state"] == "done" and body["progress"] == 100
    assert body["error"] is None and body["message"] == "concluído"
    assert body["started_at"] and body["finished_at"] and body["created_at"]
    result = body["result"]
    assert result["gerado"] is True and result["semana"] == "2026-W47" and result["novas"] > 0
    lotes = client.get(f"{REM}/lotes", headers=headers).get_json()
    assert [lote["id"] for lote in lotes] == [result["lote_id"]]
    recs = client.get(f"{REM}/recomendacoes", headers=headers).get_json()
    assert len(recs) == result["novas"]
    assert db.session.get(Job, uuid.UUID(job_id)).requested_by_id == user.id
    # The same record from the tracker's API, for whoever asked.
    tracker = client.get(f"{TRACKER}/jobs/{job_id}", headers=headers)
    assert tracker.status_code == 200 and tracker.get_json()["state"] == "done"


def test_who_may_start_and_read_a_generation(client, ctx, planner):
    build_network()
    _, headers = planner
    viewer = auth_headers(client, make_user(papel="visualizador"))
    refused = _generate(client, viewer)
    assert refused.status_code == 403 and "detail" in refused.get_json()
    assert db.session.scalar(select(func.count()).select_from(Job)) == 0

    job_id = _generate(client, headers).get_json()["id"]
    admin = auth_headers(client, make_user(papel="admin"))
    assert client.get(f"{API}/jobs/{job_id}", headers=admin).status_code == 200  # planners' work
    assert client.get(f"{API}/jobs/{job_id}", headers=viewer).status_code == 404
    from services.auth import issue_access_token

    outsider = bearer(issue_access_token(make_user(papel=None)))
    assert client.get(f"{TRACKER}/jobs/{job_id}", headers=outsider).get_json() == {
        "error": "NOT_FOUND",
        "message": "Job not found",
    }
    assert client.get(f"{API}/jobs/{uuid.uuid4()}", headers=headers).status_code == 404
    bad = client.get(f"{API}/jobs/not-a-uuid", headers=headers)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["path", "job_id"]


def test_a_week_being_generated_is_not_generated_again_at_the_same_time(client, ctx, planner, app):
    from services.stock import partitions

    build_network()
    user, headers = planner
    # A generation of the week already queued (on a worker that has not taken it yet).
    waiting, created = partitions.request_generation(ON, actor=user, dispatch=False)
    assert created
    db.session.commit()
    again = _generate(client, headers, ON + timedelta(days=1))  # same ISO week
    assert again.status_code == 200 and again.get_json()["id"] == str(waiting.id)
    assert again.get_json()["state"] == "queued"
    assert client.get(f"{REM}/lotes", headers=headers).get_json() == []

    # Another week is another lock.
    other = _generate(client, headers, ON + timedelta(days=7))
    assert other.status_code == 202 and other.get_json()["id"] != str(waiting.id)

    # A holder silent past JOBS_STALE_AFTER lost its worker: the next request takes over.
    db.session.get(Job, waiting.id).created_at = utcnow() - timedelta(hours=2)
    db.session.commit()
    taken = _generate(client, headers, ON)
    assert taken.status_code == 202 and taken.get_json()["state"] == "queued"  # runs once committed
    taken = client.get(f"{API}/jobs/{taken.get_json()['id']}", headers=headers).get_json()
    assert taken["state"] == "done" and taken["result"]["semana"] == "2026-W47"
    old = client.get(f"{API}/jobs/{waiting.id}", headers=headers).get_json()
    assert old["state"] == "failed" and "parou" in old["error"]


def test_a_retried_generation_job_does_the_work_once(app, client, ctx, planner):
    from services import job_queue

    build_network()
    _, headers = planner
    job_id = _generate(client, headers).get_json()["id"]
    before = db.session.scalar(select(func.count()).select_from(Recomendacao))
    # What the engine does when it retries a job whose worker it lost after the work was done.
    job_queue.run_in_thread(app, "services.jobs:run_job", job_id)
    assert db.session.scalar(select(func.count()).select_from(Recomendacao)) == before
    assert db.session.get(Job, uuid.UUID(job_id)).attempts == 1


def _free_shipping():
    """Shipping costs are shared by the items of a route, which couples products; without them
    each product is solved on its own, as a partition does."""
    from services.stock.rules import get_rules

    rules = get_rules(for_update=True)
    rules.custo_envio = rules.custo_km = 0
    db.session.flush()


def test_partitions_give_the_batch_of_one_engine_run(ctx, app):
    """Splitting the products over workers changes nothing in the batch when products are
    independent (no shared shipping cost)."""
    from services import jobs
    from services.stock import demo, generation, partitions

    demo.load(n_stores=10, n_products=18, seed=7)
    _free_shipping()
    db.session.flush()
    single = generation.generate(ON)
    expected = _batch_rows(single.lote.id)
    assert len(expected) > 20
    db.session.rollback()  # the single run was only for comparison

    demo.load(n_stores=10, n_products=18, seed=7)
    _free_shipping()
    job, _ = partitions.request_generation(ON, actor=None, partitions=4, dispatch=False)
    db.session.commit()
    progress: list[tuple[int, str]] = []
    jobs.run_job(job.id, listener=lambda percent, message: progress.append((percent, message)))
    job = db.session.get(Job, job.id)
    assert job.state == "done", job.error
    assert job.result["particoes"] == 4
    assert _batch_rows(uuid.UUID(job.result["lote_id"])) == expected
    percents = [p for p, _ in progress]
    assert percents == sorted(percents) and percents[-1] < 100
    assert not jobs.spool_dir(job.id).exists()  # the partitions' files go with the job


def _batch_rows(lote_id) -> list[tuple]:
    """The batch by natural keys (store codes, SKU): ids differ between two loads of the demo."""
    from sqlalchemy.orm import aliased

    from models.stock import Produto

    origem, destino = aliased(Loja), aliased(Loja)
    rows = db.session.execute(
        select(
            origem.codigo,
            destino.codigo,
            Produto.sku,
            Recomendacao.tamanho,
            Recomendacao.quantidade,
            Recomendacao.score,
            Recomendacao.prioridade,
            Recomendacao.justificativa,
        )
        .join(origem, origem.id == Recomendacao.origem_id)
        .join(destino, destino.id == Recomendacao.destino_id)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .where(Recomendacao.lote_id == lote_id)
    )
    return sorted(tuple(str(v) for v in row) for row in rows)


def test_a_failed_generation_records_its_error_and_writes_nothing(client, ctx, planner, monkeypatch):
    from services.stock import engine

    build_network()
    _, headers = planner

    def broken(*_args, **_kwargs):
        raise MemoryError("out of memory")

    monkeypatch.setattr(engine, "recommend", broken)
    job_id = _generate(client, headers).get_json()["id"]
    body = client.get(f"{API}/jobs/{job_id}", headers=headers).get_json()
    assert body["state"] == "failed" and body["finished_at"]
    assert body["error"] == "Erro interno (MemoryError); detalhes no log do worker"  # no internals
    assert client.get(f"{REM}/lotes", headers=headers).get_json() == []
    monkeypatch.undo()
    # The failure released the week: asking again works.
    again = _generate(client, headers)
    assert again.status_code == 202
    assert client.get(f"{API}/jobs/{again.get_json()['id']}", headers=headers).get_json()["state"] == "done"


def test_the_cli_runs_the_generation_as_a_recorded_job(runner, ctx):
    from services.stock import demo

    demo.load(n_stores=5, n_products=6, seed=3)
    out = runner.invoke(args=["batches", "generate", "--date", ON.isoformat(), "--partitions", "2"])
    assert out.exit_code == 0, out.output
    assert "created for 2026-W47" in out.output and "2 partition(s)" in out.output
    job = db.session.scalar(select(Job))
    assert job.kind == "lote" and job.state == "done" and job.requested_by_id is None
    shown = runner.invoke(args=["jobs", "show", str(job.id)])
    assert "state: done" in shown.output and "progress: 100" in shown.output


def test_the_job_page_shows_a_live_progress_bar_until_the_job_ends(app, client, ctx, planner):
    from services.stock import partitions

    build_network()
    user, _ = planner
    sign_in(client, user)
    job, _ = partitions.request_generation(ON, actor=user, dispatch=False)
    db.session.commit()
    url = f"/remanejamento/tarefas/{job.id}"
    waiting = client.get(url, headers={"HX-Request": "true"})
    html = waiting.get_data(as_text=True)
    assert waiting.status_code == 200 and 'hx-trigger="every 1s"' in html and "<html" not in html
    assert 'aria-valuenow="0"' in html and "Na fila" in html

    from services import jobs

    jobs.run_job(job.id)
    done = client.get(url, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "hx-trigger" not in done and 'aria-valuenow="100"' in done and "Abrir o lote" in done
    listing = client.get("/remanejamento/tarefas").get_data(as_text=True)
    assert "Gerar lote agora" in listing and "Geração de lote" in listing
    # Someone else's job is not found.
    other = make_user(papel="gerente_loja", loja=db.session.scalar(select(Loja).limit(1)))
    stranger = app.test_client()
    sign_in(stranger, other)
    assert stranger.get(url).status_code == 404


@pytest.mark.committing
def test_a_generation_shows_each_step_to_whoever_polls_it_as_the_step_starts(app, monkeypatch):
    """Progress goes on a connection of its own, committed at once: someone polling the job
    (the page, another process) reads each step of a generation while the job runs, on
    SQLite too, where the job's own transaction, once open, holds the one write lock."""
    from sqlalchemy import create_engine

    from services import jobs
    from services.stock import partitions

    monkeypatch.setitem(app.config, "JOBS_EAGER", False)  # as in production: a worker, not inline
    with app.app_context():
        build_network()
        job, _ = partitions.request_generation(ON, actor=None, dispatch=False)
        db.session.commit()
        job_id = job.id
    poller = create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
    polled: list[tuple[str, str]] = []

    def poll(_percent: int, message: str) -> None:
        with poller.connect() as conn:
            polled.append((message, conn.scalar(select(Job.message).where(Job.id == job_id))))

    try:
        with app.app_context():
            jobs.run_job(job_id, listener=poll)
            assert db.session.get(Job, job_id).state == "done"
    finally:
        poller.dispose()
    steps = ("lendo a rede", "estimando a demanda", "1 partição a calcular")
    assert [m for m, _ in polled][:3] == list(steps)
    assert [seen for m, seen in polled if m in steps] == list(steps)


def test_the_gerar_lote_button_starts_the_job(client, ctx, planner):
    build_network()
    user, headers = planner
    csrf = sign_in(client, user)
    answer = client.post("/remanejamento/tarefas/gerar-lote", data={"data": ON.isoformat()}, headers=hx(csrf))
    assert answer.status_code == 200 and answer.headers["HX-Redirect"].startswith("/remanejamento/tarefas/")
    job_id = answer.headers["HX-Redirect"].rsplit("/", 1)[1]
    assert client.get(f"{API}/jobs/{job_id}", headers=headers).get_json()["state"] == "done"


def test_a_csv_import_from_the_page_runs_as_a_job_and_a_repeat_doubles_nothing(app, client, ctx):
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    csv = "codigo,nome,cidade,lat,lng,is_cd,bloqueada\nLJ900,Loja Nova,Campinas,-22.9,-47.06,false,false\n"

    def upload():
        return client.post(
            "/remanejamento/tarefas/importar",
            data={"tipo": "stores", "arquivo": (io.BytesIO(csv.encode()), "lojas.csv")},
            headers={"X-CSRF-TOKEN": csrf},
            content_type="multipart/form-data",
        )

    first = upload()
    assert first.status_code == 303, first.get_data(as_text=True)
    job = db.session.scalar(select(Job).where(Job.kind == "importacao"))
    assert job.state == "done" and job.result["inseridas"] == 1
    assert upload().status_code == 303
    assert db.session.scalar(select(func.count()).select_from(Loja).where(Loja.codigo == "LJ900")) == 1
    results = [j.result for j in db.session.scalars(select(Job).order_by(Job.created_at))]
    assert [r["inseridas"] for r in results] == [1, 0] and results[1]["inalteradas"] == 1

    bad = client.post(
        "/remanejamento/tarefas/importar",
        data={"tipo": "stores", "arquivo": (io.BytesIO(b"codigo,nome\nX,Y\n"), "ruim.csv")},
        headers={"X-CSRF-TOKEN": csrf},
        content_type="multipart/form-data",
    )
    failed = db.session.get(Job, uuid.UUID(bad.headers["Location"].rsplit("/", 1)[1]))
    assert failed.state == "failed" and failed.error.startswith("Arquivo recusado, nada foi importado")

    other = app.test_client()
    other_csrf = sign_in(other, make_user(papel="planejador"))
    refused = other.post(
        "/remanejamento/tarefas/importar",
        data={"tipo": "stores", "arquivo": (io.BytesIO(csv.encode()), "lojas.csv")},
        headers={"X-CSRF-TOKEN": other_csrf},
        content_type="multipart/form-data",
    )
    assert refused.status_code == 403


def test_account_emails_leave_from_a_job_that_keeps_no_link(client, ctx):
    user = make_user(papel="planejador")
    with captured_mail() as outbox:
        answer = client.post(f"{API}/auth/password/forgot", json={"email": user.email})
        assert answer.status_code in (200, 202, 204)
    assert len(outbox) == 1 and "reset-password?token=" in outbox[0].get_content()
    job = db.session.scalar(select(Job).where(Job.kind == "email"))
    assert job.state == "done" and job.params == {}  # the reset link is not kept at rest


def test_a_rolled_back_request_sends_nothing(ctx, app):
    from services.mail import queue_mail

    with captured_mail() as outbox:
        queue_mail("someone@example.com", "subject", "body")
        db.session.rollback()
        db.session.commit()
    assert outbox == []


def test_mail_queued_inside_a_savepoint_leaves_only_when_the_request_commits(ctx):
    """Releasing a SAVEPOINT is not the commit: the job waits; rolling one back forgets it."""
    from services.mail import queue_mail

    with captured_mail() as outbox:
        queue_mail("before@example.com", "subject", "body")
        with db.session.begin_nested():
            queue_mail("kept@example.com", "subject", "body")
        assert outbox == []
        savepoint = db.session.begin_nested()
        queue_mail("forgotten@example.com", "subject", "body")
        savepoint.rollback()
        db.session.commit()
    assert sorted(message["To"] for message in outbox) == ["before@example.com", "kept@example.com"]


def test_enqueue_call_runs_any_service_function(ctx):
    from services import jobs

    job = jobs.enqueue_call("services.auth:normalize_email", "  Ana@Example.COM ")
    db.session.commit()
    job = db.session.get(Job, job.id)
    assert job.kind == "call" and job.state == "done"
    with pytest.raises(ValueError):
        jobs.enqueue_call("no-colon")


def test_a_job_queued_while_its_process_stops_stays_queued_and_the_commit_stands(app, ctx, monkeypatch):
    """A job running in a thread of a stopping process (gunicorn ending a worker) commits
    and queues another: the pool no longer takes work, the commit must not fail for it."""
    from concurrent.futures import ThreadPoolExecutor

    from services import job_queue, jobs

    monkeypatch.setitem(app.config, "JOBS_EAGER", False)
    monkeypatch.setitem(app.config, "REDIS_URL", None)
    stopped = ThreadPoolExecutor(max_workers=1)
    stopped.shutdown()
    monkeypatch.setitem(job_queue._pools, id(app), stopped)
    job = jobs.enqueue_call("services.auth:normalize_email", "ana@example.com")
    db.session.commit()
    assert db.session.get(Job, job.id).state == "queued"


def test_the_catalogue_of_kinds_imports_every_module_that_registers_one():
    from services import job_kinds, jobs

    registering = {module.__name__ for module in job_kinds.REGISTERING} | {jobs.__name__}
    assert {kind.run.__module__ for kind in jobs.KINDS.values()} <= registering
    assert sorted(jobs.KINDS) == [
        "avisos_estoque",
        "busca",
        "call",
        "email",
        "importacao",
        "lote",
        "notificacoes",
        "operacoes",
        "resumo_semanal",
        "webhooks",
    ]


@pytest.mark.committing
def test_a_key_taken_and_let_go_between_a_conflict_and_the_look_is_taken_again(app, monkeypatch):
    """Two writes in one organization ask for a search run at once. The other request's job takes
    the key between this one's look and its insert, and its run frees the key as it starts
    before this one looks again: the key is free, and this request queues the next run (it used
    to answer 500). SQLite lets one writer in at a time, so the interleaving cannot occur there."""
    from sqlalchemy import create_engine, event, insert, update

    from services import jobs
    from services.tracker import search_index

    key = f"busca:{uuid.uuid4()}"
    other = create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
    prune = jobs._prune

    def prune_while_another_request_takes_the_key() -> None:
        with other.begin() as conn:
            conn.execute(
                insert(Job.__table__).values(
                    id=uuid.uuid4(),
                    kind=search_index.KIND,
                    state="queued",
                    progress=0,
                    message="na fila",
                    params={},
                    lock_key=key,
                    attempts=0,
                    created_at=utcnow(),
                )
            )
        prune()

    def its_run_lets_the_key_go(context) -> None:
        if "uq_jobs_lock_key" in str(context.original_exception):
            with other.begin() as conn:
                conn.execute(update(Job.__table__).where(Job.lock_key == key).values(lock_key=None))

    monkeypatch.setattr(jobs, "_prune", prune_while_another_request_takes_the_key)
    try:
        with app.app_context():
            if db.engine.dialect.name != "postgresql":
                pytest.skip("SQLite serializes writers: two enqueues cannot interleave")
            event.listen(db.engine, "handle_error", its_run_lets_the_key_go)
            try:
                job, created = jobs.enqueue(search_index.KIND, {}, actor=None, lock_key=key, dispatch=False)
                db.session.commit()
            finally:
                event.remove(db.engine, "handle_error", its_run_lets_the_key_go)
            assert created and db.session.get(Job, job.id).lock_key == key
            assert (
                db.session.scalar(select(func.count()).select_from(Job).where(Job.kind == search_index.KIND))
                == 2
            )
    finally:
        other.dispose()
