"""stored results: stored_results, a shared task's leaderboards and meta-evaluations computed once by a worker
when their inputs change (keyed by what they are, with the fingerprint of their inputs), served as stored

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stored_results",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("inputs", sa.String(length=64), nullable=False),
        sa.Column("blob_sha256", sa.String(length=64), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"]),
        sa.ForeignKeyConstraint(["blob_sha256"], ["blobs.sha256"]),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_stored_results_task_id", "stored_results", ["task_id"])


def downgrade() -> None:
    op.drop_index("ix_stored_results_task_id", table_name="stored_results")
    op.drop_table("stored_results")
