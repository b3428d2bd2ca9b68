"""A narrow ``doc``: host-relative URLs, fetch results and leases in tables of their own.

An unvisited URL cost 171-177 bytes with its indexes, against a goal of 150. Its heap
row was 96 bytes: a 32-byte header (any NULL column brings a null bitmap, and an
unvisited row had eleven: the fetch results, the lease, the class), 32 bytes of fixed
columns and the whole URL. This revision rebuilds ``doc`` with only what every URL
needs, all ``NOT NULL``, so a row has no null bitmap and a 24-byte header, and keeps
the URL relative to its site's host, which ``site`` already holds:

- ``doc (oid, relevance, sid, bytehash, num_tries, priority, state, depth, https,
  path)``: the URL is ``doc_url(https, site.host, path)``; ``url(doc)`` computes it as a
  field, so ``SELECT d.url FROM doc AS d`` still works in psql;
- ``doc_fetch``: what the last try of a URL found (status, error class, type, title,
  content hash, validators), its fetch number and time, and the model that scored it
  and its best leaf; one row per URL tried, none for the frontier's untried URLs;
- ``doc_lease (oid, until)``: the URLs crawlers hold (``doc.state`` 1).

Frontier rows no longer record which model made their estimate: an estimate is the
highest relevance among a URL's scored parents, and a new model raises it (``classify
rescore`` recomputes them all). ``oid = url_oid(url)`` was a check constraint on the
URL; with the host in ``site`` it is checked, with the site's existence, once per
inserting statement by the trigger that replaces ``doc_sites_exist`` (0009), and
``doc.oid``, ``doc.sid``, ``doc.https``, ``doc.path`` and ``site.host`` cannot change. Dropped
columns stay in every new row as NULLs, so the table is rebuilt rather than altered.
The ``baselines`` branch's ``found_seq`` and indexes are carried over when present.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

DOC_OPTIONS = (
    "autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.05, "
    "autovacuum_vacuum_cost_limit = 2000, autovacuum_analyze_scale_factor = 0.02"
)
#: a lease lives while its page is fetched: vacuum the dead ones every naptime
LEASE_OPTIONS = "autovacuum_vacuum_scale_factor = 0.0, autovacuum_vacuum_threshold = 1000"
#: the discovery order of the ``baselines`` branch (b001), kept when the branch is applied
FOUND_COLUMN = ", found_seq bigint NOT NULL DEFAULT nextval('doc_found_seq')"


def _has_found_seq() -> bool:
    found = op.get_bind().exec_driver_sql(
        "SELECT 1 FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = 'doc' "
        "AND column_name = 'found_seq'"
    )
    return found.first() is not None


def _check_urls(table: str) -> None:
    """Refuse the migration when a rebuilt row's URL is not its old one."""
    op.execute(
        f"""
        DO $$
        DECLARE
            bad text;
        BEGIN
            SELECT o.url INTO bad FROM doc AS o
            JOIN {table} AS n ON n.oid = o.oid JOIN site AS s ON s.sid = n.sid
            WHERE doc_url(n.https, s.host, n.path) IS DISTINCT FROM o.url
            LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'URL % is not its site''s host followed by a path', bad;
            END IF;
        END
        $$
        """
    )


def upgrade() -> None:
    found_seq = _has_found_seq()
    op.execute(
        """
        CREATE FUNCTION doc_url(https boolean, host text, path text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN CASE WHEN https THEN 'https://' ELSE 'http://' END || host || path
        """
    )
    op.execute(
        f"""
        CREATE TABLE doc_fetch (
            oid bigint NOT NULL,
            fetch_seq bigint,
            fetched_at timestamp with time zone,
            content_hash bigint,
            model_id integer,
            http_status smallint,
            cid smallint,
            content_type character varying(128),
            error character varying(64),
            title text,
            etag character varying(128),
            last_modified character varying(64),
            CONSTRAINT doc_fetch_pkey PRIMARY KEY (oid)
        ) WITH ({DOC_OPTIONS})
        """
    )
    op.execute(
        """
        INSERT INTO doc_fetch (oid, fetch_seq, fetched_at, content_hash, model_id,
                               http_status, cid, content_type, error, title, etag,
                               last_modified)
        SELECT oid, fetch_seq, fetched_at, content_hash,
               CASE WHEN fetch_seq IS NOT NULL THEN model_id END,
               http_status, cid, content_type, error, title, etag, last_modified
        FROM doc
        WHERE num_tries > 0 OR state IN (2, 3, 5) OR fetch_seq IS NOT NULL
           OR http_status IS NOT NULL OR error IS NOT NULL
        """
    )
    op.execute(
        f"""
        CREATE TABLE doc_lease (
            oid bigint NOT NULL,
            until timestamp with time zone NOT NULL,
            CONSTRAINT doc_lease_pkey PRIMARY KEY (oid)
        ) WITH ({LEASE_OPTIONS})
        """
    )
    op.execute(
        "INSERT INTO doc_lease (oid, until) "
        "SELECT oid, coalesce(lease_until, now()) FROM doc WHERE state = 1"
    )

    if found_seq:
        op.execute("ALTER SEQUENCE doc_found_seq OWNED BY NONE")
    found_column = FOUND_COLUMN if found_seq else ""
    found = ", found_seq" if found_seq else ""
    found_value = ", d.found_seq" if found_seq else ""
    op.execute(
        f"""
        CREATE TABLE doc_narrow (
            oid bigint NOT NULL,
            relevance double precision NOT NULL DEFAULT 0,
            sid integer NOT NULL,
            bytehash integer NOT NULL,
            num_tries smallint NOT NULL DEFAULT 0,
            priority smallint NOT NULL DEFAULT 0,
            state smallint NOT NULL DEFAULT 0,
            depth smallint NOT NULL DEFAULT 0,
            https boolean NOT NULL,
            path text NOT NULL{found_column}
        ) WITH ({DOC_OPTIONS})
        """
    )
    op.execute(
        f"""
        INSERT INTO doc_narrow (oid, relevance, sid, bytehash, num_tries, priority, state,
                                depth, https, path{found})
        SELECT d.oid, d.relevance, d.sid, d.bytehash, d.num_tries, d.priority, d.state,
               d.depth, d.url LIKE 'https:%',
               substr(d.url, length(s.host) + CASE WHEN d.url LIKE 'https:%' THEN 9 ELSE 8 END)
               {found_value}
        FROM doc AS d JOIN site AS s ON s.sid = d.sid
        ORDER BY d.oid
        """
    )
    _check_urls("doc_narrow")
    op.execute("ALTER TABLE doc_text DROP CONSTRAINT doc_text_oid_fkey")
    op.execute("ALTER TABLE doc_class DROP CONSTRAINT doc_class_oid_fkey")
    op.execute("DROP TABLE doc")
    op.execute("DROP FUNCTION doc_sites_exist()")
    op.execute("DROP TRIGGER site_sid_kept ON site")
    op.execute("DROP FUNCTION refuse_sid_change()")
    op.execute("ALTER TABLE doc_narrow RENAME TO doc")
    op.execute(
        "COMMENT ON TABLE doc IS 'One row per URL, fetched or not: the frontier. "
        "url = doc_url(https, site.host, path), oid = url_oid(url); relevance = log R(d).'"
    )
    op.execute(
        "COMMENT ON TABLE doc_fetch IS 'What the last try of a URL found, and how its "
        "page was classified; no row for URLs never tried.'"
    )
    op.execute(
        "COMMENT ON TABLE doc_lease IS "
        "'URLs a crawler holds (doc.state 1) and when its hold runs out.'"
    )
    op.execute("ALTER TABLE doc ADD CONSTRAINT doc_pkey PRIMARY KEY (oid)")
    op.execute(
        "CREATE INDEX doc_frontier ON doc (relevance DESC, priority, bytehash) "
        "WHERE state = 0 AND num_tries = 0"
    )
    op.execute(
        "CREATE INDEX doc_frontier_retry ON doc (num_tries, relevance DESC, priority, bytehash) "
        "WHERE state = 0 AND num_tries > 0"
    )
    op.execute("CREATE INDEX doc_revisit ON doc (relevance DESC) WHERE state = 2")
    if found_seq:
        op.execute("ALTER SEQUENCE doc_found_seq OWNED BY doc.found_seq")
        op.execute(
            "CREATE INDEX doc_frontier_unfocused ON doc (num_tries, bytehash) WHERE state = 0"
        )
        op.execute(
            "CREATE INDEX doc_frontier_bfs ON doc (num_tries, depth, found_seq) WHERE state = 0"
        )
    op.execute(
        "CREATE INDEX doc_fetch_unscored ON doc_fetch (fetch_seq) "
        "WHERE fetch_seq IS NOT NULL AND model_id IS NULL"
    )
    for table in ("doc_text", "doc_class", "doc_fetch"):
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_oid_fkey FOREIGN KEY (oid) "
            "REFERENCES doc (oid) ON DELETE CASCADE"
        )
    op.execute(
        """
        CREATE FUNCTION url(doc) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
        RETURN (SELECT doc_url($1.https, s.host, $1.path) FROM site AS s WHERE s.sid = $1.sid)
        """
    )
    op.execute(
        """
        CREATE FUNCTION doc_urls_checked() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            bad record;
        BEGIN
            -- one pass over the new rows, each with its site looked up once
            SELECT n.oid, n.sid, s.sid IS NULL AS missing INTO bad
            FROM new_docs AS n LEFT JOIN site AS s ON s.sid = n.sid
            WHERE s.sid IS NULL OR n.oid <> url_oid(doc_url(n.https, s.host, n.path))
            LIMIT 1;
            IF NOT FOUND THEN
                RETURN NULL;
            ELSIF bad.missing THEN
                RAISE EXCEPTION 'doc rows name site % that does not exist', bad.sid
                    USING ERRCODE = 'foreign_key_violation',
                          HINT = 'insert the site first: a URL belongs to the site of its host';
            ELSE
                RAISE EXCEPTION 'doc % is not url_oid of its URL', bad.oid
                    USING ERRCODE = 'check_violation',
                          HINT = 'oid = url_oid(doc_url(https, site.host, path))';
            END IF;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER doc_urls_checked AFTER INSERT ON doc
        REFERENCING NEW TABLE AS new_docs
        FOR EACH STATEMENT EXECUTE FUNCTION doc_urls_checked()
        """
    )
    op.execute(
        """
        CREATE FUNCTION refuse_url_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '%: a URL does not change (doc.sid, doc.https, doc.path and '
                'site.host make it, and doc.oid is its hash)', TG_TABLE_NAME
                USING ERRCODE = 'foreign_key_violation';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER doc_url_kept BEFORE UPDATE OF oid, sid, https, path ON doc "
        "FOR EACH STATEMENT EXECUTE FUNCTION refuse_url_change()"
    )
    op.execute(
        "CREATE TRIGGER site_url_kept BEFORE UPDATE OF sid, host ON site "
        "FOR EACH STATEMENT EXECUTE FUNCTION refuse_url_change()"
    )
    # Statistics for the rebuilt tables, when they hold rows. An empty table is left
    # unanalysed: analysed, it counts as known to be empty, and a session that plans a
    # foreign-key check on it while it is small (plans that live as long as the session)
    # would read it with a sequential scan as it grows.
    for table in ("doc", "doc_fetch"):
        op.execute(
            f"DO $$ BEGIN IF EXISTS (SELECT FROM {table}) THEN ANALYZE {table}; END IF; END $$"
        )


def downgrade() -> None:
    found_seq = _has_found_seq()
    found_column = FOUND_COLUMN if found_seq else ""
    found_value = ", d.found_seq" if found_seq else ""
    if found_seq:
        op.execute("ALTER SEQUENCE doc_found_seq OWNED BY NONE")
    op.execute(
        f"""
        CREATE TABLE doc_wide (
            oid bigint NOT NULL,
            relevance double precision DEFAULT 0 NOT NULL,
            sid integer NOT NULL,
            bytehash integer NOT NULL,
            num_tries smallint DEFAULT 0 NOT NULL,
            priority smallint DEFAULT 0 NOT NULL,
            state smallint DEFAULT 0 NOT NULL,
            depth smallint DEFAULT 0 NOT NULL,
            cid smallint,
            http_status smallint,
            lease_until timestamp with time zone,
            fetched_at timestamp with time zone,
            fetch_seq bigint,
            content_hash bigint,
            url text NOT NULL,
            content_type character varying(128),
            error character varying(64),
            title text,
            etag character varying(128),
            model_id integer,
            last_modified character varying(64){found_column},
            CONSTRAINT doc_oid_is_url_hash CHECK (oid = url_oid(url))
        ) WITH ({DOC_OPTIONS})
        """
    )
    # frontier estimates did not record their model here: give the estimated ones the
    # newest, as pass_relevance of 0010 expects of an estimate
    op.execute(
        f"""
        INSERT INTO doc_wide
        SELECT d.oid, d.relevance, d.sid, d.bytehash, d.num_tries, d.priority, d.state,
               d.depth, f.cid, f.http_status, l.until, f.fetched_at, f.fetch_seq,
               f.content_hash, doc_url(d.https, s.host, d.path), f.content_type, f.error,
               f.title, f.etag,
               CASE WHEN f.fetch_seq IS NOT NULL THEN f.model_id
                    WHEN d.state IN (0, 4) AND d.relevance > '-Infinity'
                         AND d.priority > -32768 THEN (SELECT max(model_id) FROM model)
               END,
               f.last_modified{found_value}
        FROM doc AS d
        JOIN site AS s ON s.sid = d.sid
        LEFT JOIN doc_fetch AS f ON f.oid = d.oid
        LEFT JOIN doc_lease AS l ON l.oid = d.oid
        ORDER BY d.oid
        """
    )
    op.execute("DROP TRIGGER site_url_kept ON site")
    op.execute("DROP FUNCTION url(doc)")
    op.execute("ALTER TABLE doc_text DROP CONSTRAINT doc_text_oid_fkey")
    op.execute("ALTER TABLE doc_class DROP CONSTRAINT doc_class_oid_fkey")
    op.execute("DROP TABLE doc_fetch")
    op.execute("DROP TABLE doc_lease")
    op.execute("DROP TABLE doc")
    op.execute("DROP FUNCTION doc_urls_checked()")
    op.execute("DROP FUNCTION refuse_url_change()")
    op.execute("DROP FUNCTION doc_url(boolean, text, text)")
    op.execute("ALTER TABLE doc_wide RENAME TO doc")
    op.execute(
        "COMMENT ON TABLE doc IS "
        "'One row per URL, fetched or not. oid = url_oid(url); relevance = log R(d).'"
    )
    op.execute("ALTER TABLE doc ADD CONSTRAINT doc_pkey PRIMARY KEY (oid)")
    op.execute(
        "CREATE INDEX doc_frontier ON doc (relevance DESC, priority, bytehash) "
        "WHERE state = 0 AND num_tries = 0"
    )
    op.execute(
        "CREATE INDEX doc_frontier_retry ON doc (num_tries, relevance DESC, priority, bytehash) "
        "WHERE state = 0 AND num_tries > 0"
    )
    op.execute("CREATE INDEX doc_leased ON doc (lease_until) WHERE state = 1")
    op.execute("CREATE INDEX doc_revisit ON doc (relevance DESC, fetched_at) WHERE state = 2")
    op.execute(
        "CREATE INDEX doc_unclassified ON doc (fetch_seq) WHERE state = 2 AND model_id IS NULL"
    )
    if found_seq:
        op.execute("ALTER SEQUENCE doc_found_seq OWNED BY doc.found_seq")
        op.execute(
            "CREATE INDEX doc_frontier_unfocused ON doc (num_tries, bytehash) WHERE state = 0"
        )
        op.execute(
            "CREATE INDEX doc_frontier_bfs ON doc (num_tries, depth, found_seq) WHERE state = 0"
        )
    for table in ("doc_text", "doc_class"):
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_oid_fkey FOREIGN KEY (oid) "
            "REFERENCES doc (oid) ON DELETE CASCADE"
        )
    # 0009's triggers, as 0009 made them
    op.execute(
        """
        CREATE FUNCTION doc_sites_exist() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            missing integer;
        BEGIN
            SELECT n.sid INTO missing FROM new_docs AS n
            WHERE NOT EXISTS (SELECT FROM site AS s WHERE s.sid = n.sid)
            LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'doc rows name site % that does not exist', missing
                    USING ERRCODE = 'foreign_key_violation',
                          HINT = 'insert the site first: a URL belongs to the site of its host';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER doc_sites_exist AFTER INSERT ON doc
        REFERENCING NEW TABLE AS new_docs
        FOR EACH STATEMENT EXECUTE FUNCTION doc_sites_exist()
        """
    )
    op.execute(
        """
        CREATE FUNCTION refuse_sid_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '%.sid does not change: a URL belongs to the site of its host',
                TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER doc_sid_kept BEFORE UPDATE OF sid ON doc "
        "FOR EACH STATEMENT EXECUTE FUNCTION refuse_sid_change()"
    )
    op.execute(
        "CREATE TRIGGER site_sid_kept BEFORE UPDATE OF sid ON site "
        "FOR EACH STATEMENT EXECUTE FUNCTION refuse_sid_change()"
    )
