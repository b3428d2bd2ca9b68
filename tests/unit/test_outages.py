"""What counts as the database being away (wait and try again) rather than refusing."""

from __future__ import annotations

import psycopg2
import pytest
import sqlalchemy as sa

from focuscrawl.db.outages import unavailable


@pytest.mark.parametrize(
    ("message", "away"),
    [
        ("terminating connection due to administrator command", True),
        ("failure on connection marked as essential: postgres@/tmp/w:9702", True),
        ("connection to the remote node postgres@/tmp/w:9702 failed with the following", True),
        ("could not find valid entry for shard 102008", False),  # a layout change
        ("invalid memory alloc request size 18446744073709551615", False),
    ],
)
def test_a_citus_workers_failure_passed_on_as_internal_is_an_outage(
    message: str, away: bool
) -> None:
    """A Citus coordinator passes a worker's shutdown on as an internal error: an outage
    to wait out, as psycopg2's or SQLAlchemy's wrapper of it; other internal errors not."""
    error = psycopg2.errors.InternalError_(message)
    assert unavailable(error) is away
    assert unavailable(sa.exc.InternalError("SELECT 1", {}, error)) is away
