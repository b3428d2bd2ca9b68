"""The link learner (the 2002 paper's apprentice): link contexts, in-links, link models.

- ``link.context``: the words around a link in its page's text, up to
  ``focuscrawl.topics.linkmodel.CONTEXT_WORDS`` either side, as ``before | after`` (NULL for a
  redirect or a frame); the anchor text stays in ``link.anchor``.
- ``link_dst (oid_dst)``: a page's in-links. When the classifier scores a page, every
  link that pointed to it becomes a training example of the link learner.
- ``model.kind``: ``page`` (the hierarchical classifier) or ``link`` (a version of the
  link learner); each kind's newest row is the one in use.
- ``doc.estimated_by``: the link model whose score set a frontier URL's estimate (0: no
  link model, i.e. a seed, the parent-only estimate of 1999, or none yet). A fast
  default: existing rows are not rewritten.
- ``example_link``: the out-links of example pages with their anchors and contexts; the
  links between examples teach the link learner before the crawl starts.
- ``link_example``: training examples queued by classifiers for the one that trains
  (taken off and deleted as they are learned).
- ``crawl_setting``: crawl-wide settings every process reads (the frontier estimate).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

#: url(doc) as migration 0011 made it. PostgreSQL's newer minor releases (15.20; 16.2 did
#: not) refuse to add or drop a column of doc while a function with a SQL-standard body
#: uses doc's row type ("cannot alter table "doc" because function url(doc) uses its row
#: type"): it is dropped around the change and made again, the same.
URL_FUNCTION = """
    CREATE FUNCTION url(doc) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (SELECT doc_url($1.https, s.host, $1.path) FROM site AS s WHERE s.sid = $1.sid)
"""


def _alter_doc(statement: str) -> None:
    op.execute("DROP FUNCTION url(doc)")
    op.execute(statement)
    op.execute(URL_FUNCTION)


def upgrade() -> None:
    op.execute("ALTER TABLE link ADD COLUMN context text")
    op.execute("CREATE INDEX link_dst ON link (oid_dst)")
    op.execute(
        "ALTER TABLE model ADD COLUMN kind varchar(8) NOT NULL DEFAULT 'page' "
        "CONSTRAINT model_kind_check CHECK (kind IN ('page', 'link'))"
    )
    op.execute("CREATE INDEX model_kind ON model (kind, model_id)")
    op.execute(
        "COMMENT ON TABLE model IS 'Trained models: page classifiers and link learner "
        "versions; the newest of each kind is the one in use.'"
    )
    _alter_doc("ALTER TABLE doc ADD COLUMN estimated_by smallint NOT NULL DEFAULT 0")
    op.execute(
        """
        CREATE TABLE example_link (
            eid bigint NOT NULL REFERENCES example (eid) ON DELETE CASCADE,
            url text NOT NULL,
            anchor text,
            context text,
            CONSTRAINT example_link_pkey PRIMARY KEY (eid, url)
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE example_link IS 'Out-links of example pages, with their words: "
        "the links between examples teach the link learner before a crawl.'"
    )
    op.execute(
        """
        CREATE TABLE link_example (
            anchor text,
            context text,
            url text NOT NULL,
            src_cid smallint,
            src_relevance double precision NOT NULL,
            label double precision NOT NULL
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE link_example IS 'Links into scored pages, labelled by the page''s "
        "relevance, waiting for the link learner (deleted once learned).'"
    )
    op.execute(
        """
        CREATE TABLE crawl_setting (
            name varchar(64) PRIMARY KEY,
            value text NOT NULL
        )
        """
    )
    op.execute(
        "COMMENT ON TABLE crawl_setting IS 'Crawl-wide settings every crawler and "
        "classifier obeys (the frontier estimate).'"
    )


def downgrade() -> None:
    op.execute("DROP TABLE crawl_setting")
    op.execute("DROP TABLE link_example")
    op.execute("DROP TABLE example_link")
    _alter_doc("ALTER TABLE doc DROP COLUMN estimated_by")
    op.execute("DROP INDEX model_kind")
    op.execute(
        "COMMENT ON TABLE model IS "
        "'Trained hierarchical classifiers; the newest is the one in use.'"
    )
    op.execute("DELETE FROM model WHERE kind = 'link'")
    op.execute("ALTER TABLE model DROP COLUMN kind")
    op.execute("DROP INDEX link_dst")
    op.execute("ALTER TABLE link DROP COLUMN context")
