"""users behind tokens: users (id, name, created_at) and tokens.user_id; every existing token becomes the one
token of its own user (``user_<token id>``, named as the token), so existing limits and quotas are unchanged

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("user_id", sa.String(length=40), nullable=True))
    op.execute("INSERT INTO users (id, name, created_at) SELECT 'user_' || id, name, created_at FROM tokens")
    op.execute("UPDATE tokens SET user_id = 'user_' || id")
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.alter_column("user_id", existing_type=sa.String(length=40), nullable=False)
        batch_op.create_foreign_key("fk_tokens_user_id_users", "users", ["user_id"], ["id"])
        batch_op.create_index(batch_op.f("ix_tokens_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tokens_user_id"))
        batch_op.drop_constraint("fk_tokens_user_id_users", type_="foreignkey")
        batch_op.drop_column("user_id")
    op.drop_table("users")
