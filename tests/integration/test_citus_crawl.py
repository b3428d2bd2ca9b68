"""The crawl on a real Citus cluster (issue 26): ``db distribute`` lays the schema out
on a coordinator and two workers, then the crawler (two processes at once, soft
focus), the classifier beside them, the distiller, the monitoring queries and the
report run there as a user runs them, from the command line, against the hand-made
topic web. Skipped with a one-line reason without ../shared/tools/citus-build; under
CI=true it must run."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from focuscrawl.crawler.claims import claim_params
from focuscrawl.db.queries import queries
from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import page_url, write_corpus, write_tree_dir
from tests.integration.citus_nodes import cli_environment, focuscrawl, local_cluster

#: apart from test_citus_cluster's nodes
BASE_PORT = 9710
SHARDS = 8


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_cluster(Path(tmp_path_factory.mktemp("citus_crawl")), BASE_PORT) as url:
        yield url


def _rows(url: str, statement: str) -> list[tuple[object, ...]]:
    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement)
            return cursor.fetchall()
    finally:
        connection.close()


def _plan(url: str, statement: str, params: dict[str, object]) -> str:
    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + statement, params)
            return "\n".join(row[0] for row in cursor.fetchall())
    finally:
        connection.rollback()
        connection.close()


def _crawl(env: dict[str, str], proxy: str, mode: str, pages: int) -> subprocess.Popen[str]:
    crawl = [sys.executable, "-m", "focuscrawl", "crawl", "run", "--mode", mode]
    crawl += ["--proxy", proxy, "--host-delay", "0", "--max-pages", str(pages), "--quiet"]
    return subprocess.Popen(
        [*crawl, "--idle-exit", "3"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_focused_crawl_with_the_classifier_distiller_and_report_on_citus(
    cluster: str, tmp_path: Path
) -> None:
    env = cli_environment(cluster, tmp_path / "home")
    focuscrawl(env, "db", "upgrade")
    laid_out = focuscrawl(env, "db", "distribute", "--shards", str(SHARDS))
    assert "distributed by bucket: site, doc, doc_fetch, doc_text, doc_class" in laid_out
    assert f"{SHARDS} shards of doc" in laid_out
    again = focuscrawl(env, "db", "distribute")  # idempotent: nothing left to do
    assert "distributed by bucket" not in again and f"{SHARDS} shards of doc" in again
    kinds = dict(
        _rows(cluster, "SELECT logicalrelid::regclass::text, partmethod FROM pg_dist_partition")
    )
    assert {kinds[t] for t in ("site", "doc", "doc_fetch", "link", "hits_score")} == {"h"}
    assert kinds["taxonomy"] == kinds["model"] == "n"

    focuscrawl(env, "taxonomy", "import", str(write_tree_dir(tmp_path / "tree")))
    focuscrawl(env, "taxonomy", "mark-good", "topics.sports")
    focuscrawl(env, "classify", "train")
    seeds = [page_url("topics.sports.cycling", 1), page_url("topics.sports.football", 1)]
    focuscrawl(env, "seed", "add", *seeds)
    web, proxy = start_server_process(tmp_path, str(write_corpus(tmp_path / "web")), "--no-faults")
    classifier = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl", "classify", "run", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        crawlers = [_crawl(env, proxy, "soft", 30) for _ in range(2)]
        for crawler in crawlers:
            _, errors = crawler.communicate(timeout=300)
            assert crawler.returncode == 0, errors[-2000:]
    finally:
        classifier.send_signal(signal.SIGINT)
        _, classifier_errors = classifier.communicate(timeout=60)
        web.send_signal(signal.SIGINT)
        web.communicate(timeout=10)
    assert classifier.returncode == 0, classifier_errors[-2000:]
    focuscrawl(env, "classify", "run", "--once", "--quiet")

    ((fetched, leased, unscored, relevant, shards),) = _rows(
        cluster,
        """
        SELECT count(*) FILTER (WHERE d.state = 2), count(*) FILTER (WHERE d.state = 1),
               count(*) FILTER (WHERE d.state = 2 AND f.model_id IS NULL),
               count(*) FILTER (WHERE d.state = 2 AND s.host LIKE 'sports.%%'),
               count(DISTINCT get_shard_id_for_distribution_column('doc', d.bucket))
                   FILTER (WHERE d.state = 2)
        FROM doc AS d
        JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
        LEFT JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
        """,
    )
    assert 30 <= fetched <= 60  # two crawlers of 30 pages, no URL claimed twice
    assert leased == 0 and unscored == 0  # every claim stored, every page scored
    assert relevant >= fetched / 2  # focused: most pages are of the good topic
    assert shards > 1  # the crawl's pages live in several shards
    ((mismatched,),) = _rows(
        cluster,
        "SELECT count(*) FROM doc AS d JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket "
        "WHERE d.bucket <> oid_bucket(d.oid) OR d.oid <> url_oid(doc_url(d.https, s.host, d.path))",
    )
    assert mismatched == 0  # oids and buckets as on one server

    # the frontier estimated again outright, shard by shard, as a version of the link
    # learner fitted afresh does it: by classify rescore, which fits one
    focuscrawl(env, "classify", "rescore")
    ((estimated,),) = _rows(
        cluster,
        "SELECT count(*) FROM doc WHERE state = 0 AND estimated_by = "
        "(SELECT max(model_id) FROM model WHERE kind = 'link')",
    )
    assert estimated > 0

    assert "cross-site edges" in focuscrawl(env, "distill", "run", "--share", "0.5")
    assert focuscrawl(env, "distill", "top", "--hubs", "-n", "3").strip()
    focuscrawl(env, "distill", "boost", "--hubs", "5")
    census = focuscrawl(env, "monitor", "query", "census")
    assert "topics.sports" in census
    focuscrawl(env, "monitor", "query", "dashboard")
    report = Path(focuscrawl(env, "report", "--out", str(tmp_path / "report")).strip())
    assert report.is_file() and "<svg" in report.read_text()

    # Sessions take Citus's lighter lock for multi-shard writes (the crawl orders its
    # row locks itself), and a claim is one statement routed to one shard: no subplan,
    # one task (with an INSERT among its CTEs Citus ran it as five, on every shard).
    assert _rows(cluster, "SHOW citus.enable_deadlock_prevention") == [("off",)]
    ((buckets,),) = _rows(
        cluster,
        "SELECT array_agg(b ORDER BY b) FROM generate_series(0, 255) AS b "
        "GROUP BY get_shard_id_for_distribution_column('doc', b::smallint) LIMIT 1",
    )
    # a focused crawl under a host delay: two URLs a site
    claim = claim_params(8, 60, per_site=2) | {"buckets": buckets}
    for name in ("claim_batch", "claim_revisits"):
        plan = _plan(cluster, queries[name], {**claim, "min_age_seconds": 1})
        assert "Subplan" not in plan and re.findall(r"Task Count: (\d+)", plan) == ["1"], plan

    # Leases a dead crawler left on the distributed site table: freed by the next
    # crawler to start alone (free_dead_leases, a multi-shard UPDATE).
    with psycopg2.connect(cluster) as connection, connection.cursor() as cursor:
        cursor.execute("UPDATE site SET lease_until = now() + interval '100 seconds'")
        assert cursor.rowcount > 1
    # Breadth-first: the crawl applies the baselines branch to the distributed doc.
    web, proxy = start_server_process(tmp_path, str(tmp_path / "web"), "--no-faults")
    try:
        bfs = _crawl(env, proxy, "bfs", 10)
        _, errors = bfs.communicate(timeout=300)
        assert bfs.returncode == 0, errors[-2000:]
    finally:
        web.send_signal(signal.SIGINT)
        web.communicate(timeout=10)
    assert _rows(cluster, "SELECT count(*) FROM site WHERE lease_until > now()") == [(0,)]
    ((fetched_after, numbered),) = _rows(
        cluster, "SELECT count(*) FILTER (WHERE state = 2), count(found_seq) FROM doc"
    )
    assert fetched_after > fetched and numbered > 0

    # Migrating the distributed crawl (docs/how-to/several-machines.md): four revisions
    # down and up again, which add columns to distributed tables, change how rows
    # replicate and change a trigger's function (in one transaction), keep every row, and
    # every worker's shards follow the schema
    counts = "SELECT (SELECT count(*) FROM doc), (SELECT count(*) FROM link)"
    before = _rows(cluster, counts)
    focuscrawl(env, "db", "downgrade", "0018")
    assert "behind head" in focuscrawl(env, "db", "status")
    focuscrawl(env, "db", "upgrade")
    assert "distributed" in focuscrawl(env, "db", "distribute")  # idempotent, as the docs say
    assert _rows(cluster, counts) == before
    ((shard_columns,),) = _rows(
        cluster,
        "SELECT array_agg(result ORDER BY nodeport) FROM run_command_on_workers($$"
        "SELECT count(*) FROM information_schema.columns "
        "WHERE table_name ~ '^link_[0-9]+$' AND column_name = 'own'$$)",
    )
    assert len(shard_columns) == 2 and all(int(n) > 0 for n in shard_columns), shard_columns
    ((checks,),) = _rows(  # 0022's function, on every node that runs the trigger
        cluster,
        "SELECT array_agg(result ORDER BY nodeport) FROM run_command_on_workers($$"
        "SELECT prosrc LIKE '%starts_with%' FROM pg_proc WHERE proname = 'doc_urls_checked'$$)",
    )
    assert checks == ["t", "t"], checks
