"""The embedded database from the command line, as a newcomer uses it."""

from __future__ import annotations

import re
import subprocess

import psycopg2
from acceptance_helpers import psql_binary  # type: ignore[import-not-found]
from sqlalchemy.engine import make_url


def _pid(output: str) -> int:
    match = re.search(r"pid (\d+)", output)
    assert match, output
    return int(match.group(1))


def test_db_up_reuses_the_server_keeps_data_and_down_stops_it(cli) -> None:  # type: ignore[no-untyped-def]
    try:
        first = cli("db", "up")
        assert first.returncode == 0, first.stderr
        assert "started" in first.stdout
        again = cli("db", "up")
        assert "already running" in again.stdout
        assert _pid(again.stdout) == _pid(first.stdout)
        status = cli("db", "status")
        assert status.returncode == 0 and _pid(status.stdout) == _pid(first.stdout)
        assert "up to date" in status.stdout

        assert cli("seed", "add", "http://survivor.example/").returncode == 0
        url = cli("db", "url").stdout.strip()
        described = subprocess.run(
            [psql_binary(), url, "-c", r"\d doc", "-c", r"\d doc_fetch"],
            capture_output=True,
            text=True,
        )
        for column in (
            "oid",
            "https",
            "path",
            "sid",
            "num_tries",
            "priority",
            "relevance",
            "cid",
            "bytehash",
            "state",
            "http_status",
            "content_type",
            "fetched_at",
            "fetch_seq",
            "depth",
            "content_hash",
            "title",
        ):
            assert re.search(rf"^ {column} +\|", described.stdout, re.MULTILINE), column
        assert "doc_frontier" in described.stdout

        down = cli("db", "down")
        assert down.returncode == 0 and "stopped" in down.stdout
        stopped = cli("db", "status")
        assert stopped.returncode == 1 and "not running" in stopped.stdout

        assert cli("db", "up").returncode == 0
        url = cli("db", "url").stdout.strip()
        kept = subprocess.run(
            [psql_binary(), url, "-tAc", "SELECT d.url FROM doc AS d"],
            capture_output=True,
            text=True,
        )
        assert kept.stdout.strip() == "http://survivor.example/"
    finally:
        cli("db", "down")


def test_database_url_set_means_nothing_is_started(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("db", "up", env={"FOCUSCRAWL_DATABASE_URL": db_url})
    assert result.returncode == 0, result.stderr
    assert "embedded server is not used" in result.stdout
    assert "started" not in result.stdout


def test_db_downgrade_takes_a_relative_revision_as_its_help_says(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    """`db downgrade -1` steps one migration down (click took -1 for an unknown option);
    `db upgrade` brings the schema back to its head."""
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    head = cli("db", "status", env=env)
    down = cli("db", "downgrade", "-1", env=env)
    assert down.returncode == 0, down.stderr
    revision = down.stdout.strip().rsplit(" ", 1)[-1]
    assert revision != "base" and revision not in head.stdout, (down.stdout, head.stdout)
    up = cli("db", "upgrade", env=env)
    assert up.returncode == 0, up.stderr
    for wrong in ("--nonsense", "zzz"):
        refused = cli("db", "downgrade", wrong, env=env)
        assert refused.returncode == 2
        assert refused.stderr.startswith("focuscrawl: error: cannot downgrade to")
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    refused = cli("db", "upgrade", "zzz", env=env)  # was alembic's traceback
    assert refused.returncode == 2 and refused.stderr.startswith(
        "focuscrawl: error: cannot upgrade to"
    )
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "up to date" in cli("db", "status", env=env).stdout  # nothing was lost


def test_unreachable_database_is_one_line_error(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "seed",
        "add",
        "http://a.example/",
        env={"FOCUSCRAWL_DATABASE_URL": "postgresql://x@127.0.0.1:1/x"},
    )
    assert result.returncode == 2
    assert result.stderr.startswith("focuscrawl: error: cannot reach PostgreSQL")
    assert len(result.stderr.strip().splitlines()) == 1


def test_db_distribute_refuses_what_is_not_a_citus_coordinator(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    """db distribute with no database URL (the embedded server), on a PostgreSQL without
    Citus, and with no shards: a one-line error each, and the database untouched."""
    embedded = cli("db", "distribute")
    assert embedded.returncode == 2
    assert "needs FOCUSCRAWL_DATABASE_URL" in embedded.stderr
    plain = cli("db", "distribute", env={"FOCUSCRAWL_DATABASE_URL": db_url})
    assert plain.returncode != 0
    assert plain.stderr.startswith("focuscrawl: error: this database has no Citus extension")
    assert len(plain.stderr.strip().splitlines()) == 1
    none = cli("db", "distribute", "--shards", "0", env={"FOCUSCRAWL_DATABASE_URL": db_url})
    assert none.returncode == 2 and "--shards" in none.stderr
    seeded = cli("seed", "add", "http://kept.example/", env={"FOCUSCRAWL_DATABASE_URL": db_url})
    assert seeded.returncode == 0, seeded.stderr  # the schema is as it was


def test_a_role_without_the_privileges_a_command_needs_gets_one_line(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    """A role that may read the crawl but not write it: a command that writes stops with
    one line naming the refusal (not a traceback), and nothing is written."""
    role = f"reader_{abs(hash(db_url)) % 10**8}"
    admin = psycopg2.connect(db_url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE ROLE {role} LOGIN")
            cursor.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        as_reader = make_url(db_url).set(username=role, password=None)
        reader = {"FOCUSCRAWL_DATABASE_URL": as_reader.render_as_string(hide_password=False)}
        refused = cli("seed", "add", "http://refused.example/", env=reader)
        assert refused.returncode == 2
        assert refused.stderr.startswith("focuscrawl: error: PostgreSQL refused: permission denied")
        assert "lacks a privilege" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert cli("monitor", "query", "census", env=reader).returncode == 0  # reading is allowed
        with admin.cursor() as cursor:  # allowed to write, on a read-only session
            cursor.execute(f"GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {role}")
            cursor.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
            cursor.execute(f"ALTER ROLE {role} SET default_transaction_read_only = on")
        read_only = cli("seed", "add", "http://refused.example/", env=reader)
        assert read_only.returncode == 2
        assert "PostgreSQL refused: cannot execute" in read_only.stderr
        assert "the database is read-only" in read_only.stderr
        assert len(read_only.stderr.strip().splitlines()) == 1
        with admin.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM site")
            assert cursor.fetchone() == (0,)
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP OWNED BY {role}")
            cursor.execute(f"DROP ROLE {role}")
        admin.close()
