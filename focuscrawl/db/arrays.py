"""Python lists sent to PostgreSQL as one array literal, ``'{1,2,3}'``.

psycopg2 sends a list as ``ARRAY[1, 2, 3]``: one constant per element, each adapted in
Python and parsed by the server. The hot statements pass long lists: a claim names every
bucket (256) six times and the sites it skips (up to one per host) three times; the
store and the classifier pass a batch's oids and values. Measured on this machine, a
statement with 2 x 1,000 elements cost 1.8 ms to adapt and 1.8 ms at the server that
way, against 0.5 ms and 0.7 ms as a literal, which the server reads with one call of
``array_in`` (docs/discussions/benchmarks.md, "What a polite crawl's start costs").

The literal's type is ``unknown`` until the statement says it: every statement in
``sql/`` casts its array parameters (``%(oids)s::bigint[]``), as psycopg2's own literal
for an empty list, ``'{}'``, already needed. Lists of one kind of element (integers,
floats, booleans or strings, any of them None) are sent this way; any other list (of
bytes, decimals, dates, nested lists, mixed kinds) the psycopg2 way.
"""

from __future__ import annotations

from typing import Any

from psycopg2.extensions import ISQLQuote, QuotedString, adapters, register_adapter

__all__ = ["array_literal", "register"]

_PSYCOPG2_LIST = adapters[(list, ISQLQuote)]


def _element(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def array_literal(values: list[Any]) -> str | None:
    """The text of ``values`` as a PostgreSQL array literal; None for a list it does not
    take (its elements not all int, all float, all bool or all str, None aside)."""
    kinds = {type(value) for value in values}
    nulls = type(None) in kinds
    kinds.discard(type(None))
    if len(kinds) > 1:
        return None
    kind = kinds.pop() if kinds else int
    if kind is int and not nulls:  # the common case: oids, sids, buckets
        return "{" + ",".join(map(str, values)) + "}"
    if kind is int:
        text = ["NULL" if v is None else str(v) for v in values]
    elif kind is float:
        text = ["NULL" if v is None else repr(v) for v in values]
    elif kind is bool:
        text = ["NULL" if v is None else "t" if v else "f" for v in values]
    elif kind is str:
        text = ["NULL" if v is None else _element(v) for v in values]
    else:
        return None
    return "{" + ",".join(text) + "}"


class _ArrayAdapter:
    """psycopg2's adapter protocol: prepare(connection), then getquoted()."""

    def __init__(self, values: list[Any]) -> None:
        self._values = values
        self._connection: Any = None

    def prepare(self, connection: Any) -> None:
        self._connection = connection

    def getquoted(self) -> bytes:
        literal = array_literal(self._values)
        adapter = _PSYCOPG2_LIST(self._values) if literal is None else QuotedString(literal)
        if self._connection is not None:
            adapter.prepare(self._connection)
        quoted: bytes = adapter.getquoted()
        return quoted


def register() -> None:
    """Send lists as array literals from now on, on every psycopg2 connection."""
    register_adapter(list, _ArrayAdapter)
