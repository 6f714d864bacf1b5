"""job_parts: slices of an evaluation job's runs evaluated by several workers (evalserve.service.jobrun.split)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_parts",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("runs", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("progress", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("workers", sa.JSON(), nullable=False),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("result_sha256", sa.String(length=64), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"]),
        sa.ForeignKeyConstraint(["result_sha256"], ["blobs.sha256"]),
        sa.PrimaryKeyConstraint("job_id", "index"),
    )
    with op.batch_alter_table("job_parts", schema=None) as batch_op:
        batch_op.create_index("ix_job_parts_state_enqueued", ["state", "enqueued_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("job_parts", schema=None) as batch_op:
        batch_op.drop_index("ix_job_parts_state_enqueued")

    op.drop_table("job_parts")
