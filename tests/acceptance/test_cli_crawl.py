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


def test_a_crawl_that_fetched_nothing_says_why_and_its_failures_can_be_retried(
    cli, db_url: str
) -> None:  # type: ignore[no-untyped-def]
    """The newcomer's first own crawl: no proxy (the hosts do not resolve: each is asked
    once, and its URLs wait), then a proxy that is down, then the web-in-a-box served in
    the background; each failure is one line and exit 2, and the seeds that failed for
    good are fetched once retried."""
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    made = cli("webbox", "generate", "--pages", "300", "--hosts", "4", "--name", "tiny", env=env)
    assert made.returncode == 0, made.stderr
    seeds = cli("webbox", "urls", "--corpus", "tiny", "--sample", "3", env=env).stdout.split()
    assert len(seeds) == 3 and cli("seed", "add", *seeds, env=env).returncode == 0
    # (short waits: a failed try waits out the host's delay, and an idle crawler 5 s,
    # which tell this test nothing and cost it 20 s)
    crawl = ("crawl", "run", "--mode", "bfs", "--max-pages", "20", "--quiet")
    crawl += ("--idle-exit", "0.5", "--host-delay", "0.1")

    unresolved = cli(*crawl, env=env)
    assert unresolved.returncode == 2
    line = unresolved.stderr.strip().splitlines()[-1]
    assert "fetched nothing" in line and "dns_error" in line and "--background" in line
    assert "wait in the frontier" in line
    with psycopg2.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT state, num_tries FROM doc WHERE doc.url = ANY(%s)", (seeds,))
        assert sorted(cursor.fetchall()) == [(0, 1)] * 3  # each host asked once

    dead = cli(*crawl, env={**env, "FOCUSCRAWL_PROXY": "http://127.0.0.1:9"})
    assert dead.returncode == 2 and "proxy_unreachable" in dead.stderr, dead.stderr
    assert "crawl retry" in dead.stderr.strip().splitlines()[-1]
    again = cli("seed", "add", seeds[0], env=env)
    assert "1 failed before" in again.stderr and "crawl retry" in again.stderr

    served = cli("webbox", "serve", "--corpus", "tiny", "--port", "0", "--background", env=env)
    try:
        assert served.returncode == 0, served.stderr
        export = served.stdout.strip()
        assert export.startswith("export FOCUSCRAWL_PROXY=http://127.0.0.1:"), served.stdout
        proxy = export.partition("=")[2]
        assert cli("crawl", "retry", "--error", "proxy_unreachable", env=env).stdout.startswith(
            "3 URLs"
        )
        loud = tuple(arg for arg in crawl if arg != "--quiet")  # its summary printed
        done = cli(*loud, env={**env, "FOCUSCRAWL_PROXY": proxy})
        assert done.returncode == 0, done.stderr
    finally:
        stopped = cli("webbox", "stop", env=env)
    assert stopped.stdout.startswith("stopped the web-in-a-box"), stopped.stdout
    summary, cpu = done.stdout.strip().splitlines()[-2:]
    assert summary.startswith("fetched 20, failed 0,"), summary
    # where the crawler's CPU went, each stage's milliseconds a page, within its own
    stages, _, total = cpu.removeprefix("CPU a page, ms: ").partition("; ")
    spent = dict(part.rsplit(" ", 1) for part in stages.split(", "))
    assert list(spent) == ["claim", "fetch", "parse", "store"], cpu
    assert 0 < sum(map(float, spent.values())) <= float(total.removesuffix(" in all")), cpu
    with psycopg2.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM doc WHERE state = 2")
        assert cursor.fetchone() == (20,)
        cursor.execute(
            "SELECT count(*) FROM doc AS d WHERE d.url = ANY(%s) AND state = 2", (seeds,)
        )
        assert cursor.fetchone() == (3,)


def test_a_crawl_with_an_empty_frontier_says_so(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    done = cli("crawl", "run", "--mode", "bfs", "--quiet", env={"FOCUSCRAWL_DATABASE_URL": db_url})
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "fetched nothing: the frontier has no URL to crawl (add seeds: focuscrawl seed add "
        "URL; URLs that failed for good: focuscrawl crawl retry)"
    )


def test_a_mistyped_command_or_topic_is_one_line_naming_the_closest(cli) -> None:  # type: ignore[no-untyped-def]
    for args, says in (
        (("craw", "run"), "No such command 'craw'; did you mean 'crawl'?"),
        (("crawl", "rn"), "No such command 'rn'; did you mean 'run'?"),
    ):
        done = cli(*args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert says in done.stderr
    assert (
        cli("webbox", "generate", "--pages", "300", "--hosts", "4", "--name", "tiny").returncode
        == 0
    )
    wrong = cli("eval", "--corpus", "tiny", "--topic", "subject.Science.Biolgy")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert "did you mean subject.Science.Biology" in wrong.stderr
