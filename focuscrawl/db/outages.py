"""Waiting out what PostgreSQL goes through: an outage (the server restarting, a
connection lost), a transaction rolled back to resolve a deadlock, a shard split under
a statement (the layout read again). Each program runs its statements through
``retry_until_done`` and carries on where it was."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg2.errors
import sqlalchemy as sa

from focuscrawl.db.database import error_line

__all__ = [
    "LAYOUT_RETRIES",
    "OUTAGE_RETRY_S",
    "close_quietly",
    "layout_changed",
    "retry_rolled_back",
    "retry_until_done",
    "rolled_back",
    "unavailable",
]

_T = TypeVar("_T")


_log = logging.getLogger("focuscrawl.db.outages")


def rolled_back(exc: BaseException) -> bool:
    """PostgreSQL rolled the transaction back to resolve a deadlock or a serialization
    conflict: nothing was written, and running it again is the cure."""
    orig = getattr(exc, "orig", exc)
    return isinstance(orig, psycopg2.errors.TransactionRollbackError)


def retry_rolled_back(action: Callable[[], _T], attempts: int = 5) -> _T:
    """Run a transaction, again (up to ``attempts`` times) when PostgreSQL rolls it back
    or Citus's shards changed under it (a transaction that reads the layout, as the
    distiller's does, reads the new one)."""
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except sa.exc.DBAPIError as exc:
            if not (rolled_back(exc) or layout_changed(exc)) or attempt == attempts:
                raise
            _log.warning("event=retry attempt=%d error=%s", attempt, str(exc.orig).strip()[:80])
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")


#: Seconds a long-running program waits before it tries PostgreSQL again.
OUTAGE_RETRY_S = 1.0


#: What Citus says of a statement built on a layout of shards that has since changed
#: (docs/discussions/scale-out.md, "Moving and splitting shards"): a shard split (or
#: dropped) under the statement, or buckets that a split has put in two shards, which a
#: statement that locks rows may not name
_LAYOUT_CHANGED = (
    "could not find valid entry for shard",
    "could not run distributed query with FOR UPDATE/SHARE commands",
)


#: Times a transaction is run again after its layout changed before its error is taken
#: for what it says: a split settles in one try, a statement wrong on every layout must
#: not loop for ever
LAYOUT_RETRIES = 10


def layout_changed(exc: BaseException) -> bool:
    """Citus refused the statement because the shards it was grouped by have changed:
    reading the layout again and running it again is the cure."""
    orig = getattr(exc, "orig", exc)
    if not isinstance(orig, psycopg2.Error):
        return False
    message = str(orig)
    return any(phrase in message for phrase in _LAYOUT_CHANGED)


#: what a Citus coordinator says, as an internal error, when a worker it needs is
#: shutting down or gone (seen with a worker stopped by ``pg_ctl stop -m fast``)
_NODE_AWAY = (
    "terminating connection due to administrator command",
    "failure on connection marked as essential",
    "connection to the remote node",
    "server closed the connection unexpectedly",
    "could not connect to server",
    # raised as an I/O error (58030) when the worker a COPY streams rows to goes away
    "failed to COPY to shard",
)


def unavailable(exc: BaseException) -> bool:
    """PostgreSQL is away (restarting, shut down, unreachable, out of connections or
    disk) rather than refusing the statement: waiting and trying again is the cure.

    Takes psycopg2's errors and SQLAlchemy's wrappers of them alike.
    """
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return True
    orig = getattr(exc, "orig", exc)
    if isinstance(orig, psycopg2.InterfaceError):
        return True  # the connection is closed
    node_away = any(phrase in str(orig) for phrase in _NODE_AWAY)
    if isinstance(orig, psycopg2.InternalError):
        # a Citus coordinator passes a worker's shutdown or loss on as an internal error
        return node_away
    if not isinstance(orig, psycopg2.OperationalError):
        return False
    if node_away:  # ... or, a COPY's, as an I/O error (58030), which a local disk raises too
        return True
    code = orig.pgcode
    # no code: the client lost or never got the connection; 08: connection exception;
    # 57P01-57P03: the server is shutting down or starting; 53: insufficient resources
    return code is None or code[:2] in ("08", "53") or code in ("57P01", "57P02", "57P03")


def close_quietly(connection: Any) -> None:
    """Close a psycopg2 connection (or None) that a failure may have left broken."""
    if connection is not None:
        with contextlib.suppress(psycopg2.Error):
            connection.close()


def _database_error(exc: BaseException) -> BaseException | None:
    """The database error ``exc`` is, or was raised from (None: it has nothing to do
    with the database)."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain is short; a cycle must not loop forever
        if seen is None:
            return None
        if isinstance(seen, (psycopg2.Error, sa.exc.DBAPIError)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def retry_until_done(
    action: Callable[[], _T],
    what: str,
    *,
    stop: threading.Event | None = None,
    on_lost: Callable[[], None] | None = None,
    on_layout: Callable[[], None] | None = None,
) -> _T | None:
    """Run the transaction ``action`` until PostgreSQL lets it finish.

    When PostgreSQL rolls it back (a deadlock) it runs again at once; when the database
    is away (see ``unavailable``) it runs again after ``OUTAGE_RETRY_S``, for as long
    as the outage lasts. Either way ``on_lost`` is called first, to drop the connection
    the failure left behind, and the event is logged. When Citus says the shards have
    changed under it (``layout_changed``), ``on_lost`` and then ``on_layout`` (to read
    the layout again) are called, and it runs again, up to ``LAYOUT_RETRIES`` times.
    Any other error propagates. With ``stop``, a set event ends a wait and the
    result is None: the caller gives up.
    """
    layout_retries = 0
    while True:
        try:
            return action()
        except Exception as raised:
            # psycopg2 can report a connection lost in the middle of COPY as a SystemError
            # raised from the database's error: the error in the chain is what counts
            exc = _database_error(raised)
            if exc is None:
                raise
            relaid = layout_changed(exc) and layout_retries < LAYOUT_RETRIES
            again = rolled_back(exc) or relaid
            if not again and not unavailable(exc):
                raise
            event = "layout_changed" if relaid else "retry" if again else "db_wait"
            _log.warning("event=%s what=%s error=%s", event, what, error_line(exc)[:100])
            if on_lost is not None:
                on_lost()
            if relaid:
                layout_retries += 1
                _read_layout(on_layout)
            pause = 0.05 * layout_retries if relaid else 0.05 if again else OUTAGE_RETRY_S
            if stop is None:
                time.sleep(pause)
            elif stop.wait(pause):
                return None


def _read_layout(read: Callable[[], None] | None) -> None:
    """``read`` the layout again; a database error doing so leaves the old one, and the
    next try of the statement says whether it still fails."""
    if read is None:
        return
    try:
        read()
    except Exception as raised:
        exc = _database_error(raised)
        if exc is None:
            raise
        _log.warning("event=layout_unread error=%s", error_line(exc)[:100])
