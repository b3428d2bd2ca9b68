"""A fetched page's share of text in links: ``doc_fetch.link_share``.

The characters of a page's out-links' anchors over the characters of its visible text,
as the crawler parses it (each linked URL's first anchor, up to 200 characters). A page
most of whose text is links (a site's home page, a section's index, a list) is a hub
on the topic, not a page of it: `export --what relevant` and the evaluation's verdict
leave it out (focuscrawl.monitor.export.MOSTLY_LINKS). NULL for pages fetched before
this revision and for what is not HTML.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07
"""

from __future__ import annotations

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE doc_fetch ADD COLUMN link_share real")


def downgrade() -> None:
    op.execute("ALTER TABLE doc_fetch DROP COLUMN link_share")
