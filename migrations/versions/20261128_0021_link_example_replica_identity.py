"""``link_example`` names its rows by all their columns to logical replication too.

The link learner's queue has no key, like ``link`` (0018), and Citus refused to add a
worker's share of the cluster with the documented ``citus_rebalance_start()``:
"cannot use logical replication to transfer shards of the relation link_example since
it doesn't have a REPLICA IDENTITY or PRIMARY KEY". With ``REPLICA IDENTITY FULL`` every
table of the schema can be moved (a test checks that none is left without a key or a
replica identity). On a server that does not replicate logically it changes nothing.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE link_example REPLICA IDENTITY FULL")


def downgrade() -> None:
    op.execute("ALTER TABLE link_example REPLICA IDENTITY DEFAULT")
