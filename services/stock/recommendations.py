"""Reading recommendations: who sees which, one or a filtered, sorted, searched page of them.

The filter (``FiltroRecomendacoes``) is the API's list query and the batch page's
controls alike; a ``gerente_loja`` sees only the transfers into or out of its store
(``visible_condition``), whoever asks.

The pages list ``Recomendacao`` objects (a page of them); the API's lists and a whole
batch read ``LISTED_COLUMNS`` as SQL rows (``*_rows``, ``lote_chunks``): thousands of
them per response, where building ORM objects would cost more than the query.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import psycopg
from psycopg.rows import namedtuple_row, scalar_row
from sqlalchemy import (
    Integer,
    Row,
    String,
    and_,
    bindparam,
    case,
    exists,
    false,
    func,
    literal_column,
    or_,
    select,
)
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.base import UTCDateTime
from models.stock import Loja, Produto
from models.stock_batches import STATUS_RECOMENDACAO, Lote, Recomendacao
from services import live_polls
from services.errors import (
    NotFoundError,
)
from services.rows import DriverRead

LIST_ORDER = (Recomendacao.prioridade_rank, Recomendacao.score.desc(), Recomendacao.posicao, Recomendacao.id)
# The list order backwards: a list sorted by priority, descending.
LIST_ORDER_REVERSED = (
    Recomendacao.prioridade_rank.desc(),
    Recomendacao.score,
    Recomendacao.posicao.desc(),
    Recomendacao.id.desc(),
)

# What a listed recommendation carries: the move, its figures and its decision state, without
# the bookkeeping (the batch, the engine's order, who acted last). Attributes keep the model's names.
LISTED_COLUMNS = (
    Recomendacao.id,
    Recomendacao.produto_id,
    Recomendacao.cor,
    Recomendacao.tamanho,
    Recomendacao.destino_id,
    Recomendacao.origem_id,
    Recomendacao.tipo_origem,
    Recomendacao.quantidade,
    Recomendacao.estoque_destino,
    Recomendacao.venda_media_destino,
    Recomendacao.estoque_origem,
    Recomendacao.venda_media_origem,
    Recomendacao.distancia_km,
    Recomendacao.justificativa,
    Recomendacao.prioridade,
    Recomendacao.status,
    Recomendacao.dias_ate_ruptura,
    Recomendacao.em_campanha,
    Recomendacao.score,
    Recomendacao.data,
    Recomendacao.vetado,
    Recomendacao.motivo_veto,
    Recomendacao.motivo_recusa,
    Recomendacao.motivo_recusa_texto,
    Recomendacao.quantidade_recebida,
    Recomendacao.recebida_em,
    Recomendacao.venda_extra_esperada,
)
# Rows a whole batch reads from its cursor at a time: memory holds one chunk, whatever the batch.
CHUNK_ROWS = 2000


def visible_condition(user: User):
    """SQL condition on ``Recomendacao`` for what ``user`` may see.

    A ``gerente_loja`` sees the transfers into or out of its own store only (none
    without a store); every other role sees everything.
    """
    if user.papel != "gerente_loja":
        return None
    if user.loja_id is None:
        return false()
    return or_(Recomendacao.origem_id == user.loja_id, Recomendacao.destino_id == user.loja_id)


def _visibility(user: User) -> str:
    """``visible_condition``'s cases by name: "all", "none" (a manager without a store) or "loja"."""
    if user.papel != "gerente_loja":
        return "all"
    return "none" if user.loja_id is None else "loja"


def scoped(stmt, user: User):
    cond = visible_condition(user)
    return stmt if cond is None else stmt.where(cond)


def missing_lote() -> NotFoundError:
    """The 404 of a batch that does not exist."""
    return NotFoundError("Lote não encontrado", reason="lote_not_found")


def get_lote(lote_id: uuid.UUID) -> Lote:
    lote = db.session.get(Lote, lote_id)
    if lote is None:
        raise missing_lote()
    return lote


def newest_lote() -> Lote | None:
    return db.session.scalar(select(Lote).order_by(Lote.inicio.desc()).limit(1))


# Built once, at import: the read endpoints that need only a batch's id run these on every
# request, and a reused statement keeps its compiled form and cache key. Plain ids, no ``Lote``.
_LOTE_ID = select(Lote.id).where(Lote.id == bindparam("lote_id"))
_NEWEST_LOTE_ID = select(Lote.id).order_by(Lote.inicio.desc()).limit(1)


def existing_lote_id(lote_id: uuid.UUID) -> uuid.UUID:
    """``lote_id`` when that batch exists (``get_lote`` without loading it); 404 otherwise."""
    if db.session.scalar(_LOTE_ID, {"lote_id": lote_id}) is None:
        raise missing_lote()
    return lote_id


def newest_lote_id() -> uuid.UUID | None:
    """The id of ``newest_lote()``."""
    return db.session.scalar(_NEWEST_LOTE_ID)


def newest_lote_id_subquery():
    """``newest_lote_id()`` inside another statement (NULL when there is no batch)."""
    return _NEWEST_LOTE_ID.scalar_subquery()


def get_recomendacao(rid: uuid.UUID, user: User, *, lote_id: uuid.UUID | None = None) -> Recomendacao:
    """One recommendation the user may see; 404 otherwise (no hint that it exists)."""
    stmt = scoped(select(Recomendacao).where(Recomendacao.id == rid), user)
    if lote_id is not None:
        stmt = stmt.where(Recomendacao.lote_id == lote_id)
    rec = db.session.scalar(stmt)
    if rec is None:
        raise NotFoundError("Recomendação não encontrada", reason="recomendacao_not_found")
    return rec


def _decided_after(scope: str) -> DriverRead:
    """The batch's id, and whether one of its rows that ``scope`` sees was decided after ``moment``."""
    decided = [
        Recomendacao.lote_id == Lote.id,
        Recomendacao.ultima_acao_em > bindparam("moment", type_=UTCDateTime),
    ]
    if scope == "loja":
        loja = bindparam("loja_id", type_=Recomendacao.origem_id.type)
        decided.append(or_(Recomendacao.origem_id == loja, Recomendacao.destino_id == loja))
    probe = exists().where(*decided).label("decided")
    return DriverRead(select(Lote.id, probe).where(Lote.id == bindparam("lote_id", type_=Lote.id.type)))


# Built once: an open batch page runs it every few seconds (its live updates).
_DECIDED_AFTER = {scope: _decided_after(scope) for scope in ("all", "loja")}


def changed_after(lote_id: uuid.UUID, user: User, moment: datetime | None) -> bool:
    """Whether a recommendation of the batch that ``user`` sees was decided after ``moment``,
    in one statement over ``ix_recomendacoes_lote_decididas`` (always, without a ``moment``);
    404 when there is no such batch."""
    scope = _visibility(user)
    params = {"lote_id": lote_id, "moment": moment or datetime(1970, 1, 1, tzinfo=UTC)}
    if scope == "loja":
        params["loja_id"] = user.loja_id
    row = _DECIDED_AFTER["all" if scope == "none" else scope].first(params)
    if row is None:
        raise missing_lote()
    # A page without a version of ours gets the rows as they are.
    return moment is None or (scope != "none" and bool(row[1]))


def _quiet_batch() -> DriverRead:
    """The session's account (``live_polls``) with its stock role, whether the batch exists, and
    whether a row of it that the account sees was decided after ``moment`` (``visible_condition``
    written on the account's columns, as ``_decided_after`` writes it for each case)."""
    users, recs = User.__table__, Recomendacao.__table__
    lote_id = bindparam("lote_id", type_=Lote.id.type)
    sees = or_(
        # Written into the SQL: ``DriverRead`` binds only the named parameters.
        users.c.papel != literal_column("'gerente_loja'"),
        recs.c.origem_id == users.c.loja_id,
        recs.c.destino_id == users.c.loja_id,
    )
    decided = exists().where(
        recs.c.lote_id == lote_id, recs.c.ultima_acao_em > bindparam("moment", type_=UTCDateTime), sees
    )
    found = exists().where(Lote.__table__.c.id == lote_id)
    return DriverRead(
        select(*live_polls.account_columns(), users.c.papel, found.label("found"), decided.label("decided"))
        .select_from(users)
        .where(users.c.id == live_polls.ACCOUNT_ID)
    )


# Built once: an open batch page runs it every few seconds (and benchmarks/live_polls.py's bare app).
QUIET_BATCH = _quiet_batch()


def batch_quiet(caller: live_polls.Caller, lote_id: uuid.UUID, moment: datetime) -> bool:
    """A live poll's "nothing changed" in one statement: the session holds, the account has a
    stock role, the batch exists and ``changed_after`` would say False. Anything else is False
    and the poll goes the full way (its refusal, or the changed rows)."""
    row = QUIET_BATCH.first_alone({**caller.params(), "lote_id": lote_id, "moment": moment})
    if row is None or not live_polls.session_holds(caller, row.banned, row.sessions_valid_after, row.denied):
        return False
    return row.papel is not None and bool(row.found) and not row.decided


def changed_among(
    lote_id: uuid.UUID, user: User, ids: Sequence[uuid.UUID], moment: datetime | None
) -> list[Recomendacao]:
    """Those of ``ids`` (the rows a page shows) decided after ``moment``, as ``user`` sees them."""
    if not ids:
        return []
    stmt = select(Recomendacao).where(Recomendacao.lote_id == lote_id, Recomendacao.id.in_(ids))
    if moment is not None:
        stmt = stmt.where(Recomendacao.ultima_acao_em > moment)
    return list(db.session.scalars(scoped(stmt, user)))


@dataclass(frozen=True)
class FiltroRecomendacoes:
    """What a list of recommendations keeps, in which order, and which page of it.

    The filters match exactly; ``None`` does not filter. ``ordem`` is one of ``SORTS``.
    """

    lote_id: uuid.UUID | None = None  # the newest batch when None
    produto_id: uuid.UUID | None = None
    destino_id: uuid.UUID | None = None
    origem_id: uuid.UUID | None = None
    prioridade: str | None = None
    status: str | None = None
    tipo_origem: str | None = None
    vetado: bool | None = None
    # Words matched, case-insensitively, inside the SKU, the product's name or the origin's
    # or destination's name or code.
    q: str | None = None
    ordem: str = "prioridade"
    desc: bool = False
    limite: int | None = None
    offset: int = 0


# The exact-match filters: attribute of ``FiltroRecomendacoes`` and the column it matches.
FILTER_COLUMNS = (
    ("produto_id", Recomendacao.produto_id),
    ("destino_id", Recomendacao.destino_id),
    ("origem_id", Recomendacao.origem_id),
    ("prioridade", Recomendacao.prioridade),
    ("status", Recomendacao.status),
    ("tipo_origem", Recomendacao.tipo_origem),
    ("vetado", Recomendacao.vetado),
)
# Orders of the list besides its own (``prioridade``); ties keep the list order.
SORTS = (
    "prioridade",
    "score",
    "quantidade",
    "ruptura",
    "produto",
    "origem",
    "destino",
    "distancia",
    "status",
)


def listed(user: User, filtro: FiltroRecomendacoes, columns: Sequence = ()):
    """The statement of the list's rows (``None`` when there is no batch at all): ``Recomendacao``
    objects, or ``columns`` when given."""
    lote_id = newest_lote_id() if filtro.lote_id is None else existing_lote_id(filtro.lote_id)
    if lote_id is None:
        return None
    stmt = select(*columns) if columns else select(Recomendacao)
    stmt = stmt.where(Recomendacao.lote_id == lote_id)
    for name, column in FILTER_COLUMNS:
        value = getattr(filtro, name)
        if value is not None:
            stmt = stmt.where(column == value)
    if filtro.q and filtro.q.strip():
        stmt = stmt.where(search_condition(filtro.q))
    return scoped(stmt, user)


def _search_words(q: str | None) -> list[str]:
    return q.lower().split()[:8] if q else []


def _like_pattern(word: str) -> str:
    # LIKE's wildcards in the text are matched literally.
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _word_condition(pattern):
    """One word of a search (a LIKE pattern, or a bound parameter that will hold one)."""

    def like(column):
        return func.lower(column).like(pattern, escape="\\")

    produtos = select(Produto.id).where(or_(like(Produto.sku), like(Produto.nome)))
    lojas = select(Loja.id).where(or_(like(Loja.nome), like(Loja.codigo)))
    return or_(
        Recomendacao.produto_id.in_(produtos),
        Recomendacao.origem_id.in_(lojas),
        Recomendacao.destino_id.in_(lojas),
    )


def search_condition(q: str):
    """SQL condition: every word of ``q`` is in the SKU or name of the product, or in the name
    or code of the origin or destination (a word may match any of them)."""
    conditions = [_word_condition(_like_pattern(word)) for word in _search_words(q)]
    return conditions[0] if len(conditions) == 1 else and_(*conditions)


def list_recomendacoes(user: User, filtro: FiltroRecomendacoes) -> list[Recomendacao]:
    """Recommendations of one batch (``lote_id``, else the newest), filters matching exactly.

    Order: priority (alta, media, baixa), score descending, then the engine's order;
    ``ordem`` (one of ``SORTS``) and ``desc`` sort by another column, ties in that order.
    ``vetado`` keeps only the vetoed (or only the other) ones. ``limite``/``offset`` page.
    """
    stmt = listed(user, filtro)
    if stmt is None:
        return []
    stmt = _sorted(stmt, filtro.ordem, filtro.desc)
    return list(db.session.scalars(_page(stmt, filtro.limite, filtro.offset)))


def list_recomendacao_rows(user: User, filtro: FiltroRecomendacoes) -> Sequence[Row]:
    """``list_recomendacoes`` as rows of ``LISTED_COLUMNS``: same visibility, filters, search,
    order and page, without an ORM object per recommendation (the API's list)."""
    filters = tuple(name for name, _ in FILTER_COLUMNS if getattr(filtro, name) is not None)
    words = _search_words(filtro.q)
    scope = _visibility(user)
    stmt = _listed_rows(
        filtro.lote_id is None,
        filters,
        len(words),
        scope,
        filtro.ordem,
        filtro.desc,
        filtro.limite is not None,
        db.session.get_bind().dialect.name,
    )
    values: dict[str, Any] = {"lote_id": filtro.lote_id, "offset": filtro.offset, "limite": filtro.limite}
    values.update((f"filtro_{name}", getattr(filtro, name)) for name in filters)
    values.update((f"palavra_{i}", _like_pattern(word)) for i, word in enumerate(words))
    if scope == "loja":
        values["loja_id"] = user.loja_id
    rows = db.session.execute(stmt, values).all()
    if not rows and filtro.lote_id is not None:
        existing_lote_id(filtro.lote_id)  # nothing listed: 404 when the batch itself is missing
    return rows


@lru_cache(maxsize=256)
def _listed_rows(
    newest: bool,
    filters: tuple[str, ...],
    words: int,
    scope: str,
    ordem: str,
    desc: bool,
    paged: bool,
    dialect: str,
):
    """The API list's statement for one shape of query, its values bound when run.

    Built once per shape and kept: the list is the stock API's most read endpoint, and building
    its statement (27 columns, filters, order, page) and cache key cost about as much as running
    it. The same conditions as ``listed``, ``scoped``, ``_sorted`` and ``_page``; ``dialect`` is
    part of the shape because the text sorts are written per database (``_text_key``). The
    newest batch (``newest``) is found inside the statement: one round trip, and no rows when
    there is no batch at all.
    """
    lote_id = newest_lote_id_subquery() if newest else bindparam("lote_id")
    stmt = select(*LISTED_COLUMNS).where(Recomendacao.lote_id == lote_id)
    columns = dict(FILTER_COLUMNS)
    for name in filters:
        stmt = stmt.where(columns[name] == bindparam(f"filtro_{name}"))
    if words:
        conditions = [_word_condition(bindparam(f"palavra_{i}", type_=String)) for i in range(words)]
        stmt = stmt.where(conditions[0] if words == 1 else and_(*conditions))
    if scope == "none":
        stmt = stmt.where(false())
    elif scope == "loja":
        loja_id = bindparam("loja_id")
        stmt = stmt.where(or_(Recomendacao.origem_id == loja_id, Recomendacao.destino_id == loja_id))
    stmt = _sorted(stmt, ordem, desc, dialect).offset(bindparam("offset", type_=Integer))
    return stmt.limit(bindparam("limite", type_=Integer)) if paged else stmt


def count_recomendacoes(user: User, filtro: FiltroRecomendacoes) -> int:
    """How many recommendations ``list_recomendacoes`` finds with ``filtro``, all pages together."""
    stmt = listed(user, filtro)
    if stmt is None:
        return 0
    return db.session.scalar(select(func.count()).select_from(stmt.subquery())) or 0


def _sorted(stmt, ordem: str, desc: bool, dialect: str | None = None):
    if ordem == "prioridade":
        return stmt.order_by(*(LIST_ORDER_REVERSED if desc else LIST_ORDER))
    keys: tuple
    if ordem == "produto":
        stmt = stmt.join(Produto, Produto.id == Recomendacao.produto_id)
        keys = (_text_key(Produto.nome, dialect), _text_key(Recomendacao.tamanho, dialect))
    elif ordem in ("origem", "destino"):
        loja = aliased(Loja)
        column = Recomendacao.origem_id if ordem == "origem" else Recomendacao.destino_id
        stmt = stmt.join(loja, loja.id == column)
        keys = (_text_key(loja.nome, dialect),)
    elif ordem == "status":
        # The workflow's order, vetoed ones last.
        keys = (
            Recomendacao.vetado,
            case({s: i for i, s in enumerate(STATUS_RECOMENDACAO)}, value=Recomendacao.status),
        )
    else:
        columns = {
            "score": Recomendacao.score,
            "quantidade": Recomendacao.quantidade,
            "ruptura": Recomendacao.dias_ate_ruptura,
            "distancia": Recomendacao.distancia_km,
        }
        keys = (columns[ordem],)
    return stmt.order_by(*(key.desc() if desc else key for key in keys), *LIST_ORDER)


def _text_key(column, dialect: str | None = None):
    """Case-insensitive, by code point on both databases (PostgreSQL would otherwise use its locale)."""
    lowered = func.lower(column)
    dialect = dialect or db.session.get_bind().dialect.name
    return lowered.collate("C") if dialect == "postgresql" else lowered


def _lote_rows(lote_id: uuid.UUID, user: User, ativas: bool):
    stmt = select(*LISTED_COLUMNS).where(Recomendacao.lote_id == lote_id)
    if ativas:
        stmt = stmt.where(active_condition())
    return scoped(stmt, user).order_by(*LIST_ORDER)


def lote_recomendacoes(
    lote_id: uuid.UUID, user: User, *, ativas: bool = False, limite: int | None = None, offset: int = 0
) -> Sequence[Row]:
    """The batch's recommendations ``user`` may see, in list order, as rows of ``LISTED_COLUMNS``;
    ``ativas`` leaves out the vetoed and the refused. 404 for an unknown batch."""
    existing_lote_id(lote_id)
    return db.session.execute(_page(_lote_rows(lote_id, user, ativas), limite, offset)).all()


def lote_chunks(lote_id: uuid.UUID, user: User, size: int | None = None) -> Iterator[Sequence[Row]]:
    """Every recommendation of the batch ``user`` may see, in list order, ``size`` rows at a time.

    The statement is built now, with the user's visibility; the rows are read only as the
    iterator is consumed (streamed by psycopg on PostgreSQL, SQLAlchemy's ``yield_per``
    elsewhere): rows with the columns' names as attributes. A response streams them after its
    request ended (committed, its session closed, ``user`` detached), in a session of their
    own that only reads; memory holds one chunk whatever the batch's size. The caller checks
    the batch exists first.
    """
    return _chunks(_lote_rows(lote_id, user, False), size or CHUNK_ROWS)


def _chunks(stmt, size: int) -> Iterator[Sequence[Row]]:
    connection = db.session.connection()
    if connection.dialect.name == "postgresql":
        yield from _streamed(connection, stmt, size)
        return
    result = db.session.execute(stmt, execution_options={"yield_per": size})
    try:
        yield from result.partitions()
    finally:
        result.close()


def lote_json_chunks(
    lote_id: uuid.UUID, user: User, row_json, size: int | None = None
) -> Iterator[bytes] | None:
    """``lote_chunks`` written by PostgreSQL: each chunk the JSON objects of up to ``size``
    recommendations, joined by commas (UTF-8), with ``row_json`` the text expression of one
    row over ``LISTED_COLUMNS`` (``schemas.fast.sql_json_object``). None on another database:
    the caller dumps ``lote_chunks`` instead. Lazy and bounded as ``lote_chunks``.

    The database writes each row's JSON as it reads the row, so the worker only joins text:
    about 2 µs a row instead of 26 (reading, dumping and encoding each value in Python).
    """
    if db.session.get_bind().dialect.name != "postgresql":
        return None
    stmt = scoped(select(row_json).where(Recomendacao.lote_id == lote_id), user).order_by(*LIST_ORDER)
    return _json_chunks(stmt, size or CHUNK_ROWS)


def _json_chunks(stmt, size: int) -> Iterator[bytes]:
    connection = db.session.connection()
    # The shortest text that reads back as the same double (PostgreSQL 12+), whatever the
    # server's default: what the Python path's float gives. Only for this transaction.
    connection.exec_driver_sql("SET LOCAL extra_float_digits = 1")
    for rows in _streamed(connection, stmt, size, scalar_row):
        yield ",".join(rows).encode()


def _streamed(connection, stmt, size: int, row_factory=namedtuple_row) -> Iterator[Sequence[Any]]:
    """The rows of ``stmt`` through psycopg's streaming (libpq's chunked mode): named tuples as
    the driver reads them (attributes named as the columns), ``size`` at a time.

    A whole batch read this way took a quarter of the time of the same read through a named
    cursor and SQLAlchemy's rows (``benchmarks/whole_batch.py``); memory holds one chunk.
    """
    compiled = stmt.compile(dialect=connection.dialect, compile_kwargs={"render_postcompile": True})
    cursor = connection.connection.driver_connection.cursor(row_factory=row_factory)
    # Chunked mode needs libpq 17; older ones stream row by row, which is still bounded.
    fetch = size if psycopg.pq.version() >= 170000 else 1
    chunk: list[Any] = []
    try:
        for row in cursor.stream(str(compiled), compiled.params, size=fetch):
            chunk.append(row)
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
    finally:
        cursor.close()


def _page(stmt, limite: int | None, offset: int):
    stmt = stmt.offset(offset)
    if limite is not None:
        stmt = stmt.limit(limite)
    return stmt


def active_condition():
    """Active = neither vetoed nor refused (``ativas=true``)."""
    return (Recomendacao.vetado == false()) & (Recomendacao.status != "recusada")


def distinct_values(lote_id: uuid.UUID, user: User) -> tuple[set[uuid.UUID], set[uuid.UUID], set[uuid.UUID]]:
    """The origins, destinations and products of the batch's recommendations ``user`` may see."""
    existing_lote_id(lote_id)
    stmt = select(Recomendacao.origem_id, Recomendacao.destino_id, Recomendacao.produto_id).where(
        Recomendacao.lote_id == lote_id
    )
    origens: set[uuid.UUID] = set()
    destinos: set[uuid.UUID] = set()
    produtos: set[uuid.UUID] = set()
    for origem, destino, produto in db.session.execute(scoped(stmt, user).distinct()):
        origens.add(origem)
        destinos.add(destino)
        produtos.add(produto)
    return origens, destinos, produtos
