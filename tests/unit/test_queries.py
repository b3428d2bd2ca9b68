from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.db.queries import load_queries, prepared, queries, replaced


def test_named_blocks_are_parsed_with_subdirectory_prefixes(tmp_path: Path) -> None:
    (tmp_path / "a.sql").write_text(
        "-- header comment\n\n-- one --\n-- doc\nSELECT 1;\n\n-- two --\nSELECT %(x)s;\n"
    )
    (tmp_path / "monitor").mkdir()
    (tmp_path / "monitor" / "m.sql").write_text("-- stagnation --\nSELECT 2;\n")
    loaded = load_queries(tmp_path)
    assert loaded["one"] == "-- doc\nSELECT 1;\n"
    assert loaded["two"] == "SELECT %(x)s;\n"
    assert loaded["monitor/stagnation"] == "SELECT 2;\n"
    with pytest.raises(KeyError, match="no SQL statement named 'three'"):
        loaded["three"]


def test_a_name_defined_twice_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.sql").write_text("-- one --\nSELECT 1;\n")
    (tmp_path / "b.sql").write_text("-- one --\nSELECT 2;\n")
    with pytest.raises(ValueError, match="already defined"):
        load_queries(tmp_path)


def test_the_project_statements_load() -> None:
    assert "claim_batch" in queries
    assert "FOR UPDATE SKIP LOCKED" in queries["claim_batch"]


def test_prepared_numbers_parameters_in_order_of_first_use() -> None:
    statements = {"x": "-- doc\nSELECT %(b)s + %(a)s, %(b)s, '50%%' FROM t;\n"}
    form = prepared("x", statements)
    assert form.prepare == "PREPARE fc_x AS\n-- doc\nSELECT $1 + $2, $1, '50%' FROM t"
    assert form.execute == "EXECUTE fc_x (%(b)s, %(a)s)"
    assert prepared("y", {"y": "SELECT 1"}).execute == "EXECUTE fc_y"


def test_replaced_swaps_a_statement_for_the_block_only() -> None:
    shipped = queries["frontier_size"]
    with pytest.raises(RuntimeError), replaced("frontier_size", "SELECT 1;\n"):
        assert queries["frontier_size"] == "SELECT 1;\n"
        raise RuntimeError("the block failed")
    assert queries["frontier_size"] == shipped
    with pytest.raises(KeyError, match="no SQL statement named 'no_such'"), replaced("no_such", ""):
        pass
