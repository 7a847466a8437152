"""Keeping the search vectors current: every write queues its issue, a ``busca`` job embeds it.

Any transaction that creates an issue, changes its title or description, or
writes a comment (whatever service does it: the API, the pages, the demo, the
stock operations) leaves its issues in ``search_pending`` when it commits
(SQLAlchemy session events, so no writer can forget) and asks for one ``busca``
job per organization. The job is deduplicated while it waits in the queue
(``lock_key``); once it starts it gives the key up, so a write made while it
runs queues the next run rather than being missed. A run takes the
organization's ``search_models`` row lock (runs of one organization never
overlap), embeds the pending issues a batch at a time and removes exactly the
pending rows it read (a row re-queued meanwhile has a new ``queued_at`` and
stays).

The built-in encoder is refitted when the organization has grown by a tenth
since the last fit (and at ``flask tracker reindex-search``): every vector is
then remade in the same transaction, so a search never mixes two fits.
Deleting an issue needs no job: its rows go by cascade, and searches keep only
candidates that still exist.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
from flask import current_app
from sqlalchemy import delete, event, func, select, update
from sqlalchemy.orm import Session, attributes

from extensions import db
from models.base import utcnow
from models.jobs import Job
from models.tracker import Issue
from models.tracker_collab import Comment
from models.tracker_search import IssueVector, SearchModel, SearchPending
from services import job_queue, jobs, unique
from services.tracker import embeddings

log = logging.getLogger(__name__)

KIND = "busca"
BATCH = 500
MAX_WORDS_CHARS = 20_000  # keyword text kept per issue; beyond is pasted logs
REFIT_GROWTH = 1.1
REFIT_SLACK = 3

# ---------------------------------------------------------------------------------- queueing

_MARKED = "giro_search_marked"


@event.listens_for(Session, "after_flush")
def _collect(session: Session, _context) -> None:
    marked: set[uuid.UUID] = session.info.setdefault(_MARKED, set())
    for obj in session.new:
        if isinstance(obj, Issue):
            marked.add(obj.id)
        elif isinstance(obj, Comment):
            marked.add(obj.issue_id)
    for obj in session.dirty:
        if isinstance(obj, Issue) and any(
            attributes.get_history(obj, name).has_changes() for name in ("title", "description")
        ):
            marked.add(obj.id)
        elif isinstance(obj, Comment) and attributes.get_history(obj, "body").has_changes():
            marked.add(obj.issue_id)
    for obj in session.deleted:
        if isinstance(obj, Comment):
            marked.add(obj.issue_id)


@event.listens_for(Session, "before_commit")
def _queue_marked(session: Session) -> None:
    if session.in_nested_transaction() or not session.info.get(_MARKED):
        return
    session.flush()
    marked = session.info.pop(_MARKED, set())
    if marked:
        queue(sorted(marked))


@event.listens_for(Session, "after_soft_rollback")
def _forget_marked(session: Session, previous_transaction) -> None:
    if previous_transaction.parent is None:
        session.info.pop(_MARKED, None)


def queue(issue_ids: Iterable[uuid.UUID]) -> None:
    """Put the issues (those that still exist) in ``search_pending`` and ask for a run per
    organization; part of the caller's transaction."""
    ids = list(issue_ids)
    rows = db.session.execute(select(Issue.id, Issue.organization_id).where(Issue.id.in_(ids))).all()
    if not rows:
        return
    now = utcnow()
    statement = unique.insert(SearchPending.__table__)
    db.session.execute(
        statement.on_conflict_do_update(index_elements=["issue_id"], set_={"queued_at": now}),
        [{"issue_id": issue_id, "organization_id": org_id, "queued_at": now} for issue_id, org_id in rows],
    )
    for organization_id in sorted({org_id for _, org_id in rows}):
        request_run(organization_id)


def request_run(organization_id: uuid.UUID) -> None:
    if job_queue.uses_redis() and not current_app.config["JOBS_REDIS_FALLBACK"] and not job_queue.redis_ok():
        # The write must not fail for it: the rows wait in search_pending for the next run.
        log.warning("job queue down: search vectors wait for the next run")
        return
    jobs.enqueue(
        KIND, {"organization_id": str(organization_id)}, actor=None, lock_key=lock_key(organization_id)
    )


def lock_key(organization_id: uuid.UUID) -> str:
    return f"busca:{organization_id}"


@jobs.job_kind(KIND, service="tracker")
def run_search_index(context: jobs.JobContext) -> dict:
    organization_id = uuid.UUID(context.params["organization_id"])
    # From here on a new write queues a new run: this one may already have read the queue.
    db.session.execute(update(Job).where(Job.id == context.job_id).values(lock_key=None))
    db.session.commit()
    done = drain(organization_id, context.progress)
    return {"tarefas": done}


# ---------------------------------------------------------------------------------- encoders

# By organization and fit (version and time: a database rebuilt under a running process may
# reuse a version number).
_models: dict[tuple, embeddings.LsaModel] = {}
MAX_CACHED_MODELS = 64


def configured_encoder_name() -> str:
    directory = current_app.config.get("EMBEDDING_MODEL_DIR")
    return embeddings.onnx_encoder(directory).name if directory else embeddings.LsaModel.name


def encoder_of(model: SearchModel):
    """The encoder that made (and reads) the organization's vectors."""
    if model.encoder.startswith("onnx:"):
        return embeddings.onnx_encoder(current_app.config["EMBEDDING_MODEL_DIR"])
    key = (model.organization_id, model.version, model.fitted_at)
    if key not in _models:
        if len(_models) >= MAX_CACHED_MODELS:
            _models.pop(next(iter(_models)))
        _models[key] = embeddings.LsaModel.load(model.state)
    return _models[key]


def search_model(organization_id: uuid.UUID) -> SearchModel | None:
    return db.session.get(SearchModel, organization_id)


# ---------------------------------------------------------------------------------- documents


@dataclass
class Document:
    """What search reads of an issue: its text and where it lives."""

    id: uuid.UUID
    organization_id: uuid.UUID
    project_id: uuid.UUID
    title: str
    description: str | None
    comments: list[str] = field(default_factory=list)


def documents(issue_ids: list[uuid.UUID]) -> dict[uuid.UUID, Document]:
    """The issues (still present) with their comments' bodies, oldest first; read as columns."""
    found = {
        row.id: Document(*row)
        for row in db.session.execute(
            select(Issue.id, Issue.organization_id, Issue.project_id, Issue.title, Issue.description).where(
                Issue.id.in_(issue_ids)
            )
        )
    }
    for issue_id, body in db.session.execute(
        select(Comment.issue_id, Comment.body)
        .where(Comment.issue_id.in_(list(found)))
        .order_by(Comment.issue_id, Comment.created_at, Comment.id)
    ):
        found[issue_id].comments.append(body)
    return found


def embedding_text(doc: Document) -> str:
    # The title twice: it is what the issue is about, the rest is detail.
    return "\n".join([doc.title, doc.title, doc.description or "", *doc.comments])


def keyword_words(doc: Document) -> str:
    """The issue's words as keyword search reads them, each after a space (``LIKE '% word%'``
    finds the words that start with ``word``)."""
    text = " ".join([doc.title, doc.description or "", *doc.comments])
    return "".join(" " + embeddings.fold(word) for word in embeddings.words(text))[:MAX_WORDS_CHARS]


def _write_vectors(model: SearchModel, encoder, issue_ids: list[uuid.UUID]) -> int:
    """(Re)write the vectors of the issues still present; bumps the organization's revision."""
    found = documents(issue_ids)
    if not found:
        return 0
    ordered = list(found.values())
    vectors = encoder.encode([embedding_text(doc) for doc in ordered])
    model.revision += 1
    db.session.flush()
    now = utcnow()
    rows = [
        {
            "issue_id": doc.id,
            "organization_id": doc.organization_id,
            "project_id": doc.project_id,
            "model_version": model.version,
            "revision": model.revision,
            "vector": vector.astype(np.float32).tobytes(),
            "words": keyword_words(doc),
            "embedded_at": now,
        }
        for doc, vector in zip(ordered, vectors, strict=True)
    ]
    statement = unique.insert(IssueVector.__table__)
    columns = ("project_id", "model_version", "revision", "vector", "words", "embedded_at")
    db.session.execute(
        statement.on_conflict_do_update(
            index_elements=["issue_id"], set_={name: getattr(statement.excluded, name) for name in columns}
        ),
        rows,
    )
    return len(rows)


# ---------------------------------------------------------------------------------- runs

Progress = Callable[[float, str], None]


def _issue_count(organization_id: uuid.UUID) -> int:
    return db.session.scalar(select(func.count()).where(Issue.organization_id == organization_id)) or 0


def _locked_model(organization_id: uuid.UUID) -> SearchModel | None:
    return db.session.scalar(
        select(SearchModel).where(SearchModel.organization_id == organization_id).with_for_update()
    )


def _needs_refit(model: SearchModel | None, count: int) -> bool:
    if model is None or model.encoder != configured_encoder_name():
        return True
    return model.encoder == embeddings.LsaModel.name and count >= model.documents * REFIT_GROWTH + REFIT_SLACK


def drain(organization_id: uuid.UUID, progress: Progress | None = None) -> int:
    """Embed the organization's pending issues, a committed batch at a time; refits first when
    the organization outgrew its encoder. Answers how many issues were embedded."""
    done = 0
    while True:
        model = _locked_model(organization_id)
        if _needs_refit(model, _issue_count(organization_id)):
            done += reindex(organization_id, progress)
            continue
        pending = db.session.execute(
            select(SearchPending.issue_id, SearchPending.queued_at)
            .where(SearchPending.organization_id == organization_id)
            .order_by(SearchPending.queued_at)
            .limit(BATCH)
        ).all()
        if not pending:
            db.session.commit()
            return done
        done += _write_vectors(model, encoder_of(model), [issue_id for issue_id, _ in pending])
        for issue_id, queued_at in pending:
            db.session.execute(
                delete(SearchPending).where(
                    SearchPending.issue_id == issue_id, SearchPending.queued_at == queued_at
                )
            )
        db.session.commit()
        if progress is not None:
            progress(0.5, f"{done} tarefas indexadas")


def _all_issue_ids(organization_id: uuid.UUID) -> list[uuid.UUID]:
    return list(
        db.session.scalars(
            select(Issue.id).where(Issue.organization_id == organization_id).order_by(Issue.id)
        )
    )


def _fit(organization_id: uuid.UUID, ids: list[uuid.UUID], progress: Progress | None):
    """The encoder for the organization: the operator's model, or the built-in one fitted on
    (a sample of) its issues."""
    name = configured_encoder_name()
    if name != embeddings.LsaModel.name:
        return embeddings.onnx_encoder(current_app.config["EMBEDDING_MODEL_DIR"]), name
    sample = ids
    if len(ids) > embeddings.FIT_SAMPLE:
        picked = np.random.default_rng(0).choice(len(ids), embeddings.FIT_SAMPLE, replace=False)
        sample = [ids[i] for i in sorted(picked)]
    texts = []
    for start in range(0, len(sample), BATCH):
        texts += [embedding_text(doc) for doc in documents(sample[start : start + BATCH]).values()]
    if progress is not None:
        progress(0.05, "aprendendo o vocabulário da organização")
    return embeddings.fit(texts), name


def reindex(organization_id: uuid.UUID, progress: Progress | None = None) -> int:
    """Refit the organization's encoder and remake every vector, in one transaction (committed)."""
    model = _locked_model(organization_id)
    ids = _all_issue_ids(organization_id)
    encoder, name = _fit(organization_id, ids, progress)
    if model is None:
        model = SearchModel(organization_id=organization_id, version=0, revision=0)
        db.session.add(model)
    model.encoder = name
    model.version += 1
    model.dims = encoder.dims
    model.state = encoder.dump()
    model.documents = len(ids)
    model.fitted_at = utcnow()
    db.session.flush()
    done = 0
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        done += _write_vectors(model, encoder, batch)
        db.session.execute(delete(SearchPending).where(SearchPending.issue_id.in_(batch)))
        if progress is not None:
            progress(0.1 + 0.9 * (start + len(batch)) / len(ids), f"{done} de {len(ids)} tarefas indexadas")
    db.session.commit()
    return done
