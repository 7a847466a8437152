"""single sign-on: providers, vouched domains, linked identities, sign-ins under way

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-02 06:30:00
"""

import sqlalchemy as sa
from alembic import op


revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "sso_connections",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("issuer", sa.String(length=500), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("client_secret_encrypted", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("enforced", sa.Boolean(), nullable=False),
        sa.Column("default_role", sa.String(length=20), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"],
            name=op.f("fk_sso_connections_organization_id_organizations"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_sso_connections")),
    )
    op.create_table(
        "sso_domains",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("verification_token", sa.String(length=64), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("verified_by", sa.String(length=20), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"],
            name=op.f("fk_sso_domains_organization_id_organizations"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sso_domains")),
        sa.UniqueConstraint("organization_id", "domain", name="uq_sso_domains_organization_id_domain"),
    )
    op.create_index(
        "uq_sso_domains_verified_domain", "sso_domains", ["domain"], unique=True,
        postgresql_where=sa.text("verified_at IS NOT NULL"), sqlite_where=sa.text("verified_at IS NOT NULL"),
    )
    op.create_table(
        "sso_identities",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("issuer", sa.String(length=500), nullable=False),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("last_sign_in_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_sso_identities_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"],
            name=op.f("fk_sso_identities_organization_id_organizations"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sso_identities")),
        sa.UniqueConstraint("issuer", "subject", name="uq_sso_identities_issuer_subject"),
    )
    op.create_index(op.f("ix_sso_identities_user_id"), "sso_identities", ["user_id"])
    op.create_index(op.f("ix_sso_identities_organization_id"), "sso_identities", ["organization_id"])
    op.create_table(
        "sso_login_states",
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("browser_hash", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.String(length=128), nullable=False),
        sa.Column("code_verifier", sa.String(length=128), nullable=False),
        sa.Column("next_url", sa.String(length=2000), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"],
            name=op.f("fk_sso_login_states_organization_id_organizations"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_sso_login_states")),
    )
    op.create_index(op.f("ix_sso_login_states_organization_id"), "sso_login_states", ["organization_id"])
    op.create_index(op.f("ix_sso_login_states_expires_at"), "sso_login_states", ["expires_at"])


def downgrade():
    op.drop_table("sso_login_states")
    op.drop_table("sso_identities")
    op.drop_index("uq_sso_domains_verified_domain", table_name="sso_domains")
    op.drop_table("sso_domains")
    op.drop_table("sso_connections")
