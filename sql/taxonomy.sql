-- The topic tree and its training examples.

-- taxonomy_nodes --
-- The whole tree (it is small: a few hundred nodes).
SELECT kcid, pcid, kcname, good FROM taxonomy ORDER BY kcid;

-- taxonomy_version --
-- The whole tree and its good marks as one md5 of their JSON: a process that reads the
-- tree for every batch reads it again only when this changed.
SELECT md5(coalesce(json_agg(json_build_array(kcid, pcid, kcname, good) ORDER BY kcid)::text, ''))
FROM taxonomy;

-- set_good --
-- Mark (good = 1) or unmark (good = 0) categories; descendants inherit the mark.
UPDATE taxonomy SET good = %(good)s WHERE kcid = ANY(%(kcids)s::smallint[]);

-- good_categories --
-- The names of the categories marked good (their descendants inherit the mark): the
-- crawl's topic. A focused crawl with none has no topic.
SELECT kcname FROM taxonomy WHERE good = 1 ORDER BY kcname;

-- taxonomy_size --
SELECT (SELECT count(*) FROM taxonomy) AS categories, (SELECT count(*) FROM example) AS examples;

-- clear_taxonomy --
-- Before importing a new tree (in the same transaction): examples go with it.
DELETE FROM example;
DELETE FROM taxonomy;

-- insert_nodes --
INSERT INTO taxonomy (kcid, pcid, kcname, good)
SELECT * FROM unnest(%(kcids)s::smallint[], %(pcids)s::smallint[], %(names)s::text[],
                     %(goods)s::smallint[]);

-- insert_examples --
-- A document with several categories is one row per category.
-- Returns the new eids, in the order given.
INSERT INTO example (kcid, url, title, text)
SELECT kcid, url, title, text
FROM unnest(%(kcids)s::smallint[], %(urls)s::text[], %(titles)s::text[], %(texts)s::text[])
     WITH ORDINALITY AS e(kcid, url, title, text, n)
ORDER BY n
RETURNING eid;

-- example_counts --
-- Examples labelled with each category itself (not counting its descendants).
SELECT kcid, count(*) AS examples FROM example GROUP BY kcid;

-- training_examples --
-- Every example with its category; one document may appear under several. The text
-- classified is the title, a newline, then the body text (as for crawled pages).
SELECT eid, kcid, url, coalesce(title, '') || E'\n' || text AS text FROM example ORDER BY eid;

-- example_urls --
-- URLs used for training: the evaluation leaves them out.
SELECT DISTINCT url FROM example WHERE url IS NOT NULL;
