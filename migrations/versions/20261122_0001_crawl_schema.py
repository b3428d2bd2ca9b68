"""Crawl schema: taxonomy, examples, sites, documents, links, distiller scores.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = ("main",)
depends_on = None

TSTZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    # A document's oid and bytehash come from the MD5 of its normalised URL
    # (focuscrawl.web.urls computes the same in Python).
    op.execute(
        """
        CREATE FUNCTION url_oid(url text) RETURNS bigint
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN ('x' || substr(md5(url), 1, 16))::bit(64)::bigint
        """
    )
    op.execute(
        """
        CREATE FUNCTION url_bytehash(url text) RETURNS integer
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN ('x' || substr(md5(url), 17, 8))::bit(32)::integer
        """
    )

    op.create_table(
        "taxonomy",
        sa.Column("kcid", sa.SmallInteger, primary_key=True, autoincrement=False),
        sa.Column("pcid", sa.SmallInteger, sa.ForeignKey("taxonomy.kcid"), nullable=False),
        sa.Column("kcname", sa.String(250), nullable=False),
        sa.Column("good", sa.SmallInteger, nullable=False, server_default=sa.text("0")),
        comment="Topic tree (the paper's table); the root is kcid 0, its own parent.",
    )
    op.create_table(
        "example",
        sa.Column("eid", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("kcid", sa.SmallInteger, sa.ForeignKey("taxonomy.kcid"), nullable=False),
        sa.Column("url", sa.Text, nullable=True),
        sa.Column("title", sa.Text, nullable=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.UniqueConstraint("kcid", "url", name="example_kcid_url_key"),
        comment="Training documents per category.",
    )
    op.create_table(
        "site",
        sa.Column("sid", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("host", sa.Text, nullable=False, unique=True),
        sa.Column("robots_status", sa.SmallInteger, nullable=True),
        sa.Column("robots_txt", sa.Text, nullable=True),
        sa.Column("robots_expires_at", TSTZ, nullable=True),
        sa.Column("crawl_delay", sa.Double, nullable=True),
        sa.Column(
            "next_fetch_at",
            TSTZ,
            nullable=False,
            server_default=sa.text("'-infinity'::timestamptz"),
        ),
        sa.Column("lease_until", TSTZ, nullable=True),
        sa.Column("pages_taken", sa.Integer, nullable=False, server_default=sa.text("0")),
        comment="One row per host[:port]: robots.txt state and politeness.",
    )
    op.create_table(
        "doc",
        sa.Column("oid", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("relevance", sa.Double, nullable=False, server_default=sa.text("0")),
        sa.Column("sid", sa.Integer, sa.ForeignKey("site.sid"), nullable=False),
        sa.Column("bytehash", sa.Integer, nullable=False),
        sa.Column("num_tries", sa.SmallInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("priority", sa.SmallInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("state", sa.SmallInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("depth", sa.SmallInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("cid", sa.SmallInteger, nullable=True),
        sa.Column("http_status", sa.SmallInteger, nullable=True),
        sa.Column("lease_until", TSTZ, nullable=True),
        sa.Column("fetched_at", TSTZ, nullable=True),
        sa.Column("fetch_seq", sa.BigInteger, nullable=True),
        sa.Column("content_hash", sa.BigInteger, nullable=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("content_type", sa.String(128), nullable=True),
        sa.Column("error", sa.String(64), nullable=True),
        sa.Column("title", sa.Text, nullable=True),
        sa.CheckConstraint("oid = url_oid(url)", name="doc_oid_is_url_hash"),
        comment="One row per URL, fetched or not. oid = url_oid(url); relevance = log R(d).",
    )
    op.create_index(
        "doc_frontier",
        "doc",
        ["num_tries", sa.text("relevance DESC"), "priority", "bytehash"],
        postgresql_where=sa.text("state = 0"),
    )
    op.execute("CREATE SEQUENCE doc_fetch_seq AS bigint")
    op.create_table(
        "doc_text",
        sa.Column(
            "oid",
            sa.BigInteger,
            sa.ForeignKey("doc.oid", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("text", sa.Text, nullable=False),
        comment="Visible text of fetched pages, apart so that doc stays narrow.",
    )
    op.create_table(
        "link",
        sa.Column("oid_src", sa.BigInteger, nullable=False),
        sa.Column("oid_dst", sa.BigInteger, nullable=False),
        sa.Column("sid_src", sa.Integer, nullable=False),
        sa.Column("sid_dst", sa.Integer, nullable=False),
        sa.Column("anchor", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("oid_src", "oid_dst", name="link_pkey"),
        comment="Hyperlinks between documents (oid_dst may not be fetched yet).",
    )
    op.create_table(
        "distill_run",
        sa.Column("run_id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("started_at", TSTZ, nullable=False, server_default=sa.text("now()")),
        sa.Column("finished_at", TSTZ, nullable=True),
        sa.Column("iterations", sa.Integer, nullable=True),
        sa.Column("rho", sa.Double, nullable=True),
        comment="One row per run of the distiller (weighted HITS).",
    )
    op.create_table(
        "hits_score",
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("distill_run.run_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("oid", sa.BigInteger, nullable=False),
        sa.Column("hub", sa.Double, nullable=False, server_default=sa.text("0")),
        sa.Column("authority", sa.Double, nullable=False, server_default=sa.text("0")),
        sa.PrimaryKeyConstraint("run_id", "oid", name="hits_score_pkey"),
        comment="Hub and authority scores per distillation run.",
    )


def downgrade() -> None:
    op.drop_table("hits_score")
    op.drop_table("distill_run")
    op.drop_table("link")
    op.drop_table("doc_text")
    op.execute("DROP SEQUENCE doc_fetch_seq")
    op.drop_index("doc_frontier", table_name="doc")
    op.drop_table("doc")
    op.drop_table("site")
    op.drop_table("example")
    op.drop_table("taxonomy")
    op.execute("DROP FUNCTION url_bytehash(text)")
    op.execute("DROP FUNCTION url_oid(text)")
