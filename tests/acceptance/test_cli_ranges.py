"""Options out of range are one-line errors before any work, whatever the command."""

from __future__ import annotations

import psycopg2
import pytest
from sqlalchemy.engine import make_url


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # each was accepted: the classifier waited on an empty claim, the distiller ran
        # every iteration, the evaluation crawled (or prepared its databases) first
        (("classify", "run", "--batch", "0"), "--batch must be at least 1"),
        (("distill", "run", "--tolerance", "-1"), "--tolerance must be at least 0"),
        (("eval", "--threads", "0"), "--threads must be between 1 and 512"),
        (("eval", "--train-fraction", "2"), "--train-fraction must be between 0 and 1"),
        (("eval", "--strategies", "labels", "--labels", "-1"), "--labels must be at least 1"),
        (("eval", "--seed-distance", "-1"), "--seed-distance must be at least 0"),
    ],
)
def test_an_option_out_of_range_is_refused_in_one_line_before_any_work(  # type: ignore[no-untyped-def]
    cli, db_url: str, args: tuple[str, ...], says: str
) -> None:
    refused = cli(*args, env={"FOCUSCRAWL_DATABASE_URL": db_url}, timeout=60)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert refused.stderr.startswith(f"focuscrawl: error: {says}"), refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    name = make_url(db_url).database
    with psycopg2.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{name}_%",))
        assert cursor.fetchall() == []  # no evaluation database was made
