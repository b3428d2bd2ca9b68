from __future__ import annotations

import psycopg2


def _urls(db_url: str) -> list[str]:
    with psycopg2.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT d.url FROM doc AS d ORDER BY 1")
        return [row[0] for row in cursor.fetchall()]


def test_seed_add_keeps_valid_urls_and_names_invalid_ones(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    result = cli(
        "seed",
        "add",
        "http://Good.example/a",
        "ftp://bad.example/",
        "http://good.example/a#x",
        "http://-bad-.example/",
        f"http://{'x' * 300}.example/",
        env=env,
    )
    assert result.returncode == 1
    assert "skipped invalid URL 'ftp://bad.example/'" in result.stderr
    assert "skipped invalid URL 'http://-bad-.example/'" in result.stderr
    assert "host longer than 253 characters" in result.stderr
    assert (
        "1 added" in result.stdout
        and "1 duplicates" in result.stdout
        and "3 invalid" in result.stdout
    )
    assert _urls(db_url) == ["http://good.example/a"]


def test_seed_add_reads_a_file_and_standard_input(cli, db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# my seeds\nhttp://a.example/\n\nhttp://b.example/\n")
    assert cli("seed", "add", "-f", str(seeds), env=env).returncode == 0
    assert cli("seed", "add", "-f", "-", env=env, input="http://c.example/\n").returncode == 0
    assert _urls(db_url) == ["http://a.example/", "http://b.example/", "http://c.example/"]


def test_seed_add_with_a_missing_file_is_one_line_error(cli, db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "seed", "add", "-f", str(tmp_path / "nope.txt"), env={"FOCUSCRAWL_DATABASE_URL": db_url}
    )
    assert result.returncode == 2
    assert result.stderr.startswith("focuscrawl: error: cannot read seed file")


def test_help_lists_only_shipped_groups(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--help")
    assert result.returncode == 0
    assert "db" in result.stdout and "seed" in result.stdout
    wrong = cli("nosuchcommand")
    assert wrong.returncode == 2 and "No such command" in wrong.stderr
