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
    # Added, numbered and made NOT NULL in steps, as Citus allows on a distributed doc
    # (focuscrawl db distribute): no nextval() default on a column added to a table with
    # rows, and no nextval() in an UPDATE there, so on a cluster the rows already there
    # all get 0, found before any new one. On one server they are numbered in their
    # physical order, as an ADD COLUMN with the default would.
    op.add_column("doc", sa.Column("found_seq", sa.BigInteger))
    op.alter_column("doc", "found_seq", server_default=sa.text("nextval('doc_found_seq')"))
    distributed = _distributed()
    numbered = "0" if distributed else "nextval('doc_found_seq')"
    op.execute(f"UPDATE doc SET found_seq = {numbered}")
    op.alter_column("doc", "found_seq", nullable=False)
    if not distributed:  # Citus alters no distributed sequence: the downgrade drops it
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


def _distributed() -> bool:
    """Whether doc is a Citus distributed table."""
    bind = op.get_bind()
    if bind.exec_driver_sql("SELECT to_regclass('pg_dist_partition')").scalar() is None:
        return False
    return bool(
        bind.exec_driver_sql(
            "SELECT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'doc'::regclass)"
        ).scalar()
    )


def downgrade() -> None:
    op.drop_index("doc_frontier_bfs", table_name="doc")
    op.drop_index("doc_frontier_unfocused", table_name="doc")
    op.drop_column("doc", "found_seq")
    op.execute("DROP SEQUENCE IF EXISTS doc_found_seq")  # owned by the column but on Citus
