"""The live view of ``focuscrawl monitor``: snapshots of the crawl, rates between them,
the two alarms the paper left unimplemented, and one for a crawl that finds little.

* **Stagnation**: the acquisition rate of relevant pages (growth of the sum of R over
  scored pages, per second) over the last window fell below ``stall_share`` of the best
  window seen, while the frontier still holds URLs — or nothing was fetched at all.
* **Diffusion**: the moving average of R over the last 100 fetches stayed below
  ``1 - drop`` times its best value for ``patience`` fetches in a row: the crawl has
  wandered off the topic and is not coming back.
* **Harvest**: after ``low_after`` fetches, the average R of the last 1,000 is below
  ``low_harvest``: the crawl finds little of its topic from the start (weak examples,
  seeds far from the topic), which the two alarms above, relative to the crawl's own
  best, never raise.

On a Citus cluster it also names each worker the coordinator cannot reach: a node down
is an alarm, and the live view goes on (showing the last numbers it could read) until
the node is back.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from focuscrawl.db.database import error_line, execute
from focuscrawl.db.distribute import WorkerHealth, worker_health
from focuscrawl.db.outages import unavailable
from focuscrawl.db.queries import queries

__all__ = [
    "Alarms",
    "Health",
    "Snapshot",
    "Watch",
    "health",
    "render",
    "snapshot",
    "unless_away",
]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Snapshot:
    at: float  # monotonic seconds
    fetched: int
    failed: int
    frontier: int
    unscored: int
    errors: int
    relevance_sum: float
    avg_100: float | None
    avg_1000: float | None


def snapshot(engine: Engine) -> Snapshot:
    with engine.connect() as connection:
        row = execute(connection, queries["monitor/dashboard"]).one()
    return Snapshot(
        at=time.monotonic(),
        fetched=int(row.fetched),
        failed=int(row.failed),
        frontier=int(row.frontier),
        unscored=int(row.unscored),
        errors=int(row.errors),
        relevance_sum=float(row.relevance_sum),
        avg_100=None if row.avg_100 is None else float(row.avg_100),
        avg_1000=None if row.avg_1000 is None else float(row.avg_1000),
    )


@dataclass(frozen=True)
class Health:
    """Whether the crawl's numbers could be read now, and each worker of a cluster."""

    #: why the numbers could not be read (a node or the server away); None: they were
    outage: str | None = None
    workers: tuple[WorkerHealth, ...] = ()

    @property
    def alarm(self) -> str | None:
        down = [w.node for w in self.workers if not w.up]
        if down:
            return f"worker{'s' if len(down) > 1 else ''} {', '.join(down)} DOWN"
        return f"cannot read the crawl: {self.outage}" if self.outage else None


def unless_away(read: Callable[[], _T]) -> tuple[_T | None, str | None]:
    """``read()``, or None and why while the database (or a node of it) is away; errors
    other than an outage are raised."""
    try:
        return read(), None
    except sa.exc.DBAPIError as exc:
        if not unavailable(exc):
            raise
        return None, error_line(exc)


def health(engine: Engine) -> tuple[Snapshot | None, Health]:
    """A snapshot of the crawl, or None while the database (or a node of it) is away,
    and the cluster's health."""

    def workers() -> list[WorkerHealth]:
        with engine.connect() as connection:
            return worker_health(connection)

    snap, outage = unless_away(lambda: snapshot(engine))
    nodes, away = unless_away(workers)
    return snap, Health(outage or away, tuple(nodes or ()))


@dataclass(frozen=True)
class Alarms:
    stagnation: str | None = None
    diffusion: str | None = None
    harvest: str | None = None


@dataclass
class Watch:
    """Snapshots over time, and what they say."""

    window_s: float = 60.0
    stall_share: float = 0.2
    drop: float = 0.3
    patience: int = 500
    low_harvest: float = 0.05
    low_after: int = 500
    history: deque[Snapshot] = field(default_factory=lambda: deque(maxlen=10_000))
    _best_acquisition: float = 0.0
    _best_avg: float = 0.0
    _low_since: int | None = None  # fetched count when avg_100 went low

    def add(self, snap: Snapshot) -> None:
        self.history.append(snap)
        rate = self.acquisition_rate()
        if rate is not None and self._window_full():
            self._best_acquisition = max(self._best_acquisition, rate)
        if snap.avg_100 is not None and snap.fetched >= 100:
            self._best_avg = max(self._best_avg, snap.avg_100)
            if snap.avg_100 < (1 - self.drop) * self._best_avg:
                if self._low_since is None:
                    self._low_since = snap.fetched
            else:
                self._low_since = None

    def _base(self) -> Snapshot | None:
        """The oldest snapshot within the window (None with fewer than two snapshots)."""
        if len(self.history) < 2:
            return None
        latest = self.history[-1]
        base = self.history[-2]
        for snap in reversed(self.history):
            if latest.at - snap.at > self.window_s:
                break
            base = snap
        return base if base is not latest else self.history[-2]

    def _window_full(self) -> bool:
        return len(self.history) >= 2 and self.history[-1].at - self.history[0].at >= self.window_s

    def pages_per_s(self) -> float | None:
        base = self._base()
        if base is None:
            return None
        latest = self.history[-1]
        return (latest.fetched - base.fetched) / max(latest.at - base.at, 1e-9)

    def acquisition_rate(self) -> float | None:
        """Sum of R gained per second over the window: relevant pages acquired per second."""
        base = self._base()
        if base is None:
            return None
        latest = self.history[-1]
        return (latest.relevance_sum - base.relevance_sum) / max(latest.at - base.at, 1e-9)

    def alarms(self) -> Alarms:
        if not self.history:
            return Alarms()
        latest = self.history[-1]
        stagnation = diffusion = None
        rate, pages = self.acquisition_rate(), self.pages_per_s()
        if self._window_full() and latest.frontier > 0 and rate is not None:
            if pages == 0:
                stagnation = f"nothing fetched for {self.window_s:.0f} s with a frontier left"
            elif self._best_acquisition > 0 and rate < self.stall_share * self._best_acquisition:
                stagnation = (
                    f"relevant pages/s {rate:.2f}, below {self.stall_share:.0%} of the best "
                    f"{self._best_acquisition:.2f}"
                )
        if self._low_since is not None and latest.fetched - self._low_since >= self.patience:
            diffusion = (
                f"average R of the last 100 is {latest.avg_100:.3f}, below "
                f"{1 - self.drop:.0%} of its best {self._best_avg:.3f} for "
                f"{latest.fetched - self._low_since:,} fetches"
            )
        harvest = None
        average = latest.avg_1000 if latest.avg_1000 is not None else latest.avg_100
        low = average is not None and average < self.low_harvest
        if latest.fetched >= self.low_after and low:
            harvest = (
                f"average R of the last {min(latest.fetched, 1000):,} is {average:.3f}, "
                f"below {self.low_harvest}: the crawl finds little of its topic (check "
                "its examples and seeds)"
            )
        return Alarms(stagnation, diffusion, harvest)


def _value(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render(watch: Watch, state: Health | None = None) -> str:
    """The dashboard as lines of text: the newest snapshot's numbers and alarms, and
    with ``state`` the database's (an outage, each worker of a cluster)."""
    state = state or Health()
    head = [f"focuscrawl monitor  {time.strftime('%H:%M:%S')}"]
    if state.workers or state.outage:
        head.append(f"  database alarm     {state.alarm or 'no'}")
    if state.workers:
        up = sum(w.up for w in state.workers)
        head.append(f"  workers            {up} of {len(state.workers)} up")
    if not watch.history:
        return "\n".join(head)
    s = watch.history[-1]
    alarms = watch.alarms()
    trend = ""
    if s.avg_100 is not None and s.avg_1000 is not None:
        trend = (
            " rising" if s.avg_100 > s.avg_1000 else " falling" if s.avg_100 < s.avg_1000 else ""
        )
    lines = [
        *head,
        f"  pages fetched      {s.fetched:,}   failed {s.failed:,}   errors {s.errors:,}",
        f"  pages/s            {_value(watch.pages_per_s(), 1)} (over {watch.window_s:.0f} s)",
        f"  relevant pages/s   {_value(watch.acquisition_rate(), 2)} (sum of R gained)",
        f"  harvest rate       {_value(s.avg_100)} (last 100)   {_value(s.avg_1000)} "
        f"(last 1,000){trend}",
        f"  frontier           {s.frontier:,}",
        f"  classifier backlog {s.unscored:,}",
        f"  stagnation alarm   {alarms.stagnation or 'no'}",
        f"  diffusion alarm    {alarms.diffusion or 'no'}",
        f"  harvest alarm      {alarms.harvest or 'no'}",
    ]
    return "\n".join(lines)
