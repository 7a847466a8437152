"""sales read cell by cell: the product, store, size and day index carries the units

Revision ID: 0041
Revises: 0040
Create Date: 2026-12-04 23:45:00

The engine sums each store x product x size cell's sales over the quarter it reads
(millions of rows at scale). Grouped by cell in index order and read from the index
alone, PostgreSQL streams the sums instead of hashing millions of rows, which spilled to
disk: at 300 stores x 1,000 products x 6 sizes the read fell from about 20 s to about 10 s
(docs/benchmarks.md). The index replaces ``ix_vendas_produto_loja_data``, whose queries
(a product at a store over days) use its first two columns as before; it adds the size
and, on PostgreSQL, carries ``qtd`` (``INCLUDE``) so that no table row is visited.

Building it locks the sales table against writes for as long as it takes (about 20 s per
8 M rows); run it outside the hours of the daily import.
"""

from alembic import op

# revision identifiers, used by Alembic.
revision = "0041"
down_revision = "0040"
branch_labels = None
depends_on = None


def upgrade():
    op.drop_index("ix_vendas_produto_loja_data", table_name="vendas")
    op.create_index(
        "ix_vendas_celula_data",
        "vendas",
        ["produto_id", "loja_id", "tamanho", "data"],
        postgresql_include=["qtd"],
    )


def downgrade():
    op.drop_index("ix_vendas_celula_data", table_name="vendas")
    op.create_index("ix_vendas_produto_loja_data", "vendas", ["produto_id", "loja_id", "data"])
