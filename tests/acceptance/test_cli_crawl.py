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


def test_crawl_run_refuses_values_that_would_stall_or_poison_a_crawl(
    cli, db_url: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """Each bad value: one line, exit 2, before a request or a row is written; a crawl
    started after them is unaffected."""
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    assert cli("seed", "add", "http://a.example/", env=env).returncode == 0
    config = tmp_path / "bad.toml"
    config.write_text("threads = [1, 2]\n")
    for args, extra, says in (
        (("--host-delay", "inf"), {}, "host_delay = inf"),
        (("--host-delay", "nan"), {}, "host_delay = nan"),
        ((), {"FOCUSCRAWL_HOST_DELAY": "nan"}, "FOCUSCRAWL_HOST_DELAY"),
        ((), {"FOCUSCRAWL_CONFIG": str(config)}, "threads = [1, 2]"),
        ((), {"FOCUSCRAWL_PROXY": "5"}, "proxy = '5'"),
        (("--lease-seconds", "0"), {}, "--lease-seconds"),
        (("--lease-seconds", "-5"), {}, "--lease-seconds"),
        (("--max-depth", "-1"), {}, "--max-depth"),
        (("--idle-exit", "-1"), {}, "--idle-exit"),
    ):
        done = cli("crawl", "run", *args, "--quiet", env={**env, **extra})
        assert done.returncode == 2, (args, extra, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], (args, extra, done.stderr)
    with psycopg2.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT state, num_tries FROM doc")
        assert cursor.fetchall() == [(0, 0)]
        cursor.execute("SELECT count(*) FROM site WHERE next_fetch_at = 'infinity'")
        assert cursor.fetchone() == (0,)
