"""tracker: plans, organizations, memberships, workspaces, projects, statuses, labels, issues, relations

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 13:21:18.500521

"""
from datetime import datetime, timezone

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


GIB = 1024**3

# Plans of a fresh install; organizations copy limits and features when assigned.
PLANS = [
    {
        "id": "free",
        "name": "Free",
        "price_brl": 0,
        "limits": {"members": 5, "projects": 3, "issues": 1000, "storage_bytes": 100 * 1024**2},
        "features": {"semantic_search": False, "custom_fields": False, "sso": False, "audit_log": False},
    },
    {
        "id": "pro",
        "name": "Pro",
        "price_brl": 49,
        "limits": {"members": 50, "projects": 100, "issues": 100_000, "storage_bytes": 10 * GIB},
        "features": {"semantic_search": True, "custom_fields": True, "sso": False, "audit_log": False},
    },
    {
        "id": "enterprise",
        "name": "Enterprise",
        "price_brl": 299,
        "limits": {"members": 10_000, "projects": 10_000, "issues": 10_000_000, "storage_bytes": 1024 * GIB},
        "features": {"semantic_search": True, "custom_fields": True, "sso": True, "audit_log": True},
    },
]


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        # Trigram index behind the case-insensitive title search.
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.create_table('plans',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('price_brl', sa.Integer(), nullable=False),
    sa.Column('limits', sa.JSON(), nullable=False),
    sa.Column('features', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_plans'))
    )
    op.create_table('organizations',
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('slug', sa.String(length=80), nullable=False),
    sa.Column('plan_id', sa.String(length=40), nullable=False),
    sa.Column('plan_limits', sa.JSON(), nullable=False),
    sa.Column('plan_features', sa.JSON(), nullable=False),
    sa.Column('suspended', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['plan_id'], ['plans.id'], name=op.f('fk_organizations_plan_id_plans')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_organizations')),
    sa.UniqueConstraint('slug', name=op.f('uq_organizations_slug'))
    )
    with op.batch_alter_table('organizations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_organizations_plan_id'), ['plan_id'], unique=False)

    op.create_table('invitations',
    sa.Column('organization_id', sa.Uuid(), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.Column('invited_by_id', sa.Uuid(), nullable=True),
    sa.Column('accepted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['invited_by_id'], ['users.id'], name=op.f('fk_invitations_invited_by_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_invitations_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_invitations'))
    )
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.create_index('ix_invitations_email', ['email'], unique=False)
        batch_op.create_index(batch_op.f('ix_invitations_organization_id'), ['organization_id'], unique=False)

    op.create_table('memberships',
    sa.Column('organization_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("role IN ('owner', 'admin', 'member', 'viewer')", name=op.f('ck_memberships_role_valid')),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_memberships_organization_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memberships_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('organization_id', 'user_id', name=op.f('pk_memberships'))
    )
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_memberships_user_id'), ['user_id'], unique=False)

    op.create_table('workspaces',
    sa.Column('organization_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('slug', sa.String(length=80), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_workspaces_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_workspaces')),
    sa.UniqueConstraint('slug', name=op.f('uq_workspaces_slug'))
    )
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_workspaces_organization_id'), ['organization_id'], unique=False)

    op.create_table('projects',
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('organization_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('key', sa.String(length=10), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('issue_counter', sa.Integer(), nullable=False),
    sa.Column('issue_count', sa.Integer(), server_default='0', nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_projects_organization_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_projects_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_projects')),
    sa.UniqueConstraint('workspace_id', 'key', name='uq_projects_workspace_id_key')
    )
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_projects_organization_id'), ['organization_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_projects_workspace_id'), ['workspace_id'], unique=False)

    op.create_table('labels',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('color', sa.String(length=7), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_labels_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_labels')),
    sa.UniqueConstraint('project_id', 'name', name='uq_labels_project_id_name')
    )
    with op.batch_alter_table('labels', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_labels_project_id'), ['project_id'], unique=False)

    op.create_table('statuses',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('color', sa.String(length=7), nullable=False),
    sa.Column('category', sa.String(length=20), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint("category IN ('backlog', 'todo', 'in_progress', 'done', 'cancelled')", name=op.f('ck_statuses_category_valid')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_statuses_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_statuses'))
    )
    with op.batch_alter_table('statuses', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_statuses_project_id'), ['project_id'], unique=False)

    op.create_table('issues',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('organization_id', sa.Uuid(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('title', sa.String(length=500), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('type', sa.String(length=20), nullable=False),
    sa.Column('priority', sa.SmallInteger(), nullable=False),
    sa.Column('status_id', sa.Uuid(), nullable=False),
    sa.Column('assignee_id', sa.Uuid(), nullable=True),
    sa.Column('parent_id', sa.Uuid(), nullable=True),
    sa.Column('start_date', sa.Date(), nullable=True),
    sa.Column('due_date', sa.Date(), nullable=True),
    sa.Column('estimate', sa.Integer(), nullable=True),
    sa.Column('created_by_id', sa.Uuid(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('priority BETWEEN 0 AND 4', name=op.f('ck_issues_priority_valid')),
    sa.ForeignKeyConstraint(['assignee_id'], ['users.id'], name=op.f('fk_issues_assignee_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_issues_created_by_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_issues_organization_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_id'], ['issues.id'], name=op.f('fk_issues_parent_id_issues'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_issues_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['status_id'], ['statuses.id'], name=op.f('fk_issues_status_id_statuses')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_issues')),
    sa.UniqueConstraint('project_id', 'number', name='uq_issues_project_id_number')
    )
    with op.batch_alter_table('issues', schema=None) as batch_op:
        batch_op.create_index('ix_issues_assignee_id', ['assignee_id', 'project_id', 'priority', 'created_at'], unique=False)
        batch_op.create_index('ix_issues_organization_id', ['organization_id'], unique=False)
        batch_op.create_index('ix_issues_parent_id', ['parent_id'], unique=False)
        batch_op.create_index('ix_issues_project_created', ['project_id', 'created_at'], unique=False)
        batch_op.create_index('ix_issues_project_due', ['project_id', 'due_date'], unique=False)
        batch_op.create_index('ix_issues_project_priority', ['project_id', 'priority', 'created_at'], unique=False)
        batch_op.create_index('ix_issues_project_status', ['project_id', 'status_id', 'priority', 'created_at'], unique=False)
        batch_op.create_index('ix_issues_project_type', ['project_id', 'type', 'status_id', 'priority'], unique=False)
        batch_op.create_index('ix_issues_project_updated', ['project_id', 'updated_at'], unique=False)
        batch_op.create_index('ix_issues_status_id', ['status_id'], unique=False)
        batch_op.create_index('ix_issues_title_trgm', ['title'], unique=False, postgresql_using='gin', postgresql_ops={'title': 'gin_trgm_ops'})

    op.create_table('issue_labels',
    sa.Column('issue_id', sa.Uuid(), nullable=False),
    sa.Column('label_id', sa.Uuid(), nullable=False),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_issue_labels_issue_id_issues'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['label_id'], ['labels.id'], name=op.f('fk_issue_labels_label_id_labels'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('issue_id', 'label_id', name=op.f('pk_issue_labels'))
    )
    with op.batch_alter_table('issue_labels', schema=None) as batch_op:
        batch_op.create_index('ix_issue_labels_label_id', ['label_id', 'issue_id'], unique=False)

    op.create_table('issue_relations',
    sa.Column('issue_id', sa.Uuid(), nullable=False),
    sa.Column('related_issue_id', sa.Uuid(), nullable=False),
    sa.Column('type', sa.String(length=20), nullable=False),
    sa.Column('pair_id', sa.Uuid(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('issue_id <> related_issue_id', name=op.f('ck_issue_relations_not_self')),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_issue_relations_issue_id_issues'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['related_issue_id'], ['issues.id'], name=op.f('fk_issue_relations_related_issue_id_issues'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_issue_relations')),
    sa.UniqueConstraint('issue_id', 'related_issue_id', name='uq_issue_relations_issue_id_related')
    )
    with op.batch_alter_table('issue_relations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_issue_relations_pair_id'), ['pair_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_issue_relations_related_issue_id'), ['related_issue_id'], unique=False)


    plans = sa.table(
        "plans",
        sa.column("id", sa.String),
        sa.column("name", sa.String),
        sa.column("price_brl", sa.Integer),
        sa.column("limits", sa.JSON),
        sa.column("features", sa.JSON),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    now = datetime.now(timezone.utc)
    if op.get_bind().dialect.name == "sqlite":
        now = now.replace(tzinfo=None)
    op.bulk_insert(plans, [{**plan, "created_at": now} for plan in PLANS])


def downgrade():
    with op.batch_alter_table('issue_relations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_issue_relations_related_issue_id'))
        batch_op.drop_index(batch_op.f('ix_issue_relations_pair_id'))

    op.drop_table('issue_relations')
    with op.batch_alter_table('issue_labels', schema=None) as batch_op:
        batch_op.drop_index('ix_issue_labels_label_id')

    op.drop_table('issue_labels')
    with op.batch_alter_table('issues', schema=None) as batch_op:
        batch_op.drop_index('ix_issues_title_trgm', postgresql_using='gin', postgresql_ops={'title': 'gin_trgm_ops'})
        batch_op.drop_index('ix_issues_status_id')
        batch_op.drop_index('ix_issues_project_updated')
        batch_op.drop_index('ix_issues_project_type')
        batch_op.drop_index('ix_issues_project_status')
        batch_op.drop_index('ix_issues_project_priority')
        batch_op.drop_index('ix_issues_project_due')
        batch_op.drop_index('ix_issues_project_created')
        batch_op.drop_index('ix_issues_parent_id')
        batch_op.drop_index('ix_issues_organization_id')
        batch_op.drop_index('ix_issues_assignee_id')

    op.drop_table('issues')
    with op.batch_alter_table('statuses', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_statuses_project_id'))

    op.drop_table('statuses')
    with op.batch_alter_table('labels', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_labels_project_id'))

    op.drop_table('labels')
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_projects_workspace_id'))
        batch_op.drop_index(batch_op.f('ix_projects_organization_id'))

    op.drop_table('projects')
    with op.batch_alter_table('workspaces', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_workspaces_organization_id'))

    op.drop_table('workspaces')
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_memberships_user_id'))

    op.drop_table('memberships')
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_invitations_organization_id'))
        batch_op.drop_index('ix_invitations_email')

    op.drop_table('invitations')
    with op.batch_alter_table('organizations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_organizations_plan_id'))

    op.drop_table('organizations')
    op.drop_table('plans')
