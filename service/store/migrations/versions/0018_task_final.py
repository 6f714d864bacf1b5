"""tasks.finalised_at and tasks.final: a finalised task's frozen state and its final record

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("finalised_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("final", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("final")
        batch.drop_column("finalised_at")
