"""Heal what an unchecked delay left on site rows: no schema change.

Before settings and robots.txt values were checked, a crawl run with ``--host-delay
inf`` stored ``next_fetch_at = infinity`` for every host it touched, and a robots.txt
``Crawl-delay: 1e300`` was stored as it came; every later crawl then failed on those
hosts (``cannot subtract infinite timestamps``, ``timestamp out of range``). A host's
next request is never further off than the longest delay now honoured (a week's
Retry-After), and a Crawl-delay is at most a day (``max_crawl_delay``'s range): rows
past them are set back to "ask now" and "no Crawl-delay" (the crawler reads robots.txt
again when its copy expires, and caps what it finds).

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "UPDATE site SET next_fetch_at = now() WHERE next_fetch_at > now() + interval '8 days'"
    )
    op.execute(
        "UPDATE site SET crawl_delay = NULL "
        "WHERE crawl_delay = 'NaN' OR crawl_delay > 86400 OR crawl_delay < 0"
    )


def downgrade() -> None:
    pass  # the values healed were no valid state to go back to
