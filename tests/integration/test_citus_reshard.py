"""Shards moved and split under a running crawl on a real Citus cluster.

Citus's rebalancer moves shards between nodes, and a shard can be split in two, while
the crawl runs. A move keeps each bucket in its shard, and statements follow it. A
split puts one group of buckets in two shards, and Citus refuses the statements the
crawler, its store and the classifier had grouped by the old layout: they read the
layout again and run again (``outages.layout_changed``). The crawl must end as it
would have: every page it was asked for fetched, stored and scored, no lease left.
Skipped with a one-line reason without ../shared/tools/citus-build; under CI=true it
must run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.citus_nodes import (
    PAGES,
    WEB,
    check_whole,
    cli_environment,
    fetched,
    fetched_once,
    focuscrawl,
    local_cluster,
    one_row,
    prepare_crawl,
    running_cluster,
    soft_crawl,
)

#: apart from the other Citus modules' nodes (the rebalance test's cluster: 9760-9763)
BASE_PORT = 9750
REBALANCE_PORT = 9760
SHARDS = 4


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_cluster(Path(tmp_path_factory.mktemp("citus_reshard")), BASE_PORT) as url:
        yield url


def _move_a_shard(url: str) -> None:
    """Move the first shard of doc (and its colocated shards) to the other worker, as
    the rebalancer does: by logical replication, writes going on ('auto' refuses a
    table logical replication cannot identify rows of, as ``link`` was before 0018)."""
    shard, source, port = one_row(
        url,
        "SELECT s.shardid, n.nodename, n.nodeport FROM pg_dist_shard AS s "
        "JOIN pg_dist_placement AS p USING (shardid) JOIN pg_dist_node AS n USING (groupid) "
        "WHERE s.logicalrelid = 'doc'::regclass ORDER BY s.shardid LIMIT 1",
    )
    target, target_port = one_row(
        url,
        "SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND nodeport <> %s",
        (port,),
    )
    one_row(
        url,
        "SELECT citus_move_shard_placement(%s, %s, %s, %s, %s, shard_transfer_mode := 'auto')",
        (shard, source, port, target, target_port),
    )


def _split_a_shard(url: str) -> None:
    """Split the last shard of doc (and its colocated shards) in two at its middle,
    holding writes to it meanwhile: a split by logical replication can hang for good
    under concurrent updates (Citus issue 6790, open in 12.1; seen here)."""
    shard, low, high, node = one_row(
        url,
        "SELECT s.shardid, s.shardminvalue::bigint, s.shardmaxvalue::bigint, n.nodeid "
        "FROM pg_dist_shard AS s JOIN pg_dist_placement AS p USING (shardid) "
        "JOIN pg_dist_node AS n USING (groupid) "
        "WHERE s.logicalrelid = 'doc'::regclass ORDER BY s.shardid DESC LIMIT 1",
    )
    middle = (int(low) + int(high)) // 2  # type: ignore[call-overload]
    one_row(
        url,
        "SELECT citus_split_shard_by_split_points(%s, ARRAY[%s], ARRAY[%s, %s], "
        "shard_transfer_mode := 'block_writes')",
        (shard, str(middle), node, node),
    )


def test_a_crawl_goes_on_whole_while_shards_move_and_split(cluster: str, tmp_path: Path) -> None:
    env = cli_environment(cluster, tmp_path / "home")
    prepare_crawl(env, tmp_path, SHARDS)
    with soft_crawl(env) as crawl:
        crawl.wait_for(cluster, 100)
        _move_a_shard(cluster)
        _split_a_shard(cluster)
        assert fetched(cluster) < PAGES, "the crawl ended before the shards changed: raise PAGES"
        crawl.check_running()
        logged = crawl.finish(cluster)
    focuscrawl(env, "classify", "run", "--once", "--quiet")

    # the split reached the crawl: a statement grouped by the old layout was refused,
    # and run again on the new one
    assert "event=layout_changed" in logged
    ((shards),) = one_row(
        cluster, "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'doc'::regclass"
    )
    assert shards == SHARDS + 1
    check_whole(cluster)


def test_a_worker_added_during_a_crawl_takes_its_shards_with_the_documented_rebalance(
    tmp_path: Path,
) -> None:
    """A worker joins a running crawl and ``citus_rebalance_start()`` (what the docs and
    Citus say to run) moves shards onto it, reference tables first, by logical
    replication while the crawl writes: no error, the crawl goes on after the moves and
    ends whole when stopped, nothing fetched twice. (The learner's queue, link_example,
    had no replica identity: refused.) The crawl is paced by a host delay (40 hosts, at
    most 40 pages a second) and stopped once the rebalance is done, so that it outlasts
    the moves however long a machine takes over them."""
    with running_cluster(tmp_path / "cluster", REBALANCE_PORT) as nodes:
        url = nodes.url()
        env = cli_environment(url, tmp_path / "home")
        prepare_crawl(env, tmp_path, SHARDS)
        new = nodes.start_worker()  # a machine made ready; it joins during the crawl
        log = tmp_path / "requests.log"
        paced = soft_crawl(env, idle_exit=60, log=log, pages=WEB.pages, host_delay=1.0)
        with paced as crawl:
            crawl.wait_for(url, 100)
            nodes.add_worker(new)
            one_row(url, "SELECT citus_rebalance_start()")
            one_row(url, "SELECT citus_rebalance_wait()")
            crawl.wait_for(url, fetched(url) + 50)  # the crawl goes on with shards moved
            crawl.stop()
            crawl.finish(url)
        focuscrawl(env, "classify", "run", "--once", "--quiet")
        (unfinished,) = one_row(
            url, "SELECT count(*) FROM pg_dist_background_task WHERE status <> 'done'"
        )
        assert unfinished == 0
        (on_new,) = one_row(
            url,
            "SELECT count(*) FROM pg_dist_placement AS p JOIN pg_dist_node AS n USING (groupid) "
            "JOIN pg_dist_shard AS s USING (shardid) "
            "WHERE n.nodeport = %s AND s.logicalrelid = 'doc'::regclass",
            (REBALANCE_PORT + 3,),
        )
        assert on_new >= 1  # the new worker holds shards of the crawl
        stored = fetched(url)
        assert fetched_once(log) == stored  # every page asked for was stored, once
        check_whole(url, stored)
