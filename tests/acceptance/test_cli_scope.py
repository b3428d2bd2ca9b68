"""``crawl scope``: stored in the database, obeyed by the crawler, bad input refused."""

from __future__ import annotations

import signal
from pathlib import Path

import sqlalchemy as sa

from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import page_url, write_corpus


def test_a_crawl_stays_inside_its_scope(
    cli, db_url: str, engine: sa.Engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    assert cli("crawl", "scope", "show", env=env).stdout.startswith("no scope")
    done = cli("crawl", "scope", "set", "--allow-domain", "topics.example",
               "--deny-domain", "portal.topics.example", "--exclude", r"/football/\d*[05]$",
               "--max-depth", "3", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = cli("crawl", "scope", "show", env=env).stdout
    assert "allowed domains: topics.example" in shown and "max depth: 3" in shown
    assert "denied domains: portal.topics.example" in shown

    # bad input changes nothing stored
    for args, says in (
        (("--include", "wiki("), "--include 'wiki(': the pattern does not compile"),
        (("--allow-domain", "-bad-.example"), "domain '-bad-.example' is not a valid host"),
        (("--max-depth", "-2"), "--max-depth -2"),
    ):
        bad = cli("crawl", "scope", "set", *args, env=env)
        assert bad.returncode == 2 and says in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1
    assert cli("crawl", "scope", "show", env=env).stdout == shown

    process, proxy = start_server_process(
        tmp_path, str(write_corpus(tmp_path / "web")), "--no-faults"
    )
    try:
        seeds = [page_url("topics.sports.cycling", 1), page_url("topics.sports.cycling", 5)]
        assert cli("seed", "add", *seeds, env=env).returncode == 0
        crawl = cli("crawl", "run", "--mode", "bfs", "--proxy", proxy, "--host-delay", "0",
                    "--idle-exit", "1", "--quiet", "--max-pages", "200", env=env)  # fmt: skip
        assert crawl.returncode == 0, crawl.stderr
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)

    with engine.connect() as c:
        rows = c.exec_driver_sql(
            "SELECT d.url, d.state, d.depth, f.error FROM doc AS d LEFT JOIN doc_fetch AS f "
            "USING (oid)"
        ).all()
    fetched = [r for r in rows if r.state == 2]
    assert len(fetched) > 10
    assert all(r.url.startswith(("http://sports.topics.example/", "http://science.topics.example/"))
               for r in fetched)  # fmt: skip
    assert not any(r.url.split("/")[3] == "football" and r.url[-1] in "05" for r in fetched)
    assert all(r.depth <= 3 for r in fetched)
    # the seed on the denied portal was refused when claimed; no out-link there was kept
    portal = [r for r in rows if "portal.topics.example" in r.url]
    assert [(r.state, r.error) for r in portal] == [(5, "denied_domain")]
