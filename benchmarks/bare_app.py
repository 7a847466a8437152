"""The floor for ``api_overhead.py``: each measured endpoint as a bare Flask view.

Served by gunicorn next to the app (``benchmarks.bare_app:app``), on the same
database (``DATABASE_URL``) and ``JWT_SECRET_KEY``. Each view checks the bearer
token as the app must (signature, expiry and type with PyJWT, then in one
query: the account exists, is not banned, the token is not older than the
account's last password reset and was not ended by a logout), runs the fewest
SQL statements that give the app's body (the app's own queries, with the look-ups
it makes one by one folded into one join), and answers the rows as JSON. No ORM,
no marshmallow, no request hooks: what is left is the work no framework can
save. ``api_overhead.py`` checks every body here is the app's own before it
measures anything.

Only the happy path and the refusals a real client could meet are handled;
anything else is a 404 or 401 with a short body, not the app's dialect.
"""

from __future__ import annotations

import os
import uuid
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import jwt
from flask import Flask, abort, jsonify, request
from sqlalchemy import create_engine, event

from database import ping_connections_left_idle

DATABASE_URL = os.environ["DATABASE_URL"].replace("postgresql://", "postgresql+psycopg://", 1)
JWT_SECRET_KEY = os.environ["JWT_SECRET_KEY"]
TIMEZONE = ZoneInfo(os.environ.get("GIRO_TIMEZONE", "America/Sao_Paulo"))
STOCK_VERSION = os.environ.get("BARE_STOCK_VERSION", "0.1.0")
PRIORITIES = ("none", "low", "medium", "high", "urgent")
KEY_SIZES, MIN_RUN_FOR_KEYS, RULES_ID = 2, 3, 1
MAX_PER_PAGE, MAX_INDEXED_TERMS = 100, 1000

# One pooled engine per worker, as the app has; its connections see UTC, plan each
# statement for its values and are pinged after a second idle, as the app's are
# (app.register_database_hooks, database.py).
engine = create_engine(DATABASE_URL, pool_size=5)
ping_connections_left_idle(engine)


@event.listens_for(engine, "connect")
def _on_connect(dbapi_connection, _record):
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_custom_plan")
        cursor.execute("SET TimeZone = 'UTC'")
    dbapi_connection.commit()


app = Flask(__name__)
app.json.sort_keys = False


class Db:
    """One pooled DBAPI connection for the request, one transaction, committed at the end."""

    def __enter__(self):
        self.conn = engine.raw_connection()
        self.cur = self.conn.cursor()
        return self

    def __exit__(self, exc_type, *_):
        self.cur.close()
        if exc_type is None:
            self.conn.commit()
        else:
            self.conn.rollback()
        self.conn.close()

    def all(self, sql: str, params=()):
        self.cur.execute(sql, params)
        return self.cur.fetchall()

    def one(self, sql: str, params=()):
        self.cur.execute(sql, params)
        return self.cur.fetchone()


USER_SQL = (
    "SELECT u.id, u.name, u.email, u.papel, u.loja_id, u.pending_email, u.banned, "
    "u.sessions_valid_after, EXISTS (SELECT 1 FROM revoked_access_tokens r WHERE r.jti = %s) "
    "FROM users u WHERE u.id = %s"
)


def authenticate(db: Db, stock: bool = False) -> tuple:
    """The account behind the bearer token: (id, name, email, papel, loja_id, pending_email)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        abort(401)
    try:
        claims = jwt.decode(token.strip(), JWT_SECRET_KEY, algorithms=["HS256"])
        user_id = uuid.UUID(claims["sub"])
    except (jwt.PyJWTError, KeyError, ValueError):
        abort(401)
    if claims.get("type") != "access":
        abort(401)
    row = db.one(USER_SQL, (claims.get("jti"), user_id))
    if row is None or row[6] or row[8]:
        abort(401)
    issued = claims.get("ts", claims.get("iat", 0))
    if row[7] is not None and issued < row[7].timestamp():
        abort(401)
    if stock and row[3] is None:
        abort(403)
    return row[:6]


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def day(value) -> str | None:
    return None if value is None else value.isoformat()


def text(value) -> str | None:
    return None if value is None else str(value)


# --- health and the signed-in account --------------------------------------------------------


@app.get("/health")
def health():
    with Db() as db:
        db.one("SELECT 1")
    return jsonify(status="ok", service="remanejamento", database="ok", version=STOCK_VERSION)


@app.get("/api/v1/auth/me")
def me():
    with Db() as db:
        user_id, name, email, papel, loja_id, pending = authenticate(db, stock=True)
    parts = name.split()
    if not parts:
        iniciais = ""
    elif len(parts) == 1:
        iniciais = parts[0][:2].upper()
    else:
        iniciais = (parts[0][0] + parts[-1][0]).upper()
    return jsonify(
        id=str(user_id),
        nome=name,
        email=email,
        papel=papel,
        lojaId=text(loja_id),
        iniciais=iniciais,
        emailPendente=pending,
    )


# --- tracker issues --------------------------------------------------------------------------

ACCESS_SQL = (
    "SELECT p.id, p.key, p.issue_count, o.suspended, m.role, o.plan_features "
    "FROM workspaces w JOIN organizations o ON o.id = w.organization_id "
    "JOIN projects p ON p.id = %s AND p.workspace_id = w.id "
    "LEFT JOIN memberships m ON m.organization_id = o.id AND m.user_id = %s "
    "WHERE w.slug = %s"
)
ISSUE_COLUMNS = (
    "i.id, i.number, i.title, i.description, i.type, i.priority, i.parent_id, i.start_date, i.due_date, "
    "i.estimate, i.rank, i.created_at, i.updated_at, s.id, s.name, s.color, s.category, "
    "a.id, a.name, a.avatar_url, c.id, c.name"
)
ISSUE_JOINS = (
    "JOIN statuses s ON s.id = i.status_id LEFT JOIN users a ON a.id = i.assignee_id "
    "LEFT JOIN users c ON c.id = i.created_by_id"
)
LABELS_SQL = (
    "SELECT il.issue_id, l.id, l.name, l.color FROM issue_labels il JOIN labels l ON l.id = il.label_id "
    "WHERE il.issue_id = ANY(%s) ORDER BY l.name"
)
ORDERS = {"created_at": "i.created_at {d}, i.number {d}", "updated_at": "i.updated_at {d}, i.created_at {d}"}


def project_of(db: Db, user_id, slug: str, project_id: str) -> tuple:
    try:
        project_uuid = uuid.UUID(project_id)
    except ValueError:
        abort(404)
    row = db.one(ACCESS_SQL, (project_uuid, user_id, slug))
    if row is None or row[4] is None:
        abort(404)
    if row[3]:
        abort(403)
    return row


def custom_fields_of(db: Db, project, issue_ids) -> dict:
    """Every custom field of the project by slug; the bench project has none, so this answers
    ``{}`` after the same look-up the app makes (a project with fields is out of scope here)."""
    if not (project[5] or {}).get("custom_fields"):
        return {}
    rows = db.all(
        "SELECT f.slug, v.issue_id FROM custom_fields f LEFT JOIN custom_field_values v "
        "ON v.field_id = f.id AND v.issue_id = ANY(%s) WHERE f.project_id = %s ORDER BY f.position",
        (issue_ids, project[0]),
    )
    if rows:
        abort(501)
    return {}


def issue_body(row, key: str, project_id, labels, children_count: int) -> dict:
    return {
        "id": str(row[0]),
        "key": f"{key}-{row[1]}",
        "project_id": str(project_id),
        "title": row[2],
        "description": row[3],
        "type": row[4],
        "priority": PRIORITIES[row[5]],
        "status": {"id": str(row[13]), "name": row[14], "color": row[15], "category": row[16]},
        "assignee": None if row[17] is None else {"id": str(row[17]), "name": row[18], "avatar_url": row[19]},
        "labels": labels,
        "parent_id": text(row[6]),
        "children_count": children_count,
        "start_date": day(row[7]),
        "due_date": day(row[8]),
        "estimate": row[9],
        "rank": row[10],
        "created_by": None if row[20] is None else {"id": str(row[20]), "name": row[21]},
        "created_at": iso(row[11]),
        "updated_at": iso(row[12]),
    }


def labels_by_issue(db: Db, ids) -> dict:
    found = defaultdict(list)
    for issue_id, label_id, name, color in db.all(LABELS_SQL, (ids,)):
        found[issue_id].append({"id": str(label_id), "name": name, "color": color})
    return found


def query_words(q: str) -> list[str]:
    """services.tracker.search.query_words for the plain words this benchmark searches."""
    kept: list[str] = []
    for word in sorted(set(q.casefold().split()), key=len, reverse=True):
        if not any(word in longer for longer in kept):
            kept.append(word)
    return kept


@app.get("/tracker/api/v1/workspaces/<slug>/projects/<project_id>/issues")
def list_issues(slug, project_id):
    args = request.args
    page = int(args.get("page", 1))
    per_page = min(int(args.get("per_page", 50)), MAX_PER_PAGE)
    statuses = [uuid.UUID(s) for s in args.getlist("status_id")]
    priorities = [PRIORITIES.index(p) for p in args.getlist("priority")]
    words = query_words(args.get("q", ""))
    order_by, descending = args.get("order_by", "created_at"), args.get("order", "desc") == "desc"
    with Db() as db:
        user = authenticate(db)
        project = project_of(db, user[0], slug, project_id)
        where, params = ["i.project_id = %s"], [project[0]]
        if statuses:
            where.append("i.status_id = ANY(%s)")
            params.append(statuses)
        if priorities:
            where.append("i.priority = ANY(%s)")
            params.append(priorities)
        patterns = [
            "%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words
        ]
        for pattern in patterns:
            where.append("i.search_text LIKE %s ESCAPE '\\'")
            params.append(pattern)
        condition = " AND ".join(where)
        # The total by the app's routes: the project's counter, a one-word search from the
        # title index, anything else counted on the rows.
        if not statuses and not priorities and not words:
            total = project[2] or 0
        else:
            total = None
            if words and len(words) == 1 and not statuses and not priorities:
                terms = [
                    r[0]
                    for r in db.all(
                        "SELECT id FROM title_terms WHERE project_id = %s AND term LIKE %s ESCAPE '\\' LIMIT %s",
                        (project[0], patterns[0], MAX_INDEXED_TERMS + 1),
                    )
                ]
                if not terms:
                    total = 0
                elif len(terms) <= MAX_INDEXED_TERMS:
                    counted = "count(*)" if len(terms) == 1 else "count(DISTINCT issue_id)"
                    total = db.one(
                        f"SELECT {counted} FROM issue_title_terms WHERE term_id = ANY(%s)", (terms,)
                    )[0]
            if total is None:
                total = db.one(f"SELECT count(*) FROM issues i WHERE {condition}", params)[0]
        order = ORDERS[order_by].format(d="DESC" if descending else "ASC")
        rows = db.all(
            f"SELECT {ISSUE_COLUMNS}, (SELECT count(*) FROM issues ch WHERE ch.parent_id = i.id) "
            f"FROM issues i JOIN (SELECT i.id FROM issues i WHERE {condition} ORDER BY {order} "
            f"LIMIT %s OFFSET %s) pg ON pg.id = i.id {ISSUE_JOINS} ORDER BY {order}",
            [*params, per_page, (page - 1) * per_page],
        )
        ids = [r[0] for r in rows]
        labels = labels_by_issue(db, ids)
        fields = custom_fields_of(db, project, ids)
    issues = []
    for row in rows:
        body = issue_body(row, project[1], project[0], labels.get(row[0], []), row[22])
        body["custom_fields"] = dict(fields)
        issues.append(body)
    return jsonify(issues=issues, total=total, page=page, per_page=per_page)


@app.get("/tracker/api/v1/workspaces/<slug>/projects/<project_id>/issues/<key>")
def get_issue(slug, project_id, key):
    prefix, _, number = key.partition("-")
    if not number.isdigit():
        abort(404)
    with Db() as db:
        user = authenticate(db)
        project = project_of(db, user[0], slug, project_id)
        if prefix.upper() != project[1]:
            abort(404)
        row = db.one(
            f"SELECT {ISSUE_COLUMNS} FROM issues i {ISSUE_JOINS} WHERE i.project_id = %s AND i.number = %s",
            (project[0], int(number)),
        )
        if row is None:
            abort(404)
        labels = labels_by_issue(db, [row[0]])
        children = db.all(
            "SELECT id, number, title FROM issues WHERE parent_id = %s ORDER BY number", (row[0],)
        )
        relations = db.all(
            "SELECT r.id, r.type, ri.id, rp.key, ri.number, ri.title FROM issue_relations r "
            "JOIN issues ri ON ri.id = r.related_issue_id JOIN projects rp ON rp.id = ri.project_id "
            "WHERE r.issue_id = %s ORDER BY r.created_at",
            (row[0],),
        )
        fields = custom_fields_of(db, project, [row[0]])
    body = issue_body(row, project[1], project[0], labels.get(row[0], []), len(children))
    body["custom_fields"] = fields
    body["relations"] = [
        {"id": str(r[0]), "type": r[1], "issue": {"id": str(r[2]), "key": f"{r[3]}-{r[4]}", "title": r[5]}}
        for r in relations
    ]
    body["children"] = [{"id": str(c[0]), "key": f"{project[1]}-{c[1]}", "title": c[2]} for c in children]
    return jsonify(body)


# --- remanejamento ---------------------------------------------------------------------------

RECOMENDACAO_COLUMNS = (
    "id, produto_id, cor, tamanho, destino_id, origem_id, tipo_origem, quantidade, estoque_destino, "
    "venda_media_destino, estoque_origem, venda_media_origem, distancia_km, justificativa, prioridade, "
    "status, dias_ate_ruptura, em_campanha, score, data, vetado, motivo_veto, motivo_recusa, "
    "motivo_recusa_texto, quantidade_recebida, recebida_em, venda_extra_esperada"
)
RECOMENDACAO_KEYS = (
    "id",
    "produtoId",
    "cor",
    "tamanho",
    "lojaDestinoId",
    "origemId",
    "tipoOrigem",
    "quantidade",
    "estoqueDestino",
    "vendaMediaDestino",
    "estoqueOrigem",
    "vendaMediaOrigem",
    "distanciaKm",
    "justificativa",
    "prioridade",
    "status",
    "diasAteRuptura",
    "emCampanha",
    "score",
    "data",
    "vetado",
    "motivoVeto",
    "motivoRecusa",
    "motivoRecusaTexto",
    "quantidadeRecebida",
    "recebidaEm",
    "vendaExtraEsperada",
)


def visible(user) -> tuple[str, list]:
    """services.stock.recommendations.visible_condition: a store manager sees its own store's."""
    if user[3] != "gerente_loja":
        return "", []
    return " AND (origem_id = %s OR destino_id = %s)", [user[4], user[4]]


def lote_id_or_newest(db: Db, given: str | None):
    if given is None:
        row = db.one("SELECT id FROM lotes ORDER BY inicio DESC LIMIT 1")
    else:
        row = db.one("SELECT id FROM lotes WHERE id = %s", (uuid.UUID(given),))
        if row is None:
            abort(404)
    return None if row is None else row[0]


def recomendacao(row) -> dict:
    body = dict(zip(RECOMENDACAO_KEYS, row, strict=True))
    for name in ("id", "produtoId", "lojaDestinoId", "origemId"):
        body[name] = str(body[name])
    body["data"] = body["data"].isoformat()
    received = body["recebidaEm"]
    if received is not None:
        body["recebidaEm"] = received.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return body


@app.get("/api/v1/remanejamento/recomendacoes")
def list_recomendacoes():
    limite = request.args.get("limite", type=int)
    offset = request.args.get("offset", 0, type=int)
    with Db() as db:
        user = authenticate(db, stock=True)
        lote_id = lote_id_or_newest(db, request.args.get("loteId"))
        if lote_id is None:
            return jsonify([])
        scope, scope_params = visible(user)
        page = " OFFSET %s" if limite is None else " LIMIT %s OFFSET %s"
        rows = db.all(
            f"SELECT {RECOMENDACAO_COLUMNS} FROM recomendacoes WHERE lote_id = %s{scope} "
            f"ORDER BY prioridade_rank, score DESC, posicao, id{page}",
            [lote_id, *scope_params, *([offset] if limite is None else [limite, offset])],
        )
    return jsonify([recomendacao(row) for row in rows])


@app.get("/api/v1/remanejamento/lotes/<lote_id>/totais")
def totais(lote_id):
    with Db() as db:
        user = authenticate(db, stock=True)
        lote = lote_id_or_newest(db, lote_id)
        scope, scope_params = visible(user)
        row = db.one(
            "SELECT count(*), coalesce(sum(quantidade), 0), count(DISTINCT origem_id), "
            "count(DISTINCT destino_id), coalesce(sum(CASE WHEN prioridade = 'alta' THEN 1 ELSE 0 END), 0), "
            "coalesce(sum(CASE WHEN tipo_origem = 'cd' THEN 1 ELSE 0 END), 0), "
            "coalesce(sum(CASE WHEN tipo_origem = 'loja' THEN 1 ELSE 0 END), 0) "
            f"FROM recomendacoes WHERE lote_id = %s AND vetado = false AND status != 'recusada'{scope}",
            [lote, *scope_params],
        )
    names = ("totalItens", "totalUnidades", "origens", "destinos", "altaPrioridade", "viaCd", "viaLoja")
    return jsonify(dict(zip(names, (int(v) for v in row), strict=True)))


def run_state(quantities: dict, keys: list) -> str | None:
    if not keys or sum(max(q, 0) for q in quantities.values()) <= 0:
        return None
    return "completa" if all(quantities.get(k, 0) > 0 for k in keys) else "quebrada"


@app.get("/api/v1/produtos/<produto_id>/grade")
def grade(produto_id):
    with Db() as db:
        authenticate(db, stock=True)
        produto = db.one("SELECT id, tamanhos FROM produtos WHERE id = %s", (uuid.UUID(produto_id),))
        if produto is None:
            abort(404)
        lote_id = lote_id_or_newest(db, request.args.get("loteId"))
        tamanhos = list(produto[1] or [])
        grid = list(dict.fromkeys(tamanhos))
        keys = []
        if len(grid) >= MIN_RUN_FOR_KEYS:
            periodo = db.one("SELECT periodo FROM regras_remanejamento WHERE id = %s", (RULES_ID,))[0]
            on = datetime.now(TIMEZONE).date()
            sold = dict(
                db.all(
                    "SELECT v.tamanho, sum(v.qtd) FROM vendas v JOIN lojas l ON l.id = v.loja_id "
                    "WHERE v.produto_id = %s AND v.data >= %s AND v.data < %s AND l.is_cd IS false "
                    "GROUP BY v.tamanho",
                    (produto[0], on - timedelta(days=int(periodo)), on),
                )
            )
            middle = (len(grid) - 1) / 2
            ranked = sorted(range(len(grid)), key=lambda i: (-(sold.get(grid[i]) or 0), abs(i - middle), i))
            keys = [grid[i] for i in sorted(ranked[:KEY_SIZES])]
        atual = {
            (loja, tamanho): qtd
            for loja, tamanho, qtd in db.all(
                "SELECT loja_id, tamanho, qtd FROM estoque WHERE produto_id = %s", (produto[0],)
            )
        }
        delta = defaultdict(int)
        if lote_id is not None:
            for origem, destino, tamanho, qtd in db.all(
                "SELECT origem_id, destino_id, tamanho, quantidade FROM recomendacoes "
                "WHERE lote_id = %s AND produto_id = %s AND vetado = false AND status != 'recusada'",
                (lote_id, produto[0]),
            ):
                delta[(origem, tamanho)] -= qtd
                delta[(destino, tamanho)] += qtd
        lojas = db.all("SELECT id FROM lojas ORDER BY is_cd DESC, nome, codigo")
    rows = []
    for (loja,) in lojas:
        cells = []
        for tamanho in tamanhos:
            now, moved = atual.get((loja, tamanho), 0), delta.get((loja, tamanho), 0)
            final = now + moved
            cells.append(
                {
                    "lojaId": str(loja),
                    "tamanho": tamanho,
                    "atual": now,
                    "delta": moved,
                    "final": final,
                    "ruptura": final <= 0,
                }
            )
        rows.append(
            {
                "lojaId": str(loja),
                "cells": cells,
                "totalAtual": sum(c["atual"] for c in cells),
                "totalFinal": sum(c["final"] for c in cells),
                "gradeAtual": run_state({c["tamanho"]: c["atual"] for c in cells}, keys),
                "grade": run_state({c["tamanho"]: c["final"] for c in cells}, keys),
            }
        )
    return jsonify(
        produtoId=str(produto[0]), tamanhos=tamanhos, tamanhosChave=keys, rows=rows, loteId=text(lote_id)
    )
