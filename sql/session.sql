-- Settings of the sessions that crawl.

-- crawler_session --
-- Every crawler connection (watchdog, workers, store). A commit does not wait for the
-- disk: a crash of the server loses the last moments of work, which the leases bring
-- back.
SET synchronous_commit = off;
