-- The distiller: weighted HITS over cross-site links (the paper's section 3.2), run
-- inside PostgreSQL. Relevance R is a probability here: exp(doc.relevance).
-- PostgreSQL reports floating-point underflow as an error, so in the iteration a hub's
-- R is at least e^-100 and scores below 1e-250 are taken as 0 (no product can then
-- underflow); both are far below anything that changes a ranking.

-- create_hits_function --
-- Installs pg_temp.focuscrawl_hits for this session (no schema change; paste it into
-- psql and call it there too). It fills hits_score for run p_run:
--   1. candidate authorities: the top p_share of fetched pages by relevance (pages tied
--      with the last one included);
--   2. edges (u, v): a link from a fetched page u to a candidate authority v on another
--      site; u is then a hub. Weights: wa = R[u]/h0[u,v], h0 = pages on u's site
--      linking to v; wh = R[u]/a0[u,v], a0 = pages on v's site that u links to;
--   3. a[v] <- sum wa*h[u], then h[u] <- sum wh*a[v], each scaled to sum to one, for
--      p_iterations or until the L1 change of both is below p_tolerance.
-- Scores live in float8[] variables indexed by dense ids, and the edges are stored
-- twice, sorted by authority and by hub with an index on each, so an update is one
-- ordered index scan feeding a group aggregate and array_agg with no hash table, no
-- sort and no join (three times faster than hash aggregation; planner settings are
-- local to the loop).
CREATE OR REPLACE FUNCTION pg_temp.focuscrawl_hits(
    p_run integer, p_share float8, p_iterations integer, p_tolerance float8
) RETURNS TABLE (iterations integer, change float8, hubs integer, authorities integer,
                 edges bigint, threshold float8)
LANGUAGE plpgsql
SET enable_hashagg = on SET enable_seqscan = on SET enable_sort = on
AS $fn$
DECLARE
    n_fetched bigint;
    rho float8;
    n_hubs integer;
    n_auth integer;
    a float8[];
    h float8[];
    a_new float8[];
    h_new float8[];
    ta float8;
    th float8;
    ta_new float8;
    th_new float8;
    delta float8 := 'Infinity';
    i integer := 0;
BEGIN
    SELECT count(*) INTO n_fetched FROM doc WHERE state = 2;
    SELECT d.relevance INTO rho FROM doc AS d WHERE d.state = 2
    ORDER BY d.relevance DESC
    OFFSET greatest(ceil(p_share * n_fetched)::bigint - 1, 0) LIMIT 1;

    DROP TABLE IF EXISTS pg_temp.hits_edge;
    CREATE TEMP TABLE hits_edge ON COMMIT DROP AS
    -- the links of fetched hubs first, as an intermediate result (on a Citus cluster a
    -- link's target lies in another shard), then their targets by key
    WITH hub_links AS MATERIALIZED (
        SELECT l.oid_src, l.oid_dst, l.sid_src, l.sid_dst, exp(greatest(u.relevance, -100)) AS r
        FROM link AS l
        JOIN doc AS u ON u.oid = l.oid_src AND u.bucket = l.bucket AND u.state = 2
        WHERE l.sid_src <> l.sid_dst
    ), e AS (
        SELECT h.* FROM hub_links AS h
        JOIN doc AS v ON v.oid = h.oid_dst AND v.bucket = oid_bucket(h.oid_dst)
                     AND v.state = 2 AND v.relevance >= rho
    )
    SELECT (dense_rank() OVER (ORDER BY oid_src))::integer AS s,
           (dense_rank() OVER (ORDER BY oid_dst))::integer AS d,
           oid_src, oid_dst,
           r / count(*) OVER (PARTITION BY sid_src, oid_dst) AS wa,
           r / count(*) OVER (PARTITION BY oid_src, sid_dst) AS wh
    FROM e;
    SELECT coalesce(max(he.s), 0), coalesce(max(he.d), 0), count(*)
    INTO n_hubs, n_auth, edges FROM hits_edge AS he;
    DROP TABLE IF EXISTS pg_temp.hits_by_d, pg_temp.hits_by_s;
    CREATE TEMP TABLE hits_by_d ON COMMIT DROP AS
        SELECT he.d, he.s, he.wa FROM hits_edge AS he ORDER BY he.d;
    CREATE INDEX ON hits_by_d (d);
    CREATE TEMP TABLE hits_by_s ON COMMIT DROP AS
        SELECT he.s, he.d, he.wh FROM hits_edge AS he ORDER BY he.s;
    CREATE INDEX ON hits_by_s (s);
    SET LOCAL enable_hashagg = off;
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_sort = off;

    IF edges > 0 THEN
        -- a and h hold scores up to a factor (ta, th: their sums); each update reads
        -- the other normalised by dividing its group sums, so no pass rescales arrays.
        -- Values below 1e-200 are taken as 0 so that no product can underflow.
        h := array_fill(1.0::float8 / n_hubs, ARRAY[n_hubs]);
        th := 1;
        a := array_fill(1.0::float8 / n_auth, ARRAY[n_auth]);
        ta := 1;
        WHILE i < p_iterations AND delta >= p_tolerance LOOP
            SELECT array_agg(CASE WHEN q.v < 1e-200 THEN 0 ELSE q.v END ORDER BY q.d), sum(q.v)
            INTO a_new, ta_new
            FROM (SELECT e.d, sum(e.wa * h[e.s]) / th AS v
                  FROM hits_by_d AS e GROUP BY e.d) AS q;
            IF ta_new = 0 THEN ta_new := 1; END IF;
            SELECT array_agg(CASE WHEN q.v < 1e-200 THEN 0 ELSE q.v END ORDER BY q.s), sum(q.v)
            INTO h_new, th_new
            FROM (SELECT e.s, sum(e.wh * a_new[e.d]) / ta_new AS v
                  FROM hits_by_s AS e GROUP BY e.s) AS q;
            IF th_new = 0 THEN th_new := 1; END IF;
            IF p_tolerance > 0 OR i + 1 = p_iterations THEN  -- the L1 change, when needed
                SELECT sum(abs(t.x / ta_new - t.y / ta)) INTO delta FROM unnest(a_new, a) AS t(x, y);
                SELECT delta + sum(abs(t.x / th_new - t.y / th)) INTO delta
                FROM unnest(h_new, h) AS t(x, y);
            END IF;
            a := a_new;
            ta := ta_new;
            h := h_new;
            th := th_new;
            i := i + 1;
        END LOOP;
        SET LOCAL enable_hashagg = on;
        SET LOCAL enable_seqscan = on;
        SET LOCAL enable_sort = on;
        INSERT INTO hits_score (run_id, oid, bucket, hub, authority)
        SELECT p_run, coalesce(hs.oid, au.oid), oid_bucket(coalesce(hs.oid, au.oid)),
               coalesce(hs.score, 0), coalesce(au.score, 0)
        FROM (SELECT DISTINCT he.oid_src AS oid, h[he.s] / th AS score FROM hits_edge AS he) AS hs
        FULL JOIN (SELECT DISTINCT he.oid_dst AS oid, a[he.d] / ta AS score FROM hits_edge AS he) AS au
            ON au.oid = hs.oid;
    END IF;
    iterations := i;
    change := CASE WHEN i = 0 THEN NULL ELSE delta END;
    hubs := n_hubs;
    authorities := n_auth;
    threshold := rho;
    RETURN NEXT;
END
$fn$;

-- start_run --
INSERT INTO distill_run (rho) VALUES (%(share)s) RETURNING run_id;

-- run_hits --
SELECT * FROM pg_temp.focuscrawl_hits(%(run)s, %(share)s, %(iterations)s, %(tolerance)s);

-- finish_run --
UPDATE distill_run SET finished_at = now(), iterations = %(iterations)s WHERE run_id = %(run)s;

-- latest_run --
SELECT run_id, started_at, finished_at, iterations, rho FROM distill_run
WHERE finished_at IS NOT NULL ORDER BY run_id DESC LIMIT 1;

-- top_hubs --
-- The best hubs of a run: URL, score, relevance (a probability) and site. Ties go by the
-- URL's bytehash, a random order: an oid leads with its host's bucket (migration 0016),
-- so ties by oid would be one host's pages first.
SELECT doc_url(d.https, site.host, d.path) AS url, s.hub AS score,
       exp(greatest(d.relevance, -700)) AS relevance, site.host
FROM hits_score AS s
JOIN doc AS d ON d.oid = s.oid AND d.bucket = s.bucket
JOIN site ON site.sid = d.sid AND site.bucket = d.bucket
WHERE s.run_id = %(run)s AND s.hub > 0
ORDER BY s.hub DESC, d.bytehash, d.oid
LIMIT %(limit)s;

-- top_authorities --
SELECT doc_url(d.https, site.host, d.path) AS url, s.authority AS score,
       exp(greatest(d.relevance, -700)) AS relevance, site.host
FROM hits_score AS s
JOIN doc AS d ON d.oid = s.oid AND d.bucket = s.bucket
JOIN site ON site.sid = d.sid AND site.bucket = d.bucket
WHERE s.run_id = %(run)s AND s.authority > 0
ORDER BY s.authority DESC, d.bytehash, d.oid
LIMIT %(limit)s;

-- boost_targets --
-- The paper's section 5.7 by hand: the unvisited out-neighbours, on another site, of the
-- best %(hubs)s hubs of run %(run)s (their links are read first, as an intermediate
-- result: on a Citus cluster a link's target lies in another shard).
WITH best AS (
    SELECT s.oid, s.bucket
    FROM hits_score AS s JOIN doc AS d ON d.oid = s.oid AND d.bucket = s.bucket
    WHERE s.run_id = %(run)s AND s.hub > 0
    ORDER BY s.hub DESC, d.bytehash, s.oid
    LIMIT %(hubs)s
), targets AS MATERIALIZED (
    SELECT DISTINCT l.oid_dst AS oid
    FROM link AS l JOIN best ON l.oid_src = best.oid AND l.bucket = best.bucket
    WHERE l.sid_dst <> l.sid_src
)
SELECT n.oid FROM doc AS n JOIN targets AS t
    ON n.oid = t.oid AND n.bucket = oid_bucket(t.oid)
WHERE n.state IN (0, 4)
ORDER BY n.oid;

-- boost --
-- boost_targets get seed rank (relevance log 1, the top priority), so crawlers take them
-- next; held ones (hard focus) are released. Returns them. Run once per shard with its
-- targets (focuscrawl.shards); the rows are locked in oid order first, as the
-- classifier's raise_estimates does.
WITH locked AS (
    SELECT n.oid, n.bucket FROM doc AS n
    WHERE n.oid = ANY(%(oids)s::bigint[]) AND n.bucket = ANY(%(buckets)s::smallint[])
      AND n.state IN (0, 4)
    ORDER BY n.oid
    FOR UPDATE
)
UPDATE doc AS n
SET relevance = 0, priority = -32768, state = 0
FROM locked AS k, site AS s
WHERE n.oid = k.oid AND n.bucket = k.bucket AND n.bucket = ANY(%(buckets)s::smallint[])
  AND n.state IN (0, 4) AND s.sid = n.sid AND s.bucket = n.bucket
RETURNING n.oid, doc_url(n.https, s.host, n.path) AS url;
