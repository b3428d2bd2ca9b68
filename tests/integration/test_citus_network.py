"""A Citus cluster of three "machines" (network namespaces the test makes, on a bridge of
its own) over TCP with TLS and passwords, as docs/how-to/several-machines.md sets up real
ones: a soft crawl with the classifier runs on it from this machine and ends whole; the
coordinator reaches its workers over the network by TLS, a wrong password is refused, and
so is a connection without TLS. Skipped without apt (Debian's PostgreSQL 15, which
scripts/citus-build-ssl builds Citus against) or the rights to make namespaces; under
CI=true it must run."""

from __future__ import annotations

from pathlib import Path

import psycopg2
import pytest

from tests.integration.citus_network import PASSWORD, network_cluster, network_or_skip
from tests.integration.citus_nodes import (
    check_whole,
    cli_environment,
    one_row,
    prepare_crawl,
    soft_crawl,
)
from tests.integration.debian_postgresql import debian_bin_or_skip

PAGES = 200
SHARDS = 4


def test_a_crawl_on_three_machines_over_tcp_with_tls_and_passwords(tmp_path: Path) -> None:
    network_or_skip()
    bin_dir = debian_bin_or_skip()
    with network_cluster(tmp_path / "nodes", bin_dir) as cluster:
        url = cluster.url()
        with pytest.raises(psycopg2.OperationalError, match="password authentication failed"):
            psycopg2.connect(cluster.url(password=PASSWORD + "x")).close()
        with pytest.raises(psycopg2.OperationalError, match="no encryption"):
            psycopg2.connect(cluster.url(sslmode="disable")).close()
        nodes = one_row(url, "SELECT array_agg(nodename ORDER BY nodeid) FROM pg_dist_node")
        assert nodes == ([host.address for host in cluster.hosts],)

        env = cli_environment(url, tmp_path / "home")
        prepare_crawl(env, tmp_path, SHARDS)
        with soft_crawl(env, crawlers=1, pages=PAGES) as crawl:
            crawl.finish(url)
        check_whole(url, PAGES)
        # the crawl's statements ran on the workers' shards, which the coordinator
        # reached over the network with TLS and the password
        coordinator = cluster.hosts[0].address
        for n in (1, 2):
            worker = cluster.url(n)
            held, encrypted = one_row(
                worker,
                "SELECT count(*), count(*) FILTER (WHERE s.ssl) FROM pg_stat_activity AS a "
                f"JOIN pg_stat_ssl AS s USING (pid) WHERE a.client_addr = '{coordinator}'",
            )
            assert held >= 1, held  # the coordinator's connection, kept between statements
            assert encrypted == held, (encrypted, held)
        # a worker copies a shard to another (as a rebalance does) over the network
        shard, source = one_row(
            url,
            "SELECT s.shardid, p.nodename FROM pg_dist_shard AS s "
            "JOIN pg_dist_placement AS pl USING (shardid) JOIN pg_dist_node AS p USING (groupid) "
            f"WHERE s.logicalrelid = 'doc'::regclass AND p.nodename <> '{coordinator}' LIMIT 1",
        )
        target = next(h.address for h in cluster.hosts[1:] if h.address != source)
        one_row(
            url,
            f"SELECT citus_move_shard_placement({shard}, '{source}', 5432, '{target}', 5432, "
            "shard_transfer_mode := 'block_writes')",
        )
        check_whole(url, PAGES)
