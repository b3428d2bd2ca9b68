"""Wake-ups between the three programs: PostgreSQL LISTEN/NOTIFY beside polling.

A writer sends ``NOTIFY`` in the transaction that writes (``sql/notify.sql``), so the
notification arrives when, and only when, its rows are visible. A notification
carries nothing that is not in a table: it only says "look now". A reader waits on a
``Listener`` instead of sleeping; the wait still ends after its timeout, so a lost
notification, or a listening connection that dropped, costs latency and never work
(the reader polls its table as it did before). As procrastinate's workers do: listen
for the wake-up, poll as the fallback.
"""

from __future__ import annotations

import logging
import select
import time
from typing import Any

import psycopg2
from psycopg2 import sql

from focuscrawl.db.outages import close_quietly

__all__ = ["PAGES_SCORED", "PAGES_STORED", "Listener"]

log = logging.getLogger(__name__)

#: the channels of sql/notify.sql: a crawler's store committed fetched pages (a
#: classifier has work); a classifier scored pages (a crawler waiting for it may claim)
PAGES_STORED = "focuscrawl_pages_stored"
PAGES_SCORED = "focuscrawl_pages_scored"

#: after a failed connection, how long a listener waits before it tries again
RECONNECT_S = 1.0


class Listener:
    """A connection of its own that LISTENs on ``channel``; used by one thread."""

    def __init__(self, dsn: str, channel: str, name: str | None = None) -> None:
        self.dsn = dsn
        self.channel = channel
        self.name = name  # the connection's application_name, for others to see it by
        self.notified = 0
        self._connection: Any = None
        self._retry_at = 0.0

    def wait(self, timeout: float) -> bool:
        """Wait until a notification comes or ``timeout`` seconds pass; True if one came
        (all that arrived are taken: one wake-up answers them all)."""
        connection = self._connect()
        if connection is None:
            time.sleep(timeout)
            return False
        deadline = time.monotonic() + timeout
        try:
            connection.poll()
            while not connection.notifies:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([connection], [], [], left)[0]:
                    break
                connection.poll()  # a message came: a notification, or something else
        except (psycopg2.Error, OSError, ValueError) as exc:
            log.warning("event=listener_lost channel=%s error=%s", self.channel, exc)
            self._drop()
            return False
        came = bool(connection.notifies)
        self.notified += len(connection.notifies)
        connection.notifies.clear()
        return came

    def close(self) -> None:
        self._drop()

    def _connect(self) -> Any:
        if self._connection is not None:
            return self._connection
        if time.monotonic() < self._retry_at:
            return None
        try:
            named = {} if self.name is None else {"application_name": self.name}
            connection = psycopg2.connect(self.dsn, **named)
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except psycopg2.Error as exc:
            log.warning("event=listener_unavailable channel=%s error=%s", self.channel, exc)
            self._retry_at = time.monotonic() + RECONNECT_S
            return None
        self._connection = connection
        return connection

    def _drop(self) -> None:
        close_quietly(self._connection)
        self._connection = None
        self._retry_at = time.monotonic() + RECONNECT_S

    @property
    def backend_pid(self) -> int | None:
        """The listening connection's server process (for tests that cut it)."""
        return None if self._connection is None else int(self._connection.get_backend_pid())
