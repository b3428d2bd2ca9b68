"""Named SQL statements, read from the ``sql/`` directory.

A file holds blocks, each opened by a line ``-- name --``; the comment lines
right after it are the statement's documentation. ``queries["claim_batch"]``
returns the text unchanged, with psycopg2 ``%(name)s`` placeholders, so the same
statement runs from Python and, with values filled in, from psql.
Files under ``sql/monitor/`` are named ``monitor/<name>``.

``prepared`` turns a statement into a server-side prepared one, for the few a
crawler runs for every page: PostgreSQL then plans it once per connection.
``replaced`` swaps one statement for another within this process, for experiments
(``bench/tiebreak.py`` measures other claim orders with it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from focuscrawl.db.resources import resource_dir

__all__ = [
    "Prepared",
    "Queries",
    "load_queries",
    "prepared",
    "queries",
    "replaced",
    "statements_by_file",
]

_HEADER = re.compile(r"^-- ([a-z0-9_]+) --$", re.MULTILINE)
_PARAMETER = re.compile(r"%\((\w+)\)s")


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


def statements_by_file(directory: Path | None = None) -> dict[str, dict[str, str]]:
    """Each ``*.sql`` file's statements, in file order, by the file's path under ``sql/``
    (the docs' reference lists them so)."""
    directory = resource_dir("sql") if directory is None else directory
    out: dict[str, dict[str, str]] = {}
    for path in sorted(directory.rglob("*.sql")):
        relative = path.relative_to(directory)
        prefix = "" if relative.parent == Path(".") else relative.parent.as_posix() + "/"
        out[relative.as_posix()] = _parse(path.read_text(encoding="utf-8"), prefix, path)
    return out


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


@contextmanager
def replaced(name: str, sql: str) -> Iterator[None]:
    """Within the block, ``queries[name]`` is ``sql`` (in this process only)."""
    statements = _default()._statements
    if name not in statements:
        raise KeyError(f"no SQL statement named {name!r} in sql/")
    shipped = statements[name]
    statements[name] = sql
    try:
        yield
    finally:
        statements[name] = shipped


@dataclass(frozen=True)
class Prepared:
    """A named statement as ``PREPARE`` (run once per connection) and ``EXECUTE`` (run
    with the same ``%(name)s`` parameters as the statement itself)."""

    prepare: str
    execute: str


def prepared(name: str, statements: Mapping[str, str] | None = None) -> Prepared:
    """The statement ``name`` as a server-side prepared statement ``fc_<name>``.

    Parameter types are left to PostgreSQL to infer from the statement. Planning a
    statement can cost more than running it: for the crawler's host lease
    (``acquire_site``) preparing halves the server's CPU time a statement
    (``bench/site_lease.py``).
    """
    sql = (queries if statements is None else statements)[name]
    order: list[str] = []

    def number(match: re.Match[str]) -> str:
        parameter = match.group(1)
        if parameter not in order:
            order.append(parameter)
        return f"${order.index(parameter) + 1}"

    body = _PARAMETER.sub(number, sql).replace("%%", "%").strip().rstrip(";")
    handle = "fc_" + name.replace("/", "_")
    arguments = ", ".join(f"%({parameter})s" for parameter in order)
    return Prepared(
        prepare=f"PREPARE {handle} AS\n{body}",
        execute=f"EXECUTE {handle} ({arguments})" if order else f"EXECUTE {handle}",
    )
