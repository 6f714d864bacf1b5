"""run format: runs.run_format, the layout a stored run is read in (trec, evall, pyevall-json, pyevall-tsv);
runs stored before are TREC

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("run_format", sa.String(length=20), nullable=False, server_default="trec"))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("run_format")
