"""Title search: which issues match ``q``, and how many, fast at a million issues.

``q`` matches an issue when every word of ``q`` occurs inside some word of the
title, ignoring case and accents: ``checkout`` finds "Checkout lento", ``calcado
pix`` finds "Pix recusado no calçado", ``urca tamanco`` finds "Tamanco Urca".

Two structures answer it, and agree by construction:

- ``issues.search_text`` holds the title's normalised words joined by spaces. A
  word of ``q`` holds no whitespace, so it is inside ``search_text`` exactly when
  it is inside one of the title's words: the list filters rows with
  ``search_text LIKE '%word%'`` (a trigram index on PostgreSQL), which lets the
  first page be read in sort order and stop early.
- ``title_terms`` / ``issue_title_terms`` are the inverted index of the same
  words. A one-word search's total comes from them: the vocabulary words
  containing it, then their issues by index-only scans, so counting tens of
  thousands of matches reads no issue rows.
- ``title_gram_counts`` counts, per project, the issues whose title words hold
  each one- or two-character piece: a search for a letter or two (inside most
  titles, which no index narrows) reads its total from one row.
"""

from __future__ import annotations

import unicodedata
import uuid
from collections import Counter

from sqlalchemy import and_, bindparam, delete, distinct, false, func, insert, inspect, literal, select
from sqlalchemy.sql.elements import ColumnElement

from extensions import db
from models.tracker import Issue, IssueTitleTerm, TitleGramCount, TitleTerm
from services import counters, unique
from services.text import contains_pattern

# Words are indexed up to this many characters (after normalising): a longer
# "word" is a pasted blob, and btree entries have a size limit.
MAX_TERM_LENGTH = 300


def normalize(text: str) -> str:
    """Lower-case (Unicode case folding) without accents: "Calçado" -> "calcado"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


def _words(text: str) -> list[str]:
    return [word[:MAX_TERM_LENGTH] for word in normalize(text).split()]


def searchable(title: str) -> str:
    """What ``issues.search_text`` holds for a title."""
    return " ".join(_words(title))


def terms_of(title: str) -> set[str]:
    """The distinct words the inverted index holds for a title."""
    return set(_words(title))


def query_words(q: str) -> list[str]:
    """The words of a search that constrain it: one inside another adds nothing."""
    kept: list[str] = []
    for word in sorted(set(_words(q)), key=len, reverse=True):
        if not any(word in longer for longer in kept):
            kept.append(word)
    return kept


# Searches this short are counted from ``title_gram_counts``.
MAX_GRAM = 2


def grams_of(search_text: str | None) -> set[str]:
    """The one- and two-character pieces of a title's words (``search_text`` as stored)."""
    found: set[str] = set()
    for word in (search_text or "").split():
        found.update(word)
        found.update(word[i : i + MAX_GRAM] for i in range(len(word) - 1))
    return found


def add_grams(project_id: uuid.UUID, deltas: Counter) -> None:
    """Move the project's piece counts by ``deltas``, in one statement.

    The rows are written in sorted order, so two transactions changing the same
    pieces take their row locks in the same order and never wait on each other
    in a circle.
    """
    rows = [(project_id, gram, delta) for gram, delta in sorted(deltas.items()) if delta]
    counters.add(TitleGramCount.__table__, ("project_id", "gram"), "issue_count", rows)


def count_gram(project_id: uuid.UUID, gram: str) -> int:
    """How many of the project's issues have ``gram`` (one or two characters) inside a title word."""
    return (
        db.session.scalar(
            select(TitleGramCount.issue_count).where(
                TitleGramCount.project_id == project_id, TitleGramCount.gram == gram
            )
        )
        or 0
    )


def forget_titles(project_id: uuid.UUID, search_texts: list[str]) -> None:
    """Deleted issues leave the piece counts (their words' links go by cascade)."""
    deltas: Counter = Counter()
    for text in search_texts:
        deltas.subtract(grams_of(text))
    add_grams(project_id, deltas)


def index_title(issue: Issue) -> None:
    """(Re)write what search knows of an issue's title; part of the caller's transaction."""
    # A new issue has no words indexed yet: nothing to delete.
    new = inspect(issue).pending
    before = grams_of(issue.search_text)
    issue.search_text = searchable(issue.title)
    after = grams_of(issue.search_text)
    deltas: Counter = Counter(dict.fromkeys(after - before, 1))
    deltas.subtract(before - after)
    db.session.flush()
    add_grams(issue.project_id, deltas)
    if not new:
        db.session.execute(delete(IssueTitleTerm).where(IssueTitleTerm.issue_id == issue.id))
    terms = sorted(terms_of(issue.title))
    if not terms:
        return
    # Concurrent creates may add the same new word: the unique key settles it.
    db.session.execute(
        unique.insert(TitleTerm.__table__).on_conflict_do_nothing(index_elements=["project_id", "term"]),
        [{"project_id": issue.project_id, "term": term} for term in terms],
    )
    # The words' ids and the links in one statement (the words are in place, ours or another's).
    db.session.execute(
        insert(IssueTitleTerm).from_select(
            ["term_id", "issue_id"],
            select(TitleTerm.id, literal(issue.id, IssueTitleTerm.issue_id.type)).where(
                TitleTerm.project_id == issue.project_id, TitleTerm.term.in_(terms)
            ),
        )
    )


def condition(q: str) -> ColumnElement[bool]:
    """The row filter for ``q`` on issues (nothing matches a ``q`` without words)."""
    words = query_words(q)
    if not words:
        return false()
    return and_(*(Issue.search_text.like(contains_pattern(word), escape="\\") for word in words))


# A word inside more vocabulary entries than this (a letter or two, a common
# fragment) is inside most titles: counting the issues once is then cheaper than
# de-duplicating their links, and the entry ids stay few enough to send as literals.
MAX_INDEXED_TERMS = 1_000


# A one-word search's statements, built once: building them cost about as much as running them.
_TERM_IDS = (
    select(TitleTerm.id)
    .where(
        TitleTerm.project_id == bindparam("project_id"),
        TitleTerm.term.like(bindparam("pattern"), escape="\\"),
    )
    .limit(MAX_INDEXED_TERMS + 1)
)
_TERM_LINKS = IssueTitleTerm.term_id.in_(bindparam("term_ids", expanding=True))
# One vocabulary entry: its links are its issues, nothing to de-duplicate.
_COUNT_ONE_TERM = select(func.count()).select_from(IssueTitleTerm).where(_TERM_LINKS)
_COUNT_TERMS = select(func.count(distinct(IssueTitleTerm.issue_id))).where(_TERM_LINKS)


def _term_ids(project_id: uuid.UUID, word: str) -> list[int]:
    return list(db.session.scalars(_TERM_IDS, {"project_id": project_id, "pattern": contains_pattern(word)}))


def count_word(project_id: uuid.UUID, word: str) -> int | None:
    """How many of the project's issues have ``word`` inside a title word, from the index alone.

    The route for a one-word search, however many issues it finds; ``None`` when
    the word is inside too many vocabulary entries (the caller counts the issues).
    Several words narrow the result: the trigram index intersects them on the
    issues as fast as their link sets could be intersected, so they are counted
    there.
    """
    term_ids = _term_ids(project_id, word)
    if not term_ids:
        return 0
    if len(term_ids) > MAX_INDEXED_TERMS:
        return None
    query = _COUNT_ONE_TERM if len(term_ids) == 1 else _COUNT_TERMS
    return db.session.scalar(query, {"term_ids": term_ids}) or 0
