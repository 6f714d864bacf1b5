"""tasks.per_topic_feedback: whether participants read their own submissions' per-topic scores (default on, as
TREC gives each team its per-topic evaluation; existing tasks get it on too)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("per_topic_feedback", sa.Boolean(), server_default=sa.true(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("per_topic_feedback")
