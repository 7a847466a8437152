"""keyword search: the stored words as a full-text index on PostgreSQL

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-02 15:10:00

Keyword search looks for issues with a word starting with each word of the query.
``issue_vectors.words`` holds those words, folded, each after a space; a trigram
index answered ``LIKE '% word%'`` over them, and at a million issues its bitmap
rechecked thousands of long texts per search. On PostgreSQL the same words become
a ``tsvector`` built from the stored words themselves (``array_to_tsvector``: no
parser, no stemming, so it holds exactly what ``LIKE`` reads), indexed with GIN,
and a prefix query (``'word':*``) finds them. SQLite keeps ``LIKE``.
"""

from alembic import op

# revision identifiers, used by Alembic.
revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None

# As ``models.tracker_search.WORD_LEXEMES`` was written by this revision (migrations
# keep their own copy: the model may change after them).
LEXEMES = "array_to_tsvector(array_remove(string_to_array(words, ' '), ''))"


def upgrade():
    # On SQLite the trigram index was a plain one, which ``LIKE '% word%'`` never used.
    op.drop_index("ix_issue_vectors_words_trgm", table_name="issue_vectors")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"CREATE INDEX ix_issue_vectors_words_lexemes ON issue_vectors USING gin ({LEXEMES})")


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_issue_vectors_words_lexemes")
    op.create_index(
        "ix_issue_vectors_words_trgm",
        "issue_vectors",
        ["words"],
        postgresql_using="gin",
        postgresql_ops={"words": "gin_trgm_ops"},
    )
