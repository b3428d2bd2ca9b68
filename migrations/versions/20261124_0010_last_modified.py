"""Revisits also send If-Modified-Since: remember each page's Last-Modified.

A server that gives a page a Last-Modified date and no ETag answered every revisit in
full; with the date kept, it can answer 304 Not Modified. The column is NULL for
unvisited URLs, so a frontier row does not grow (its null bitmap already has room).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("doc", sa.Column("last_modified", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("doc", "last_modified")
