"""A local Citus cluster (focuscrawl.cluster): a coordinator and two workers start from
citus-build's PostgreSQL, and the fact the distributed layout is designed around holds:
Citus refuses today's claim (FOR UPDATE with no equality on the distribution column)
and runs a claim inside one bucket. Skipped with a one-line reason when
../shared/tools/citus-build is absent; under CI=true it must run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from focuscrawl.cluster import CITUS_BUILD, LocalCluster, citus_bin_dir


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not CITUS_BUILD.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no {CITUS_BUILD} to build Citus with")
        pytest.skip(f"no {CITUS_BUILD}: the Citus tests need it")
    local = LocalCluster(Path(tmp_path_factory.mktemp("cluster")), citus_bin_dir())
    try:
        yield local.up()
    finally:
        local.down()


def test_a_claim_runs_inside_a_bucket_and_not_across_the_frontier(cluster: str) -> None:
    connection = psycopg2.connect(cluster)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_dist_node WHERE noderole = 'primary'")
            assert cursor.fetchone() == (3,)  # the coordinator and two workers
            cursor.execute(
                "CREATE TABLE frontier (bucket smallint, oid bigint, relevance float8, "
                "state smallint DEFAULT 0, PRIMARY KEY (bucket, oid))"
            )
            cursor.execute("SELECT create_distributed_table('frontier', 'bucket')")
            cursor.execute(
                "INSERT INTO frontier (bucket, oid, relevance) "
                "SELECT g % 256, g, -g FROM generate_series(1, 5000) AS g"
            )
            connection.commit()
            with pytest.raises(psycopg2.Error, match="could not run distributed query"):
                cursor.execute(
                    "SELECT oid FROM frontier WHERE state = 0 ORDER BY relevance DESC "
                    "LIMIT 4 FOR UPDATE SKIP LOCKED"
                )
            connection.rollback()
            cursor.execute(
                "WITH c AS (SELECT oid FROM frontier WHERE bucket = 7 AND state = 0 "
                "ORDER BY relevance DESC LIMIT 4 FOR UPDATE SKIP LOCKED) "
                "UPDATE frontier SET state = 1 WHERE bucket = 7 AND oid IN (SELECT oid FROM c) "
                "RETURNING oid"
            )
            assert sorted(r[0] for r in cursor.fetchall()) == [7, 263, 519, 775]
            # the global top, read with no lock, is every shard's own top merged
            cursor.execute(
                "SELECT oid FROM frontier WHERE state = 0 ORDER BY relevance DESC LIMIT 3"
            )
            assert [r[0] for r in cursor.fetchall()] == [1, 2, 3]
        connection.commit()
    finally:
        connection.close()
