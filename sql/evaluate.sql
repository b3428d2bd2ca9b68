-- What `focuscrawl eval` reads of a finished crawl. Each runs in psql as it is.

-- fetched_in_order --
-- Every fetched page in fetch order, with its host and the classifier's estimate R.
SELECT d.oid, d.url, s.host, CASE WHEN d.model_id IS NULL OR d.cid IS NULL THEN NULL
                                  ELSE exp(greatest(d.relevance, -700)) END AS estimate
FROM doc AS d JOIN site AS s ON s.sid = d.sid
WHERE d.state = 2
ORDER BY d.fetch_seq;

-- crawl_graph --
-- The links among crawled pages (sources are fetched pages).
SELECT oid_src, oid_dst FROM link;

-- oids_of --
SELECT oid, url FROM doc WHERE url = ANY(%(urls)s::text[]);

-- oracle_links --
-- The oracle: each unvisited out-link of the scored pages gets its own true relevance
-- (log 1 or log 0) and held ones are released. Seeds keep their rank.
WITH targets AS (
    SELECT d.oid FROM doc AS d
    WHERE d.oid IN (SELECT oid_dst FROM link WHERE oid_src = ANY(%(oids)s::bigint[]))
      AND d.state IN (0, 4) AND d.priority > -32768
    ORDER BY d.oid
    FOR UPDATE
)
UPDATE doc AS d
SET relevance = CASE WHEN d.url = ANY(%(relevant)s::text[]) THEN 0 ELSE '-Infinity'::float8 END,
    state = 0, model_id = %(model_id)s
FROM targets AS t
WHERE d.oid = t.oid;

-- fetched_count --
SELECT count(*) AS fetched FROM doc WHERE state = 2;
