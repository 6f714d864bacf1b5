"""jobs.kind: evaluation or meta-evaluation

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("kind", sa.String(length=20), nullable=False, server_default="evaluation"))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("kind")
