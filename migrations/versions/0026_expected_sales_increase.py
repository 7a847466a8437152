"""outcome of transfers: the engine's expected sales increase and the receipt's business day

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-26 15:30:00

``venda_extra_esperada`` is what the engine expected the transfer to add to the
destination's sales over its horizon (14 days), written at generation; NULL on
recommendations generated before this revision (no prediction to compare with).
``recebida_data`` is the business day of the receipt, next to ``recebida_em`` as
``executada_data`` is next to ``executada_em``: the outcome windows of
``/metricas/resultado`` start there. Receipts made before this revision get the
day of ``recebida_em`` in the configured time zone.
"""
from datetime import UTC
from zoneinfo import ZoneInfo

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def _time_zone() -> ZoneInfo:
    try:
        from flask import current_app

        return ZoneInfo(current_app.config["TIMEZONE"])
    except (RuntimeError, KeyError):
        return ZoneInfo("America/Sao_Paulo")


def upgrade():
    with op.batch_alter_table('recomendacoes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('venda_extra_esperada', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('recebida_data', sa.Date(), nullable=True))
    recs = sa.table(
        'recomendacoes',
        sa.column('id', sa.Uuid()),
        sa.column('recebida_em', sa.DateTime(timezone=True)),
        sa.column('recebida_data', sa.Date()),
    )
    bind = op.get_bind()
    zone = _time_zone()
    rows = bind.execute(sa.select(recs.c.id, recs.c.recebida_em).where(recs.c.recebida_em.is_not(None))).all()
    for rid, moment in rows:
        if moment.tzinfo is None:  # SQLite hands the stored UTC moment back naive
            moment = moment.replace(tzinfo=UTC)
        bind.execute(
            recs.update().where(recs.c.id == rid).values(recebida_data=moment.astimezone(zone).date())
        )


def downgrade():
    with op.batch_alter_table('recomendacoes', schema=None) as batch_op:
        batch_op.drop_column('recebida_data')
        batch_op.drop_column('venda_extra_esperada')
