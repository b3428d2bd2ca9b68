"""Lists go to PostgreSQL as one array literal each (focuscrawl.db.arrays), and come back
as they went, whatever their strings hold."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa

from focuscrawl.db.arrays import array_literal


def _round_trip(engine: sa.Engine, cast: str, values: list[Any]) -> tuple[Any, str]:
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        with raw.cursor() as cursor:
            query = cursor.mogrify(f"SELECT %(v)s::{cast}", {"v": values}).decode()
            cursor.execute(query)
            (back,) = cursor.fetchone()
    return back, query


@pytest.mark.parametrize(
    ("cast", "values"),
    [
        ("bigint[]", [1, -2, 2**62, None]),
        ("smallint[]", []),
        ("float8[]", [1.5, -0.0, 1e-300, float("inf"), float("-inf"), None]),
        ("boolean[]", [True, False, None]),
        (
            "text[]",
            ['a"b', "c\\d", "it's", "x,y", "{}", " sp ", "NULL", "", "é—ü", "tab\there", None],
        ),
    ],
)
def test_a_list_of_one_kind_goes_as_one_literal_and_comes_back_unchanged(
    engine: sa.Engine, cast: str, values: list[Any]
) -> None:
    back, query = _round_trip(engine, cast, values)
    assert back == values
    assert "ARRAY[" not in query  # one literal, not a constant per element


def test_nan_comes_back_as_nan(engine: sa.Engine) -> None:
    back, _ = _round_trip(engine, "float8[]", [float("nan"), 2.0])
    assert math.isnan(back[0]) and back[1] == 2.0


@pytest.mark.parametrize(
    ("cast", "values", "expected"),
    [
        ("numeric[]", [Decimal("1.5")], [Decimal("1.5")]),
        ("int[]", [[1, 2], [3, 4]], [[1, 2], [3, 4]]),
        ("float8[]", [1, 2.5], [1.0, 2.5]),
    ],
)
def test_any_other_list_goes_the_psycopg2_way(
    engine: sa.Engine, cast: str, values: list[Any], expected: list[Any]
) -> None:
    assert array_literal(values) is None
    back, _ = _round_trip(engine, cast, values)
    assert back == expected
