"""job outputs: job_outputs, what a worker built from a succeeded job's result (report content, plots) as blobs,
so the API streams or typesets them without computing; jobs that succeeded before have none

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_outputs",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("blob_sha256", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"]),
        sa.ForeignKeyConstraint(["blob_sha256"], ["blobs.sha256"]),
        sa.PrimaryKeyConstraint("job_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("job_outputs")
