"""shared tasks: tasks, judgment versions, phases, participants, submissions and their evaluations, webhooks
and their deliveries; collections.hidden

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("owner_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.String(length=40), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("measures", sa.JSON(), nullable=False),
        sa.Column("primary_measure", sa.String(length=200), nullable=False),
        sa.Column("sort_order", sa.String(length=4), nullable=False),
        sa.Column("ties", sa.String(length=20), nullable=False),
        sa.Column("topics", sa.String(length=20), nullable=False),
        sa.Column("visibility", sa.String(length=20), nullable=False),
        sa.Column("blinded_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("registration", sa.String(length=10), nullable=False),
        sa.Column("registration_code", sa.String(length=200), nullable=True),
        sa.Column("significance", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["collections.id"],
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["tokens.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tasks_owner_id"), ["owner_id"], unique=False)

    op.create_table(
        "task_participants",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("token_id", sa.String(length=40), nullable=False),
        sa.Column("team", sa.String(length=200), nullable=False),
        sa.Column("submissions_made", sa.Integer(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
        ),
        sa.ForeignKeyConstraint(
            ["token_id"],
            ["tokens.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("task_participants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_task_participants_task_id"), ["task_id"], unique=False)
        batch_op.create_index("ux_task_participants_team", ["task_id", "team"], unique=True)
        batch_op.create_index("ux_task_participants_token", ["task_id", "token_id"], unique=True)

    op.create_table(
        "task_phases",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("opens_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closes_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("quota_per_day", sa.Integer(), nullable=True),
        sa.Column("quota_total", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("task_phases", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_task_phases_task_id"), ["task_id"], unique=False)
        batch_op.create_index("ux_task_phases_name", ["task_id", "name"], unique=True)

    op.create_table(
        "task_versions",
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.String(length=40), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["collections.id"],
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
        ),
        sa.PrimaryKeyConstraint("task_id", "version"),
    )
    op.create_table(
        "webhooks",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("secret", sa.String(length=200), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhooks_task_id"), ["task_id"], unique=False)

    op.create_table(
        "task_submissions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("participant_id", sa.String(length=40), nullable=False),
        sa.Column("phase_id", sa.String(length=40), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("baseline", sa.Boolean(), nullable=False),
        sa.Column("selected", sa.Boolean(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["participant_id"],
            ["task_participants.id"],
        ),
        sa.ForeignKeyConstraint(
            ["phase_id"],
            ["task_phases.id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("task_submissions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_task_submissions_participant_id"), ["participant_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_task_submissions_task_id"), ["task_id"], unique=False)

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("webhook_id", sa.String(length=40), nullable=False),
        sa.Column("event", sa.String(length=50), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("log", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_deliveries_due", ["state", "next_attempt_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_webhook_deliveries_webhook_id"), ["webhook_id"], unique=False)

    op.create_table(
        "submission_evaluations",
        sa.Column("submission_id", sa.String(length=40), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["jobs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["task_submissions.id"],
        ),
        sa.PrimaryKeyConstraint("submission_id", "version"),
    )
    with op.batch_alter_table("submission_evaluations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_submission_evaluations_job_id"), ["job_id"], unique=False)

    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("hidden", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.drop_column("hidden")

    with op.batch_alter_table("submission_evaluations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_submission_evaluations_job_id"))

    op.drop_table("submission_evaluations")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_webhook_id"))
        batch_op.drop_index("ix_webhook_deliveries_due")

    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("task_submissions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_task_submissions_task_id"))
        batch_op.drop_index(batch_op.f("ix_task_submissions_participant_id"))

    op.drop_table("task_submissions")
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhooks_task_id"))

    op.drop_table("webhooks")
    op.drop_table("task_versions")
    with op.batch_alter_table("task_phases", schema=None) as batch_op:
        batch_op.drop_index("ux_task_phases_name")
        batch_op.drop_index(batch_op.f("ix_task_phases_task_id"))

    op.drop_table("task_phases")
    with op.batch_alter_table("task_participants", schema=None) as batch_op:
        batch_op.drop_index("ux_task_participants_token")
        batch_op.drop_index("ux_task_participants_team")
        batch_op.drop_index(batch_op.f("ix_task_participants_task_id"))

    op.drop_table("task_participants")
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tasks_owner_id"))

    op.drop_table("tasks")
