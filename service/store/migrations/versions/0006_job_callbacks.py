"""job callbacks: jobs.callback_url and callback_secret; a webhook delivery may be a job's callback (job_id, one
per job) instead of a task webhook's event (webhook_id now nullable)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("callback_url", sa.String(length=2000), nullable=True))
        batch.add_column(sa.Column("callback_secret", sa.String(length=200), nullable=True))
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.alter_column("webhook_id", existing_type=sa.String(length=40), nullable=True)
        batch.add_column(sa.Column("job_id", sa.String(length=40), nullable=True))
        batch.create_foreign_key("fk_webhook_deliveries_job_id", "jobs", ["job_id"], ["id"])
        batch.create_index("ux_webhook_deliveries_job_id", ["job_id"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.drop_index("ux_webhook_deliveries_job_id")
        batch.drop_constraint("fk_webhook_deliveries_job_id", type_="foreignkey")
        batch.drop_column("job_id")
        batch.alter_column("webhook_id", existing_type=sa.String(length=40), nullable=False)
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("callback_secret")
        batch.drop_column("callback_url")
