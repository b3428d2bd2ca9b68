"""Classifier: trained models, per-node scores, and which model scored a document.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TSTZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_unique_constraint("taxonomy_pcid_kcname_key", "taxonomy", ["pcid", "kcname"])
    op.create_table(
        "model",
        sa.Column("model_id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("created_at", TSTZ, nullable=False, server_default=sa.text("now()")),
        sa.Column("taxonomy_digest", sa.String(64), nullable=False),
        sa.Column("examples", sa.Integer, nullable=False),
        sa.Column("params", postgresql.JSONB, nullable=False),
        sa.Column("weights", sa.LargeBinary, nullable=False),
        comment="Trained hierarchical classifiers; the newest is the one in use.",
    )
    op.add_column("doc", sa.Column("model_id", sa.Integer, nullable=True))
    # fetched pages waiting for the classifier, in fetch order
    op.create_index(
        "doc_unclassified",
        "doc",
        ["fetch_seq"],
        postgresql_where=sa.text("state = 2 AND model_id IS NULL"),
    )
    op.create_table(
        "doc_class",
        sa.Column(
            "oid",
            sa.BigInteger,
            sa.ForeignKey("doc.oid", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("model_id", sa.Integer, nullable=False),
        sa.Column("logp", postgresql.ARRAY(sa.REAL), nullable=False),
        comment="log Pr[c|d] of every taxonomy node, in the model's node order "
        "(relevance is recomputed from it when good categories change).",
    )


def downgrade() -> None:
    op.drop_table("doc_class")
    op.drop_index("doc_unclassified", table_name="doc")
    op.drop_column("doc", "model_id")
    op.drop_table("model")
    op.drop_constraint("taxonomy_pcid_kcname_key", "taxonomy", type_="unique")
