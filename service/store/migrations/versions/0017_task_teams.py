"""task teams: member users of a participant, removal, disqualification, withdrawal and the task audit log

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "task_participant_members",
        sa.Column("participant_id", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["participant_id"], ["task_participants.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"]),
        sa.PrimaryKeyConstraint("participant_id", "user_id"),
    )
    op.create_index("ux_task_participant_members_user", "task_participant_members", ["task_id", "user_id"],
                    unique=True)
    # every existing registration: its token's user is its member (a user registered twice in one task, with two
    # tokens, is a member of the earlier team; the later one still acts by the token that registered it)
    op.execute(
        "INSERT INTO task_participant_members (participant_id, user_id, task_id, joined_at)"
        " SELECT p.id, t.user_id, p.task_id, p.registered_at FROM task_participants p"
        " JOIN tokens t ON t.id = p.token_id"
        " WHERE NOT EXISTS (SELECT 1 FROM task_participants q JOIN tokens u ON u.id = q.token_id"
        "  WHERE q.task_id = p.task_id AND u.user_id = t.user_id"
        "  AND (q.registered_at < p.registered_at OR (q.registered_at = p.registered_at AND q.id < p.id)))"
    )
    with op.batch_alter_table("task_participants") as batch:
        batch.add_column(sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("removed_reason", sa.Text(), nullable=True))
        batch.add_column(sa.Column("disqualified_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("disqualified_reason", sa.Text(), nullable=True))
    with op.batch_alter_table("task_submissions") as batch:
        batch.add_column(sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("disqualified_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("disqualified_reason", sa.Text(), nullable=True))
    op.create_table(
        "task_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=True),
        sa.Column("token_id", sa.String(length=40), nullable=True),
        sa.Column("action", sa.String(length=60), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_task_audit_task", "task_audit", ["task_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_task_audit_task", table_name="task_audit")
    op.drop_table("task_audit")
    with op.batch_alter_table("task_submissions") as batch:
        for column in ("disqualified_reason", "disqualified_at", "withdrawn_at"):
            batch.drop_column(column)
    with op.batch_alter_table("task_participants") as batch:
        for column in ("disqualified_reason", "disqualified_at", "removed_reason", "removed_at"):
            batch.drop_column(column)
    op.drop_index("ux_task_participant_members_user", table_name="task_participant_members")
    op.drop_table("task_participant_members")
