-- Monitoring: each statement runs as it is in psql, and by
-- `focuscrawl monitor query NAME`. Relevance is shown as a probability, R = exp(log R)
-- (log R floored at -700 because PostgreSQL's exp() reports underflow as an error).

-- stagnation --
-- The paper's num_tries histogram of unvisited URLs: a frontier whose mass moves to
-- high num_tries is retrying failures instead of finding new pages.
SELECT num_tries, count(*) AS urls,
       round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS percent
FROM doc WHERE state IN (0, 1)
GROUP BY num_tries ORDER BY num_tries;

-- diffusion --
-- Moving averages of relevance over the last 100 and 1,000 fetches, by fetch order, and
-- their trend: the 100-average now against 1,000 fetches ago. A falling average that
-- does not recover means the crawl is diffusing away from the topic.
WITH scored AS (
    SELECT f.fetch_seq, exp(greatest(d.relevance, -700)) AS r
    FROM doc AS d JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
    WHERE d.state = 2 AND f.model_id IS NOT NULL AND f.cid IS NOT NULL
), ordered AS (
    SELECT fetch_seq, r,
           avg(r) OVER (ORDER BY fetch_seq ROWS 99 PRECEDING) AS avg_100,
           avg(r) OVER (ORDER BY fetch_seq ROWS 999 PRECEDING) AS avg_1000,
           row_number() OVER (ORDER BY fetch_seq DESC) AS back
    FROM scored
)
SELECT count(*) AS pages,
       round(max(avg_100) FILTER (WHERE back = 1)::numeric, 4) AS avg_last_100,
       round(max(avg_1000) FILTER (WHERE back = 1)::numeric, 4) AS avg_last_1000,
       round((max(avg_100) FILTER (WHERE back = 1)
              - max(avg_100) FILTER (WHERE back = 1001))::numeric, 4) AS trend_100_over_1000
FROM ordered;

-- census --
-- Fetched pages by best leaf category, with names (taxonomy_paths(), migration 0017)
-- and how relevant they are.
SELECT coalesce(path.name, '(unscored)') AS category, count(*) AS pages,
       round(avg(exp(greatest(d.relevance, -700)))::numeric, 3) AS mean_relevance
FROM doc AS d
JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
LEFT JOIN taxonomy_paths() AS path ON path.kcid = f.cid
WHERE d.state = 2
GROUP BY 1 ORDER BY pages DESC, category;

-- site_rating --
-- Sites ordered by the density and quality of relevant pages: the share of a site's
-- fetched pages with R > 0.5, times their mean R (sites with at least 3 fetched pages).
SELECT s.host, count(*) AS fetched,
       count(*) FILTER (WHERE d.relevance > ln(0.5)) AS relevant,
       round(avg(exp(greatest(d.relevance, -700)))::numeric, 3) AS mean_relevance,
       round((count(*) FILTER (WHERE d.relevance > ln(0.5))::numeric / count(*))
             * avg(exp(greatest(d.relevance, -700)))::numeric, 3) AS rating
FROM doc AS d JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
WHERE d.state = 2 AND f.model_id IS NOT NULL
GROUP BY s.host HAVING count(*) >= 3
ORDER BY rating DESC, fetched DESC, s.host;

-- frontier --
-- Documents by state: the frontier's size and what became of the rest.
SELECT state, CASE state WHEN 0 THEN 'frontier' WHEN 1 THEN 'leased' WHEN 2 THEN 'fetched'
                         WHEN 3 THEN 'failed' WHEN 4 THEN 'held' WHEN 5 THEN 'excluded' END
       AS name,
       count(*) AS docs
FROM doc GROUP BY state ORDER BY state;

-- fetch_rate --
-- Pages fetched per minute over the last hour.
SELECT date_trunc('minute', fetched_at) AS minute, count(*) AS pages
FROM doc_fetch WHERE fetched_at > now() - interval '1 hour'
GROUP BY 1 ORDER BY 1;

-- errors --
-- Failures by HTTP status and error class.
SELECT http_status, error, count(*) AS docs
FROM doc_fetch WHERE error IS NOT NULL
GROUP BY http_status, error ORDER BY docs DESC, error;

-- neglected --
-- The paper's neglected neighbours of the best pages: unvisited URLs linked from the
-- 25 most relevant fetched pages, with how many of those point at them.
-- (Their links are counted first, as an intermediate result: on a Citus cluster a
-- link's target lies in another shard.)
WITH best AS (
    SELECT oid, bucket FROM doc WHERE state = 2 ORDER BY relevance DESC, bytehash, oid LIMIT 25
), targets AS MATERIALIZED (
    SELECT l.oid_dst, count(*) AS linked
    FROM link AS l JOIN best ON l.oid_src = best.oid AND l.bucket = best.bucket
    GROUP BY l.oid_dst
)
SELECT doc_url(d.https, s.host, d.path) AS url, t.linked AS linked_from_best,
       exp(greatest(d.relevance, -700)) AS estimate
FROM targets AS t
JOIN doc AS d ON d.oid = t.oid_dst AND d.bucket = oid_bucket(t.oid_dst)
JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
WHERE d.state IN (0, 4)
ORDER BY linked_from_best DESC, url LIMIT 50;

-- dashboard --
-- The live view's numbers in one row: totals, the classifier's backlog, the sum of R
-- over scored pages (its growth is the acquisition rate of relevant pages) and the
-- moving averages of R over the last 100 and 1,000 scored fetches.
WITH recent AS (
    SELECT exp(greatest(relevance, -700)) AS r, row_number() OVER (ORDER BY fetch_seq DESC) AS back
    FROM (SELECT d.relevance, f.fetch_seq
          FROM doc AS d JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
          WHERE d.state = 2 AND f.model_id IS NOT NULL AND f.cid IS NOT NULL
          ORDER BY f.fetch_seq DESC LIMIT 1000) AS last
), averages AS (
    SELECT avg(r) FILTER (WHERE back <= 100) AS avg_100, avg(r) AS avg_1000 FROM recent
), tried AS (
    -- what the tries found: only the URLs tried have a doc_fetch row
    SELECT count(*) FILTER (WHERE d.state = 2 AND f.model_id IS NULL) AS unscored,
           count(*) FILTER (WHERE f.error IS NOT NULL) AS errors,
           coalesce(sum(exp(greatest(d.relevance, -700)))
                    FILTER (WHERE d.state = 2 AND f.model_id IS NOT NULL
                                  AND f.cid IS NOT NULL), 0) AS relevance_sum
    FROM doc_fetch AS f JOIN doc AS d ON d.oid = f.oid AND d.bucket = f.bucket
), totals AS (
    SELECT count(*) FILTER (WHERE state = 2) AS fetched,
           count(*) FILTER (WHERE state = 3) AS failed,
           count(*) FILTER (WHERE state IN (0, 1, 4)) AS frontier
    FROM doc
)
-- (one row of the parts, each counted on its own: Citus runs no subquery in the
-- select list of a query over a distributed table)
SELECT totals.fetched, totals.failed, totals.frontier, tried.unscored, tried.errors,
       tried.relevance_sum, averages.avg_100, averages.avg_1000
FROM totals, tried, averages;

-- next_urls --
-- The next 25 untried frontier URLs in the focused claim order (relevance desc, priority,
-- bytehash, off the doc_frontier index): what the crawlers fetch next, with the estimate
-- R and the depth of each.
SELECT doc_url(d.https, s.host, d.path) AS url, exp(greatest(d.relevance, -700)) AS estimate,
       d.depth
FROM (SELECT oid, bucket, https, path, sid, relevance, priority, bytehash, depth
      FROM doc WHERE state = 0 AND num_tries = 0
      ORDER BY relevance DESC, priority, bytehash LIMIT 25) AS d
JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
ORDER BY d.relevance DESC, d.priority, d.bytehash;
