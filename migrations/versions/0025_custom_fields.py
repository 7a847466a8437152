"""tracker custom fields: a project's field definitions and the values issues give them

Revision ID: 0025
Revises: 0022
Create Date: 2026-11-25 18:20:00

New tables only; nothing existing changes. Indexes follow the reads:
- custom_fields (project_id, slug), unique: a project's fields, and one slug each;
- custom_field_values (issue_id, field_id): the values of a page of issues;
- custom_field_values (field_id, text_value | number_value | date_value): the
  list filter by a field's value.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('custom_fields',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('slug', sa.String(length=26), nullable=False),
    sa.Column('type', sa.String(length=20), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('required', sa.Boolean(), nullable=False),
    sa.Column('position', sa.SmallInteger(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("type IN ('text', 'number', 'date', 'select', 'multi_select')", name=op.f('ck_custom_fields_type_valid')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_custom_fields_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_custom_fields')),
    sa.UniqueConstraint('project_id', 'slug', name='uq_custom_fields_project_id_slug')
    )
    op.create_table('custom_field_values',
    sa.Column('issue_id', sa.Uuid(), nullable=False),
    sa.Column('field_id', sa.Uuid(), nullable=False),
    sa.Column('text_value', sa.String(length=2000), nullable=True),
    sa.Column('number_value', sa.Double(), nullable=True),
    sa.Column('date_value', sa.Date(), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.ForeignKeyConstraint(['field_id'], ['custom_fields.id'], name=op.f('fk_custom_field_values_field_id_custom_fields'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_custom_field_values_issue_id_issues'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_custom_field_values'))
    )
    with op.batch_alter_table('custom_field_values', schema=None) as batch_op:
        batch_op.create_index('ix_custom_field_values_issue_id', ['issue_id', 'field_id'], unique=False)
        batch_op.create_index('ix_custom_field_values_field_text', ['field_id', 'text_value'], unique=False)
        batch_op.create_index('ix_custom_field_values_field_number', ['field_id', 'number_value'], unique=False)
        batch_op.create_index('ix_custom_field_values_field_date', ['field_id', 'date_value'], unique=False)


def downgrade():
    with op.batch_alter_table('custom_field_values', schema=None) as batch_op:
        batch_op.drop_index('ix_custom_field_values_field_date')
        batch_op.drop_index('ix_custom_field_values_field_number')
        batch_op.drop_index('ix_custom_field_values_field_text')
        batch_op.drop_index('ix_custom_field_values_issue_id')

    op.drop_table('custom_field_values')
    op.drop_table('custom_fields')
