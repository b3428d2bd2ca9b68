"""The frontier index without ``num_tries`` in its key: 24-byte entries instead of 32.

The checkout order is ``(num_tries asc, relevance desc, priority asc, bytehash)``, and
nearly every unvisited URL has ``num_tries = 0``. With ``num_tries`` (a smallint) first
in the key, alignment padded each entry of ``doc_frontier`` to 32 bytes. The order is
the same read off two partial indexes:

- ``doc_frontier (relevance DESC, priority, bytehash) WHERE state = 0 AND num_tries = 0``:
  the untried URLs, 24-byte entries;
- ``doc_frontier_retry (num_tries, relevance DESC, priority, bytehash) WHERE state = 0
  AND num_tries > 0``: the few that failed and wait for another try, behind all of them.

``claim_batch`` (sql/frontier.sql) takes what it can from the first and the rest from
the second.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("doc_frontier", table_name="doc")
    op.create_index(
        "doc_frontier",
        "doc",
        [sa.text("relevance DESC"), "priority", "bytehash"],
        postgresql_where=sa.text("state = 0 AND num_tries = 0"),
    )
    op.create_index(
        "doc_frontier_retry",
        "doc",
        ["num_tries", sa.text("relevance DESC"), "priority", "bytehash"],
        postgresql_where=sa.text("state = 0 AND num_tries > 0"),
    )


def downgrade() -> None:
    op.drop_index("doc_frontier_retry", table_name="doc")
    op.drop_index("doc_frontier", table_name="doc")
    op.create_index(
        "doc_frontier",
        "doc",
        ["num_tries", sa.text("relevance DESC"), "priority", "bytehash"],
        postgresql_where=sa.text("state = 0"),
    )
