"""Baseline orders: the frontier by bytehash (unfocused) and by discovery (bfs).

A branch of its own (label ``baselines``), applied by a crawl in mode bfs or
unfocused when it starts (``focuscrawl db upgrade baselines@head`` applies it by hand). Rows that
are already there are numbered in ``found_seq`` in their physical order.

Revision ID: b001
Revises:
Depends on: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "b001"
down_revision = None
branch_labels = ("baselines",)
depends_on = "0006"


def upgrade() -> None:
    op.execute("CREATE SEQUENCE doc_found_seq AS bigint")
    op.add_column(
        "doc",
        sa.Column(
            "found_seq",
            sa.BigInteger,
            nullable=False,
            server_default=sa.text("nextval('doc_found_seq')"),
        ),
    )
    op.execute("ALTER SEQUENCE doc_found_seq OWNED BY doc.found_seq")
    # unfocused: the paper's pseudo-random order
    op.create_index(
        "doc_frontier_unfocused",
        "doc",
        ["num_tries", "bytehash"],
        postgresql_where=sa.text("state = 0"),
    )
    # bfs: breadth-first, in order of discovery
    op.create_index(
        "doc_frontier_bfs",
        "doc",
        ["num_tries", "depth", "found_seq"],
        postgresql_where=sa.text("state = 0"),
    )


def downgrade() -> None:
    op.drop_index("doc_frontier_bfs", table_name="doc")
    op.drop_index("doc_frontier_unfocused", table_name="doc")
    op.drop_column("doc", "found_seq")
