-- What `focuscrawl eval` reads of a finished crawl. Each runs in psql as it is.

-- fetched_in_order --
-- Every fetched page in fetch order, with its host, the classifier's estimate R and
-- the share of its text in links.
SELECT d.oid, doc_url(d.https, s.host, d.path) AS url, s.host,
       CASE WHEN f.model_id IS NULL OR f.cid IS NULL THEN NULL
            ELSE exp(greatest(d.relevance, -700)) END AS estimate,
       f.link_share
FROM doc AS d JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
WHERE d.state = 2
ORDER BY f.fetch_seq;

-- crawl_graph --
-- The links among crawled pages (sources are fetched pages).
SELECT oid_src, oid_dst FROM link;

-- oids_of --
-- The documents of the given URLs (by oid: a URL's oid is its hash).
SELECT d.oid, u.url
FROM unnest(%(urls)s::text[]) AS u(url) JOIN doc AS d ON d.oid = url_oid(u.url);

-- oracle_links --
-- The oracle: each unvisited out-link of the scored pages gets its own true relevance
-- (log 1 or log 0) and held ones are released. Seeds keep their rank.
WITH targets AS (
    SELECT d.oid FROM doc AS d
    WHERE d.oid IN (SELECT oid_dst FROM link WHERE oid_src = ANY(%(oids)s::bigint[]))
      AND d.state IN (0, 4) AND d.priority > -32768
    ORDER BY d.oid
    FOR UPDATE
), relevant AS (
    SELECT url_oid(u) AS oid FROM unnest(%(relevant)s::text[]) AS u
)
UPDATE doc AS d
SET relevance = CASE WHEN d.oid IN (SELECT oid FROM relevant) THEN 0
                     ELSE '-Infinity'::float8 END,
    state = 0
FROM targets AS t
WHERE d.oid = t.oid;

-- fetched_count --
SELECT count(*) AS fetched FROM doc WHERE state = 2;

-- lock_evaluation --
-- One evaluation (or demo) at a time makes the databases <prefix>_* on a server: a second
-- would drop the first one's crawl databases under it (DROP DATABASE ... WITH (FORCE)).
-- A session lock, held while the evaluation runs (unlock_evaluation, or the end of its
-- connection, gives it back).
SELECT pg_try_advisory_lock(hashtext('focuscrawl.evaluation ' || %(prefix)s)) AS locked;

-- unlock_evaluation --
-- Gives back the lock lock_evaluation took.
SELECT pg_advisory_unlock(hashtext('focuscrawl.evaluation ' || %(prefix)s)) AS unlocked;
