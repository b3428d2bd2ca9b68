"""Long-running programs wait out PostgreSQL outages and run rolled-back work again."""

from __future__ import annotations

import socket
import threading

import psycopg2
import pytest
import sqlalchemy as sa

from focuscrawl.db import outages
from focuscrawl.db.database import engine_dsn
from focuscrawl.db.outages import retry_until_done, unavailable


def _closed_port_dsn() -> str:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://nobody@127.0.0.1:{port}/none?connect_timeout=2"


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outages, "OUTAGE_RETRY_S", 0.01)


def test_an_outage_is_waited_out_and_the_action_run_again(engine: sa.Engine) -> None:
    dsns = [_closed_port_dsn(), _closed_port_dsn(), engine_dsn(engine)]
    lost: list[int] = []

    def connect_and_count() -> int:
        with psycopg2.connect(dsns[len(lost)]) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM doc")
            return int(cursor.fetchone()[0])

    assert retry_until_done(connect_and_count, "test", on_lost=lambda: lost.append(1)) == 0
    assert len(lost) == 2


def test_a_server_shutdown_counts_as_an_outage_and_a_bad_statement_does_not(
    engine: sa.Engine,
) -> None:
    with pytest.raises(psycopg2.OperationalError) as refused:
        psycopg2.connect(_closed_port_dsn())
    assert unavailable(refused.value)
    with engine.connect() as connection, pytest.raises(sa.exc.ProgrammingError) as bad:
        connection.exec_driver_sql("SELECT no_such_column FROM doc")
    assert not unavailable(bad.value)
    calls: list[int] = []

    def bad_statement() -> None:
        calls.append(1)
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT no_such_column FROM doc")

    with pytest.raises(sa.exc.ProgrammingError):
        retry_until_done(bad_statement, "test")
    assert calls == [1]


def test_a_rolled_back_transaction_runs_again(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE counter (n integer); INSERT INTO counter VALUES (0)"
        )
    attempts: list[int] = []

    def increment() -> int:
        attempts.append(1)
        with engine.connect() as connection:
            connection.exec_driver_sql("BEGIN ISOLATION LEVEL REPEATABLE READ")
            connection.exec_driver_sql("SELECT n FROM counter")  # takes the snapshot
            if len(attempts) == 1:  # someone else commits a change meanwhile
                with engine.begin() as other:
                    other.exec_driver_sql("UPDATE counter SET n = n + 10")
            n = connection.exec_driver_sql("UPDATE counter SET n = n + 1 RETURNING n").scalar()
            connection.commit()
            return int(n)  # type: ignore[arg-type]

    assert retry_until_done(increment, "test") == 11  # 0, +10 by the other, +1
    assert len(attempts) == 2  # the first lost to a serialization failure


def test_a_stop_ends_the_wait(engine: sa.Engine) -> None:
    stop = threading.Event()
    stop.set()
    result = retry_until_done(lambda: psycopg2.connect(_closed_port_dsn()), "test", stop=stop)
    assert result is None


def test_a_lost_connection_reported_as_a_system_error_is_one_line_and_waited_out(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """psycopg2 may report a connection lost during COPY as a SystemError raised from
    the server's error (AdminShutdown): the store waits it out with one log line."""
    calls: list[int] = []

    def copy_during_shutdown() -> str:
        calls.append(1)
        if len(calls) == 1:
            try:
                psycopg2.connect(_closed_port_dsn())
            except psycopg2.OperationalError as lost:
                raise SystemError("<built-in method copy_expert> returned NULL") from lost
        return "stored"

    with caplog.at_level("WARNING", logger="focuscrawl.db.outages"):
        assert retry_until_done(copy_during_shutdown, "store") == "stored"
    assert calls == [1, 1]
    waits = [r.getMessage() for r in caplog.records]
    assert len(waits) == 1 and waits[0].startswith("event=db_wait what=store error=")
    assert "\n" not in waits[0] and "Traceback" not in capfd.readouterr().err
    with pytest.raises(SystemError):  # one with no database error in its chain propagates
        retry_until_done(lambda: (_ for _ in ()).throw(SystemError("a bug")), "store")


def _citus_refusal(engine: sa.Engine, message: str) -> None:
    """A statement failing with what Citus says of a statement grouped by old shards."""
    with engine.connect() as connection:
        connection.exec_driver_sql(f"DO $$ BEGIN RAISE EXCEPTION '{message}'; END $$")


def test_a_changed_layout_is_read_again_and_the_statement_run_again(
    engine: sa.Engine,
) -> None:
    events: list[str] = []

    def claim() -> str:
        events.append("try")
        if events.count("layout") < 2:
            _citus_refusal(engine, "could not find valid entry for shard 102051")
        return "claimed"

    done = retry_until_done(
        claim,
        "claim",
        on_lost=lambda: events.append("lost"),
        on_layout=lambda: events.append("layout"),
    )
    assert done == "claimed"
    assert events == ["try", "lost", "layout", "try", "lost", "layout", "try"]


def test_a_statement_refused_on_every_layout_is_not_run_for_ever(engine: sa.Engine) -> None:
    tries: list[int] = []

    def wrong_everywhere() -> None:
        tries.append(1)
        _citus_refusal(engine, "could not run distributed query with FOR UPDATE/SHARE commands")

    with pytest.raises(sa.exc.DBAPIError, match="FOR UPDATE/SHARE"):
        retry_until_done(wrong_everywhere, "claim", on_layout=lambda: None)
    assert len(tries) == outages.LAYOUT_RETRIES + 1


@pytest.mark.parametrize(
    ("message", "away"),
    [
        # Citus, when the worker a COPY streams rows to goes down (a fresh clone's CI)
        ("failed to COPY to shard 102029 on /tmp/w:9771", True),
        ('could not read block 0 in file "base/1/2": read only 0 of 8192 bytes', False),
    ],
)
def test_a_worker_lost_during_a_copy_is_an_outage_and_a_disk_error_is_not(
    engine: sa.Engine, message: str, away: bool
) -> None:
    """Both come as I/O errors (58030), raised here by the server itself."""
    raise_it = f"DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '58030', MESSAGE = '{message}'; END $$"
    with engine.connect() as connection, pytest.raises(sa.exc.OperationalError) as raised:
        connection.exec_driver_sql(raise_it)
    assert raised.value.orig.pgcode == "58030"
    assert unavailable(raised.value) is away
    assert unavailable(raised.value.orig) is away
