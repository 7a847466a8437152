"""from batch to shelf: the operations project, the issues of each batch's approved work and
the problems reported on transfers

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-02 07:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("regras_remanejamento") as batch:
        batch.add_column(sa.Column("projeto_operacoes_id", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("operacoes_por_id", sa.Uuid(), nullable=True))
        batch.create_foreign_key(
            "fk_regras_remanejamento_projeto_operacoes_id_projects", "projects",
            ["projeto_operacoes_id"], ["id"], ondelete="SET NULL",
        )
        batch.create_foreign_key(
            "fk_regras_remanejamento_operacoes_por_id_users", "users",
            ["operacoes_por_id"], ["id"], ondelete="SET NULL",
        )
    op.create_table(
        "operacao_issues",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("lote_id", sa.Uuid(), nullable=False),
        sa.Column("origem_id", sa.Uuid(), nullable=False),
        sa.Column("destino_id", sa.Uuid(), nullable=False),
        sa.Column("issue_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["lote_id"], ["lotes.id"], name=op.f("fk_operacao_issues_lote_id_lotes"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["origem_id"], ["lojas.id"], name=op.f("fk_operacao_issues_origem_id_lojas"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["destino_id"], ["lojas.id"], name=op.f("fk_operacao_issues_destino_id_lojas"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["issue_id"], ["issues.id"], name=op.f("fk_operacao_issues_issue_id_issues"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_operacao_issues")),
        sa.UniqueConstraint("lote_id", "origem_id", "destino_id", name="uq_operacao_issues_lote_id"),
    )
    op.create_index(op.f("ix_operacao_issues_issue_id"), "operacao_issues", ["issue_id"])
    op.create_table(
        "problemas_transferencia",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("recomendacao_id", sa.Uuid(), nullable=False),
        sa.Column("issue_id", sa.Uuid(), nullable=False),
        sa.Column("tipo", sa.String(length=20), nullable=False),
        sa.Column("relatado_por_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["recomendacao_id"], ["recomendacoes.id"], name=op.f("fk_problemas_transferencia_recomendacao_id_recomendacoes"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["issue_id"], ["issues.id"], name=op.f("fk_problemas_transferencia_issue_id_issues"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["relatado_por_id"], ["users.id"], name=op.f("fk_problemas_transferencia_relatado_por_id_users"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_problemas_transferencia")),
    )
    op.create_index(op.f("ix_problemas_transferencia_recomendacao_id"), "problemas_transferencia", ["recomendacao_id"])
    op.create_index(op.f("ix_problemas_transferencia_issue_id"), "problemas_transferencia", ["issue_id"])


def downgrade():
    op.drop_table("problemas_transferencia")
    op.drop_table("operacao_issues")
    with op.batch_alter_table("regras_remanejamento") as batch:
        batch.drop_constraint("fk_regras_remanejamento_operacoes_por_id_users", type_="foreignkey")
        batch.drop_constraint("fk_regras_remanejamento_projeto_operacoes_id_projects", type_="foreignkey")
        batch.drop_column("operacoes_por_id")
        batch.drop_column("projeto_operacoes_id")
