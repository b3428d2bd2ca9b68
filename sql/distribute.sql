-- The crawl on a Citus cluster (focuscrawl db distribute; docs/scale-out.md): the
-- per-page tables distributed by bucket and colocated, the rest copied to every node.

-- citus_installed --
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') AS installed;

-- migrate_sequentially --
-- A migration on a Citus cluster uses one connection a worker throughout: Citus refuses
-- to propagate a changed function after a parallel operation on a distributed table in
-- the same transaction, and a migration from several revisions back may do both.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- citus_nodes --
-- Every worker of the cluster and whether the coordinator reaches it now (db status;
-- run only where citus_installed is true).
SELECT nodename, nodeport, isactive,
       citus_check_connection_to_node(nodename, nodeport) AS reachable
FROM pg_dist_node
WHERE noderole = 'primary' AND groupid <> 0
ORDER BY nodeid;

-- citus_doc_distributed --
-- Whether doc is distributed by hash (run only where citus_installed is true).
SELECT EXISTS (
    SELECT FROM pg_dist_partition WHERE logicalrelid = 'doc'::regclass AND partmethod = 'h'
) AS distributed;

-- citus_tables --
-- What Citus holds already: each table's kind ('h' hash-distributed, 'n' reference or
-- local to the coordinator) and whether it is a reference table.
SELECT logicalrelid::regclass::text AS name, partmethod AS method, repmodel = 't' AS reference
FROM pg_dist_partition;

-- statement_triggers --
-- The triggers of the tables to distribute: migration 0009's and 0012's checks and
-- cascades, run once per statement, which Citus does not run on distributed tables.
SELECT t.tgname AS name, t.tgrelid::regclass::text AS table_name
FROM pg_trigger AS t
WHERE NOT t.tgisinternal AND t.tgrelid::regclass::text = ANY(%(tables)s::text[])
ORDER BY 2, 1;

-- distribute_function --
-- A function the statements call, created on every worker (a routed statement calls it
-- there).
SELECT create_distributed_function(%(signature)s);

-- distributed_function --
SELECT EXISTS (
    SELECT FROM pg_dist_object WHERE objid = %(signature)s::regprocedure
) AS distributed;

-- create_reference_table --
SELECT create_reference_table(%(table)s);

-- create_first_distributed_table --
-- site, the table the others are colocated with, in %(shards)s shards.
SELECT create_distributed_table('site', 'bucket', shard_count => %(shards)s);

-- create_colocated_table --
SELECT create_distributed_table(%(table)s, 'bucket', colocate_with => 'site');

-- bucket_shards --
-- Each bucket's shard of doc (and of every colocated table): focuscrawl.shards groups
-- the buckets of one shard, the most a statement with FOR UPDATE may name.
SELECT b AS bucket, get_shard_id_for_distribution_column('doc', b::smallint) AS shard
FROM generate_series(0, 255) AS b;

-- allow_parallel_writers --
-- Citus lets one multi-shard write at a time hold a shard (a SHARE UPDATE EXCLUSIVE
-- lock on it until the transaction ends, citus.enable_deadlock_prevention), so that
-- statements writing the same rows of several shards in parallel cannot deadlock. A
-- store's transaction writes several shards in several statements, each taking its
-- shards' locks in its own order: two stores then wait on each other's shard locks
-- (measured: 1,530 transactions rolled back in a 20,000-page crawl). The crawl orders
-- its row locks itself instead: the statements that write rows other transactions
-- write too (the frontier's check-in and estimates, claims) run shard by shard in shard
-- order, and the rest write only rows of pages their transaction has locked. So the
-- database's sessions take the lighter lock, which does not conflict with itself.
-- And an INSERT ... SELECT whose rows Citus must move between shards (the store's
-- links, keyed by their source page, joined to their target's site) goes through the
-- coordinator rather than through intermediate results on every worker: for a batch's
-- few hundred rows 12 ms instead of 29 (measured 2026-11-26, 852 links).
DO $$
BEGIN
    EXECUTE 'ALTER DATABASE ' || quote_ident(current_database())
         || ' SET citus.enable_deadlock_prevention = off';
    EXECUTE 'ALTER DATABASE ' || quote_ident(current_database())
         || ' SET citus.enable_repartitioned_insert_select = off';
END
$$;

-- shard_count --
SELECT count(*) AS shards FROM pg_dist_shard WHERE logicalrelid = 'doc'::regclass;
