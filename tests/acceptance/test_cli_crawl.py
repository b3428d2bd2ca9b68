from __future__ import annotations

import psycopg2


def test_crawl_run_with_a_bad_proxy_is_one_line_and_loses_nothing(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    assert cli("seed", "add", "http://a.example/", env=env).returncode == 0
    done = cli("crawl", "run", "--proxy", "http://127.0.0.1:99999", "--quiet", env=env)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "proxy 'http://127.0.0.1:99999'" in done.stderr and "1-65535" in done.stderr
    with psycopg2.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT d.url, d.state, d.num_tries FROM doc AS d")
        assert cursor.fetchall() == [("http://a.example/", 0, 0)]
