"""A host bucket on every per-page table, and in the top byte of every ``oid``.

Citus splits a table into shards by one column, and runs a statement on one shard, or
a join on colocated shards, only when it names that column (issue 26;
docs/discussions/scale-out.md). The column is ``bucket``: the first byte of the MD5 of
a URL's host (``host_bucket(host)``), so a site, its pages, their fetch results, texts,
scores and leases, and their out-links (``link`` by its source) all share a bucket, and
a shard holds whole sites.

The bucket is also the top byte of ``oid`` (``url_oid``: the host's bucket, then 56 bits
of the MD5 of the URL). Whoever holds an ``oid`` holds its bucket, ``oid_bucket(oid)``,
so a statement that is given oids (a classifier's scores, a crawler's results) names
their buckets without being given them, and a link names its target's bucket with no
column for it. Two URLs of one bucket collide with probability about n²/2⁶⁵ over the
whole crawl, as before: a collision needs the same bucket and the same 56 bits.

``bucket`` is a stored column, written by every insert, and not a generated one: Citus
refuses a generated column as the distribution column. A check keeps it equal to the
oid's (the host's for ``site``). Keys become ``(oid, bucket)`` (``(sid, bucket)`` and
``(host, bucket)`` for ``site``): oid first, so that a lookup by oid alone still reads
the key on one server; Citus asks only that the key contain the distribution column.

Upgrading rewrites every oid in ``doc``, its children, ``link``, ``hits_score`` and
``page_label`` (one pass of each table).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

#: tables keyed by a page's oid, with the key constraint's name
BY_OID = ("doc", "doc_fetch", "doc_text", "doc_class", "doc_lease")
LOW_56 = 72057594037927935  # 2^56 - 1: the URL's own bits of an oid


def _rebucket(oid: str, bucket: str) -> str:
    return f"(({bucket})::bigint << 56) | (({oid}) & {LOW_56})"


def upgrade() -> None:
    op.execute(
        """
        CREATE FUNCTION host_bucket(host text) RETURNS smallint
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN get_byte(decode(md5(host), 'hex'), 0)::smallint;
        CREATE FUNCTION oid_bucket(oid bigint) RETURNS smallint
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN ((oid >> 56) & 255)::smallint;
        CREATE FUNCTION url_host(url text) RETURNS text
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN substring(url FROM '^[^:/]*://([^/]*)');
        CREATE OR REPLACE FUNCTION url_oid(url text) RETURNS bigint
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN (host_bucket(url_host(url))::bigint << 56)
                   | (('x' || substr(md5(url), 3, 14))::bit(56))::bigint;
        """
    )
    op.execute(
        """
        ALTER TABLE site ADD COLUMN bucket smallint;
        UPDATE site SET bucket = host_bucket(host);
        ALTER TABLE site ALTER COLUMN bucket SET NOT NULL,
            DROP CONSTRAINT site_pkey, DROP CONSTRAINT site_host_key,
            ADD CONSTRAINT site_pkey PRIMARY KEY (sid, bucket),
            ADD CONSTRAINT site_host_key UNIQUE (host, bucket),
            ADD CONSTRAINT site_bucket_is_host_hash CHECK (bucket = host_bucket(host));
        """
    )
    op.execute(
        f"""
        CREATE TEMP TABLE oid_remap ON COMMIT DROP AS
        SELECT d.oid AS old, {_rebucket("d.oid", "s.bucket")} AS new, s.bucket
        FROM doc AS d JOIN site AS s ON s.sid = d.sid;
        CREATE UNIQUE INDEX ON oid_remap (old);
        ANALYZE oid_remap;
        """
    )
    for table in (*BY_OID, "hits_score", "page_label"):
        op.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
    for table in (*BY_OID, "hits_score"):
        op.execute(
            f"""
            ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, ADD COLUMN bucket smallint;
            UPDATE {table} AS t SET oid = r.new, bucket = r.bucket
            FROM oid_remap AS r WHERE t.oid = r.old;
            ALTER TABLE {table} ALTER COLUMN bucket SET NOT NULL,
                ADD CONSTRAINT {table}_bucket_of_oid CHECK (bucket = oid_bucket(oid));
            """
        )
    op.execute(
        """
        ALTER TABLE page_label DROP CONSTRAINT page_label_pkey;
        UPDATE page_label AS t SET oid = r.new FROM oid_remap AS r WHERE t.oid = r.old;
        ALTER TABLE page_label ADD CONSTRAINT page_label_pkey PRIMARY KEY (oid);
        """
    )
    for table in BY_OID:
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (oid, bucket)")
    op.execute(
        "ALTER TABLE hits_score ADD CONSTRAINT hits_score_pkey PRIMARY KEY (run_id, oid, bucket)"
    )
    op.execute(
        f"""
        ALTER TABLE link ADD COLUMN bucket smallint;
        UPDATE link AS l
        SET bucket = ss.bucket,
            oid_src = {_rebucket("l.oid_src", "ss.bucket")},
            oid_dst = {_rebucket("l.oid_dst", "sd.bucket")}
        FROM site AS ss, site AS sd
        WHERE ss.sid = l.sid_src AND sd.sid = l.sid_dst;
        ALTER TABLE link ALTER COLUMN bucket SET NOT NULL,
            ADD CONSTRAINT link_bucket_of_source CHECK (bucket = oid_bucket(oid_src));
        """
    )
    for table in (*BY_OID, "hits_score", "page_label"):
        op.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def downgrade() -> None:
    op.execute(
        """
        CREATE TEMP TABLE oid_remap ON COMMIT DROP AS
        SELECT d.oid AS new,
               (('x' || substr(md5(doc_url(d.https, s.host, d.path)), 1, 16))::bit(64))::bigint
                   AS old
        FROM doc AS d JOIN site AS s ON s.sid = d.sid;
        CREATE UNIQUE INDEX ON oid_remap (new);
        ANALYZE oid_remap;
        """
    )
    for table in (*BY_OID, "hits_score", "page_label"):
        op.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
    for table in (*BY_OID, "hits_score", "page_label"):
        drop_bucket = "" if table == "page_label" else ", DROP COLUMN bucket"
        op.execute(
            f"""
            ALTER TABLE {table} DROP CONSTRAINT {table}_pkey{drop_bucket};
            UPDATE {table} AS t SET oid = r.old FROM oid_remap AS r WHERE t.oid = r.new;
            """
        )
    for table in (*BY_OID, "page_label"):
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (oid)")
    op.execute("ALTER TABLE hits_score ADD CONSTRAINT hits_score_pkey PRIMARY KEY (run_id, oid)")
    op.execute(
        """
        ALTER TABLE link DROP COLUMN bucket;
        UPDATE link AS l
        SET oid_src = coalesce(
                (SELECT r.old FROM oid_remap AS r WHERE r.new = l.oid_src), l.oid_src),
            oid_dst = coalesce(
                (SELECT r.old FROM oid_remap AS r WHERE r.new = l.oid_dst), l.oid_dst);
        """
    )
    for table in (*BY_OID, "hits_score", "page_label"):
        op.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
    op.execute(
        """
        ALTER TABLE site DROP CONSTRAINT site_pkey, DROP CONSTRAINT site_host_key,
            DROP COLUMN bucket,
            ADD CONSTRAINT site_pkey PRIMARY KEY (sid),
            ADD CONSTRAINT site_host_key UNIQUE (host);
        CREATE OR REPLACE FUNCTION url_oid(url text) RETURNS bigint
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN (('x' || substr(md5(url), 1, 16))::bit(64))::bigint;
        DROP FUNCTION url_host(text);
        DROP FUNCTION oid_bucket(bigint);
        DROP FUNCTION host_bucket(text);
        """
    )
