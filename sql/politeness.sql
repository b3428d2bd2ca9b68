-- Per-host politeness shared by every crawler process: a lease on the site row
-- means "one process asks this host now", next_fetch_at the earliest next request.
-- A site is named by its key (sid, bucket): its bucket is its URLs' oids' top byte.

-- acquire_site --
-- Take the host if nobody has it and its delay has passed. Returns one row: acquired,
-- and when not, the time it is worth asking again; with robots.txt state when acquired.
-- The crawler keeps the lease between its requests to the host (crawler.leases) and
-- gives it back with release_sites.
WITH got AS (
    UPDATE site
    SET lease_until = now() + make_interval(secs => %(lease_seconds)s)
    WHERE sid = %(sid)s AND bucket = %(bucket)s
      AND (lease_until IS NULL OR lease_until < now())
      AND next_fetch_at <= now()
    RETURNING robots_txt, robots_status, crawl_delay, pages_taken, robots_expires_at
)
SELECT true AS acquired, robots_txt, robots_status, crawl_delay, pages_taken,
       coalesce(robots_expires_at < now(), true) AS robots_stale, 0.0::float8 AS wait_seconds
FROM got
UNION ALL
SELECT false, NULL, NULL, NULL, NULL, NULL,
       -- leased elsewhere: ask again shortly (the lease is a crash guard, not a duration)
       greatest(extract(epoch FROM greatest(next_fetch_at, now()) - now()),
                CASE WHEN lease_until > now() THEN 0.1 ELSE 0.01 END)::float8
FROM site
WHERE sid = %(sid)s AND bucket = %(bucket)s AND NOT EXISTS (SELECT 1 FROM got);

-- acquire_sites --
-- The hosts of a claim's URLs that this crawler holds nothing of yet, taken together as
-- the claim comes (crawler.claims), each as acquire_site takes one: a host (sids, with
-- site_buckets) nobody has and whose delay has passed. Returns the hosts taken, each
-- with acquire_site's row; a host not taken (leased elsewhere, its delay running, or its
-- row locked by another crawler's acquire) is asked for with acquire_site when its URL's
-- turn comes. SKIP LOCKED: two crawlers taking hosts at once never wait for each other.
-- On a Citus cluster the hosts of one shard, whose buckets are the buckets given (and
-- now() is read outside the UPDATE's RETURNING, which Citus allows only immutable
-- functions).
WITH free AS (
    SELECT s.sid, s.bucket
    FROM site AS s
    JOIN unnest(%(sids)s::int[], %(site_buckets)s::smallint[]) AS r(sid, bucket)
      ON s.sid = r.sid AND s.bucket = r.bucket
    WHERE s.bucket = ANY(%(buckets)s::smallint[])
      AND (s.lease_until IS NULL OR s.lease_until < now())
      AND s.next_fetch_at <= now()
    FOR UPDATE OF s SKIP LOCKED
), got AS (
    UPDATE site AS s
    SET lease_until = now() + make_interval(secs => %(lease_seconds)s)
    FROM free
    WHERE s.bucket = ANY(%(buckets)s::smallint[]) AND s.sid = free.sid
      AND s.bucket = free.bucket
    RETURNING s.sid, s.robots_txt, s.robots_status, s.crawl_delay, s.pages_taken,
              s.robots_expires_at
)
SELECT sid, true AS acquired, robots_txt, robots_status, crawl_delay, pages_taken,
       coalesce(robots_expires_at < now(), true) AS robots_stale, 0.0::float8 AS wait_seconds
FROM got;

-- other_crawlers --
-- How many connections of other crawler processes there are now (a crawler names its
-- connections "focuscrawl-crawler PID-N"; %(me)s is this one's name).
SELECT count(*)
FROM pg_stat_activity
WHERE application_name LIKE 'focuscrawl-crawler %%' AND application_name <> %(me)s;

-- free_dead_leases --
-- With no other crawler connected, every lease still held is a dead crawler's: free
-- them all, each host's next request not before its delay from now (%(delay)s, or its
-- Crawl-delay up to %(cap)s), as the dead crawler may have just asked it. Returns the
-- hosts freed. (The time is summed in epoch seconds, as in release_sites.)
UPDATE site
SET lease_until = NULL,
    next_fetch_at = greatest(
        next_fetch_at,
        to_timestamp(extract(epoch FROM now())::float8
                     + greatest(%(delay)s, least(coalesce(crawl_delay, 0), %(cap)s))))
WHERE lease_until > now()
RETURNING sid;

-- release_sites --
-- Hosts a crawler is done with, in one statement: each host (sids, with site_buckets)
-- free, the requests made under its lease (taken) added to its count, and its next
-- request not before waits seconds from now (what remains of its delay). On a Citus
-- cluster the hosts of one shard, whose buckets are the buckets given. (The time is
-- summed in epoch seconds: Citus refuses now() plus an interval of a column, a STABLE
-- operator over a column, in an UPDATE.)
UPDATE site AS s
SET lease_until = NULL,
    next_fetch_at = to_timestamp(extract(epoch FROM now())::float8 + r.wait),
    pages_taken = s.pages_taken + r.taken
FROM unnest(%(sids)s::int[], %(site_buckets)s::smallint[], %(waits)s::float8[],
            %(taken)s::int[]) AS r(sid, bucket, wait, taken)
WHERE s.bucket = ANY(%(buckets)s::smallint[]) AND s.sid = r.sid AND s.bucket = r.bucket;

-- store_robots --
UPDATE site
SET robots_status = %(status)s, robots_txt = %(robots_txt)s, crawl_delay = %(crawl_delay)s,
    robots_expires_at = now() + make_interval(secs => %(ttl_seconds)s)
WHERE sid = %(sid)s AND bucket = %(bucket)s;
