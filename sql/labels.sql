-- Labels that teach (`focuscrawl label`): an operator's verdict on a fetched page makes
-- it an example of a category for the next `classify train`.

-- label_targets --
-- The fetched pages named, with what a label needs: their text and the label they have.
SELECT d.oid, doc_url(d.https, site.host, d.path) AS url, d.state, f.title, t.text,
       l.eid AS labelled_eid
FROM doc AS d
JOIN site ON site.sid = d.sid AND site.bucket = d.bucket
LEFT JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
LEFT JOIN doc_text AS t ON t.oid = d.oid AND t.bucket = d.bucket
LEFT JOIN page_label AS l ON l.oid = d.oid
WHERE d.oid = ANY(%(oids)s::bigint[]);

-- drop_label_example --
-- A page labelled again: the example of its earlier label goes (its page_label with it).
DELETE FROM example WHERE eid = %(eid)s;

-- add_label --
-- The page as an example of its category, and the label naming it. Returns the eid.
WITH added AS (
    INSERT INTO example (kcid, url, title, text)
    VALUES (%(kcid)s, %(url)s, %(title)s, %(text)s)
    ON CONFLICT (kcid, url) DO UPDATE SET title = EXCLUDED.title, text = EXCLUDED.text
    RETURNING eid
)
INSERT INTO page_label (oid, good, kcid, eid)
SELECT %(oid)s, %(good)s, %(kcid)s, eid FROM added
ON CONFLICT (oid) DO UPDATE
SET good = EXCLUDED.good, kcid = EXCLUDED.kcid, eid = EXCLUDED.eid,
    labelled_at = EXCLUDED.labelled_at
RETURNING eid;

-- label_count --
SELECT count(*) FILTER (WHERE good) AS good, count(*) FILTER (WHERE NOT good) AS bad
FROM page_label;

-- suggest_uncertain --
-- Scored, unlabelled pages the classifier is least sure of: R nearest 0.5.
SELECT doc_url(d.https, site.host, d.path) AS url, f.title,
       exp(greatest(d.relevance, -700)) AS relevance
FROM doc_fetch AS f
JOIN doc AS d ON d.oid = f.oid AND d.bucket = f.bucket
JOIN site ON site.sid = d.sid AND site.bucket = d.bucket
JOIN doc_text AS t ON t.oid = f.oid AND t.bucket = f.bucket
WHERE f.model_id IS NOT NULL AND d.state = 2
  AND NOT EXISTS (SELECT FROM page_label AS l WHERE l.oid = f.oid)
ORDER BY abs(exp(greatest(d.relevance, -700)) - 0.5), d.bytehash, d.oid
LIMIT %(limit)s;

-- suggest_off_topic --
-- Scored, unlabelled pages that look off-topic (R below 0.5) but that the crawl's
-- relevant pages point to most: either the classifier misjudges them, or they draw the
-- crawl off its topic. Either way a label teaches the most.
-- (The relevant pages' links are counted first, as an intermediate result: on a Citus
-- cluster a link's target lies in another shard.)
WITH relevant_links AS MATERIALIZED (
    SELECT l.oid_dst, count(*) AS linked
    FROM link AS l JOIN doc AS src ON src.oid = l.oid_src AND src.bucket = l.bucket
    WHERE src.state = 2 AND src.relevance >= ln(0.5)
    GROUP BY l.oid_dst
)
SELECT doc_url(d.https, site.host, d.path) AS url, f.title,
       exp(greatest(d.relevance, -700)) AS relevance, r.linked AS relevant_in_links
FROM relevant_links AS r
JOIN doc_fetch AS f ON f.oid = r.oid_dst AND f.bucket = oid_bucket(r.oid_dst)
JOIN doc AS d ON d.oid = f.oid AND d.bucket = f.bucket
JOIN site ON site.sid = d.sid AND site.bucket = d.bucket
WHERE f.model_id IS NOT NULL AND d.state = 2 AND d.relevance < ln(0.5)
  AND EXISTS (SELECT FROM doc_text AS t WHERE t.oid = f.oid AND t.bucket = f.bucket)
  AND NOT EXISTS (SELECT FROM page_label AS l WHERE l.oid = f.oid)
ORDER BY r.linked DESC, d.relevance DESC, d.bytehash, d.oid
LIMIT %(limit)s;

-- requeue_scored --
-- Every scored page back in the classifier's queue, to be scored by the newest model
-- (`classify train --rescore`).
UPDATE doc_fetch SET model_id = NULL
WHERE model_id IS NOT NULL AND fetch_seq IS NOT NULL;
