-- What `focuscrawl report` reads. Each runs in psql as it is. Relevance is shown as
-- R = exp(log R), floored as in sql/monitor/.

-- report_sizes --
-- Links and sites; the page counts come from monitor/dashboard, as in the live view.
SELECT (SELECT count(*) FROM link) AS links, (SELECT count(*) FROM site) AS sites;

-- report_relevance_by_fetch --
-- The classifier's R of every scored page, in fetch order (the paper's figures 4-6).
SELECT exp(greatest(d.relevance, -700)) AS r
FROM doc AS d JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
WHERE d.state = 2 AND f.model_id IS NOT NULL AND f.cid IS NOT NULL
ORDER BY f.fetch_seq;

-- report_relevance_histogram --
-- How many fetched pages fall in each tenth of R, and each decade of R below 0.1
-- (the paper's figure 7 is on a log scale).
SELECT CASE WHEN relevance >= ln(0.1)
            THEN '>= ' || (least(floor(exp(relevance) * 10), 9) / 10)::text
            ELSE '< 1e' || greatest(floor(relevance / ln(10)), -12)::int + 1 END AS bucket,
       min(relevance) AS low, count(*) AS pages
FROM doc AS d JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
WHERE d.state = 2 AND f.model_id IS NOT NULL AND f.cid IS NOT NULL
GROUP BY 1 ORDER BY low;
