"""What a crawler process is told: modes, limits and politeness."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.errors import check_range
from focuscrawl.settings import Settings, default_of

__all__ = [
    "BACKLOG_SHARE",
    "FOCUSED_BACKLOG",
    "POLITE_BACKLOG_SHARE",
    "CrawlConfig",
    "Mode",
    "backlog_share_for",
]

#: what `crawl run` gives a focused crawl unless told otherwise: it runs at most this
#: many pages ahead of the classifier at first, and a share of the pages fetched so far
#: later (measured in docs/discussions/estimates.md: the harvest of lockstep at most of the speed)
FOCUSED_BACKLOG = 4
BACKLOG_SHARE = 0.125
#: ... and under a host delay, a share twice that: a host not asked in its second is a
#: page lost for good, where a crawl with no delay only spends its CPU later
#: (docs/discussions/benchmarks.md, "A polite crawl's start, again": 0.92-0.96 of the
#: politeness bound against 0.87-0.90, as many relevant pages by 14 s)
POLITE_BACKLOG_SHARE = 0.25


def backlog_share_for(host_delay: float) -> float:
    """The --backlog-share a crawl gets unless told: POLITE_BACKLOG_SHARE under a host
    delay, BACKLOG_SHARE with none."""
    return POLITE_BACKLOG_SHARE if host_delay > 0 else BACKLOG_SHARE


class Mode(StrEnum):
    """How the frontier is ordered and what out-links are checked in."""

    #: order by relevance; every out-link in, estimated by the link learner (with its
    #: parent's relevance) as it is checked in and again when its parent is scored
    SOFT = "soft"
    #: the same, with the estimate of 1999: the highest relevance among scored parents
    SOFT_1999 = "soft-1999"
    #: as soft, the link learner also taught a link's value over two steps
    PATHS = "paths"
    HARD = "hard"  # as soft; out-links held until the classifier releases them
    UNFOCUSED = "unfocused"  # the paper's pseudo-random order (bytehash)
    BFS = "bfs"  # breadth first: depth, then discovery order

    @property
    def claim_statement(self) -> str:
        return {"unfocused": "claim_batch_unfocused", "bfs": "claim_batch_bfs"}.get(
            self.value, "claim_batch"
        )

    @property
    def focused(self) -> bool:
        return self in (Mode.SOFT, Mode.SOFT_1999, Mode.PATHS, Mode.HARD)

    @property
    def estimate(self) -> str | None:
        """The frontier estimate this mode asks of the classifier (crawl_setting)."""
        return {"soft": "soft", "hard": "soft", "soft-1999": "soft-1999", "paths": "paths"}.get(
            self.value
        )

    @property
    def schema_branch(self) -> str | None:
        """The optional migration branch that holds this mode's frontier index."""
        return "baselines" if self in (Mode.UNFOCUSED, Mode.BFS) else None


@dataclass(frozen=True)
class CrawlConfig:
    """Everything a crawler process is told. Built from the settings (``from_settings``)
    by the CLI; the settings table holds the defaults of what a user may set there."""

    mode: Mode = Mode.SOFT
    threads: int = default_of("threads")
    #: URLs claimed per thread at a time ("a few dozen per thread" in the paper)
    batch_per_thread: int = 8
    max_pages: int | None = None
    lease_seconds: float = 600.0
    #: minimum seconds between two requests to one host (robots.txt Crawl-delay may raise it)
    host_delay: float = default_of("host_delay")
    max_tries: int = 3
    max_depth: int = 40
    max_pages_per_site: int = 100_000
    max_segment_repeats: int = 3
    robots_ttl_seconds: float = 86_400.0
    #: caps on what a site may ask for (the settings reference's "What a remote server
    #: can ask for"): robots.txt's Crawl-delay, size and redirects
    max_crawl_delay: float = default_of("max_crawl_delay")
    max_robots_bytes: int = default_of("max_robots_bytes")
    max_robots_redirects: int = default_of("max_robots_redirects")
    allow_private_hosts: bool = default_of("allow_private_hosts")
    #: stop when nothing is left to do for this long (seconds); None: wait for work forever
    idle_exit_seconds: float | None = 5.0
    quiet: bool = False
    #: maintenance: revisit pages fetched this long ago (None: never revisit)
    revisit_after_seconds: float | None = None
    #: share of each claim given to revisits while the frontier still has work
    #: (when the frontier is empty, every claim is a revisit)
    revisit_share: float = 0.0
    #: soft/hard: claim nothing while this many fetched pages (stored, in flight or
    #: queued) wait for the classifier, so the frontier order never runs ahead of it
    max_backlog: int | None = None
    #: ... and the backlog grows with the crawl: at least max_backlog, and this share of
    #: the pages fetched so far (0: fixed). Young estimates move with every page; a
    #: mature frontier hardly moves for a round of pages (docs/discussions/estimates.md, measured)
    backlog_share: float = 0.0
    #: claim the next batch (of at most max_backlog URLs) only when the last one is
    #: fetched, stored and scored (in every mode: a classifier must run beside it): a
    #: crawl that repeats exactly for the same seeds (the evaluation's)
    lockstep: bool = False
    fetch: FetchConfig = field(default_factory=FetchConfig)
    #: the frontier estimate to record for the crawl (crawl_setting 'estimate'); None:
    #: the mode's (focuscrawl.classifier.estimates names them all)
    estimate: str | None = None
    #: write every HTTP exchange as WARC records to files in this directory
    warc_dir: Path | None = None
    #: start a new WARC file once one passes this size
    warc_max_bytes: int = 1_000_000_000

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> CrawlConfig:
        """The configuration the settings give, with ``options`` (None: not given) over
        them, as command-line flags go over settings."""
        values: dict[str, Any] = {
            "threads": int(settings.threads),
            "host_delay": float(settings.host_delay),
            "allow_private_hosts": bool(settings.allow_private_hosts),
            "max_crawl_delay": float(settings.max_crawl_delay),
            "max_robots_bytes": int(settings.max_robots_bytes),
            "max_robots_redirects": int(settings.max_robots_redirects),
            "fetch": FetchConfig.from_settings(settings),
        }
        values.update({name: value for name, value in options.items() if value is not None})
        if options.get("backlog_share") is None:  # not given: by the crawl's host delay
            values["backlog_share"] = backlog_share_for(values["host_delay"])
        return cls(**values)

    @property
    def frontier_estimate(self) -> str | None:
        return self.estimate or self.mode.estimate

    def check(self) -> None:
        """A ConfigError naming the first value out of its range (NaN and infinity are
        out of every range): a crawl must not start on a value that would stall it or
        poison the database for later crawls (an infinite host delay stored as a
        site's next request time)."""
        check_range("--threads", self.threads, 1, 512)
        check_range("host_delay", self.host_delay, 0.0, 3600.0)
        if self.max_pages is not None:
            check_range("--max-pages", self.max_pages, 1)
        check_range("--lease-seconds", self.lease_seconds, 1.0, 7 * 86_400.0)
        check_range("max_tries", self.max_tries, 1)
        check_range("--max-depth", self.max_depth, 0, 32_767)  # priority is a smallint
        if self.idle_exit_seconds is not None:
            check_range("--idle-exit", self.idle_exit_seconds, 0.0, 86_400.0 * 365)
        if self.revisit_after_seconds is not None:
            check_range("--revisit-after", self.revisit_after_seconds, 0.0, 86_400.0 * 3650)
        if self.max_backlog is not None:
            check_range("--max-backlog", self.max_backlog, 1)
        check_range("--backlog-share", self.backlog_share, 0.0, 1.0)
        check_range("--revisit-share", self.revisit_share, 0.0, 1.0)
        check_range("--warc-max-size", self.warc_max_bytes, 1)
        check_range("max_crawl_delay", self.max_crawl_delay, 0.0, 86_400.0)
