"""Page text stored uncompressed: ``doc_text.text`` out of line with no pglz.

PostgreSQL compresses a text value of more than about 2 KB with pglz before it moves
it out of line, and pglz is slow: on Wikispeedia pages (23 KB of text) compressing cost
the server 0.43 ms a page, against 0.08 ms to store the text as it is, about a quarter
of all the server's work in a focused crawl. The text takes 1.85 times the space
instead (measured on the demo's 1,500 pages: 34.5 MB against 18.6 MB). The database is
what every crawler shares, so its CPU is what limits a crawl first; disk is cheaper.
Values already stored keep their compression; ``VACUUM FULL doc_text`` rewrites them.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE doc_text ALTER COLUMN text SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.execute("ALTER TABLE doc_text ALTER COLUMN text SET STORAGE EXTENDED")
