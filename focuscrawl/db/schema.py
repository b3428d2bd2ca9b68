"""The crawl database, as SQLAlchemy Core tables.

This module mirrors the alembic migrations exactly (a test compares them); it is
what code and people read to learn the schema. Change the schema only with a new
migration, then update this file to match.

Document states (``doc.state``)::

    0 FRONTIER  known, waiting to be fetched (the only rows in the frontier index)
    1 LEASED    claimed by a crawler until ``doc_lease.until``
    2 FETCHED   fetched and stored
    3 FAILED    gave up after ``num_tries`` attempts (status and error say why)
    4 HELD      known but not released into the frontier (hard focus)
    5 EXCLUDED  never to be fetched (robots.txt, trap guard, policy)

A URL is ``doc_url(doc.https, site.host, doc.path)``: ``doc`` keeps it relative to its
host, which ``site`` holds, and ``url(doc)`` computes it as a field, so that
``SELECT d.url FROM doc AS d`` works in psql. What a URL's last try found (status,
error, title, validators, fetch number) and its classification are in ``doc_fetch``,
and the URLs crawlers hold in ``doc_lease``: a frontier row carries none of them, has
no NULL, and so no null bitmap (migration 0011).
"""

from __future__ import annotations

from enum import IntEnum

from sqlalchemy import (
    REAL,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Identity,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Sequence,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

__all__ = [
    "SEED_PRIORITY",
    "DocState",
    "crawl_setting",
    "distill_run",
    "doc",
    "doc_class",
    "doc_fetch",
    "doc_lease",
    "doc_text",
    "example",
    "example_link",
    "fetch_seq",
    "hits_score",
    "link",
    "link_example",
    "metadata",
    "model",
    "page_label",
    "site",
    "taxonomy",
]

metadata = MetaData()

#: ``priority`` of seeds: the checkout order takes ``priority`` ascending.
SEED_PRIORITY = -32768


class DocState(IntEnum):
    FRONTIER = 0
    LEASED = 1
    FETCHED = 2
    FAILED = 3
    HELD = 4
    EXCLUDED = 5


taxonomy = Table(
    "taxonomy",
    metadata,
    Column("kcid", SmallInteger, primary_key=True, autoincrement=False),
    Column("pcid", SmallInteger, ForeignKey("taxonomy.kcid"), nullable=False),
    Column("kcname", String(250), nullable=False),
    Column("good", SmallInteger, nullable=False, server_default=text("0")),
    # sibling names are unique, so a dotted path names one node (migration 0004)
    UniqueConstraint("pcid", "kcname", name="taxonomy_pcid_kcname_key"),
    comment="Topic tree (the paper's table); the root is kcid 0, its own parent.",
)

example = Table(
    "example",
    metadata,
    Column("eid", BigInteger, Identity(), primary_key=True),
    Column("kcid", SmallInteger, ForeignKey("taxonomy.kcid"), nullable=False),
    Column("url", Text, nullable=True),
    Column("title", Text, nullable=True),
    Column("text", Text, nullable=False),
    UniqueConstraint("kcid", "url", name="example_kcid_url_key"),
    comment="Training documents per category.",
)

site = Table(
    "site",
    metadata,
    Column("sid", Integer, Identity(), nullable=False),
    Column("host", Text, nullable=False),
    Column("robots_status", SmallInteger, nullable=True),
    Column("robots_txt", Text, nullable=True),
    Column("robots_expires_at", DateTime(timezone=True), nullable=True),
    Column("crawl_delay", Double, nullable=True),
    Column(
        "next_fetch_at",
        DateTime(timezone=True),
        nullable=False,
        server_default=text("'-infinity'::timestamptz"),
    ),
    Column("lease_until", DateTime(timezone=True), nullable=True),
    Column("pages_taken", Integer, nullable=False, server_default=text("0")),
    # host_bucket(host): the shard key (migration 0016)
    Column("bucket", SmallInteger, nullable=False),
    PrimaryKeyConstraint("sid", "bucket", name="site_pkey"),
    UniqueConstraint("host", "bucket", name="site_host_key"),
    CheckConstraint("bucket = host_bucket(host)", name="site_bucket_is_host_hash"),
    comment="One row per host[:port]: robots.txt state and politeness.",
)

doc = Table(
    "doc",
    metadata,
    # Every column NOT NULL, fixed-width ones first, widest first: a row has no null
    # bitmap (a 24-byte header instead of 32) and no alignment padding (migration 0011).
    Column("oid", BigInteger, nullable=False),
    Column("relevance", Double, nullable=False, server_default=text("0")),
    # the site of the URL's host; no foreign key: triggers check each inserting
    # statement as a whole, which costs a fraction of a row-by-row key (migration 0009)
    Column("sid", Integer, nullable=False),
    Column("bytehash", Integer, nullable=False),
    Column("num_tries", SmallInteger, nullable=False, server_default=text("0")),
    Column("priority", SmallInteger, nullable=False, server_default=text("0")),
    Column("state", SmallInteger, nullable=False, server_default=text("0")),
    Column("depth", SmallInteger, nullable=False, server_default=text("0")),
    # the URL is doc_url(https, site.host, path): host-relative, since site holds the host
    Column("https", Boolean, nullable=False),
    Column("path", Text, nullable=False),
    # the link model whose score set the estimate (0: none; migration 0013, a fast
    # default, so it sits after path)
    Column("estimated_by", SmallInteger, nullable=False, server_default=text("0")),
    # the host's bucket, the oid's top byte: the shard key (migration 0016)
    Column("bucket", SmallInteger, nullable=False),
    PrimaryKeyConstraint("oid", "bucket", name="doc_pkey"),
    CheckConstraint("bucket = oid_bucket(oid)", name="doc_bucket_of_oid"),
    comment="One row per URL, fetched or not: the frontier. "
    "url = doc_url(https, site.host, path), oid = url_oid(url); relevance = log R(d).",
)

# The frontier: unvisited URLs in checkout order (num_tries, relevance desc, priority,
# bytehash), read straight off two indexes: the untried URLs, then those waiting for
# another try. Without num_tries in its key an entry of doc_frontier is 24 bytes, not
# 32 (migration 0008).
Index(
    "doc_frontier",
    doc.c.relevance.desc(),
    doc.c.priority,
    doc.c.bytehash,
    postgresql_where=(doc.c.state == 0) & (doc.c.num_tries == 0),
)
Index(
    "doc_frontier_retry",
    doc.c.num_tries,
    doc.c.relevance.desc(),
    doc.c.priority,
    doc.c.bytehash,
    postgresql_where=(doc.c.state == 0) & (doc.c.num_tries > 0),
)
# Maintenance: fetched pages, most relevant first (then oldest, from doc_fetch).
Index("doc_revisit", doc.c.relevance.desc(), postgresql_where=doc.c.state == 2)

# The frontier in the baseline modes' orders is not here: the optional migration
# branch ``baselines`` (revision b001), which a crawl in mode bfs or unfocused applies,
# adds ``doc.found_seq`` (discovery order, from sequence ``doc_found_seq``) and the
# partial indexes ``doc_frontier_unfocused (num_tries, bytehash)`` and
# ``doc_frontier_bfs (num_tries, depth, found_seq)``, both WHERE state = 0.

doc_fetch = Table(
    "doc_fetch",
    metadata,
    # a doc row's; no foreign key: triggers check each inserting statement, and delete
    # a document's doc_fetch, doc_text and doc_class rows with it (migration 0012)
    Column("oid", BigInteger, nullable=False),
    # numbers fetches in the order they happened; NULL: tried, never fetched
    Column("fetch_seq", BigInteger, nullable=True),
    Column("fetched_at", DateTime(timezone=True), nullable=True),
    Column("content_hash", BigInteger, nullable=True),
    # the model that scored the page; NULL: not yet (the classifier's queue)
    Column("model_id", Integer, nullable=True),
    Column("http_status", SmallInteger, nullable=True),
    # the best leaf of the scored page
    Column("cid", SmallInteger, nullable=True),
    Column("content_type", String(128), nullable=True),
    Column("error", String(64), nullable=True),
    Column("title", Text, nullable=True),
    # the validators of a revisit: ETag (migration 0003) and Last-Modified (0010)
    Column("etag", String(128), nullable=True),
    Column("last_modified", String(64), nullable=True),
    Column("bucket", SmallInteger, nullable=False),  # oid_bucket(oid) (0016)
    # the link model whose sums the page's out-links keep in link.own; NULL: none (0019)
    Column("links_model", Integer, nullable=True),
    # its links' anchors' characters over its text's; NULL: not HTML, or fetched before (0024)
    Column("link_share", REAL, nullable=True),
    PrimaryKeyConstraint("oid", "bucket", name="doc_fetch_pkey"),
    CheckConstraint("bucket = oid_bucket(oid)", name="doc_fetch_bucket_of_oid"),
    comment="What the last try of a URL found, and how its page was classified; "
    "no row for URLs never tried.",
)

# The classifier's queue: fetched pages not yet scored, in fetch order.
Index(
    "doc_fetch_unscored",
    doc_fetch.c.fetch_seq,
    postgresql_where=doc_fetch.c.fetch_seq.is_not(None) & doc_fetch.c.model_id.is_(None),
)

#: Numbers fetches in the order they happened (``doc_fetch.fetch_seq``).
fetch_seq = Sequence("doc_fetch_seq", metadata=metadata, data_type=BigInteger)

doc_lease = Table(
    "doc_lease",
    metadata,
    # no foreign key: a claim takes its rows off the frontier by key already
    Column("oid", BigInteger, nullable=False),
    Column("until", DateTime(timezone=True), nullable=False),
    Column("bucket", SmallInteger, nullable=False),  # oid_bucket(oid) (0016)
    PrimaryKeyConstraint("oid", "bucket", name="doc_lease_pkey"),
    CheckConstraint("bucket = oid_bucket(oid)", name="doc_lease_bucket_of_oid"),
    comment="URLs a crawler holds (doc.state 1) and when its hold runs out.",
)

doc_text = Table(
    "doc_text",
    metadata,
    Column("oid", BigInteger, nullable=False),  # a doc row's (0012)
    # STORAGE EXTERNAL: out of line, never pglz-compressed (migration 0015)
    Column("text", Text, nullable=False),
    Column("bucket", SmallInteger, nullable=False),  # oid_bucket(oid) (0016)
    PrimaryKeyConstraint("oid", "bucket", name="doc_text_pkey"),
    CheckConstraint("bucket = oid_bucket(oid)", name="doc_text_bucket_of_oid"),
    comment="Visible text of fetched pages, apart so that doc stays narrow.",
)

model = Table(
    "model",
    metadata,
    Column("model_id", Integer, Identity(), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("taxonomy_digest", String(64), nullable=False),
    Column("examples", Integer, nullable=False),
    Column("params", JSONB, nullable=False),
    Column("weights", LargeBinary, nullable=False),
    # page: the hierarchical classifier; link: a version of the link learner (0013)
    Column("kind", String(8), nullable=False, server_default=text("'page'")),
    CheckConstraint("kind IN ('page', 'link')", name="model_kind_check"),
    comment="Trained models: page classifiers and link learner versions; the newest "
    "of each kind is the one in use.",
)
Index("model_kind", model.c.kind, model.c.model_id)

doc_class = Table(
    "doc_class",
    metadata,
    Column("oid", BigInteger, nullable=False),  # a doc row's (0012)
    Column("model_id", Integer, nullable=False),
    # no planner statistics (migration 0007): nothing filters on it, and ANALYZE of
    # these arrays cost a tenth of the server's CPU in a crawl
    Column("logp", ARRAY(REAL), nullable=False),
    Column("bucket", SmallInteger, nullable=False),  # oid_bucket(oid) (0016)
    PrimaryKeyConstraint("oid", "bucket", name="doc_class_pkey"),
    CheckConstraint("bucket = oid_bucket(oid)", name="doc_class_bucket_of_oid"),
    comment="log Pr[c|d] of every taxonomy node, in the model's node order "
    "(relevance is recomputed from it when good categories change).",
)

link = Table(
    "link",
    metadata,
    Column("oid_src", BigInteger, nullable=False),
    Column("oid_dst", BigInteger, nullable=False),
    Column("sid_src", Integer, nullable=False),
    Column("sid_dst", Integer, nullable=False),
    Column("anchor", Text, nullable=True),
    # the words around the link, "before | after" (migration 0013)
    Column("context", Text, nullable=True),
    # the source's bucket; the target's is oid_bucket(oid_dst) (migration 0016)
    Column("bucket", SmallInteger, nullable=False),
    # the sum of the weights of the link's own features (its words and target) under the
    # link model that estimated it at check-in, the source's doc_fetch.links_model; NULL:
    # not estimated (migration 0019)
    Column("own", REAL, nullable=True),
    CheckConstraint("bucket = oid_bucket(oid_src)", name="link_bucket_of_source"),
    comment="Hyperlinks between documents (oid_dst may not be fetched yet).",
)
# Links are looked up by source; b-tree deduplication keeps one key per page. There
# is no key: (oid_src, oid_dst) is unique because the store keeps it so (migration 0005).
# Logical replication (Citus moving a shard) names a row by all its columns (0018).
Index("link_src", link.c.oid_src)
# ... and by target: a scored page's in-links become the link learner's examples (0013)
Index("link_dst", link.c.oid_dst)

example_link = Table(
    "example_link",
    metadata,
    Column("eid", BigInteger, ForeignKey("example.eid", ondelete="CASCADE"), nullable=False),
    Column("url", Text, nullable=False),
    Column("anchor", Text, nullable=True),
    Column("context", Text, nullable=True),
    PrimaryKeyConstraint("eid", "url", name="example_link_pkey"),
    comment="Out-links of example pages, with their words: the links between examples "
    "teach the link learner before a crawl.",
)

link_example = Table(
    "link_example",
    metadata,
    Column("anchor", Text, nullable=True),
    Column("context", Text, nullable=True),
    Column("url", Text, nullable=False),
    Column("src_cid", SmallInteger, nullable=True),
    Column("src_relevance", Double, nullable=True),
    Column("label", Double, nullable=False),
    comment="Links into scored pages, labelled by the page's relevance, and URLs whose "
    "request failed (no source, labelled 0), waiting for the link learner (deleted once "
    "learned).",
)

page_label = Table(
    "page_label",
    metadata,
    Column("oid", BigInteger, primary_key=True),
    Column("good", Boolean, nullable=False),
    Column("kcid", SmallInteger, nullable=False),
    Column("eid", BigInteger, ForeignKey("example.eid", ondelete="CASCADE"), nullable=False),
    Column("labelled_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    comment="An operator's labels of fetched pages: each is an example (eid) of the "
    "category kcid for the next training.",
)

crawl_setting = Table(
    "crawl_setting",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", Text, nullable=False),
    comment="Crawl-wide settings every crawler and classifier obeys (the frontier estimate).",
)

distill_run = Table(
    "distill_run",
    metadata,
    Column("run_id", Integer, Identity(), primary_key=True),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("iterations", Integer, nullable=True),
    Column("rho", Double, nullable=True),
    comment="One row per run of the distiller (weighted HITS).",
)

hits_score = Table(
    "hits_score",
    metadata,
    Column(
        "run_id",
        Integer,
        ForeignKey("distill_run.run_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("oid", BigInteger, nullable=False),
    Column("hub", Double, nullable=False, server_default=text("0")),
    Column("authority", Double, nullable=False, server_default=text("0")),
    Column("bucket", SmallInteger, nullable=False),  # oid_bucket(oid) (migration 0016)
    PrimaryKeyConstraint("run_id", "oid", "bucket", name="hits_score_pkey"),
    CheckConstraint("bucket = oid_bucket(oid)", name="hits_score_bucket_of_oid"),
    comment="Hub and authority scores per distillation run.",
)
