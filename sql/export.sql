-- What `focuscrawl export` streams (through a server-side cursor, so the client holds a
-- few thousand rows at a time whatever the crawl's size). Relevance is R = exp(log R),
-- floored at exp(-700) as in sql/monitor/, and NULL for a page not scored; hub and
-- authority come from the newest finished distiller run (NULL when a page has no score
-- in it, or there is no run); link_share is the share of the page's text in its links'
-- anchors. A page passes %(min_relevance)s when it is 0 or the page's R is at least
-- that, and %(max_link_share)s when it is NULL or the page's link share is below it
-- (`--what relevant` leaves out pages that are mostly links: lists, indexes, home pages).

-- export_pages --
-- Every page tried, in fetch order: URL, title, R, the best leaf's dotted name, when it was
-- fetched, the HTTP status and the error class, hub and authority scores.
WITH run AS (
    SELECT max(run_id) AS run_id FROM distill_run WHERE finished_at IS NOT NULL
)
SELECT doc_url(d.https, site.host, d.path) AS url,
       f.title,
       CASE WHEN f.model_id IS NOT NULL THEN exp(greatest(d.relevance, -700)) END AS relevance,
       t.name AS class,
       f.fetched_at,
       f.http_status AS status,
       f.error,
       h.hub,
       h.authority,
       f.link_share
FROM doc_fetch AS f
JOIN doc AS d ON d.oid = f.oid AND d.bucket = f.bucket
JOIN site ON site.sid = d.sid AND site.bucket = d.bucket
LEFT JOIN taxonomy_paths() AS t ON t.kcid = f.cid
LEFT JOIN hits_score AS h
    ON h.run_id = (SELECT run_id FROM run) AND h.oid = f.oid AND h.bucket = f.bucket
WHERE (%(min_relevance)s <= 0
       OR (f.model_id IS NOT NULL AND d.relevance >= ln(%(min_relevance)s)))
  AND (%(max_link_share)s::real IS NULL OR f.link_share IS NULL
       OR f.link_share < %(max_link_share)s::real)
ORDER BY f.fetch_seq NULLS LAST, f.oid;

-- export_hits --
-- The pages with a %(role)s ('hub' or 'authority') score above 0 in the newest
-- finished distiller run, best first, with the columns of export_pages.
WITH run AS (
    SELECT max(run_id) AS run_id FROM distill_run WHERE finished_at IS NOT NULL
)
SELECT doc_url(d.https, site.host, d.path) AS url,
       f.title,
       CASE WHEN f.model_id IS NOT NULL THEN exp(greatest(d.relevance, -700)) END AS relevance,
       t.name AS class,
       f.fetched_at,
       f.http_status AS status,
       f.error,
       h.hub,
       h.authority,
       f.link_share
FROM hits_score AS h
JOIN doc AS d ON d.oid = h.oid AND d.bucket = h.bucket
JOIN site ON site.sid = d.sid AND site.bucket = d.bucket
LEFT JOIN doc_fetch AS f ON f.oid = h.oid AND f.bucket = h.bucket
LEFT JOIN taxonomy_paths() AS t ON t.kcid = f.cid
WHERE h.run_id = (SELECT run_id FROM run)
  AND CASE WHEN %(role)s = 'hub' THEN h.hub ELSE h.authority END > 0
  AND (%(min_relevance)s <= 0
       OR (f.model_id IS NOT NULL AND d.relevance >= ln(%(min_relevance)s)))
ORDER BY CASE WHEN %(role)s = 'hub' THEN h.hub ELSE h.authority END DESC, d.bytehash, h.oid;
