"""task_invitations: an organiser's codes that register teams (and create their users and tokens) over HTTP

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "task_invitations",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("team", sa.String(length=200), nullable=True),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("uses_left", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"]),
        sa.ForeignKeyConstraint(["created_by"], ["tokens.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("code_hash"),
    )
    op.create_index("ix_task_invitations_task_id", "task_invitations", ["task_id"])


def downgrade() -> None:
    op.drop_index("ix_task_invitations_task_id", table_name="task_invitations")
    op.drop_table("task_invitations")
