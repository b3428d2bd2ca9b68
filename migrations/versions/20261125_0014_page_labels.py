"""Labels that teach: an operator's verdict on a fetched page (``focuscrawl label``).

- ``page_label``: one row per labelled page: good or bad, the category it was made an
  example of, and the ``example`` row that carries its text into training (deleted with
  it, as a taxonomy import deletes every example).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE page_label (
            oid bigint PRIMARY KEY,
            good boolean NOT NULL,
            kcid smallint NOT NULL,
            eid bigint NOT NULL REFERENCES example (eid) ON DELETE CASCADE,
            labelled_at timestamp with time zone NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE page_label IS 'An operator''s labels of fetched pages: each is an "
        "example (eid) of the category kcid for the next training.'"
    )


def downgrade() -> None:
    op.execute("DROP TABLE page_label")
