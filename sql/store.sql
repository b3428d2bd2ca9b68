-- Storing what crawlers fetched, in bulk: rows are COPYed into session-local staging
-- tables, then each statement below moves a whole batch at once, in this order, in one
-- transaction per batch. The pages' own rows are locked first and updated last, so
-- concurrent stores cannot deadlock: a store that checks in a URL another store has
-- just fetched waits for that store only while it is updating its own rows, and new
-- sites and URLs go in key order.

-- create_staging --
-- One row per outcome (its site and depth, and the state its out-links get) and one per
-- out-link. Page texts are not staged: they are COPYed into doc_text once their pages
-- are locked (forget_texts), as staging 20 KB texts wrote and read each one twice.
CREATE TEMP TABLE IF NOT EXISTS stage_result (
    oid bigint, state smallint, http_status smallint, error varchar(64),
    content_type varchar(128), content_hash bigint, title text, etag varchar(128),
    last_modified varchar(64), sid integer, depth smallint, link_state smallint,
    link_share real
) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS stage_link (
    oid_src bigint, oid_dst bigint, bytehash integer, https boolean, host text, path text,
    anchor text, context text, estimate float8, own real, known boolean
) ON COMMIT DELETE ROWS;

-- lock_pages --
-- The batch's pages, locked in oid order: no other store writes links from the same
-- page (fetched twice when a lease ran out) until this batch commits. Run once per
-- shard on a Citus cluster, with the pages and buckets of that shard (focuscrawl.shards).
SELECT d.oid FROM doc AS d
WHERE d.oid = ANY(%(oids)s::bigint[]) AND d.bucket = ANY(%(buckets)s::smallint[])
ORDER BY d.oid
FOR UPDATE;

-- store_link_sites --
-- The sites of out-links in %(buckets)s: every bucket of the batch's links on one
-- server; on a Citus cluster those of one shard, as store_link_docs. (A URL the crawler
-- knows is checked in, known, has its site.)
INSERT INTO site (host, bucket)
SELECT DISTINCT host, oid_bucket(oid_dst) FROM stage_link
WHERE oid_bucket(oid_dst) = ANY(%(buckets)s::smallint[]) AND NOT known
ORDER BY host
ON CONFLICT (host, bucket) DO NOTHING;

-- store_link_docs --
-- Check out-links in one level deeper than their page. Their relevance is the check-in
-- estimate the crawler computed from the newest link model (%(link_model)s, recorded in
-- estimated_by), or -Infinity, behind every estimated URL, until the classifier
-- estimates it from a scored parent. A URL already known keeps the higher of its
-- estimate and the new one: estimates only rise. priority, the tie-break after
-- relevance, is the depth: among equal estimates the URLs nearest the seeds go first.
-- (oid and bytehash come computed by the crawler, as focuscrawl.urls and url_oid agree;
-- doc keeps the URL's path, site its host.) One row per URL, the best of its links in
-- the batch, in key order, so that concurrent stores lock rows in one order; URLs
-- already fetched, failed or excluded, or already estimated as high, are left out
-- first, since ON CONFLICT DO UPDATE locks the row it meets even when it changes nothing
-- (a classifier holds fetched ones; a lock dirties the row's page as an update would).
-- A link with no estimate to a URL the crawler knows has its row (known) cannot raise
-- it, whatever the row holds, and is left out before the lookup: the crawler leaves
-- unestimated the links to pages it has settled, 6 in 10 of a Wikispeedia crawl's links
-- (the statement's time in a 4,000-page crawl 0.33 s against 0.78 s).
-- Only URLs of %(buckets)s: on one server every bucket of the batch's links, one
-- statement; on a Citus cluster the buckets of one shard, shard after shard in shard
-- order (focuscrawl.shards), so that the order is (shard, oid) in every transaction
-- (Citus would write the shards of one statement in parallel, each in its own order).
INSERT INTO doc AS d (oid, bucket, https, path, sid, bytehash, relevance, priority, depth,
                      state, estimated_by)
SELECT DISTINCT ON (l.oid_dst)
       l.oid_dst, s.bucket, l.https, l.path, s.sid, l.bytehash, coalesce(l.estimate, '-Infinity'),
       least(r.depth + 1, 32767), least(r.depth + 1, 32767), r.link_state,
       CASE WHEN l.estimate IS NULL THEN 0 ELSE %(link_model)s END
FROM stage_link AS l
JOIN stage_result AS r ON r.oid = l.oid_src
JOIN site AS s ON s.host = l.host AND s.bucket = oid_bucket(l.oid_dst)
WHERE oid_bucket(l.oid_dst) = ANY(%(buckets)s::smallint[]) AND s.bucket = ANY(%(buckets)s::smallint[])
  AND (l.estimate IS NOT NULL OR NOT l.known)
  AND NOT EXISTS (SELECT FROM doc AS k WHERE k.oid = l.oid_dst AND k.bucket = s.bucket
                                       AND k.bucket = ANY(%(buckets)s::smallint[])
                                       AND (k.state IN (1, 2, 3, 5)
                                            OR k.relevance >= coalesce(l.estimate, '-Infinity')))
ORDER BY l.oid_dst, l.estimate DESC NULLS LAST, r.depth
ON CONFLICT (oid, bucket) DO UPDATE
    SET relevance = EXCLUDED.relevance, estimated_by = EXCLUDED.estimated_by
    WHERE d.state IN (0, 4) AND EXCLUDED.relevance > d.relevance;

-- store_link_docs_unestimated --
-- store_link_docs for a batch with no check-in estimates (no link model, or a crawl
-- whose frontier estimate is not the link learner's): every new URL comes in at
-- -Infinity, so a URL already known has nothing to gain and is left alone, unlocked;
-- one the crawler knows it has checked in (known) is not even looked up.
-- (Shard by shard on a Citus cluster, as store_link_docs.)
INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, priority, depth, state)
SELECT l.oid_dst, s.bucket, l.https, l.path, s.sid, l.bytehash, '-Infinity'::float8,
       least(r.depth + 1, 32767), least(r.depth + 1, 32767), r.link_state
FROM stage_link AS l
JOIN stage_result AS r ON r.oid = l.oid_src
JOIN site AS s ON s.host = l.host AND s.bucket = oid_bucket(l.oid_dst)
WHERE oid_bucket(l.oid_dst) = ANY(%(buckets)s::smallint[]) AND s.bucket = ANY(%(buckets)s::smallint[])
  AND NOT l.known
ORDER BY l.oid_dst
ON CONFLICT (oid, bucket) DO NOTHING;

-- forget_links --
-- A page fetched again (not answered 304) has the links of its new copy only. With
-- the pages locked (lock_pages), a link is stored once, with no key.
DELETE FROM link
WHERE oid_src IN (
    SELECT oid FROM stage_result WHERE state = 2 AND http_status IS DISTINCT FROM 304
);

-- store_links --
-- Each link with the sum of its own features' weights under the link model that
-- estimated it at check-in (own; that model is the page's doc_fetch.links_model), for the
-- classifier to add its source's terms to once the page is scored.
INSERT INTO link (oid_src, oid_dst, sid_src, sid_dst, anchor, context, bucket, own)
SELECT l.oid_src, l.oid_dst, r.sid, s.sid, l.anchor, l.context, oid_bucket(l.oid_src), l.own
FROM stage_link AS l
JOIN stage_result AS r ON r.oid = l.oid_src
JOIN site AS s ON s.host = l.host AND s.bucket = oid_bucket(l.oid_dst);

-- forget_texts --
-- The old text of pages fetched again, before their new texts are COPYed into doc_text
-- (pages locked first, lock_pages; shard by shard on a Citus cluster, as lock_pages).
DELETE FROM doc_text
WHERE oid = ANY(%(oids)s::bigint[]) AND bucket = ANY(%(buckets)s::smallint[]);

-- store_results --
-- Fetched pages leave the frontier; failed tries count and, while tries remain, go back
-- (num_tries asc puts them behind every untried URL). Their leases end.
WITH ended AS (
    DELETE FROM doc_lease WHERE oid IN (SELECT oid FROM stage_result)
)
UPDATE doc AS d
SET state = r.state, num_tries = least(d.num_tries + 1, 32767)
FROM stage_result AS r
WHERE d.oid = r.oid AND d.bucket = oid_bucket(r.oid);

-- store_fetches --
-- What each try found, with a fetch number for the fetched pages. A revisit answered
-- 304 keeps the page's type, title, hash, ETag, Last-Modified and link share, and its
-- classification; any other fetched page goes to the classifier's queue (model_id NULL),
-- with the link model whose sums its new links keep (%(links_model)s, or NULL: none).
INSERT INTO doc_fetch AS f (oid, bucket, fetch_seq, fetched_at, content_hash, http_status,
                            content_type, error, title, etag, last_modified, links_model,
                            link_share)
SELECT r.oid, oid_bucket(r.oid), CASE WHEN r.state = 2 THEN nextval('doc_fetch_seq') END,
       CASE WHEN r.state = 2 THEN now() END, r.content_hash, r.http_status,
       r.content_type, r.error, r.title, r.etag, r.last_modified,
       CASE WHEN r.state = 2 THEN %(links_model)s::int END, r.link_share
FROM stage_result AS r
ORDER BY r.oid
ON CONFLICT (oid, bucket) DO UPDATE
SET fetch_seq = coalesce(EXCLUDED.fetch_seq, f.fetch_seq),
    fetched_at = coalesce(EXCLUDED.fetched_at, f.fetched_at),
    http_status = EXCLUDED.http_status,
    error = EXCLUDED.error,
    content_type = coalesce(EXCLUDED.content_type, f.content_type),
    content_hash = coalesce(EXCLUDED.content_hash, f.content_hash),
    title = coalesce(EXCLUDED.title, f.title),
    etag = coalesce(EXCLUDED.etag, f.etag),
    last_modified = coalesce(EXCLUDED.last_modified, f.last_modified),
    link_share = coalesce(EXCLUDED.link_share, f.link_share),
    model_id = CASE WHEN EXCLUDED.fetch_seq IS NOT NULL
                         AND EXCLUDED.http_status IS DISTINCT FROM 304
                    THEN NULL ELSE f.model_id END,
    links_model = CASE WHEN EXCLUDED.fetch_seq IS NOT NULL
                            AND EXCLUDED.http_status IS DISTINCT FROM 304
                       THEN EXCLUDED.links_model ELSE f.links_model END;

-- analyze_grown_tables --
-- The planner's statistics of the tables a crawl grows, taken again for those that have
-- outgrown them: never analysed, or holding more than twice the rows the planner counts.
-- The store runs it each time the pages it has stored double (focuscrawl.crawler.store:
-- ANALYZE_FROM), as autovacuum looks only every minute on a stock server: until then a
-- new table is planned as if empty, and the classifier's claim read every fetched page
-- for each page it claimed (224 ms a claim on the mean over 20,000 pages) while the
-- crawler's claim sorted the frontier instead of reading its index.
DO $$
DECLARE
    grown regclass;
BEGIN
    FOR grown IN
        SELECT c.oid::regclass
        FROM unnest(ARRAY[to_regclass('doc'), to_regclass('doc_fetch'), to_regclass('doc_text'),
                          to_regclass('link'), to_regclass('site'),
                          to_regclass('link_example')]) AS r(rel)
        JOIN pg_class AS c ON c.oid = r.rel
        LEFT JOIN pg_stat_all_tables AS s ON s.relid = c.oid
        WHERE c.reltuples < 0 OR coalesce(s.n_live_tup, 0) > 2 * c.reltuples
    LOOP
        EXECUTE 'ANALYZE ' || grown::text;
    END LOOP;
END
$$;
