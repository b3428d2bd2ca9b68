"""The baseline orders leave the main line: focused crawls stop paying for them.

The bfs and unfocused frontier indexes, and ``found_seq`` that the bfs order reads,
cost about 58 of the 255 bytes a frontier row took, and a sixth of the ingest rate,
in every crawl, though only the baseline modes read them. They move to the
``baselines`` branch (revision b001), which a crawl in mode bfs or unfocused applies
when it starts.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("doc_frontier_bfs", table_name="doc", if_exists=True)
    op.drop_index("doc_frontier_unfocused", table_name="doc", if_exists=True)
    op.drop_column("doc", "found_seq")  # its sequence is owned by it and goes too


def downgrade() -> None:
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
    op.create_index(
        "doc_frontier_unfocused",
        "doc",
        ["num_tries", "bytehash"],
        postgresql_where=sa.text("state = 0"),
    )
    op.create_index(
        "doc_frontier_bfs",
        "doc",
        ["num_tries", "depth", "found_seq"],
        postgresql_where=sa.text("state = 0"),
    )
