-- The link learner (the 2002 paper's apprentice): its versions, its examples, and the
-- frontier estimates it makes. Features and the estimate formula: focuscrawl/linkmodel.py.

-- link_model_state --
-- What a crawler's store needs to estimate new URLs: the crawl's frontier estimate
-- (crawl_setting 'estimate'; none set means 'soft') and the newest link model.
SELECT (SELECT value FROM crawl_setting WHERE name = 'estimate') AS estimate,
       (SELECT max(model_id) FROM model WHERE kind = 'link') AS link_model;

-- link_model --
SELECT model_id, params, weights FROM model WHERE model_id = %(model_id)s AND kind = 'link';

-- set_crawl_setting --
INSERT INTO crawl_setting (name, value) VALUES (%(name)s, %(value)s)
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;

-- crawl_setting --
SELECT value FROM crawl_setting WHERE name = %(name)s;

-- scored_out_links --
-- The unvisited out-links of pages just scored (seeds and boosted URLs, at seed rank,
-- are left out), each with own: the sum of the link's own features' weights when the
-- crawler summed them with the link model %(link_model)s (the source's
-- doc_fetch.links_model), else NULL; for the others the classifier reads the words
-- (scored_out_link_words); and the anchor and the target's path, which soft's estimate
-- reads with the page classifier. Off link_src (the links first, as an intermediate result:
-- on a Citus cluster a link's target lies in another shard), then their targets off
-- doc's key, named as an array: joined to the links, the targets were read by a
-- sequential scan of the frontier and a hash, as the planner cannot tell how few links
-- a batch has (6 times the time on a frontier of 50,000 URLs, and growing with it).
WITH l AS MATERIALIZED (
    SELECT l.oid_src, l.oid_dst, CASE WHEN f.links_model = %(link_model)s THEN l.own END AS own,
           l.anchor
    FROM link AS l
    JOIN doc_fetch AS f ON f.oid = l.oid_src AND f.bucket = l.bucket
    WHERE l.oid_src = ANY(%(oids)s::bigint[]) AND f.oid = ANY(%(oids)s::bigint[])
), d AS MATERIALIZED (
    SELECT oid, bucket, path FROM doc
    WHERE oid = ANY(ARRAY(SELECT oid_dst FROM l)) AND state IN (0, 4) AND priority > -32768
)
SELECT l.oid_src, l.oid_dst, l.own, l.anchor, d.path
FROM l
JOIN d ON d.oid = l.oid_dst AND d.bucket = oid_bucket(l.oid_dst);

-- scored_out_link_words --
-- scored_out_links with what the link learner and the anchor estimates read of each
-- link: anchor, context, and the target's host and path (read the same way).
WITH l AS MATERIALIZED (
    SELECT oid_src, oid_dst, anchor, context FROM link WHERE oid_src = ANY(%(oids)s::bigint[])
), d AS MATERIALIZED (
    SELECT oid, bucket, sid, path FROM doc
    WHERE oid = ANY(ARRAY(SELECT oid_dst FROM l)) AND state IN (0, 4) AND priority > -32768
)
SELECT l.oid_src, l.oid_dst, l.anchor, l.context, s.host, d.path
FROM l
JOIN d ON d.oid = l.oid_dst AND d.bucket = oid_bucket(l.oid_dst)
JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket;

-- raise_estimates --
-- New estimates of unvisited URLs (log-probabilities, one per URL, from the link model
-- %(model_id)s or, when 0, from the parents' relevance): a URL takes the higher of its
-- estimate and the new one, and records the model whose score it took; in hard focus a
-- held URL is released when release is true (a parent's best leaf lies below a good
-- node). Rows are locked in oid order first, as every writer of the frontier does. Run
-- once per shard on a Citus cluster, with its URLs and buckets (focuscrawl.shards).
-- The URLs are looked up by key, named as an array: joined to the batch alone, the
-- planner read the whole frontier and hashed it for every batch (about a thousand URLs
-- against 90,000 rows in a polite crawl's first minute, and growing with the frontier).
WITH e AS (
    SELECT * FROM unnest(%(oids)s::bigint[], %(relevances)s::float8[], %(releases)s::boolean[])
        AS e(oid, relevance, release)
), locked AS (
    SELECT d.oid, d.bucket, e.relevance, e.release FROM doc AS d
    JOIN e ON e.oid = d.oid AND d.bucket = oid_bucket(e.oid)
    WHERE d.oid = ANY(ARRAY(SELECT oid FROM e))
      AND d.state IN (0, 4) AND d.priority > -32768 AND d.bucket = ANY(%(buckets)s::smallint[])
      AND (e.relevance > d.relevance OR (d.state = 4 AND e.release))
    ORDER BY d.oid
    FOR UPDATE OF d
)
UPDATE doc AS d
SET relevance = greatest(d.relevance, k.relevance),
    estimated_by = CASE WHEN k.relevance > d.relevance THEN least(%(model_id)s, 32767)
                        ELSE d.estimated_by END,
    state = CASE WHEN d.state = 4 AND k.release THEN 0 ELSE d.state END
FROM locked AS k
WHERE d.oid = k.oid AND d.bucket = k.bucket AND d.bucket = ANY(%(buckets)s::smallint[])
  AND d.state IN (0, 4) AND d.priority > -32768
  AND (k.relevance > d.relevance OR (d.state = 4 AND k.release));

-- set_estimates --
-- A version of the link learner fitted afresh, or a rescore: unvisited URLs get the given
-- estimates outright (they may fall), looked up by key (as in raise_estimates). Seeds and
-- boosted URLs keep their seed rank. Rows are locked in oid order first, as every writer
-- of the frontier does; run once per shard on a Citus cluster, with its URLs and buckets.
WITH e AS (
    SELECT * FROM unnest(%(oids)s::bigint[], %(relevances)s::float8[]) AS e(oid, relevance)
), locked AS (
    SELECT d.oid, d.bucket, e.relevance FROM doc AS d
    JOIN e ON e.oid = d.oid AND d.bucket = oid_bucket(e.oid)
    WHERE d.oid = ANY(ARRAY(SELECT oid FROM e))
      AND d.state IN (0, 4) AND d.priority > -32768 AND d.bucket = ANY(%(buckets)s::smallint[])
    ORDER BY d.oid
    FOR UPDATE OF d
)
UPDATE doc AS d
SET relevance = k.relevance, estimated_by = least(%(model_id)s, 32767)
FROM locked AS k
WHERE d.oid = k.oid AND d.bucket = k.bucket AND d.bucket = ANY(%(buckets)s::smallint[])
  AND d.state IN (0, 4) AND d.priority > -32768;

-- queue_link_examples --
-- When pages are scored, every link that pointed to them from a scored page becomes a
-- training example of the link learner, labelled with the page's relevance R (off
-- link_dst). The links of a page to itself teach nothing and are left out. The pages
-- and their in-links are read first, as intermediate results (on a Citus cluster a
-- link's source and target lie in different shards), then the sources by key.
WITH t AS MATERIALIZED (
    SELECT t.oid, doc_url(t.https, ts.host, t.path) AS url,
           exp(greatest(t.relevance, -700)) AS label
    FROM doc AS t JOIN site AS ts ON ts.sid = t.sid AND ts.bucket = t.bucket
    WHERE t.oid = ANY(%(oids)s::bigint[])
), l AS MATERIALIZED (
    SELECT oid_src, bucket, oid_dst, anchor, context FROM link
    WHERE oid_dst = ANY(%(oids)s::bigint[]) AND oid_src <> oid_dst
)
INSERT INTO link_example (anchor, context, url, src_cid, src_relevance, label)
SELECT l.anchor, l.context, t.url, sf.cid, exp(greatest(src.relevance, -700)), t.label
FROM l
JOIN t ON t.oid = l.oid_dst
JOIN doc_fetch AS sf ON sf.oid = l.oid_src AND sf.bucket = l.bucket
JOIN doc AS src ON src.oid = l.oid_src AND src.bucket = l.bucket
WHERE sf.model_id IS NOT NULL AND sf.cid IS NOT NULL;

-- queue_path_examples --
-- The paths estimate's further lessons: a link's value over two steps (after Rennie &
-- McCallum's discounted reward). When pages are scored, each scored page v linking to
-- one of them is worth %(gamma)s times the best R among them, when that is more than v's
-- own R, and every link into such a v from a scored page becomes an example labelled
-- with that worth. Each step is an intermediate result, as in queue_link_examples.
WITH t AS MATERIALIZED (
    SELECT t.oid, exp(greatest(t.relevance, -700)) * %(gamma)s AS worth
    FROM doc AS t JOIN doc_fetch AS tf ON tf.oid = t.oid AND tf.bucket = t.bucket
    WHERE t.oid = ANY(%(oids)s::bigint[]) AND tf.cid IS NOT NULL
), up AS MATERIALIZED (
    SELECT oid_src, oid_dst FROM link
    WHERE oid_dst = ANY(%(oids)s::bigint[]) AND oid_src <> oid_dst
), v AS MATERIALIZED (
    SELECT up.oid_src AS oid, max(t.worth) AS worth
    FROM up JOIN t ON t.oid = up.oid_dst
    GROUP BY up.oid_src
), vd AS MATERIALIZED (
    SELECT d.oid, v.worth, doc_url(d.https, s.host, d.path) AS url
    FROM v
    JOIN doc AS d ON d.oid = v.oid AND d.bucket = oid_bucket(v.oid)
    JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
    JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
    WHERE f.model_id IS NOT NULL AND f.cid IS NOT NULL
      AND exp(greatest(d.relevance, -700)) < v.worth
), l AS MATERIALIZED (
    SELECT oid_src, bucket, oid_dst, anchor, context FROM link
    WHERE oid_dst = ANY(ARRAY(SELECT oid FROM vd)) AND oid_src <> oid_dst
)
INSERT INTO link_example (anchor, context, url, src_cid, src_relevance, label)
SELECT l.anchor, l.context, vd.url, sf.cid, exp(greatest(src.relevance, -700)), vd.worth
FROM l
JOIN vd ON vd.oid = l.oid_dst
JOIN doc_fetch AS sf ON sf.oid = l.oid_src AND sf.bucket = l.bucket
JOIN doc AS src ON src.oid = l.oid_src AND src.bucket = l.bucket
WHERE sf.model_id IS NOT NULL AND sf.cid IS NOT NULL;

-- queued_link_examples --
SELECT count(*) AS queued, count(*) FILTER (WHERE label > 0.5) AS relevant FROM link_example;

-- take_link_examples --
-- The learner takes every queued example (in the transaction that stores the version
-- learned from them: a failure puts them back).
DELETE FROM link_example RETURNING anchor, context, url, src_cid, src_relevance, label;

-- clear_link_examples --
DELETE FROM link_example;

-- example_link_pairs --
-- The links between example pages (source and target both examples), with the
-- categories of both: the link learner's lessons before any crawl.
SELECT e.url AS src_url, e.kcid AS src_kcid, el.url, el.anchor, el.context,
       t.kcid AS dst_kcid
FROM example_link AS el
JOIN example AS e ON e.eid = el.eid
JOIN example AS t ON t.url = el.url
WHERE e.url IS NOT NULL AND el.url <> e.url
ORDER BY e.url, el.url, t.kcid;

-- example_kcids --
SELECT url, kcid FROM example WHERE url IS NOT NULL ORDER BY url, kcid;

-- crawl_failed_urls --
-- Every URL whose request failed and was never fetched (a 404, a host that does not
-- resolve, a timeout: doc_fetch holds its error and no fetch number; excluded URLs were
-- not asked), for a version fitted afresh: each teaches that a link to it was worth
-- nothing (its host and file type only, focuscrawl.topics.linkmodel.failure_parts), as
-- the store queues them as they fail.
SELECT s.host, d.path
FROM doc_fetch AS f
JOIN doc AS d ON d.oid = f.oid AND d.bucket = f.bucket
JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
WHERE f.error IS NOT NULL AND f.fetch_seq IS NULL AND d.state IN (0, 1, 3)
ORDER BY d.oid;

-- crawl_link_examples --
-- Every link between two scored pages, as queue_link_examples makes them, with its
-- source and target (for training the learner afresh: a version below REFIT_MOST
-- examples, and classify rescore after the good marks changed).
-- (The links from scored pages are read first, as an intermediate result: on a Citus
-- cluster a link's target lies in another shard.)
WITH l AS MATERIALIZED (
    SELECT l.oid_src, l.anchor, l.context, l.oid_dst, sf.cid AS src_cid,
           exp(greatest(src.relevance, -700)) AS src_relevance
    FROM link AS l
    JOIN doc_fetch AS sf ON sf.oid = l.oid_src AND sf.bucket = l.bucket
    JOIN doc AS src ON src.oid = l.oid_src AND src.bucket = l.bucket
    WHERE l.oid_src <> l.oid_dst AND sf.model_id IS NOT NULL AND sf.cid IS NOT NULL
)
SELECT l.oid_src, l.oid_dst, l.anchor, l.context, ts.host, t.path, l.src_cid,
       l.src_relevance, exp(greatest(t.relevance, -700)) AS label
FROM l
JOIN doc AS t ON t.oid = l.oid_dst AND t.bucket = oid_bucket(l.oid_dst)
JOIN doc_fetch AS tf ON tf.oid = t.oid AND tf.bucket = t.bucket
JOIN site AS ts ON ts.sid = t.sid AND ts.bucket = t.bucket
WHERE t.state = 2 AND tf.model_id IS NOT NULL AND tf.cid IS NOT NULL;

-- frontier_in_links --
-- Every link from a scored page to an unvisited URL, for estimating the frontier
-- afresh (a version of the link learner fitted afresh, classify rescore).
-- (The links from scored pages first, as an intermediate result, as crawl_link_examples.)
WITH l AS MATERIALIZED (
    SELECT l.oid_dst, l.anchor, l.context, sf.cid AS src_cid,
           exp(greatest(src.relevance, -700)) AS src_relevance
    FROM link AS l
    JOIN doc_fetch AS sf ON sf.oid = l.oid_src AND sf.bucket = l.bucket
    JOIN doc AS src ON src.oid = l.oid_src AND src.bucket = l.bucket
    WHERE sf.model_id IS NOT NULL
)
SELECT l.oid_dst, l.anchor, l.context, s.host, d.path, l.src_cid, l.src_relevance
FROM l
JOIN doc AS d ON d.oid = l.oid_dst AND d.bucket = oid_bucket(l.oid_dst)
JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
WHERE d.state IN (0, 4) AND d.priority > -32768;

-- save_link_model --
INSERT INTO model (kind, taxonomy_digest, examples, params, weights)
VALUES ('link', %(digest)s, %(examples)s, %(params)s, %(weights)s)
RETURNING model_id;

-- newest_link_model_head --
-- The newest version's id and parameters, without its weights (read every batch).
SELECT model_id, params FROM model WHERE kind = 'link' AND length(weights) > 0
ORDER BY model_id DESC LIMIT 1;

-- newest_link_model --
SELECT model_id, taxonomy_digest, examples, params, weights
FROM model WHERE kind = 'link' ORDER BY model_id DESC LIMIT 1;

-- prune_link_models --
-- Link model versions older than the newest %(keep)s keep their row (estimates name
-- them) but not their weights.
UPDATE model SET weights = ''::bytea
WHERE kind = 'link' AND length(weights) > 0
  AND model_id < (SELECT min(model_id) FROM (
        SELECT model_id FROM model WHERE kind = 'link' ORDER BY model_id DESC LIMIT %(keep)s
      ) AS newest);

-- insert_example_links --
INSERT INTO example_link (eid, url, anchor, context)
SELECT * FROM unnest(%(eids)s::bigint[], %(urls)s::text[], %(anchors)s::text[],
                     %(contexts)s::text[])
ON CONFLICT (eid, url) DO NOTHING;

-- lock_link_learner --
-- One classifier learns at a time; the others go on scoring (released at commit).
SELECT pg_try_advisory_xact_lock(hashtext('focuscrawl.link_learner')) AS locked;

-- link_learner_summary --
-- For classify info: the crawl's frontier estimate, the link learner's versions, the
-- newest one's examples, and the examples queued for it.
SELECT coalesce((SELECT value FROM crawl_setting WHERE name = 'estimate'), 'soft') AS estimate,
       (SELECT count(*) FROM model WHERE kind = 'link') AS versions,
       (SELECT max(model_id) FROM model WHERE kind = 'link') AS newest,
       (SELECT examples FROM model WHERE kind = 'link' ORDER BY model_id DESC LIMIT 1)
           AS learned,
       (SELECT count(*) FROM link_example) AS queued;
