"""Named SQL statements, read from the ``sql/`` directory.

A file holds blocks, each opened by a line ``-- name --``; the comment lines
right after it are the statement's documentation. ``queries["claim_batch"]``
returns the text unchanged, with psycopg2 ``%(name)s`` placeholders, so the same
statement runs from Python and, with values filled in, from psql.
Files under ``sql/monitor/`` are named ``monitor/<name>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

from focuscrawl.resources import resource_dir

__all__ = ["Queries", "load_queries", "queries"]

_HEADER = re.compile(r"^-- ([a-z0-9_]+) --$", re.MULTILINE)


def _parse(text: str, prefix: str, source: Path) -> dict[str, str]:
    blocks: dict[str, str] = {}
    parts = _HEADER.split(text)
    # parts = [preamble, name1, body1, name2, body2, ...]
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        key = prefix + name
        if key in blocks:
            raise ValueError(f"{source}: statement {name!r} is defined twice")
        statement = body.strip()
        if not statement:
            raise ValueError(f"{source}: statement {name!r} is empty")
        blocks[key] = statement + "\n"
    return blocks


class Queries(Mapping[str, str]):
    """Read-only mapping of statement name to SQL text."""

    def __init__(self, statements: dict[str, str]) -> None:
        self._statements = statements

    def __getitem__(self, name: str) -> str:
        try:
            return self._statements[name]
        except KeyError:
            raise KeyError(f"no SQL statement named {name!r} in sql/") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._statements)

    def __len__(self) -> int:
        return len(self._statements)


def load_queries(directory: Path) -> Queries:
    """Parse every ``*.sql`` file below ``directory``."""
    statements: dict[str, str] = {}
    for path in sorted(directory.rglob("*.sql")):
        relative = path.relative_to(directory).parent
        prefix = "" if relative == Path(".") else relative.as_posix() + "/"
        for key, value in _parse(path.read_text(encoding="utf-8"), prefix, path).items():
            if key in statements:
                raise ValueError(f"{path}: statement {key!r} is already defined in another file")
            statements[key] = value
    return Queries(statements)


@cache
def _default() -> Queries:
    return load_queries(resource_dir("sql"))


class _LazyQueries(Mapping[str, str]):
    """The project's statements, parsed on first use."""

    def __getitem__(self, name: str) -> str:
        return _default()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_default())

    def __len__(self) -> int:
        return len(_default())


queries: Mapping[str, str] = _LazyQueries()
