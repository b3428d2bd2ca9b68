-- Per-host politeness shared by every crawler process: a lease on the site row
-- means "a request to this host is in flight", next_fetch_at the earliest next one.
-- A site is named by its key (sid, bucket): its bucket is its URLs' oids' top byte.

-- acquire_site --
-- Take the host if nobody has it and its delay has passed. Returns one row: acquired,
-- and when not, the time it is worth asking again; with robots.txt state when acquired.
-- In the same statement, release the host the worker fetched from last (as
-- release_site does; %(release_sid)s NULL releases none): one round trip a page, not two.
WITH released AS (
    UPDATE site
    SET lease_until = NULL,
        next_fetch_at = now() + make_interval(secs => %(delay)s),
        pages_taken = pages_taken + %(taken)s
    WHERE sid = %(release_sid)s AND bucket = %(release_bucket)s
), got AS (
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

-- release_site --
-- The request is done: free the host, and keep it idle for %(delay)s seconds.
UPDATE site
SET lease_until = NULL,
    next_fetch_at = now() + make_interval(secs => %(delay)s),
    pages_taken = pages_taken + %(taken)s
WHERE sid = %(sid)s AND bucket = %(bucket)s;

-- store_robots --
UPDATE site
SET robots_status = %(status)s, robots_txt = %(robots_txt)s, crawl_delay = %(crawl_delay)s,
    robots_expires_at = now() + make_interval(secs => %(ttl_seconds)s)
WHERE sid = %(sid)s AND bucket = %(bucket)s;
