"""``link`` names its rows by all their columns to logical replication.

``link`` has no key (its pairs are unique because the store keeps them so), and logical
replication cannot send an update or a delete of a row it cannot identify. Citus moves
and splits shards without blocking writes by logical replication (its rebalancer's
default), and refused to move a shard of ``link`` ("doesn't have a REPLICA IDENTITY or
PRIMARY KEY"), so no shard of the crawl could move. With ``REPLICA IDENTITY FULL`` a
subscriber finds the row by its values, through the ``link_src`` index on PostgreSQL 16.
On a server that does not replicate logically (``wal_level`` below ``logical``) it
changes nothing.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE link REPLICA IDENTITY FULL")


def downgrade() -> None:
    op.execute("ALTER TABLE link REPLICA IDENTITY DEFAULT")
