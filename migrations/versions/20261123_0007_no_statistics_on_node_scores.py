"""No planner statistics on ``doc_class.logp``: ANALYZE spent a tenth of the server there.

Autovacuum analyzes ``doc_class`` again and again as the classifier writes scores. With
statistics on ``logp`` (a ``real[]``, one log-probability per taxonomy node) each
ANALYZE computed element frequencies over some 30,000 sampled arrays of about 150
elements: 1.2-1.3 s of CPU each time, 12 s of the server's 108 s in a 100,000-page
crawl. No statement filters, joins or groups on ``logp``: they read it whole, by
``oid`` or ``model_id``. With a statistics target of 0, ANALYZE skips the column (64 ms
instead of 1.2 s on the same table).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE doc_class ALTER COLUMN logp SET STATISTICS 0")


def downgrade() -> None:
    op.execute("ALTER TABLE doc_class ALTER COLUMN logp SET STATISTICS -1")
