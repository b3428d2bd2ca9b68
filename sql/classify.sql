-- The classifier: models, the queue of fetched pages, scores, and passing relevance on.
-- relevance is log R(d), R(d) = sum of Pr[c|d] over the good frontier (marked nodes
-- with no marked ancestor); -Infinity when nothing is marked.

-- save_model --
INSERT INTO model (taxonomy_digest, examples, params, weights)
VALUES (%(digest)s, %(examples)s, %(params)s, %(weights)s)
RETURNING model_id, created_at;

-- latest_model --
-- The page classifier in use: the newest (off model_kind).
SELECT model_id, created_at, taxonomy_digest, examples, params, weights
FROM model WHERE kind = 'page' ORDER BY model_id DESC LIMIT 1;

-- model_summaries --
-- (The counts are grouped first, not counted per model in a subquery: Citus runs no
-- subquery correlated with a reference table.)
SELECT m.model_id, m.created_at, m.taxonomy_digest, m.examples, m.params,
       length(m.weights) AS bytes, coalesce(s.scored, 0) AS scored
FROM model AS m
LEFT JOIN (
    SELECT model_id, count(*) AS scored FROM doc_fetch
    WHERE model_id IS NOT NULL GROUP BY model_id
) AS s ON s.model_id = m.model_id
WHERE m.kind = 'page' ORDER BY m.model_id DESC;

-- claim_unclassified --
-- The next fetched, unscored pages in fetch order, off doc_fetch_unscored. Their doc rows
-- stay locked until the scores are written in the same transaction (doc rows, as a
-- crawler's store locks them before it writes doc_fetch, so the two cannot deadlock);
-- SKIP LOCKED lets several classifiers share the queue, and a crashed one loses
-- nothing. (The evaluation's ground-truth scorer takes its pages off the same queue.)
-- The doc_fetch rows are locked too: a page another classifier scored and committed
-- while this statement ran is then checked again on its new row (model_id set) and
-- left out; with doc locked alone, PostgreSQL rechecks only doc's row and the page was
-- scored twice. Only pages of %(buckets)s: every bucket on one server, one shard's on a
-- Citus cluster (focuscrawl.shards), where a classifier takes the shards in turn. (The
-- joins name no bucket, as in claim_revisits: the statement runs on one shard.)
WITH claimed AS (
    SELECT f.oid, f.bucket, f.title
    FROM doc_fetch AS f JOIN doc AS d ON d.oid = f.oid
    WHERE f.fetch_seq IS NOT NULL AND f.model_id IS NULL AND d.state = 2
      AND f.bucket = ANY(%(buckets)s::smallint[]) AND d.bucket = ANY(%(buckets)s::smallint[])
    ORDER BY f.fetch_seq
    LIMIT %(batch)s
    FOR UPDATE OF d, f SKIP LOCKED
)
SELECT c.oid, c.title, t.text
FROM claimed AS c
LEFT JOIN doc_text AS t
    ON t.oid = c.oid AND t.bucket = ANY(%(buckets)s::smallint[]);

-- write_scores --
-- Relevance and best leaf of scored pages. A page without text (a redirect, a PDF)
-- keeps its estimate and no category (cid NULL). Returns what each page now passes on
-- to its out-links (the parents of pass_relevance). The pages are looked up by key,
-- named as an array, as in raise_estimates (else, in a batch of a thousand pages, a scan
-- and a hash of doc_fetch and of doc).
WITH s AS (
    SELECT * FROM unnest(%(oids)s::bigint[], %(relevances)s::float8[], %(cids)s::smallint[])
        AS s(oid, relevance, cid)
), classified AS (
    UPDATE doc_fetch AS f
    SET cid = s.cid, model_id = %(model_id)s
    FROM s
    WHERE f.oid = s.oid AND f.bucket = oid_bucket(s.oid)
      AND f.oid = ANY(ARRAY(SELECT oid FROM s))
)
UPDATE doc AS d
SET relevance = coalesce(s.relevance, d.relevance)
FROM s
WHERE d.oid = s.oid AND d.bucket = oid_bucket(s.oid)
  AND d.oid = ANY(ARRAY(SELECT oid FROM s))
RETURNING d.oid, d.relevance, s.cid;

-- write_node_scores --
-- log Pr[c|d] of every node, in the model's node order, for rescoring without the text.
INSERT INTO doc_class (oid, bucket, model_id, logp)
SELECT s.oid, oid_bucket(s.oid), %(model_id)s, s.logp::real[]
FROM unnest(%(oids)s::bigint[], %(logps)s::text[]) AS s(oid, logp)
ON CONFLICT (oid, bucket) DO UPDATE SET model_id = EXCLUDED.model_id, logp = EXCLUDED.logp;

-- rescore_docs --
-- After good marks change: recompute log R(d) of every page scored by this model from
-- its stored node scores (%(columns)s: 1-based positions of the good frontier in the
-- model's node order). exp() is guarded against underflow, which PostgreSQL reports
-- as an error.
UPDATE doc AS d
SET relevance = CASE WHEN cardinality(%(columns)s::int[]) = 0 THEN '-Infinity'::float8
                     ELSE r.top + ln(r.total) END
FROM (
    SELECT c.oid, c.bucket, top.top,
           (SELECT sum(exp(greatest(c.logp[i] - top.top, -700)))
            FROM unnest(%(columns)s::int[]) AS i) AS total
    FROM doc_class AS c
    CROSS JOIN LATERAL (
        SELECT max(c.logp[i])::float8 AS top FROM unnest(%(columns)s::int[]) AS i
    ) AS top
    JOIN doc_fetch AS f ON f.oid = c.oid AND f.bucket = c.bucket AND f.model_id = %(model_id)s
    WHERE c.model_id = %(model_id)s
) AS r
WHERE d.oid = r.oid AND d.bucket = r.bucket AND d.state = 2;

-- rescore_frontier --
-- ... and the frontier follows: each unvisited URL's estimate is again the best of its
-- scored parents; held URLs below a now-good best leaf are released.
WITH estimate AS (
    SELECT l.oid_dst AS oid, max(p.relevance) AS relevance,
           bool_or(f.cid IS NULL OR f.cid = ANY(%(good_leaves)s::smallint[])) AS release
    FROM link AS l
    JOIN doc AS p ON p.oid = l.oid_src AND p.bucket = l.bucket
    JOIN doc_fetch AS f ON f.oid = p.oid AND f.bucket = p.bucket
    WHERE p.state = 2 AND f.model_id IS NOT NULL
    GROUP BY l.oid_dst
)
UPDATE doc AS d
SET relevance = e.relevance,
    state = CASE WHEN d.state = 4 AND e.release THEN 0 ELSE d.state END
FROM estimate AS e
WHERE d.oid = e.oid AND d.bucket = oid_bucket(e.oid) AND d.state IN (0, 4)
  AND d.priority > -32768;

-- classifier_backlog --
SELECT count(*) AS backlog
FROM doc_fetch AS f JOIN doc AS d ON d.oid = f.oid AND d.bucket = f.bucket
WHERE f.fetch_seq IS NOT NULL AND f.model_id IS NULL AND d.state = 2;

-- newest_model_id --
SELECT max(model_id) AS model_id FROM model WHERE kind = 'page';

-- newest_model_params --
-- The newest page classifier's parameters (does it hold a calibration?).
SELECT params FROM model WHERE kind = 'page' ORDER BY model_id DESC LIMIT 1;

-- scored_models --
-- Models that scored pages, for rescoring.
SELECT m.model_id, m.created_at, m.taxonomy_digest, m.examples, m.params, m.weights
FROM model AS m
WHERE m.model_id IN (SELECT DISTINCT model_id FROM doc_class);

-- self_training_pages --
-- The crawl's pages a calibrated topic learns from besides its examples (self-training),
-- each in its best leaf: up to %(limit_on)s scored pages whose best leaf is a good one,
-- at least %(min_relevance)s sure to be relevant (log R'), the surest first; and up to
-- %(limit_off)s whose best leaf is not, below %(max_relevance)s, the surest off the topic
-- (the lowest R') first: the background learns what the crawled web looks like off the
-- topic. Pages with text only; pages that are examples (the user's, or labelled) left out.
-- (The text is read by key after the choice: on a Citus cluster it lies in doc_text's
-- shards.)
WITH examples AS MATERIALIZED (
    SELECT DISTINCT url FROM example WHERE url IS NOT NULL
), scored AS MATERIALIZED (
    SELECT f.oid, f.bucket, f.cid, f.title, d.relevance,
           f.cid = ANY(%(good_leaves)s::int[]) AS good
    FROM doc_fetch AS f
    JOIN doc AS d ON d.oid = f.oid AND d.bucket = f.bucket
    JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
    WHERE f.model_id IS NOT NULL AND f.cid IS NOT NULL AND d.state = 2
      AND CASE WHEN f.cid = ANY(%(good_leaves)s::int[])
               THEN d.relevance >= %(min_relevance)s
               ELSE d.relevance < %(max_relevance)s END
      AND doc_url(d.https, s.host, d.path) NOT IN (SELECT url FROM examples)
), chosen AS MATERIALIZED (
    (SELECT * FROM scored WHERE good ORDER BY relevance DESC, oid LIMIT %(limit_on)s)
    UNION ALL
    (SELECT * FROM scored WHERE NOT good ORDER BY relevance, oid LIMIT %(limit_off)s)
)
SELECT c.cid AS kcid, coalesce(c.title, '') || E'\n' || t.text AS text
FROM chosen AS c
JOIN doc_text AS t ON t.oid = c.oid AND t.bucket = c.bucket
WHERE t.text <> ''
ORDER BY c.good DESC, CASE WHEN c.good THEN -c.relevance ELSE c.relevance END, c.oid;

-- scored_pages --
-- How many fetched pages with text the classifiers have scored (self-training's clock).
SELECT count(*) AS scored FROM doc_fetch WHERE model_id IS NOT NULL AND cid IS NOT NULL;

-- lock_self_training --
-- One classifier self-trains at a time; the others go on scoring (released at commit).
SELECT pg_try_advisory_xact_lock(hashtext('focuscrawl.self_training')) AS locked;
