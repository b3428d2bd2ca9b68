-- Wake-ups between the programs (focuscrawl/notify.py). A notification is sent in the
-- transaction that writes, so it arrives when the rows are visible, and carries no
-- data: the reader looks at its table. Several in one transaction arrive as one.

-- notify_pages_stored --
-- A crawler's store committed fetched pages: a classifier has pages to score.
SELECT pg_notify('focuscrawl_pages_stored', '');

-- notify_pages_scored --
-- A classifier scored pages and passed their estimates on: a crawler waiting for the
-- classifier (--max-backlog, lockstep rounds) may claim again.
SELECT pg_notify('focuscrawl_pages_scored', '');
