"""The link learner's queue holds URLs that failed, beside links into scored pages.

A request that brought no page (a 404, a host that does not resolve, a timeout) teaches
the link learner that a link to that URL was worth nothing: a lesson of the URL's host
and file type alone, with no source (``src_cid`` and ``src_relevance`` NULL), queued by
the crawler's store. ``src_relevance`` was NOT NULL, as every lesson had a scored
source; it may now be NULL. Downgrading drops the lessons without a source.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_COMMENT = (
    "Links into scored pages, labelled by the page''s relevance, and URLs whose request "
    "failed (no source, labelled 0), waiting for the link learner (deleted once learned)."
)
_OLD = (
    "Links into scored pages, labelled by the page''s relevance, waiting for the link "
    "learner (deleted once learned)."
)


def upgrade() -> None:
    op.execute("ALTER TABLE link_example ALTER COLUMN src_relevance DROP NOT NULL")
    op.execute(f"COMMENT ON TABLE link_example IS '{_COMMENT}'")


def downgrade() -> None:
    op.execute("DELETE FROM link_example WHERE src_relevance IS NULL")
    op.execute("ALTER TABLE link_example ALTER COLUMN src_relevance SET NOT NULL")
    op.execute(f"COMMENT ON TABLE link_example IS '{_OLD}'")
