"""Links are found by their source: a deduplicating index on oid_src replaces the key.

Every reader of ``link`` (the classifier's estimates, the distiller, the boost, the
monitor) looks links up by ``oid_src``. A unique b-tree on ``(oid_src, oid_dst)``
cost about 40 bytes per row, as much as half the heap row, because out-links arrive in
random key order. A plain index on ``oid_src`` keeps one key per page and a list of
row pointers (b-tree deduplication), a few bytes per link. The store now deduplicates
links itself (``store_links``), under the lock it holds on the source page's row.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("link_src", "link", ["oid_src"])
    op.drop_constraint("link_pkey", "link", type_="primary")


def downgrade() -> None:
    op.execute(
        """
        DELETE FROM link AS a USING link AS b
        WHERE a.oid_src = b.oid_src AND a.oid_dst = b.oid_dst AND a.ctid > b.ctid
        """
    )
    op.create_primary_key("link_pkey", "link", ["oid_src", "oid_dst"])
    op.drop_index("link_src", table_name="link")
