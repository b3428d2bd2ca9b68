"""Maintenance crawling: remember ETags, and index fetched pages by relevance then age.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("doc", sa.Column("etag", sa.String(128), nullable=True))
    op.create_index(
        "doc_revisit",
        "doc",
        [sa.text("relevance DESC"), "fetched_at"],
        postgresql_where=sa.text("state = 2"),
    )


def downgrade() -> None:
    op.drop_index("doc_revisit", table_name="doc")
    op.drop_column("doc", "etag")
