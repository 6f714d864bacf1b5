"""fair deliveries and safe feedback: webhook_deliveries.owner/target/sending_until (what the per-owner and
per-target caps count), webhook_circuits (a circuit breaker per target), and tasks.per_topic_feedback off by
default for new tasks (existing tasks keep the value stored in their rows)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("target", sa.String(length=300), nullable=True))
        batch.add_column(sa.Column("sending_until", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_webhook_deliveries_sending", ["sending_until"])
    op.create_table(
        "webhook_circuits",
        sa.Column("target", sa.String(length=300), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("open_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("target"),
    )
    with op.batch_alter_table("tasks") as batch:  # the default of new rows only: existing tasks keep theirs
        batch.alter_column("per_topic_feedback", existing_type=sa.Boolean(), existing_nullable=False,
                           server_default=sa.false())


def downgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.alter_column("per_topic_feedback", existing_type=sa.Boolean(), existing_nullable=False,
                           server_default=sa.true())
    op.drop_table("webhook_circuits")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.drop_index("ix_webhook_deliveries_sending")
        batch.drop_column("sending_until")
        batch.drop_column("target")
        batch.drop_column("owner")
