"""collections.catalogue_key, citation, topics: collections loaded from the benchmark catalogue

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("collections") as batch:
        batch.add_column(sa.Column("catalogue_key", sa.String(80), nullable=True))
        batch.add_column(sa.Column("citation", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("topics", sa.JSON(), nullable=False, server_default="{}"))
        batch.create_index("ix_collections_catalogue_key", ["catalogue_key"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("collections") as batch:
        batch.drop_index("ix_collections_catalogue_key")
        batch.drop_column("topics")
        batch.drop_column("citation")
        batch.drop_column("catalogue_key")
