-- Frontier management: checking URLs in and claiming them for crawling.
-- Parameters are psycopg2 style, %(name)s; everything else runs in psql as it is.

-- upsert_sites --
-- Create a site row for each host not seen before; return (sid, host) for every host given.
WITH new AS (
    INSERT INTO site (host, bucket)
    SELECT DISTINCT h, host_bucket(h) FROM unnest(%(hosts)s::text[]) AS t(h)
    ON CONFLICT (host, bucket) DO NOTHING
    RETURNING sid, host
)
SELECT sid, host FROM new
UNION ALL
SELECT sid, host FROM site WHERE host = ANY(%(hosts)s::text[]);

-- add_seeds --
-- Check seed URLs in with relevance log 1 = 0 and the highest priority. A URL that is
-- already in the frontier is raised to seed rank; one already fetched is left alone.
-- Returns one row per URL inserted (inserted = true) or raised (false). Each URL comes
-- as its scheme (https or not), host and path: doc keeps the path, site the host.
INSERT INTO doc AS d (oid, bucket, https, path, sid, bytehash, relevance, priority, depth)
SELECT url_oid(doc_url(u.https, u.host, u.path)), s.bucket, u.https, u.path, s.sid,
       url_bytehash(doc_url(u.https, u.host, u.path)), 0, %(priority)s, 0
FROM unnest(%(https)s::boolean[], %(hosts)s::text[], %(paths)s::text[]) AS u(https, host, path)
JOIN site AS s ON s.host = u.host AND s.bucket = host_bucket(u.host)
ON CONFLICT (oid, bucket) DO UPDATE
    SET relevance = 0, priority = EXCLUDED.priority, depth = 0
    WHERE d.state = 0
RETURNING d.oid, (xmax = 0) AS inserted;

-- defer_site --
-- A host that cannot be reached (its name does not resolve, it refuses connections):
-- its untried URLs wait behind every untried URL, as a URL that failed once does (the
-- crawler that found it out asks the host again after a back-off,
-- focuscrawl.crawler.unreachable). Rows are locked in oid order first, as every
-- statement that updates many doc rows. Returns the URLs deferred. (A host's URLs all
-- have its bucket as their oid's top byte: read off doc's key, that range is a 256th of
-- the table, where there is no index by site.)
WITH locked AS (
    SELECT oid, bucket FROM doc
    WHERE oid BETWEEN %(bucket)s::bigint << 56 AND (%(bucket)s::bigint << 56) | 72057594037927935
      AND bucket = %(bucket)s AND sid = %(sid)s AND state = 0 AND num_tries = 0
    ORDER BY oid
    FOR UPDATE
)
UPDATE doc AS d SET num_tries = 1
FROM locked AS k
WHERE d.oid = k.oid AND d.bucket = k.bucket AND d.bucket = %(bucket)s
RETURNING d.oid;

-- claim_batch --
-- Claim the next %(batch)s frontier URLs in the paper's order
-- (num_tries asc, relevance desc, priority asc, bytehash), read straight off the
-- frontier indexes with no sort of the table: the untried URLs off doc_frontier and,
-- only when they run short, URLs waiting for another try off doc_frontier_retry
-- (migration 0008). Sites the crawler already holds as many URLs of as it may
-- (%(full_sites)s: what a site can be asked for at its politeness delay within the
-- lease) are skipped, and a claim takes at most %(per_site)s URLs of one site, or of
-- %(room_sites)s the %(room)s each has left below that bound: site fairness is that
-- bound, not a key of the order. The order's tie-break after
-- relevance is priority: the depth (seeds -32768), so among equal estimates the URLs
-- nearest the seeds go first. SKIP LOCKED lets any number of crawlers claim at once
-- without waiting for each other or taking the same URL; the lease (lease_claims, in
-- the same transaction) makes a crashed crawler's URLs come back. The rows come back in
-- the order they were claimed (a sort of the batch), each with its URL (its host
-- joined by key in the update). Only URLs of %(buckets)s are claimed: on one server
-- every bucket; on a Citus cluster the buckets of one shard, as Citus locks rows of one
-- shard per statement (focuscrawl.shards), and the crawler claims shard by shard what
-- frontier_top found.
WITH untried AS (
    -- a batch may hold per_site URLs of one site: the URLs locked as the index is read
    SELECT oid
    FROM doc
    WHERE %(per_site)s >= %(batch)s
      AND state = 0 AND num_tries = 0 AND sid <> ALL(%(full_sites)s::int[])
      AND bucket = ANY(%(buckets)s::smallint[])
    ORDER BY relevance DESC, priority, bytehash
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), seen AS (
    -- else the next scan URLs off the index, read with no lock ...
    SELECT oid, sid, relevance, priority, bytehash
    FROM doc
    WHERE %(per_site)s < %(batch)s
      AND state = 0 AND num_tries = 0 AND sid <> ALL(%(full_sites)s::int[])
      AND bucket = ANY(%(buckets)s::smallint[])
    ORDER BY relevance DESC, priority, bytehash
    LIMIT %(scan)s
), picked AS (
    -- ... at most per_site of each site among them, or the room a site has left (a
    -- sort of those seen) ...
    SELECT oid
    FROM (SELECT oid, sid, row_number() OVER (PARTITION BY sid
                                              ORDER BY relevance DESC, priority, bytehash) AS nth
          FROM seen) AS ranked
    LEFT JOIN unnest(%(room_sites)s::int[], %(room)s::int[]) AS r(sid, room) USING (sid)
    WHERE nth <= coalesce(r.room, %(per_site)s)
), untried_per_site AS (
    -- ... locked in order (a URL another crawler claimed meanwhile is skipped, or no
    -- longer untried)
    SELECT oid
    FROM doc
    WHERE oid = ANY(ARRAY(SELECT oid FROM picked)) AND bucket = ANY(%(buckets)s::smallint[])
      AND state = 0 AND num_tries = 0
    ORDER BY relevance DESC, priority, bytehash
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), retried AS (
    SELECT oid
    FROM doc
    WHERE state = 0 AND num_tries > 0 AND sid <> ALL(%(full_sites)s::int[])
      AND bucket = ANY(%(buckets)s::smallint[])
    ORDER BY num_tries, relevance DESC, priority, bytehash
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), batch AS (
    -- the retried CTE is read only when the untried URLs run short of the LIMIT (with a
    -- bound per site: and none is left past those seen)
    SELECT ARRAY(
        SELECT oid FROM untried
        UNION ALL
        SELECT oid FROM untried_per_site
        UNION ALL
        SELECT oid FROM retried
        WHERE %(per_site)s >= %(batch)s OR (SELECT count(*) FROM seen) < %(scan)s
        LIMIT %(batch)s
    ) AS oids
), claimed AS (
    UPDATE doc AS d
    SET state = 1
    FROM site AS s
    WHERE d.oid = ANY((SELECT oids FROM batch)::bigint[]) AND d.bucket = ANY(%(buckets)s::smallint[])
      AND s.sid = d.sid AND s.bucket = d.bucket AND s.bucket = ANY(%(buckets)s::smallint[])
    RETURNING d.oid, d.bucket, d.sid, d.num_tries, d.depth, doc_url(d.https, s.host, d.path) AS url
)
SELECT c.oid, c.url, c.sid, c.num_tries, c.depth
FROM claimed AS c, batch
ORDER BY array_position(batch.oids, c.oid);

-- frontier_top --
-- On a Citus cluster, the global top of the untried frontier in claim_batch's order,
-- read with no lock (each shard reads its own doc_frontier, the coordinator merges):
-- how many of the next %(batch)s URLs each shard holds, for claim_batch to claim there.
SELECT oid
FROM doc
WHERE state = 0 AND num_tries = 0 AND sid <> ALL(%(full_sites)s::int[])
ORDER BY relevance DESC, priority, bytehash
LIMIT %(batch)s;

-- claim_batch_unfocused --
-- The unfocused crawl: the paper's pseudo-random order, off doc_frontier_unfocused.
WITH batch AS (
    SELECT oid, bucket
    FROM doc
    WHERE state = 0 AND sid <> ALL(%(full_sites)s::int[])
      AND bucket = ANY(%(buckets)s::smallint[])
    ORDER BY num_tries, bytehash
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE doc AS d
    SET state = 1
    FROM batch, site AS s
    WHERE d.oid = batch.oid AND d.bucket = batch.bucket AND d.bucket = ANY(%(buckets)s::smallint[])
      AND s.sid = d.sid AND s.bucket = d.bucket AND s.bucket = ANY(%(buckets)s::smallint[])
    RETURNING d.oid, d.bucket, d.sid, d.num_tries, d.depth, doc_url(d.https, s.host, d.path) AS url
)
SELECT c.oid, c.url, c.sid, c.num_tries, c.depth
FROM claimed AS c;

-- claim_batch_bfs --
-- Breadth-first: shallowest first, then in order of discovery, off doc_frontier_bfs.
WITH batch AS (
    SELECT oid, bucket
    FROM doc
    WHERE state = 0 AND sid <> ALL(%(full_sites)s::int[])
      AND bucket = ANY(%(buckets)s::smallint[])
    ORDER BY num_tries, depth, found_seq
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE doc AS d
    SET state = 1
    FROM batch, site AS s
    WHERE d.oid = batch.oid AND d.bucket = batch.bucket AND d.bucket = ANY(%(buckets)s::smallint[])
      AND s.sid = d.sid AND s.bucket = d.bucket AND s.bucket = ANY(%(buckets)s::smallint[])
    RETURNING d.oid, d.bucket, d.sid, d.num_tries, d.depth, doc_url(d.https, s.host, d.path) AS url
)
SELECT c.oid, c.url, c.sid, c.num_tries, c.depth
FROM claimed AS c;

-- claim_revisits --
-- Maintenance: fetched pages due for a revisit, most relevant first (off doc_revisit),
-- then oldest; fetched again with If-None-Match and If-Modified-Since (the validators
-- the server gave) so an unchanged page costs a 304. (The join names no bucket: on one
-- server the planner would take an equality of buckets as a second, independent
-- condition and misjudge the join's size; on a Citus cluster both tables name the
-- buckets of one shard, so the statement runs on that shard, where oids suffice.)
WITH batch AS (
    SELECT d.oid, d.bucket, f.etag, f.last_modified
    FROM doc AS d JOIN doc_fetch AS f ON f.oid = d.oid
    WHERE d.state = 2 AND f.fetched_at < now() - make_interval(secs => %(min_age_seconds)s)
      AND d.bucket = ANY(%(buckets)s::smallint[]) AND f.bucket = ANY(%(buckets)s::smallint[])
    ORDER BY d.relevance DESC, f.fetched_at
    LIMIT %(batch)s
    FOR UPDATE OF d SKIP LOCKED
), claimed AS (
    UPDATE doc AS d
    SET state = 1
    FROM batch, site AS s
    WHERE d.oid = batch.oid AND d.bucket = batch.bucket AND d.bucket = ANY(%(buckets)s::smallint[])
      AND s.sid = d.sid AND s.bucket = d.bucket AND s.bucket = ANY(%(buckets)s::smallint[])
    RETURNING d.oid, d.bucket, d.sid, d.num_tries, d.depth, doc_url(d.https, s.host, d.path) AS url
)
SELECT c.oid, c.url, c.sid, c.num_tries, c.depth, b.etag, b.last_modified
FROM claimed AS c JOIN batch AS b ON b.oid = c.oid;

-- lease_claims --
-- The leases of URLs just claimed (%(oids)s, by any claim_* statement), written in the
-- claim's transaction: until the lease ends no other crawler takes them, and then
-- recover_expired_leases puts them back. (A statement of its own: Citus runs a claim on
-- one shard only when no INSERT is among its CTEs.)
INSERT INTO doc_lease (oid, bucket, until)
SELECT oid, oid_bucket(oid), now() + make_interval(secs => %(lease_seconds)s)
FROM unnest(%(oids)s::bigint[]) AS oid
ORDER BY oid
ON CONFLICT (oid, bucket) DO UPDATE SET until = EXCLUDED.until;

-- recover_expired_leases --
-- URLs whose crawler died: back where they came from (the frontier, or the fetched
-- pages for a revisit), counted as a try.
WITH expired AS (
    DELETE FROM doc_lease WHERE until < now() RETURNING oid, bucket
)
UPDATE doc AS d
SET state = CASE WHEN EXISTS (SELECT FROM doc_fetch AS f
                              WHERE f.oid = d.oid AND f.bucket = d.bucket
                                AND f.fetch_seq IS NOT NULL)
                 THEN 2 ELSE 0 END,
    num_tries = least(d.num_tries + 1, 32767)
FROM expired
WHERE d.oid = expired.oid AND d.bucket = expired.bucket AND d.state = 1;

-- release_claims --
-- URLs a crawler claimed but will not fetch (it is stopping, or their site is at its
-- cap): back untouched. The rows are locked in oid order first, as every statement that
-- updates many doc rows locks them, so that it cannot deadlock with the classifier.
WITH locked AS (
    SELECT oid, bucket FROM doc
    WHERE oid = ANY(%(oids)s::bigint[]) AND bucket = ANY(%(buckets)s::smallint[])
    ORDER BY oid FOR UPDATE
), released AS (
    DELETE FROM doc_lease
    WHERE bucket = ANY(%(buckets)s::smallint[]) AND (oid, bucket) IN (SELECT oid, bucket FROM locked)
    RETURNING oid, bucket
)
UPDATE doc AS d
SET state = CASE WHEN EXISTS (SELECT FROM doc_fetch AS f
                              WHERE f.oid = d.oid AND f.bucket = d.bucket
                                AND f.fetch_seq IS NOT NULL)
                 THEN 2 ELSE 0 END
FROM released
WHERE d.oid = released.oid AND d.bucket = released.bucket AND d.bucket = ANY(%(buckets)s::smallint[])
  AND d.state = 1;

-- seed_states --
-- The state of each of the URLs %(oids)s that are in the crawl: why a seed was not added.
SELECT oid, state FROM doc WHERE oid = ANY(%(oids)s::bigint[]);

-- retry_failed --
-- URLs that failed for good (state 3), or only those whose last error is %(error)s, back
-- into the frontier with their tries reset: after the network, the proxy or the site was
-- mended. Locked in oid order first, as every statement that updates many doc rows.
WITH locked AS (
    SELECT d.oid, d.bucket FROM doc AS d
    WHERE d.state = 3
      AND (%(error)s::text IS NULL OR EXISTS (
            SELECT FROM doc_fetch AS f
            WHERE f.oid = d.oid AND f.bucket = d.bucket AND f.error = %(error)s::text))
    ORDER BY d.oid FOR UPDATE
)
UPDATE doc AS d SET state = 0, num_tries = 0
FROM locked
WHERE d.oid = locked.oid AND d.bucket = locked.bucket
RETURNING d.oid;

-- frontier_size --
SELECT count(*) FROM doc WHERE state = 0;

-- classifiers_running --
-- How many classifiers run on this database now: a running `classify run` names its
-- listening connection "focuscrawl-classifier PID" (focuscrawl.classifier.process).
SELECT count(*)
FROM pg_stat_activity
WHERE application_name LIKE 'focuscrawl-classifier %%' AND datname = current_database();

-- classifier_lag --
-- Fetched pages the classifier has not scored yet, counted up to %(cap)s (off the
-- doc_fetch_unscored index): a crawler given --max-backlog waits while this is high.
SELECT count(*) AS lag FROM (
    SELECT 1 FROM doc_fetch WHERE fetch_seq IS NOT NULL AND model_id IS NULL LIMIT %(cap)s
) AS unscored;
