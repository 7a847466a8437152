"""Search over issues' titles, descriptions and comments: by keyword, by meaning, or both.

- ``keyword``: issues holding words that start with the words of ``q`` (case
  and accents ignored), ranked by BM25 over the issue's text, a word of the
  title counting once more. Every plan.
- ``semantic``: issues whose vector (``services.tracker.embeddings``) is closest
  to the query's, so "cobrança duplicada" finds "cliente pagou duas vezes";
  a cosine below ``MIN_SIMILARITY`` is not a match. Plan feature ``semantic_search``.
- ``hybrid``: both rankings fused by reciprocal rank fusion (each list gives
  ``1 / (RRF_K + rank)``), so an issue high in either list comes first and one
  in both comes before either. Plan feature ``semantic_search``.

Each mode ranks at most ``MAX_CANDIDATES`` issues; ``total`` counts those. A
keyword search scores at most ``KEYWORD_SCAN`` issues holding every word, then
as many holding any (on PostgreSQL a GIN index over the stored words answers
prefix queries, ``'word':*``; SQLite reads ``LIKE '% word%'``):
for a word in tens of thousands of issues the ranking is of a sample of them.
Results are only issues of the workspace's projects (one project with
``project_id``) that exist when the search runs. ``highlight`` is the passage
(the title, a paragraph or sentence of the description, or of a comment) that
best matches ``q``: HTML with everything escaped except ``<mark>…</mark>``
around the matched words (a word with the same stem as one of ``q``, starting
with it, or one typo away).
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from dataclasses import dataclass

from markupsafe import Markup, escape
from sqlalchemy import and_, cast, func, literal, literal_column, or_, select
from sqlalchemy.dialects.postgresql import TSQUERY

from extensions import db
from models.tracker import Issue, Project
from models.tracker_search import WORD_LEXEMES, IssueVector
from services.errors import NotFoundError
from services.tracker import custom_fields, embeddings, plans, search_index, vector_store
from services.tracker.access import workspace_access
from services.tracker.issue_reads import children_count
from services.tracker.issues import IssueView

MODES = ("keyword", "semantic", "hybrid")
FEATURE = "semantic_search"
MAX_CANDIDATES = 200
MIN_SIMILARITY = 0.2
RRF_K = 60
MAX_QUERY_WORDS = 12
KEYWORD_SCAN = 1_000  # rows a keyword search scores at most, per step
KEYWORD_TEXT = 4_000  # characters of an issue's words it scores (the title and description first)
BM25_K1, BM25_B = 1.2, 0.75
PASSAGE_CHARS = 240
SIMILAR = 5


@dataclass
class SearchResult:
    issue: IssueView
    score: float
    highlight: Markup


@dataclass
class SearchPage:
    results: list[SearchResult]
    total: int
    page: int
    per_page: int
    mode: str


def _scope(user, slug: str, project_id: uuid.UUID | None):
    """The organization and the project ids the caller's search covers."""
    workspace, access = workspace_access(user, slug)
    projects = set(db.session.scalars(select(Project.id).where(Project.workspace_id == workspace.id)))
    if project_id is not None:
        if project_id not in projects:
            raise NotFoundError("Project not found", reason="project_not_found")
        projects = {project_id}
    return access, projects


def query_terms(q: str) -> list[str]:
    """The folded words of ``q`` a keyword search looks for (stop words only when nothing else)."""
    # Folding may split a word (a ligature's letters): each piece is a word, as stored.
    folded = [piece for w in embeddings.words(q) for piece in embeddings.fold(w).split()]
    kept = [w for w in folded if w not in embeddings.STOPWORDS] or folded
    return list(dict.fromkeys(kept))[:MAX_QUERY_WORDS]


def _keyword_rows(organization_id, projects: set[uuid.UUID], condition, limit: int, skip=()) -> list:
    query = (
        # The title as title search stores it: already folded, no work per row here.
        select(IssueVector.issue_id, func.substr(IssueVector.words, 1, KEYWORD_TEXT), Issue.search_text)
        .join(Issue, Issue.id == IssueVector.issue_id)
        .where(IssueVector.organization_id == organization_id, Issue.project_id.in_(projects), condition)
        .limit(limit)
    )
    if skip:
        query = query.where(IssueVector.issue_id.not_in(list(skip)))
    return db.session.execute(query).all()


# The stored words as lexemes, the expression of their index (or the planner ignores it).
LEXEMES = literal_column(WORD_LEXEMES)


def _lexeme_prefix(term: str) -> str:
    """``'term':*`` in tsquery syntax: a quoted lexeme (quotes and backslashes doubled)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "':*"


def _word_conditions(terms: list[str]):
    """Conditions "some stored word starts with the terms": all of them, and any of them."""
    if db.session.get_bind().dialect.name == "postgresql":
        prefixes = [_lexeme_prefix(term) for term in terms]
        return tuple(
            LEXEMES.op("@@")(cast(literal(joiner.join(prefixes)), TSQUERY)) for joiner in (" & ", " | ")
        )
    likes = [IssueVector.words.like(f"% {term}%") for term in terms]
    return and_(*likes), or_(*likes)


def keyword_ranking(organization_id, projects: set[uuid.UUID], q: str) -> list[tuple[uuid.UUID, float]]:
    """BM25 over the issues holding every word first (the selective query, and the best
    matches), then over those holding any, ``KEYWORD_SCAN`` issues at most each."""
    terms = query_terms(q)
    if not terms or not projects:
        return []
    every, any_ = _word_conditions(terms)
    rows = _keyword_rows(organization_id, projects, every, KEYWORD_SCAN)
    if len(terms) > 1 and len(rows) < MAX_CANDIDATES:
        rows += _keyword_rows(organization_id, projects, any_, KEYWORD_SCAN, {r[0] for r in rows})
    return bm25(terms, [(issue_id, " " + words.lstrip(), title or "") for issue_id, words, title in rows])


def bm25(terms: list[str], documents: list[tuple]) -> list[tuple[uuid.UUID, float]]:
    """Rank ``(id, words as stored, folded title)`` by BM25 over the words that start with a
    term (statistics from the matching documents); a term in the title counts once more."""
    if not documents:
        return []
    matches = []
    frequency: Counter = Counter()
    for issue_id, words, title in documents:
        # Stored words each follow a space: counting " term" counts the words starting with it.
        counts = {t: words.count(" " + t) for t in terms}
        frequency.update(t for t, n in counts.items() if n)
        matches.append((issue_id, counts, words.count(" ") or 1, title))
    average = sum(length for _, _, length, _ in matches) / len(matches)
    scored = []
    for issue_id, counts, length, title in matches:
        score = 0.0
        for term, n in counts.items():
            if not n:
                continue
            idf = math.log(1 + (len(documents) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            norm = n * (BM25_K1 + 1) / (n + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            score += idf * (norm + (1.0 if f" {term}" in f" {title}" else 0.0))
        if score > 0:
            scored.append((issue_id, score))
    scored.sort(key=lambda pair: (-pair[1], str(pair[0])))
    return scored[:MAX_CANDIDATES]


def _existing(ids: list[uuid.UUID], projects: set[uuid.UUID]) -> set[uuid.UUID]:
    if not ids:
        return set()
    return set(db.session.scalars(select(Issue.id).where(Issue.id.in_(ids), Issue.project_id.in_(projects))))


def semantic_ranking(organization_id, projects: set[uuid.UUID], q: str) -> list[tuple[uuid.UUID, float]]:
    model = search_index.search_model(organization_id)
    if model is None or not projects:
        return []
    vector = search_index.encoder_of(model).encode([q])[0]
    if not vector.any():
        return []
    found = vector_store.current(organization_id, model).nearest(
        vector, projects, MAX_CANDIDATES, MIN_SIMILARITY
    )
    present = _existing([issue_id for issue_id, _ in found], projects)
    return [(issue_id, score) for issue_id, score in found if issue_id in present]


def fuse(*rankings: list[tuple[uuid.UUID, float]]) -> list[tuple[uuid.UUID, float]]:
    """Reciprocal rank fusion of rankings (best first)."""
    fused: Counter = Counter()
    for ranking in rankings:
        for rank, (issue_id, _) in enumerate(ranking, start=1):
            fused[issue_id] += 1.0 / (RRF_K + rank)
    ordered = sorted(fused.items(), key=lambda pair: (-pair[1], str(pair[0])))
    return ordered[:MAX_CANDIDATES]


def rank(organization_id, projects: set[uuid.UUID], q: str, mode: str) -> list[tuple[uuid.UUID, float]]:
    if mode == "keyword":
        return keyword_ranking(organization_id, projects, q)
    if mode == "semantic":
        return semantic_ranking(organization_id, projects, q)
    return fuse(keyword_ranking(organization_id, projects, q), semantic_ranking(organization_id, projects, q))


def search(
    user, slug: str, q: str, mode: str, project_id=None, page: int = 1, per_page: int = 20
) -> SearchPage:
    access, projects = _scope(user, slug, project_id)
    if mode != "keyword":
        plans.ensure_feature(access.organization, FEATURE)
    ranking = rank(access.organization.id, projects, q, mode)
    shown = ranking[(page - 1) * per_page : page * per_page]
    views = _views([issue_id for issue_id, _ in shown])
    docs = search_index.documents([issue_id for issue_id, _ in shown])
    matches = _matcher(q)
    results = [
        SearchResult(views[issue_id], round(score, 6), highlight(q, docs[issue_id], matches))
        for issue_id, score in shown
        if issue_id in views and issue_id in docs
    ]
    return SearchPage(results, len(ranking), page, per_page, mode)


def _views(ids: list[uuid.UUID]) -> dict[uuid.UUID, IssueView]:
    if not ids:
        return {}
    rows = db.session.execute(select(Issue, children_count()).where(Issue.id.in_(ids))).all()
    views = {issue.id: IssueView(issue, count or 0) for issue, count in rows}
    custom_fields.attach(list(views.values()))
    return views


def similar(user, slug: str, issue: Issue, limit: int = SIMILAR) -> list[tuple[Issue, float]]:
    """The workspace's issues nearest to ``issue`` (empty when the plan lacks semantic search
    or the issue has no vector yet)."""
    access, projects = _scope(user, slug, None)
    if not access.organization.plan_features.get(FEATURE):
        return []
    model = search_index.search_model(access.organization.id)
    if model is None:
        return []
    vectors = vector_store.current(access.organization.id, model)
    vector = vectors.vector_of(issue.id)
    if vector is None:
        return []
    found = [
        pair for pair in vectors.nearest(vector, projects, limit + 1, MIN_SIMILARITY) if pair[0] != issue.id
    ]
    present = _existing([issue_id for issue_id, _ in found], projects)
    found = [pair for pair in found if pair[0] in present][:limit]
    issues = {i.id: i for i in db.session.scalars(select(Issue).where(Issue.id.in_([p[0] for p in found])))}
    return [(issues[issue_id], score) for issue_id, score in found if issue_id in issues]


# ---------------------------------------------------------------------------------- highlight

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP = re.compile(r"[*_`#>]+|\{@[^}]*\}")


def _passages(doc: search_index.Document) -> list[str]:
    found = [doc.title]
    for text in [doc.description or "", *doc.comments]:
        cleaned = _MARKUP.sub(" ", text)
        found += [p.strip() for p in _SENTENCE.split(cleaned) if p and p.strip()]
    return found


def _grams(text: str) -> set[str]:
    return {text[i : i + 3] for i in range(len(text) - 2)}


def _matcher(q: str):
    all_terms = query_terms(q)
    terms = [t for t in all_terms if len(t) >= 3 or len(all_terms) == 1]
    stems = {s: _grams(s) for s in embeddings.stems(q)}
    seen: dict[str, str | None] = {}

    def matches(word: str) -> str | None:
        """The query stem (or term) this word of a passage matches, or None."""
        if word not in seen:
            seen[word] = _match(word)
        return seen[word]

    def _match(word: str) -> str | None:
        folded = embeddings.fold(word)
        stemmed = embeddings.stem(word.casefold())
        if stemmed in stems:
            return stemmed
        for term in terms:
            if folded.startswith(term):
                return term
        if len(stemmed) < 5:
            return None
        grams = _grams(stemmed)
        for candidate, candidate_grams in stems.items():
            # One typo apart, roughly: sharing most of their 3-character pieces.
            if len(candidate) >= 5 and len(grams & candidate_grams) / len(grams | candidate_grams) >= 0.5:
                return candidate
        return None

    return matches


def highlight(q: str, doc: search_index.Document, matches=None) -> Markup:
    """The passage of ``doc`` that best matches ``q``, matched words in ``<mark>`` (escaped HTML)."""
    matches = matches or _matcher(q)
    best, best_marks, best_score = doc.title, [], 0.0
    for index, passage in enumerate(_passages(doc)):
        found = [(m.start(), m.end(), matches(m.group())) for m in embeddings.WORD.finditer(passage)]
        hits = [(start, end, hit) for start, end, hit in found if hit]
        distinct = len({hit for _, _, hit in hits})
        score = distinct + (0.5 if index == 0 and distinct else 0.0)
        if score > best_score:
            best, best_marks, best_score = passage, [(s, e) for s, e, _ in hits], score
    return _render(best, best_marks)


def _render(passage: str, marks: list[tuple[int, int]]) -> Markup:
    start, end = 0, len(passage)
    if end > PASSAGE_CHARS:
        first = marks[0][0] if marks else 0
        start = max(0, min(first - PASSAGE_CHARS // 3, end - PASSAGE_CHARS))
        end = start + PASSAGE_CHARS
    pieces, cursor = [], start
    for mark_start, mark_end in marks:
        if mark_start < start or mark_end > end:
            continue
        pieces.append(escape(passage[cursor:mark_start]))
        pieces.append(Markup("<mark>%s</mark>") % passage[mark_start:mark_end])
        cursor = mark_end
    pieces.append(escape(passage[cursor:end]))
    text = Markup("").join(pieces)
    return (Markup("…") if start else Markup("")) + text + (Markup("…") if end < len(passage) else Markup(""))
