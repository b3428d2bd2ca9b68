"""doc.relevance becomes a 4-byte real.

log R(d) orders the frontier; it comes from the node scores in ``doc_class.logp``,
which are real already, so eight bytes held no more than four. In ``doc_frontier``
``(num_tries, relevance DESC, priority, bytehash)`` the double also forced six bytes
of padding after ``num_tries``: each index entry shrinks from 32 to 24 bytes.

PostgreSQL refuses a double that underflows a real instead of rounding it to zero,
and log R(d) of a page that is surely on topic is such a value (-1e-50, say):
``as_relevance(float8)`` rounds what a real cannot hold (|x| < 1e-30 to 0, finite
values below -1e30 to -1e30) and is how scores are written.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.alter_column("doc", "relevance", type_=sa.REAL, existing_nullable=False)
    op.execute(
        """
        CREATE FUNCTION as_relevance(x double precision) RETURNS real
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT (CASE WHEN x > -1e-30 THEN 0
                         WHEN x < -1e30 AND x <> '-Infinity' THEN -1e30
                         ELSE x END)::real
        $$
        """
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION as_relevance(double precision)")
    op.alter_column("doc", "relevance", type_=sa.Double, existing_nullable=False)
