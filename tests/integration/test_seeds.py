from __future__ import annotations

import sqlalchemy as sa

from focuscrawl.db.schema import SEED_PRIORITY
from focuscrawl.db.seeds import add_seeds, read_seed_file


def test_seeds_are_normalised_deduplicated_and_bad_ones_reported(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        result = add_seeds(
            connection,
            [
                "http://A.example/x/../y",
                "http://a.example/y#top",
                "ftp://a.example/",
                "http://b.example:8080/",
            ],
        )
    assert sorted(result.added) == ["http://a.example/y", "http://b.example:8080/"]
    assert result.duplicates == 1
    assert [e.url for e in result.invalid] == ["ftp://a.example/"]
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT d.url, s.host, d.priority, d.relevance, d.state, d.num_tries, d.depth "
            "FROM doc d JOIN site s USING (sid) ORDER BY d.url"
        ).all()
    assert [tuple(r) for r in rows] == [
        ("http://a.example/y", "a.example", SEED_PRIORITY, 0.0, 0, 0, 0),
        ("http://b.example:8080/", "b.example:8080", SEED_PRIORITY, 0.0, 0, 0, 0),
    ]


def test_reseeding_raises_a_frontier_url_and_leaves_a_fetched_one(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        add_seeds(connection, ["http://a.example/1", "http://a.example/2"])
        connection.exec_driver_sql(
            "UPDATE doc SET priority = 5, relevance = -3 WHERE doc.url = 'http://a.example/1'"
        )
        connection.exec_driver_sql("UPDATE doc SET state = 2 WHERE doc.url = 'http://a.example/2'")
        result = add_seeds(
            connection, ["http://a.example/1", "http://a.example/2", "http://a.example/3"]
        )
        rows = dict(connection.exec_driver_sql("SELECT d.url, d.priority FROM doc AS d").all())
    assert result.added == ["http://a.example/3"]
    assert result.raised == ["http://a.example/1"]
    assert result.already_fetched == ["http://a.example/2"]
    assert rows["http://a.example/1"] == SEED_PRIORITY
    assert rows["http://a.example/2"] == SEED_PRIORITY  # untouched since the first call


def test_only_invalid_urls_add_nothing(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        result = add_seeds(connection, ["nonsense", "javascript:alert(1)"])
        count = connection.exec_driver_sql("SELECT count(*) FROM doc").scalar()
    assert len(result.invalid) == 2 and count == 0


def test_seed_file_skips_blank_lines_and_comments() -> None:
    assert read_seed_file("# seeds\n\nhttp://a.example/#x\n  http://b.example/ \n") == [
        "http://a.example/#x",
        "http://b.example/",
    ]
