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
