"""worker_heartbeats: each worker process's latest sign of life, for GET /health

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "worker_heartbeats",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("queues", sa.String(length=1000), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    with op.batch_alter_table("worker_heartbeats", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_worker_heartbeats_last_seen"), ["last_seen"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("worker_heartbeats", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_worker_heartbeats_last_seen"))

    op.drop_table("worker_heartbeats")
