"""Links keep the sum of their own features' weights: ``link.own``, ``doc_fetch.links_model``.

The crawler scores every out-link it checks in with the newest link model: the weights
of the link's own features (anchor, context, target) plus the lowest its source's terms
can add. When the source is scored the classifier scored the link again from its words,
to add the source's class and relevance: the same features hashed and summed a second
time, 30% of the classifier's CPU in a polite crawl of 1,000 hosts (``py-spy``). Now the
crawler stores the sum (``link.own``, a real: NULL where the link was not estimated) and
the model it used (``doc_fetch.links_model``, per page, as one model estimates a store
batch), and the classifier adds the source's terms to it when that model is still its
own; else it reads the words again, as before. Both columns are NULL for rows stored
before this revision, which are then scored from their words.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE link ADD COLUMN own real")
    op.execute("ALTER TABLE doc_fetch ADD COLUMN links_model integer")


def downgrade() -> None:
    op.execute("ALTER TABLE doc_fetch DROP COLUMN links_model")
    op.execute("ALTER TABLE link DROP COLUMN own")
