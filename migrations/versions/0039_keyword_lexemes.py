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

The expression is a function of ours declared expensive (``COST``), which it is over
20,000 characters: costed as cheap, the planner preferred reading the table until a
search's first thousand matches turned up, splitting every row's words on the way
(350 ms for two rare words at a million issues, against 25 ms through the index).
"""

from alembic import op

# revision identifiers, used by Alembic.
revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None

FUNCTION = """
CREATE FUNCTION issue_word_lexemes(words text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$
BEGIN
    RETURN array_to_tsvector(array_remove(string_to_array(words, ' '), ''));
END
$$
"""


def upgrade():
    # On SQLite the trigram index was a plain one, which ``LIKE '% word%'`` never used.
    op.drop_index("ix_issue_vectors_words_trgm", table_name="issue_vectors")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FUNCTION)
        op.execute(
            "CREATE INDEX ix_issue_vectors_words_lexemes ON issue_vectors USING gin (issue_word_lexemes(words))"
        )


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_issue_vectors_words_lexemes")
        op.execute("DROP FUNCTION issue_word_lexemes(text)")
    op.create_index(
        "ix_issue_vectors_words_trgm",
        "issue_vectors",
        ["words"],
        postgresql_using="gin",
        postgresql_ops={"words": "gin_trgm_ops"},
    )
